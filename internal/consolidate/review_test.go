package consolidate_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/portable"
	"github.com/engram-memory/engram/internal/store"
)

func (w *statedWorld) decide(id, before, after string) {
	w.t.Helper()
	err := w.db.Decide(w.ctx, []store.Decision{{BeliefID: id, Decision: "deny", Who: "user", At: time.Now(), Before: before, After: after}})
	if err != nil {
		w.t.Fatal(err)
	}
}

// count returns how many beliefs, of any status, have this subject and
// predicate.
func (w *statedWorld) count(subject, predicate string) int {
	n := 0
	for _, b := range mustList(w.t, w.db) {
		if b.Subject == subject && b.Predicate == predicate {
			n++
		}
	}
	return n
}

// TestDeniedStaysDenied: a denied belief is not formed again — not from a
// restatement, a paraphrase, the whole history consolidated again, or an
// export imported elsewhere; what says it again is its evidence.
func TestDeniedStaysDenied(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "I prefer bun for my scripts, please use it to run this one")
	bun := w.expect("User prefers bun.", belief.StatusActive, 4, 1)
	w.decide(bun.ID, store.LevelPending, store.LevelDenied)

	w.day(2, "I always prefer bun over node for small scripts like this migration helper")
	w.day(3, "bun is what I prefer for the seed script as well")
	if n := w.count("bun", consolidate.PredPrefers); n != 1 {
		w.dump()
		t.Fatalf("%d bun preferences, want the denied one only", n)
	}
	got := w.expect("User prefers bun.", belief.StatusActive, 10, 1)
	if got.ID != bun.ID {
		t.Fatalf("the restatements went to %s, not the denied %s", got.ID, bun.ID)
	}

	// The whole history again.
	if err := w.db.SetMeta(w.ctx, consolidate.CheckpointKey, `{"seq":0}`); err != nil {
		t.Fatal(err)
	}
	w.day(4)
	if n := w.count("bun", consolidate.PredPrefers); n != 1 {
		w.dump()
		t.Fatalf("after consolidating again: %d bun preferences, want 1", n)
	}

	// Export, import into a new store, consolidate everything again.
	var buf bytes.Buffer
	if _, err := portable.Export(w.ctx, w.db, &buf); err != nil {
		t.Fatal(err)
	}
	w2 := newStatedWorld(t)
	if _, err := portable.Import(w2.ctx, w2.db, &buf); err != nil {
		t.Fatal(err)
	}
	if err := w2.db.SetMeta(w2.ctx, consolidate.CheckpointKey, `{"seq":0}`); err != nil {
		t.Fatal(err)
	}
	w2.day(5, "I prefer bun, really")
	rb, err := w2.db.ReviewBelief(w2.ctx, bun.ID)
	if err != nil || rb.Level != store.LevelDenied {
		t.Fatalf("after import: level %q %v, want denied", rb.Level, err)
	}
	if n := w2.count("bun", consolidate.PredPrefers); n != 1 {
		w2.dump()
		t.Fatalf("after import: %d bun preferences, want 1", n)
	}
}

// TestFrozenBeliefsKeptByGates: a pinned belief is never archived, revised
// or merged away, and neither is a denied one; an unpinned twin is.
func TestFrozenBeliefsKeptByGates(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "our database is Postgres")
	pg := w.expect("In project tools, database is postgres.", belief.StatusActive, 4, 1)
	w.decide(pg.ID, store.LevelPending, store.LevelPinned)
	// A correction weighs against a pinned belief but does not retire it.
	w.day(2, "Actually we moved from Postgres to SQLite last week")
	w.expect("In project tools, database is postgres.", belief.StatusActive, 4, 4)
	// Months later, unreinforced: the archive gate would take it.
	w.day(200)
	w.expect("In project tools, database is postgres.", belief.StatusActive, 4, 4)
	w.expect("In project tools, database is sqlite.", belief.StatusArchived, 4, 1)
	_ = context.Background()
}
