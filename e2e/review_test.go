package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/store"
)

// backdateLongTerm makes a belief a week and a day old in long-term
// memory, as if the time had passed: its level goes back to pending and
// to long-term again, both recorded at that earlier time.
func backdateLongTerm(t *testing.T, e *Env, id string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Now().Add(-8 * 24 * time.Hour)
	err = db.Decide(ctx, []store.Decision{
		{BeliefID: id, Decision: "test", Who: "test", At: at, Before: store.LevelLongTerm, After: store.LevelPending},
		{BeliefID: id, Decision: "test", Who: "test", At: at, Before: store.LevelPending, After: store.LevelLongTerm},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReviewWithRealClient: a project fact the user states twice reaches
// long-term memory by itself (explicit statements pass review) and, a week
// later, waits for approval to core memory; approved with --target both,
// it is written at once into the managed block of the project's
// CLAUDE.md and AGENTS.md, leaves the project's MEMORY.md at the next
// cycle, and reaches the model's request of the next session inside
// CLAUDE.md. A preference the user denies leaves MEMORY.md, and neither
// saying it again, consolidating again nor a backfill of every transcript
// brings it back, to MEMORY.md, CLAUDE.md or the model's context.
func TestReviewWithRealClient(t *testing.T) {
	respond := func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Noted.") }
	e, bins := statedEnv(t, respond)
	projectMemory := filepath.Join(e.ClaudeDir, "projects", sanitizePath(e.Project), "memory", "MEMORY.md")
	globalMemory := filepath.Join(e.EngramHome, "MEMORY.md")
	claudeMD, agentsMD := filepath.Join(e.Project, "CLAUDE.md"), filepath.Join(e.Project, "AGENTS.md")
	const userNotes = "# Billing service\n\nRun `make test` before pushing.\n"
	if err := os.WriteFile(claudeMD, []byte(userNotes), 0o644); err != nil {
		t.Fatal(err)
	}

	e.runSession(e.Project, "For the record: this service deploys to Fly.io")
	e.runSession(e.Project, "Reminder: this service deploys to Fly.io, nowhere else")
	t.Logf("engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	var fact *belief.Belief
	for _, b := range activeBeliefs(t, e) {
		if b.Subject == "deploy target" && b.Context == "fly.io" {
			fact = &b
		}
	}
	if fact == nil || fact.EvidenceCount < 5 {
		t.Fatalf("no project belief about the deploy target with evidence 5: %s", describeBeliefs(readBeliefs(t, e)))
	}
	if m := readFileOr(projectMemory); !strings.Contains(m, "- "+fact.Statement) {
		t.Fatalf("the stated fact is not in the project's MEMORY.md:\n%s", m)
	}
	backdateLongTerm(t, e, fact.ID)
	if list := e.Worker(bins.Worker, "review", "--list"); !strings.Contains(list, fact.ID) || !strings.Contains(list, "long-term -> core") {
		t.Fatalf("review --list:\n%s", list)
	}
	out := e.Worker(bins.Worker, "review", "approve", "--target", "both", fact.ID)
	if !strings.Contains(out, fact.ID+" approve: long-term -> core") {
		t.Fatalf("approve: %s", out)
	}
	block := "<!-- ENGRAM:CORE:BEGIN -->\n"
	if c := readFileOr(claudeMD); !strings.HasPrefix(c, userNotes+block) || !strings.Contains(c, "- "+fact.Statement+"\n") {
		t.Fatalf("CLAUDE.md:\n%s", c)
	}
	if a := readFileOr(agentsMD); !strings.HasPrefix(a, block) || !strings.Contains(a, "- "+fact.Statement+"\n") {
		t.Fatalf("AGENTS.md:\n%s", a)
	}
	t.Logf("engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if m := readFileOr(projectMemory); strings.Contains(m, fact.Statement) {
		t.Errorf("a core belief is repeated in the project's MEMORY.md:\n%s", m)
	}
	_, reqs := e.runSession(e.Project, "How do we deploy?")
	files := loadedFiles(reqs[0])
	if c, ok := files[claudeMD]; !ok || !strings.Contains(c.Body, "- "+fact.Statement) {
		t.Errorf("the first request does not load %s with the core belief; it loads:\n%s", claudeMD, describeLoaded(files))
	}

	// A denied preference.
	e.runSession(e.Project, "I prefer bun for my scripts, please use it to run this one")
	e.Worker(bins.Worker, "run")
	var bun *belief.Belief
	for _, b := range activeBeliefs(t, e) {
		if b.Subject == "bun" && b.Predicate == "prefers" {
			bun = &b
		}
	}
	if bun == nil || !strings.Contains(readFileOr(globalMemory), "- "+bun.Statement) {
		t.Fatalf("no bun preference in the global MEMORY.md: %s\n%s", describeBeliefs(readBeliefs(t, e)), readFileOr(globalMemory))
	}
	if out := e.Worker(bins.Worker, "review", "deny", bun.ID); !strings.Contains(out, bun.ID+" deny: long-term -> denied") {
		t.Fatalf("deny: %s", out)
	}
	e.Worker(bins.Worker, "run")
	e.runSession(e.Project, "I always prefer bun over node for small scripts like this migration helper")
	e.Worker(bins.Worker, "run")
	e.Worker(bins.Worker, "run", "--consolidate")
	// Every transcript captured again and the whole history consolidated.
	t.Logf("engram-worker run --backfill:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run", "--backfill")))
	for _, path := range []string{globalMemory, projectMemory, claudeMD, agentsMD, filepath.Join(e.ClaudeDir, "CLAUDE.md")} {
		if strings.Contains(readFileOr(path), bun.Statement) {
			t.Errorf("the denied belief is in %s:\n%s", path, readFileOr(path))
		}
	}
	n := 0
	for _, b := range readBeliefs(t, e) {
		if b.Subject == "bun" && b.Predicate == "prefers" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d bun preferences, want the denied one only: %s", n, describeBeliefs(readBeliefs(t, e)))
	}
	const q = "Which runtime do I prefer for my scripts, bun?"
	_, reqs = e.runSession(e.Project, q)
	if turn := promptRequest(reqs, q); turn == nil || turn.Contains(bun.Statement) {
		t.Errorf("the denied belief reached the model's request (or no request carries the prompt)")
	}
}
