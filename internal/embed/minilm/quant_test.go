package minilm

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// Emulated low-precision arithmetic: TestQuantizedCosine rounds the inputs
// of the encoder's matrix products (weights, activations, or both) as a
// bf16 or int8 kernel would see them, computes the products exactly as
// before in float32, and compares the vectors with the reference engine.
// It is the measurement that decides which cheaper arithmetic may be used:
// only a scheme whose minimum cosine stays ≥ 0.999 qualifies.

// prec is how one operand of a matrix product is rounded.
type prec int

const (
	f32  prec = iota // unchanged
	bf16             // bfloat16, round to nearest even
	i8               // int8: weights symmetric per output channel, activations per token
	u8               // activations only: asymmetric per token, 0..255 with a zero point
	i8g              // int8 weights symmetric per output channel and group of `group` rows of K
	u8g              // u8 activations asymmetric per token and group of `group` values
)

// group is the group size of i8g and u8g.
var group = 64

func (p prec) String() string { return [...]string{"f32", "bf16", "i8", "u8", "i8g", "u8g"}[p] }

// scheme gives the precision of weights and activations of each of a
// layer's four products.
type scheme struct {
	name                   string
	qkvW, outW, upW, downW prec
	qkvA, outA, upA, downA prec
}

func uniform(name string, w, a prec) scheme {
	return scheme{name, w, w, w, w, a, a, a, a}
}

// roundBF16 rounds x to bfloat16 (to nearest, ties to even) and back.
func roundBF16(x float32) float32 {
	u := math.Float32bits(x)
	u += 0x7fff + (u>>16)&1
	return math.Float32frombits(u &^ 0xffff)
}

// quantWeights rounds the packed weights w (K × N, panels of 16 columns)
// in place to p.
func quantWeights(w []float32, K, N int, p prec) {
	switch p {
	case bf16:
		for i, v := range w[:K*N] {
			w[i] = roundBF16(v)
		}
	case i8, i8g:
		g := K
		if p == i8g {
			g = group
		}
		for n := range N {
			base, c := n/panel*K*panel, n%panel
			for k0 := 0; k0 < K; k0 += g {
				var mx float32
				for k := k0; k < k0+g; k++ {
					mx = max(mx, abs32(w[base+k*panel+c]))
				}
				if mx == 0 {
					continue
				}
				s := mx / 127
				for k := k0; k < k0+g; k++ {
					i := base + k*panel + c
					w[i] = float32(math.RoundToEven(float64(w[i]/s))) * s
				}
			}
		}
	}
}

// quantRow rounds one token's activations to p.
func quantRow(row []float32, p prec) {
	switch p {
	case bf16:
		for i, v := range row {
			row[i] = roundBF16(v)
		}
	case i8:
		var mx float32
		for _, v := range row {
			mx = max(mx, abs32(v))
		}
		if mx == 0 {
			return
		}
		s := mx / 127
		for i, v := range row {
			row[i] = float32(math.RoundToEven(float64(v/s))) * s
		}
	case u8g:
		for k0 := 0; k0 < len(row); k0 += group {
			quantRow(row[k0:k0+group], u8)
		}
	case u8:
		lo, hi := row[0], row[0]
		for _, v := range row {
			lo, hi = min(lo, v), max(hi, v)
		}
		lo, hi = min(lo, 0), max(hi, 0)
		if hi == lo {
			return
		}
		s := (hi - lo) / 255
		z := float32(math.RoundToEven(float64(-lo / s)))
		for i, v := range row {
			q := min(max(float32(math.RoundToEven(float64(v/s)))+z, 0), 255)
			row[i] = (q - z) * s
		}
	}
}

// emulate makes m compute with scheme s until the returned function
// restores it: a copy of the weights rounded as s says, and a matmul that
// rounds its input rows before the float32 kernel in use.
func emulate(tb testing.TB, m *Model, s scheme) (restore func()) {
	tb.Helper()
	H, I := Dim, int(m.h.Inter)
	w := append([]float32(nil), m.w...)
	for _, ll := range m.lay.layers {
		for _, q := range []struct {
			off  uint64
			K, N int
			p    prec
		}{{ll.qkvW, H, 3 * H, s.qkvW}, {ll.outW, H, H, s.outW}, {ll.upW, H, I, s.upW}, {ll.downW, I, H, s.downW}} {
			quantWeights(w[q.off:q.off+uint64(q.K*q.N)], q.K, q.N, q.p)
		}
	}
	act := func(K, N int) prec {
		switch {
		case K == H && N == 3*H:
			return s.qkvA
		case K == H && N == H:
			return s.outA
		case K == H && N == I:
			return s.upA
		case K == I && N == H:
			return s.downA
		}
		tb.Fatalf("a product of %d × %d", K, N)
		return f32
	}
	oldW, oldMatmul := m.w, matmul
	m.w = w
	matmul = func(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int) {
		p := act(K, N)
		if p != f32 {
			x = append([]float32(nil), x[:T*K]...)
			for t := range T {
				quantRow(x[t*K:(t+1)*K], p)
			}
		}
		oldMatmul(dst, x, T, K, N, w, b, p0, p1)
	}
	return func() { m.w, matmul = oldW, oldMatmul }
}

