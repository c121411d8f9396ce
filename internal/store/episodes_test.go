package store

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

func addCaptures(t *testing.T, db *DB, session string, n int) []Capture {
	t.Helper()
	var caps []Capture
	for i := 0; i < n; i++ {
		caps = append(caps, capt(int64(i*10), int64(i*10+10), session+string(rune('a'+i))))
	}
	if _, err := db.CommitCaptures(context.Background(), CaptureCommit{Session: Session{ID: session, TranscriptPath: "/t", Offset: int64(n * 10)}, Captures: caps}); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Captures(context.Background(), session)
	return got
}

func ep(id, hash string) *episode.Episode {
	return &episode.Episode{ID: id, Summary: "summary " + id, Context: "context " + id, Entities: []string{"a.go"},
		Importance: 0.4, Type: episode.TypeEvent, Scope: episode.ScopeProject, ProjectPath: "/p", SessionID: "s1",
		ContentHash: hash, Embedding: []float32{0.6, 0.8}, Embedder: "test", Extractor: "local",
		Signals:    []episode.Signal{{Kind: episode.SignalPreference, Subject: "go", Polarity: 1}},
		OccurredAt: time.UnixMilli(5000), CreatedAt: time.UnixMilli(6000), UpdatedAt: time.UnixMilli(6000)}
}

func TestCommitOutcomes(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	caps := addCaptures(t, db, "s1", 5)
	res, err := db.CommitOutcomes(ctx, []Outcome{
		{CaptureID: caps[0].ID, Episode: ep("ep_000000000001", "h1")},
		{CaptureID: caps[1].ID, Episode: ep("ep_000000000002", "h1")}, // same content: merged
		{CaptureID: caps[2].ID, MergeInto: "ep_000000000001", Merge: &EpisodeMerge{SessionID: "s2", Context: "late tail", Entities: []string{"b.go"}, Importance: 0.9}},
		{CaptureID: caps[3].ID, Skip: "trivial"},
		{CaptureID: caps[4].ID, Fail: "boom"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 1 || res.Merged != 2 || res.Skipped != 1 || res.Failed != 0 {
		t.Errorf("result=%+v", res)
	}
	got, err := db.GetEpisode(ctx, "ep_000000000001")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.SessionIDs, []string{"s1", "s2"}) || !reflect.DeepEqual(got.Entities, []string{"a.go", "b.go"}) ||
		got.Importance != 0.9 || got.Context != "context ep_000000000001\n\nlate tail" {
		t.Errorf("merged episode=%+v", got)
	}
	if !reflect.DeepEqual(got.Embedding, []float32{0.6, 0.8}) || got.Signals[0].Subject != "go" || got.OccurredAt.UnixMilli() != 5000 {
		t.Errorf("episode fields lost: %+v", got)
	}
	if _, err := db.GetEpisode(ctx, "ep_000000000002"); !errors.Is(err, ErrNotFound) {
		t.Errorf("duplicate stored: %v", err)
	}
	all, _ := db.Captures(ctx, "s1")
	want := []string{CaptureDone, CaptureDone, CaptureDone, CaptureSkipped, CapturePending}
	for i, c := range all {
		if c.Status != want[i] {
			t.Errorf("capture %d status=%s want %s", i, c.Status, want[i])
		}
	}
	if all[1].EpisodeID != "ep_000000000001" || all[4].Attempts != 1 {
		t.Errorf("captures=%+v", all)
	}
	// A second run over the same captures changes nothing (they are no longer pending).
	res, err = db.CommitOutcomes(ctx, []Outcome{{CaptureID: caps[0].ID, Episode: ep("ep_000000000003", "h3")}})
	if err != nil || res.Stale != 1 || res.Inserted != 0 {
		t.Errorf("rerun=%+v err=%v", res, err)
	}
	// Failing past MaxAttempts marks the capture failed.
	for i := 0; i < MaxAttempts; i++ {
		db.CommitOutcomes(ctx, []Outcome{{CaptureID: caps[4].ID, Fail: "boom"}})
	}
	all, _ = db.Captures(ctx, "s1")
	if all[4].Status != CaptureFailed {
		t.Errorf("status after %d failures=%s", MaxAttempts+1, all[4].Status)
	}
	prev, _ := db.PreviousEpisode(ctx, "s1", caps[3].ByteStart)
	if prev != "ep_000000000001" {
		t.Errorf("PreviousEpisode=%q", prev)
	}
	rows, _ := db.EpisodeVectors(ctx, "test")
	if len(rows) != 1 || rows[0].ID != "ep_000000000001" {
		t.Errorf("vectors=%+v", rows)
	}
}

func TestEpisodeFTSInSync(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	e := ep("ep_00000000000a", "ha")
	e.Summary = "deploy billing with flyctl"
	if err := db.ImportEpisodes(ctx, []episode.Episode{*e}); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int {
		var n int
		db.sql.QueryRow("SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?", q).Scan(&n)
		return n
	}
	if count("flyctl") != 1 || count("deploying") != 1 { // porter stemming
		t.Fatalf("fts after insert: %d %d", count("flyctl"), count("deploying"))
	}
	if err := db.DeleteEpisode(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if count("flyctl") != 0 {
		t.Error("fts still finds a deleted episode")
	}
	if err := db.DeleteEpisode(ctx, e.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete err=%v", err)
	}
	// FTS5's own check compares the index with the content table.
	if _, err := db.sql.Exec("INSERT INTO episodes_fts(episodes_fts, rank) VALUES('integrity-check', 1)"); err != nil {
		t.Errorf("fts integrity: %v", err)
	}
}

func TestVectorBlob(t *testing.T) {
	if vectorBlob(nil) != nil {
		t.Error("an empty vector is not stored as NULL")
	}
	v := []float32{0, 1.5, -2.25, 3.4028235e38}
	got, err := embed.Decode(vectorBlob(v).([]byte))
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Errorf("round trip=%v,%v", got, err)
	}
}
