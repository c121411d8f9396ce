package recollect

import (
	"context"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// StoreSearcher is recall's full-text side over the store's own FTS5
// index: what the search index must agree with (its tests compare the
// two), and a fallback for tools when the index is missing.
type StoreSearcher struct {
	DB *store.DB
}

var _ recall.Searcher = StoreSearcher{}

// Search is recall.Searcher.Search through store.SearchTerms.
func (s StoreSearcher) Search(ctx context.Context, terms []string, weights []float64, window, limit int, projectPath string) ([]recall.Hit, error) {
	if len(terms) > recall.MaxSearchTerms {
		terms = terms[:recall.MaxSearchTerms]
	}
	n := limit
	if projectPath != "" {
		n = 1 << 30 // the visible ones may be anywhere among them
	}
	hits, err := s.DB.SearchTerms(ctx, terms, weights, window, n)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	seqs := make([]int64, len(hits))
	byseq := make(map[int64]store.TermHit, len(hits))
	for i, h := range hits {
		seqs[i] = h.Seq
		byseq[h.Seq] = h
	}
	eps, err := s.DB.EpisodesBySeq(ctx, seqs, projectPath)
	if err != nil {
		return nil, err
	}
	local := embed.NewLocal().Name()
	repl, err := s.replacements(ctx, eps)
	if err != nil {
		return nil, err
	}
	var out []recall.Hit
	for _, e := range eps {
		if len(out) == limit {
			break
		}
		h := byseq[e.Seq]
		out = append(out, recall.Hit{Item: storeItem(e, local, repl), Score: h.Score, Mask: h.Mask})
	}
	return out, nil
}

// Neighbours is recall.Searcher.Neighbours through store.SessionNeighbours.
func (s StoreSearcher) Neighbours(ctx context.Context, eps []recall.Item, window int) (map[string]recall.Neighbours, error) {
	ids := make([]string, len(eps))
	for i, e := range eps {
		ids[i] = e.ID
	}
	nb, err := s.DB.SessionNeighbours(ctx, ids, window)
	if err != nil {
		return nil, err
	}
	local := embed.NewLocal().Name()
	var all []store.RecallEpisode
	for _, n := range nb {
		for _, e := range []*store.RecallEpisode{n.Before, n.After} {
			if e != nil {
				all = append(all, *e)
			}
		}
	}
	repl, err := s.replacements(ctx, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string]recall.Neighbours, len(nb))
	for id, n := range nb {
		var x recall.Neighbours
		if n.Before != nil {
			it := storeItem(*n.Before, local, repl)
			x.Before = &it
		}
		if n.After != nil {
			it := storeItem(*n.After, local, repl)
			x.After = &it
		}
		out[id] = x
	}
	return out, nil
}

// replacements reads what superseded the superseded ones of eps.
func (s StoreSearcher) replacements(ctx context.Context, eps []store.RecallEpisode) (replacements, error) {
	var ids []string
	for _, e := range eps {
		if e.Lifecycle == episode.LifecycleSuperseded {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return s.DB.Supersessions(ctx, ids)
}

// storeItem is an episode found in the store as recall sees it: with its
// vector when the local embedder made it.
func storeItem(e store.RecallEpisode, local string, repl replacements) recall.Item {
	it := recall.EpisodeItem(e.Episode)
	it.Seq = e.Seq
	repl.apply(&it, e.Episode)
	if e.Embedder == local {
		it.Vec = e.Embedding
	}
	return it
}

// Searcher is the full-text side for tools that hold the store (the CLI's
// recall, the MCP server): the search index, as the prompt hook uses it,
// brought up to date first when that takes at most a couple of seconds
// (the worker may hold its lock); the store's own index when there is no
// search index yet. close releases it.
func Searcher(ctx context.Context, home string, db *store.DB) (s recall.Searcher, close func()) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := SyncIndex(sctx, db, home, IndexOptions{}, time.Now())
	cancel()
	if err != nil && !recall.IndexReady(home) {
		return StoreSearcher{DB: db}, func() {}
	}
	ix := recall.OpenIndex(home)
	return ix, func() { ix.Close() }
}
