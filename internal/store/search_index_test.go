package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The change log records every insert, delete and change of a column the
// search index shows, and nothing else; pruning keeps ids increasing.
func TestEpisodeChangeLog(t *testing.T) {
	ctx := context.Background()
	db := recallStore(t) // seqs 1..7
	id, err := db.StoreID(ctx)
	if err != nil || len(id) != 32 {
		t.Fatalf("store id %q %v", id, err)
	}
	last, lastEver, seqs, err := db.EpisodeChanges(ctx, 0)
	if err != nil || last != 7 || lastEver != 7 || !slices.Equal(seqs, []int64{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("after inserts: last %d ever %d seqs %v err %v", last, lastEver, seqs, err)
	}
	if err := db.PruneEpisodeChanges(ctx, last); err != nil {
		t.Fatal(err)
	}
	// Shown columns log a change; graduation does not.
	if _, err := db.RecordAccesses(ctx, []Access{{ID: "ep_000000000003", At: time.UnixMilli(9000)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkGraduated(ctx, []string{"ep_000000000005"}, time.UnixMilli(9000)); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteEpisode(ctx, "ep_000000000006"); err != nil {
		t.Fatal(err)
	}
	last, lastEver, seqs, err = db.EpisodeChanges(ctx, 7)
	if err != nil || last != 9 || lastEver != 9 || !slices.Equal(seqs, []int64{3, 6}) {
		t.Fatalf("after changes: last %d ever %d seqs %v err %v", last, lastEver, seqs, err)
	}
	if err := db.PruneEpisodeChanges(ctx, last); err != nil {
		t.Fatal(err)
	}
	// Ids go on after a prune that emptied the log.
	if _, _, seqs, _ := db.EpisodeChanges(ctx, 0); len(seqs) != 0 {
		t.Errorf("pruned log still has %v", seqs)
	}
	if err := db.DeleteEpisode(ctx, "ep_000000000007"); err != nil {
		t.Fatal(err)
	}
	if last, _, seqs, _ := db.EpisodeChanges(ctx, 9); last != 10 || !slices.Equal(seqs, []int64{7}) {
		t.Errorf("after prune: last %d seqs %v", last, seqs)
	}
	// The index's view of episodes: all in seq order, or those of seqs that
	// still exist, with the entities column as stored.
	var all []int64
	if err := db.EachIndexEpisode(ctx, nil, func(e IndexEpisode) error {
		all = append(all, e.Seq)
		if e.EntitiesText != "[]" {
			t.Errorf("entities text %q", e.EntitiesText)
		}
		return nil
	}); err != nil || !slices.Equal(all, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("all: %v %v", all, err)
	}
	var some []int64
	db.EachIndexEpisode(ctx, []int64{2, 6, 5}, func(e IndexEpisode) error { some = append(some, e.Seq); return nil })
	if !slices.Equal(some, []int64{2, 5}) {
		t.Errorf("some: %v", some)
	}
	m, err := db.SeqsOf(ctx, []string{"ep_000000000004", "ep_000000000007"})
	if err != nil || len(m) != 1 || m["ep_000000000004"] != 4 {
		t.Errorf("seqs of: %v %v", m, err)
	}
	// Another store has another id.
	other := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	if id2, _ := other.StoreID(ctx); id2 == id || id2 == "" {
		t.Errorf("store ids %q %q", id, id2)
	}
}
