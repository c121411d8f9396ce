package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// An event commits with the change it records, or not at all.
func TestEventCommitsWithItsChange(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	at := time.UnixMilli(1_800_000_000_000)
	b := belief.Belief{ID: "bl_00000000000b", Statement: "User prefers tabs.", Alpha: 4, Beta: 1, Scope: "global",
		Status: belief.StatusActive, Timeframe: belief.TimeCurrent, CreatedAt: at}
	boom := errors.New("boom")
	err := db.Beliefs(ctx, func(t *BeliefTx) error {
		if err := t.Insert(&b); err != nil {
			return err
		}
		if err := t.RecordEvent(Event{At: at, MemoryID: b.ID, Action: ActionFormed, Cause: "test"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if evs, err := db.History(ctx, b.ID); err != nil || len(evs) != 0 {
		t.Fatalf("a rolled-back change left events: %+v %v", evs, err)
	}
	err = db.Beliefs(ctx, func(t *BeliefTx) error {
		if err := t.Insert(&b); err != nil {
			return err
		}
		return t.RecordEvent(Event{At: at, MemoryID: b.ID, Action: ActionFormed, Cause: "test",
			After: map[string]any{"statement": b.Statement, "confidence": 0.8}})
	})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := db.History(ctx, b.ID)
	if err != nil || len(evs) != 1 || !evs[0].At.Equal(at) || evs[0].After["statement"] != b.Statement ||
		evs[0].After["confidence"] != 0.8 || evs[0].Before != nil {
		t.Fatalf("history: %+v %v", evs, err)
	}
	// A bad event fails its transaction: the change does not commit alone.
	b2 := b
	b2.ID = "bl_00000000000c"
	for _, bad := range []Event{
		{At: at, MemoryID: b2.ID, Action: "renamed"},
		{At: at, MemoryID: "bl_../../x", Action: ActionEdited},
		{MemoryID: b2.ID, Action: ActionEdited},
	} {
		err := db.Beliefs(ctx, func(t *BeliefTx) error {
			if err := t.Insert(&b2); err != nil {
				return err
			}
			return t.RecordEvent(bad)
		})
		if err == nil {
			t.Fatalf("event %+v accepted", bad)
		}
		if _, err := db.GetBelief(ctx, b2.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("the change committed without its event %+v: %v", bad, err)
		}
	}
}

// Ingest records each episode's forming and each merge into it, with the
// capture that caused it.
func TestIngestRecordsEpisodeHistory(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	sess := Session{ID: "s1", TranscriptPath: "/t/s1.jsonl", CWD: "/p", Offset: 100}
	if _, err := db.CommitCaptures(ctx, CaptureCommit{Session: sess, Captures: []Capture{capt(0, 50, "a"), capt(50, 100, "b")}}); err != nil {
		t.Fatal(err)
	}
	pend, err := db.PendingCaptures(ctx, 10)
	if err != nil || len(pend) != 2 {
		t.Fatalf("pending %d %v", len(pend), err)
	}
	now := time.Now()
	e := &episode.Episode{ID: "ep_0000000000e1", Summary: "s", Type: episode.TypeFact, Scope: episode.ScopeGlobal,
		ContentHash: "h1", Importance: 0.4, SessionID: "s1", CreatedAt: now}
	dup := *e
	dup.ID, dup.Importance, dup.SessionID = "ep_0000000000e2", 0.7, "s2"
	if _, err := db.CommitOutcomes(ctx, []Outcome{{CaptureID: pend[0].ID, Episode: e}, {CaptureID: pend[1].ID, Episode: &dup}}); err != nil {
		t.Fatal(err)
	}
	evs, err := db.History(ctx, e.ID)
	if err != nil || len(evs) != 2 {
		t.Fatalf("history: %+v %v", evs, err)
	}
	if evs[0].Action != ActionFormed || evs[0].After["type"] != episode.TypeFact || evs[0].After["importance"] != 0.4 ||
		!strings.HasPrefix(evs[0].Cause, "capture ") {
		t.Fatalf("formed: %+v", evs[0])
	}
	if evs[1].Action != ActionMerged || evs[1].Before["importance"] != 0.4 || evs[1].After["importance"] != 0.7 ||
		evs[1].Before["sessions"] != float64(1) || evs[1].After["sessions"] != float64(2) {
		t.Fatalf("merged: %+v", evs[1])
	}
	if evs, _ := db.History(ctx, dup.ID); len(evs) != 0 {
		t.Fatalf("the duplicate, never stored, has a history: %+v", evs)
	}
}

// Forget replaces a memory's history by one 'forgotten' event with no
// values; after Scrub none of its words is in the database files, though
// its history held them.
func TestForgetLeavesNoHistory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := mustOpen(t, path)
	fillStore(t, db, 50)
	secret := "Quillwort"
	at := time.Now()
	b := belief.Belief{ID: "bl_0000000c0ffe", Statement: "User deploys to " + secret + ".", Alpha: 4, Beta: 1, Scope: "global",
		Status: belief.StatusActive, Timeframe: belief.TimeCurrent, CreatedAt: at}
	other := belief.Belief{ID: "bl_0000000000aa", Statement: "User prefers tabs.", Alpha: 4, Beta: 1, Scope: "global",
		Status: belief.StatusActive, Timeframe: belief.TimeCurrent, CreatedAt: at}
	err := db.Beliefs(ctx, func(t *BeliefTx) error {
		for _, x := range []*belief.Belief{&b, &other} {
			if err := t.Insert(x); err != nil {
				return err
			}
			if err := t.RecordEvent(Event{At: at, MemoryID: x.ID, Action: ActionFormed, After: map[string]any{"statement": x.Statement}}); err != nil {
				return err
			}
		}
		return t.RecordEvent(Event{At: at, MemoryID: b.ID, Action: ActionRevised, Detail: "test",
			Before: map[string]any{"statement": b.Statement}, After: map[string]any{"statement": secret + " again"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	found := func() bool {
		names, _ := filepath.Glob(path + "*")
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(secret)) {
				return true
			}
		}
		return false
	}
	if !found() {
		t.Fatal("the word is in no database file before forget: the check cannot fail")
	}
	if err := db.Forget(ctx, nil, []string{b.ID}); err != nil {
		t.Fatal(err)
	}
	if err := db.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if found() {
		t.Error("after Forget and Scrub the word is still in the database files")
	}
	evs, err := db.History(ctx, b.ID)
	if err != nil || len(evs) != 1 || evs[0].Action != ActionForgotten || evs[0].Cause != "forget" || evs[0].Before != nil || evs[0].After != nil {
		t.Fatalf("history of the forgotten belief: %+v %v", evs, err)
	}
	if evs, _ := db.History(ctx, other.ID); len(evs) != 1 || evs[0].After["statement"] != other.Statement {
		t.Fatalf("another belief's history changed: %+v", evs)
	}
}
