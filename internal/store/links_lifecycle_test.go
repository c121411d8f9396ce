package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
)

var edgeT0 = time.UnixMilli(1_800_000_000_000)

// lifecycleDB opens a store on a file with n active beliefs, bl_…01 to
// bl_…0n.
func lifecycleDB(t *testing.T, n int) (*DB, []string) {
	t.Helper()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	var bs []belief.Belief
	var ids []string
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("bl_%012x", i)
		ids = append(ids, id)
		bs = append(bs, belief.Belief{ID: id, Statement: fmt.Sprintf("belief %d", i), Alpha: 4, Beta: 1, Scope: "global",
			Status: belief.StatusActive, Timeframe: belief.TimeCurrent, CreatedAt: edgeT0, UpdatedAt: edgeT0})
	}
	if err := db.ImportBeliefs(context.Background(), bs); err != nil {
		t.Fatal(err)
	}
	return db, ids
}

func link(t *testing.T, db *DB, a, b string, at time.Time) {
	t.Helper()
	if err := db.Beliefs(context.Background(), func(tx *BeliefTx) error { return tx.Link(a, b, 0.6, at) }); err != nil {
		t.Fatal(err)
	}
}

// edgeOf returns both rows of the link between a and b, and fails unless
// they hold the same lifecycle.
func edgeOf(t *testing.T, db *DB, a, b string) Link {
	t.Helper()
	rows := map[string]Link{}
	all, err := db.AllLinks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		rows[l.From+">"+l.To] = l
	}
	ab, ok1 := rows[a+">"+b]
	ba, ok2 := rows[b+">"+a]
	if !ok1 || !ok2 {
		t.Fatalf("link %s–%s: rows %v %v", a, b, ok1, ok2)
	}
	if ab.State != ba.State || ab.Similarity != ba.Similarity || !ab.At.Equal(ba.At) {
		t.Fatalf("the two rows of %s–%s differ: %+v and %+v", a, b, ab, ba)
	}
	return ab
}

func TestLinkReinforces(t *testing.T) {
	ctx := context.Background()
	db, ids := lifecycleDB(t, 2)
	a, b := ids[0], ids[1]
	link(t, db, a, b, edgeT0)
	if l := edgeOf(t, db, a, b); l.State != edge.New(edgeT0) || !l.At.Equal(edgeT0) {
		t.Fatalf("new link: %+v, want %+v", l, edge.New(edgeT0))
	}
	// Observed again right away: capped at 1, and stamped.
	t1 := edgeT0.Add(time.Hour)
	link(t, db, a, b, t1)
	if l := edgeOf(t, db, a, b); l.Confidence != 1 || l.ReinforcedConfidence != 1 || !l.ReinforcedAt.Equal(t1) || !l.At.Equal(edgeT0) {
		t.Fatalf("reinforced at the cap: %+v", l)
	}
	// Decayed two steps, then observed again the other way round: both
	// rows gain the delta from the decayed confidence.
	t2 := t1.Add(edge.Grace + 2*edge.Window)
	if n, err := db.DecayLinks(ctx, t2); err != nil || n != 1 {
		t.Fatalf("DecayLinks=%d, %v; want 1 link", n, err)
	}
	if l := edgeOf(t, db, a, b); l.Confidence != 0.8 || l.ReinforcedConfidence != 1 {
		t.Fatalf("decayed: %+v", l)
	}
	link(t, db, b, a, t2)
	if l := edgeOf(t, db, a, b); l.Confidence != 0.85 || l.ReinforcedConfidence != 0.85 || !l.ReinforcedAt.Equal(t2) || l.Similarity != 0.6 {
		t.Fatalf("reinforced the other way: %+v", l)
	}
	// Three more observations: 0.9, 0.95, 1, and no further.
	for i := range 4 {
		link(t, db, a, b, t2.Add(time.Duration(i+1)*time.Minute))
	}
	if l := edgeOf(t, db, a, b); l.Confidence != 1 || !l.ReinforcedAt.Equal(t2.Add(4*time.Minute)) {
		t.Fatalf("after four more observations: %+v", l)
	}
}

func TestDecayLinks(t *testing.T) {
	ctx := context.Background()
	db, ids := lifecycleDB(t, 3)
	link(t, db, ids[0], ids[1], edgeT0)
	fresh := edgeT0.Add(edge.Grace)
	link(t, db, ids[0], ids[2], fresh) // made when the other's grace ends
	tests := []struct {
		name       string
		at         time.Time
		old, young float64
		changed    int
	}{
		{"at the grace boundary", edgeT0.Add(edge.Grace), 1, 1, 0},
		{"one window past the grace", edgeT0.Add(edge.Grace + edge.Window), 0.9, 1, 1},
		{"the same time again", edgeT0.Add(edge.Grace + edge.Window), 0.9, 1, 0},
		{"past the young one's grace", fresh.Add(edge.Grace + time.Millisecond), 0.8, 0.9, 2},
		{"many windows: the floor", edgeT0.Add(edge.Grace + 50*edge.Window), edge.Floor, edge.Floor, 2},
		{"the floor again", edgeT0.Add(edge.Grace + 60*edge.Window), edge.Floor, edge.Floor, 0},
	}
	for _, tt := range tests {
		n, err := db.DecayLinks(ctx, tt.at)
		if err != nil {
			t.Fatal(err)
		}
		old, young := edgeOf(t, db, ids[0], ids[1]), edgeOf(t, db, ids[0], ids[2])
		if old.Confidence != tt.old || young.Confidence != tt.young || n != tt.changed {
			t.Fatalf("%s: confidences %v %v (%d changed), want %v %v (%d)", tt.name, old.Confidence, young.Confidence, n,
				tt.old, tt.young, tt.changed)
		}
		if old.ReinforcedConfidence != 1 || !old.ReinforcedAt.Equal(edgeT0) {
			t.Fatalf("%s: decay moved the last reinforcement: %+v", tt.name, old)
		}
	}
}

