package minilm

// matmul computes the output panels [p0, p1) of dst (T × N) = x (T × K) ·
// w + b, w packed by pack. It is matmulGo unless a SIMD kernel was chosen
// at start-up (kernels_simd.go).
var matmul = matmulGo

// matmulGo is the portable kernel: blocks of 4 tokens × 4 output columns,
// 16 accumulators kept in registers while it walks the panel once, so
// each weight loaded serves four tokens and each input four columns.
func matmulGo(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	for p := p0; p < p1; p++ {
		wp := w[p*K*panel : (p+1)*K*panel]
		col := p * panel
		t := 0
		for ; t+4 <= T; t += 4 {
			x0 := x[t*K : t*K+K]
			x1 := x[(t+1)*K : (t+1)*K+K]
			x2 := x[(t+2)*K : (t+2)*K+K]
			x3 := x[(t+3)*K : (t+3)*K+K]
			for c := 0; c < panel; c += 4 {
				var a00, a01, a02, a03, a10, a11, a12, a13 float32
				var a20, a21, a22, a23, a30, a31, a32, a33 float32
				for k := range x0 {
					ww := wp[k*panel+c : k*panel+c+4 : k*panel+c+4]
					w0, w1, w2, w3 := ww[0], ww[1], ww[2], ww[3]
					v := x0[k]
					a00 += v * w0
					a01 += v * w1
					a02 += v * w2
					a03 += v * w3
					v = x1[k]
					a10 += v * w0
					a11 += v * w1
					a12 += v * w2
					a13 += v * w3
					v = x2[k]
					a20 += v * w0
					a21 += v * w1
					a22 += v * w2
					a23 += v * w3
					v = x3[k]
					a30 += v * w0
					a31 += v * w1
					a32 += v * w2
					a33 += v * w3
				}
				bb := b[col+c : col+c+4 : col+c+4]
				store4(dst[t*N+col+c:], a00+bb[0], a01+bb[1], a02+bb[2], a03+bb[3])
				store4(dst[(t+1)*N+col+c:], a10+bb[0], a11+bb[1], a12+bb[2], a13+bb[3])
				store4(dst[(t+2)*N+col+c:], a20+bb[0], a21+bb[1], a22+bb[2], a23+bb[3])
				store4(dst[(t+3)*N+col+c:], a30+bb[0], a31+bb[1], a32+bb[2], a33+bb[3])
			}
		}
		for ; t < T; t++ {
			x0 := x[t*K : t*K+K]
			for c := 0; c < panel; c += 4 {
				var a0, a1, a2, a3 float32
				for k, v := range x0 {
					ww := wp[k*panel+c : k*panel+c+4 : k*panel+c+4]
					a0 += v * ww[0]
					a1 += v * ww[1]
					a2 += v * ww[2]
					a3 += v * ww[3]
				}
				bb := b[col+c : col+c+4 : col+c+4]
				store4(dst[t*N+col+c:], a0+bb[0], a1+bb[1], a2+bb[2], a3+bb[3])
			}
		}
	}
}

func store4(d []float32, a, b, c, e float32) {
	d = d[:4]
	d[0], d[1], d[2], d[3] = a, b, c, e
}
