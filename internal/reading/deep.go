package reading

import (
	"math"
	"math/rand"
	"sync"
)

// Deep is a second reading of a sentence's kind, for a model that reads
// sentence vectors: a network with one hidden layer of rectified units
// over the scaled sentence vector, whose kind rows also weigh the lexical
// features. The model's kind probabilities are the mean of its own
// (linear) reading and this one's: the linear reading alone fits the
// training split almost perfectly and reads other sources' sentences less
// well; a hidden layer reads some of what a straight line through the
// vector cannot, and the mean of the two read the validation split's
// statements best (docs/architecture.md gives the figures).
type Deep struct {
	H    int       // hidden units
	In   []float32 // H rows of VecDim: unit j's weights on the scaled vector
	Bias []float32 // H
	// Kind holds a row per kind: Dim lexical weights, then H on the
	// hidden units.
	Kind [kinds][]float32
}

// DeepOptions tune TrainDeep; the zero value takes the defaults.
type DeepOptions struct {
	Hidden     int     // default 32
	Iterations int     // full-batch Adam steps; default 400
	Rate       float64 // default 0.01
	L2         float64 // default 3e-3
	Seed       int64   // the initial weights' seed; default 1
}

func (o DeepOptions) defaults() DeepOptions {
	if o.Hidden == 0 {
		o.Hidden = 32
	}
	if o.Iterations == 0 {
		o.Iterations = 400
	}
	if o.Rate == 0 {
		o.Rate = 0.01
	}
	if o.L2 == 0 {
		o.L2 = 3e-3
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// deepChunks: the training sums the gradient over this many fixed slices
// of the examples, each in its own goroutine, and adds the slices' sums
// in order, so that the same examples give the same weights on any
// number of cores.
const deepChunks = 4

// TrainDeep fits m.Deep to the examples that carry a sentence vector of
// m's length (m.VecScale as fitted): softmax over the kinds, from weights
// drawn with a fixed seed, by full-batch Adam with L2 on every weight but
// the biases. The same examples always give the same weights.
func TrainDeep(m *Model, examples []Example, opt DeepOptions) {
	opt = opt.defaults()
	if m.VecDim == 0 {
		return
	}
	var ex []Example
	for _, e := range examples {
		if len(e.Vec) == m.VecDim {
			ex = append(ex, e)
		}
	}
	if len(ex) == 0 {
		return
	}
	H, D := opt.Hidden, m.VecDim
	r := rand.New(rand.NewSource(opt.Seed))
	sc := float64(m.scale())
	in := make([]float64, H*D)
	for i := range in {
		in[i] = r.NormFloat64() * math.Sqrt(2/float64(D)) / sc
	}
	bias := make([]float64, H)
	kw := Dim + H
	out := make([]float64, kinds*kw)
	for k := 0; k < kinds; k++ {
		for j := 0; j < H; j++ {
			out[k*kw+Dim+j] = r.NormFloat64() / math.Sqrt(float64(H))
		}
	}
	feats := make([][]Feature, len(ex))
	vecs := make([][]float64, len(ex))
	for i, e := range ex {
		feats[i] = FeaturesIn(e.Text, e.contextOr())
		v := make([]float64, D)
		for j, x := range e.Vec {
			v[j] = float64(x * float32(sc))
		}
		vecs[i] = v
	}
	params := [][]float64{in, bias, out}
	ms := make([][]float64, len(params))
	vs := make([][]float64, len(params))
	for i, p := range params {
		ms[i], vs[i] = make([]float64, len(p)), make([]float64, len(p))
	}
	// noL2 marks the biases: the hidden units' and each kind row's bias
	// cue.
	noL2 := func(pi, i int) bool { return pi == 1 || pi == 2 && i%kw == Buckets }
	type grads struct{ in, bias, out []float64 }
	chunkGrad := func(lo, hi int) grads {
		g := grads{make([]float64, len(in)), make([]float64, H), make([]float64, len(out))}
		h := make([]float64, H)
		dh := make([]float64, H)
		for i := lo; i < hi; i++ {
			p := deepForward(in, bias, out, H, feats[i], vecs[i], h)
			clear(dh)
			for k := 0; k < kinds; k++ {
				d := p[k]
				if k == ex[i].Kind {
					d--
				}
				row := out[k*kw : (k+1)*kw]
				grow := g.out[k*kw : (k+1)*kw]
				for _, f := range feats[i] {
					grow[f.I] += d * float64(f.V)
				}
				for j := 0; j < H; j++ {
					grow[Dim+j] += d * h[j]
					dh[j] += d * row[Dim+j]
				}
			}
			for j := 0; j < H; j++ {
				if h[j] <= 0 {
					continue
				}
				g.bias[j] += dh[j]
				grow := g.in[j*D : (j+1)*D]
				for q, x := range vecs[i] {
					grow[q] += dh[j] * x
				}
			}
		}
		return g
	}
	const b1, b2, eps = 0.9, 0.999, 1e-8
	n := float64(len(ex))
	for it := 1; it <= opt.Iterations; it++ {
		parts := make([]grads, deepChunks)
		var wg sync.WaitGroup
		for c := 0; c < deepChunks; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				parts[c] = chunkGrad(c*len(ex)/deepChunks, (c+1)*len(ex)/deepChunks)
			}(c)
		}
		wg.Wait()
		c1 := 1 - math.Pow(b1, float64(it))
		c2 := 1 - math.Pow(b2, float64(it))
		for pi, p := range params {
			of := make([][]float64, len(parts))
			for c, part := range parts {
				of[c] = [][]float64{part.in, part.bias, part.out}[pi]
			}
			for i := range p {
				var g float64
				for _, gs := range of {
					g += gs[i]
				}
				g /= n
				if !noL2(pi, i) {
					g += opt.L2 * p[i]
				}
				if g == 0 && ms[pi][i] == 0 && vs[pi][i] == 0 {
					continue
				}
				ms[pi][i] = b1*ms[pi][i] + (1-b1)*g
				vs[pi][i] = b2*vs[pi][i] + (1-b2)*g*g
				p[i] -= opt.Rate * (ms[pi][i] / c1) / (math.Sqrt(vs[pi][i]/c2) + eps)
			}
		}
	}
	d := &Deep{H: H, In: to32(in), Bias: to32(bias)}
	for k := 0; k < kinds; k++ {
		d.Kind[k] = to32(out[k*kw : (k+1)*kw])
	}
	m.Deep = d
}

