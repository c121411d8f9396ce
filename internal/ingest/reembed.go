package ingest

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/store"
)

// ReembedStats says what Reembed did.
type ReembedStats struct {
	Episodes int `json:"episodes"`
	Beliefs  int `json:"beliefs"`
	// Left is how many episodes still have another embedder's vector (or
	// none) when the step ended; 0 when it is done.
	Left int `json:"left"`
}

// ReembedBatch is how many memories one embedding call and one commit take.
const ReembedBatch = 64

// Reembed gives existing memories the vectors of emb: the beliefs, then the
// episodes newest first, a batch per transaction, until none is left or the
// budget (0: none) is spent. Each batch commits on its own, so a worker
// killed midway keeps what it finished and the next cycle goes on from
// there. progress, when set, is called after each batch.
func Reembed(ctx context.Context, db *store.DB, emb embed.Embedder, budget time.Duration, progress func(ReembedStats)) (ReembedStats, error) {
	var st ReembedStats
	start := time.Now()
	name := emb.Name()
	spent := func() bool { return budget > 0 && time.Since(start) >= budget }
	for !spent() {
		bs, err := db.BeliefsToEmbed(ctx, name, ReembedBatch)
		if err != nil || len(bs) == 0 {
			if err != nil {
				return st, err
			}
			break
		}
		texts := make([]string, len(bs))
		for i, b := range bs {
			texts[i] = b.Statement
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return st, fmt.Errorf("embed beliefs: %w", err)
		}
		out := make([]store.Vector, len(bs))
		for i, b := range bs {
			out[i] = store.Vector{ID: b.ID, Vector: vs[i]}
		}
		if err := db.SetBeliefVectors(ctx, name, out); err != nil {
			return st, err
		}
		st.Beliefs += len(bs)
	}
	below := int64(0) // where the last batch stopped: the next starts there
	for !spent() {
		eps, lowest, err := db.EpisodesToEmbed(ctx, name, below, ReembedBatch)
		if err != nil {
			return st, err
		}
		below = lowest
		if len(eps) == 0 {
			break
		}
		texts := make([]string, len(eps))
		for i, e := range eps {
			texts[i] = TextFor(name, extract.Draft{Summary: e.Summary, Entities: e.Entities, Context: e.Context})
		}
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return st, fmt.Errorf("embed episodes: %w", err)
		}
		out := make([]store.Vector, len(eps))
		for i, e := range eps {
			out[i] = store.Vector{ID: e.ID, Vector: vs[i]}
		}
		if err := db.SetEpisodeVectors(ctx, name, out); err != nil {
			return st, err
		}
		st.Episodes += len(eps)
		if progress != nil {
			progress(st)
		}
	}
	counts, _, err := db.EmbedderCounts(ctx)
	if err != nil {
		return st, err
	}
	for n, c := range counts {
		if n != name {
			st.Left += c
		}
	}
	return st, nil
}

// EmbedStatements returns the vectors of emb for belief statements, as the
// worker makes them (Reembed, EmbedMissingBeliefs): an edited statement
// gets the vector a cycle would give it.
func EmbedStatements(ctx context.Context, emb embed.Embedder, statements []string) ([][]float32, error) {
	vs, err := emb.Embed(ctx, statements)
	if err != nil {
		return nil, fmt.Errorf("embed beliefs: %w", err)
	}
	if len(vs) != len(statements) {
		return nil, fmt.Errorf("embed beliefs: %d vectors for %d statements", len(vs), len(statements))
	}
	return vs, nil
}

// EmbedMissingBeliefs gives the beliefs that have no vector (a statement
// edited where the configured embedder was not at hand, a belief pulled
// from a share) one of emb, a batch per transaction, until none is left or
// the budget (0: none) is spent. It returns how many it embedded.
func EmbedMissingBeliefs(ctx context.Context, db *store.DB, emb embed.Embedder, budget time.Duration) (int, error) {
	start := time.Now()
	n := 0
	for budget <= 0 || time.Since(start) < budget {
		bs, err := db.BeliefsWithoutVector(ctx, ReembedBatch)
		if err != nil || len(bs) == 0 {
			return n, err
		}
		texts := make([]string, len(bs))
		for i, b := range bs {
			texts[i] = b.Statement
		}
		vs, err := EmbedStatements(ctx, emb, texts)
		if err != nil {
			return n, err
		}
		out := make([]store.Vector, 0, len(bs))
		for i, b := range bs {
			if len(vs[i]) > 0 {
				out = append(out, store.Vector{ID: b.ID, Vector: vs[i]})
			}
		}
		if len(out) == 0 {
			return n, nil // nothing the embedder can give a vector to
		}
		if err := db.SetBeliefVectors(ctx, emb.Name(), out); err != nil {
			return n, err
		}
		n += len(out)
	}
	return n, nil
}
