package minilm

// matmul computes the output panels [p0, p1) of dst (T × N) = x (T × K) ·
// w + b, w packed by pack. It is matmulGo unless a SIMD kernel was chosen
// at start-up (kernels_amd64.go, kernels_neon.go on arm64).
var matmul = matmulGo

// gelu applies GELU in place: geluGo, or its SIMD twin.
var gelu = geluGo

// axpy adds a·x to dst: axpyGo, or its SIMD twin.
var axpy = axpyGo

// expSum is softmax's numerator: expSumGo, or its SIMD twin.
var expSum = expSumGo

// normRow is one row's LayerNorm: normRowGo, or its SIMD twin.
var normRow = normRowGo

// attendHeads computes heads [h0, h1) of attention: attendHeadsGo, or
// its SIMD twin.
var attendHeads = attendHeadsGo

// kernel names the matmul in use, for benchmarks and tests.
var kernel = "go"

// matmulGo is the portable kernel: blocks of 2 tokens × 4 output columns
// walk a panel once with 8 accumulators, so each weight loaded serves two
// tokens and each input four columns. (Blocks of 4 × 4 measured 40% slower:
// 16 accumulators do not fit the 16 scalar float registers, and the
// compiler spills them.)
func matmulGo(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	for p := p0; p < p1; p++ {
		wp := w[p*K*panel : (p+1)*K*panel]
		col := p * panel
		t := 0
		for ; t+2 <= T; t += 2 {
			x0 := x[t*K : t*K+K]
			x1 := x[(t+1)*K : (t+1)*K+K][:len(x0)]
			for c := 0; c < panel; c += 4 {
				var a00, a01, a02, a03, a10, a11, a12, a13 float32
				wc := wp[c:]
				for k := range x0 {
					ww := (*[4]float32)(wc[k*panel:])
					w0, w1, w2, w3 := ww[0], ww[1], ww[2], ww[3]
					v, u := x0[k], x1[k]
					a00 += v * w0
					a01 += v * w1
					a02 += v * w2
					a03 += v * w3
					a10 += u * w0
					a11 += u * w1
					a12 += u * w2
					a13 += u * w3
				}
				bb := (*[4]float32)(b[col+c:])
				store4(dst[t*N+col+c:], a00+bb[0], a01+bb[1], a02+bb[2], a03+bb[3])
				store4(dst[(t+1)*N+col+c:], a10+bb[0], a11+bb[1], a12+bb[2], a13+bb[3])
			}
		}
		if t < T {
			x0 := x[t*K : t*K+K]
			for c := 0; c < panel; c += 4 {
				var a0, a1, a2, a3 float32
				wc := wp[c:]
				for k, v := range x0 {
					ww := (*[4]float32)(wc[k*panel:])
					a0 += v * ww[0]
					a1 += v * ww[1]
					a2 += v * ww[2]
					a3 += v * ww[3]
				}
				bb := (*[4]float32)(b[col+c:])
				store4(dst[t*N+col+c:], a0+bb[0], a1+bb[1], a2+bb[2], a3+bb[3])
			}
		}
	}
}

func store4(d []float32, a, b, c, e float32) {
	d = d[:4]
	d[0], d[1], d[2], d[3] = a, b, c, e
}

// Kernel names the matrix kernels in use: "avx2-fma" on an amd64 CPU
// that has AVX2 and FMA (every build), "avx512" when it also has
// AVX-512 (the float32 products in 512-bit registers, the same results),
// "avx512-bf16" when it also has AVX512-BF16 (batches multiply in
// bfloat16, single texts as avx512), "avx512-vnni" when it has
// AVX512-VNNI as well (batches' feed-forward products in int8, the rest
// as avx512-bf16), "neon" on arm64 (every build: the matrix products and
// attention in NEON assembly, the rest plain Go), else "go". For status
// output: the plain kernels are several times slower.
func Kernel() string { return kernel }
