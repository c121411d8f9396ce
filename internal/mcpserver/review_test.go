package mcpserver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

func TestReview(t *testing.T) {
	cfg := newConfig(t)
	cfg.Review, cfg.CoreTarget = "all", "claude"
	db, err := store.Open(context.Background(), cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	seed(t, db, cfg.Home)
	_, cs := start(t, cfg, Options{Project: projAlpha, Now: func() time.Time { return testNow }})

	text := mustCall(t, cs, ToolReview, map[string]any{"action": "list"})
	for _, want := range []string{"2 beliefs wait for review", "- " + blGlobal + ": The user prefers Postgres for billing data (pending -> long-term; confidence 0.86, evidence 5, global)", blBeta} {
		if !strings.Contains(text, want) {
			t.Errorf("list lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, blArchived) {
		t.Errorf("an archived belief waits:\n%s", text)
	}
	text = mustCall(t, cs, ToolReview, map[string]any{"action": "approve", "ids": []string{blGlobal}})
	if !strings.Contains(text, blGlobal+": approve, pending -> long-term") {
		t.Fatalf("approve: %s", text)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"action": "approve", "ids": []string{blGlobal}}, "already long-term"},
		{map[string]any{"action": "deny", "ids": []string{blBeta, "bl_000000000fff"}}, `"bl_000000000fff": no such belief; nothing was decided`},
		{map[string]any{"action": "deny"}, "deny wants 1 to 20 belief IDs"},
		{map[string]any{"action": "list", "ids": []string{blBeta}}, "list takes no ids"},
	} {
		text, isErr := call(t, cs, ToolReview, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%v: %v %q, want an error with %q", tc.args, isErr, text, tc.want)
		}
	}
	if b, _ := db.ReviewBelief(context.Background(), blBeta); b.Level != store.LevelPending {
		t.Fatalf("a refused call decided: %s is %s", blBeta, b.Level)
	}
	mustCall(t, cs, ToolReview, map[string]any{"action": "deny", "ids": []string{blBeta}})
	ds, err := db.Decisions(context.Background(), blBeta)
	if err != nil || len(ds) != 1 || ds[0].Who != "model" || ds[0].After != store.LevelDenied || !ds[0].At.Equal(testNow) {
		t.Fatalf("decisions %+v %v", ds, err)
	}
	if text := mustCall(t, cs, ToolReview, map[string]any{"action": "list"}); !strings.Contains(text, "Nothing waits for review.") {
		t.Fatalf("list after deciding: %s", text)
	}
	// Pinned for AGENTS.md, a global belief goes to the global CLAUDE.md:
	// the answer says so.
	text = mustCall(t, cs, ToolReview, map[string]any{"action": "pin", "ids": []string{blGlobal}, "target": "agents"})
	want := blGlobal + ": pin, long-term -> pinned (a global belief has no AGENTS.md to go to: it goes to " +
		filepath.Join(cfg.ClaudeConfigDir, "CLAUDE.md") + " instead)"
	if !strings.Contains(text, want) {
		t.Fatalf("pin with target agents: %s\nwant %s", text, want)
	}
}