func (e Example) contextOr() string {
	if e.Context != "" {
		return e.Context
	}
	return e.Text
}

// deepForward is the training's forward pass: the hidden units into h,
// and the kinds' probabilities.
func deepForward(in, bias, out []float64, H int, fs []Feature, vec []float64, h []float64) [kinds]float64 {
	D := len(vec)
	for j := 0; j < H; j++ {
		s := bias[j]
		for q, x := range in[j*D : (j+1)*D] {
			s += x * vec[q]
		}
		h[j] = max(s, 0)
	}
	kw := Dim + H
	var z [kinds]float64
	for k := 0; k < kinds; k++ {
		row := out[k*kw : (k+1)*kw]
		var s float64
		for _, f := range fs {
			s += row[f.I] * float64(f.V)
		}
		for j := 0; j < H; j++ {
			s += row[Dim+j] * h[j]
		}
		z[k] = s
	}
	return softmax(z)
}

func softmax(z [kinds]float64) [kinds]float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = max(mx, v)
	}
	var sum float64
	for k := range z {
		z[k] = math.Exp(z[k] - mx)
		sum += z[k]
	}
	for k := range z {
		z[k] /= sum
	}
	return z
}

// read is the deep reading's kind probabilities for a unit's features and
// its sentence vector (of the model's length), scaled by sc.
func (d *Deep) read(fs []Feature, vec []float32, sc float32) [kinds]float64 {
	D := len(vec)
	h := make([]float64, d.H)
	for j := range h {
		s := float64(d.Bias[j])
		for q, w := range d.In[j*D : (j+1)*D] {
			s += float64(w) * float64(vec[q]*sc)
		}
		h[j] = max(s, 0)
	}
	var z [kinds]float64
	for k := range z {
		row := d.Kind[k]
		var s float64
		for _, f := range fs {
			s += float64(row[f.I]) * float64(f.V)
		}
		for j, x := range h {
			s += float64(row[Dim+j]) * x
		}
		z[k] = s
	}
	return softmax(z)
}
