package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// promotedHome is a home after a cycle that promoted a project belief into
// the project's auto-memory file under $CLAUDE_CONFIG_DIR/projects, where
// Claude Code had written its own index first. It returns that file and
// its content before the cycle.
func promotedHome(t *testing.T, h testHome) (file, claudes string) {
	t.Helper()
	proj := filepath.Join(h.home, "work", "billing")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	loc := promote.Locations{ClaudeConfigDir: h.claude, EngramHome: h.engram}
	file = loc.ProjectFile(proj)
	claudes = "# Memory index\r\n\r\n- [Deploys](deploys.md) — Tuesdays only\r\n"
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(claudes), 0o644); err != nil {
		t.Fatal(err)
	}
	db := h.db(t)
	now := time.Now()
	err := db.ImportBeliefs(context.Background(), []belief.Belief{{ID: "bl_0000000000c1", Statement: "Invoices live in Postgres",
		Timeframe: "current", Alpha: 9, Beta: 1, Scope: "project", Project: "billing", ProjectPath: proj, Status: "active",
		EvidenceCount: 6, Stability: 1, CreatedAt: now, UpdatedAt: now}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := promote.Run(context.Background(), db, promote.Options{Locations: loc, Write: true, Now: now})
	if err != nil || st.Promoted != 1 {
		t.Fatalf("promotion: %+v %v", st, err)
	}
	if s, _ := os.ReadFile(file); !strings.HasPrefix(string(s), promote.BeliefsBegin) {
		t.Fatalf("no block in %s:\n%s", file, s)
	}
	db.Close()
	return file, claudes
}

func TestUninstallStripsProjectMemory(t *testing.T) {
	h := newHome(t)
	file, claudes := promotedHome(t, h)
	// Another file engram wrote is now a symlink out of its directory:
	// refused, said, and the rest goes on.
	link := filepath.Join(h.claude, "projects", "-work-linked", "memory", "MEMORY.md")
	outside := filepath.Join(h.home, "elsewhere.md")
	blocked := promote.BeliefsBegin + "\n## Beliefs\n\n- Kept (confidence: 0.90, evidence: 5)\n\n" + promote.BeliefsEnd + "\n"
	if err := os.WriteFile(outside, []byte(blocked), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if err := h.db(t).ApplyPromotion(context.Background(), store.MemoryFile{Path: link, Kind: "project"}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := h.run(t, "", "uninstall")
	if code != 0 || errOut != "" {
		t.Fatalf("uninstall: %d\n%s%s", code, out, errOut)
	}
	if want := file + ": took out engram's block of beliefs\n"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if want := "note: " + link + ": engram's blocks are still in it (" + link + " is a symlink leading out of its directory"; !strings.Contains(out, want) {
		t.Errorf("stdout lacks %q:\n%s", want, out)
	}
	if got, _ := os.ReadFile(outside); string(got) != blocked {
		t.Errorf("the file outside was written: %q", got)
	}
	if got, _ := os.ReadFile(file); string(got) != claudes {
		t.Errorf("%s = %q, want Claude Code's bytes %q", file, got, claudes)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of %s: %v %v", file, fi, err)
	}
}

// TestUninstallStripWaitsForTheWorker: a cycle that holds the worker's
// lock past the wait is reported (it may write the blocks again), and the
// files are cleaned all the same.
func TestUninstallStripWaitsForTheWorker(t *testing.T) {
	h := newHome(t)
	file, claudes := promotedHome(t, h)
	old := uninstallWorkerWait
	uninstallWorkerWait = 300 * time.Millisecond
	t.Cleanup(func() { uninstallWorkerWait = old })
	lk, err := worker.Lock(h.engram)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Config{Home: h.engram, ClaudeConfigDir: h.claude}
	start := time.Now()
	changes, notes, err := stripMemory(cfg, promote.Locations{ClaudeConfigDir: h.claude, EngramHome: h.engram})(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < uninstallWorkerWait {
		t.Errorf("waited %v for the running cycle, want at least %v", waited, uninstallWorkerWait)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "another engram-worker run is in progress") ||
		!strings.Contains(notes[0], "run uninstall again once it has finished") {
		t.Errorf("notes %q", notes)
	}
	if len(changes) != 1 || changes[0].Path != file {
		t.Errorf("changes %+v", changes)
	}
	if got, _ := os.ReadFile(file); string(got) != claudes {
		t.Errorf("%s = %q", file, got)
	}

	// Once the cycle ends, the lock is taken and given back.
	lk.Unlock()
	if _, notes, err := stripMemory(cfg, promote.Locations{ClaudeConfigDir: h.claude, EngramHome: h.engram})(context.Background()); err != nil || len(notes) != 0 {
		t.Errorf("second pass: %q %v", notes, err)
	}
	lk2, err := worker.Lock(h.engram)
	if err != nil {
		t.Fatalf("the worker's lock was not given back: %v", err)
	}
	lk2.Unlock()
}
