package promote

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestReminderThresholds: a project MEMORY.md that the user and the
// client's own memory fill towards the client's reminder thresholds.
// After each cycle the whole file is under 160 lines and 20,000
// characters, engram's block has shrunk to the room left (its
// highest-ranked beliefs first), and every line that is not engram's is
// kept byte for byte.
func TestReminderThresholds(t *testing.T) {
	f := newFixture(t)
	proj := f.project("shared")
	file := f.loc.ProjectFile(proj)
	for i := range 10 {
		f.belief(fmt.Sprintf("Project statement number %d about the build", i), 0.95-float64(i)*0.01, 5, proj)
	}
	user := "# Notes of mine\n\nKeep the CHANGELOG in sync.\n"
	f.write(file, user)
	f.run(f.now)
	first := f.read(file)
	if got := bullets(first, headingBeliefs); len(got) != 10 {
		t.Fatalf("with room, %d bullets, want 10:\n%s", len(got), first)
	}

	check := func(step, foreign string, wantBullets int) string {
		t.Helper()
		s := f.read(file)
		if n := countLines(s); n > ReminderLines {
			t.Errorf("%s: %d lines, want at most %d", step, n, ReminderLines)
		}
		if n := countChars(s); n > ReminderChars {
			t.Errorf("%s: %d characters, want at most %d", step, n, ReminderChars)
		}
		if d := parse(s, false); d.foreign != foreign {
			t.Errorf("%s: the lines that are not engram's changed:\n got %q\nwant %q", step, d.foreign, foreign)
		}
		got := bullets(s, headingBeliefs)
		if len(got) != wantBullets {
			t.Errorf("%s: %d bullets, want %d:\n%s", step, len(got), wantBullets, s)
		}
		for i, b := range got {
			if want := fmt.Sprintf("Project statement number %d about the build", i); !strings.Contains(b, want) {
				t.Errorf("%s: bullet %d is %q, want the rank-%d belief %q", step, i, b, i, want)
			}
		}
		return s
	}

	// The client's memory index grows to 145 lines under the user's: the
	// 148 lines that are not engram's leave it 12, its block's five
	// (markers, heading, blanks) and seven bullets.
	var client strings.Builder
	for i := range 145 {
		fmt.Fprintf(&client, "- [Memory %d](memory_%03d.md) — what the session learnt about part %d\n", i, i, i)
	}
	foreign := user + client.String()
	f.write(file, first+client.String())
	f.run(f.now.Add(time.Hour))
	s := check("lines", foreign, ReminderLines-countLines(foreign)-5)
	reports, err := Inspect(f.ctx, f.loc, f.db)
	if err != nil {
		t.Fatal(err)
	}
	if r := find(reports, file); r == nil || !r.UnderReminder || !r.Limited || r.EngramRoom != 12 {
		t.Errorf("report %+v", r)
	} else {
		t.Logf("doctor: %s", r.Describe())
	}

	// Long lines: the characters bind before the lines do.
	long := strings.Repeat("The build needs the cache warmed first. ", 12) + "\n"
	foreign = user + strings.Repeat(long, 40) // 19,240 characters
	f.write(file, s[:len(s)-len(parse(s, false).foreign)]+foreign)
	f.run(f.now.Add(2 * time.Hour))
	s = f.read(file)
	if n := countChars(s); n > ReminderChars || countChars(foreign) < 19000 {
		t.Errorf("characters: %d in all, %d not engram's", n, countChars(foreign))
	}
	if d := parse(s, false); d.foreign != foreign {
		t.Error("characters: the lines that are not engram's changed")
	}
	if got := bullets(s, headingBeliefs); len(got) == 0 || len(got) >= 10 {
		t.Errorf("characters: %d bullets, want some but not all", len(got))
	}

	// The rest alone past the thresholds: engram takes no room at all.
	foreign = user + strings.Repeat(long, 45)
	f.write(file, s[:len(s)-len(parse(s, false).foreign)]+foreign)
	f.run(f.now.Add(3 * time.Hour))
	if got := f.read(file); got != foreign {
		t.Errorf("past the thresholds by others' lines: the file is not theirs alone:\n%.300q", got)
	}
}

func TestCountChars(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é漢": 2, "𝄞": 2, "a𝄞\n": 4} {
		if got := countChars(s); got != want {
			t.Errorf("countChars(%q) = %d, want %d", s, got, want)
		}
	}
}
