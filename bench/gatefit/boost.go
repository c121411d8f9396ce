package main

import (
	"math"
	"sort"

	"github.com/engram-memory/engram/internal/recall"
)

// Gradient boosting of shallow regression trees on the logistic loss
// (Newton steps for the leaves), on features cut into quantile bins.

type boostOptions struct {
	trees, depth int
	rate, lambda float64
	minHess      float64 // least summed hessian in a child
	bins         int
}

// boost fits an ensemble on xs (rows of features) and ys (0/1); it
// returns the bias and the trees.
func boost(xs [][]float64, ys []float64, o boostOptions) (float64, []recall.Tree) {
	n, d := len(xs), len(xs[0])
	// Cut points per feature: the distinct quantiles.
	cuts := make([][]float64, d)
	for j := 0; j < d; j++ {
		vals := make([]float64, n)
		for i := range xs {
			vals[i] = xs[i][j]
		}
		sort.Float64s(vals)
		var c []float64
		for b := 1; b < o.bins; b++ {
			v := vals[b*n/o.bins]
			if len(c) == 0 || v > c[len(c)-1] {
				c = append(c, v)
			}
		}
		cuts[j] = c
	}
	// bin[i][j]: how many cut points of feature j are <= x (so x < cut[k]
	// exactly when bin <= k).
	bin := make([][]uint8, n)
	for i, x := range xs {
		bin[i] = make([]uint8, d)
		for j, v := range x {
			bin[i][j] = uint8(sort.Search(len(cuts[j]), func(k int) bool { return cuts[j][k] > v }))
		}
	}
	pos := 0.0
	for _, y := range ys {
		pos += y
	}
	bias := math.Log(math.Max(pos, 1) / math.Max(float64(n)-pos, 1))
	z := make([]float64, n)
	for i := range z {
		z[i] = bias
	}
	g, h := make([]float64, n), make([]float64, n)
	var trees []recall.Tree
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	for m := 0; m < o.trees; m++ {
		for i := range z {
			p := 1 / (1 + math.Exp(-z[i]))
			g[i], h[i] = p-ys[i], math.Max(p*(1-p), 1e-6)
		}
		var t recall.Tree
		var grow func(rows []int, depth int) int
		grow = func(rows []int, depth int) int {
			var G, H float64
			for _, i := range rows {
				G += g[i]
				H += h[i]
			}
			idx := len(t.Nodes)
			t.Nodes = append(t.Nodes, recall.Node{Left: -1, Value: -o.rate * G / (H + o.lambda)})
			if depth == o.depth {
				return idx
			}
			best, bf, bk := 0.0, -1, 0
			for j := 0; j < d; j++ {
				nb := len(cuts[j]) + 1
				if nb < 2 {
					continue
				}
				hg, hh := make([]float64, nb), make([]float64, nb)
				for _, i := range rows {
					b := bin[i][j]
					hg[b] += g[i]
					hh[b] += h[i]
				}
				var gl, hl float64
				for k := 0; k < nb-1; k++ {
					gl += hg[k]
					hl += hh[k]
					gr, hr := G-gl, H-hl
					if hl < o.minHess || hr < o.minHess {
						continue
					}
					gain := gl*gl/(hl+o.lambda) + gr*gr/(hr+o.lambda) - G*G/(H+o.lambda)
					if gain > best {
						best, bf, bk = gain, j, k
					}
				}
			}
			if bf < 0 {
				return idx
			}
			var left, right []int
			for _, i := range rows {
				if int(bin[i][bf]) <= bk {
					left = append(left, i)
				} else {
					right = append(right, i)
				}
			}
			l := grow(left, depth+1)
			r := grow(right, depth+1)
			t.Nodes[idx] = recall.Node{Feature: bf, Threshold: cuts[bf][bk], Left: l, Right: r}
			return idx
		}
		grow(all, 0)
		for i := range z {
			z[i] += t.Leaf(xs[i])
		}
		trees = append(trees, t)
	}
	return bias, trees
}
