package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// TestReviewMigrationKeepsShownBeliefs: a store from before review levels,
// with one belief shown in a MEMORY.md, one shown as former and one never
// shown: after the migration only the first is long-term memory (since its
// promotion, with the decision recorded as the gates'), so that the first
// cycle keeps it shown.
func TestReviewMigrationKeepsShownBeliefs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	promoted := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	mk := func(id string) belief.Belief {
		return belief.Belief{ID: id, Statement: "s " + id, Timeframe: belief.TimeCurrent, Alpha: 4, Beta: 1, Scope: "global",
			Status: belief.StatusActive, EvidenceCount: 3, CreatedAt: promoted}
	}
	if err := db.ImportBeliefs(ctx, []belief.Belief{mk("bl_00000000000a"), mk("bl_00000000000b"), mk("bl_00000000000c")}); err != nil {
		t.Fatal(err)
	}
	err = db.ApplyPromotion(ctx, MemoryFile{}, []PromotionChange{
		{ID: "bl_00000000000a", Op: OpPromote, Target: "/m/MEMORY.md", Confidence: 0.8},
		{ID: "bl_00000000000b", Op: OpPromote, Target: "/m/MEMORY.md", Confidence: 0.8},
	}, promoted)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.ApplyPromotion(ctx, MemoryFile{}, []PromotionChange{{ID: "bl_00000000000b", Op: OpDemote, From: "/m/MEMORY.md"}}, promoted); err != nil {
		t.Fatal(err)
	}
	// Back to the schema before the migration that added the review
	// tables (and the ones after it).
	const review = 8 // 0008_review.sql
	for _, q := range []string{"DROP TABLE belief_levels", "DROP TABLE review_decisions", "DROP TABLE core_files",
		"DROP TABLE quarantine", "DROP TABLE boxes", "DROP TABLE box_members",
		"ALTER TABLE belief_links DROP COLUMN confidence", "ALTER TABLE belief_links DROP COLUMN reinforced_confidence",
		"ALTER TABLE belief_links DROP COLUMN reinforced_at",
		fmt.Sprintf("DELETE FROM schema_migrations WHERE version >= %d", review), fmt.Sprintf("PRAGMA user_version = %d", review-1)} {
		if _, err := db.sql.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	db, err = Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	levels, err := db.LevelRecords(ctx)
	if err != nil || len(levels) != 1 || levels[0].BeliefID != "bl_00000000000a" || levels[0].Level != LevelLongTerm ||
		!levels[0].Since.Equal(promoted) {
		t.Fatalf("levels after the migration: %+v %v", levels, err)
	}
	ds, err := db.Decisions(ctx, "bl_00000000000a")
	if err != nil || len(ds) != 1 || ds[0].Who != "gates" || ds[0].After != LevelLongTerm {
		t.Fatalf("decisions: %+v %v", ds, err)
	}
}

// TestDecisionsAreHistory: every review decision is also a row of the
// belief's history, in the decision's transaction, with the levels before
// and after and, for an edit, the statement it replaced.
func TestDecisionsAreHistory(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	defer db.Close()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	b := belief.Belief{ID: "bl_0000000000d1", Statement: "User prefers tabs.", Timeframe: belief.TimeCurrent, Alpha: 4, Beta: 1,
		Scope: "global", Status: belief.StatusActive, EvidenceCount: 3, CreatedAt: at}
	if err := db.ImportBeliefs(ctx, []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	steps := []Decision{
		{BeliefID: b.ID, Decision: "edit", Who: "user", At: at, Before: LevelPending, After: LevelPending, Statement: "User indents with tabs."},
		{BeliefID: b.ID, Decision: "approve", Who: "user", At: at.Add(time.Minute), Before: LevelPending, After: LevelLongTerm},
		{BeliefID: b.ID, Decision: "core", Who: "gates", At: at.Add(2 * time.Minute), Before: LevelLongTerm, After: LevelCore},
		{BeliefID: b.ID, Decision: "pin", Who: "model", At: at.Add(3 * time.Minute), Before: LevelCore, After: LevelPinned},
	}
	for _, d := range steps {
		if err := db.Decide(ctx, []Decision{d}); err != nil {
			t.Fatal(err)
		}
	}
	// A decision refused (the level changed meanwhile) leaves no row.
	if err := db.Decide(ctx, []Decision{{BeliefID: b.ID, Decision: "deny", Who: "user", At: at.Add(4 * time.Minute),
		Before: LevelPending, After: LevelDenied}}); err == nil {
		t.Fatal("a decision against a stale level was taken")
	}
	evs, err := db.History(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ action, before, after, cause string }{
		{ActionEdited, LevelPending, LevelPending, "review by user"},
		{ActionApproved, LevelPending, LevelLongTerm, "review by user"},
		{ActionPromoted, LevelLongTerm, LevelCore, "review by gates"},
		{ActionPinned, LevelCore, LevelPinned, "review by model"},
	}
	if len(evs) != len(want) {
		t.Fatalf("history has %d rows, want %d: %+v", len(evs), len(want), evs)
	}
	for i, w := range want {
		ev := evs[i]
		if ev.Action != w.action || ev.Before["level"] != w.before || ev.After["level"] != w.after || ev.Cause != w.cause {
			t.Errorf("row %d: %s %v -> %v by %q; want %s %s -> %s by %q", i, ev.Action, ev.Before["level"], ev.After["level"],
				ev.Cause, w.action, w.before, w.after, w.cause)
		}
	}
	if evs[0].Before["statement"] != "User prefers tabs." || evs[0].After["statement"] != "User indents with tabs." {
		t.Errorf("the edit's row: before %v after %v", evs[0].Before, evs[0].After)
	}
}
