package capture

// Benchmarks of one Stop hook capture pass (capture.Session on an open,
// real SQLite store). Each iteration appends one new turn to the session's
// transcript with the timer stopped, as Claude Code would have written it,
// then times the capture of exactly that turn. b.SetBytes is the size of the
// new turn, so MB/s is the rate at which new transcript bytes are captured.
//
// The whole-process cost (start-up, opening the store) against a hello-world
// floor is measured by bench/stop-hook.sh. Targets live there and in these
// benchmarks' reports, never in pass/fail tests. On a shared machine the
// wall time (ns/op) includes waiting for a CPU; cpu-ms/op is the process's
// CPU time (user+system, GC included) over the timed part only.
//
//	go test ./internal/capture -run '^$' -bench Capture -benchmem -count 3

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench/cputime"
	"github.com/engram-memory/engram/bench/turngen"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/store"
)

const benchSession = "0b5e0c1e-5a11-4c0d-9e2f-000000000b01"

type benchEnv struct {
	db   *store.DB
	opt  Options
	tmpl *turngen.Template
	path string
	f    *os.File // the transcript, opened for appending
	next int      // number of the next turn to append
}

// newBenchEnv makes a store and a transcript holding the recorded session's
// start plus about prefix bytes of generated turns, all captured.
func newBenchEnv(b *testing.B, prefix int64) *benchEnv {
	b.Helper()
	ctx := context.Background()
	dir := b.TempDir()
	// The hook's options, from the configuration's defaults.
	b.Setenv("ENGRAM_HOME", filepath.Join(dir, "engram"))
	b.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(dir, "claude"))
	cfg, err := config.Load()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "session-1.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	tmpl, err := turngen.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{opt: OptionsFrom(cfg), tmpl: tmpl}
	e.db, err = store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.db.Close() })
	tdir := filepath.Join(cfg.ProjectsDir(), "-home-dev-proj")
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		b.Fatal(err)
	}
	e.path = filepath.Join(tdir, benchSession+".jsonl")
	e.f, err = os.OpenFile(e.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.f.Close() })
	e.next, _, err = tmpl.WriteTurns(e.f, prefix, 1, turngen.Options{SessionID: benchSession})
	if err != nil {
		b.Fatal(err)
	}
	// The session so far was captured by earlier Stops.
	if n, err := Session(ctx, e.db, Request{SessionID: benchSession, TranscriptPath: e.path, CWD: "/home/dev/proj",
		Source: SourceBackfill}, e.opt); err != nil || n == 0 {
		b.Fatalf("capturing the transcript's start: n=%d err=%v", n, err)
	}
	return e
}

// appendTurn writes the next turn to the transcript and returns its reply
// (the Stop input's last_assistant_message) and its size.
func (e *benchEnv) appendTurn(b *testing.B, buf []byte, o turngen.Options) (reply string, size int, _ []byte) {
	o.SessionID = benchSession
	buf = e.tmpl.Append(buf[:0], e.next, o)
	if _, err := e.f.Write(buf); err != nil {
		b.Fatal(err)
	}
	reply = e.tmpl.Reply(e.next)
	e.next++
	return reply, len(buf), buf
}

func (e *benchEnv) capture(b *testing.B, reply string) {
	n, err := Session(context.Background(), e.db, Request{SessionID: benchSession, TranscriptPath: e.path,
		CWD: "/home/dev/proj", LastAssistantMessage: reply, Source: SourceStop}, e.opt)
	if err != nil || n != 1 {
		b.Fatalf("capture: n=%d err=%v, want one capture", n, err)
	}
}

// benchTurns times the capture of one new turn per iteration.
func benchTurns(b *testing.B, prefix int64, o turngen.Options) {
	e := newBenchEnv(b, prefix)
	// One turn outside the timer: its size for SetBytes, and warm caches.
	reply, size, buf := e.appendTurn(b, nil, o)
	e.capture(b, reply)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var cpu time.Duration // CPU time of the timed part: wall time less waiting for a CPU
	for b.Loop() {
		b.StopTimer()
		reply, _, buf = e.appendTurn(b, buf, o)
		b.StartTimer()
		c0 := cputime.Now()
		e.capture(b, reply)
		cpu += cputime.Now() - c0
	}
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
	}
	if st, err := e.f.Stat(); err == nil {
		b.ReportMetric(float64(st.Size())/(1<<20), "transcript-MB")
	}
}

// A typical turn (the recorded session's second turn: prompt, attachment,
// api-request lines, two tool calls with their results, the final reply;
// about 12.6 KB) after the session's start was captured.
func BenchmarkCaptureTypicalTurn(b *testing.B) {
	benchTurns(b, 0, turngen.Options{})
}

// The same turn with a 5 MiB tool output (Claude Code writes it twice on
// the tool_result line, so the turn is about 10.5 MB).
func BenchmarkCapture5MBToolResult(b *testing.B) {
	benchTurns(b, 0, turngen.Options{ToolOutput: turngen.Escape(turngen.ToolOutput(5 << 20))})
}

// A typical turn at the end of a transcript that already holds ~100 MB of
// captured turns: the cost must follow the new bytes, not the file's size.
func BenchmarkCaptureSmallTurnOn100MBTranscript(b *testing.B) {
	benchTurns(b, 100<<20, turngen.Options{})
}
