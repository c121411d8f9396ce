package minilm

import (
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestExp32(t *testing.T) {
	var worst float64
	for x := -87.0; x <= 0; x += 1e-3 {
		x32 := float32(x)
		want := math.Exp(float64(x32))
		worst = max(worst, math.Abs(float64(exp32(x32))-want)/want)
	}
	if worst > 1e-6 || exp32(-88) != 0 || exp32(0) != 1 {
		t.Errorf("exp32: max relative error %g against math.Exp, want ≤ 1e-6; exp32(-88) = %g, exp32(0) = %g", worst, exp32(-88), exp32(0))
	}
	t.Logf("exp32: max relative error %g", worst)
}

func TestErf32(t *testing.T) {
	var worst float64
	for x := -6.0; x <= 6; x += 1e-4 {
		d := math.Abs(float64(erf32(float32(x))) - math.Erf(x))
		worst = max(worst, d)
	}
	if worst > 1e-6 {
		t.Errorf("erf32: max error %g against math.Erf, want ≤ 1e-6", worst)
	}
	t.Logf("erf32: max error %g", worst)
}

// TestKernels checks the kernels in use (the assembly ones on a CPU that
// has their instructions) against the plain Go ones,
// on shapes that exercise every remainder path.
func TestKernels(t *testing.T) {
	t.Logf("kernel %s", kernel)
	for _, tc := range []struct{ T, K, N int }{{1, 384, 16}, {2, 384, 32}, {3, 8, 48}, {5, 384, 1152}, {6, 384, 16}, {6, 1, 32}, {7, 1536, 384}, {8, 3, 16}, {9, 384, 64}, {10, 17, 48}, {11, 40, 32}, {12, 384, 48}, {13, 2, 16}, {20, 384, 1536}, {61, 1536, 32}, {64, 384, 96}} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		want, got := make([]float32, tc.T*tc.N), make([]float32, tc.T*tc.N)
		matmulGo(want, x, tc.T, tc.K, tc.N, w, b, 0, tc.N/panel)
		matmul(got, x, tc.T, tc.K, tc.N, w, b, 0, tc.N/panel)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("matmul %v: [%d] = %g, plain Go %g", tc, i, got[i], want[i])
			}
		}
		// One goroutine's share of the panels: the columns outside it
		// are left as they were.
		if np := tc.N / panel; np >= 3 {
			part := randMat(tc.T*tc.N + 1)[1:]
			old := slices.Clone(part)
			matmul(part, x, tc.T, tc.K, tc.N, w, b, 1, np-1)
			for i := range part {
				inside := i%tc.N >= panel && i%tc.N < (np-1)*panel
				if inside && part[i] != got[i] || !inside && part[i] != old[i] {
					t.Fatalf("matmul %v, panels [1, %d): [%d] = %g, whole product %g, before %g", tc, np-1, i, part[i], got[i], old[i])
				}
			}
		}
	}
	for _, T := range []int{2, 5, 6, 7, 16, 17, 61} {
		const H, heads = 384, 12
		Tp := (T + panel - 1) / panel * panel
		qkv := randMat(T * 3 * H)
		for i := range qkv {
			qkv[i] *= 2
		}
		want, got := make([]float32, T*H), make([]float32, T*H)
		attendHeadsGo(want, qkv, make([]float32, heads*T*Tp), make([]float32, H*Tp), nil, T, H, heads, 0, heads)
		// Buffers dirty from a longer sequence, as pooled ones are.
		prob, kt, vp := randMat(heads*64*64), randMat(H*64), randMat(H*64)
		attendHeads(got, qkv, prob, kt, vp, T, H, heads, 0, heads/2)
		attendHeads(got, qkv, prob, kt, vp, T, H, heads, heads/2, heads)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("attention T=%d: [%d] = %g, plain Go %g", T, i, got[i], want[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 20, 32, 61} {
		x, d := randMat(n), randMat(n + 1)[1:]
		want, got := append([]float32(nil), d...), append([]float32(nil), d...)
		axpyGo(want, x, 0.37)
		axpy(got, x, 0.37)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6 {
				t.Fatalf("axpy(%d) [%d] = %g, plain Go %g", n, i, got[i], want[i])
			}
		}
	}
	for _, n := range []int{1, 7, 8, 20, 61, 256} {
		row := randMat(n)
		for i := range row {
			row[i] *= 30
		}
		mx := slices.Max(row)
		want, got := slices.Clone(row), slices.Clone(row)
		ws, gs := expSumGo(want, mx), expSum(got, mx)
		if math.Abs(float64(ws-gs)) > 1e-5*float64(ws) {
			t.Fatalf("expSum(%d) = %g, plain Go %g", n, gs, ws)
		}
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*float64(want[i])+1e-30 {
				t.Fatalf("expSum(%d) [%d] = %g, plain Go %g", n, i, got[i], want[i])
			}
		}
	}
	for _, add := range []bool{false, true} {
		row, g, b := randMat(384), randMat(385)[1:], randMat(386)[2:]
		for i := range row {
			row[i] = row[i]*3 + 5 // off-centre, as hidden states are
		}
		var a []float32
		if add {
			a = randMat(387)[3:]
		}
		want, got := slices.Clone(row), slices.Clone(row)
		normRowGo(want, a, g, b, 1e-12)
		normRow(got, a, g, b, 1e-12)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("normRow(add %v) [%d] = %g, plain Go %g", add, i, got[i], want[i])
			}
		}
	}
	x := randMat(1003)
	for i := range x {
		x[i] *= 8
	}
	want := append([]float32(nil), x...)
	geluGo(want)
	gelu(x)
	for i := range x {
		if d := math.Abs(float64(x[i] - want[i])); d > 1e-6 {
			t.Fatalf("gelu [%d] = %g, plain Go %g", i, x[i], want[i])
		}
	}
}

