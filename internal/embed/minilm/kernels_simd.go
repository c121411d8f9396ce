//go:build goexperiment.simd && amd64

package minilm

import (
	"math"
	"simd/archsimd"
	"unsafe"

	"golang.org/x/sys/cpu"
)

func init() {
	if archsimd.X86.AVX2() && archsimd.X86.FMA() {
		matmul, gelu, axpy, expSum, normRow = matmulAVX2, geluAVX2, axpyAVX2, expSumAVX2, normRowAVX2
		attendHeads = attendHeadsAVX2
		kernel = "avx2-fma"
		// HasAVX512 includes the operating system's saving of the
		// 512-bit registers.
		if cpu.X86.HasAVX512 && cpu.X86.HasAVX512BF16 {
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

// matmulAVX2 computes the same as matmulGo, bit for bit the same as
// matmulAVX2Small, with the assembly micro-kernel gemm6x16: blocks of 6
// tokens × one whole panel (16 columns), twelve vector accumulators held
// in registers for the whole of K. Measured on a 64×384 by 384×1536
// product, CPU time per call: 1.32 ms with matmulAVX2Small's 4 × 16 in
// archsimd (the compiler spills and shuffles accumulators in its inner
// loop, about 40 instructions for 8 multiply-adds), 0.71 ms with gemm6x16.
// The last T mod 6 tokens are a block that overlaps the one before (the
// shared rows are written again with the same values), or one row alone;
// sequences shorter than 6 tokens take matmulAVX2Small.
func matmulAVX2(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	if T < 6 || K == 0 {
		matmulAVX2Small(dst, x, T, K, N, w, b, p0, p1)
		return
	}
	x, dst = x[:T*K], dst[:T*N]
	for p := p0; p < p1; p++ {
		wp := w[p*K*panel : (p+1)*K*panel]
		col := p * panel
		bp := b[col : col+panel]
		_ = dst[(T-1)*N+col+panel-1]
		t := 0
		for ; t+6 <= T; t += 6 {
			gemm6x16(K, &x[t*K], K, &wp[0], &bp[0], &dst[t*N+col], N)
		}
		switch T - t {
		case 0:
		case 1:
			matmulAVX2Small(dst[t*N:], x[t*K:], 1, K, N, w, b, p, p+1)
		default:
			t = T - 6
			gemm6x16(K, &x[t*K], K, &wp[0], &bp[0], &dst[t*N+col], N)
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
		scale(row, 1/expSumAVX2(row, maxAVX2(row)))
		clear(p[i*Tp+T : (i+1)*Tp])
	}
}

// maxAVX2 is the largest of row, whose length is a positive multiple of 8.
func maxAVX2(row []float32) float32 {
	m := archsimd.LoadFloat32x8((*[8]float32)(row[:8]))
	for i := 8; i+8 <= len(row); i += 8 {
		m = m.Max(archsimd.LoadFloat32x8((*[8]float32)(row[i : i+8])))
	}
	var l [8]float32
	m.Store(&l)
	return max(max(max(l[0], l[1]), max(l[2], l[3])), max(max(l[4], l[5]), max(l[6], l[7])))
}

// scale multiplies row by a.
func scale(row []float32, a float32) {
	va := archsimd.BroadcastFloat32x8(a)
	i := 0
	for ; i+8 <= len(row); i += 8 {
		d := (*[8]float32)(row[i : i+8])
		archsimd.LoadFloat32x8(d).Mul(va).Store(d)
	}
	for ; i < len(row); i++ {
		row[i] *= a
	}
}

// matmulAVX2Small computes the same as matmulGo with archsimd fused
// multiply-adds, for sequences too short for gemm6x16: blocks of 4 tokens
// × one whole panel (16 columns, two 8-wide vectors), eight vector
// accumulators; each step loads the panel's 16 weights for one input once
// and broadcasts one input value per token. In archsimd, measured on a
// 48×384 by 384×1536 product, CPU time per call: this 0.95 ms; 6 tokens
// × 16 columns 1.39 ms and 8 × 8 1.85 ms (the compiler spills
// accumulators: its fused multiply-add overwrites the multiplicand, so
// every shared operand is copied); AVX-512, 8 tokens × 16 columns, 2.1 ms.
func matmulAVX2Small(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	for p := p0; p < p1; p++ {
		wp := w[p*K*panel : (p+1)*K*panel]
		col := p * panel
		bl := archsimd.LoadFloat32x8((*[8]float32)(b[col : col+8]))
		bh := archsimd.LoadFloat32x8((*[8]float32)(b[col+8 : col+16]))
		t := 0
		for ; t+4 <= T; t += 4 {
			x0 := x[t*K : t*K+K]
			x1 := x[(t+1)*K : (t+1)*K+K][:len(x0)]
			x2 := x[(t+2)*K : (t+2)*K+K][:len(x0)]
			x3 := x[(t+3)*K : (t+3)*K+K][:len(x0)]
			a0l, a0h, a1l, a1h := bl, bh, bl, bh
			a2l, a2h, a3l, a3h := bl, bh, bl, bh
			w0 := unsafe.Pointer(unsafe.SliceData(wp))
			for k := range x0 {
				// Never a pointer past the panel (checkptr rejects one).
				wk := unsafe.Add(w0, k*4*panel)
				wl := archsimd.LoadFloat32x8((*[8]float32)(wk))
				wh := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(wk, 32)))
				v := archsimd.BroadcastFloat32x8(x0[k])
				a0l = v.MulAdd(wl, a0l)
				a0h = v.MulAdd(wh, a0h)
				v = archsimd.BroadcastFloat32x8(x1[k])
				a1l = v.MulAdd(wl, a1l)
				a1h = v.MulAdd(wh, a1h)
				v = archsimd.BroadcastFloat32x8(x2[k])
				a2l = v.MulAdd(wl, a2l)
				a2h = v.MulAdd(wh, a2h)
				v = archsimd.BroadcastFloat32x8(x3[k])
				a3l = v.MulAdd(wl, a3l)
				a3h = v.MulAdd(wh, a3h)
			}
			store16(dst[t*N+col:], a0l, a0h)
			store16(dst[(t+1)*N+col:], a1l, a1h)
			store16(dst[(t+2)*N+col:], a2l, a2h)
			store16(dst[(t+3)*N+col:], a3l, a3h)
		}
		for ; t < T; t++ {
			al, ah := bl, bh
			w0 := unsafe.Pointer(unsafe.SliceData(wp))
			for k, xv := range x[t*K : t*K+K] {
				wk := unsafe.Add(w0, k*4*panel)
				wl := archsimd.LoadFloat32x8((*[8]float32)(wk))
				wh := archsimd.LoadFloat32x8((*[8]float32)(unsafe.Add(wk, 32)))
				v := archsimd.BroadcastFloat32x8(xv)
				al = v.MulAdd(wl, al)
				ah = v.MulAdd(wh, ah)
			}
			store16(dst[t*N+col:], al, ah)
		}
	}
}

func store16(d []float32, lo, hi archsimd.Float32x8) {
	d = d[:16]
	lo.Store((*[8]float32)(d[:8]))
	hi.Store((*[8]float32)(d[8:]))
}

// geluAVX2 is geluGo eight at a time, with erf32's rational approximation
// evaluated by fused multiply-adds.
func geluAVX2(x []float32) {
	bc := archsimd.BroadcastFloat32x8
	lo, hi := bc(-4), bc(4)
	half, one, scale := bc(0.5), bc(1), bc(math.Sqrt2/2)
	p0, p1, p2, p3 := bc(-2.72614225801306e-10), bc(2.77068142495902e-08), bc(-2.10102402082508e-06), bc(-5.69250639462346e-05)
	p4, p5, p6 := bc(-7.34990630326855e-04), bc(-2.95459980854025e-03), bc(-1.60960333262415e-02)
	q0, q1, q2, q3, q4 := bc(-1.45660718464996e-05), bc(-2.13374055278905e-04), bc(-1.68282697438203e-03), bc(-7.37332916720468e-03), bc(-1.42647390514189e-02)
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := archsimd.LoadFloat32x8((*[8]float32)(x[i : i+8]))
		z := v.Mul(scale).Max(lo).Min(hi)
		z2 := z.Mul(z)
		p := z2.MulAdd(p0, p1)
		p = z2.MulAdd(p, p2)
		p = z2.MulAdd(p, p3)
		p = z2.MulAdd(p, p4)
		p = z2.MulAdd(p, p5)
		p = z2.MulAdd(p, p6)
		q := z2.MulAdd(q0, q1)
		q = z2.MulAdd(q, q2)
		q = z2.MulAdd(q, q3)
		q = z2.MulAdd(q, q4)
		erf := z.Mul(p).Div(q)
		v.Mul(half).Mul(erf.Add(one)).Store((*[8]float32)(x[i : i+8]))
	}
	geluGo(x[i:])
}

func axpyAVX2(dst, x []float32, a float32) {
	x = x[:len(dst)]
	va := archsimd.BroadcastFloat32x8(a)
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		d := (*[8]float32)(dst[i : i+8])
		va.MulAdd(archsimd.LoadFloat32x8((*[8]float32)(x[i:i+8])), archsimd.LoadFloat32x8(d)).Store(d)
	}
	for ; i < len(dst); i++ {
		dst[i] += a * x[i]
	}
}

