package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

func TestMatchingMemories(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.Now()
	ep := func(id, summary, context string) episode.Episode {
		return episode.Episode{ID: id, Summary: summary, Context: context, Type: "fact", Scope: episode.ScopeGlobal,
			ContentHash: id, Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	bl := func(id, statement string) belief.Belief {
		return belief.Belief{ID: id, Statement: statement, Timeframe: "current", Alpha: 2, Beta: 1, Scope: "global",
			Status: "active", Stability: 1, CreatedAt: now, UpdatedAt: now}
	}
	err := db.Import(ctx, []episode.Episode{
		ep("ep_000000000001", "Invoices move to the Acme Corp cluster", "User: move invoices to the Acme Corp cluster"),
		ep("ep_000000000002", "The staging cache", "User: the cache is on acmecorp.example now"),             // the text inside a word
		ep("ep_000000000003", "Deploys go out on Tuesdays", "User: ACME\nCORP's deploys go out on Tuesdays"), // words across a line break
		ep("ep_000000000004", "Releases are cut on Fridays", "User: releases are cut on Fridays"),
	}, []belief.Belief{
		bl("bl_000000000001", "User keeps invoices at Acme Corp."),
		bl("bl_000000000002", "User prefers tabs."),
		bl("bl_000000000003", "An archived belief about acme corp"),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text     string
		eps, bls []string
	}{
		{"Acme Corp", []string{"ep_000000000003", "ep_000000000001"}, []string{"bl_000000000003", "bl_000000000001"}},
		{"acmecorp", []string{"ep_000000000002"}, nil},
		{"deploy", []string{"ep_000000000003"}, nil}, // a word ending aside
		{"50%_off", nil, nil}, // LIKE's wildcards are the text's own
		{`"quoted`, nil, nil}, // a quote cannot break the phrase
		{"!!!", nil, nil},     // no word at all
		{"tabs.", nil, []string{"bl_000000000002"}},
	}
	for _, tt := range tests {
		eps, bls, err := db.MatchingMemories(ctx, tt.text)
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		if !slices.Equal(eps, tt.eps) || !slices.Equal(bls, tt.bls) {
			t.Errorf("%q: episodes %v beliefs %v, want %v %v", tt.text, eps, bls, tt.eps, tt.bls)
		}
	}
	if _, _, err := db.MatchingMemories(ctx, "  "); err == nil {
		t.Error("a blank text matched")
	}
}
