package promote

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// sh runs a shell command as a separate process, the way another program
// (Claude Code) writes the file.
func sh(t *testing.T, script string, args ...string) {
	t.Helper()
	out, err := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", script, err, out)
	}
}

// hook sets a test hook for the duration of the test.
func hook(t *testing.T, p *func(string, int), fn func(string, int)) {
	*p = fn
	t.Cleanup(func() { *p = nil })
}

const appendLine = `printf '%s\n' "$2" >> "$1"`
const renameWrite = `{ cat "$1"; printf '%s\n' "$2"; } > "$1.other-tmp" && mv "$1.other-tmp" "$1"`

func TestConcurrentWriterSurvives(t *testing.T) {
	tests := []struct {
		name   string
		when   *func(string, int)
		script string
		linux  bool
	}{
		{"append before the check", &testOnlyBeforeReplace, appendLine, false},
		{"rename before the check", &testOnlyBeforeReplace, renameWrite, false},
		// Between the check and the replacement: only the atomic exchange
		// catches these.
		{"append after the check", &testOnlyAfterCheck, appendLine, true},
		{"rename after the check", &testOnlyAfterCheck, renameWrite, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.linux && runtime.GOOS != "linux" {
				t.Skip("the atomic exchange is Linux only")
			}
			f := newFixture(t)
			proj := f.project("shared")
			file := f.loc.ProjectFile(proj)
			f.write(file, "- [Setup](setup.md) — written by Claude Code\n")
			f.belief("Shared statement", 0.9, 5, proj)
			calls := 0
			hook(t, tt.when, func(target string, attempt int) {
				calls++
				if attempt == 1 {
					sh(t, tt.script, target, "- [Late](late.md) — written during engram's cycle")
				}
			})
			st := f.run(f.now)
			s := f.read(file)
			if !strings.Contains(s, "- [Late](late.md) — written during engram's cycle\n") {
				t.Fatalf("the other program's write was lost:\n%s", s)
			}
			if !strings.HasPrefix(s, BeliefsBegin) || !strings.Contains(s, "Shared statement") ||
				!strings.Contains(s, "- [Setup](setup.md) — written by Claude Code\n") {
				t.Fatalf("file:\n%s", s)
			}
			if calls < 2 || st.Retries != 1 || st.Promoted != 1 || len(st.Problems) != 0 {
				t.Errorf("hook calls %d (want a retry), stats %+v", calls, st)
			}
		})
	}
}

// TestConcurrentWriterStress runs cycles while another process rewrites
// the file (read, append, write a temporary file, rename) as fast as it
// can: every one of its lines must be there at the end, once, in order.
func TestConcurrentWriterStress(t *testing.T) {
	f := newFixture(t)
	proj := f.project("busy")
	file := f.loc.ProjectFile(proj)
	f.write(file, "# Index\n")
	id := f.belief("Busy statement", 0.9, 5, proj)
	f.run(f.now)
	const n = 150 // the file stays within the limit with engram's block
	writer := exec.Command("sh", "-c", `for i in $(seq 1 `+fmt.Sprint(n)+`); do `+
		`{ cat "$1"; printf -- '- other line %d\n' "$i"; } > "$1.w" && mv "$1.w" "$1"; done`, "sh", file)
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- writer.Wait() }()
	cycles, retries := 0, 0
	at := f.now
loop:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("writer: %v", err)
			}
			break loop
		default:
		}
		cycles++
		at = at.Add(time.Minute)
		f.setConfidence(id, []float64{0.8, 0.9}[cycles%2])
		retries += f.run(at).Retries
	}
	f.setConfidence(id, 0.95)
	final := f.run(at.Add(time.Minute))
	s := f.read(file)
	t.Logf("final cycle: %+v; file starts %q", final, s[:min(len(s), 300)])
	last := -1
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("- other line %d\n", i)
		if c := strings.Count(s, line); c != 1 {
			t.Fatalf("%q appears %d times after %d cycles:\n%s", line, c, cycles, s)
		}
		if p := strings.Index(s, line); p < last {
			t.Fatalf("%q out of order", line)
		} else {
			last = p
		}
	}
	if strings.Count(s, BeliefsBegin) != 1 || !strings.HasPrefix(s, BeliefsBegin) || !strings.Contains(s, "(confidence: 0.95, evidence: 5)") {
		t.Errorf("engram's block after the last cycle:\n%s", block(s))
	}
	t.Logf("%d cycles ran while the other process wrote %d times; %d times engram found the file changed under it", cycles, n, retries)
}

