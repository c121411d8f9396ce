package minilm

import (
	"math"
	"sync"
)

// work is the memory of one forward pass, pooled per Model.
type work struct {
	ids  []int32
	word []byte
	x    []float32 // T × H, the hidden state
	qkv  []float32 // T × 3H
	ctx  []float32 // T × H, attention output before its projection
	tmp  []float32 // T × H
	up   []float32 // T × I
	prob []float32 // heads × T × T attention weights
	kt   []float32 // heads × head size × T: each head's keys, transposed
	vp   []float32 // heads × head size × T: each head's values (SIMD kernels)
	xb   []uint32  // a product's input as bfloat16 pairs (bf16 kernel)
	i8   i8Buf     // a product's input as u8 (int8 kernel)
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// parallelMin is the number of multiply-adds below which a matrix product
// stays on one goroutine: waking another costs a few microseconds.
const parallelMin = 1 << 19

// forward runs the encoder over wk.ids and writes the pooled, normalised
// vector into v; its matrix products take the bf16 kernel when bf is not
// nil.
func (m *Model) forward(wk *work, v []float32, threads int, bf *bfWeights) {
	T, H, I, heads := len(wk.ids), Dim, int(m.h.Inter), int(m.h.Heads)
	wk.x = grow(wk.x, T*H)
	wk.qkv = grow(wk.qkv, T*3*H)
	wk.ctx = grow(wk.ctx, T*H)
	wk.tmp = grow(wk.tmp, T*H)
	wk.up = grow(wk.up, T*I)
	Tp := (T + panel - 1) / panel * panel // T rounded up to whole panels
	wk.prob = grow(wk.prob, heads*T*Tp)
	wk.kt = grow(wk.kt, H*Tp)
	wk.vp = grow(wk.vp, H*Tp)
	w, l, eps := m.w, &m.lay, m.h.Eps
	at := func(off uint64, n int) []float32 { return w[off : off+uint64(n) : off+uint64(n)] }
	// A version-2 file's matrices are float16, its query unscaled.
	half := m.w16 != nil
	at16 := func(off uint64, n int) []uint16 { return m.w16[2*off : 2*off+uint64(n) : 2*off+uint64(n)] }
	qScale := float32(1 / math.Sqrt(float64(H/heads)))

	for t, id := range wk.ids {
		we := at(l.word+uint64(id)*uint64(H), H)
		pe := at(l.pos+uint64(t)*uint64(H), H)
		row := wk.x[t*H : (t+1)*H]
		for i := range row {
			row[i] = we[i] + pe[i]
		}
	}
	layerNorm(wk.x, nil, T, H, at(l.embLNg, H), at(l.embLNb, H), eps)
	for li, ll := range l.layers {
		var bl bfLayer // no packed weights: the float32 kernels
		if bf != nil {
			bl = bf.layers[li]
		}
		// prod is one of the layer's four products: x (T × K) times the
		// weights at off (K × N) plus the bias at boff, into dst; in int8
		// when the layer has wq, in bf16 when it has wb.
		prod := func(dst, x []float32, K, N int, off, boff uint64, wb []uint32, wq *i8Mat) {
			switch {
			case wq != nil:
				linearI8(dst, x, &wk.i8, T, K, N, wq, at(boff, N), threads)
			case wb != nil:
				wk.xb = linearBF16(dst, x, wk.xb, T, K, N, wb, at(boff, N), threads)
			case half:
				linearHalf(dst, x, T, K, N, at16(off, K*N), at(boff, N), threads)
			default:
				linear(dst, x, T, K, N, at(off, K*N), at(boff, N), threads)
			}
		}
		prod(wk.qkv, wk.x, H, 3*H, ll.qkvW, ll.qkvB, bl.qkv, nil)
		if half {
			scaleQuery(wk.qkv, T, H, qScale)
		}
		attention(wk.ctx, wk.qkv, wk.prob, wk.kt, wk.vp, T, H, heads, threads)
		prod(wk.tmp, wk.ctx, H, H, ll.outW, ll.outB, bl.out, nil)
		layerNorm(wk.x, wk.tmp, T, H, at(ll.ln1g, H), at(ll.ln1b, H), eps)
		prod(wk.up, wk.x, H, I, ll.upW, ll.upB, bl.up, bl.upQ)
		gelu(wk.up)
		prod(wk.tmp, wk.up, I, H, ll.downW, ll.downB, bl.down, bl.downQ)
		layerNorm(wk.x, wk.tmp, T, H, at(ll.ln2g, H), at(ll.ln2b, H), eps)
	}

	// Mean over every token ([CLS] and [SEP] too, as sentence-transformers
	// does with its attention mask), then L2.
	var sum [Dim]float64
	for t := range T {
		for i, x := range wk.x[t*H : (t+1)*H] {
			sum[i] += float64(x)
		}
	}
	var norm float64
	for _, s := range sum {
		norm += s * s
	}
	inv := 0.0
	if norm > 0 {
		inv = 1 / math.Sqrt(norm)
	}
	for i := range v {
		v[i] = float32(sum[i] * inv)
	}
}

// linear sets dst (T × N) to x (T × K) times the packed weights w plus b,
// splitting the weight panels across up to threads goroutines.
func linear(dst, x []float32, T, K, N int, w, b []float32, threads int) {
	panels, parts := panelParts(T, K, N, threads)
	if parts <= 1 { // no closure: the one-goroutine path allocates nothing
		matmul(dst, x, T, K, N, w, b, 0, panels)
		return
	}
	byPanels(panels, parts, func(p0, p1 int) { matmul(dst, x, T, K, N, w, b, p0, p1) })
}

// panelParts is the number of output panels of a T × K by K × N product
// and how many goroutines share them: up to threads, one when the product
// is small (waking another costs more than it saves).
func panelParts(T, K, N, threads int) (panels, parts int) {
	panels = N / panel
	return panels, min(threads, panels, max(1, T*K*N/parallelMin))
}

// byPanels runs f over panels split into parts ranges, each on its own
// goroutine (the first on this one).
func byPanels(panels, parts int, f func(p0, p1 int)) {
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { f(i*panels/parts, (i+1)*panels/parts) })
	}
	f(0, panels/parts)
	wg.Wait()
}

