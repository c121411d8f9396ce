package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/recall"
)

// prompts records every prompt asked, with or without candidates: a prompt
// with none is silent.
var prompts = map[string]promptInfo{}

type promptInfo struct {
	source string
	fit    bool
}

// figures are what a gate does on one split.
type figures struct {
	silent, unrelated   int // prompts about nothing in the store with nothing passed, of all
	lmHit, lm           int // LoCoMo questions with a relevant memory passed
	peHit, pe           int // PrefEval questions with the preference passed
	passedRel, passed   int // passed memories of related prompts that are relevant
	relPrompts, relBits int
	// Coding prompts of their own project's store (source own): those
	// with anything passed, and the passed memories that a hand label
	// calls useful.
	ownAny, own          int
	ownUseful, ownPassed int
}

func (f figures) String() string {
	s := fmt.Sprintf("silent %s  LoCoMo hit %s  PrefEval hit %s  precision %s  memories per related prompt %.2f",
		ratio(f.silent, f.unrelated), ratio(f.lmHit, f.lm), ratio(f.peHit, f.pe), ratio(f.passedRel, f.passed),
		float64(f.relBits)/math.Max(1, float64(f.relPrompts)))
	if f.own > 0 {
		s += fmt.Sprintf("  own store: prompts with a memory passed %s, passed useful %s", ratio(f.ownAny, f.own), ratio(f.ownUseful, f.ownPassed))
	}
	return s
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%d/%d)", float64(a)/float64(b), a, b)
}

// evaluate applies pass to the rows of one split.
func evaluate(rows []Row, fit bool, pass func(i int) bool) figures {
	type agg struct{ hit, any bool }
	by := map[string]*agg{}
	var f figures
	for i, r := range rows {
		if r.Fit != fit {
			continue
		}
		a := by[r.Prompt]
		if a == nil {
			a = &agg{}
			by[r.Prompt] = a
		}
		if !pass(i) {
			continue
		}
		a.any = true
		if r.Source == "own" {
			f.ownPassed++
			if r.Label {
				f.ownUseful++
			}
		} else if r.Source != "unrelated" {
			f.passed++
			f.relBits++
			if r.Label {
				f.passedRel++
				a.hit = true
			}
		}
	}
	for id, p := range prompts {
		if p.fit != fit {
			continue
		}
		a := by[id]
		if a == nil {
			a = &agg{}
		}
		switch p.source {
		case "unrelated":
			f.unrelated++
			if !a.any {
				f.silent++
			}
		case "own":
			f.own++
			if a.any {
				f.ownAny++
			}
		case "locomo":
			f.lm++
			f.relPrompts++
			if a.hit {
				f.lmHit++
			}
		case "prefeval":
			f.pe++
			f.relPrompts++
			if a.hit {
				f.peHit++
			}
		}
	}
	return f
}

// fitGate fits one model on the fitted split, picks its threshold there
// and reports both splits against the hand-set gate.
func fitGate(embedder string, names []string, rows []Row, o options, centroid []float32, norm float64) (recall.GateModel, error) {
	veto := o.veto
	pass := func(i int, p, t float64) bool { return p >= t && (!veto || rows[i].Old) }
	g := recall.GateModel{Embedder: embedder, Features: names, Centroid: centroid, CentroidNorm: norm, Veto: o.veto}
	if len(rows) == 0 {
		return g, errors.New("no rows")
	}
	d := len(names)
	col := make([]int, d)
	for j, f := range names {
		col[j] = slices.Index(allFeatures, f)
		if col[j] < 0 {
			return g, fmt.Errorf("unknown feature %q", f)
		}
	}
	// Each row's X, the model's features only.
	sel := make([][]float64, len(rows))
	for i, r := range rows {
		sel[i] = make([]float64, d)
		for j, c := range col {
			if c < len(r.X) {
				sel[i][j] = r.X[c]
			}
		}
	}
	g.Mean, g.Scale = make([]float64, d), make([]float64, d)
	n := 0
	for i, r := range rows {
		if !r.Fit {
			continue
		}
		n++
		for j, x := range sel[i] {
			g.Mean[j] += x
		}
	}
	for j := range g.Mean {
		g.Mean[j] /= float64(n)
	}
	for i, r := range rows {
		if r.Fit {
			for j, x := range sel[i] {
				g.Scale[j] += (x - g.Mean[j]) * (x - g.Mean[j])
			}
		}
	}
	for j := range g.Scale {
		g.Scale[j] = math.Sqrt(g.Scale[j] / float64(n))
		if g.Scale[j] < 1e-6 {
			g.Scale[j] = 1
		}
	}
	var xs [][]float64
	var ys []float64
	for i, r := range rows {
		if !r.Fit || (veto && !r.Old) {
			continue
		}
		x := make([]float64, d+1)
		for j, v := range sel[i] {
			x[j] = (v - g.Mean[j]) / g.Scale[j]
		}
		x[d] = 1
		xs = append(xs, x)
		ys = append(ys, b2f(r.Label))
	}
	if o.model == "trees" {
		var raw [][]float64
		for i, r := range rows {
			if r.Fit && (!veto || r.Old) {
				raw = append(raw, sel[i])
			}
		}
		g.Mean, g.Scale = nil, nil
		g.Bias, g.Trees = boost(raw, ys, boostOptions{trees: o.trees, depth: o.depth, rate: 0.1, lambda: 1, minHess: 2, bins: 32})
	} else {
		w, err := newton(xs, ys, o.l2)
		if err != nil {
			return g, err
		}
		g.Weights, g.Bias = w[:d], w[d]
	}
	prob := make([]float64, len(rows))
	for i := range rows {
		prob[i] = g.ProbOf(sel[i])
	}
	// The threshold: the lowest that keeps the fitted split's unrelated
	// prompts silent o.silence of the time.
	g.Threshold = 0.99
	for t := 0.02; t < 0.99; t += 0.01 {
		f := evaluate(rows, true, func(i int) bool { return pass(i, prob[i], t) })
		if f.unrelated > 0 && float64(f.silent)/float64(f.unrelated) >= o.silence {
			g.Threshold = math.Round(t*100) / 100
			break
		}
	}
	name := embedder
	if name == "" {
		name = "lexical (no sentence embedder)"
	}
	var src strings.Builder
	fmt.Fprintf(&src, "bench/gatefit, %d rows (%d fitted); threshold: the lowest keeping %.2f of the fitted unrelated prompts silent.", len(rows), n, o.silence)
	fmt.Printf("\n== gate %s: %d features, threshold %.2f\n", name, d, g.Threshold)
	for j, f := range names {
		if j < len(g.Weights) {
			fmt.Printf("   %-14s %+.3f\n", f, g.Weights[j])
		}
	}
	fmt.Printf("   %-14s %+.3f\n", "bias", g.Bias)
	for _, fit := range []bool{true, false} {
		split := "checked"
		if fit {
			split = "fitted"
		}
		old := evaluate(rows, fit, func(i int) bool { return rows[i].Old })
		now := evaluate(rows, fit, func(i int) bool { return pass(i, prob[i], g.Threshold) })
		fmt.Printf("   %-7s hand-set: %s\n", split, old)
		fmt.Printf("   %-7s fitted:   %s\n", split, now)
		fmt.Fprintf(&src, " %s: hand-set gate %s; fitted %s.", split, old, now)
	}
	for _, fit := range []bool{true, false} {
		old := unrelatedBy(rows, fit, func(i int) bool { return rows[i].Old })
		now := unrelatedBy(rows, fit, func(i int) bool { return pass(i, prob[i], g.Threshold) })
		fmt.Printf("   unrelated, silent, fitted %v:", fit)
		for _, k := range sortedKeys(old) {
			fmt.Printf("  %s %s -> %s", k, old[k], now[k])
		}
		fmt.Println()
	}
	fmt.Printf("   by threshold (fitted | checked: silent, LoCoMo hit, PrefEval hit, precision)\n")
	for _, t := range []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7} {
		a := evaluate(rows, true, func(i int) bool { return pass(i, prob[i], t) })
		b := evaluate(rows, false, func(i int) bool { return pass(i, prob[i], t) })
		fmt.Printf("   %.2f  %s | %s\n", t, short(a), short(b))
	}
	g.Source = src.String()
	return g, nil
}

