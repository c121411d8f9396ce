package minilm

import (
	"math"

	"golang.org/x/sys/cpu"
)

// The amd64 kernels are Go assembly (gemm_amd64.s, vec_amd64.s,
// gemm_bf16_amd64.s, gemm_i8_amd64.s), chosen here by what the CPU and
// the operating system support: every build has them, with no
// GOEXPERIMENT. cpu.X86's AVX flags include the operating system's saving
// of the vector registers.
func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		matmul, gelu, axpy, expSum, normRow = matmulAVX2, geluAVX2, axpyAVX2, expSumAVX2, normRowAVX2
		attendHeads = attendHeadsAVX2
		kernel = "avx2-fma"
		if cpu.X86.HasF16C {
			matmulHalf, halfNative = matmulHalfAVX2, true
		}
		if cpu.X86.HasAVX512F {
			matmul, kernel = matmulAVX512, "avx512"
			matmulHalf, halfNative = matmulHalfAVX512, true
		}
		if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 {
			matmulBF16, bf16Pairs, useBF16 = matmulBF16AVX512, bf16PairsAVX512, true
			kernel = "avx512-bf16"
			if cpu.X86.HasAVX512VNNI {
				matmulI8, quantizeU8, useI8 = matmulI8AVX512, quantizeU8AVX512, true
				kernel = "avx512-vnni"
			}
		}
	}
}

// cvtBF16 rounds n float32 (a multiple of 16) at src to bfloat16 at dst
// with VCVTNEPS2BF16 (gemm_bf16_amd64.s): to nearest even, as bf16Bits,
// except that subnormal inputs become zero.
//
//go:noescape
func cvtBF16(dst *uint32, src *float32, n int)

// bf16PairsAVX512 is bf16PairsGo with cvtBF16 for all but the last
// len(src) mod 16 values.
func bf16PairsAVX512(dst []uint32, src []float32) {
	src = src[:2*len(dst)]
	n := len(src) &^ 15
	if n > 0 {
		cvtBF16(&dst[0], &src[0], n)
	}
	bf16PairsGo(dst[n/2:], src[n:])
}

