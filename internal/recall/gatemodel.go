package recall

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/engram-memory/engram/internal/embed"
)

// The fitted gate: whether a memory is worth injecting for a prompt, as a
// logistic model of P(relevant) over what recall knows of the pair (its
// words in common, its cosines, how far it stands out from the store, how
// close it sits to prompts in general) instead of thresholds chosen by
// hand. bench/gatefit fits it on labelled (prompt, memory, relevant?)
// pairs from several sources, checks it on a split it was not fitted on,
// and writes the built-in policy (gate_policy.go; gate.json is the same
// as a file, for ENGRAM_RECALL_POLICY), which says where each model came
// from.

// GateModel decides for one embedder's candidates (Embedder "" is recall
// without the sentence embedder: lexical features only).
type GateModel struct {
	Embedder string `json:"embedder"`
	// Features names the inputs, in the order of Weights (see
	// gateFeatures); Mean and Scale standardise them.
	Features []string  `json:"features"`
	Mean     []float64 `json:"mean"`
	Scale    []float64 `json:"scale"`
	Weights  []float64 `json:"weights,omitempty"`
	// Trees, when there are any, are a boosted ensemble used in place of
	// the linear weights: P(relevant) = sigmoid(Bias + the sum of each
	// tree's leaf), on the features as they are (Mean and Scale unused).
	Trees []Tree  `json:"trees,omitempty"`
	Bias  float64 `json:"bias"`
	// Threshold is the least P(relevant) a memory must have to pass.
	Threshold float64 `json:"threshold"`
	// Veto: the model was fitted on the memories the hand-set gate
	// passes, and decides among those only (it takes out what is
	// unlikely to be relevant, it lets nothing else in).
	Veto bool `json:"veto,omitempty"`
	// Centroid is the mean of the embedder's vectors of a background set
	// of prompts (unit length; CentroidNorm its length before): a memory
	// close to it comes close to many prompts (a hub) and must stand out
	// more to pass.
	Centroid     []float32 `json:"centroid,omitempty"`
	CentroidNorm float64   `json:"centroid_norm,omitempty"`
	// Source says what it was fitted on and what it measured, fitted and
	// checked.
	Source string `json:"source"`

	// fns are the features' functions, resolved when parsed.
	fns []func(v *GateView, c *Candidate) float64
}

// Policy is the fitted gate models, one per embedder, and, in a policy
// file, the hand-set settings of recall it changes.
type Policy struct {
	Gates []GateModel `json:"gates"`
	// Recall, in a file, sets the Settings it names (the gate's
	// thresholds, the limits, the ranking weights, by their JSON names)
	// in place of New's; those it does not name keep their values.
	Recall json.RawMessage `json:"recall,omitempty"`
	// noGates: a file without "gates" keeps the built-in gates.
	noGates bool
}

// decodeSettings sets the settings of s that raw names; a name Settings
// does not have is an error (a setting misspelt would silently keep its
// default).
func decodeSettings(raw json.RawMessage, s *Settings) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(s)
}

// Gate returns the model for an embedder's candidates, nil when the
// policy has none (the hand-set gate decides).
func (p *Policy) Gate(embedder string) *GateModel {
	if p == nil {
		return nil
	}
	for i := range p.Gates {
		if p.Gates[i].Embedder == embedder {
			return &p.Gates[i]
		}
	}
	return nil
}

var policyOnce sync.Once

// DefaultPolicy is the built-in policy (gate_policy.go, which
// bench/gatefit writes as Go: parsing its JSON would cost the prompt hook
// milliseconds at every start).
func DefaultPolicy() *Policy {
	policyOnce.Do(func() { builtinPolicy.resolve() })
	return &builtinPolicy
}

// resolve looks up the features' functions once.
func (p *Policy) resolve() {
	for i := range p.Gates {
		g := &p.Gates[i]
		g.fns = g.fns[:0]
		for _, f := range g.Features {
			g.fns = append(g.fns, gateFeatures[f])
		}
	}
}