func short(f figures) string {
	q := func(a, b int) float64 { return float64(a) / math.Max(1, float64(b)) }
	return fmt.Sprintf("%.3f %.3f %.3f %.3f own %.3f", q(f.silent, f.unrelated), q(f.lmHit, f.lm), q(f.peHit, f.pe), q(f.passedRel, f.passed), q(f.ownAny, f.own))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// newton fits an L2-penalised logistic regression (the last column, the
// bias, unpenalised) by Newton's method.
func newton(xs [][]float64, ys []float64, l2 float64) ([]float64, error) {
	d := len(xs[0])
	w := make([]float64, d)
	for it := 0; it < 50; it++ {
		grad := make([]float64, d)
		hess := make([][]float64, d)
		for j := range hess {
			hess[j] = make([]float64, d)
		}
		for i, x := range xs {
			z := 0.0
			for j, v := range x {
				z += w[j] * v
			}
			p := 1 / (1 + math.Exp(-z))
			r := p - ys[i]
			s := p * (1 - p)
			for j, v := range x {
				grad[j] += r * v
				if v == 0 {
					continue
				}
				for k := j; k < d; k++ {
					hess[j][k] += s * v * x[k]
				}
			}
		}
		for j := 0; j < d; j++ {
			for k := 0; k < j; k++ {
				hess[j][k] = hess[k][j]
			}
			if j < d-1 {
				grad[j] += l2 * w[j]
				hess[j][j] += l2
			}
			hess[j][j] += 1e-9
		}
		step, err := solve(hess, grad)
		if err != nil {
			return nil, err
		}
		var size float64
		for j := range w {
			w[j] -= step[j]
			size = math.Max(size, math.Abs(step[j]))
		}
		if size < 1e-8 {
			break
		}
	}
	return w, nil
}

// solve solves a x = b by Gaussian elimination with partial pivoting.
func solve(a [][]float64, b []float64) ([]float64, error) {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(append([]float64(nil), a[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) < 1e-12 {
			return nil, errors.New("singular system")
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x, nil
}

// unrelatedKind names what an unrelated prompt is and whose store it is
// asked of: "pe>conv" (a PrefEval question, a LoCoMo store), "code>user"...
func unrelatedKind(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 3 {
		return "?"
	}
	from := strings.SplitN(parts[1], "-", 2)[0]
	to := "conv"
	if strings.HasPrefix(parts[2], "user-") {
		to = "user"
	}
	return from + ">" + to
}

// unrelatedBy is the share of silent unrelated prompts by kind.
func unrelatedBy(rows []Row, fit bool, pass func(i int) bool) map[string]string {
	loud := map[string]bool{}
	for i, r := range rows {
		if r.Fit == fit && r.Source == "unrelated" && pass(i) {
			loud[r.Prompt] = true
		}
	}
	n, silent := map[string]int{}, map[string]int{}
	for id, p := range prompts {
		if p.fit != fit || p.source != "unrelated" {
			continue
		}
		k := unrelatedKind(id)
		n[k]++
		if !loud[id] {
			silent[k]++
		}
	}
	out := map[string]string{}
	for k := range n {
		out[k] = fmt.Sprintf("%.3f", float64(silent[k])/float64(n[k]))
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}
