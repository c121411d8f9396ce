package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backfill captures every transcript of every project, not the sub-agent
// ones, prints plain progress lines when not on a terminal, and a second
// backfill reads only what is new.
func TestBackfill(t *testing.T) {
	h := newHome(t)
	data, err := os.ReadFile("../../internal/capture/testdata/session-1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile("../../internal/capture/testdata/session-2.jsonl")
	put := func(rel string, b []byte) {
		p := filepath.Join(h.claude, "projects", rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put("-home-dev-proj/1416d527-3104-4a11-a10c-d8902eaf26c2.jsonl", data)
	put("-home-dev-proj/b5175139-1702-4e26-b82a-8217832cf906.jsonl", second)
	put("-home-dev-proj/1416d527-3104-4a11-a10c-d8902eaf26c2/subagents/agent-1.jsonl", data)
	put("-home-dev-proj/agent-77.jsonl", data)
	put("-home-dev-proj/not a session.jsonl", data)

	out, errOut, code := h.run(t, "", "backfill")
	if code != 0 {
		t.Fatalf("backfill exit %d: %s %s", code, out, errOut)
	}
	if !strings.Contains(out, "backfill: 2/2 transcripts (100%)") || !strings.Contains(out, "backfill: 2 transcripts (2 read), 3 captures") ||
		!strings.Contains(out, "ingest: 3/3 captures (100%)") || !strings.Contains(out, "ingest: 3 captures -> ") ||
		!strings.Contains(out, "beliefs: 2/2 episodes (100%)") ||
		!strings.Contains(out, "beliefs: 2 episodes in ") {
		t.Errorf("output:\n%s", out)
	}
	db := h.db(t)
	caps, _ := db.Captures(context.Background(), "")
	if len(caps) != 3 {
		t.Fatalf("captures=%d, want 3", len(caps))
	}
	for _, c := range caps {
		if c.Source != "backfill" || c.ProjectPath != "/home/dev/proj" {
			t.Errorf("capture %d: source %s project %q", c.ID, c.Source, c.ProjectPath)
		}
	}
	// Resumable: nothing new is read again; a grown transcript is read from its offset.
	out, _, _ = h.run(t, "", "backfill")
	if !strings.Contains(out, "2 transcripts (0 read), 0 captures") {
		t.Errorf("second backfill:\n%s", out)
	}
	f, _ := os.OpenFile(filepath.Join(h.claude, "projects", "-home-dev-proj", "b5175139-1702-4e26-b82a-8217832cf906.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(data[:strings.Index(string(data), "\n")+1]) // a queue-operation line: nothing conversational
	f.Close()
	out, _, _ = h.run(t, "", "backfill")
	if !strings.Contains(out, "(1 read), 0 captures") {
		t.Errorf("third backfill:\n%s", out)
	}
	out, _, _ = h.run(t, "", "status", "--json")
	// The second session repeats the first one's health-endpoint turn: it
	// merges into the same episode.
	if !strings.Contains(out, `"episodes": 2`) || !strings.Contains(out, `"extractor": "local"`) {
		t.Errorf("status:\n%s", out)
	}
}
