package promote

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture is a user's machine: a HOME with Claude Code's directory and
// engram's, a store, and projects that are git repositories.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	base string
	home string
	db   *store.DB
	loc  Locations
	now  time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	home := filepath.Join(base, "home")
	f := &fixture{t: t, ctx: context.Background(), base: base, home: home,
		now: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
	f.loc = Locations{ClaudeConfigDir: filepath.Join(home, ".claude"), EngramHome: filepath.Join(home, ".claude-memory")}
	if err := os.MkdirAll(f.loc.ClaudeConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(f.ctx, filepath.Join(f.loc.EngramHome, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	return f
}

// project makes a git repository under base/work and returns its path.
func (f *fixture) project(name string) string {
	f.t.Helper()
	dir := filepath.Join(f.base, "work", name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return dir
}

// belief stores a belief of the given confidence and evidence; projectPath
// "" makes it global.
func (f *fixture) belief(statement string, confidence float64, evidence int, projectPath string) string {
	f.t.Helper()
	b := belief.Belief{ID: store.NewID("bl_"), Statement: statement, Timeframe: belief.TimeCurrent,
		Alpha: confidence * 10, Beta: (1 - confidence) * 10, Scope: episode.ScopeGlobal, Status: belief.StatusActive,
		EvidenceCount: evidence, CreatedAt: f.now.Add(-48 * time.Hour)}
	if projectPath != "" {
		b.Scope, b.ProjectPath, b.Project = episode.ScopeProject, projectPath, filepath.Base(projectPath)
	}
	if err := f.db.ImportBeliefs(f.ctx, []belief.Belief{b}); err != nil {
		f.t.Fatal(err)
	}
	return b.ID
}

// change edits a stored belief.
func (f *fixture) change(id string, edit func(*belief.Belief)) {
	f.t.Helper()
	err := f.db.Beliefs(f.ctx, func(tx *store.BeliefTx) error {
		b, err := tx.Get(id)
		if err != nil {
			return err
		}
		edit(&b)
		return tx.Update(&b)
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) setConfidence(id string, c float64) {
	f.change(id, func(b *belief.Belief) { b.Alpha, b.Beta = c*10, (1-c)*10 })
}

func (f *fixture) get(id string) belief.Belief {
	f.t.Helper()
	b, err := f.db.GetBelief(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

// run runs one pass at the given time.
func (f *fixture) run(at time.Time) Stats {
	f.t.Helper()
	st, err := Run(f.ctx, f.db, Options{Locations: f.loc, Write: true, GraduateImportance: 0.7,
		CompressAfter: 90 * 24 * time.Hour, Now: at})
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	return st
}

func (f *fixture) read(path string) string {
	f.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func (f *fixture) write(path, content string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// block returns the belief block of a file ("" when there is none).
func block(s string) string {
	i := strings.Index(s, BeliefsBegin)
	j := strings.Index(s, BeliefsEnd)
	if i < 0 || j < i {
		return ""
	}
	end := j + len(BeliefsEnd)
	if k := strings.IndexByte(s[end:], '\n'); k >= 0 {
		end += k + 1
	}
	return s[i:end]
}

// bullets lists the bullets under a heading of the belief block.
func bullets(s, heading string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(block(s), "\n") {
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == heading
		case in && strings.HasPrefix(l, "- "):
			out = append(out, l)
		}
	}
	return out
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}
