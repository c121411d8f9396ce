package promote

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// runCore runs one pass with review and core memory on.
func (f *fixture) runCore(at time.Time, target string) Stats {
	f.t.Helper()
	st, err := Run(f.ctx, f.db, Options{Locations: f.loc, Write: true, GraduateImportance: 0.7,
		CompressAfter: 90 * 24 * time.Hour, Now: at, Review: "uncertain", Core: true, CoreTarget: target})
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	return st
}

func (f *fixture) toCore(id, target string) {
	f.t.Helper()
	err := f.db.Decide(f.ctx, []store.Decision{{BeliefID: id, Decision: "approve", Who: "user", At: f.now,
		Before: store.LevelPending, After: store.LevelCore, CoreTarget: target}})
	if err != nil {
		f.t.Fatal(err)
	}
}

const userClaudeMD = "# Project notes\r\n\r\nRun `make test` before pushing.\r\nNo trailing newline here"

func TestCoreBlockInProjectFiles(t *testing.T) {
	f := newFixture(t)
	proj := f.project("billing")
	claudeMD := filepath.Join(proj, "CLAUDE.md")
	f.write(claudeMD, userClaudeMD)
	core := f.belief("The billing service deploys to Fly.io", 0.9, 8, proj)
	both := f.belief("Invoices are kept in Postgres", 0.9, 8, proj)
	lt := f.belief("Tests use testcontainers", 0.9, 8, proj)
	f.toCore(core, "")
	f.toCore(both, "both")
	f.decide(lt, store.LevelPending, store.LevelLongTerm)
	st := f.runCore(f.now, CoreClaude)
	if st.CoreFiles != 2 || len(st.Problems) != 0 {
		t.Fatalf("stats %+v", st)
	}
	text := f.read(claudeMD)
	if !strings.HasPrefix(text, userClaudeMD+"\n"+CoreBegin+"\n") || !strings.HasSuffix(text, CoreEnd+"\n") {
		t.Fatalf("CLAUDE.md:\n%q", text)
	}
	for _, s := range []string{"- The billing service deploys to Fly.io\n", "- Invoices are kept in Postgres\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("CLAUDE.md lacks %q:\n%s", s, text)
		}
	}
	agents := f.read(filepath.Join(proj, "AGENTS.md"))
	if !strings.Contains(agents, "- Invoices are kept in Postgres\n") || strings.Contains(agents, "Fly.io") {
		t.Errorf("AGENTS.md:\n%s", agents)
	}
	if _, err := os.Stat(claudeMD + ".lock"); err == nil {
		t.Errorf("a lock file is left in the repository")
	}
	// Core beliefs are not repeated in MEMORY.md; the long-term one is there.
	mem := f.read(f.loc.ProjectFile(proj))
	if strings.Contains(mem, "Fly.io") || strings.Contains(mem, "Postgres") || !strings.Contains(mem, "testcontainers") {
		t.Errorf("MEMORY.md:\n%s", mem)
	}
	// Idempotent.
	if st := f.runCore(f.now.Add(time.Hour), CoreClaude); st.CoreFiles != 0 {
		t.Errorf("second pass rewrote %d core files", st.CoreFiles)
	}
	// Leaving core memory: the user's file comes back byte for byte; the
	// AGENTS.md engram created is removed.
	for _, id := range []string{core, both} {
		if err := f.db.Decide(f.ctx, []store.Decision{{BeliefID: id, Decision: "deny", Who: "user", At: f.now,
			Before: store.LevelCore, After: store.LevelDenied}}); err != nil {
			t.Fatal(err)
		}
	}
	f.runCore(f.now.Add(2*time.Hour), CoreClaude)
	if got := f.read(claudeMD); got != userClaudeMD+"\n" {
		t.Errorf("CLAUDE.md after the block left:\n%q", got)
	}
	if _, err := os.Stat(filepath.Join(proj, "AGENTS.md")); !os.IsNotExist(err) {
		t.Errorf("AGENTS.md engram created is still there: %v", err)
	}
	if files, _ := f.db.CoreFiles(f.ctx); len(files) != 0 {
		t.Errorf("core files still listed: %+v", files)
	}
}

