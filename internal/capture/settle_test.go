package capture

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// TestSettleWaitsForTheTranscript: a session registered before its
// transcript exists (the client ran the Stop hook first) holds Settle
// until the file is written and quiet; a transcript that never comes
// holds it only until max.
func TestSettleWaitsForTheTranscript(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	p := Pass{Request: Request{SessionID: "s1", TranscriptPath: path, CWD: t.TempDir(), Now: time.Now()}}
	if _, err := db.CommitCaptures(ctx, p.Commit(store.Session{}, Options{})); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(path, []byte("{}\n"), 0o600)
	}()
	start := time.Now()
	n, err := Settle(ctx, db, start.Add(-time.Minute), 5*time.Second, 200*time.Millisecond)
	waited := time.Since(start)
	if err != nil || n != 0 {
		t.Fatalf("Settle = %d, %v; want 0 unsettled", n, err)
	}
	// It waited for the file (written after 300 ms) and its quiet time,
	// not for max.
	if waited < 400*time.Millisecond || waited >= 5*time.Second {
		t.Errorf("Settle returned after %v; want after the write and its quiet time, before max", waited)
	}

	// A transcript that never appears: Settle gives up at max and says so.
	p.Request.SessionID, p.Request.TranscriptPath = "s2", filepath.Join(t.TempDir(), "never.jsonl")
	if _, err := db.CommitCaptures(ctx, p.Commit(store.Session{}, Options{})); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	n, err = Settle(ctx, db, start.Add(-time.Minute), 300*time.Millisecond, 50*time.Millisecond)
	if err != nil || n != 1 {
		t.Fatalf("Settle = %d, %v; want 1 unsettled", n, err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Errorf("Settle gave up after %v; want max (300 ms)", waited)
	}
}
