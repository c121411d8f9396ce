package recollect

import (
	"context"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// replacements are what superseded the store's superseded episodes, for
// their bites' labels (recall.Item.Replaced).
type replacements map[string]store.Supersession

func loadReplacements(ctx context.Context, db *store.DB) (replacements, error) {
	return db.Supersessions(ctx, nil)
}

// apply labels it, the item of episode e, with what superseded it and
// when, in the correcting user's words; an item the store knows no
// correction of keeps the general label.
func (r replacements) apply(it *recall.Item, e episode.Episode) {
	if !it.Superseded {
		return
	}
	s, ok := r[it.ID]
	if !ok {
		return
	}
	if it.Replaced = recall.Replacement(e.Summary+"\n"+e.Context, s.Context); it.Replaced != "" {
		it.ReplacedAt = s.At
	}
}
