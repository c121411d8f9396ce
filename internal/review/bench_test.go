package review

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// BenchmarkAdvance: one cycle's review step over 5,000 beliefs of 10
// supporting episodes each (50,000 episodes), nothing to move.
func BenchmarkAdvance(b *testing.B) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(b.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	var eps []episode.Episode
	var bs []belief.Belief
	for i := range 5000 {
		var sup []string
		for j := range 10 {
			id := fmt.Sprintf("ep_%06x%06x", i, j)
			eps = append(eps, episode.Episode{ID: id, Summary: "s", Context: "c", Type: episode.TypeFact, Scope: episode.ScopeGlobal,
				ContentHash: id, Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now,
				Signals: []episode.Signal{{Kind: episode.SignalFact, Subject: "x", Polarity: 1}}})
			sup = append(sup, id)
		}
		bs = append(bs, belief.Belief{ID: fmt.Sprintf("bl_%012x", i), Statement: "s", Timeframe: belief.TimeCurrent,
			Alpha: 2, Beta: 1, Scope: episode.ScopeGlobal, Status: belief.StatusActive, EvidenceCount: 10,
			Supporting: sup, CreatedAt: now})
	}
	if err := db.Import(ctx, eps, bs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Advance(ctx, db, ModeUncertain, now); err != nil {
			b.Fatal(err)
		}
	}
}
