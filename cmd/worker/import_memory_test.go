package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/promote"
)

// What a MEMORY.md holds is a fact about one machine's files: an export
// imported into an empty home must get, from its next cycle, the same
// MEMORY.md files as the machine it came from.
func TestImportRebuildsMemoryFiles(t *testing.T) {
	project := filepath.Join(t.TempDir(), "work", "billing")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	old := newHome(t)
	db := old.db(t)
	local := embed.NewLocal()
	now := time.Now()
	ep := func(id, s string, imp float64) episode.Episode {
		return episode.Episode{ID: id, Summary: s, Context: "User: " + s, Type: "preference", Scope: episode.ScopeGlobal,
			ContentHash: id, Importance: imp, Embedding: local.EmbedText(s), Embedder: local.Name(), OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	bl := func(id, s, scope, path string) belief.Belief {
		b := belief.Belief{ID: id, Statement: s, Timeframe: belief.TimeCurrent, Alpha: 9, Beta: 1, Scope: scope, Status: belief.StatusActive,
			EvidenceCount: 4, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now}
		if path != "" {
			b.Project, b.ProjectPath = "billing", path
		}
		return b
	}
	err := db.Import(context.Background(), []episode.Episode{
		ep("ep_0000000000e1", "No emoji in commit messages", 0.95),
		ep("ep_0000000000e2", "The laptop's disk is encrypted with LUKS", 0.9),
		ep("ep_0000000000e3", "Lunch was at noon", 0.3),
	}, []belief.Belief{
		bl("bl_0000000000e4", "User prefers bun over npm.", episode.ScopeGlobal, ""),
		bl("bl_0000000000e5", "Project billing keeps invoices in SQLite.", episode.ScopeProject, project),
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, errOut, code := old.run(t, "", "run"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	exported := filepath.Join(t.TempDir(), "export.jsonl")
	if _, errOut, code := old.run(t, "", "export", "--out", exported); code != 0 {
		t.Fatalf("export: %s", errOut)
	}

	// The new machine: an empty home, the same project checked out.
	fresh := newHome(t)
	if _, errOut, code := fresh.run(t, "", "import", exported); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	if _, errOut, code := fresh.run(t, "", "run"); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	files := func(h testHome) map[string]string {
		loc := promote.Locations{ClaudeConfigDir: h.claude, EngramHome: h.engram}
		return map[string]string{"global": loc.GlobalFile(), "project": loc.ProjectFile(project)}
	}
	want, got := files(old), files(fresh)
	for name := range want {
		w, err := os.ReadFile(want[name])
		if err != nil {
			t.Fatalf("the original machine has no %s MEMORY.md: %v", name, err)
		}
		g, err := os.ReadFile(got[name])
		if err != nil {
			t.Errorf("after import and a run, the %s MEMORY.md is missing: %v", name, err)
			continue
		}
		if string(g) != string(w) {
			t.Errorf("%s MEMORY.md after import and a run:\n%s\nwant, as on the original machine:\n%s", name, g, w)
		}
	}
	if w, _ := os.ReadFile(want["global"]); !strings.Contains(string(w), "No emoji in commit messages") || !strings.Contains(string(w), "User prefers bun") {
		t.Errorf("the original global MEMORY.md lacks what the test expects:\n%s", w)
	}
	// A second cycle changes nothing.
	before, _ := os.ReadFile(got["global"])
	fresh.run(t, "", "run")
	if after, _ := os.ReadFile(got["global"]); string(after) != string(before) {
		t.Errorf("a second cycle changed the global MEMORY.md:\n%s", after)
	}
}