// expSumAVX2 is expSumGo eight at a time, exp32's method in vectors
// (below -87 it gives e^-87 instead of 0: no difference to a softmax).
func expSumAVX2(row []float32, mx float32) float32 {
	bc := archsimd.BroadcastFloat32x8
	vmx, lo, log2e := bc(mx), bc(-87), bc(math.Log2E)
	c1, c2 := bc(0.693145751953125), bc(1.428606765330187e-06)
	k6, k5, k4, k3, k2, k1 := bc(1.0/720), bc(1.0/120), bc(1.0/24), bc(1.0/6), bc(0.5), bc(1)
	bias := archsimd.BroadcastInt32x8(127)
	acc := bc(0)
	i := 0
	for ; i+8 <= len(row); i += 8 {
		p := (*[8]float32)(row[i : i+8])
		x := archsimd.LoadFloat32x8(p).Sub(vmx).Max(lo)
		n := x.Mul(log2e).RoundToEven()
		r := x.Sub(n.Mul(c1)).Sub(n.Mul(c2))
		q := r.MulAdd(k6, k5)
		q = q.MulAdd(r, k4)
		q = q.MulAdd(r, k3)
		q = q.MulAdd(r, k2)
		q = q.MulAdd(r, k1)
		q = q.MulAdd(r, k1)
		e := q.Mul(n.ConvertToInt32().Add(bias).ShiftAllLeft(23).AsFloat32x8())
		e.Store(p)
		acc = acc.Add(e)
	}
	return hsum(acc) + expSumGo(row[i:], mx)
}

