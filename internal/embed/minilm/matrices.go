package minilm

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Version-2 runtime files keep the layers' matrices in float16, the
// precision the published model has them in: a product reads every weight
// of its matrix once per block of tokens, and a prompt's products stream
// the whole 42 MB of float32 matrices from memory, so half the bytes is a
// faster prompt. The kernels widen the values to float32 as they load
// them (VCVTPH2PS on amd64), and multiply as before: the same sums of the
// same values in the same order, so the same results as a version-1 file
// except for the query's scaling (after its product instead of folded
// into its weights).

// matmulHalf is matmul for float16 weights: matmulHalfGo unless an
// assembly kernel was chosen at start-up; halfNative says one was, and
// Convert writes version-2 files only then.
var (
	matmulHalf = matmulHalfGo
	halfNative = false
)

// linearHalf is linear with float16 weights.
func linearHalf(dst, x []float32, T, K, N int, w []uint16, b []float32, threads int) {
	panels, parts := panelParts(T, K, N, threads)
	if parts <= 1 {
		matmulHalf(dst, x, T, K, N, w, b, 0, panels)
		return
	}
	byPanels(panels, parts, func(p0, p1 int) { matmulHalf(dst, x, T, K, N, w, b, p0, p1) })
}

// matmulHalfGo widens one panel at a time into float32 and multiplies it
// with the float32 kernel in use, through a T × 16 block: correct on any
// machine, but it converts every weight of the product at each call (only
// a model file copied from a machine with the float16 kernels reads this
// way).
func matmulHalfGo(dst, x []float32, T, K, N int, w []uint16, b []float32, p0, p1 int) {
	if T == 0 {
		return
	}
	wp := make([]float32, K*panel)
	out := make([]float32, T*panel)
	for p := p0; p < p1; p++ {
		for i, h := range w[p*K*panel : (p+1)*K*panel] {
			wp[i] = f16(h)
		}
		col := p * panel
		matmul(out, x, T, K, panel, wp, b[col:col+panel], 0, 1)
		for t := range T {
			copy(dst[t*N+col:t*N+col+panel], out[t*panel:(t+1)*panel])
		}
	}
}

// scaleQuery multiplies the query part (the first H columns) of each of
// the T rows of qkv (3H wide) by s: a version-2 file's query weights are
// unscaled.
func scaleQuery(qkv []float32, T, H int, s float32) {
	for t := range T {
		q := qkv[t*3*H : t*3*H+H]
		for i := range q {
			q[i] *= s
		}
	}
}

// matrix is a layer's matrix at off (n values) in float32: the mapped
// values of a version-1 file, a widened copy of a version-2 file's.
func (m *Model) matrix(off uint64, n int) []float32 {
	if m.w16 == nil {
		return m.w[off : off+uint64(n) : off+uint64(n)]
	}
	v := make([]float32, n)
	for i, h := range m.w16[2*off : 2*off+uint64(n)] {
		v[i] = f16(h)
	}
	return v
}

// halfOf is x in float16 when float16 holds it exactly (ok), for Convert:
// a model whose matrices are all exact in float16 is written in version 2.
func halfOf(x float32) (h uint16, ok bool) {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	a := math.Abs(float64(x))
	switch {
	case a == 0:
	case a < 0x1p-14: // a float16 subnormal: a multiple of 2⁻²⁴
		v := a * 0x1p24
		if v != math.Trunc(v) {
			return 0, false
		}
		h = uint16(v)
	default:
		e := int(b>>23&0xff) - 127
		if e > 15 || b&0x1fff != 0 {
			return 0, false
		}
		h = uint16(e+15)<<10 | uint16(b>>13&0x3ff)
	}
	h |= sign
	return h, f16(h) == x
}

// FileVersion reads the format version of dir/RuntimeFile from its
// header alone: 1 (float32 weights) or 2 (float16 matrices).
func FileVersion(dir string) (int, error) {
	f, err := os.Open(filepath.Join(dir, RuntimeFile))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [12]byte
	if _, err := io.ReadFull(f, b[:]); err != nil || string(b[:8]) != magic {
		return 0, fmt.Errorf("minilm: %s: %w", filepath.Join(dir, RuntimeFile), errFormat)
	}
	return int(binary.LittleEndian.Uint32(b[8:])), nil
}

// PreferredVersion is the format version Convert writes on this machine
// for the published model: 2 where the float16 kernels run, else 1. An
// installed file of an older version still works, slower: installing the
// model again converts it anew.
func PreferredVersion() int {
	if halfNative {
		return versionF16
	}
	return versionF32
}
