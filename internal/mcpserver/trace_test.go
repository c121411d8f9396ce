package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/thread"
)

// TestTraceTool: memory_trace lists this project's threads and shows one
// by topic or id; another project's thread is not shown, by topic or by
// id.
func TestTraceTool(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	if _, err := thread.Build(ctx, f.db, f.cfg.Home, testNow); err != nil {
		t.Fatal(err)
	}
	list := mustCall(t, f.cs, ToolTrace, nil)
	alpha, err := f.db.BoxOf(ctx, epAlpha)
	if err != nil || alpha == "" {
		t.Fatalf("alpha's episode is in no box: %q %v", alpha, err)
	}
	box, _ := f.db.GetBox(ctx, alpha)
	if !strings.Contains(list, box.TraceID) || strings.Count(list, "tr_") != 1 {
		t.Fatalf("list: want alpha's one thread:\n%s", list)
	}
	text := mustCall(t, f.cs, ToolTrace, map[string]any{"topic": "invoices postgres"})
	if !strings.Contains(text, epAlpha) || strings.Contains(text, epBeta) {
		t.Fatalf("by topic: want alpha's episode only:\n%s", text)
	}
	beta, _ := f.db.BoxOf(ctx, epBeta)
	if text, isErr := call(t, f.cs, ToolTrace, map[string]any{"topic": beta}); !isErr || strings.Contains(text, epBeta) {
		t.Fatalf("another project's box by id: want a tool error, got %v %s", isErr, text)
	}
	if text, isErr := call(t, f.cs, ToolTrace, map[string]any{"topic": "dynamodb"}); !isErr || strings.Contains(text, epBeta) {
		t.Fatalf("another project's topic: want a tool error, got %v %s", isErr, text)
	}
}
