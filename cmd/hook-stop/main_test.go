package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/store"
)

var hookBin string

// standIn, when set, runs instead of the tests where this binary is
// started as a stand-in engram-worker.
var standIn func()

func TestMain(m *testing.M) {
	if standIn != nil && filepath.Base(os.Args[0]) == "engram-worker" {
		standIn()
	}
	dir, err := os.MkdirTemp("", "engram-hook-stop-test")
	if err != nil {
		panic(err)
	}
	hookBin = filepath.Join(dir, "engram-hook-stop")
	if out, err := exec.Command("go", "build", "-o", hookBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const sid = "1416d527-3104-4a11-a10c-d8902eaf26c2"

type fixture struct {
	home, claude, transcript string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{home: filepath.Join(base, "engram"), claude: filepath.Join(base, "claude")}
	dir := filepath.Join(f.claude, "projects", "-home-dev-proj")
	os.MkdirAll(dir, 0o700)
	data, err := os.ReadFile("../../internal/capture/testdata/session-1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f.transcript = filepath.Join(dir, sid+".jsonl")
	os.WriteFile(f.transcript, data, 0o600)
	return f
}

func (f fixture) input(t testing.TB, fields map[string]any) []byte {
	in := map[string]any{
		"session_id": sid, "transcript_path": f.transcript, "cwd": "/home/dev/proj",
		"hook_event_name": "Stop", "stop_hook_active": false, "effort": map[string]any{"level": "medium"},
		"last_assistant_message": "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer.",
		"background_tasks":       []any{}, "future_field": 1,
	}
	for k, v := range fields {
		in[k] = v
	}
	b, _ := json.Marshal(in)
	return b
}

// runHook runs the real binary and checks the contract: exit 0, no output.
func (f fixture) runHook(t *testing.T, stdin []byte, extraEnv ...string) {
	t.Helper()
	cmd := exec.Command(hookBin)
	cmd.Env = append([]string{"HOME=" + filepath.Dir(f.home), "ENGRAM_HOME=" + f.home, "CLAUDE_CONFIG_DIR=" + f.claude}, extraEnv...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook exited with %v (stderr %q)", err, stderr.String())
	}
	if stdout.Len() != 0 || stderr.Len() != 0 {
		t.Fatalf("hook printed stdout=%q stderr=%q", stdout.String(), stderr.String())
	}
}

func (f fixture) makeStore(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(f.home, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func (f fixture) logText() string {
	b, _ := os.ReadFile(filepath.Join(f.home, "logs", "hook-stop.log"))
	return string(b)
}

func (f fixture) spoolFiles(t *testing.T) []string {
	m, _ := filepath.Glob(filepath.Join(f.home, "spool", "*.json"))
	return m
}

func TestCapturesTurns(t *testing.T) {
	f := newFixture(t)
	db := f.makeStore(t)
	in := f.input(t, nil)
	f.runHook(t, in)
	f.runHook(t, f.input(t, map[string]any{"stop_hook_active": true}))
	caps, err := db.Captures(context.Background(), sid)
	if err != nil || len(caps) != 2 {
		t.Fatalf("captures=%d err=%v", len(caps), err)
	}
	if caps[0].Source != "stop" || caps[1].ProjectPath != "/home/dev/proj" {
		t.Errorf("capture fields: %+v", caps[1])
	}
	if len(f.spoolFiles(t)) != 0 {
		t.Error("spooled although the store was available")
	}
}

func TestBadInputIsLoggedNotShown(t *testing.T) {
	f := newFixture(t)
	f.makeStore(t)
	for name, in := range map[string][]byte{
		"empty":          nil,
		"not json":       []byte("{oops"),
		"array":          []byte("[1,2]"),
		"bad session id": f.input(t, map[string]any{"session_id": "../../etc/passwd"}),
		"path mismatch":  f.input(t, map[string]any{"transcript_path": "/etc/passwd"}),
		"missing file":   f.input(t, map[string]any{"transcript_path": filepath.Join(f.claude, "projects", "x", sid+".jsonl")}),
		"relative path":  f.input(t, map[string]any{"transcript_path": "projects/" + sid + ".jsonl"}),
		"wrong types":    []byte(`{"session_id": 5, "transcript_path": true}`),
	} {
		t.Run(name, func(t *testing.T) { f.runHook(t, in) })
	}
	if !strings.Contains(f.logText(), "session_id") {
		t.Errorf("log does not explain the rejection:\n%s", f.logText())
	}
}

func TestMissingStoreSpools(t *testing.T) {
	f := newFixture(t)
	f.runHook(t, f.input(t, nil))
	if n := len(f.spoolFiles(t)); n != 1 {
		t.Fatalf("spool files=%d, want 1", n)
	}
	st, err := os.Stat(f.spoolFiles(t)[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("spool file mode: %v %v", st.Mode().Perm(), err)
	}
	if _, err := os.Stat(filepath.Join(f.home, "memory.db")); !os.IsNotExist(err) {
		t.Error("the hook created the database")
	}
}

func TestLockedStoreSpoolsWithinDeadline(t *testing.T) {
	f := newFixture(t)
	db := f.makeStore(t)
	release, err := db.HoldWriteLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	start := time.Now()
	f.runHook(t, f.input(t, nil), "ENGRAM_STOP_HOOK_DEADLINE=600ms")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("hook took %v with a 600ms deadline", took)
	}
	files := f.spoolFiles(t)
	if len(files) != 1 {
		t.Fatalf("spool files=%d, want 1; log:\n%s", len(files), f.logText())
	}
	b, _ := os.ReadFile(files[0])
	if !bytes.Contains(b, []byte("please add a health endpoint")) {
		t.Errorf("spooled pass lacks the turn: %.300s", b)
	}
}

func TestCorruptStoreSpools(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(f.home, 0o700)
	os.WriteFile(filepath.Join(f.home, "memory.db"), bytes.Repeat([]byte("garbage!"), 1024), 0o600)
	f.runHook(t, f.input(t, nil))
	if n := len(f.spoolFiles(t)); n != 1 {
		t.Fatalf("spool files=%d, want 1; log:\n%s", n, f.logText())
	}
}

func TestInvalidConfigStillExitsZero(t *testing.T) {
	f := newFixture(t)
	f.runHook(t, f.input(t, nil), "ENGRAM_TOOL_RESULT_MAX=lots")
}

// Under load the client may run the Stop hook before the transcript exists.
// The session is registered so that the worker's sweep captures it later.
func TestTranscriptNotWrittenYet(t *testing.T) {
	for _, withStore := range []bool{true, false} {
		t.Run(fmt.Sprintf("store=%v", withStore), func(t *testing.T) {
			f := newFixture(t)
			data, _ := os.ReadFile(f.transcript)
			os.Remove(f.transcript)
			if withStore {
				f.makeStore(t)
			}
			f.runHook(t, f.input(t, nil))
			os.WriteFile(f.transcript, data, 0o600)
			db := f.makeStore(t)
			ctx := context.Background()
			cfg := capture.Options{}
			if _, err := capture.Drain(ctx, db, filepath.Join(f.home, "spool"), cfg, logx.Discard()); err != nil {
				t.Fatal(err)
			}
			if _, err := capture.Sweep(ctx, db, time.Now().Add(-time.Hour), cfg, logx.Discard()); err != nil {
				t.Fatal(err)
			}
			caps, _ := db.Captures(ctx, sid)
			var all strings.Builder
			for _, c := range caps {
				all.WriteString(c.Content)
			}
			for _, want := range []string{"I prefer table-driven tests", "please add a health endpoint"} {
				if strings.Count(all.String(), want) != 1 {
					t.Errorf("%q captured %d times; log:\n%s", want, strings.Count(all.String(), want), f.logText())
				}
			}
			if strings.Count(all.String(), "I added health.go") != 1 {
				t.Errorf("final reply captured %d times", strings.Count(all.String(), "I added health.go"))
			}
		})
	}
}

// Inside one of engram's own model calls (the worker's claude process) the
// hook captures nothing, stored or spooled.
func TestInternalCallCapturesNothing(t *testing.T) {
	f := newFixture(t)
	db := f.makeStore(t)
	f.runHook(t, f.input(t, nil), hookio.InternalCallEnv+"=1")
	caps, err := db.Captures(context.Background(), sid)
	if err != nil || len(caps) != 0 || len(f.spoolFiles(t)) != 0 {
		t.Fatalf("captures=%d spooled=%d err=%v, want nothing", len(caps), len(f.spoolFiles(t)), err)
	}
	f.runHook(t, f.input(t, nil))
	if caps, _ := db.Captures(context.Background(), sid); len(caps) == 0 {
		t.Fatal("nothing captured without the marker")
	}
}
