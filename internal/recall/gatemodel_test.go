package recall

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/embed"
)

// The embedded policy parses, and each of its gates can decide.
func TestDefaultPolicy(t *testing.T) {
	p := DefaultPolicy()
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	// gate.json, the same policy as a file, says the same.
	f, err := LoadPolicy("gate.json")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(f)
	b, _ := json.Marshal(p)
	if string(a) != string(b) {
		t.Error("gate.json and gate_policy.go differ: write both with bench/gatefit")
	}
	dense := 0
	for _, g := range p.Gates {
		if !g.Fitted() || g.Source == "" {
			t.Errorf("gate %q: fitted %v, source %q", g.Embedder, g.Fitted(), g.Source)
		}
		if g.Embedder != "" {
			dense++
			if len(g.Centroid) == 0 {
				t.Errorf("gate %q has no centroid", g.Embedder)
			}
		}
	}
	if dense == 0 {
		t.Error("no gate for the sentence embedder")
	}
}

// A policy file that does not hold together is refused, saying why.
func TestParsePolicyRefuses(t *testing.T) {
	good := GateModel{Embedder: "e", Features: []string{"coverage", "dense"}, Mean: []float64{0, 0}, Scale: []float64{1, 1},
		Weights: []float64{1, 1}, Threshold: 0.5}
	for _, c := range []struct {
		name, want string
		edit       func(g *GateModel)
	}{
		{"fewer weights", "2 features but 1 weights", func(g *GateModel) { g.Weights = g.Weights[:1] }},
		{"unknown feature", `unknown feature "sparkle"`, func(g *GateModel) { g.Features[1] = "sparkle" }},
		{"zero scale", `feature "dense": scale 0`, func(g *GateModel) { g.Scale[1] = 0 }},
		{"threshold 1", "threshold 1 not in (0, 1)", func(g *GateModel) { g.Threshold = 1 }},
		{"centroid without norm", "centroid without its norm", func(g *GateModel) { g.Centroid = []float32{1, 0} }},
	} {
		g := good
		g.Features, g.Scale, g.Weights = slices.Clone(good.Features), slices.Clone(good.Scale), slices.Clone(good.Weights)
		c.edit(&g)
		b, _ := json.Marshal(Policy{Gates: []GateModel{g}})
		_, err := ParsePolicy(b)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	b, _ := json.Marshal(Policy{Gates: []GateModel{good}})
	if _, err := ParsePolicy(b); err != nil {
		t.Errorf("good policy: %v", err)
	}
	if _, err := ParsePolicy([]byte("{")); err == nil {
		t.Error("truncated JSON parsed")
	}
}

// The centered cosine is the cosine of prompt and memory with the
// centroid taken from both, and the hub the memory's cosine with it.
func TestCenteredCosine(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	q, m, mu := randUnit(r, 64), randUnit(r, 64), randUnit(r, 64)
	const norm = 0.6
	res := &Result{qdense: q}
	c := &Candidate{Item: Item{Kind: KindEpisode, Dense: m}, HasDenseCos: true, Dense: embed.Cosine(q, m)}
	v := NewGateView(res, []*Candidate{c}, mu, norm)
	sub := func(a []float32) []float64 {
		out := make([]float64, len(a))
		for i := range a {
			out[i] = float64(a[i]) - norm*float64(mu[i])
		}
		return out
	}
	qc, mc := sub(q), sub(m)
	var num, nq, nm float64
	for i := range qc {
		num += qc[i] * mc[i]
		nq += qc[i] * qc[i]
		nm += mc[i] * mc[i]
	}
	want := num / math.Sqrt(nq*nm)
	if got := v.Value("centered", c); math.Abs(got-want) > 1e-4 {
		t.Errorf("centered %.5f, want %.5f", got, want)
	}
	if got, want := v.Value("hub", c), float64(embed.Cosine(m, mu)); math.Abs(got-want) > 1e-5 {
		t.Errorf("hub %.5f, want %.5f", got, want)
	}
	if got, want := v.Value("prompt_hub", c), float64(embed.Cosine(q, mu)); math.Abs(got-want) > 1e-5 {
		t.Errorf("prompt hub %.5f, want %.5f", got, want)
	}
	// Without a centroid the hub features are 0.
	if got := NewGateView(res, []*Candidate{c}, nil, 0).Value("centered", c); got != 0 {
		t.Errorf("centered without a centroid: %v", got)
	}
}

// A policy file sets the recall settings it names and keeps the others,
// and the built-in gates when it has no "gates"; a misspelt or
// out-of-range setting is an error that names it and changes nothing.
func TestPolicySettings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r := New(dir, nil)
	if err := r.UsePolicyFile(file("sweep.json", `{"recall": {"keep_share": 0.5, "fts_limit": 30, "weights": {"bm25": 0.3}}}`)); err != nil {
		t.Fatal(err)
	}
	want := New(dir, nil)
	want.KeepShare, want.FTSLimit, want.Weights.BM25 = 0.5, 30, 0.3
	if r.KeepShare != want.KeepShare || r.FTSLimit != want.FTSLimit || r.Weights != want.Weights || r.OpenScore != want.OpenScore ||
		r.ManyKeepShare != want.ManyKeepShare {
		t.Errorf("settings: keep %v fts %d weights %+v, want keep %v fts %d weights %+v", r.KeepShare, r.FTSLimit, r.Weights,
			want.KeepShare, want.FTSLimit, want.Weights)
	}
	if r.Policy != DefaultPolicy() {
		t.Error("a file without gates replaced the built-in ones")
	}
	// The limits, the link and subject settings and the belief blend are
	// settings like the others.
	if err := r.UsePolicyFile(file("limits.json", `{"recall": {"limits": {"memories": 2}, "link_discount": 0.5, "subject_boost": 0.3, "ref_rank": 3, "weights": {"superseded": 0.25, "belief_words": 0.1}}}`)); err != nil {
		t.Fatal(err)
	}
	lim := DefaultSettings.Limits
	lim.Memories = 2
	if r.LimitsFor(Result{}) != lim || r.LimitsFor(Result{Many: true}) != DefaultSettings.ManyLimits || r.LinkDiscount != 0.5 ||
		r.SubjectBoost != 0.3 || r.RefRank != 3 || r.Weights.Superseded != 0.25 || r.Weights.BeliefWords != 0.1 ||
		r.Weights.BeliefMatch != DefaultSettings.Weights.BeliefMatch {
		t.Errorf("limits %+v (many %+v), link %v, boost %v, ref rank %d, weights %+v", r.LimitsFor(Result{}), r.LimitsFor(Result{Many: true}),
			r.LinkDiscount, r.SubjectBoost, r.RefRank, r.Weights)
	}
	if err := r.UsePolicyFile(file("nogate.json", `{"gates": []}`)); err != nil || r.Policy.Gate(DefaultPolicy().Gates[0].Embedder) != nil {
		t.Errorf("a file with no gate: err %v, gate %v", err, r.Policy.Gate(DefaultPolicy().Gates[0].Embedder))
	}
	for _, c := range []struct{ body, want string }{
		{`{"recall": {"keep_shar": 0.5}}`, `unknown field "keep_shar"`},
		{`{"recall": {"keep_share": 1.5}}`, "recall.keep_share 1.5: want 0 to 1"},
		{`{"recall": {"weights": {"recency_days": 0}}}`, "recall.weights.recency_days 0: want more than 0"},
		{`{"recall": {"max_terms": 0}}`, "recall.max_terms 0: want 1 or more"},
		{`{"recall": {"limits": {"budget": 0}}}`, "recall.limits.budget 0: want 1 or more"},
		{`{"recall": {"weights": {"dense_slope": -1}}}`, "recall.weights.dense_slope -1: want more than 0"},
		{`{"recall": {"link_discount": 2}}`, "recall.link_discount 2: want 0 to 1"},
	} {
		r := New(dir, nil)
		err := r.UsePolicyFile(file("bad.json", c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.body, err, c.want)
		}
		if fresh := New(dir, nil); r.Settings != fresh.Settings {
			t.Errorf("%s: a refused file changed the settings", c.body)
		}
	}
}

