package minilm

import (
	"math"
	"testing"

	"golang.org/x/sys/cpu"
)

// float32Kernel is the name of the float32 kernels chosen with k's: the
// products in AVX-512 where the CPU has it.
func float32Kernel(kernelSet) string {
	if cpu.X86.HasAVX512F {
		return "avx512"
	}
	return "avx2-fma"
}

// avx2Kernels is k with the float32 products in AVX2 rather than
// AVX-512, when k has them in AVX-512.
func avx2Kernels(k kernelSet) (kernelSet, bool) {
	if k.kernel == "go" || !cpu.X86.HasAVX512F {
		return k, false
	}
	k.matmul, k.useBF16, k.useI8, k.kernel = matmulAVX2, false, false, "avx2-fma"
	if cpu.X86.HasF16C {
		k.matmulHalf = matmulHalfAVX2
	}
	return k, true
}

// TestAVX512Matmul checks that matmulAVX512 gives matmulAVX2's bits
// (the same fused sums in the same order), over whole products, one
// goroutine's share of the panels, an odd number of panels and short
// sequences.
func TestAVX512Matmul(t *testing.T) {
	if !cpu.X86.HasAVX512F || !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("the CPU has no AVX-512")
	}
	for _, tc := range []struct{ T, K, N, p0, p1 int }{
		{1, 384, 32, 0, 2}, {5, 384, 64, 0, 4}, {6, 384, 32, 0, 2}, {7, 1, 48, 0, 3}, {13, 1536, 384, 0, 24},
		{20, 384, 1536, 0, 96}, {20, 384, 1536, 48, 96}, {61, 384, 80, 1, 5}, {64, 384, 96, 0, 6},
	} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		want, got := make([]float32, tc.T*tc.N), make([]float32, tc.T*tc.N)
		matmulAVX2(want, x, tc.T, tc.K, tc.N, w, b, tc.p0, tc.p1)
		matmulAVX512(got, x, tc.T, tc.K, tc.N, w, b, tc.p0, tc.p1)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%+v: [%d] = %g, matmulAVX2 %g", tc, i, got[i], want[i])
			}
		}
	}
}

// halfKernels are the float16 assembly kernels this CPU runs.
func halfKernels() []namedHalf {
	var ks []namedHalf
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA && cpu.X86.HasF16C {
		ks = append(ks, namedHalf{"matmulHalfAVX2", matmulHalfAVX2})
	}
	if cpu.X86.HasAVX512F {
		ks = append(ks, namedHalf{"matmulHalfAVX512", matmulHalfAVX512})
	}
	return ks
}
