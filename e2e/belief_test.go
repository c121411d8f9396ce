package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/store"
)

// The belief test's conversation: one preference, stated in three
// sessions in different words, then a question it bears on.
var beliefPrompts = []string{
	"I prefer bun for my scripts, please use it to run this one",
	"I always prefer bun over node for small scripts like this migration helper",
	"I prefer bun when running the seed script as well",
}

const (
	beliefQuestion = "Should the cleanup script use bun?"
	beliefBite     = "[Belief (0.91): I prefer bun for my scripts.]"
	replyBelief    = "Going by your recorded preference: bun."
	replyNoBelief  = "No preference recorded; either works."
)

// TestBeliefWithRealClient: a preference stated in a session of the real
// client becomes a belief at the next consolidation (an explicit statement
// counts as three observations: Beta(4, 1)), two more sessions reinforce
// it (Beta(10, 1)), and the prompt hook then injects it as a belief bite
// into a fourth session's request to the model.
func TestBeliefWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	respond := func(r *anthropicstub.Request) anthropicstub.Reply {
		if strings.Contains(r.Prompt(), beliefQuestion) {
			if r.Contains(beliefBite) {
				return anthropicstub.Text(replyBelief)
			}
			return anthropicstub.Text(replyNoBelief)
		}
		return anthropicstub.Text("Will do.")
	}
	e := NewEnv(t, respond, Hooks{})
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	}()

	for i, p := range beliefPrompts {
		res, _ := e.runSession(e.Project, p)
		if !strings.Contains(res.Result, "Will do.") {
			t.Fatalf("session %d: client result %q", i+1, res.Result)
		}
		// The worker runs between sessions as its timer would; the
		// consolidation is forced so that the test need not wait for
		// its triggers.
		t.Logf("after session %d: engram-worker run --consolidate:\n%s", i+1,
			strings.TrimSpace(e.Worker(bins.Worker, "run", "--consolidate")))
		bs := readBeliefs(t, e)
		var bun *belief.Belief
		for j := range bs {
			if bs[j].Subject == "bun" && bs[j].Predicate == "prefers" {
				bun = &bs[j]
			}
		}
		if wantAlpha := float64(1 + 3*(i+1)); bun == nil || bun.Status != belief.StatusActive || bun.Alpha != wantAlpha ||
			bun.Beta != 1 || len(bun.Supporting) != i+1 {
			t.Fatalf("after %d sessions: beliefs %s, want one that bun is preferred, with α=%v β=1\nepisodes:\n%s", i+1,
				describeBeliefs(bs), wantAlpha, describeEpisodes(readEpisodes(t, e)))
		}
		t.Logf("beliefs: %s", describeBeliefs(bs))
	}

	res, reqs := e.runSession(e.Project, beliefQuestion)
	turn := promptRequest(reqs, beliefQuestion)
	if turn == nil {
		t.Fatalf("no request carries the question:\n%s", e.Stub.Summary())
	}
	var got []string
	for _, s := range recallSpans(*turn) {
		got = append(got, s.Where+": "+s.Text)
		if strings.Contains(s.Text, beliefBite) {
			t.Logf("belief bite reached the model in %s:\n%s", s.Where, s.Text)
		}
	}
	if !turn.Contains(beliefBite) || !strings.Contains(res.Result, replyBelief) {
		t.Fatalf("the belief bite %q did not reach the model (result %q); engram's context in the request:\n%s\n"+
			"engram-worker recall:\n%s", beliefBite, res.Result, strings.Join(got, "\n"),
			e.Worker(bins.Worker, "recall", "--project", e.Project, beliefQuestion))
	}
}

// readBeliefs lists every belief of the store, read-only.
func readBeliefs(t *testing.T, e *Env) []belief.Belief {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open store read-only: %v", err)
	}
	defer db.Close()
	bs, err := db.ListBeliefs(ctx, store.BeliefFilter{})
	if err != nil {
		t.Fatalf("list beliefs: %v", err)
	}
	return bs
}

func describeBeliefs(bs []belief.Belief) string {
	var b strings.Builder
	for _, x := range bs {
		fmt.Fprintf(&b, "\n  %s %s α=%v β=%v evidence=%d scope=%s %q", x.ID, x.Status, x.Alpha, x.Beta, x.EvidenceCount,
			x.Scope, x.Statement)
	}
	if len(bs) == 0 {
		b.WriteString("(none)")
	}
	return b.String()
}