// Every default setting is within the range a policy file is held to.
func TestDefaultSettingsInRange(t *testing.T) {
	if err := DefaultSettings.check(); err != nil {
		t.Fatal(err)
	}
}

// The crowd of a memory is the mean cosine with its crowdOf nearest
// other candidates, whether their vectors are float or quantised; the
// prompt's crowd is the mean dense cosine of its crowdOf best.
func TestCrowd(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	q := randUnit(r, 64)
	vecs := make([][]float32, 6)
	for i := range vecs {
		vecs[i] = randUnit(r, 64)
	}
	var cands []*Candidate
	for i, v := range vecs {
		it := Item{Kind: KindEpisode, Dense: v}
		if i%2 == 1 { // quantised, as the recollection files hold them
			it.Dense = nil
			it.d8, it.dInvNorm = quantize(v)
		}
		cands = append(cands, &Candidate{Item: it, HasDenseCos: true, Dense: embed.Cosine(q, v)})
	}
	cands = append(cands, &Candidate{Item: Item{Kind: KindEpisode}}) // no vector: no crowd, not in one
	v := NewGateView(&Result{qdense: q}, cands, nil, 0)
	for i, c := range cands[:len(vecs)] {
		var cos []float64
		for j, o := range vecs {
			if j != i {
				cos = append(cos, float64(embed.Cosine(vecs[i], o)))
			}
		}
		slices.SortFunc(cos, func(a, b float64) int { return cmp.Compare(b, a) })
		want := (cos[0] + cos[1] + cos[2]) / 3
		if got := v.Value("crowd", c); math.Abs(got-want) > 0.02 {
			t.Errorf("candidate %d: crowd %.4f, want %.4f", i, got, want)
		}
	}
	if got := v.Value("crowd", cands[len(vecs)]); got != 0 {
		t.Errorf("crowd without a vector: %v", got)
	}
	var ds []float64
	for _, c := range cands[:len(vecs)] {
		ds = append(ds, float64(c.Dense))
	}
	slices.SortFunc(ds, func(a, b float64) int { return cmp.Compare(b, a) })
	if got, want := v.Value("prompt_crowd", cands[0]), (ds[0]+ds[1]+ds[2])/3; math.Abs(got-want) > 1e-6 {
		t.Errorf("prompt crowd %.5f, want %.5f", got, want)
	}
	// A memory alone has no crowd.
	if got := NewGateView(&Result{qdense: q}, cands[:1], nil, 0).Value("crowd", cands[0]); got != 0 {
		t.Errorf("a lone memory's crowd: %v", got)
	}
}

