package health

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/store"
)

// TestWorker: the worker's runs as doctor, status and memory_status all
// see them: never run, a failed run, an overdue one (the Stop hook's own
// rule, stophook.WorkerStale), and a recent good one.
func TestWorker(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t)
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	want(t, Worker(ctx, cfg, db, now), "last run", Warn, "the worker has never run")

	id, err := db.StartRun(ctx, "run")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, id, map[string]int{}, nil); err != nil {
		t.Fatal(err)
	}
	fs := Worker(ctx, cfg, db, time.Now())
	want(t, fs, "last run", OK, "ago")
	want(t, fs, "quarantine", OK, "no item held out")
	if len(Problems(fs)) != 0 {
		t.Errorf("problems after a good run: %+v", Problems(fs))
	}
	want(t, Worker(ctx, cfg, db, time.Now().Add(3*time.Hour)), "last run", Warn, "it should run every 15m0s")

	id, _ = db.StartRun(ctx, "run")
	if err := db.FinishRun(ctx, id, nil, errors.New("embedder unreachable")); err != nil {
		t.Fatal(err)
	}
	want(t, Worker(ctx, cfg, db, time.Now()), "last run", Warn, "the last worker run failed: embedder unreachable")
}

func TestImport(t *testing.T) {
	cfg := testConfig(t)
	t.Setenv("HOME", filepath.Dir(cfg.Home))
	claudeMD := filepath.Join(cfg.ClaudeConfigDir, "CLAUDE.md")
	want(t, []Finding{Import(cfg)}, "memory import", Warn, "(run engram-worker setup)")
	writeSettings(t, cfg, `{"enabledPlugins": {"engram@engram": true}}`)
	want(t, []Finding{Import(cfg)}, "memory import", Warn, "add the line yourself (the plugin does not")
	if _, err := setup.AddImport(claudeMD, setup.ImportLine(cfg.Home, os.Getenv("HOME"))); err != nil {
		t.Fatal(err)
	}
	want(t, []Finding{Import(cfg)}, "memory import", OK, "imports "+filepath.Join(cfg.Home, "MEMORY.md"))
}
