package minilm

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// runChild runs this test binary as a fresh process in the given mode.
func runChild(tb testing.TB, mode string) string {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MINILM_TEST_CHILD="+mode, "MINILM_TEST_DIR="+converted.dir)
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("child %s: %v", mode, err)
	}
	return string(out)
}

// BenchmarkFreshProcess is what a hook pays: a process that starts and
// exits (hello, the floor), one that also opens the model, and one that
// opens it and embeds a 20-token prompt with a 32-token limit. Compare
// the three in one run: open−hello is the cost of Open in a fresh
// process, embed−open that of the first embedding with cold mappings.
func BenchmarkFreshProcess(b *testing.B) {
	testModel(b)
	for _, mode := range []string{"hello", "open", "embed"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				runChild(b, mode)
			}
		})
	}
}

// TestPeakRSS embeds 1,000 worker-sized texts in a fresh process and
// checks its peak resident set against the worker's budget of 256 MB
// (the mapped model counts, for the pages touched).
func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	if testing.Short() || raceEnabled || kernel == "go" {
		t.Skip("embeds 1,000 texts: minutes with the plain Go kernels or under the race detector")
	}
	testModel(t)
	out := strings.TrimSpace(runChild(t, "rss"))
	kb, err := strconv.Atoi(strings.TrimSuffix(out, " kB"))
	if err != nil {
		t.Fatalf("child printed %q", out)
	}
	t.Logf("peak RSS embedding 1,000 texts of ~60 tokens: %d MB", kb/1024)
	if kb > 256*1024 {
		t.Errorf("peak RSS %d MB, over the worker's 256 MB", kb/1024)
	}
}

// TestFreshProcessTiming logs, from fresh processes, what Open, the first
// embedding of a 20-token prompt (cold mappings) and the second cost.
func TestFreshProcessTiming(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a measurement")
	}
	testModel(t)
	for range 3 {
		t.Log(strings.TrimSpace(runChild(t, "timing")))
	}
}
