package main

import (
	"github.com/engram-memory/engram/bench/internal/benchkit"
	"math"
	"math/rand/v2"
	"testing"
)

// Boosted trees find a threshold on one of two features through label
// noise, with probabilities on the right side of one half well away from
// it.
func TestBoostLearnsAThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	sample := func(n int) ([][]float64, []float64) {
		var xs [][]float64
		var ys []float64
		for range n {
			x := []float64{r.Float64(), r.Float64()}
			y := 0.0
			if x[0] > 0.6 {
				y = 1
			}
			if r.Float64() < 0.05 {
				y = 1 - y
			}
			xs, ys = append(xs, x), append(ys, y)
		}
		return xs, ys
	}
	xs, ys := sample(4000)
	bias, trees := boost(xs, ys, boostOptions{trees: 60, depth: 2, rate: 0.1, lambda: 1, minHess: 2, bins: 32})
	prob := func(x []float64) float64 {
		z := bias
		for i := range trees {
			z += trees[i].Leaf(x)
		}
		return 1 / (1 + math.Exp(-z))
	}
	tx, ty := sample(2000)
	right := 0
	for i, x := range tx {
		if (prob(x) >= 0.5) == (ty[i] == 1) {
			right++
		}
	}
	if acc := float64(right) / float64(len(tx)); acc < 0.9 {
		t.Errorf("accuracy %.3f on fresh data", acc)
	}
	if p := prob([]float64{0.9, 0.5}); p < 0.8 {
		t.Errorf("P at 0.9: %.3f", p)
	}
	if p := prob([]float64{0.2, 0.5}); p > 0.2 {
		t.Errorf("P at 0.2: %.3f", p)
	}
}

// The logistic fit recovers the weight and bias data were drawn with.
func TestNewtonRecoversWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var xs [][]float64
	var ys []float64
	for range 20000 {
		x := r.NormFloat64()
		y := 0.0
		if r.Float64() < 1/(1+math.Exp(-(2*x-1))) {
			y = 1
		}
		xs, ys = append(xs, []float64{x, 1}), append(ys, y)
	}
	w, err := newton(xs, ys, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w[0]-2) > 0.15 || math.Abs(w[1]+1) > 0.1 {
		t.Errorf("weights %v, want about [2 -1]", w)
	}
}

// A prompt that reached the gate with no candidate at all is silent, and
// a related prompt counts as hit only when a relevant memory passed.
func TestEvaluateCountsEveryPrompt(t *testing.T) {
	defer func(p map[string]promptInfo) { prompts = p }(prompts)
	prompts = map[string]promptInfo{
		"unrelated/pe-x-0/conv-26":   {source: "unrelated", fit: true},
		"unrelated/code-1/conv-26":   {source: "unrelated", fit: true},
		"locomo/conv-26/3":           {source: "locomo", fit: true},
		"prefeval/0/shop_fashion":    {source: "prefeval", fit: true},
		"unrelated/code-2/user-0":    {source: "unrelated", fit: false},
		"prefeval/1/travel_activity": {source: "prefeval", fit: false},
	}
	rows := []Row{
		{Source: "unrelated", Fit: true, Prompt: "unrelated/code-1/conv-26", Old: true},
		{Source: "locomo", Fit: true, Prompt: "locomo/conv-26/3", Old: true, Label: false},
		{Source: "locomo", Fit: true, Prompt: "locomo/conv-26/3", Old: false, Label: true},
		{Source: "prefeval", Fit: true, Prompt: "prefeval/0/shop_fashion", Old: true, Label: true},
	}
	f := evaluate(rows, true, func(i int) bool { return rows[i].Old })
	if f.unrelated != 2 || f.silent != 1 || f.lm != 1 || f.lmHit != 0 || f.pe != 1 || f.peHit != 1 || f.passed != 2 || f.passedRel != 1 {
		t.Errorf("fitted split: %+v", f)
	}
	f = evaluate(rows, false, func(i int) bool { return true })
	if f.unrelated != 1 || f.silent != 1 || f.pe != 1 || f.peHit != 0 {
		t.Errorf("checked split: %+v", f)
	}
	if k := unrelatedKind("unrelated/code-2/user-0"); k != "code>user" {
		t.Errorf("kind %q", k)
	}
	if k := unrelatedKind("unrelated/pe-shop_fashion-3/conv-42"); k != "pe>conv" {
		t.Errorf("kind %q", k)
	}
}

// A belief is labelled by what it is about, its framing aside.
func TestBeliefHit(t *testing.T) {
	pref := benchkit.NewWordSet("I can't stand testify; plain assertions only, please.")
	if !beliefHit(pref, "User avoids testify.") {
		t.Error("User avoids testify: no hit")
	}
	if beliefHit(pref, "User prefers gomock for mocks.") {
		t.Error("User prefers gomock: a hit")
	}
}
