package reading

import (
	"cmp"
	"math"
)

// Example is one labelled sentence.
type Example struct {
	Text     string
	Context  string    // the sentence Text is a clause of, or "" (Text is a sentence)
	Vec      []float32 // the sentence vector, or nil
	Kind     int       // None, Pref, Fact, Corr
	Global   int       // 1 everywhere, 0 this project, -1 unknown
	Positive int       // 1 "do", 0 "don't", -1 unknown
	Weight   float64   // 0 counts as 1
}

// Options tune the training; the zero value takes the defaults.
type Options struct {
	Iterations int     // full-batch Adam steps; default 300
	Rate       float64 // default 0.05
	L2         float64 // per example; default
	// VecScale multiplies the sentence vector's components (default 1):
	// a unit vector's components are small beside the lexical features'
	// ones, and the one L2 weighs them all alike.
	VecScale float64
}

// Train fits a model to examples: softmax regression for the kind and
// logistic regression for scope and polarity (on the statements whose
// scope or polarity is known), with L2, by full-batch Adam from zero
// weights. Everything is summed in the examples' order, so the same
// examples always give the same model.
func Train(name string, vecDim int, examples []Example, opt Options) *Model {
	opt = opt.defaults()
	m := &Model{Name: name, VecDim: vecDim, VecScale: opt.VecScale}
	w := m.width()
	feats := make([][]Feature, len(examples))
	vecs := make([][]float32, len(examples))
	for i, e := range examples {
		feats[i] = FeaturesIn(e.Text, cmp.Or(e.Context, e.Text))
		if len(e.Vec) == vecDim {
			vecs[i] = scaled(e.Vec, m.scale())
		}
	}
	weight := func(e Example) float64 {
		if e.Weight == 0 {
			return 1
		}
		return e.Weight
	}

	// The kind head: all examples.
	kind := newAdam(kinds, w, opt.Rate)
	for it := 0; it < opt.Iterations; it++ {
		grad := make([]float64, len(kind.w))
		var total float64
		for i, e := range examples {
			ew := weight(e)
			total += ew
			var z [kinds]float64
			mx := math.Inf(-1)
			for k := 0; k < kinds; k++ {
				z[k] = dot64(kind.w[k*w:(k+1)*w], feats[i], vecs[i])
				mx = max(mx, z[k])
			}
			var sum float64
			for k := range z {
				z[k] = math.Exp(z[k] - mx)
				sum += z[k]
			}
			for k := 0; k < kinds; k++ {
				g := z[k] / sum
				if k == e.Kind {
					g--
				}
				accumulate(grad[k*w:(k+1)*w], feats[i], vecs[i], g*ew)
			}
		}
		kind.step(grad, total, opt.L2)
	}
	for k := 0; k < kinds; k++ {
		m.Kind[k] = to32(kind.w[k*w : (k+1)*w])
	}
	m.Global = trainBinary(examples, feats, vecs, w, opt, weight, func(e Example) int { return e.Global })
	m.Positive = trainBinary(examples, feats, vecs, w, opt, weight, func(e Example) int { return e.Positive })
	return m
}

func (o Options) defaults() Options {
	if o.Iterations == 0 {
		o.Iterations = 300
	}
	if o.Rate == 0 {
		o.Rate = 0.05
	}
	if o.L2 == 0 {
		o.L2 = 1e-3
	}
	if o.VecScale == 0 {
		o.VecScale = 1
	}
	return o
}

// logistic fits one logistic regression of width weights to examples
// with labels ys (0 or 1).
func logistic(feats [][]Feature, ys []int, width int, opt Options) []float32 {
	a := newAdam(1, width, opt.Rate)
	for it := 0; it < opt.Iterations && len(ys) > 0; it++ {
		grad := make([]float64, width)
		for i, fs := range feats {
			p := sigmoid(dot64(a.w, fs, nil))
			accumulate(grad, fs, nil, p-float64(ys[i]))
		}
		a.step(grad, float64(len(ys)), opt.L2)
	}
	return to32(a.w)
}

func trainBinary(examples []Example, feats [][]Feature, vecs [][]float32, w int, opt Options,
	weight func(Example) float64, label func(Example) int) []float32 {
	a := newAdam(1, w, opt.Rate)
	for it := 0; it < opt.Iterations; it++ {
		grad := make([]float64, w)
		var total float64
		for i, e := range examples {
			y := label(e)
			if e.Kind == None || y < 0 {
				continue
			}
			ew := weight(e)
			total += ew
			p := sigmoid(dot64(a.w, feats[i], vecs[i]))
			accumulate(grad, feats[i], vecs[i], (p-float64(y))*ew)
		}
		if total == 0 {
			break
		}
		a.step(grad, total, opt.L2)
	}
	return to32(a.w)
}

// scaled is a copy of vec, each component times scale.
func scaled(vec []float32, scale float32) []float32 {
	out := make([]float32, len(vec))
	for i, v := range vec {
		out[i] = v * scale
	}
	return out
}

func dot64(w []float64, fs []Feature, vec []float32) float64 {
	var s float64
	for _, f := range fs {
		s += w[f.I] * float64(f.V)
	}
	for j, v := range vec {
		s += w[Dim+j] * float64(v)
	}
	return s
}

func accumulate(grad []float64, fs []Feature, vec []float32, g float64) {
	for _, f := range fs {
		grad[f.I] += g * float64(f.V)
	}
	for j, v := range vec {
		grad[Dim+j] += g * float64(v)
	}
}

// to32 rounds weights to float32, and to zero those below 1e-3 (too small to matter),
// so the weights file lists only what counts.
func to32(w []float64) []float32 {
	out := make([]float32, len(w))
	for i, v := range w {
		if math.Abs(v) >= 1e-3 {
			out[i] = float32(v)
		}
	}
	return out
}

// adam is full-batch Adam over one weight vector.
type adam struct {
	w, m, v []float64
	width   int // a row's length; rows are laid end to end
	rate    float64
	t       int
}

func newAdam(rows, width int, rate float64) *adam {
	n := rows * width
	return &adam{w: make([]float64, n), m: make([]float64, n), v: make([]float64, n), width: width, rate: rate}
}

// step applies the mean gradient grad/total plus L2 (not on a row's bias:
// the first cue of each row).
func (a *adam) step(grad []float64, total, l2 float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	a.t++
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	for i := range a.w {
		g := grad[i] / total
		if i%a.width != Buckets {
			g += l2 * a.w[i]
		}
		if g == 0 && a.m[i] == 0 && a.v[i] == 0 {
			continue
		}
		a.m[i] = b1*a.m[i] + (1-b1)*g
		a.v[i] = b2*a.v[i] + (1-b2)*g*g
		a.w[i] -= a.rate * (a.m[i] / c1) / (math.Sqrt(a.v[i]/c2) + eps)
	}
}
