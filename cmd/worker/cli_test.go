package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/worker"
)

// seedMemories stores two episodes and a belief through the store.
func seedMemories(t *testing.T, h testHome) {
	t.Helper()
	db := h.db(t)
	local := embed.NewLocal()
	now := time.Now()
	mk := func(id, s string) episode.Episode {
		return episode.Episode{ID: id, Summary: s, Context: s, Type: "decision", Scope: "global", ContentHash: id,
			Importance: 0.6, Embedding: local.EmbedText(s), Embedder: local.Name(), OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	err := db.Import(context.Background(), []episode.Episode{
		mk("ep_0000000000a1", "We decided to keep invoices in Postgres with one schema per tenant"),
		mk("ep_0000000000a2", "The CI pipeline runs golangci-lint before the tests"),
	}, []belief.Belief{{ID: "bl_0000000000b1", Statement: "The user prefers Postgres for billing data", Timeframe: "current",
		Alpha: 6, Beta: 1, Scope: "global", Status: "active", EvidenceCount: 5, Stability: 1, CreatedAt: now, UpdatedAt: now,
		Supporting: []string{"ep_0000000000a1"}}})
	if err != nil {
		t.Fatal(err)
	}
	// What the worker does after ingest: write the recollection files.
	if _, err := recollect.Build(context.Background(), db, h.engram, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
}

func TestRecallExpandForget(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	out, errOut, code := h.run(t, "", "recall", "--all-projects", "postgres invoices schema")
	if code != 0 || !strings.Contains(out, "ep_0000000000a1") || !strings.Contains(out, "[B]") {
		t.Fatalf("recall: %d %q %q", code, out, errOut)
	}
	out, _, code = h.run(t, "", "recall", "--json", "--all-projects", "lint", "pipeline")
	if code != 0 || !strings.Contains(out, `"id": "ep_0000000000a2"`) || !strings.Contains(out, `"score"`) {
		t.Fatalf("recall --json: %d %s", code, out)
	}
	out, _, code = h.run(t, "", "expand", "bl_0000000000b1")
	if code != 0 || !strings.Contains(out, "confidence: 0.86 (α 6, β 1)") || !strings.Contains(out, "supporting:    ep_0000000000a1") {
		t.Fatalf("expand belief: %d %s", code, out)
	}
	out, _, code = h.run(t, "", "beliefs", "--json")
	if code != 0 || !strings.Contains(out, `"evidence_count": 5`) {
		t.Fatalf("beliefs: %d %s", code, out)
	}
	// A bad id in the list forgets nothing.
	_, errOut, code = h.run(t, "", "forget", "ep_0000000000a1", "ep_ffffffffffff")
	if code != 1 || !strings.Contains(errOut, "ep_ffffffffffff") {
		t.Fatalf("forget unknown: %d %q", code, errOut)
	}
	if _, _, code = h.run(t, "", "expand", "ep_0000000000a1"); code != 0 {
		t.Fatal("episode gone after a refused forget")
	}
	if _, errOut, code = h.run(t, "", "forget", "x_1"); code != 2 || !strings.Contains(errOut, `"x_1"`) {
		t.Fatalf("forget bad id: %d %q", code, errOut)
	}
	if out, _, code = h.run(t, "", "forget", "ep_0000000000a1", "bl_0000000000b1"); code != 0 {
		t.Fatalf("forget: %d %s", code, out)
	}
	out, _, _ = h.run(t, "", "recall", "--all-projects", "postgres invoices schema")
	if strings.Contains(out, "ep_0000000000a1") || strings.Contains(out, "bl_0000000000b1") {
		t.Errorf("forgotten memory recalled:\n%s", out)
	}
	if _, errOut, code = h.run(t, "", "expand", "ep_0000000000a1"); code != 1 || !strings.Contains(errOut, "no episode ep_0000000000a1") {
		t.Errorf("expand forgotten: %d %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	h := newHome(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"recall"}, "want a query"},
		{[]string{"recall", "--limit", "0", "x"}, "--limit 0"},
		{[]string{"beliefs", "--status", "maybe"}, `--status "maybe"`},
		{[]string{"beliefs", "--min-confidence", "2"}, "--min-confidence 2"},
		{[]string{"expand", "nope"}, `id "nope"`},
		{[]string{"import"}, "want one file"},
		{[]string{"run", "extra"}, `unexpected argument "extra"`},
	} {
		_, errOut, code := h.run(t, "", tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
}

func TestExportImportCommands(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	file := filepath.Join(t.TempDir(), "dump.jsonl")
	if _, errOut, code := h.run(t, "", "export", "--out", file); code != 0 {
		t.Fatalf("export: %q", errOut)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("export mode %v", st.Mode().Perm())
	}
	other := newHome(t)
	out, errOut, code := other.run(t, "", "import", file)
	if code != 0 || !strings.Contains(out, "imported 3 records") {
		t.Fatalf("import: %d %q %q", code, out, errOut)
	}
	// Importing again skips every record and changes nothing.
	out, errOut, code = other.run(t, "", "import", file)
	if code != 0 || !strings.Contains(out, "imported 3 records from "+file+": 0 added, 3 skipped (already in the store), 0 merged") {
		t.Fatalf("second import: %d %q %q", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"kind\":\"episode\"}\n"), 0o600)
	if _, errOut, code = newHome(t).run(t, "", "import", bad); code != 1 || !strings.Contains(errOut, "line 1") {
		t.Errorf("bad import: %d %q", code, errOut)
	}
}

// forget waits for a running worker cycle to end before it deletes, so
// that the cycle cannot write files from what it read before the forget.
func TestForgetWaitsForTheWorker(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	lk, err := worker.Lock(h.engram)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan time.Time, 1)
	time.AfterFunc(500*time.Millisecond, func() { released <- time.Now(); lk.Unlock() })
	out, errOut, code := h.run(t, "", "forget", "ep_0000000000a1")
	done := time.Now()
	if code != 0 || !strings.Contains(out, "forgot ep_0000000000a1") {
		t.Fatalf("forget: %d %q %q", code, out, errOut)
	}
	if at := <-released; done.Before(at) {
		t.Errorf("forget finished before the cycle released its lock")
	}
}
