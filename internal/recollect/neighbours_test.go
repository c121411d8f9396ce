package recollect

import (
	"context"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

func TestBuildNeighbours(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	local := embed.NewLocal()
	mk := func(id, summary, scope, project string) episode.Episode {
		return episode.Episode{ID: id, Summary: summary, Context: summary, Type: "event", Scope: scope, ProjectPath: project,
			ContentHash: id, Embedding: local.EmbedText(summary), Embedder: local.Name(), OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	if err := db.Import(ctx, []episode.Episode{
		mk("ep_000000000002", "retry the stripe webhook delivery with exponential backoff", "project", "/src/billing"),
		mk("ep_000000000003", "stripe webhook signature verification fails after key rotation", "project", "/src/other"),
		mk("ep_000000000004", "paint the landing page hero in teal", "project", "/src/billing"),
	}, nil); err != nil {
		t.Fatal(err)
	}
	// The session's latest exchange, ingested as ep_…01.
	if _, err := db.CommitCaptures(ctx, store.CaptureCommit{Session: store.Session{ID: "sess-1", TranscriptPath: "/t/sess-1.jsonl",
		ProjectPath: "/src/billing", Offset: 10, LastActivity: now},
		Captures: []store.Capture{{ByteStart: 0, ByteEnd: 10, TurnAt: now, Content: "x", ContentHash: "x", TranscriptPath: "/t/sess-1.jsonl", ProjectPath: "/src/billing"}}}); err != nil {
		t.Fatal(err)
	}
	caps, _ := db.Captures(ctx, "sess-1")
	anchor := mk("ep_000000000001", "stripe webhook deliveries time out and need retries", "project", "/src/billing")
	if _, err := db.CommitOutcomes(ctx, []store.Outcome{{CaptureID: caps[0].ID, Episode: &anchor}}); err != nil {
		t.Fatal(err)
	}
	n, err := BuildNeighbours(ctx, db, home, local.Name(), now.Add(-time.Hour), now)
	if err != nil || n != 1 {
		t.Fatalf("BuildNeighbours n=%d err=%v", n, err)
	}
	f, err := recall.Load(recall.SessionPath(home, "sess-1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Items) == 0 || f.Items[0].ID != "ep_000000000002" || f.Scope != "session" {
		t.Fatalf("neighbours: %+v", f.Items)
	}
	for _, it := range f.Items {
		if it.ID == "ep_000000000003" || it.ID == "ep_000000000001" {
			t.Errorf("neighbour %s: another project's or the anchor itself", it.ID)
		}
	}
	// The hook sees them as neighbours, still gated by the prompt.
	res := recall.New(home, nil).Recall(ctx, recall.Query{Text: "how do we retry webhook deliveries?", ProjectPath: "/src/billing", SessionID: "sess-1", Now: now})
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000002" || !res.Episodes[0].Neighbor {
		t.Errorf("recall with neighbours: %+v", ids(res.Episodes))
	}
}
