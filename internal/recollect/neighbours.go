package recollect

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// Neighbours is how many episodes a session's neighbours file holds.
const Neighbours = 10

// NeighbourCos is the least cosine of a session neighbour with the
// session's latest exchange: set by hand with the neighbours files
// (ce3bec3), no figure measured; the prompt hook gates what they bring
// as it gates every other candidate.
const NeighbourCos = 0.3

// BuildNeighbours writes, for every session active since the given time, the
// episodes nearest its latest exchange by the configured embedder (remote
// when one is configured): the prompt hook then gets semantic neighbours
// without any network call. It returns how many files it wrote.
func BuildNeighbours(ctx context.Context, db *store.DB, home string, embedderName string, since, now time.Time) (int, error) {
	anchors, err := db.RecentSessionAnchors(ctx, since)
	if err != nil || len(anchors) == 0 {
		return 0, err
	}
	rows, err := db.EpisodeVectors(ctx, embedderName)
	if err != nil {
		return 0, err
	}
	byID := make(map[string]int, len(rows))
	for i, r := range rows {
		byID[r.ID] = i
	}
	local := embed.NewLocal()
	n := 0
	for _, a := range anchors {
		if hookio.ValidSessionID(a.SessionID) != nil {
			continue // it names a file
		}
		i, ok := byID[a.EpisodeID]
		if !ok {
			continue // the anchor was made by another embedder or forgotten
		}
		q := rows[i].Vector
		type hit struct {
			idx int
			sim float32
		}
		var hits []hit
		for j, r := range rows {
			if j == i || !(r.Scope == episode.ScopeGlobal || r.ProjectPath == a.ProjectPath) {
				continue
			}
			if s := embed.Cosine(q, r.Vector); s > NeighbourCos {
				hits = append(hits, hit{j, s})
			}
		}
		sort.Slice(hits, func(x, y int) bool { return hits[x].sim > hits[y].sim })
		if len(hits) > Neighbours {
			hits = hits[:Neighbours]
		}
		f := &recall.File{Embedder: local.Name(), CreatedAt: now, Scope: "session", ProjectPath: a.ProjectPath, SessionID: a.SessionID}
		dense := map[string]int{}
		for _, h := range hits {
			e, err := db.GetEpisode(ctx, rows[h.idx].ID)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return n, err
			}
			it := recall.EpisodeItem(e)
			if it.Superseded {
				if repl, err := db.Supersessions(ctx, []string{e.ID}); err == nil {
					repl := replacements(repl)
					repl.apply(&it, e)
				}
			}
			if seqs, err := db.SeqsOf(ctx, []string{e.ID}); err == nil {
				it.Seq = seqs[e.ID]
			}
			if e.Embedder == local.Name() {
				it.Vec = e.Embedding
			} else {
				it.Vec = local.EmbedText(e.Summary)
			}
			if embed.IsSentence(e.Embedder) {
				it.Dense = e.Embedding
				dense[e.Embedder]++
			}
			f.Items = append(f.Items, it)
		}
		f.Dense = denseName(dense)
		if err := recall.Save(recall.SessionPath(home, a.SessionID), f); err != nil {
			return n, fmt.Errorf("write neighbours of %s: %w", a.SessionID, err)
		}
		n++
	}
	return n, nil
}
