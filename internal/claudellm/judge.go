package claudellm

import (
	"context"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/episode"
)

// Judge asks the model only where the local judge cannot answer from the
// episodes' own signals: a cluster whose episodes state what they are about
// is synthesized locally, and an episode whose signals already support,
// contradict or qualify a belief is classified locally. The model gets the
// clusters and pairs the signals say nothing about.
type Judge struct {
	Model consolidate.Judge
}

// Name implements consolidate.Judge.
func (j Judge) Name() string { return j.Model.Name() }

// Synthesize implements consolidate.Judge.
func (j Judge) Synthesize(ctx context.Context, g consolidate.Group) ([]consolidate.Candidate, error) {
	if cands, err := (consolidate.Local{}).Synthesize(ctx, g); err == nil && len(cands) > 0 {
		return cands, nil
	}
	return j.Model.Synthesize(ctx, g)
}

// Classify implements consolidate.Judge.
func (j Judge) Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (consolidate.Relation, error) {
	if rel, err := (consolidate.Local{}).Classify(ctx, b, e); err == nil && rel != consolidate.Irrelevant {
		return rel, nil
	}
	return j.Model.Classify(ctx, b, e)
}
