//go:build amd64 || arm64

package minilm

// gemm6x16 is the assembly micro-kernel of matmulAVX2 (gemm_amd64.s) and
// matmulNEON (gemm_arm64.s): rows x[i·ldx : i·ldx+k] for i < 6 times the
// packed panel w (k × 16) plus b[:16] into dst[i·ldd : i·ldd+16].
//
//go:noescape
func gemm6x16(k int, x *float32, ldx int, w *float32, b *float32, dst *float32, ldd int)

// gemmRows runs gemm6x16 over T ≥ 6 rows of x (ldx apart) into the rows
// of dst (ldd apart), the last T mod 6 rows as a block that overlaps the
// one before (its shared rows are written again with the same values).
func gemmRows(T, K int, x []float32, ldx int, wp, bp, dst []float32, ldd int) {
	_, _, _ = x[(T-1)*ldx+K-1], wp[K*panel-1], bp[panel-1]
	_ = dst[(T-1)*ldd+panel-1]
	for t := 0; ; t += 6 {
		t = min(t, T-6)
		gemm6x16(K, &x[t*ldx], ldx, &wp[0], &bp[0], &dst[t*ldd], ldd)
		if t+6 == T {
			return
		}
	}
}

var zeroPanel [panel]float32

// attendHeadsGemm computes what attendHeadsGo does as two products per
// head through gemm6x16: the scores Q·Kᵀ (the keys packed in panels of
// 16, zero past T) and, after softmax (which turns the T rows of scores,
// Tp apart, into weights, and zeroes each row past T), the weights times
// V (V packed in two panels of 16 columns, zero rows past T). The sums are
// the same, in the same order. Sequences shorter than 6 tokens take
// attendHeadsGo.
func attendHeadsGemm(ctx, qkv, prob, kt, vp []float32, T, H, heads, h0, h1 int, softmax func(p []float32, T, Tp int)) {
	if T < 6 {
		attendHeadsGo(ctx, qkv, prob, kt, vp, T, H, heads, h0, h1)
		return
	}
	dh := H / heads
	stride := 3 * H
	Tp := (T + panel - 1) / panel * panel
	for h := h0; h < h1; h++ {
		kp := kt[h*dh*Tp : (h+1)*dh*Tp]
		vh := vp[h*dh*Tp : (h+1)*dh*Tp]
		for j := range T {
			k := qkv[j*stride+H+h*dh : j*stride+H+h*dh+dh]
			blk := kp[j/panel*dh*panel+j%panel:]
			for d, v := range k {
				blk[d*panel] = v
			}
			v := qkv[j*stride+2*H+h*dh : j*stride+2*H+h*dh+dh]
			for c := 0; c < dh; c += panel {
				copy(vh[c*Tp+j*panel:c*Tp+(j+1)*panel], v[c:c+panel])
			}
		}
		for j := T; j < Tp; j++ {
			blk := kp[j/panel*dh*panel+j%panel:]
			for d := range dh {
				blk[d*panel] = 0
			}
			for c := 0; c < dh; c += panel {
				clear(vh[c*Tp+j*panel : c*Tp+(j+1)*panel])
			}
		}
		p := prob[h*T*Tp : (h+1)*T*Tp]
		q := qkv[h*dh:]
		for jb := 0; jb < Tp; jb += panel {
			gemmRows(T, dh, q, stride, kp[jb*dh:(jb+panel)*dh], zeroPanel[:], p[jb:], Tp)
		}
		softmax(p, T, Tp)
		for c := 0; c < dh; c += panel {
			gemmRows(T, Tp, p, Tp, vh[c*Tp:(c+panel)*Tp], zeroPanel[:], ctx[h*dh+c:], H)
		}
	}
}