// normRowAVX2 is normRowGo with 8-wide float32 sums (two passes, so no
// cancellation) for rows whose length is a multiple of 8.
func normRowAVX2(row, add, g, b []float32, eps float32) {
	n := len(row)
	if n%8 != 0 {
		normRowGo(row, add, g, b, eps)
		return
	}
	g, b = g[:n], b[:n]
	load := func(s []float32, i int) archsimd.Float32x8 { return archsimd.LoadFloat32x8((*[8]float32)(s[i : i+8])) }
	acc := archsimd.BroadcastFloat32x8(0)
	if add != nil {
		add = add[:n]
		for i := 0; i < n; i += 8 {
			v := load(row, i).Add(load(add, i))
			v.Store((*[8]float32)(row[i : i+8]))
			acc = acc.Add(v)
		}
	} else {
		for i := 0; i < n; i += 8 {
			acc = acc.Add(load(row, i))
		}
	}
	mean := hsum(acc) / float32(n)
	vm := archsimd.BroadcastFloat32x8(mean)
	acc = archsimd.BroadcastFloat32x8(0)
	for i := 0; i < n; i += 8 {
		d := load(row, i).Sub(vm)
		acc = d.MulAdd(d, acc)
	}
	inv := archsimd.BroadcastFloat32x8(float32(1 / math.Sqrt(float64(hsum(acc)/float32(n))+float64(eps))))
	for i := 0; i < n; i += 8 {
		load(row, i).Sub(vm).Mul(inv).MulAdd(load(g, i), load(b, i)).Store((*[8]float32)(row[i : i+8]))
	}
}

func hsum(v archsimd.Float32x8) float32 {
	var l [8]float32
	v.Store(&l)
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}
