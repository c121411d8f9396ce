package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/store"
)

// selfSchedPrompts are ten sessions' prompts: a preference stated again
// and again among other work.
var selfSchedPrompts = []string{
	"I prefer bun for my scripts, please use it to run this one",
	"add a health endpoint to the api server",
	"I always prefer bun over node for small scripts like this migration helper",
	"rename the config loader to loadSettings",
	"I prefer bun when running the seed script as well",
	"write a test for the health endpoint",
	"I prefer bun for the release script too",
	"bump the lint rules to the new preset",
	"I prefer bun to run the benchmark script",
	"tidy the README's install section",
}

// TestSelfScheduleWithRealClient: no scheduler runs the worker (no systemd
// user manager, no crontab: only the first cycle of the install ran). Ten
// sessions of the real client, an hour apart in simulated time (the
// store's record of the last run, the consolidation checkpoint and the
// Stop hook's stamp are moved back an hour between sessions), each start
// a background worker from their Stop hook; the captures become episodes,
// the preference a belief, and the belief a MEMORY.md line, with nobody
// running the worker.
func TestSelfScheduleWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	e := NewEnv(t, func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Will do.") }, Hooks{})
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	defer func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(e.EngramHome, "logs", "*"))
			for _, p := range logs {
				if b, err := os.ReadFile(p); err == nil {
					t.Logf("%s:\n%s", p, b)
				}
			}
		}
	}()
	// What scripts/install.sh does after setup: one first cycle.
	e.Worker(bins.Worker, "run", "--backfill")
	dbPath := filepath.Join(e.EngramHome, "memory.db")

	for i, p := range selfSchedPrompts {
		hourLater(t, e, dbPath)
		before := countRuns(t, dbPath)
		res := e.PromptIn(e.Project, "", p)
		if !strings.Contains(res.Result, "Will do.") {
			t.Fatalf("session %d: %s", i+1, res)
		}
		// The Stop hook has returned; the worker it started runs on.
		deadline := time.Now().Add(90 * time.Second)
		for countRuns(t, dbPath) == before || lockHeld(t, e) {
			if time.Now().After(deadline) {
				t.Fatalf("session %d: no worker run within 90 s (runs %d)", i+1, countRuns(t, dbPath))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if n := countRuns(t, dbPath); n != before+1 {
			t.Errorf("session %d: %d worker runs, want 1", i+1, n-before)
		}
	}

	ctx := context.Background()
	db, err := store.Open(ctx, dbPath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	counts, err := db.CaptureCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := db.EpisodeCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.CapturePending] != 0 || eps < len(selfSchedPrompts) {
		t.Errorf("captures %v, episodes %d: want none pending and an episode per session", counts, eps)
	}
	bs, err := db.ListBeliefs(ctx, store.BeliefFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var statements []string
	for _, b := range bs {
		statements = append(statements, b.Statement)
	}
	if !strings.Contains(strings.Join(statements, "\n"), "I prefer bun for my scripts.") {
		t.Errorf("beliefs %q, want \"I prefer bun for my scripts.\"", statements)
	}
	var memory []string
	for _, f := range []string{filepath.Join(e.EngramHome, "MEMORY.md"),
		filepath.Join(e.ClaudeDir, "projects", sanitizePath(e.Project), "memory", "MEMORY.md")} {
		if b, err := os.ReadFile(f); err == nil {
			memory = append(memory, string(b))
		}
	}
	if !strings.Contains(strings.Join(memory, "\n"), "bun") {
		t.Errorf("no MEMORY.md line about bun; files:\n%s\nstatus:\n%s", strings.Join(memory, "\n---\n"), e.Worker(bins.Worker, "status"))
	}
	// Nothing is left running.
	if lockHeld(t, e) {
		t.Error("a worker still holds its lock")
	}
}

// hourLater moves the store's clock-bound records an hour back: the last
// runs, the consolidation checkpoint, and the Stop hook's stamp.
func hourLater(t *testing.T, e *Env, dbPath string) {
	t.Helper()
	hour := time.Hour.Milliseconds()
	sqldb, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	if _, err := sqldb.Exec("PRAGMA busy_timeout = 10000"); err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec("UPDATE runs SET started_at = started_at - ?, finished_at = finished_at - ?", hour, hour); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := sqldb.QueryRow("SELECT value FROM meta WHERE key = ?", consolidate.CheckpointKey).Scan(&v); err == nil {
		var cp consolidate.Checkpoint
		if err := json.Unmarshal([]byte(v), &cp); err != nil {
			t.Fatal(err)
		}
		cp.At = cp.At.Add(-time.Hour)
		b, _ := json.Marshal(cp)
		if _, err := sqldb.Exec("UPDATE meta SET value = ? WHERE key = ?", string(b), consolidate.CheckpointKey); err != nil {
			t.Fatal(err)
		}
	}
	stamp := filepath.Join(e.EngramHome, "selfsched.stamp")
	if fi, err := os.Stat(stamp); err == nil {
		old := fi.ModTime().Add(-time.Hour)
		os.Chtimes(stamp, old, old)
	}
}

func countRuns(t *testing.T, dbPath string) int {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dbPath, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, ok, err := db.LastRun(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0
	}
	return int(run.ID)
}

func lockHeld(t *testing.T, e *Env) bool {
	t.Helper()
	lk := flock.New(filepath.Join(e.EngramHome, "worker.lock"))
	ok, err := lk.TryLock()
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		lk.Unlock()
	}
	return !ok
}