// A fitted gate decides in place of the hand-set one, and Observe sees
// every candidate with the decision: here a model that passes a memory
// only when it is near the prompt in meaning drops one the hand-set gate
// passes by its words and keeps one it drops for standing out too little.
func TestFittedGateDecides(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	q := randUnit(r, 384)
	mk, unrelated := episodesNear(r, q)
	snacks := mk("snacks to pack for the road trip", 0.60)
	budget := mk("road trip budget spreadsheet", 0.40)
	items := append(slices.Clone(unrelated), snacks, budget)
	ask := func(p *Policy) (Result, map[string]bool) {
		ix := writeIndex(t, t.TempDir(), &File{Embedder: "local-v1-256", Dense: testDense, Items: items})
		defer ix.Close()
		rc := New(t.TempDir(), ix)
		rc.Dense = fixedDense(q)
		rc.KeepShare = 0
		rc.Policy = p
		seen := map[string]bool{}
		rc.Observe = func(v *GateView, c *Candidate, passed bool) {
			if v.Res == nil || v.Value("dense", c) != float64(c.Dense) {
				t.Errorf("%s: the view's dense feature %v, the candidate's %v", c.ID, v.Value("dense", c), c.Dense)
			}
			seen[strings.Clone(c.ID)] = passed
		}
		return rc.Recall(context.Background(), Query{Text: "road trip snacks to pack?", Now: now}), seen
	}
	res, seen := ask(nil)
	if !slices.Equal(episodeIDs(res), []string{snacks.ID, budget.ID}) || !seen[snacks.ID] || !seen[budget.ID] {
		t.Fatalf("hand-set gate: %v, observed %v", episodeIDs(res), seen)
	}
	// P(relevant) = sigmoid(40 (dense - 0.5)): the snacks at 0.60 pass,
	// the budget at 0.40 does not.
	p := &Policy{Gates: []GateModel{{Embedder: testDense, Features: []string{"dense"}, Mean: []float64{0.5}, Scale: []float64{1},
		Weights: []float64{40}, Threshold: 0.5, Source: "test"}}}
	res, seen = ask(p)
	if !slices.Equal(episodeIDs(res), []string{snacks.ID}) || !seen[snacks.ID] || seen[budget.ID] {
		t.Errorf("fitted gate: %v, observed %v", episodeIDs(res), seen)
	}
	if _, ok := seen[unrelated[0].ID]; ok && seen[unrelated[0].ID] {
		t.Errorf("a far memory passed the fitted gate")
	}
	// A veto decides only among what the hand-set gate passes: one that
	// finds everything relevant lets no far memory in, and the model above
	// as a veto takes out the budget memory.
	all := &Policy{Gates: []GateModel{{Embedder: testDense, Features: []string{"dense"}, Mean: []float64{0}, Scale: []float64{1},
		Weights: []float64{0}, Bias: 5, Threshold: 0.5, Veto: true, Source: "test"}}}
	res, seen = ask(all)
	if !slices.Equal(episodeIDs(res), []string{snacks.ID, budget.ID}) {
		t.Errorf("veto passing all: %v, observed %v", episodeIDs(res), seen)
	}
	p.Gates[0].Veto = true
	res, _ = ask(p)
	if !slices.Equal(episodeIDs(res), []string{snacks.ID}) {
		t.Errorf("veto by meaning: %v", episodeIDs(res))
	}
	// A gate for another embedder does not apply.
	p.Gates[0].Embedder = "another-model"
	res, _ = ask(p)
	if len(res.Episodes) != 2 {
		t.Errorf("gate of another embedder applied: %v", episodeIDs(res))
	}
}