// kernelSet is the package's kernel choice, for tests that force one.
type kernelSet struct {
	matmul      func(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int)
	gelu        func([]float32)
	axpy        func(dst, x []float32, a float32)
	expSum      func([]float32, float32) float32
	normRow     func(row, add, g, b []float32, eps float32)
	attendHeads func(ctx, qkv, prob, kt, vp []float32, T, H, heads, h0, h1 int)
	matmulHalf  func(dst, x []float32, T, K, N int, w []uint16, b []float32, p0, p1 int)
	useBF16     bool
	useI8       bool
	kernel      string
}

func currentKernels() kernelSet {
	return kernelSet{matmul, gelu, axpy, expSum, normRow, attendHeads, matmulHalf, useBF16, useI8, kernel}
}

func (k kernelSet) set() {
	matmul, gelu, axpy, expSum, normRow, attendHeads, matmulHalf, useBF16, useI8, kernel = k.matmul, k.gelu, k.axpy, k.expSum, k.normRow, k.attendHeads, k.matmulHalf, k.useBF16, k.useI8, k.kernel
}

// kernelChoices are the kernels this build and CPU can run, fastest
// first: the one chosen at start-up, then without int8 (bf16 products
// only), then without bf16 (the float32 SIMD kernels), then on amd64
// with AVX-512 the float32 products in AVX2 alone, then plain Go.
func kernelChoices() []kernelSet {
	chosen := currentKernels()
	choices := []kernelSet{chosen}
	if chosen.useI8 {
		f := chosen
		f.useI8, f.kernel = false, "avx512-bf16"
		choices = append(choices, f)
	}
	if chosen.useBF16 {
		f := chosen
		f.useBF16, f.useI8, f.kernel = false, false, float32Kernel(chosen)
		choices = append(choices, f)
	}
	if f, ok := avx2Kernels(chosen); ok {
		choices = append(choices, f)
	}
	if chosen.kernel != "go" {
		choices = append(choices, kernelSet{matmulGo, geluGo, axpyGo, expSumGo, normRowGo, attendHeadsGo, matmulHalfGo, false, false, "go"})
	}
	return choices
}

// forceKernels runs the rest of the test with k, then restores the
// kernels in use.
func forceKernels(t *testing.T, k kernelSet) {
	old := currentKernels()
	k.set()
	t.Cleanup(old.set)
}