// TestMergeKeepsTheGreaterConfidence: a merged belief hands its links to
// its survivor with their confidence; where the survivor has a link to the
// same belief already, the greater confidence stays. A merge observes
// nothing again: no reinforcement.
func TestMergeKeepsTheGreaterConfidence(t *testing.T) {
	ctx := context.Background()
	db, ids := lifecycleDB(t, 5)
	keep, gone, shared, onlyGone, weakShared := ids[0], ids[1], ids[2], ids[3], ids[4]
	st := func(c float64) edge.State {
		return edge.State{Confidence: c, ReinforcedConfidence: c, ReinforcedAt: edgeT0}
	}
	err := db.ImportAll(ctx, nil, nil, nil, []Link{
		{From: keep, To: shared, Similarity: 0.5, At: edgeT0, State: st(0.4)},
		{From: gone, To: shared, Similarity: 0.6, At: edgeT0, State: st(0.9)},
		{From: gone, To: onlyGone, Similarity: 0.5, At: edgeT0, State: st(0.7)},
		{From: keep, To: weakShared, Similarity: 0.5, At: edgeT0, State: st(0.8)},
		{From: gone, To: weakShared, Similarity: 0.5, At: edgeT0, State: st(0.3)},
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Beliefs(ctx, func(tx *BeliefTx) error {
		b, err := tx.Get(gone)
		if err != nil {
			return err
		}
		b.Status, b.Children, b.UpdatedAt = belief.StatusMerged, []string{keep}, edgeT0.Add(time.Hour)
		return tx.UpdateEvidence(&b)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		to   string
		want float64
	}{{shared, 0.9}, {onlyGone, 0.7}, {weakShared, 0.8}} {
		if l := edgeOf(t, db, keep, c.to); l.Confidence != c.want || !l.ReinforcedAt.Equal(edgeT0) {
			t.Errorf("%s → %s after the merge: %+v, want confidence %v reinforced at %v", keep, c.to, l, c.want, edgeT0)
		}
	}
	if l, _ := db.Links(ctx, gone); len(l) > 0 {
		t.Fatalf("the merged belief kept links: %+v", l)
	}
}

// TestEdgeMigrationKeepsLegacyLinks: links made before the migration that
// gave them a confidence have full confidence, reinforced when they were
// made.
func TestEdgeMigrationKeepsLegacyLinks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := []belief.Belief{
		{ID: "bl_0000000000a1", Statement: "a", Alpha: 2, Beta: 1, Scope: "global", Status: belief.StatusActive, CreatedAt: edgeT0, UpdatedAt: edgeT0},
		{ID: "bl_0000000000a2", Statement: "b", Alpha: 2, Beta: 1, Scope: "global", Status: belief.StatusActive, CreatedAt: edgeT0, UpdatedAt: edgeT0},
	}
	if err := db.ImportBeliefs(ctx, bs); err != nil {
		t.Fatal(err)
	}
	// Back to the schema before 0011_edge_confidence.sql, with a link as
	// that schema held it.
	const edges = 11
	made := edgeT0.Add(-400 * 24 * time.Hour)
	for _, q := range []string{"ALTER TABLE belief_links DROP COLUMN confidence", "ALTER TABLE belief_links DROP COLUMN reinforced_confidence",
		"ALTER TABLE belief_links DROP COLUMN reinforced_at",
		fmt.Sprintf("INSERT INTO belief_links(belief_id, linked_id, similarity, created_at) VALUES ('bl_0000000000a1', 'bl_0000000000a2', 0.5, %d), ('bl_0000000000a2', 'bl_0000000000a1', 0.5, %[1]d)", made.UnixMilli()),
		fmt.Sprintf("DELETE FROM schema_migrations WHERE version >= %d", edges), fmt.Sprintf("PRAGMA user_version = %d", edges-1)} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	db = mustOpen(t, path)
	l := edgeOf(t, db, "bl_0000000000a1", "bl_0000000000a2")
	if l.Confidence != 1 || l.ReinforcedConfidence != 1 || !l.ReinforcedAt.Equal(made) || !l.At.Equal(made) || l.Similarity != 0.5 {
		t.Fatalf("legacy link after the migration: %+v", l)
	}
	// Its decay counts from when it was made.
	if _, err := db.DecayLinks(ctx, made.Add(edge.Grace+time.Hour)); err != nil {
		t.Fatal(err)
	}
	if l := edgeOf(t, db, "bl_0000000000a1", "bl_0000000000a2"); l.Confidence != 0.9 {
		t.Fatalf("legacy link decayed: %+v", l)
	}
}
