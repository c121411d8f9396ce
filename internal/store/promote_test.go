package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

func TestPromotionState(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.UnixMilli(time.Now().UnixMilli())
	mk := func(id string, alpha, beta float64, evidence int, status string) belief.Belief {
		return belief.Belief{ID: id, Statement: "statement " + id, Timeframe: belief.TimeCurrent, Alpha: alpha, Beta: beta,
			Scope: episode.ScopeGlobal, Status: status, EvidenceCount: evidence, CreatedAt: now}
	}
	err := db.ImportBeliefs(ctx, []belief.Belief{
		mk("bl_000000000001", 9, 1, 5, belief.StatusActive),   // eligible
		mk("bl_000000000002", 6, 4, 5, belief.StatusActive),   // confidence 0.6
		mk("bl_000000000003", 9, 1, 2, belief.StatusActive),   // too little evidence
		mk("bl_000000000004", 9, 1, 5, belief.StatusArchived), // not active
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := func() []string {
		rows, err := db.PromotionCandidates(ctx, 0.7, 3)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(); len(got) != 1 || got[0] != "bl_000000000001" {
		t.Fatalf("candidates %v, want only the eligible belief", got)
	}
	file := MemoryFile{Path: "/x/MEMORY.md", Kind: "global"}
	err = db.ApplyPromotion(ctx, file, []PromotionChange{
		{ID: "bl_000000000001", Op: OpPromote, Target: file.Path, Confidence: 0.9},
		{ID: "bl_000000000004", Op: OpPromote, Target: file.Path, Confidence: 0.9},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	// Shown beliefs stay candidates whatever their confidence or status.
	if got := ids(); len(got) != 2 {
		t.Fatalf("candidates %v, want the two shown beliefs", got)
	}
	rows, _ := db.PromotionCandidates(ctx, 0.7, 3)
	if r := rows[0]; !r.Shown() || r.PromotedTo != file.Path || r.PromotedConfidence != 0.9 || !r.PromotedAt.Equal(now) {
		t.Errorf("after promotion %+v", r)
	}
	// Changes expecting another file are compare-and-set failures: nothing
	// happens.
	later := now.Add(time.Hour)
	if err := db.ApplyPromotion(ctx, MemoryFile{}, []PromotionChange{
		{ID: "bl_000000000001", Op: OpRemove, From: "/other/MEMORY.md"},
		{ID: "bl_000000000004", Op: OpDemote, From: "/other/MEMORY.md"},
	}, later); err != nil {
		t.Fatal(err)
	}
	b, _ := db.GetBelief(ctx, "bl_000000000001")
	d, _ := db.GetBelief(ctx, "bl_000000000004")
	if b.PromotedAt.IsZero() || !d.DemotedAt.IsZero() {
		t.Errorf("a change for another file applied: promoted_at=%v demoted_at=%v", b.PromotedAt, d.DemotedAt)
	}
	if err := db.ApplyPromotion(ctx, MemoryFile{}, []PromotionChange{
		{ID: "bl_000000000001", Op: OpKeep, From: file.Path, Confidence: 0.95},
		{ID: "bl_000000000004", Op: OpDemote, From: file.Path},
	}, later); err != nil {
		t.Fatal(err)
	}
	rows, _ = db.PromotionCandidates(ctx, 0.7, 3)
	if rows[0].PromotedConfidence != 0.95 || !rows[1].DemotedAt.Equal(later) || rows[1].PromotedConfidence != 0.9 {
		t.Errorf("after keep and demote: %+v / %+v", rows[0], rows[1])
	}
	if err := db.ApplyPromotion(ctx, MemoryFile{}, []PromotionChange{{ID: "bl_000000000004", Op: OpRemove, From: file.Path}}, later); err != nil {
		t.Fatal(err)
	}
	if got := ids(); len(got) != 1 {
		t.Errorf("after removal candidates %v", got)
	}
	files, err := db.MemoryFiles(ctx)
	if err != nil || len(files) != 1 || files[0] != (MemoryFile{Path: file.Path, Kind: "global", WrittenAt: now}) {
		t.Errorf("memory files %+v %v", files, err)
	}
}

func TestGraduationAndCompressionQueries(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	old := time.Now().Add(-200 * 24 * time.Hour)
	mk := func(id string, importance float64, scope string) episode.Episode {
		return episode.Episode{ID: id, Summary: "summary " + id, Context: "context " + id, Importance: importance, Type: episode.TypeFact,
			Scope: scope, ContentHash: "h" + id, CreatedAt: old, UpdatedAt: old}
	}
	if err := db.ImportEpisodes(ctx, []episode.Episode{
		mk("ep_000000000001", 0.9, episode.ScopeGlobal),
		mk("ep_000000000002", 0.75, episode.ScopeGlobal),
		mk("ep_000000000003", 0.9, episode.ScopeProject),
		mk("ep_000000000004", 0.2, episode.ScopeGlobal),
	}); err != nil {
		t.Fatal(err)
	}
	g, err := db.GraduationCandidates(ctx, 0.7, 10)
	if err != nil || len(g) != 2 || g[0].ID != "ep_000000000001" || g[1].ID != "ep_000000000002" {
		t.Fatalf("graduation candidates %v %v", g, err)
	}
	if err := db.MarkGraduated(ctx, []string{"ep_000000000001"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if g, _ := db.GraduationCandidates(ctx, 0.7, 10); len(g) != 1 {
		t.Errorf("after graduation %d candidates, want 1", len(g))
	}
	stale, err := db.StaleEpisodes(ctx, time.Now().Add(-90*24*time.Hour), 0.7, 10)
	if err != nil || len(stale) != 1 || stale[0].ID != "ep_000000000004" {
		t.Fatalf("stale %v %v", stale, err)
	}
	stale[0].Summary = "short"
	if n, err := db.CompressEpisodes(ctx, stale); err != nil || n != 1 {
		t.Fatalf("compressed %d %v", n, err)
	}
	e, _ := db.GetEpisode(ctx, "ep_000000000004")
	if !e.Compressed || e.Summary != "short" || e.Context != "" {
		t.Errorf("after compression %+v", e)
	}
	if n, _ := db.CompressEpisodes(ctx, stale); n != 0 {
		t.Errorf("compressed again: %d", n)
	}
}

// TestFirstEvidenceNotSuperseded: a belief's bullet quotes the first of its
// supporting exchanges that was not superseded by a correction.
func TestFirstEvidenceNotSuperseded(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.Now()
	mk := func(id, text string) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: "User: " + text, Type: "fact", Scope: episode.ScopeProject,
			ProjectPath: "/src/web", ContentHash: id, Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	old, cur := "ep_0000000000c1", "ep_0000000000c2"
	err := db.Import(ctx, []episode.Episode{mk(old, "webpack builds the bundle and Netlify serves it"), mk(cur, "Netlify serves the site")},
		[]belief.Belief{{ID: "bl_0000000000d1", Statement: "In project web, host is netlify.", Subject: "host", Alpha: 7, Beta: 1,
			Scope: episode.ScopeProject, ProjectPath: "/src/web", Status: belief.StatusActive, EvidenceCount: 6, Stability: 1,
			Supporting: []string{old, cur}, CreatedAt: now, UpdatedAt: now}})
	if err != nil {
		t.Fatal(err)
	}
	first := func() string {
		rows, err := db.PromotionCandidates(ctx, 0.7, 3)
		if err != nil || len(rows) != 1 {
			t.Fatalf("candidates: %v %+v", err, rows)
		}
		return rows[0].FirstEvidence
	}
	if got := first(); !strings.Contains(got, "webpack") {
		t.Fatalf("before the correction the first evidence is %q", got)
	}
	if _, err := db.EndEpisodes(ctx, []LifecycleChange{{ID: old, State: episode.LifecycleSuperseded, By: cur}}, now); err != nil {
		t.Fatal(err)
	}
	if got := first(); got != "User: Netlify serves the site" {
		t.Fatalf("after the correction the first evidence is %q", got)
	}
}
