package worker

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// TestCycleDecaysLinks: a cycle decays the links nothing observed again
// for long, before it writes the graph file, which carries the decayed
// confidence; a second cycle has nothing more to decay.
func TestCycleDecaysLinks(t *testing.T) {
	cfg := testConfig(t)
	cfg.SentenceEmbedder = false
	ctx := context.Background()
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	at := now.Add(-48 * time.Hour)
	var bs []belief.Belief
	for i, s := range []string{"User prefers pytest fixtures.", "User prefers pytest markers."} {
		bs = append(bs, belief.Belief{ID: fmt.Sprintf("bl_0000000f000%d", i+1), Statement: s, Subject: "pytest", Scope: episode.ScopeGlobal,
			Alpha: 9, Beta: 1, Status: belief.StatusActive, EvidenceCount: 8, Stability: 1, PeakConfidence: 0.9,
			CreatedAt: at, UpdatedAt: at, LastReinforcedAt: at})
	}
	// Made and last observed 400 days ago: 310 days past the grace, four
	// windows begun.
	made := now.Add(-400 * 24 * time.Hour)
	if err := db.ImportAll(ctx, nil, bs, nil, []store.Link{{From: bs[0].ID, To: bs[1].ID, Similarity: 0.6, At: made, State: edge.New(made)}}); err != nil {
		t.Fatal(err)
	}
	comp, err := NewComponents(ctx, cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	st, err := Cycle(ctx, cfg, db, comp, discard())
	if err != nil {
		t.Fatal(err)
	}
	want := 1 - 4*edge.PerWindow
	ls, _ := db.Links(ctx, bs[0].ID)
	if st.LinksDecayed != 1 || len(ls) != 1 || ls[0].Confidence != want {
		t.Fatalf("after a cycle: %d decayed, links %+v; want one at %v", st.LinksDecayed, ls, want)
	}
	graph, err := os.ReadFile(recall.GraphPath(cfg.Home))
	if err != nil {
		t.Fatal(err)
	}
	if line := fmt.Sprintf("E\t%s\t%s\t%g\t", bs[0].ID, bs[1].ID, want); !strings.Contains(string(graph), line) {
		t.Fatalf("graph file without %q:\n%s", line, graph)
	}
	if st, err := Cycle(ctx, cfg, db, comp, discard()); err != nil || st.LinksDecayed != 0 {
		t.Fatalf("second cycle: %d decayed, %v", st.LinksDecayed, err)
	}
}