// emulatedSchemes are the schemes TestQuantizedCosine measures. The
// products are, per layer and token, 384×1152 (qkv), 384×384 (out),
// 384×1536 (up) and 1536×384 (down): the two feed-forward ones are 2/3 of
// the multiply-adds.
var emulatedSchemes = []scheme{
	uniform("f32", f32, f32),
	uniform("bf16 weights", bf16, f32),
	uniform("bf16 weights+activations", bf16, bf16),
	uniform("int8 weights", i8, f32),
	uniform("int8 weights, int8 activations", i8, i8),
	uniform("int8 weights, u8 activations", i8, u8),
	{"FFN int8/u8, rest f32", f32, f32, i8, i8, f32, f32, u8, u8},
	{"FFN int8/u8, rest bf16", bf16, bf16, i8, i8, bf16, bf16, u8, u8},
	{"up int8/u8, rest bf16", bf16, bf16, i8, bf16, bf16, bf16, u8, bf16},
	{"down int8/u8, rest bf16", bf16, bf16, bf16, i8, bf16, bf16, bf16, u8},
	{"up int8/u8, rest f32", f32, f32, i8, f32, f32, f32, u8, f32},
	{"down int8/u8, rest f32", f32, f32, f32, i8, f32, f32, f32, u8},
	{"qkv+out int8/u8, FFN bf16", i8, i8, bf16, bf16, u8, u8, bf16, bf16},
	uniform("int8/u8 groups of 32", i8g, u8g),
	uniform("int8/u8 groups of 64", i8g, u8g),
	uniform("int8/u8 groups of 128", i8g, u8g),
	{"FFN int8/u8 groups of 32, rest bf16", bf16, bf16, i8g, i8g, bf16, bf16, u8g, u8g},
	{"FFN int8/u8 groups of 64, rest bf16", bf16, bf16, i8g, i8g, bf16, bf16, u8g, u8g},
}

// TestQuantizedCosine logs, for each emulated scheme, the minimum and mean
// cosine with the reference engine over the reference texts at the
// worker's token limit (DocTokens) and at DefaultMaxTokens. It asserts
// only that the float32 scheme, which changes nothing, still qualifies:
// the figures are its output. MINILM_QUANT=1 runs it (a few minutes).
func TestQuantizedCosine(t *testing.T) {
	if os.Getenv("MINILM_QUANT") == "" || raceEnabled {
		t.Skip("a measurement: MINILM_QUANT=1 go test -run QuantizedCosine -v")
	}
	m := testModel(t)
	// The float32 kernels (emulate wraps matmul, which the bf16 path does
	// not take): the fastest of them.
	for _, k := range kernelChoices() {
		if !k.useBF16 {
			forceKernels(t, k)
			break
		}
	}
	texts := referenceTexts()
	for _, limit := range []int{DocTokens, DefaultMaxTokens} {
		want := reference(t, texts, limit)
		for _, s := range emulatedSchemes {
			if i := strings.Index(s.name, "groups of "); i >= 0 {
				fmt.Sscanf(s.name[i+len("groups of "):], "%d", &group)
			}
			restore := emulate(t, m, s)
			got, err := m.EmbedBatch(context.Background(), texts, limit)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			minCos, sum, under := 1.0, 0.0, 0
			for i := range texts {
				c := cosine(got[i], want[i])
				sum += c
				minCos = min(minCos, c)
				if c < 0.999 {
					under++
				}
			}
			t.Logf("limit %3d, %-32s min %.5f mean %.6f, %d of %d texts under 0.999", limit, s.name, minCos, sum/float64(len(texts)), under, len(texts))
			if s.name == "f32" && minCos < 0.999 {
				t.Errorf("float32 itself under 0.999: %s", fmt.Sprint(minCos))
			}
		}
	}
}
