package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// fillStore adds n episodes with a few hundred bytes of context each, each
// made from one capture, and returns their ids.
func fillStore(tb testing.TB, db *DB, n int) []string {
	tb.Helper()
	ctx := context.Background()
	now := time.Now()
	var eps []episode.Episode
	words := strings.Fields("invoice tenant schema migration cache router deploy queue worker retry timeout token session")
	ids := make([]string, n)
	for i := range n {
		var b strings.Builder
		for j := range 40 {
			b.WriteString(words[(i*7+j)%len(words)] + fmt.Sprint(i%97) + " ")
		}
		ids[i] = fmt.Sprintf("ep_%012x", i+1)
		eps = append(eps, episode.Episode{ID: ids[i], Summary: fmt.Sprintf("summary %d", i), Context: b.String(), Type: "event",
			Scope: episode.ScopeGlobal, ContentHash: fmt.Sprint("h", i), Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now})
	}
	if err := db.Import(ctx, eps, nil); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// After Forget and Scrub, a deleted episode's words are in no byte of the
// database files, though they were there before and though the episode's
// text changed several times before (an update leaves the old terms in
// older FTS5 segments and the old row in the page's free space).
func TestForgetAndScrubLeaveNoBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := mustOpen(t, path)
	fillStore(t, db, 300)
	now := time.Now()
	secret := "Xylocarpine"
	e := episode.Episode{ID: "ep_0000000c0ffe", Summary: "the " + secret + " cluster", Context: "User: move to the " + secret + " cluster",
		Type: "event", Scope: episode.ScopeGlobal, ContentHash: "secret", Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	if err := db.Import(ctx, []episode.Episode{e}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // merges append to the context: each is an update
		if _, err := db.sql.ExecContext(ctx, "UPDATE episodes SET context = context || ? WHERE id = ?",
			fmt.Sprintf("\n\nAssistant: %s note %d", secret, i), e.ID); err != nil {
			t.Fatal(err)
		}
	}
	found := func() []string {
		var hits []string
		names, _ := filepath.Glob(path + "*")
		for _, name := range names {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(bytes.ToLower(data), bytes.ToLower([]byte(secret))) {
				hits = append(hits, filepath.Base(name))
			}
		}
		return hits
	}
	if len(found()) == 0 {
		t.Fatal("the word is in no database file before forget: the check cannot fail")
	}
	checkpoint := func() {
		if _, err := db.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint()
	if err := db.Forget(ctx, []string{e.ID}, nil); err != nil {
		t.Fatal(err)
	}
	checkpoint()
	// A delete and a checkpoint are not enough: the bytes stay in the file.
	if hits := found(); len(hits) == 0 {
		t.Error("after the delete and a checkpoint the word is gone already: this test shows nothing about Scrub")
	}
	if err := db.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	if hits := found(); len(hits) > 0 {
		t.Errorf("after Scrub the word is in %v", hits)
	}
	if err := db.Forget(ctx, []string{e.ID}, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("forget twice: %v", err)
	}
	if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
		t.Errorf("quick_check: %q %v", res, err)
	}
	var n int
	db.sql.QueryRowContext(ctx, "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH 'invoice0'").Scan(&n)
	if n == 0 {
		t.Error("the full-text index lost the other episodes")
	}
}

// BenchmarkForget compares what forget costs (Forget and Scrub) with a
// plain delete of one episode, on stores of two sizes: the scrub grows
// with the store.
func BenchmarkForget(b *testing.B) {
	for _, size := range []int{1000, 10000} {
		db := mustOpen(b, filepath.Join(b.TempDir(), "memory.db"))
		ids := fillStore(b, db, size)
		ctx := context.Background()
		next := 0
		b.Run(fmt.Sprintf("delete/%d", size), func(b *testing.B) {
			for b.Loop() {
				if err := db.DeleteEpisode(ctx, ids[next]); err != nil {
					b.Fatal(err)
				}
				next++
			}
		})
		b.Run(fmt.Sprintf("forget+scrub/%d", size), func(b *testing.B) {
			for b.Loop() {
				if err := db.Forget(ctx, []string{ids[next]}, nil); err != nil {
					b.Fatal(err)
				}
				if err := db.Scrub(ctx); err != nil {
					b.Fatal(err)
				}
				next++
			}
		})
	}
}

// TestForgetEvidence: forgetting the episode a belief's revision quoted
// leaves none of its words in the database files (the revision stays, its
// reason without the quote); forgetting a stated belief's only evidence
// retires the belief, with a history row that holds no text; a belief
// with other support keeps it.
func TestForgetEvidence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := mustOpen(t, path)
	fillStore(t, db, 50)
	now := time.Now()
	secret := "Quokkaport"
	mk := func(id, text string) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: "User: " + text, Type: "event", Scope: episode.ScopeGlobal,
			ContentHash: id, Importance: 0.5, OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	only, other, corr := "ep_00000000aaa1", "ep_00000000aaa2", "ep_00000000aaa3"
	b := func(id string, sup []string, revs []belief.Revision, status string) belief.Belief {
		return belief.Belief{ID: id, Statement: "User prefers pnpm.", Subject: "pnpm", Alpha: 4, Beta: 1, Scope: episode.ScopeGlobal,
			Status: status, EvidenceCount: 3, Stability: 1, Supporting: sup, Revisions: revs, CreatedAt: now, UpdatedAt: now}
	}
	worded := func(id, statement string, sup []string, revs []belief.Revision) belief.Belief {
		x := b(id, sup, revs, belief.StatusActive)
		x.Statement, x.Predicate = statement, "prefers"
		return x
	}
	err := db.Import(ctx, []episode.Episode{mk(only, "I always use pnpm"), mk(other, "pnpm again"), mk(corr, "we moved off "+secret+" to Render")},
		[]belief.Belief{
			b("bl_00000000bbb1", []string{only}, nil, belief.StatusActive),
			b("bl_00000000bbb2", []string{only, other}, nil, belief.StatusActive),
			b("bl_00000000bbb3", []string{other}, []belief.Revision{{Timestamp: now, OldStatement: "Deploy target is fly.io.",
				Reason: fmt.Sprintf("corrected by the user in %s: %q", corr, "we moved off "+secret+" to Render")}}, belief.StatusRevised),
			// Beliefs that read in the user's words.
			worded("bl_00000000bbb4", "I always use pnpm.", []string{only}, nil),
			worded("bl_00000000bbb5", "I always use pnpm.", []string{only, other}, nil),
			worded("bl_00000000bbb6", "We moved off "+secret+" to Render.", []string{corr, other},
				[]belief.Revision{{Timestamp: now, OldStatement: "We moved off " + secret + " to Render.", Reason: "split"}}),
		})
	if err != nil {
		t.Fatal(err)
	}
	// The history of a belief in the user's words holds them too.
	if err := db.write(ctx, func(tx *sql.Tx) error {
		return insertEvent(ctx, tx, Event{At: now, MemoryID: "bl_00000000bbb5", Action: ActionFormed, Cause: only,
			After: map[string]any{"statement": "I always use pnpm.", "status": "active"}})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Forget(ctx, []string{only, corr}, nil); err != nil {
		t.Fatal(err)
	}
	get := func(id string) belief.Belief {
		var out belief.Belief
		if err := db.Beliefs(ctx, func(tx *BeliefTx) error {
			var err error
			out, err = tx.Get(id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := get("bl_00000000bbb1"); got.Status != belief.StatusArchived || len(got.Supporting) != 0 {
		t.Errorf("belief whose only evidence was forgotten: %s, supporting %v", got.Status, got.Supporting)
	}
	if got := get("bl_00000000bbb2"); got.Status != belief.StatusActive || len(got.Supporting) != 1 || got.Supporting[0] != other {
		t.Errorf("belief with other evidence: %s, supporting %v", got.Status, got.Supporting)
	}
	got := get("bl_00000000bbb3")
	if len(got.Revisions) != 1 || strings.Contains(got.Revisions[0].Reason, secret) || got.Revisions[0].OldStatement == "" {
		t.Errorf("revision after forget: %+v", got.Revisions)
	}
	// A belief in the forgotten words: gone when nothing else held it up,
	// else it reads as its fields say, its revisions too.
	var gone belief.Belief
	if err := db.Beliefs(ctx, func(tx *BeliefTx) error {
		var err error
		gone, err = tx.Get("bl_00000000bbb4")
		return err
	}); !errors.Is(err, ErrNotFound) {
		t.Errorf("belief in the words of its only, forgotten, evidence: %v %+v, want it forgotten", err, gone)
	}
	if got := get("bl_00000000bbb5"); got.Statement != "User prefers pnpm." || got.Status != belief.StatusActive {
		t.Errorf("belief in forgotten words with other evidence: %q %s, want \"User prefers pnpm.\" active", got.Statement, got.Status)
	}
	if got := get("bl_00000000bbb6"); got.Statement != "User prefers pnpm." || len(got.Revisions) != 1 ||
		got.Revisions[0].OldStatement != "User prefers pnpm." {
		t.Errorf("belief and revision in forgotten words: %q %+v", got.Statement, got.Revisions)
	}
	if evs, err := db.History(ctx, "bl_00000000bbb5"); err != nil || !strings.Contains(fmt.Sprint(evs), "User prefers pnpm.") ||
		strings.Contains(fmt.Sprint(evs), "always use pnpm") {
		t.Errorf("history of the reworded belief: %+v %v", evs, err)
	}
	evs, err := db.History(ctx, "bl_00000000bbb1")
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1]
	if last.Action != ActionArchived || last.Cause != "forget" || strings.Contains(fmt.Sprint(last), "pnpm") {
		t.Errorf("history: %+v", last)
	}
	if err := db.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(path + "*")
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{secret, "always use pnpm"} {
			if bytes.Contains(data, []byte(w)) {
				t.Errorf("%s still holds %q", filepath.Base(name), w)
			}
		}
	}
}