// gemmBF16x12 is the micro-kernel of matmulBF16AVX512
// (gemm_bf16_amd64.s, written by gemm_bf16_gen.py): 12 rows of x as
// bfloat16 pairs (k2 pairs each, ldx apart) times the packed bf16 panel w
// (k2 pairs × bfPanel columns) plus b[:bfPanel] into 12 rows of dst (ldd
// apart), float32.
//
//go:noescape
func gemmBF16x12(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

// gemmBF16x11 … gemmBF16x1 are gemmBF16x12 for fewer rows.

//go:noescape
func gemmBF16x11(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x10(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x9(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x8(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x7(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x6(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x5(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x4(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x3(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x2(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmBF16x1(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int)

// gemmBF16Tail is gemmBF16x1 … gemmBF16x11 by their rows.
var gemmBF16Tail = [bfRows]func(k2 int, x *uint32, ldx int, w *uint32, b *float32, dst *float32, ldd int){
	nil, gemmBF16x1, gemmBF16x2, gemmBF16x3, gemmBF16x4, gemmBF16x5, gemmBF16x6,
	gemmBF16x7, gemmBF16x8, gemmBF16x9, gemmBF16x10, gemmBF16x11,
}

// matmulBF16AVX512 is matmulBF16 with gemmBF16x12: blocks of 12 tokens ×
// 32 columns, 24 zmm accumulators held for the whole of K, the last T mod
// 12 tokens in one block of their own size (no row computed twice, none
// past T). Measured on a 64×384 by 384×1536 product, CPU time per call:
// 0.44 ms, against 0.73 ms with gemm6x16 in float32.
func matmulBF16AVX512(dst []float32, xb []uint32, T, K, N int, w []uint32, b []float32, q0, q1 int) {
	if T == 0 {
		return
	}
	K2 := K / 2
	xb, dst = xb[:T*K2], dst[:T*N]
	for q := q0; q < q1; q++ {
		wq := w[q*K2*bfPanel : (q+1)*K2*bfPanel]
		col := q * bfPanel
		bq := b[col : col+bfPanel]
		_ = dst[(T-1)*N+col+bfPanel-1]
		t := 0
		for ; t+bfRows <= T; t += bfRows {
			gemmBF16x12(K2, &xb[t*K2], K2, &wq[0], &bq[0], &dst[t*N+col], N)
		}
		if t < T {
			gemmBF16Tail[T-t](K2, &xb[t*K2], K2, &wq[0], &bq[0], &dst[t*N+col], N)
		}
	}
}

// gemmI8x6 is the micro-kernel of matmulI8AVX512 (gemm_i8_amd64.s,
// written by gemm_i8_gen.py): 6 rows of u8 activations (groups·i8Group
// bytes each, ldx apart; scales sa and −s·z nsz, lds apart) times the
// packed int8 panel w (column scales and scaled sums sw) plus b[:32] into
// 6 rows of dst (ldd apart), 32 columns each. gemmI8x1 … gemmI8x5 are the
// same for fewer rows.
//
//go:noescape
func gemmI8x6(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmI8x5(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmI8x4(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmI8x3(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmI8x2(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

//go:noescape
func gemmI8x1(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int)

// gemmI8Tail is gemmI8x1 … gemmI8x5 by their rows.
var gemmI8Tail = [i8Rows]func(groups int, x *byte, ldx int, sa *float32, nsz *float32, lds int, w *byte, sw *float32, b *float32, dst *float32, ldd int){
	nil, gemmI8x1, gemmI8x2, gemmI8x3, gemmI8x4, gemmI8x5,
}

// quantizeU8Groups quantizes n consecutive groups of i8Group values as
// quantizeU8Go does (gemm_i8_amd64.s).
//
//go:noescape
func quantizeU8Groups(n int, x *float32, xq *byte, sa *float32, nsz *float32)

// quantizeU8AVX512 is quantizeU8Go with quantizeU8Groups (the rows of x
// are whole groups, one after the other). The product v·(1/s) + z is one
// fused multiply-add there: a value at a tie may round the other way.
func quantizeU8AVX512(xq []byte, sa, nsz, x []float32, T, K int) {
	n := T * K / i8Group
	if n == 0 {
		return
	}
	_, _, _, _ = xq[T*K-1], sa[n-1], nsz[n-1], x[T*K-1]
	quantizeU8Groups(n, &x[0], &xq[0], &sa[0], &nsz[0])
}

// matmulI8AVX512 is matmulI8 with gemmI8x6: blocks of 6 tokens × 32
// columns, the last T mod 6 tokens in one block of their own size (no
// row computed twice, none past T).
func matmulI8AVX512(dst []float32, xq []byte, sa, nsz []float32, T, K, N int, w *i8Mat, b []float32, q0, q1 int) {
	if T == 0 {
		return
	}
	G := K / i8Group
	xq, sa, nsz, dst = xq[:T*K], sa[:T*G], nsz[:T*G], dst[:T*N]
	for q := q0; q < q1; q++ {
		wq := w.w[q*K*i8Panel : (q+1)*K*i8Panel]
		sw := w.sw[q*G*2*i8Panel : (q+1)*G*2*i8Panel]
		col := q * i8Panel
		bq := b[col : col+i8Panel]
		_ = dst[(T-1)*N+col+i8Panel-1]
		t := 0
		for ; t+i8Rows <= T; t += i8Rows {
			gemmI8x6(G, &xq[t*K], K, &sa[t*G], &nsz[t*G], G, &wq[0], &sw[0], &bq[0], &dst[t*N+col], N)
		}
		if t < T {
			gemmI8Tail[T-t](G, &xq[t*K], K, &sa[t*G], &nsz[t*G], G, &wq[0], &sw[0], &bq[0], &dst[t*N+col], N)
		}
	}
}

// matmulAVX2 computes the same as matmulGo with the assembly
// micro-kernel gemm6x16 (blocks): blocks of 6 tokens × one whole panel
// (16 columns), twelve vector accumulators held in registers for the
// whole of K. Every row's sums start from the bias and add the products
// in k order, whichever block computes it. Measured on a 64×384 by
// 384×1536 product, CPU time per call: 0.71 ms, against 1.32 ms for 4 × 16
// blocks compiled from Go's SIMD intrinsics (the compiler spills and
// shuffles accumulators in its inner loop).
func matmulAVX2(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	blocks(dst, x, T, K, N, w, b, p0, p1, gemm6x16, nil)
}

// gemm6x32 is gemm6x16 for two adjacent panels in AVX-512 registers
// (gemm_amd64.s): the same sums, in the same order.
//
//go:noescape
func gemm6x32(k int, x *float32, ldx int, w *float32, b *float32, dst *float32, ldd int)

// matmulAVX512 computes what matmulAVX2 does, the same bits, with
// gemm6x32 on pairs of panels (6 tokens × 32 columns per block) and
// gemm6x16 on a panel left over. Measured on this package's
// BenchmarkMatmul (an x86-64 server CPU with AVX-512), million
// multiply-adds per CPU-second, against matmulAVX2: 39,500 against 27,300
// for 20 tokens × 384 × 1536, 49,200 against 35,800 for 256 tokens.
func matmulAVX512(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	blocks(dst, x, T, K, N, w, b, p0, p1, gemm6x16, gemm6x32)
}

// gemm6x16h and gemm6x32h are gemm6x16 and gemm6x32 for panels of
// float16 weights (gemm_amd64.s), widened to float32 as they are loaded:
// the same sums of the same values in the same order.
//
//go:noescape
func gemm6x16h(k int, x *float32, ldx int, w *uint16, b *float32, dst *float32, ldd int)

//go:noescape
func gemm6x32h(k int, x *float32, ldx int, w *uint16, b *float32, dst *float32, ldd int)

// matmulHalfAVX2 is matmulAVX2 for float16 weights, with gemm6x16h.
func matmulHalfAVX2(dst, x []float32, T, K, N int, w []uint16, b []float32, p0, p1 int) {
	blocks(dst, x, T, K, N, w, b, p0, p1, gemm6x16h, nil)
}

// matmulHalfAVX512 is matmulAVX512 for float16 weights: gemm6x32h on
// pairs of panels, gemm6x16h on one left over.
func matmulHalfAVX512(dst, x []float32, T, K, N int, w []uint16, b []float32, p0, p1 int) {
	blocks(dst, x, T, K, N, w, b, p0, p1, gemm6x16h, gemm6x32h)
}

// kernel6 is a micro-kernel of 6 rows of x times one panel (gemm6x16,
// gemm6x16h) or two adjacent ones (gemm6x32, gemm6x32h) of weights W.
type kernel6[W float32 | uint16] func(k int, x *float32, ldx int, w *W, b *float32, dst *float32, ldd int)

// blocks runs the micro-kernels over panels [p0, p1) in blocks of 6
// tokens, the last T mod 6 a block overlapping the one before (its shared
// rows are written again with the same values); a sequence shorter than 6
// tokens is copied into a block of 6 padded with zero rows, and only its
// own rows are kept. With two (not nil), two panels at a time, one on a
// panel left over.
func blocks[W float32 | uint16](dst, x []float32, T, K, N int, w []W, b []float32, p0, p1 int, one, two kernel6[W]) {
	if T == 0 || p0 >= p1 {
		return
	}
	rows, ld, out, col0 := T, N, dst, 0
	xs := x[:T*K]
	if T < 6 {
		// Short: six rows, T of them x's, the rest zero, into a
		// block of its own (the columns of [p0, p1) only).
		pad := make([]float32, 6*K+6*(p1-p0)*panel)
		copy(pad, x[:T*K])
		xs, rows, ld, out, col0 = pad[:6*K], 6, (p1-p0)*panel, pad[6*K:], p0*panel
	}
	_ = w[p1*K*panel-1]
	for p := p0; p < p1; {
		col := p * panel
		k, n := one, 1
		if two != nil && p+2 <= p1 {
			k, n = two, 2
		}
		_, _ = out[(rows-1)*ld+col-col0+n*panel-1], b[col+n*panel-1]
		for t := 0; ; t += 6 {
			t = min(t, rows-6)
			k(K, &xs[t*K], K, &w[p*K*panel], &b[col], &out[t*ld+col-col0], ld)
			if t+6 == rows {
				break
			}
		}
		p += n
	}
	if T < 6 {
		for t := range T {
			copy(dst[t*N+p0*panel:t*N+p1*panel], out[t*ld:(t+1)*ld])
		}
	}
}

// attendHeadsAVX2 is attendHeadsGemm with the softmax in AVX2.
func attendHeadsAVX2(ctx, qkv, prob, kt, vp []float32, T, H, heads, h0, h1 int) {
	attendHeadsGemm(ctx, qkv, prob, kt, vp, T, H, heads, h0, h1, softmaxAVX2)
}

// softmaxAVX2 turns the T rows of scores p (Tp apart) into weights. It
// runs over whole vectors: the scores past T are set to -∞, which become
// e^-87 (below half an ulp of a sum ≥ 1, so the sum is unchanged), then
// zero.
func softmaxAVX2(p []float32, T, Tp int) {
	T8 := (T + 7) / 8 * 8
	for i := range T {
		row := p[i*Tp : i*Tp+T8]
		for j := T; j < T8; j++ {
			row[j] = float32(math.Inf(-1))
		}
		scaleVec(&row[0], T8, 1/expSumVec(&row[0], T8, maxVec(&row[0], T8)))
		clear(p[i*Tp+T : (i+1)*Tp])
	}
}

// The element-wise kernels of vec_amd64.s (written by vec_gen.py), on n
// float32, n a multiple of 8: the Go functions below pass them whole
// vectors and do any rest themselves.

//go:noescape
func geluVec(x *float32, n int)

//go:noescape
func axpyVec(dst, x *float32, n int, a float32)

//go:noescape
func expSumVec(row *float32, n int, mx float32) float32

//go:noescape
func maxVec(row *float32, n int) float32

//go:noescape
func scaleVec(row *float32, n int, a float32)

//go:noescape
func sumVec(row, add *float32, n int) float32

//go:noescape
func sqDevVec(row *float32, n int, mean float32) float32

//go:noescape
func normVec(row, gain, bias *float32, n int, mean, inv float32)

// geluAVX2 is geluGo eight at a time, with erf32's rational approximation
// evaluated by fused multiply-adds.
func geluAVX2(x []float32) {
	n := len(x) &^ 7
	if n > 0 {
		geluVec(&x[0], n)
	}
	geluGo(x[n:])
}

func axpyAVX2(dst, x []float32, a float32) {
	x = x[:len(dst)]
	n := len(dst) &^ 7
	if n > 0 {
		axpyVec(&dst[0], &x[0], n, a)
	}
	for i := n; i < len(dst); i++ {
		dst[i] += a * x[i]
	}
}

// expSumAVX2 is expSumGo eight at a time, exp32's method in vectors
// (below -87 it gives e^-87 instead of 0: no difference to a softmax).
func expSumAVX2(row []float32, mx float32) float32 {
	n := len(row) &^ 7
	var s float32
	if n > 0 {
		s = expSumVec(&row[0], n, mx)
	}
	return s + expSumGo(row[n:], mx)
}

// normRowAVX2 is normRowGo with 8-wide float32 sums (two passes, so no
// cancellation) for rows whose length is a multiple of 8.
func normRowAVX2(row, add, g, b []float32, eps float32) {
	n := len(row)
	if n == 0 || n%8 != 0 {
		normRowGo(row, add, g, b, eps)
		return
	}
	g, b = g[:n], b[:n]
	var ap *float32
	if add != nil {
		ap = &add[:n][0]
	}
	mean := sumVec(&row[0], ap, n) / float32(n)
	inv := float32(1 / math.Sqrt(float64(sqDevVec(&row[0], n, mean)/float32(n))+float64(eps)))
	normVec(&row[0], &g[0], &b[0], n, mean, inv)
}
