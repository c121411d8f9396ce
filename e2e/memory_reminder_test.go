package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/promote"
)

// TestMemoryBesideClientLines: a project's auto-memory MEMORY.md that the
// user's notes and the client's own memory index fill towards the
// client's reminder thresholds (160 lines, 20,000 characters). After a
// worker cycle the whole file is under both, engram's block holds its
// highest-ranked beliefs in the room left, and every other line is kept
// byte for byte; the real client loads the file whole, with no word that
// a MEMORY.md is past its limit. A line the client adds later survives the
// next cycle, engram's block giving way for it.
func TestMemoryBesideClientLines(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	e := NewEnv(t, func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Noted.") }, Hooks{})
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	}()
	e.Extra = []string{"ENGRAM_REVIEW=off"}

	projectFile := filepath.Join(e.ClaudeDir, "projects", sanitizePath(e.Project), "memory", "MEMORY.md")
	var other strings.Builder
	other.WriteString("# Project notes\n\nRelease from main only, after the changelog is updated.\n\n")
	for i := range 146 {
		fmt.Fprintf(&other, "- [Session memory %03d](memory_%03d.md) — what a session learnt about module %d of the importer\n", i, i, i)
	}
	foreign := other.String()
	if err := os.MkdirAll(filepath.Dir(projectFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(projectFile, []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}

	now := time.Now()
	var lines []string
	for i := range 8 {
		conf := 0.95 - float64(i)*0.01
		b := belief.Belief{ID: fmt.Sprintf("bl_0000000e2f%02d", i), Statement: fmt.Sprintf("The importer's module %d retries failed rows-%d", i, 7100+i),
			Timeframe: belief.TimeCurrent, Alpha: conf * 10, Beta: (1 - conf) * 10, Scope: episode.ScopeProject,
			ProjectPath: e.Project, Project: filepath.Base(e.Project), Status: belief.StatusActive, EvidenceCount: 5,
			Stability: 1, PeakConfidence: conf, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now}
		rec, err := json.Marshal(memoryBeliefRecord{Kind: "belief", Belief: b})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(rec))
	}
	jsonl := filepath.Join(e.Base, "beliefs.jsonl")
	if err := os.WriteFile(jsonl, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("engram-worker import: %s", strings.TrimSpace(e.Worker(bins.Worker, "import", jsonl)))
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))

	// check reads the file after a cycle: under both thresholds, the
	// other lines unchanged after engram's block, and that block's
	// beliefs the highest-ranked ones.
	check := func(step, foreign string) (shown int) {
		t.Helper()
		b, err := os.ReadFile(projectFile)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		n := strings.Count(s, "\n")
		chars := len(utf16.Encode([]rune(s)))
		t.Logf("%s: %d lines, %d characters", step, n, chars)
		if n > promote.ReminderLines || chars > promote.ReminderChars {
			t.Errorf("%s: %d lines and %d characters, want at most %d and %d", step, n, chars, promote.ReminderLines, promote.ReminderChars)
		}
		block, ok := strings.CutSuffix(s, foreign)
		if !ok || !strings.HasPrefix(block, "<!-- ENGRAM:BELIEFS:BEGIN -->") || !strings.HasSuffix(strings.TrimRight(block, "\n"), "<!-- ENGRAM:BELIEFS:END -->") {
			t.Fatalf("%s: the file is not engram's block followed by the other lines byte for byte:\n%s", step, s)
		}
		for i := range 8 {
			if strings.Contains(block, fmt.Sprintf("rows-%d", 7100+i)) {
				if i != shown {
					t.Errorf("%s: belief %d is shown but belief %d, ranked higher, is not", step, i, shown)
				}
				shown++
			}
		}
		if shown == 0 || shown == 8 {
			t.Errorf("%s: %d of 8 beliefs shown, want the room left to hold some but not all", step, shown)
		}
		return shown
	}
	shown := check("first cycle", foreign)

	_, reqs := e.runSession(e.Project, memoryPrompt)
	files := loadedFiles(reqs[0])
	proj, ok := files[projectFile]
	if !ok {
		t.Fatalf("the first request does not load %s; it loads:\n%s", projectFile, describeLoaded(files))
	}
	for _, want := range []string{"rows-7100", "Release from main only", "memory_145.md"} {
		if !strings.Contains(proj.Body, want) {
			t.Errorf("the auto-memory as loaded lacks %q: the file did not reach the model whole", want)
		}
	}
	for _, r := range reqs {
		if r.Contains("(limit: 200)") {
			t.Errorf("request #%d tells the model a MEMORY.md is past its limit", r.Seq)
		}
	}

	// The client's memory adds two lines: the next cycle keeps them and
	// makes engram's block smaller.
	b, _ := os.ReadFile(projectFile)
	added := "- [Session memory 146](memory_146.md) — the importer skips rows without an id\n- [Session memory 147](memory_147.md) — the nightly import runs at 02:00\n"
	if err := os.WriteFile(projectFile, append(b, added...), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign += added
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if after := check("after the client's lines", foreign); after >= shown {
		t.Errorf("engram's block shows %d beliefs after the client added two lines, %d before: want fewer", after, shown)
	}
	if out := e.Worker(bins.Worker, "status"); !strings.Contains(out, "so engram's part is kept smaller") {
		t.Errorf("status does not say that the rest of %s keeps engram's part smaller:\n%s", projectFile, out)
	}
}
