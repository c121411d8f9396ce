package capture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/store"
)

const fixtureSession = "1416d527-3104-4a11-a10c-d8902eaf26c2"

func openDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// transcriptFile copies data into a session transcript in a fresh project dir.
func transcriptFile(t *testing.T, id string, data []byte) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-home-dev-proj")
	os.MkdirAll(dir, 0o700)
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func allContent(t *testing.T, db *store.DB) string {
	t.Helper()
	caps, err := db.Captures(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range caps {
		b.WriteString(c.Content)
		b.WriteString("\n---\n")
	}
	return b.String()
}

func TestFixtureSession(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	data := fixture(t, "session-1.jsonl")
	path := transcriptFile(t, fixtureSession, data)
	n, err := Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: path, CWD: "/home/dev/proj",
		LastAssistantMessage: "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer.",
		Source:               SourceStop}, Options{})
	if err != nil || n != 2 {
		t.Fatalf("Session n=%d err=%v", n, err)
	}
	caps, _ := db.Captures(ctx, fixtureSession)
	if caps[0].Continuation || caps[1].Continuation {
		t.Error("turns starting with a prompt marked as continuation")
	}
	if !strings.Contains(caps[0].Content, "I prefer table-driven tests and never testify") ||
		!strings.Contains(caps[1].Content, "please add a health endpoint") ||
		!strings.Contains(caps[1].Content, "Bash") || !strings.Contains(caps[1].Content, "Write") {
		t.Errorf("captures:\n%s\n---\n%s", caps[0].Content, caps[1].Content)
	}
	all := allContent(t, db)
	if c := strings.Count(all, "I added health.go"); c != 1 {
		t.Errorf("final reply captured %d times", c)
	}
	for _, leak := range []string{"JSON-MARKER", "You are an agent", "prompt_snapshot", "gitStatus"} {
		if strings.Contains(all, leak) {
			t.Errorf("capture contains %q", leak)
		}
	}
	s, _, _ := db.GetSession(ctx, fixtureSession)
	if s.Offset != int64(len(data)) || s.PendingReplyHash != "" || s.ProjectPath != "/home/dev/proj" {
		t.Errorf("session after pass: %+v (file %d bytes)", s, len(data))
	}
	// The same Stop again (stop_hook_active, or a retry) stores nothing.
	n, err = Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: path, CWD: "/home/dev/proj",
		LastAssistantMessage: "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer.",
		Source:               SourceStop}, Options{})
	if err != nil || n != 0 {
		t.Fatalf("second Stop n=%d err=%v", n, err)
	}
}

// The transcript lags behind the Stop hook: the hook sees the turn without
// its last lines, takes the final reply from its input, and a later pass
// reads the late lines without capturing the reply twice.
func TestLaggingTranscript(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "session-1.jsonl")
	reply := "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer."
	cut := bytes.Index(data, []byte(`"text":"I added health.go`))
	cut = bytes.LastIndexByte(data[:cut], '\n') + 1 // start of the final reply's line
	for _, tc := range []struct {
		name string
		at   int // how much of the file the hook sees
	}{
		{"reply line missing", cut},
		{"reply line half written", cut + 200},
		{"tool lines missing too", bytes.Index(data, []byte(`"id":"toolu_0004","name":"Write"`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openDB(t)
			path := transcriptFile(t, fixtureSession, data[:tc.at])
			req := Request{SessionID: fixtureSession, TranscriptPath: path, CWD: "/home/dev/proj", LastAssistantMessage: reply, Source: SourceStop}
			if _, err := Session(ctx, db, req, Options{}); err != nil {
				t.Fatal(err)
			}
			if c := strings.Count(allContent(t, db), "I added health.go"); c != 1 {
				t.Fatalf("after Stop: reply captured %d times", c)
			}
			// The hook runs again for the same turn before the file caught up.
			if _, err := Session(ctx, db, req, Options{}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path, data, 0o600)
			// The worker's sweep (no Stop input) reads the late lines.
			if _, err := Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: path, Source: SourceSweep}, Options{}); err != nil {
				t.Fatal(err)
			}
			all := allContent(t, db)
			if c := strings.Count(all, "I added health.go"); c != 1 {
				t.Errorf("after sweep: reply captured %d times:\n%s", c, all)
			}
			for _, want := range []string{"I prefer table-driven tests", "please add a health endpoint", "Bash", "Write"} {
				if !strings.Contains(all, want) {
					t.Errorf("missing %q in:\n%s", want, all)
				}
			}
			s, _, _ := db.GetSession(ctx, fixtureSession)
			if s.Offset != int64(len(data)) || s.PendingReplyHash != "" {
				t.Errorf("session: %+v", s)
			}
		})
	}
}

// Reading the file in passes split at every line gives the same text as one pass.
func TestEveryPassBoundary(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "session-1.jsonl")
	whole := openDB(t)
	path := transcriptFile(t, fixtureSession, data)
	Session(ctx, whole, Request{SessionID: fixtureSession, TranscriptPath: path, Source: SourceSweep}, Options{})
	blocks := func(s string) int { // rendered blocks, one per paragraph start
		n := 0
		for _, line := range strings.Split(s, "\n") {
			if strings.HasPrefix(line, "User: ") || strings.HasPrefix(line, "Assistant") || strings.HasPrefix(line, "Tool result") {
				n++
			}
		}
		return n
	}
	want := blocks(allContent(t, whole))
	if want != 8 {
		t.Fatalf("whole pass rendered %d blocks, want 8:\n%s", want, allContent(t, whole))
	}
	for i := 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		db := openDB(t)
		p := transcriptFile(t, fixtureSession, data[:i+1])
		Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: p, Source: SourceSweep}, Options{})
		os.WriteFile(p, data, 0o600)
		Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: p, Source: SourceSweep}, Options{})
		got := allContent(t, db)
		for _, s := range []string{"I prefer table-driven tests", "Noted: table-driven", "please add a health endpoint", "I added health.go", "ls -la"} {
			if c := strings.Count(got, s); c != 1 {
				t.Fatalf("split at %d: %q captured %d times", i+1, s, c)
			}
		}
		if n := blocks(got); n != want {
			t.Fatalf("split at %d: %d blocks, want %d:\n%s", i+1, n, want, got)
		}
	}
}

