package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustOpen(tb testing.TB, path string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestOpenMigratesAndSecures(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "engram")
	path := filepath.Join(home, "memory.db")
	db := mustOpen(t, path)
	v, err := db.UserVersion(ctx)
	if err != nil || v != LatestVersion() {
		t.Fatalf("UserVersion=%d,%v want %d", v, err, LatestVersion())
	}
	if err := db.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{home: 0o700, path: 0o600, path + "-wal": 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s mode=%v, want %v", p, st.Mode().Perm(), want)
		}
	}
	// Reopening applies nothing twice and keeps the data.
	db.Close()
	db = mustOpen(t, path)
	if got, _ := db.Meta(ctx, "k"); got != "v" {
		t.Errorf("Meta after reopen=%q", got)
	}
	var n int
	db.sql.QueryRow("SELECT count(*) FROM schema_migrations").Scan(&n)
	if n != LatestVersion() {
		t.Errorf("schema_migrations rows=%d, want %d", n, LatestVersion())
	}
	var mode string
	db.sql.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode=%q", mode)
	}
}

func TestOpenTightensLoosePermissions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, path)
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode=%v", st.Mode().Perm())
	}
}

func TestMustExist(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	if _, err := Open(ctx, path, Options{MustExist: true}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("missing db: err=%v, want ErrNotReady", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("MustExist created the file")
	}
	// An empty (unmigrated) file is not ready either.
	os.WriteFile(path, nil, 0o600)
	if _, err := Open(ctx, path, Options{MustExist: true}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("unmigrated db: err=%v, want ErrNotReady", err)
	}
	mustOpen(t, path)
	db, err := Open(ctx, path, Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := Open(ctx, path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.SetMeta(ctx, "x", "y"); err == nil {
		t.Error("write through a read-only handle succeeded")
	}
}

func TestCorruptFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	os.WriteFile(path, []byte(strings.Repeat("not a database ", 400)), 0o600)
	if _, err := Open(context.Background(), path, Options{MustExist: true}); err == nil {
		t.Fatal("corrupt database opened without error")
	}
}

func capt(start, end int64, text string) Capture {
	return Capture{ByteStart: start, ByteEnd: end, Content: text, ContentHash: text, TranscriptPath: "/t/s.jsonl",
		TurnAt: time.UnixMilli(1000), Source: "stop"}
}

func TestCommitCaptures(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, filepath.Join(t.TempDir(), "memory.db"))
	sess := Session{ID: "s1", TranscriptPath: "/t/s1.jsonl", CWD: "/p", Offset: 100, LastReplyHash: "r1"}
	n, err := db.CommitCaptures(ctx, CaptureCommit{From: 0, Session: sess, Captures: []Capture{capt(0, 50, "a"), capt(50, 100, "b")}})
	if err != nil || n != 2 {
		t.Fatalf("first commit n=%d err=%v", n, err)
	}
	got, ok, err := db.GetSession(ctx, "s1")
	if err != nil || !ok || got.Offset != 100 || got.LastReplyHash != "r1" || got.CWD != "/p" {
		t.Fatalf("session=%+v ok=%v err=%v", got, ok, err)
	}
	// A pass that started from a stale offset is refused and stores nothing.
	sess.Offset = 150
	if _, err := db.CommitCaptures(ctx, CaptureCommit{From: 0, Session: sess, Captures: []Capture{capt(100, 150, "c")}}); !errors.Is(err, ErrOffsetMoved) {
		t.Fatalf("stale pass err=%v, want ErrOffsetMoved", err)
	}
	caps, _ := db.Captures(ctx, "s1")
	if len(caps) != 2 {
		t.Fatalf("captures after refused pass=%d", len(caps))
	}
	// The spool drain (AnyOffset) skips what the store covers and never moves backwards.
	n, err = db.CommitCaptures(ctx, CaptureCommit{AnyOffset: true, Session: Session{ID: "s1", TranscriptPath: "/t/s1.jsonl", Offset: 80},
		Captures: []Capture{capt(50, 80, "dup")}})
	if err != nil || n != 0 {
		t.Fatalf("drain of covered range n=%d err=%v", n, err)
	}
	if got, _, _ := db.GetSession(ctx, "s1"); got.Offset != 100 || got.LastReplyHash != "r1" {
		t.Fatalf("offset moved backwards: %+v", got)
	}
	// Replaying an identical range stores nothing twice.
	n, err = db.CommitCaptures(ctx, CaptureCommit{AnyOffset: true, Session: Session{ID: "s1", TranscriptPath: "/t/s1.jsonl", Offset: 100},
		Captures: []Capture{capt(100, 100, "late reply"), capt(100, 100, "late reply")}})
	if err != nil || n != 1 {
		t.Fatalf("replay n=%d err=%v", n, err)
	}
	counts, _ := db.CaptureCounts(ctx)
	if counts[CapturePending] != 3 {
		t.Errorf("counts=%v", counts)
	}
	pend, _ := db.PendingCaptures(ctx, 10)
	if len(pend) != 3 || pend[0].Content != "a" || pend[0].TurnAt.UnixMilli() != 1000 {
		t.Errorf("pending=%+v", pend)
	}
	recent, _ := db.RecentSessions(ctx, time.Now().Add(-time.Hour))
	if len(recent) != 1 || recent[0].ID != "s1" {
		t.Errorf("recent=%+v", recent)
	}
}

// Concurrent writers through separate handles (separate pools, like separate
// processes) must all succeed: busy_timeout and immediate transactions.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	mustOpen(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			db, err := Open(ctx, path, Options{MustExist: true})
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			id := string(rune('a' + w))
			for i := 0; i < 50; i++ {
				prev, _, err := db.GetSession(ctx, id)
				if err != nil {
					errs <- err
					return
				}
				_, err = db.CommitCaptures(ctx, CaptureCommit{From: prev.Offset,
					Session:  Session{ID: id, TranscriptPath: "/t", Offset: prev.Offset + 10},
					Captures: []Capture{capt(prev.Offset, prev.Offset+10, "x")}})
				if err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	db := mustOpen(t, path)
	caps, _ := db.Captures(ctx, "")
	if len(caps) != 200 {
		t.Errorf("captures=%d, want 200", len(caps))
	}
}

// TestOpenRefusesNewerSchema: a database of a newer engram (schema past
// this binary's) is refused in every mode, with ErrNewerSchema and both
// schema numbers, and its file is left byte for byte as it was.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memory.db")
	db := mustOpen(t, path)
	if err := db.SetMeta(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	newer := LatestVersion() + 1
	if _, err := db.sql.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", newer)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{}, {MustExist: true}, {ReadOnly: true}} {
		db, err := Open(ctx, path, opt)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%+v) of a schema-%d database succeeded, want ErrNewerSchema", opt, newer)
		}
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), fmt.Sprintf("schema %d", newer)) ||
			!strings.Contains(err.Error(), fmt.Sprintf("up to %d", LatestVersion())) {
			t.Errorf("Open(%+v): %v, want ErrNewerSchema naming schemas %d and %d", opt, err, newer, LatestVersion())
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("the refused database changed (%d bytes before, %d after)", len(before), len(after))
	}
}
