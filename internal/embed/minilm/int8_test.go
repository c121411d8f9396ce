package minilm

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// TestI8Kernel checks the int8 product in use against matmulI8Go on the
// same quantized inputs (the integer sums are exact: only the float32
// rescaling may round differently), and the whole of linearI8 against
// float32 products of the dequantized inputs.
func TestI8Kernel(t *testing.T) {
	if !useI8 {
		t.Skipf("kernel %s: no int8 kernel (needs a CPU with AVX512-VNNI and AVX512-BF16)", kernel)
	}
	for _, tc := range []struct{ T, K, N int }{{1, 64, 32}, {2, 384, 64}, {3, 128, 64}, {4, 64, 32}, {5, 128, 32}, {6, 384, 1536}, {10, 384, 32}, {7, 1536, 384}, {11, 384, 96}, {12, 64, 32}, {61, 1536, 384}} {
		x, w, b := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N)
		for i := range x {
			x[i] = x[i]*4 + 1 // off-centre: a zero point other than 128
		}
		for i := 0; i < len(x); i += 97 {
			x[i] *= 20 // outliers, as activations have
		}
		wq := packI8(w, tc.K, tc.N)
		G := tc.K / i8Group
		xq, sa, nsz := make([]byte, tc.T*tc.K), make([]float32, tc.T*G), make([]float32, tc.T*G)
		quantizeU8Go(xq, sa, nsz, x, tc.T, tc.K)

		// The kernel against the plain Go sums, on a dirty output.
		want, got := make([]float32, tc.T*tc.N), randMat(tc.T*tc.N + 3)[3:]
		matmulI8Go(want, xq, sa, nsz, tc.T, tc.K, tc.N, wq, b, 0, tc.N/i8Panel)
		matmulI8(got, xq, sa, nsz, tc.T, tc.K, tc.N, wq, b, 0, tc.N/i8Panel)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("int8 %v: [%d] = %g, plain Go %g", tc, i, got[i], want[i])
			}
		}

		// linearI8 (with the quantizer in use and two goroutines)
		// against float32 products of the dequantized inputs.
		xd, wd := make([]float32, tc.T*tc.K), make([]float32, tc.K*tc.N)
		for tt := range tc.T {
			for k := range tc.K {
				g := tt*G + k/i8Group
				xd[tt*tc.K+k] = float32(xq[tt*tc.K+k])*sa[g] + nsz[g]
			}
		}
		for n := range tc.N {
			q, c := n/i8Panel, n%i8Panel
			for k := range tc.K {
				v := int8(wq.w[q*tc.K*i8Panel+k/4*4*i8Panel+c*4+k%4])
				wd[n/panel*tc.K*panel+k*panel+n%panel] = float32(v) * wq.sw[(q*G+k/i8Group)*2*i8Panel+c]
			}
		}
		ref, mag := make([]float32, tc.T*tc.N), make([]float32, tc.T*tc.N)
		matmulGo(ref, xd, tc.T, tc.K, tc.N, wd, b, 0, tc.N/panel)
		matmulGo(mag, absAll(xd), tc.T, tc.K, tc.N, absAll(wd), absAll(b), 0, tc.N/panel)
		var buf i8Buf
		buf.xq = slices.Repeat([]byte{0xff}, 100000) // dirty and too long, as pooled
		lin := randMat(tc.T * tc.N)
		linearI8(lin, x, &buf, tc.T, tc.K, tc.N, wq, b, 2)
		for i := range ref {
			if d := math.Abs(float64(lin[i] - ref[i])); d > 1e-5*float64(mag[i]) {
				t.Fatalf("linearI8 %v: [%d] = %g, float32 on dequantized inputs %g (sum of magnitudes %g)", tc, i, lin[i], ref[i], mag[i])
			}
		}
		// And the float32 product of the original inputs, loosely: what
		// quantization costs on uniform random values.
		exact := make([]float32, tc.T*tc.N)
		matmulGo(exact, x, tc.T, tc.K, tc.N, w, b, 0, tc.N/panel)
		for i := range exact {
			if d := math.Abs(float64(lin[i] - exact[i])); d > 0.02*float64(mag[i]) {
				t.Fatalf("linearI8 %v: [%d] = %g, float32 %g (sum of magnitudes %g)", tc, i, lin[i], exact[i], mag[i])
			}
		}
	}
}

// TestQuantizeU8 checks the quantizer in use against quantizeU8Go (a
// product rounding at a tie may differ by one step) and the plain one's
// bounds: every value within half a step of its dequantized value.
func TestQuantizeU8(t *testing.T) {
	for _, tc := range []struct {
		T, K  int
		scale float32
		shift float32
	}{{1, 64, 1, 0}, {3, 384, 4, 1}, {5, 1536, 30, -2}, {2, 128, 0, 0}, {4, 64, 1, 5}, {4, 64, 1, -5}} {
		x := randMat(tc.T * tc.K)
		for i := range x {
			x[i] = x[i]*tc.scale + tc.shift
		}
		G := tc.K / i8Group
		want, got := make([]byte, tc.T*tc.K), slices.Repeat([]byte{7}, tc.T*tc.K)
		sa, nsz := make([]float32, tc.T*G), make([]float32, tc.T*G)
		sa2, nsz2 := randMat(tc.T*G), randMat(tc.T*G)
		quantizeU8Go(want, sa, nsz, x, tc.T, tc.K)
		quantizeU8(got, sa2, nsz2, x, tc.T, tc.K)
		if !slices.Equal(sa, sa2) || !slices.Equal(nsz, nsz2) {
			t.Fatalf("quantizeU8 %v: scales %v / %v, plain Go %v / %v", tc, sa2, nsz2, sa, nsz)
		}
		differ := 0
		for i := range want {
			if d := int(got[i]) - int(want[i]); d < -1 || d > 1 {
				t.Fatalf("quantizeU8 %v: [%d] = %d, plain Go %d", tc, i, got[i], want[i])
			} else if d != 0 {
				differ++
			}
			g := i/tc.K*G + i%tc.K/i8Group
			for _, q := range []byte{want[i], got[i]} {
				back := float32(q)*sa[g] + nsz[g]
				if d := math.Abs(float64(back - x[i])); d > 0.5001*float64(sa[g])+1e-6 {
					t.Fatalf("quantizeU8 %v: [%d] = %g comes back as %g (step %g)", tc, i, x[i], back, sa[g])
				}
			}
		}
		if differ > len(want)/100 {
			t.Fatalf("quantizeU8 %v: %d of %d values differ from plain Go's", tc, differ, len(want))
		}
	}
}

// BenchmarkMatmulI8 is BenchmarkMatmulBF16 with the int8 kernel (the
// input quantized in each call, as linearI8 does).
func BenchmarkMatmulI8(b *testing.B) {
	if !useI8 {
		b.Skipf("kernel %s: no int8 kernel", kernel)
	}
	for _, tc := range []struct{ T, K, N int }{{20, 384, 1536}, {64, 384, 1536}, {64, 1536, 384}} {
		x, bias, dst := randMat(tc.T*tc.K), randMat(tc.N), make([]float32, tc.T*tc.N)
		w := packI8(randMat(tc.K*tc.N), tc.K, tc.N)
		var buf i8Buf
		b.Run(fmt.Sprintf("%dx%dx%d", tc.T, tc.K, tc.N), func(b *testing.B) {
			reportCPU(b, func() { linearI8(dst, x, &buf, tc.T, tc.K, tc.N, w, bias, 1) })
			b.ReportMetric(float64(tc.T*tc.K*tc.N)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
		})
	}
}
