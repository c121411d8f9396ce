package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/store"
)

func TestCheckID(t *testing.T) {
	for _, id := range []string{"ep_0123456789ab", "bl_0123456789ab", "ep_imported-1", "bl_X"} {
		if err := CheckID(id); err != nil {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", "ep_", "bl_", "x_1", "EP_1", "ep 1", "ep_1/../2", "ep_1\n", "bl_" + strings.Repeat("a", 62)} {
		if err := CheckID(id); !errors.Is(err, ErrBadID) || !strings.Contains(err.Error(), "id ") {
			t.Errorf("CheckID(%q) = %v, want ErrBadID", id, err)
		}
	}
}

func openStore(t *testing.T) (*store.DB, string) {
	t.Helper()
	home := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(home, "memory.db"), store.Options{BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	now := time.Now()
	err = db.Import(context.Background(), []episode.Episode{
		{ID: "ep_000000000001", Summary: "We chose Postgres", Context: "User: we chose Postgres", Type: episode.TypeDecision,
			Scope: episode.ScopeGlobal, ContentHash: "h1", Entities: []string{"postgres"}, SessionIDs: []string{"s1", "s2"},
			Signals:    []episode.Signal{{Kind: episode.SignalDecision, Subject: "postgres", Polarity: 1, Text: "we chose Postgres"}},
			OccurredAt: now, Stability: 1},
		{ID: "ep_000000000002", Summary: "Tests are table-driven", Context: "c", Scope: episode.ScopeGlobal, ContentHash: "h2", OccurredAt: now},
	}, []belief.Belief{{ID: "bl_000000000001", Statement: "The user prefers Postgres", Alpha: 3, Beta: 1, Scope: episode.ScopeGlobal,
		Status: belief.StatusActive, Supporting: []string{"ep_000000000001"}, ParentID: "bl_000000000000", CreatedAt: now, UpdatedAt: now,
		Revisions: []belief.Revision{{Timestamp: now, OldStatement: "The user likes Postgres", OldConfidence: 0.6, Reason: "reworded"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return db, home
}

func TestLoadAndWrite(t *testing.T) {
	db, _ := openStore(t)
	ctx := context.Background()
	c, err := Load(ctx, db, "ep_000000000001")
	if err != nil || c.ID() != "ep_000000000001" || c.Belief != nil {
		t.Fatalf("Load episode: %+v %v", c, err)
	}
	var b strings.Builder
	Write(&b, c)
	for _, want := range []string{"ep_000000000001  decision · ", "summary:   We chose Postgres\n", "entities:  postgres\n",
		`signal:    decision "postgres" (polarity +1) we chose Postgres`, "sessions:  s1, s2\n", "access:    1 times",
		"\n\nUser: we chose Postgres\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("episode card lacks %q:\n%s", want, b.String())
		}
	}
	c, err = Load(ctx, db, "bl_000000000001")
	if err != nil || c.ID() != "bl_000000000001" || c.Episode != nil {
		t.Fatalf("Load belief: %+v %v", c, err)
	}
	b.Reset()
	Write(&b, c)
	for _, want := range []string{"statement:  The user prefers Postgres\n", "confidence: 0.75 (α 3, β 1)", "supporting:    ep_000000000001\n",
		"contradicting: none\n", "parent:        bl_000000000000\n", `: "The user likes Postgres" (was 0.60): reworded`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("belief card lacks %q:\n%s", want, b.String())
		}
	}
	for _, id := range []string{"ep_ffffffffffff", "bl_ffffffffffff"} {
		_, err := Load(ctx, db, id)
		var nf *NotFoundError
		if !errors.As(err, &nf) || !errors.Is(err, store.ErrNotFound) || !strings.HasSuffix(err.Error(), " "+id) {
			t.Errorf("Load(%s) = %v, want a NotFoundError", id, err)
		}
	}
}

// testConfig is a configuration whose every directory is the test's own.
func testConfig(t *testing.T, home string) config.Config {
	return config.Config{Home: home, ClaudeConfigDir: filepath.Join(t.TempDir(), "claude"), Promote: true}
}

func TestForgetAllOrNothing(t *testing.T) {
	db, home := openStore(t)
	ctx := context.Background()
	cfg := testConfig(t, home)
	if _, err := Forget(ctx, db, cfg, []string{"ep_000000000001", "bl_ffffffffffff"}, time.Now(), nil); err == nil ||
		!strings.Contains(err.Error(), "no memory with id bl_ffffffffffff; nothing was forgotten") {
		t.Fatalf("Forget with an unknown id: %v", err)
	}
	if _, err := db.GetEpisode(ctx, "ep_000000000001"); err != nil {
		t.Fatalf("a refused Forget deleted: %v", err)
	}
	// An id named twice is forgotten once, without an error.
	done, err := Forget(ctx, db, cfg, []string{"ep_000000000001", "bl_000000000001", "ep_000000000001"}, time.Now(), nil)
	if err != nil || len(done) != 2 {
		t.Fatalf("Forget: %v %v", done, err)
	}
	if _, err := db.GetBelief(ctx, "bl_000000000001"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("belief still there: %v", err)
	}
	// The recollection files were rewritten without them.
	f, err := recall.Load(recall.GlobalPath(home))
	if err != nil {
		t.Fatalf("recollection file: %v", err)
	}
	for _, it := range f.Items {
		if it.ID == "ep_000000000001" || it.ID == "bl_000000000001" {
			t.Errorf("recollection file still holds %s", it.ID)
		}
	}
	if len(f.Items) != 1 {
		t.Errorf("recollection file holds %d items, want the one left", len(f.Items))
	}
}

// Forget also removes the other copies engram keeps: the captures the
// episode was made from, a session's neighbour file naming it, and spool
// files the store already covers (a spool file not captured yet stays).
func TestForgetRemovesCopies(t *testing.T) {
	db, home := openStore(t)
	ctx := context.Background()
	cfg := testConfig(t, home)
	commit := store.CaptureCommit{Session: store.Session{ID: "s1", TranscriptPath: "/t/s1.jsonl", Offset: 200},
		Captures: []store.Capture{{ByteStart: 0, ByteEnd: 100, TurnAt: time.Now(), Content: "User: we chose Postgres", ContentHash: "c1",
			TranscriptPath: "/t/s1.jsonl", Source: "stop"}, {ByteStart: 100, ByteEnd: 200, TurnAt: time.Now(), Content: "User: lunch",
			ContentHash: "c2", TranscriptPath: "/t/s1.jsonl", Source: "stop"}}}
	if _, err := db.CommitCaptures(ctx, commit); err != nil {
		t.Fatal(err)
	}
	caps, _ := db.Captures(ctx, "s1")
	if _, err := db.CommitOutcomes(ctx, []store.Outcome{{CaptureID: caps[0].ID, MergeInto: "ep_000000000001",
		Merge: &store.EpisodeMerge{SessionID: "s1"}}}); err != nil {
		t.Fatal(err)
	}
	neighbours := recall.SessionPath(home, "s1")
	other := recall.SessionPath(home, "s2")
	os.MkdirAll(recall.Dir(home), 0o700)
	for path, text := range map[string]string{neighbours: "…ep_000000000001…", other: "…ep_000000000009…"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	covered, err := spool.Write(cfg.SpoolDir(), spool.Entry{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", From: 0, End: 200, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	ahead, err := spool.Write(cfg.SpoolDir(), spool.Entry{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", From: 200, End: 300, CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Forget(ctx, db, cfg, []string{"ep_000000000001"}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	caps, _ = db.Captures(ctx, "s1")
	if len(caps) != 1 || caps[0].Content != "User: lunch" {
		t.Errorf("captures after forget: %+v", caps)
	}
	for path, want := range map[string]bool{neighbours: false, other: true, covered: false, ahead: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", path, err == nil, want)
		}
	}
}

func TestRecordAccess(t *testing.T) {
	db, home := openStore(t)
	ctx := context.Background()
	at := time.Now().Truncate(time.Millisecond)
	logged, err := RecordAccess(ctx, db, home, "ep_000000000001", at)
	if err != nil || logged {
		t.Fatalf("RecordAccess: %v %v", logged, err)
	}
	if ep, _ := db.GetEpisode(ctx, "ep_000000000001"); ep.AccessCount != 1 || !ep.LastAccessedAt.Equal(at) {
		t.Errorf("access %d at %v", ep.AccessCount, ep.LastAccessedAt)
	}

	// The store is locked by another writer: the access is logged.
	other, err := store.Open(ctx, db.Path(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	release, err := other.HoldWriteLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	logged, err = RecordAccess(ctx, db, home, "bl_000000000001", at)
	release()
	if err != nil || !logged {
		t.Fatalf("RecordAccess under a lock: %v %v", logged, err)
	}
	data, err := os.ReadFile(recall.AccessLogPath(home))
	if err != nil {
		t.Fatal(err)
	}
	if acc := recall.ParseAccessLog(data); len(acc) != 1 || acc[0].ID != "bl_000000000001" || !acc[0].At.Equal(at) {
		t.Errorf("access log %q", data)
	}
}

// A superseded episode's bites quote the correction that replaced it; once
// that correction is forgotten, no file of the home holds its words, and
// the superseded episode is still recalled under the general label.
func TestForgetTheCorrectionOfASupersededEpisode(t *testing.T) {
	db, home := openStore(t)
	ctx := context.Background()
	cfg := testConfig(t, home)
	now := time.Now()
	mk := func(id, text string, at time.Time) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: "User: " + text + "\n\nAssistant: Noted.", Type: episode.TypeFact,
			Scope: episode.ScopeProject, Project: "agent", ProjectPath: "/src/agent", ContentHash: id, Importance: 0.5,
			OccurredAt: at, CreatedAt: at, UpdatedAt: at}
	}
	old, cur := "ep_0000000000e1", "ep_0000000000e2"
	if err := db.Import(ctx, []episode.Episode{mk(old, "the build hosts use docker, the agent is built with cargo", now.Add(-72*time.Hour)),
		mk(cur, "not docker anymore on the build hosts, it's quokkabuild", now.Add(-time.Hour))}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EndEpisodes(ctx, []store.LifecycleChange{{ID: old, State: episode.LifecycleSuperseded, By: cur}}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := recollect.Build(ctx, db, home, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	label := func() string {
		f, err := recall.Load(recall.ProjectPath(home, "/src/agent"))
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range f.Items {
			if it.ID == old {
				return recall.SupersededLabel(it.Replaced, it.ReplacedAt, now)
			}
		}
		t.Fatalf("the superseded episode is not in the project's recollection file")
		return ""
	}
	if got := label(); !strings.Contains(got, `by "not docker anymore on the build hosts, it's quokkabuild"`) {
		t.Fatalf("before the forget the label is %q", got)
	}
	if n := filesHolding(t, home, "quokkabuild"); n == 0 {
		t.Fatal("no file of the home holds the correction before the forget: the check below proves nothing")
	}
	if _, err := Forget(ctx, db, cfg, []string{cur}, now, nil); err != nil {
		t.Fatal(err)
	}
	if got := label(); got != "superseded by a later correction" {
		t.Errorf("after the forget the label is %q", got)
	}
	if n := filesHolding(t, home, "quokkabuild"); n != 0 {
		t.Errorf("%d files of the home still hold the forgotten correction's words", n)
	}
}

// filesHolding counts the files under dir whose bytes hold s.
func filesHolding(t *testing.T, dir, s string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), s) {
			t.Logf("%s holds %q", path, s)
			n++
		}
		return nil
	})
	return n
}