func TestCoreGlobalAndTargetOff(t *testing.T) {
	f := newFixture(t)
	g := f.belief("The user writes commit messages in English", 0.9, 8, "")
	f.toCore(g, "")
	f.runCore(f.now, CoreOff)
	if _, err := os.Stat(filepath.Join(f.loc.ClaudeConfigDir, "CLAUDE.md")); !os.IsNotExist(err) {
		t.Fatalf("ENGRAM_CORE_TARGET=off wrote the global CLAUDE.md: %v", err)
	}
	if !strings.Contains(f.read(f.loc.GlobalFile()), "commit messages in English") {
		t.Fatalf("with core files off the core belief stays in MEMORY.md")
	}
	f.runCore(f.now.Add(time.Hour), CoreAgents) // a global belief goes to the global CLAUDE.md
	if !strings.Contains(f.read(filepath.Join(f.loc.ClaudeConfigDir, "CLAUDE.md")), "- The user writes commit messages in English\n") {
		t.Fatal("global CLAUDE.md lacks the core belief")
	}
	if strings.Contains(f.read(f.loc.GlobalFile()), "commit messages in English") {
		t.Fatal("the core belief is repeated in MEMORY.md")
	}
}

func TestCoreFilesLeftAlone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		prepare func(f *fixture, path string)
		want    error
	}{
		{"read-only", func(f *fixture, path string) {
			f.write(path, "# mine\n")
			os.Chmod(path, 0o444)
		}, ErrReadOnly},
		{"damaged markers", func(f *fixture, path string) {
			f.write(path, "# mine\n"+CoreBegin+"\n- old\n")
		}, ErrDamagedMarkers},
		{"not UTF-8", func(f *fixture, path string) {
			f.write(path, "# mine \xff\xfe\n")
		}, ErrNotUTF8},
		{"symlink out", func(f *fixture, path string) {
			outside := filepath.Join(f.base, "elsewhere.md")
			f.write(outside, "# elsewhere\n")
			if err := os.Symlink(outside, path); err != nil {
				f.t.Fatal(err)
			}
		}, ErrSymlinkOutside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			proj := f.project("billing")
			path := filepath.Join(proj, "CLAUDE.md")
			tc.prepare(f, path)
			before, _ := os.ReadFile(path)
			id := f.belief("The billing service deploys to Fly.io", 0.9, 8, proj)
			f.toCore(id, "")
			st := f.runCore(f.now, CoreClaude)
			if len(st.Problems) != 1 || !strings.Contains(st.Problems[0], path) {
				t.Fatalf("problems %q, want one naming %s", st.Problems, path)
			}
			after, _ := os.ReadFile(path)
			if string(after) != string(before) {
				t.Fatalf("the file changed:\n%q\n%q", before, after)
			}
			// Not in core memory: the belief stays in MEMORY.md.
			if !strings.Contains(f.read(f.loc.ProjectFile(proj)), "Fly.io") {
				t.Fatal("a core belief whose file was left alone is shown nowhere")
			}
			plan, err := PlanCore(f.ctx, f.db, f.loc, CoreClaude, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := plan.Check([]string{path}); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Check: %v, want %v naming the file", err, tc.want)
			}
		})
	}
}

func TestStripCore(t *testing.T) {
	f := newFixture(t)
	proj := f.project("billing")
	path := filepath.Join(proj, "CLAUDE.md")
	f.write(path, userClaudeMD)
	id := f.belief("The billing service deploys to Fly.io", 0.9, 8, proj)
	f.toCore(id, "")
	f.runCore(f.now, CoreClaude)
	changed, removed, err := StripCore(f.ctx, path, false)
	if err != nil || !changed || removed {
		t.Fatalf("StripCore: %v %v %v", changed, removed, err)
	}
	if got := f.read(path); got != userClaudeMD+"\n" {
		t.Fatalf("after StripCore:\n%q", got)
	}
	if changed, _, err := StripCore(f.ctx, path, false); changed || err != nil {
		t.Fatalf("second StripCore: %v %v", changed, err)
	}
}

// A forgotten core belief leaves CLAUDE.md at once.
func TestForgetLeavesCore(t *testing.T) {
	f := newFixture(t)
	proj := f.project("billing")
	path := filepath.Join(proj, "CLAUDE.md")
	f.write(path, userClaudeMD)
	id := f.belief("The billing service deploys to Fly.io", 0.9, 8, proj)
	f.toCore(id, "")
	f.runCore(f.now, CoreClaude)
	if !strings.Contains(f.read(path), "Fly.io") {
		t.Fatal("not in CLAUDE.md")
	}
	if err := f.db.Forget(f.ctx, nil, []string{id}); err != nil {
		t.Fatal(err)
	}
	if _, err := Forget(f.ctx, f.db, Options{Locations: f.loc, Write: true, Core: true, CoreTarget: CoreClaude, Now: f.now}, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.read(path); got != userClaudeMD+"\n" {
		t.Fatalf("after forget:\n%q", got)
	}
}