// TestBF16Kernel checks the bf16 product against matmulGo given the same
// bfloat16-rounded inputs: only the order of the float32 sums differs.
func TestBF16Kernel(t *testing.T) {
	if !useBF16 {
		t.Skipf("kernel %s: no bf16 kernel (needs a CPU with AVX512-BF16)", kernel)
	}
	for _, tc := range []struct{ T, K, N int }{{1, 384, 32}, {2, 384, 64}, {3, 8, 32}, {4, 8, 32}, {5, 8, 32}, {6, 8, 32}, {7, 384, 32}, {8, 8, 32}, {9, 8, 64}, {10, 8, 32}, {11, 384, 384}, {12, 384, 1152}, {13, 1536, 384}, {24, 384, 1536}, {61, 1536, 384}, {128, 384, 96}} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		for i := range x {
			x[i] *= 4 // a range of exponents, as activations have
		}
		xr, wr := slices.Clone(x), slices.Clone(w)
		for i := range xr {
			xr[i] = roundBF16(xr[i])
		}
		for i := range wr {
			wr[i] = roundBF16(wr[i])
		}
		want := make([]float32, tc.T*tc.N)
		matmulGo(want, xr, tc.T, tc.K, tc.N, wr, b, 0, tc.N/panel)
		// Dirty output and a dirty, too long conversion buffer, as pooled
		// ones are.
		got := randMat(tc.T*tc.N + 1)[:tc.T*tc.N]
		xb := make([]uint32, 8192)
		for i := range xb {
			xb[i] = 0x3f803f80 // 1, 1
		}
		xb = linearBF16(got, x, xb, tc.T, tc.K, tc.N, packBF16(w, tc.K, tc.N), b, 2)
		// The bound: a few float32 roundings of the sum of the products'
		// magnitudes (the sums cancel, so relative to the result says
		// nothing).
		mag := make([]float32, tc.T*tc.N)
		matmulGo(mag, absAll(xr), tc.T, tc.K, tc.N, absAll(wr), absAll(b), 0, tc.N/panel)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*float64(mag[i]) {
				t.Fatalf("bf16 %v: [%d] = %g, plain Go on bf16 inputs %g (sum of magnitudes %g)", tc, i, got[i], want[i], mag[i])
			}
		}
		if len(xb) != tc.T*tc.K/2 {
			t.Fatalf("bf16 %v: conversion buffer of %d", tc, len(xb))
		}
	}
}

func TestBF16Bits(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint32
	}{
		{1, 0x3f80},
		{-2, 0xc000},
		{0, 0},
		{math.Float32frombits(0x3f808000), 0x3f80}, // a tie: to even
		{math.Float32frombits(0x3f818000), 0x3f82}, // a tie: to even, up
		{math.Float32frombits(0x3f808001), 0x3f81}, // above the tie
		{float32(math.Inf(1)), 0x7f80},
		{math.Float32frombits(0x7f7fffff), 0x7f80}, // the largest float32 rounds to +Inf
	} {
		if got := bf16Bits(tc.in); got != tc.want {
			t.Errorf("bf16Bits(%g = %#x) = %#x, want %#x", tc.in, math.Float32bits(tc.in), got, tc.want)
		}
	}
	if got := bf16Bits(float32(math.NaN())); got&0x7f80 != 0x7f80 || got&0x7f == 0 {
		t.Errorf("bf16Bits(NaN) = %#x, not a NaN", got)
	}
}

func absAll(x []float32) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = abs32(v)
	}
	return y
}

// TestBF16Pairs checks the conversion in use against bf16Bits, on normal
// values of every magnitude (subnormals are flushed to zero by the SIMD
// conversion, and do not occur in the encoder).
func TestBF16Pairs(t *testing.T) {
	for _, n := range []int{2, 16, 30, 32, 34, 1000} {
		src := randMat(n)
		for i := range src {
			src[i] *= float32(math.Pow(10, float64(i%60-30)))
		}
		src[0] = math.Float32frombits(0x3f808000) // a tie
		want, got := make([]uint32, n/2), make([]uint32, n/2)
		bf16PairsGo(want, src)
		bf16Pairs(got, src)
		if !slices.Equal(got, want) {
			t.Fatalf("bf16Pairs(%d values) = %x, want %x", n, got, want)
		}
	}
}