// attention is multi-head self-attention over one unpadded sequence (so
// there is nothing to mask): for each head, softmax(Q·Kᵀ)·V, the query
// already scaled by 1/sqrt(head size) at conversion.
// prob holds heads × T × T rounded up to whole panels, kt and vp H × T
// rounded up likewise (vp is used by the SIMD kernels only).
func attention(ctx, qkv, prob, kt, vp []float32, T, H, heads, threads int) {
	parts := min(threads, heads, max(1, 2*T*T*H/parallelMin))
	if parts <= 1 {
		attendHeads(ctx, qkv, prob, kt, vp, T, H, heads, 0, heads)
		return
	}
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { attendHeads(ctx, qkv, prob, kt, vp, T, H, heads, i*heads/parts, (i+1)*heads/parts) })
	}
	attendHeads(ctx, qkv, prob, kt, vp, T, H, heads, 0, heads/parts)
	wg.Wait()
}

// attendHeadsGo computes heads [h0, h1) of attention, one query at a time.
func attendHeadsGo(ctx, qkv, prob, kt, _ []float32, T, H, heads, h0, h1 int) {
	dh := H / heads
	stride := 3 * H
	for h := h0; h < h1; h++ {
		// Kᵀ of this head, so that a query's scores are dh row updates
		// (vector operations along the sequence) instead of T dot products.
		kt := kt[h*dh*T : (h+1)*dh*T]
		for j := range T {
			for d, v := range qkv[j*stride+H+h*dh : j*stride+H+h*dh+dh] {
				kt[d*T+j] = v
			}
		}
		p := prob[h*T*T : (h+1)*T*T]
		for i := range T {
			row := p[i*T : (i+1)*T]
			clear(row)
			for d, q := range qkv[i*stride+h*dh : i*stride+h*dh+dh] {
				axpy(row, kt[d*T:(d+1)*T], q)
			}
			mx := row[0]
			for _, s := range row {
				mx = max(mx, s)
			}
			sum := expSum(row, mx)
			out := ctx[i*H+h*dh : i*H+h*dh+dh]
			clear(out)
			inv := 1 / sum
			for j, e := range row {
				axpy(out, qkv[j*stride+2*H+h*dh:j*stride+2*H+h*dh+dh], e*inv)
			}
		}
	}
}

// axpyGo adds a·x to dst.
func axpyGo(dst, x []float32, a float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += a * x[i]
	}
}

// expSumGo sets each x of row to e^(x-mx) and returns their sum.
func expSumGo(row []float32, mx float32) float32 {
	var sum float32
	for j, s := range row {
		e := exp32(s - mx)
		row[j] = e
		sum += e
	}
	return sum
}

// exp32 is e^x for x ≤ 0 (softmax's range) in float32: x = n·ln2 + r
// with |r| ≤ ln2/2 (n by truncation: math.Floor is a call without SSE4), e^r by its degree-6 Taylor polynomial (relative error
// below 1e-6, TestExp32), times 2^n built in the exponent bits. Below -87,
// where float32 leaves its normal range, it returns 0.
func exp32(x float32) float32 {
	if x < -87 {
		return 0
	}
	n := float32(int32(x*math.Log2E - 0.5)) // x ≤ 0: rounds to nearest
	r := x - n*0.693145751953125 - n*1.428606765330187e-06
	p := r*(1.0/720) + 1.0/120
	p = p*r + 1.0/24
	p = p*r + 1.0/6
	p = p*r + 0.5
	p = p*r + 1
	p = p*r + 1
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// layerNorm sets each row of x (T × H) to LayerNorm(x + add) with gain g
// and bias b; add may be nil.
func layerNorm(x, add []float32, T, H int, g, b []float32, eps float32) {
	g, b = g[:H], b[:H]
	for t := range T {
		var a []float32
		if add != nil {
			a = add[t*H : (t+1)*H]
		}
		normRow(x[t*H:(t+1)*H], a, g, b, eps)
	}
}

// normRowGo sets row to LayerNorm(row + add) (add may be nil), with
// float64 sums: hidden states have a few large components.
func normRowGo(row, add, g, b []float32, eps float32) {
	if add != nil {
		for i, a := range add[:len(row)] {
			row[i] += a
		}
	}
	var mean float64
	for _, v := range row {
		mean += float64(v)
	}
	mean /= float64(len(row))
	var variance float64
	for _, v := range row {
		d := float64(v) - mean
		variance += d * d
	}
	variance /= float64(len(row))
	inv := float32(1 / math.Sqrt(variance+float64(eps)))
	m := float32(mean)
	g, b = g[:len(row)], b[:len(row)]
	for i, v := range row {
		row[i] = (v-m)*inv*g[i] + b[i]
	}
}

// geluGo is the exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)).
func geluGo(x []float32) {
	for i, v := range x {
		x[i] = 0.5 * v * (1 + erf32(v*math.Sqrt2/2))
	}
}

// erf32 is erf in float32 without exp: x·P(x²)/Q(x²) on [-4, 4] (erf is
// ±1 within float32 precision beyond), the rational approximation of
// Eigen and XLA. Its error against math.Erf is below 1e-6 (TestErf32).
func erf32(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return x * p / q
}
