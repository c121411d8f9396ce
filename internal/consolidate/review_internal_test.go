package consolidate

import (
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/store"
)

func (f *fixture) setLevel(id, before, after string) {
	f.tb.Helper()
	err := f.db.Decide(context.Background(), []store.Decision{{BeliefID: id, Decision: after, Who: "user", At: t0, Before: before, After: after}})
	if err != nil {
		f.tb.Fatal(err)
	}
}

// TestDeniedNotFormedFromClusters: mentions that would form a belief the
// user denied are its evidence instead — also when it is no longer active.
func TestDeniedNotFormedFromClusters(t *testing.T) {
	for _, archived := range []bool{false, true} {
		f := newFixture(t)
		for i := range 3 {
			f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
		}
		f.run(t0.Add(hours(4)))
		b := f.only(belief.StatusActive)
		if archived {
			err := f.db.Beliefs(context.Background(), func(tx *store.BeliefTx) error {
				got, err := tx.Get(b.ID)
				if err != nil {
					return err
				}
				got.Status = belief.StatusArchived
				return tx.Update(&got)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		f.setLevel(b.ID, store.LevelPending, store.LevelDenied)
		for i := range 3 {
			f.add(t0.Add(hours(10+i)), "bun is what I like to use for scripts", pref("bun"))
		}
		st := f.run(t0.Add(hours(20)))
		all := f.beliefs("")
		if st.Created != 0 || len(all) != 1 {
			t.Fatalf("archived=%v: a denied belief was formed again: %+v %v", archived, st, statements(all))
		}
		if got := all[0]; got.ID != b.ID || got.EvidenceCount != 6 {
			t.Fatalf("archived=%v: the mentions are not its evidence: %v", archived, statements(all))
		}
	}
}

// TestPinnedNotArchivedOrMerged: the archive and merge gates pass a pinned
// belief by.
func TestPinnedNotArchivedOrMerged(t *testing.T) {
	f := newFixture(t)
	vs, _ := f.emb.Embed(context.Background(), []string{"User prefers table-driven tests in Go"})
	old := t0.Add(-120 * 24 * time.Hour)
	mk := func(id, statement string, ev int) belief.Belief {
		return belief.Belief{ID: id, Statement: statement, Subject: "table-driven tests", Predicate: "likes writing",
			Scope: "global", Alpha: 1 + float64(ev), Beta: 1, Status: belief.StatusActive, EvidenceCount: ev, Stability: 1,
			PeakConfidence: 0.8, Embedding: vs[0], Embedder: f.emb.Name(), CreatedAt: old, UpdatedAt: old, LastReinforcedAt: old}
	}
	a := mk("bl_00000000000a", "User prefers table-driven tests in Go", 6)
	b := mk("bl_00000000000b", "User likes table driven tests for Go code", 5)
	c := mk("bl_00000000000c", "User prefers vim.", 2) // stale: the archive gate would take it
	c.Subject, c.Embedding, c.Embedder = "vim", nil, ""
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{a, b, c}); err != nil {
		t.Fatal(err)
	}
	f.setLevel(b.ID, store.LevelPending, store.LevelPinned)
	f.setLevel(c.ID, store.LevelPending, store.LevelPinned)
	st := f.run(t0)
	if st.Merged != 0 || st.Archived != 0 || len(f.beliefs(belief.StatusActive)) != 3 {
		t.Fatalf("a pinned belief was merged or archived: %+v %v", st, statements(f.beliefs("")))
	}
	// Unpinned, the twin merges into the other and the stale one is archived.
	f.setLevel(b.ID, store.LevelPinned, store.LevelLongTerm)
	f.setLevel(c.ID, store.LevelPinned, store.LevelLongTerm)
	if st := f.run(t0.Add(hours(1))); st.Merged != 1 || st.Archived != 1 {
		t.Fatalf("unpinned: %+v %v", st, statements(f.beliefs("")))
	}
}
