package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

// TestRecallExplainShowsLinks: recall --explain says of a belief a link
// brought which belief it is linked from and the link's confidence; the
// JSON says it too.
func TestRecallExplainShowsLinks(t *testing.T) {
	h := newHome(t)
	db := h.db(t)
	now := time.Now()
	mk := func(id, s string) belief.Belief {
		return belief.Belief{ID: id, Statement: s, Timeframe: "current", Alpha: 6, Beta: 1, Scope: "global", Status: "active",
			EvidenceCount: 5, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now}
	}
	parent, linked := "bl_0000000000c1", "bl_0000000000c2"
	err := db.ImportAll(context.Background(), nil, []belief.Belief{
		mk(parent, "The user prefers Postgres for billing data"),
		mk(linked, "Tenants get one schema each"),
	}, nil, []store.Link{{From: parent, To: linked, Similarity: 0.5, At: now,
		State: edge.State{Confidence: 0.87, ReinforcedConfidence: 0.87, ReinforcedAt: now}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recollect.Build(context.Background(), db, h.engram, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := h.run(t, "", "recall", "--explain", "--all-projects", "postgres billing data")
	if code != 0 || !strings.Contains(out, parent) || !strings.Contains(out, "found by the prompt") ||
		!strings.Contains(out, "linked from "+parent+" conf=0.87") {
		t.Fatalf("recall --explain: %d %q %q", code, out, errOut)
	}
	out, _, code = h.run(t, "", "recall", "--json", "--all-projects", "postgres billing data")
	if code != 0 || !strings.Contains(out, `"linked_from": "`+parent+`"`) || !strings.Contains(out, `"edge_confidence": 0.87`) {
		t.Fatalf("recall --json: %d %s", code, out)
	}
}