// TestKernelChoice checks that the assembly kernels are chosen on a CPU
// that has their instructions, whatever the build's GOEXPERIMENT (the
// package's tests run without one): a plain go build must not fall back
// to the plain Go kernels, which are about ten times slower.
func TestKernelChoice(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOEXPERIMENT" {
				t.Logf("built with GOEXPERIMENT=%s", s.Value)
			}
		}
	}
	var want []string
	switch {
	case runtime.GOARCH == "arm64":
		want = []string{"neon"}
	case runtime.GOARCH == "amd64" && cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		want = []string{"avx2-fma"}
		if cpu.X86.HasAVX512F {
			want = []string{"avx512", "avx512-bf16", "avx512-vnni"}
		}
	default:
		want = []string{"go"}
	}
	if !slices.Contains(want, Kernel()) {
		t.Fatalf("Kernel() = %q on %s, want one of %q", Kernel(), runtime.GOARCH, want)
	}
	if runtime.GOARCH == "amd64" && cpu.X86.HasAVX512BF16 && cpu.X86.HasAVX512F && Kernel() == "avx512" {
		t.Errorf("Kernel() = avx512 on a CPU with AVX512-BF16: the bf16 kernel was not chosen")
	}
}

// TestHalfKernel checks the float16 product in use against the float32
// one on the same values widened: the same sums in the same order, so the
// same bits.
func TestHalfKernel(t *testing.T) {
	t.Logf("kernel %s, float16 in assembly: %v", kernel, halfNative)
	for _, tc := range []struct{ T, K, N, p0, p1 int }{
		{1, 384, 32, 0, 2}, {3, 8, 48, 0, 3}, {5, 384, 64, 1, 4}, {6, 384, 16, 0, 1}, {7, 1, 48, 0, 3},
		{13, 1536, 384, 0, 24}, {20, 384, 1536, 0, 96}, {20, 384, 1536, 48, 96}, {61, 384, 80, 1, 5},
	} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		w16 := make([]uint16, len(w))
		for i, v := range w {
			// Round to a float16 value (keep 10 fraction bits).
			w[i] = math.Float32frombits(math.Float32bits(v) &^ 0x1fff)
			var ok bool
			if w16[i], ok = halfOf(w[i]); !ok {
				t.Fatalf("halfOf(%g) not exact", w[i])
			}
		}
		want := randMat(tc.T*tc.N + 1)[1:]
		before := slices.Clone(want)
		matmul(want, x, tc.T, tc.K, tc.N, w, b, tc.p0, tc.p1)
		kernels := append(halfKernels(), namedHalf{"matmulHalfGo", matmulHalfGo})
		for _, k := range kernels {
			got := slices.Clone(before)
			k.f(got, x, tc.T, tc.K, tc.N, w16, b, tc.p0, tc.p1)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s %+v: [%d] = %g, float32 kernel %g", k.name, tc, i, got[i], want[i])
				}
			}
		}
	}
}

// namedHalf is a float16 kernel, for tests.
type namedHalf struct {
	name string
	f    func(dst, x []float32, T, K, N int, w []uint16, b []float32, p0, p1 int)
}

// TestHalfOf checks the exact float32 → float16 conversion against every
// float16 value, and that values float16 cannot hold are refused.
func TestHalfOf(t *testing.T) {
	for h := range 1 << 16 {
		x := f16(uint16(h))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			continue
		}
		got, ok := halfOf(x)
		if !ok || f16(got) != x || (x != 0 && got != uint16(h)) {
			t.Fatalf("halfOf(%g) = %#04x %v, want %#04x", x, got, ok, h)
		}
	}
	for _, x := range []float32{1 + 0x1p-11, 0x1p-25, 65536, 1e-10, 0.1} {
		if h, ok := halfOf(x); ok {
			t.Errorf("halfOf(%g) = %#04x, ok: float16 does not hold it", x, h)
		}
	}
}
