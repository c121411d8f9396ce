package minilm

import (
	"math"
	"sync"
)

// The worker's cheaper arithmetic: the encoder's four matrix products per
// layer with bfloat16 inputs (weights and activations rounded to nearest
// even; products and sums in float32), on CPUs with AVX512-BF16, whose
// VDPBF16PS does two multiply-adds per float32 lane. Measured against the
// reference engine (TestQuantizedCosine, emulated; TestReference, the
// kernel itself) it keeps every reference text's cosine above 0.9999;
// int8 with one scale per output channel and per token did not reach
// 0.999; int8 in groups of 32 along K did (and groups of 64 in the
// feed-forward products only, the rest bf16), at the price of a float
// rescale of every accumulator per group (architecture.md has the
// figures). Where the CPU also has AVX512-VNNI, the feed-forward products
// take that last scheme (int8.go). Attention (Q·Kᵀ, P·V), LayerNorm, GELU
// and pooling stay float32.

// bfPanel is the output columns of a packed bf16 panel.
const bfPanel = 32

// bfRows is the rows (tokens) of the bf16 micro-kernel's block (and one
// more than its tail kernels' largest).
const bfRows = 12

// useBF16 is true when the bf16 kernel is available (kernels_amd64.go, on
// a CPU with AVX512-BF16); tests turn it off to run the float32 kernels.
var useBF16 = false

// matmulBF16 computes the output panels [q0, q1) (bfPanel columns each)
// of dst (T × N) = x · w + b, x given as bfloat16 pairs by toBF16 and w
// packed by packBF16. Set only where useBF16 can be true.
var matmulBF16 func(dst []float32, xb []uint32, T, K, N int, w []uint32, b []float32, q0, q1 int)

// bfWeights are a model's matrix weights as bfloat16, packed for
// matmulBF16: built once per Model, on its first batch.
type bfWeights struct {
	layers []bfLayer
}

type bfLayer struct {
	qkv, out, up, down []uint32
	// upQ and downQ are the feed-forward weights in int8 where useI8
	// (up and down are nil then).
	upQ, downQ *i8Mat
}

// bf16Weights returns m's bf16 weights, packing them on the first call,
// or nil when the bf16 kernel is off. Packing reads every matrix of the
// mapped file once (about 40 ms); the result is 21 MB of heap, 14 MB
// where the feed-forward weights are int8 (useI8). The two variants are
// packed apart (tests switch useI8 on one Model).
func (m *Model) bf16Weights() *bfWeights {
	if !useBF16 {
		return nil
	}
	v := 0
	if useI8 {
		v = 1
	}
	m.bfOnce[v].Do(func() {
		H, I := Dim, int(m.h.Inter)
		at := m.matrix // float32, widened from a version-2 file's float16
		bw := &bfWeights{}
		for _, ll := range m.lay.layers {
			bl := bfLayer{
				qkv: packBF16(at(ll.qkvW, 3*H*H), H, 3*H),
				out: packBF16(at(ll.outW, H*H), H, H),
			}
			if v == 1 {
				bl.upQ, bl.downQ = packI8(at(ll.upW, I*H), H, I), packI8(at(ll.downW, H*I), I, H)
			} else {
				bl.up, bl.down = packBF16(at(ll.upW, I*H), H, I), packBF16(at(ll.downW, H*I), I, H)
			}
			bw.layers = append(bw.layers, bl)
		}
		m.bf[v] = bw
	})
	return m.bf[v]
}

// bf16Bits rounds x to bfloat16, to nearest with ties to even, and returns
// its 16 bits (NaN stays NaN: its payload's top bits survive).
func bf16Bits(x float32) uint32 {
	u := math.Float32bits(x)
	if u&0x7fffffff > 0x7f800000 {
		return u>>16 | 0x40
	}
	return (u + 0x7fff + (u>>16)&1) >> 16
}

// packBF16 repacks the float32 weights w (K × N, packed by pack: panels of
// 16 columns) as bfloat16 for matmulBF16: panels of bfPanel columns, and
// in each, for every pair of rows k, k+1 (K is even), one uint32 per
// column holding w[k] in its low half and w[k+1] in its high half.
func packBF16(w []float32, K, N int) []uint32 {
	K2 := K / 2
	out := make([]uint32, K2*N)
	at := func(k, n int) float32 { return w[n/panel*K*panel+k*panel+n%panel] }
	for q := range N / bfPanel {
		dst := out[q*K2*bfPanel : (q+1)*K2*bfPanel]
		for kk := range K2 {
			row := dst[kk*bfPanel : (kk+1)*bfPanel]
			for c := range row {
				n := q*bfPanel + c
				row[c] = bf16Bits(at(2*kk, n)) | bf16Bits(at(2*kk+1, n))<<16
			}
		}
	}
	return out
}

// toBF16 writes x (T × K, K even) as bfloat16 pairs into xb; it returns
// xb, grown if needed.
func toBF16(xb []uint32, x []float32, T, K int) []uint32 {
	K2 := K / 2
	if cap(xb) < T*K2 {
		xb = make([]uint32, T*K2)
	}
	xb = xb[:T*K2]
	bf16Pairs(xb, x[:T*K])
	return xb
}

// bf16Pairs rounds src to bfloat16 pairs in dst (len(src) = 2·len(dst)):
// bf16PairsGo, or its AVX512-BF16 twin.
var bf16Pairs = bf16PairsGo

func bf16PairsGo(dst []uint32, src []float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = bf16Bits(src[2*i]) | bf16Bits(src[2*i+1])<<16
	}
}

// linearBF16 is linear with the bf16 kernel: x converted once into xb
// (returned, for reuse), the panels split across up to threads goroutines.
func linearBF16(dst, x []float32, xb []uint32, T, K, N int, w []uint32, b []float32, threads int) []uint32 {
	xb = toBF16(xb, x, T, K)
	panels := N / bfPanel
	parts := min(threads, panels, max(1, T*K*N/parallelMin))
	if parts <= 1 {
		matmulBF16(dst, xb, T, K, N, w, b, 0, panels)
		return xb
	}
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { matmulBF16(dst, xb, T, K, N, w, b, i*panels/parts, (i+1)*panels/parts) })
	}
	matmulBF16(dst, xb, T, K, N, w, b, 0, panels/parts)
	wg.Wait()
	return xb
}