// A boosted gate sums its trees' leaves; a tree whose children do not come
// after their parent (a cycle) or name a feature the model lacks is refused.
func TestTreeGate(t *testing.T) {
	tree := Tree{Nodes: []Node{{Feature: 1, Threshold: 0.5, Left: 1, Right: 2}, {Left: -1, Value: -1}, {Left: -1, Value: 2}}}
	g := GateModel{Embedder: "e", Features: []string{"coverage", "dense"}, Trees: []Tree{tree, tree}, Bias: 0.5, Threshold: 0.5}
	b, _ := json.Marshal(Policy{Gates: []GateModel{g}})
	p, err := ParsePolicy(b)
	if err != nil {
		t.Fatal(err)
	}
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	if got, want := p.Gates[0].ProbOf([]float64{0.9, 0.4}), sig(0.5-2); math.Abs(got-want) > 1e-12 {
		t.Errorf("below the split: %v, want %v", got, want)
	}
	if got, want := p.Gates[0].ProbOf([]float64{0, 0.5}), sig(0.5+4); math.Abs(got-want) > 1e-12 {
		t.Errorf("at the split: %v, want %v", got, want)
	}
	c := &Candidate{Item: Item{Kind: KindEpisode}, HasDenseCos: true, Dense: 0.7, Coverage: 0.1}
	if got := p.Gates[0].Prob(NewGateView(&Result{}, []*Candidate{c}, nil, 0), c); math.Abs(got-sig(4.5)) > 1e-12 {
		t.Errorf("through the view: %v", got)
	}
	for _, bad := range []struct {
		name, want string
		nodes      []Node
	}{
		{"cycle", "node 0: children 0, 2", []Node{{Feature: 0, Left: 0, Right: 2}, {Left: -1}, {Left: -1}}},
		{"feature", "node 0: feature 2 of 2", []Node{{Feature: 2, Left: 1, Right: 2}, {Left: -1}, {Left: -1}}},
		{"empty", "a tree without nodes", nil},
	} {
		g := g
		g.Trees = []Tree{{Nodes: bad.nodes}}
		b, _ := json.Marshal(Policy{Gates: []GateModel{g}})
		if _, err := ParsePolicy(b); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.name, err, bad.want)
		}
	}
}

// A prompt that asks for several things is read so before the gate (a
// feature of the fitted one), but the Result says so only with the
// sentence embedder, as before: without it the limits stay the usual ones.
func TestManyOnlyWithTheEmbedder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	q := randUnit(r, 384)
	mk, unrelated := episodesNear(r, q)
	items := append(slices.Clone(unrelated), mk("snacks to pack for the road trip", 0.6))
	ix := writeIndex(t, t.TempDir(), &File{Embedder: "local-v1-256", Dense: testDense, Items: items})
	defer ix.Close()
	const prompt = "which snacks should we pack for the road trip?"
	for _, dense := range []bool{false, true} {
		rc := New(t.TempDir(), ix)
		if dense {
			rc.Dense = fixedDense(q)
		}
		var viewMany bool
		rc.Observe = func(v *GateView, c *Candidate, passed bool) { viewMany = v.Value("many", c) == 1 }
		res := rc.Recall(context.Background(), Query{Text: prompt, Now: now})
		if res.Many != dense || !viewMany {
			t.Errorf("dense %v: Result.Many %v, the gate's many %v", dense, res.Many, viewMany)
		}
	}
}