// Check checks every gate of the policy.
func (p *Policy) Check() error {
	for i := range p.Gates {
		if err := p.Gates[i].check(); err != nil {
			return fmt.Errorf("recall policy: gate %q: %w", p.Gates[i].Embedder, err)
		}
	}
	return nil
}

// LoadPolicy reads a policy file (the benches' sweeps).
func LoadPolicy(path string) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := ParsePolicy(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// UsePolicyFile makes r use the policy in path instead of the built-in
// one ("" keeps it); an unreadable or invalid file leaves r as it was.
func (r *Recaller) UsePolicyFile(path string) error {
	if path == "" {
		return nil
	}
	p, err := LoadPolicy(path)
	if err != nil {
		return err
	}
	s := r.Settings
	if len(p.Recall) > 0 {
		// ParsePolicy decoded and checked it on the defaults.
		if err := decodeSettings(p.Recall, &s); err != nil {
			return err
		}
	}
	r.Settings = s
	if !p.noGates {
		r.Policy = p
	}
	return nil
}

// ParsePolicy parses and checks a policy; a name it does not know is an
// error (a setting misspelt would silently be the default).
func ParsePolicy(b []byte) (*Policy, error) {
	var p Policy
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("recall policy: %w", err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return nil, fmt.Errorf("recall policy: %w", err)
	}
	_, has := keys["gates"]
	p.noGates = !has
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(p.Recall) > 0 {
		s := DefaultSettings
		if err := decodeSettings(p.Recall, &s); err != nil {
			return nil, fmt.Errorf("recall policy: recall: %w", err)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("recall policy: %w", err)
		}
	}
	p.resolve()
	return &p, nil
}

// Tree is one regression tree of a boosted gate, its nodes flat: node 0
// is the root; a node with Left < 0 is a leaf of Value, another sends a
// candidate whose feature Feature is below Threshold to Left, else to
// Right.
type Tree struct {
	Nodes []Node `json:"nodes"`
}

// Node is one node of a Tree.
type Node struct {
	Feature   int     `json:"f,omitempty"`
	Threshold float64 `json:"t,omitempty"`
	Left      int     `json:"l"`
	Right     int     `json:"r,omitempty"`
	Value     float64 `json:"v,omitempty"`
}

// Leaf is the value of the leaf x reaches (x holds the model's features
// in order).
func (t *Tree) Leaf(x []float64) float64 {
	i := 0
	for steps := 0; steps <= len(t.Nodes); steps++ {
		n := &t.Nodes[i]
		if n.Left < 0 {
			return n.Value
		}
		if x[n.Feature] < n.Threshold {
			i = n.Left
		} else {
			i = n.Right
		}
	}
	return 0 // a cycle: check refuses such a tree
}

func (t *Tree) check(features int) error {
	if len(t.Nodes) == 0 {
		return errors.New("a tree without nodes")
	}
	for i, n := range t.Nodes {
		if n.Left < 0 {
			continue
		}
		if n.Feature < 0 || n.Feature >= features {
			return fmt.Errorf("node %d: feature %d of %d", i, n.Feature, features)
		}
		// Children come after their parent: no cycle.
		if n.Left <= i || n.Right <= i || n.Left >= len(t.Nodes) || n.Right >= len(t.Nodes) {
			return fmt.Errorf("node %d: children %d, %d", i, n.Left, n.Right)
		}
	}
	return nil
}

func (g *GateModel) check() error {
	n := len(g.Features)
	if len(g.Trees) > 0 {
		for i := range g.Trees {
			if err := g.Trees[i].check(n); err != nil {
				return fmt.Errorf("tree %d: %w", i, err)
			}
		}
	} else if len(g.Weights) != n || len(g.Mean) != n || len(g.Scale) != n {
		return fmt.Errorf("%d features but %d weights, %d means, %d scales", n, len(g.Weights), len(g.Mean), len(g.Scale))
	}
	for _, f := range g.Features {
		if _, ok := gateFeatures[f]; !ok {
			return fmt.Errorf("unknown feature %q", f)
		}
	}
	for i, s := range g.Scale {
		if len(g.Trees) == 0 && !(s > 0) {
			return fmt.Errorf("feature %q: scale %v", g.Features[i], s)
		}
	}
	if !(g.Threshold > 0 && g.Threshold < 1) {
		return fmt.Errorf("threshold %v not in (0, 1)", g.Threshold)
	}
	if len(g.Centroid) > 0 && !(g.CentroidNorm > 0) {
		return fmt.Errorf("centroid without its norm")
	}
	return nil
}

// Pass decides for a candidate the hand-set gate passed (or not).
func (g *GateModel) Pass(v *GateView, c *Candidate, handSet bool) bool {
	if g.Veto && !handSet {
		return false
	}
	return g.Prob(v, c) >= g.Threshold
}

// Fitted reports whether the model can decide (it has weights).
func (g *GateModel) Fitted() bool { return g != nil && (len(g.Weights) > 0 || len(g.Trees) > 0) }

// Prob is P(relevant) for a candidate.
func (g *GateModel) Prob(v *GateView, c *Candidate) float64 {
	var buf [32]float64
	x := buf[:0]
	if len(g.fns) == len(g.Features) {
		for _, f := range g.fns {
			x = append(x, f(v, c))
		}
	} else {
		for _, f := range g.Features {
			x = append(x, v.Value(f, c))
		}
	}
	return g.ProbOf(x)
}

// ProbOf is P(relevant) for a candidate's features, in the model's order.
func (g *GateModel) ProbOf(x []float64) float64 {
	z := g.Bias
	if len(g.Trees) > 0 {
		for i := range g.Trees {
			z += g.Trees[i].Leaf(x)
		}
	} else {
		for i := range g.Weights {
			z += g.Weights[i] * (x[i] - g.Mean[i]) / g.Scale[i]
		}
	}
	return 1 / (1 + math.Exp(-z))
}

// GateView is what the gate knows of one prompt: its reading and the
// figures of the whole candidate set that a candidate's features are
// relative to.
type GateView struct {
	Res      *Result
	maxBM25  float64
	maxCov   float64
	maxDense float64
	maxGap   float64
	// many: the prompt asks for several things (AsksForMany; the Result
	// says so only with the sentence embedder, whose limits it changes).
	many bool
	// denses are the candidates' dense cosines, best first (for ranks).
	denses []float64
	terms  int
	// The prompt against the centroid: its cosine (qHub), and the
	// centroid's length.
	centroid []float32
	cNorm    float64
	qHub     float64
	// withDense are the candidates with a dense vector, and crowds each
	// one's crowd once computed (see crowd).
	withDense []*Candidate
	crowds    map[*Candidate]float64
}

// NewGateView sums up a prompt's candidates for their features.
// centroid (unit length, cNorm its length before) may be nil.
func NewGateView(res *Result, cands []*Candidate, centroid []float32, cNorm float64) *GateView {
	v := &GateView{Res: res, centroid: centroid, cNorm: cNorm}
	for _, t := range res.Terms {
		if !slices.Contains(res.Stop, t) {
			v.terms++
		}
	}
	for _, c := range cands {
		if c.HasBM25 {
			v.maxBM25 = math.Max(v.maxBM25, -c.BM25)
		}
		if c.Kind == KindEpisode {
			v.maxCov = math.Max(v.maxCov, float64(c.Coverage))
		}
		if c.HasDense() {
			v.withDense = append(v.withDense, c)
		}
		if c.HasDenseCos {
			v.maxDense = math.Max(v.maxDense, float64(c.Dense))
			v.maxGap = math.Max(v.maxGap, float64(c.DenseGap))
			v.denses = append(v.denses, float64(c.Dense))
		}
	}
	slices.SortFunc(v.denses, func(a, b float64) int { return cmp.Compare(b, a) })
	if len(centroid) > 0 && len(centroid) == len(res.qdense) {
		v.qHub = float64(embed.Cosine(centroid, res.qdense))
	}
	return v
}

// hub is a candidate's cosine with the centroid (0 without one).
func (v *GateView) hub(c *Candidate) float64 {
	if len(v.centroid) == 0 || !c.HasDense() {
		return 0
	}
	return float64(c.DenseCos(v.centroid))
}

// crowdOf is how many of the nearest other candidates the crowd features
// average over.
const crowdOf = 3

// crowd is the mean cosine, in the sentence embedder's space, between a
// candidate and its crowdOf nearest other candidates: a memory that has
// near copies among what the prompt found is one of a routine (an earlier
// "squash-merge PR 151" among twenty of them), which says nothing the new
// prompt needs; a memory that stands alone among them is specific. 0
// without a dense vector or with no other candidate that has one.
func (v *GateView) crowd(c *Candidate) float64 {
	if !c.HasDense() || len(v.withDense) < 2 {
		return 0
	}
	if x, ok := v.crowds[c]; ok {
		return x
	}
	vec := c.Item.Dense
	if len(vec) == 0 {
		vec = make([]float32, len(c.d8))
		for i, q := range c.d8 {
			vec[i] = float32(q) * c.dInvNorm
		}
	}
	var top [crowdOf]float64
	n := 0
	for _, o := range v.withDense {
		if o == c {
			continue
		}
		x := float64(o.DenseCos(vec))
		if n < crowdOf {
			top[n] = x
			n++
		} else if i := slices.Index(top[:], slices.Min(top[:])); x > top[i] {
			top[i] = x
		}
	}
	sum := 0.0
	for _, x := range top[:n] {
		sum += x
	}
	if v.crowds == nil {
		v.crowds = map[*Candidate]float64{}
	}
	v.crowds[c] = sum / float64(n)
	return v.crowds[c]
}

// promptCrowd is the mean dense cosine of the prompt's crowdOf nearest
// candidates: a prompt that repeats a routine has many memories nearly as
// close as its best.
func (v *GateView) promptCrowd() float64 {
	n := min(crowdOf, len(v.denses))
	if n == 0 {
		return 0
	}
	sum := 0.0
	for _, d := range v.denses[:n] {
		sum += d
	}
	return sum / float64(n)
}

// Value is one feature of a candidate (0 for an unknown name).
func (v *GateView) Value(name string, c *Candidate) float64 {
	f := gateFeatures[name]
	if f == nil {
		return 0
	}
	return f(v, c)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// gateFeatures are the inputs a gate model may use.
var gateFeatures = map[string]func(v *GateView, c *Candidate) float64{
	"belief":   func(v *GateView, c *Candidate) float64 { return b2f(c.Kind == KindBelief) },
	"coverage": func(v *GateView, c *Candidate) float64 { return float64(c.Coverage) },
	"lexcos":   func(v *GateView, c *Candidate) float64 { return math.Max(0, float64(c.Cos)) },
	// has_vec: the memory has a local vector (one the search found in the
	// index has none, and its lexcos is 0).
	"has_vec":    func(v *GateView, c *Candidate) float64 { return b2f(c.HasVec()) },
	"lexical":    func(v *GateView, c *Candidate) float64 { return lexicalRelevance(*c) },
	"has_words":  func(v *GateView, c *Candidate) float64 { return b2f(c.Coverage > 0) },
	"bm25":       func(v *GateView, c *Candidate) float64 { return bmShare(v, c) },
	"dense":      func(v *GateView, c *Candidate) float64 { return denseOr0(c) },
	"has_dense":  func(v *GateView, c *Candidate) float64 { return b2f(c.HasDenseCos) },
	"gap":        func(v *GateView, c *Candidate) float64 { return gapOr0(c) },
	"below_best": func(v *GateView, c *Candidate) float64 { return v.maxDense - denseOr0(c) },
	"hub":        func(v *GateView, c *Candidate) float64 { return v.hub(c) },
	// centered is the cosine of prompt and memory once the centroid is
	// taken from both (the usual remedy for hubs).
	"centered": func(v *GateView, c *Candidate) float64 {
		if len(v.centroid) == 0 || !c.HasDenseCos {
			return 0
		}
		m := v.cNorm
		qm, mh := v.qHub*m, v.hub(c)*m
		num := float64(c.Dense) - qm - mh + m*m
		den := math.Sqrt(math.Max(1e-9, (1-2*qm+m*m)*(1-2*mh+m*m)))
		return num / den
	},
	"prompt_hub": func(v *GateView, c *Candidate) float64 { return v.qHub },
	// crowd and prompt_crowd: near copies of the memory among the
	// candidates, and of the prompt's best (see crowd).
	"crowd":        func(v *GateView, c *Candidate) float64 { return v.crowd(c) },
	"prompt_crowd": func(v *GateView, c *Candidate) float64 { return v.promptCrowd() },
	"max_gap":      func(v *GateView, c *Candidate) float64 { return v.maxGap },
	// dense_rank is log(1 + how many candidates are nearer in meaning).
	"dense_rank": func(v *GateView, c *Candidate) float64 {
		if !c.HasDenseCos {
			return math.Log1p(float64(len(v.denses)))
		}
		d := float64(c.Dense)
		n, _ := slices.BinarySearchFunc(v.denses, d, func(a, b float64) int { return cmp.Compare(b, a) })
		return math.Log1p(float64(n))
	},
	"stated":     func(v *GateView, c *Candidate) float64 { return b2f(c.Stated || c.Kind == KindBelief) },
	"confidence": func(v *GateView, c *Candidate) float64 { return float64(c.Confidence) },
	// importance: what the extractor made of an episode (a statement, a
	// decision, a bare request); a belief's is its own.
	"importance":    func(v *GateView, c *Candidate) float64 { return float64(c.Importance) },
	"superseded":    func(v *GateView, c *Candidate) float64 { return b2f(c.Superseded) },
	"neighbor":      func(v *GateView, c *Candidate) float64 { return b2f(c.Neighbor) },
	"past":          func(v *GateView, c *Candidate) float64 { return b2f(v.Res.Past) },
	"many":          func(v *GateView, c *Candidate) float64 { return b2f(v.many) },
	"terms":         func(v *GateView, c *Candidate) float64 { return math.Log1p(float64(v.terms)) },
	"best_coverage": func(v *GateView, c *Candidate) float64 { return v.maxCov },
	"belief_gap":    func(v *GateView, c *Candidate) float64 { return b2f(c.Kind == KindBelief) * gapOr0(c) },
	"stated_gap":    func(v *GateView, c *Candidate) float64 { return b2f(c.Stated) * gapOr0(c) },
	"cov_dense":     func(v *GateView, c *Candidate) float64 { return float64(c.Coverage) * denseOr0(c) },
}

// GateFeatures lists the names a gate model may use.
func GateFeatures() []string {
	out := make([]string, 0, len(gateFeatures))
	for k := range gateFeatures {
		out = append(out, k)
	}
	return out
}

func denseOr0(c *Candidate) float64 {
	if !c.HasDenseCos {
		return 0
	}
	return float64(c.Dense)
}

func gapOr0(c *Candidate) float64 {
	if !c.HasDenseCos {
		return 0
	}
	return float64(c.DenseGap)
}

func bmShare(v *GateView, c *Candidate) float64 {
	if !c.HasBM25 || v.maxBM25 <= 0 {
		return 0
	}
	return -c.BM25 / v.maxBM25
}