// The hook and the worker's sweep racing over one session capture each line once.
func TestConcurrentPasses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "memory.db")
	first, err := store.Open(ctx, dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	data := fixture(t, "session-1.jsonl")
	path := transcriptFile(t, fixtureSession, data)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := store.Open(ctx, dbPath, store.Options{MustExist: true})
			if err != nil {
				t.Error(err)
				return
			}
			defer db.Close()
			if _, err := Session(ctx, db, Request{SessionID: fixtureSession, TranscriptPath: path, Source: SourceSweep}, Options{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	db, _ := store.Open(ctx, dbPath, store.Options{MustExist: true})
	defer db.Close()
	if c := strings.Count(allContent(t, db), "please add a health endpoint"); c != 1 {
		t.Errorf("captured %d times", c)
	}
}

func TestSpoolAndDrain(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "session-1.jsonl")
	half := bytes.Index(data, []byte("please add a health endpoint"))
	half = bytes.LastIndexByte(data[:half], '\n') + 1
	path := transcriptFile(t, fixtureSession, data[:half])
	spoolDir := filepath.Join(t.TempDir(), "spool")

	// The database is unavailable: two passes go to the spool.
	req := Request{SessionID: fixtureSession, TranscriptPath: path, CWD: "/home/dev/proj", Source: SourceStop, Now: time.Now(),
		LastAssistantMessage: "Noted: table-driven tests with the standard testing package, no testify."}
	p, err := Read(req, SpooledState(spoolDir, fixtureSession), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ToSpool(spoolDir, p, "test"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, data, 0o600)
	req.LastAssistantMessage = "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer."
	prev := SpooledState(spoolDir, fixtureSession)
	if prev.Offset != int64(half) {
		t.Fatalf("spooled state offset=%d, want %d", prev.Offset, half)
	}
	p, _ = Read(req, prev, Options{})
	ToSpool(spoolDir, p, "test")
	// A corrupt file is moved aside, not retried forever.
	os.WriteFile(filepath.Join(spoolDir, "00000000000000000001-x.json"), []byte("{"), 0o600)

	db := openDB(t)
	st, err := Drain(ctx, db, spoolDir, Options{}, logx.Discard())
	if err != nil || st.Files != 2 || st.Quarantined != 1 {
		t.Fatalf("Drain=%+v err=%v", st, err)
	}
	st, err = Drain(ctx, db, spoolDir, Options{}, logx.Discard())
	if err != nil || st.Files != 0 {
		t.Fatalf("second Drain=%+v err=%v", st, err)
	}
	all := allContent(t, db)
	for _, s := range []string{"I prefer table-driven tests", "Noted: table-driven", "please add a health endpoint", "I added health.go"} {
		if c := strings.Count(all, s); c != 1 {
			t.Errorf("%q captured %d times:\n%s", s, c, all)
		}
	}
	s, _, _ := db.GetSession(ctx, fixtureSession)
	if s.Offset != int64(len(data)) {
		t.Errorf("offset=%d want %d", s.Offset, len(data))
	}
	if _, err := os.Stat(filepath.Join(spoolDir, "bad", "00000000000000000001-x.json")); err != nil {
		t.Errorf("corrupt file not quarantined: %v", err)
	}
}

// A pass that read past what the spool holds (the database came back before
// the drain) wins; the drain then adds nothing.
func TestDrainAfterNewerPass(t *testing.T) {
	ctx := context.Background()
	data := fixture(t, "session-1.jsonl")
	path := transcriptFile(t, fixtureSession, data)
	spoolDir := filepath.Join(t.TempDir(), "spool")
	req := Request{SessionID: fixtureSession, TranscriptPath: path, Source: SourceStop, Now: time.Now()}
	p, _ := Read(req, store.Session{}, Options{})
	ToSpool(spoolDir, p, "test")
	db := openDB(t)
	if _, err := Session(ctx, db, req, Options{}); err != nil {
		t.Fatal(err)
	}
	before := allContent(t, db)
	if _, err := Drain(ctx, db, spoolDir, Options{}, logx.Discard()); err != nil {
		t.Fatal(err)
	}
	if after := allContent(t, db); after != before {
		t.Errorf("drain duplicated captures:\n%s", after)
	}
}

func TestShrunkTranscriptIsAnError(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	data := fixture(t, "session-1.jsonl")
	path := transcriptFile(t, fixtureSession, data)
	req := Request{SessionID: fixtureSession, TranscriptPath: path, Source: SourceSweep}
	Session(ctx, db, req, Options{})
	os.WriteFile(path, data[:100], 0o600)
	if _, err := Session(ctx, db, req, Options{}); err == nil {
		t.Fatal("shrunk transcript read without error")
	}
}

func TestClip(t *testing.T) {
	s := strings.Repeat("é", 1000)
	got := clip(s, 301)
	if len(got) > 301+40 || !strings.Contains(got, "omitted") || !strings.HasPrefix(got, "é") || !strings.HasSuffix(got, "é") {
		t.Errorf("clip: %q", got)
	}
	if clip("short", 10) != "short" {
		t.Error("clip changed a short text")
	}
}