func TestSymlinks(t *testing.T) {
	t.Run("out of the directory: refused", func(t *testing.T) {
		f := newFixture(t)
		proj := f.project("linked")
		file := f.loc.ProjectFile(proj)
		outside := filepath.Join(f.base, "elsewhere", "notes.md")
		f.write(outside, "my notes\n")
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, file); err != nil {
			t.Fatal(err)
		}
		f.belief("Linked statement", 0.9, 5, proj)
		st := f.run(f.now)
		if got := f.read(outside); got != "my notes\n" {
			t.Errorf("the file outside was written: %q", got)
		}
		if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink was replaced: %v", err)
		}
		if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "symlink") || st.Promoted != 0 {
			t.Errorf("stats %+v, want one symlink problem and nothing promoted", st)
		}
		if b := f.get(f.firstBelief()); !b.PromotedAt.IsZero() {
			t.Error("the belief is marked promoted although nothing was written")
		}
	})
	t.Run("inside the directory: written through", func(t *testing.T) {
		f := newFixture(t)
		proj := f.project("linked")
		file := f.loc.ProjectFile(proj)
		real := filepath.Join(filepath.Dir(file), "real.md")
		f.write(real, "index\n")
		if err := os.Symlink("real.md", file); err != nil {
			t.Fatal(err)
		}
		f.belief("Linked statement", 0.9, 5, proj)
		st := f.run(f.now)
		if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symlink was replaced: %v", err)
		}
		if s := f.read(real); !strings.Contains(s, "Linked statement") || !strings.HasSuffix(s, "index\n") || st.Promoted != 1 {
			t.Errorf("target %q, stats %+v", s, st)
		}
	})
	t.Run("dangling: refused", func(t *testing.T) {
		f := newFixture(t)
		if err := os.MkdirAll(f.loc.EngramHome, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(f.base, "nowhere.md"), f.loc.GlobalFile()); err != nil {
			t.Fatal(err)
		}
		f.belief("Global statement", 0.9, 5, "")
		st := f.run(f.now)
		if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "symlink") {
			t.Errorf("stats %+v", st)
		}
		if _, err := os.Stat(filepath.Join(f.base, "nowhere.md")); !os.IsNotExist(err) {
			t.Error("the link's target was created")
		}
	})
	t.Run("lock file: refused", func(t *testing.T) {
		f := newFixture(t)
		if err := os.MkdirAll(f.loc.EngramHome, 0o700); err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(f.base, "victim")
		if err := os.Symlink(victim, f.loc.GlobalFile()+".lock"); err != nil {
			t.Fatal(err)
		}
		f.belief("Global statement", 0.9, 5, "")
		if st := f.run(f.now); len(st.Problems) != 1 {
			t.Errorf("stats %+v", st)
		}
		if _, err := os.Stat(victim); !os.IsNotExist(err) {
			t.Error("the lock symlink's target was created")
		}
	})
}

func (f *fixture) firstBelief() string {
	rows, err := f.db.PromotionCandidates(f.ctx, 0, 0)
	if err != nil || len(rows) == 0 {
		f.t.Fatalf("no belief: %v", err)
	}
	return rows[0].ID
}

func TestLockHeldByAnotherWriter(t *testing.T) {
	f := newFixture(t)
	old := lockWait
	lockWait = 200 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
	if err := os.MkdirAll(f.loc.EngramHome, 0o700); err != nil {
		t.Fatal(err)
	}
	other := flock.New(f.loc.GlobalFile() + ".lock")
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	f.belief("Locked statement", 0.9, 5, "")
	st := f.run(f.now)
	if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "lock") || st.Promoted != 0 {
		t.Errorf("while locked: %+v", st)
	}
	if _, err := os.Stat(f.loc.GlobalFile()); !os.IsNotExist(err) {
		t.Error("the file was written without the lock")
	}
	other.Unlock()
	if st := f.run(f.now.Add(time.Minute)); st.Promoted != 1 || len(st.Problems) != 0 {
		t.Errorf("after unlock: %+v", st)
	}
}

func TestModes(t *testing.T) {
	f := newFixture(t)
	proj := f.project("modes")
	file := f.loc.ProjectFile(proj)
	f.write(file, "x\n")
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	f.belief("Mode statement", 0.9, 5, proj)
	f.run(f.now)
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("an existing file's mode became %v, want 0644 kept", fi.Mode().Perm())
	}
	// No temporary or stray files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(file))
	for _, e := range entries {
		if e.Name() != "MEMORY.md" && e.Name() != "MEMORY.md.lock" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
