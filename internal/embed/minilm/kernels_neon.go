//go:build arm64

package minilm

// Every arm64 processor has NEON (Advanced SIMD is part of ARMv8-A), so
// the choice needs no feature check and no GOEXPERIMENT.
func init() {
	matmul, attendHeads = matmulNEON, attendHeadsNEON
	kernel = "neon"
}

// matmulNEON computes the same as matmulGo with the assembly micro-kernel
// gemm6x16 (gemm_arm64.s): blocks of 6 tokens × one whole panel (16
// columns), 24 vector accumulators held in registers for the whole of K.
// The last T mod 6 tokens are a block that overlaps the one before (the
// shared rows are written again with the same values); sequences shorter
// than 6 tokens take matmulGo.
func matmulNEON(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
	if T < 6 || K == 0 {
		matmulGo(dst, x, T, K, N, w, b, p0, p1)
		return
	}
	x, dst = x[:T*K], dst[:T*N]
	for p := p0; p < p1; p++ {
		col := p * panel
		gemmRows(T, K, x, K, w[p*K*panel:(p+1)*K*panel], b[col:col+panel], dst[col:], N)
	}
}

// attendHeadsNEON is attendHeadsGemm with the plain-Go softmax.
func attendHeadsNEON(ctx, qkv, prob, kt, vp []float32, T, H, heads, h0, h1 int) {
	attendHeadsGemm(ctx, qkv, prob, kt, vp, T, H, heads, h0, h1, softmaxGo)
}

// softmaxGo turns the T rows of scores p (Tp apart) into weights as
// attendHeadsGo does, and zeroes each row past T.
func softmaxGo(p []float32, T, Tp int) {
	for i := range T {
		row := p[i*Tp : i*Tp+T]
		mx := row[0]
		for _, s := range row {
			mx = max(mx, s)
		}
		inv := 1 / expSumGo(row, mx)
		for j := range row {
			row[j] *= inv
		}
		clear(p[i*Tp+T : (i+1)*Tp])
	}
}
