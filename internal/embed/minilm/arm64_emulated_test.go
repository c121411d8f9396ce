package minilm

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestARM64Emulated runs the arm64 kernels (gemm_arm64.s, matmulNEON,
// attendHeadsNEON) on a machine of another architecture: it builds this
// package's test binary for linux/arm64 and runs its kernel test, and
// one model test, under qemu-aarch64-static (qemu user-mode emulation,
// Debian's qemu-user-static), failing when they fail.
func TestARM64Emulated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package for arm64 and runs its tests under emulation: not in -short")
	}
	if runtime.GOARCH == "arm64" {
		t.Skip("arm64: TestKernels runs the NEON kernels natively")
	}
	if runtime.GOOS != "linux" {
		t.Skip("qemu user-mode emulation runs Linux binaries on Linux")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		t.Skip("qemu-aarch64-static is not installed (Debian package qemu-user-static): the arm64 kernels are not tested here")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build the arm64 test binary")
	}
	bin := filepath.Join(t.TempDir(), "minilm-arm64.test")
	build := exec.Command(goTool, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c for linux/arm64: %v\n%s", err, out)
	}
	// TestKernels compares every kernel with the plain Go one;
	// TestEmbedPaths runs the whole encoder (it skips without the model).
	run := exec.Command(qemu, bin, "-test.run", "^(TestKernels|TestEmbedPaths)$", "-test.v", "-test.count=1")
	out, err := run.CombinedOutput()
	t.Logf("arm64 test binary under %s:\n%s", filepath.Base(qemu), out)
	if err != nil {
		t.Fatalf("arm64 tests failed: %v", err)
	}
	for _, want := range []string{"kernel neon", "--- PASS: TestKernels"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("arm64 test output lacks %q", want)
		}
	}
}
