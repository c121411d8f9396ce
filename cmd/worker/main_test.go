package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/engram-memory/engram/internal/store"
)

var workerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "engram-worker-test")
	if err != nil {
		panic(err)
	}
	workerBin = filepath.Join(dir, "engram-worker")
	if out, err := exec.Command("go", "build", "-o", workerBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testHome is a throw-away HOME with ENGRAM_HOME and CLAUDE_CONFIG_DIR inside.
type testHome struct {
	home, engram, claude string
}

func newHome(t *testing.T) testHome {
	t.Helper()
	h := t.TempDir()
	return testHome{home: h, engram: filepath.Join(h, ".claude-memory"), claude: filepath.Join(h, ".claude")}
}

func (h testHome) env(extra ...string) []string {
	return append([]string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH")}, extra...)
}

func (h testHome) command(args ...string) *exec.Cmd {
	cmd := exec.Command(workerBin, args...)
	cmd.Env = h.env()
	return cmd
}

// run runs the worker and returns stdout, stderr and the exit code.
func (h testHome) run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := h.command(args...)
	cmd.Stdin = bytes.NewBufferString(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (h testHome) db(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(h.engram, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
