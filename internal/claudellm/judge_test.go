package claudellm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/openaistub"
)

// The judge asks the model only where the episodes' own signals say
// nothing.
func TestJudgeAsksOnlyWhereNeeded(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{Chat: func(r *openaistub.Request) openaistub.Reply {
		if strings.Contains(r.System(), "generalized belief") {
			return openaistub.JSON(map[string]any{"skip": false, "statement": "Project billing deploys with flyctl.",
				"subject": "billing", "predicate": "deploys with", "context": "general", "timeframe": "current"})
		}
		return openaistub.JSON(map[string]string{"classification": "SUPPORTS", "reasoning": "same"})
	}})
	c := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "m", Timeout: 2 * time.Second})
	j := claudellm.Judge{Model: consolidate.NewLLM(c, time.Second)}
	ctx := context.Background()
	stated := func(id string) episode.Episode {
		return episode.Episode{ID: id, Summary: "User prefers bun.", Signals: []episode.Signal{
			{Kind: episode.SignalPreference, Subject: "bun", Polarity: 1, Text: "I prefer bun"}}}
	}
	plain := func(id string) episode.Episode {
		return episode.Episode{ID: id, Summary: "Deployed the billing service with flyctl deploy."}
	}

	// Signals: the local judge synthesizes, no call.
	cands, err := j.Synthesize(ctx, consolidate.Group{Scope: "global", Episodes: []episode.Episode{stated("a"), stated("b"), stated("c")}})
	if err != nil || len(cands) != 1 || srv.Count() != 0 {
		t.Fatalf("cands=%+v err=%v calls=%d, want one local candidate and no call", cands, err, srv.Count())
	}
	// No signals: the model.
	cands, err = j.Synthesize(ctx, consolidate.Group{Scope: "project", Project: "billing",
		Episodes: []episode.Episode{plain("a"), plain("b"), plain("c")}})
	if err != nil || len(cands) != 1 || cands[0].Statement != "Project billing deploys with flyctl." || srv.Count() != 1 {
		t.Fatalf("cands=%+v err=%v calls=%d, want the model's candidate", cands, err, srv.Count())
	}

	b := &belief.Belief{Statement: "User prefers bun.", Subject: "bun", Predicate: "prefers"}
	against := episode.Episode{ID: "d", Summary: "User avoids bun.", Signals: []episode.Signal{
		{Kind: episode.SignalAvoid, Subject: "bun", Polarity: -1, Text: "don't use bun"}}}
	if rel, err := j.Classify(ctx, b, &against); err != nil || rel != consolidate.Contradicts || srv.Count() != 1 {
		t.Fatalf("rel=%s err=%v calls=%d, want a local CONTRADICTS", rel, err, srv.Count())
	}
	p := plain("e")
	if rel, err := j.Classify(ctx, b, &p); err != nil || rel != consolidate.Supports || srv.Count() != 2 {
		t.Fatalf("rel=%s err=%v calls=%d, want the model's SUPPORTS", rel, err, srv.Count())
	}
	if j.Name() != "llm:m" {
		t.Errorf("name %q", j.Name())
	}
}
