package minilm

import (
	"math"
	"sync"
)

// The feed-forward products (384 → 1536 and 1536 → 384, two thirds of the
// encoder's multiply-adds) in int8 for batches, on CPUs with AVX512-VNNI
// (VPDPBUSD: four u8·s8 products per int32 lane, twice VDPBF16PS's rate),
// the scheme TestQuantizedCosine qualified ("FFN int8/u8 in groups of 64,
// the rest bf16"): weights int8, symmetric, one scale per output column
// and group of i8Group rows of K; activations u8, asymmetric (a zero
// point), one scale per token and group of i8Group values. Per group the
// integer sums are exact; they are rescaled into float32 accumulators,
// and so is the zero point's part, −s·z times the column's scale times
// the sum of its int8 weights in the group (precomputed).

// i8Group is the values of K per scale (gemm_i8_gen.py: GROUP).
const i8Group = 64

// i8Rows is the rows (tokens) of the int8 micro-kernel's block (and one
// more than its tail kernels' largest).
const i8Rows = 6

// i8Panel is the output columns of a packed int8 panel.
const i8Panel = 32

// useI8 is true when the int8 kernel is available (kernels_amd64.go, on a
// CPU with AVX512-VNNI as well as AVX512-BF16); tests turn it off.
var useI8 = false

// matmulI8 computes the output panels [q0, q1) of dst (T × N) = x · w +
// b, x quantized by quantizeU8 (xq, sa, nsz) and w by packI8. Set only
// where useI8 can be true.
var matmulI8 func(dst []float32, xq []byte, sa, nsz []float32, T, K, N int, w *i8Mat, b []float32, q0, q1 int)

// quantizeU8 quantizes x (T × K) into u8 rows: quantizeU8Go, or its
// AVX-512 twin.
var quantizeU8 = quantizeU8Go

// i8Mat is a K × N matrix of weights quantized for matmulI8.
type i8Mat struct {
	// w holds panels of i8Panel columns; in each, for every 4 rows of K,
	// i8Panel columns × 4 bytes (the column's 4 weights, int8).
	w []byte
	// sw holds, per panel and group of K, the i8Panel columns' scales,
	// then their scales times the sums of their int8 weights in the
	// group (for the zero points' part).
	sw []float32
}

// packI8 quantizes the float32 weights w (K × N, packed by pack: panels
// of 16 columns; K a multiple of i8Group, N of i8Panel) for matmulI8.
func packI8(w []float32, K, N int) *i8Mat {
	G := K / i8Group
	at := func(k, n int) float32 { return w[n/panel*K*panel+k*panel+n%panel] }
	m := &i8Mat{w: make([]byte, K*N), sw: make([]float32, 2*G*N)}
	for n := range N {
		q, c := n/i8Panel, n%i8Panel
		wq := m.w[q*K*i8Panel : (q+1)*K*i8Panel]
		for g := range G {
			var mx float32
			for k := g * i8Group; k < (g+1)*i8Group; k++ {
				mx = max(mx, abs32(at(k, n)))
			}
			var s float32
			if mx > 0 {
				s = mx / 127
			}
			sum := 0
			for k := g * i8Group; k < (g+1)*i8Group; k++ {
				var v int
				if s > 0 {
					v = int(math.RoundToEven(float64(at(k, n) / s)))
				}
				wq[k/4*4*i8Panel+c*4+k%4] = byte(int8(v))
				sum += v
			}
			m.sw[(q*G+g)*2*i8Panel+c] = s
			m.sw[(q*G+g)*2*i8Panel+i8Panel+c] = s * float32(sum)
		}
	}
	return m
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// quantizeU8Go writes each row of x (T × K) as u8 into xq, per group of
// i8Group values: scale s = (max(hi, 0) − min(lo, 0)) / 255, zero point
// z = round(−min(lo, 0)/s), q = clamp(round(v/s) + z, 0, 255). It writes
// s into sa (T × K/i8Group) and −s·z into nsz (the same shape). A group
// of zeros gets s = 0 and q = 0.
func quantizeU8Go(xq []byte, sa, nsz, x []float32, T, K int) {
	G := K / i8Group
	for t := range T {
		for g := range G {
			row := x[t*K+g*i8Group : t*K+(g+1)*i8Group]
			lo, hi := float32(0), float32(0)
			for _, v := range row {
				lo, hi = min(lo, v), max(hi, v)
			}
			out := xq[t*K+g*i8Group : t*K+(g+1)*i8Group]
			if hi == lo {
				clear(out)
				sa[t*G+g], nsz[t*G+g] = 0, 0
				continue
			}
			s := (hi - lo) / 255
			inv := 1 / s
			z := float32(math.RoundToEven(float64(-lo * inv)))
			for i, v := range row {
				out[i] = byte(min(max(float32(math.RoundToEven(float64(v*inv+z))), 0), 255))
			}
			sa[t*G+g], nsz[t*G+g] = s, -s*z
		}
	}
}

// matmulI8Go is matmulI8 in plain Go, for tests: the same integer sums,
// rescaled in the same order and the same roundings.
func matmulI8Go(dst []float32, xq []byte, sa, nsz []float32, T, K, N int, w *i8Mat, b []float32, q0, q1 int) {
	G := K / i8Group
	// fma is a float32 fused multiply-add (the float64 product of two
	// float32 is exact).
	fma := func(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }
	for q := q0; q < q1; q++ {
		wq := w.w[q*K*i8Panel : (q+1)*K*i8Panel]
		for t := range T {
			for c := range i8Panel {
				acc := b[q*i8Panel+c]
				for g := range G {
					sum := int32(0)
					for k := g * i8Group; k < (g+1)*i8Group; k++ {
						sum += int32(xq[t*K+k]) * int32(int8(wq[k/4*4*i8Panel+c*4+k%4]))
					}
					sw := w.sw[(q*G+g)*2*i8Panel:]
					acc = fma(float32(sum), sa[t*G+g]*sw[c], acc)
					acc = fma(nsz[t*G+g], sw[i8Panel+c], acc)
				}
				dst[t*N+q*i8Panel+c] = acc
			}
		}
	}
}

// i8Buf is linearI8's memory, pooled with a forward pass's.
type i8Buf struct {
	xq      []byte
	sa, nsz []float32
}

// linearI8 sets dst (T × N) to x (T × K) times the weights quantized in w
// plus b: x quantized once into buf, then the int8 panels split across up
// to threads goroutines.
func linearI8(dst, x []float32, buf *i8Buf, T, K, N int, w *i8Mat, b []float32, threads int) {
	G := K / i8Group
	if cap(buf.xq) < T*K {
		buf.xq = make([]byte, T*K)
	}
	if cap(buf.sa) < T*G {
		buf.sa = make([]float32, T*G)
	}
	if cap(buf.nsz) < T*G {
		buf.nsz = make([]float32, T*G)
	}
	xq, sa, nsz := buf.xq[:T*K], buf.sa[:T*G], buf.nsz[:T*G]
	quantizeU8(xq, sa, nsz, x, T, K)
	panels := N / i8Panel
	parts := min(threads, panels, max(1, T*K*N/parallelMin))
	if parts <= 1 {
		matmulI8(dst, xq, sa, nsz, T, K, N, w, b, 0, panels)
		return
	}
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { matmulI8(dst, xq, sa, nsz, T, K, N, w, b, i*panels/parts, (i+1)*panels/parts) })
	}
	matmulI8(dst, xq, sa, nsz, T, K, N, w, b, 0, panels/parts)
	wg.Wait()
}
