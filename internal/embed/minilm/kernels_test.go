package minilm

import (
	"math"
	"slices"
	"testing"
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

// TestKernels checks the kernels in use (SIMD ones when built with
// GOEXPERIMENT=simd on a CPU that has them) against the plain Go ones,
// on shapes that exercise every remainder path.
func TestKernels(t *testing.T) {
	t.Logf("kernel %s", kernel)
	for _, tc := range []struct{ T, K, N int }{{1, 384, 16}, {2, 384, 32}, {3, 8, 48}, {5, 384, 1152}, {6, 384, 16}, {7, 1536, 384}, {11, 40, 32}, {12, 384, 48}, {20, 384, 1536}, {61, 1536, 32}} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		want, got := make([]float32, tc.T*tc.N), make([]float32, tc.T*tc.N)
		matmulGo(want, x, tc.T, tc.K, tc.N, w, b, 0, tc.N/panel)
		matmul(got, x, tc.T, tc.K, tc.N, w, b, 0, tc.N/panel)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("matmul %v: [%d] = %g, plain Go %g", tc, i, got[i], want[i])
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
