package reading

import (
	"math/rand"
	"slices"
	"testing"
)

// xorExamples: sentences that read alike, whose kind the sign of the
// product of their vector's first two components decides (a preference
// where both have the same sign): no straight line through the vectors
// tells them apart.
func xorExamples(n int, seed int64) []Example {
	r := rand.New(rand.NewSource(seed))
	var ex []Example
	for range n {
		v := make([]float32, 4)
		for j := range v {
			v[j] = float32(r.Float64()*2 - 1)
		}
		k := None
		if v[0]*v[1] > 0 {
			k = Pref
		}
		ex = append(ex, Example{Text: "keep it that way", Vec: v, Kind: k, Global: -1, Positive: -1})
	}
	return ex
}

func accuracy(m *Model, ex []Example) float64 {
	ok := 0
	for _, e := range ex {
		rd := m.Read(e.Text, e.Vec)
		if (rd.Statement() >= 0.5) == (e.Kind != None) {
			ok++
		}
	}
	return float64(ok) / float64(len(ex))
}

// TestDeepReadsWhatALineCannot: the hidden layer reads a kind no linear
// reading of the vector can, the model's reading (the mean of the two)
// with it, and the same examples train the same weights.
func TestDeepReadsWhatALineCannot(t *testing.T) {
	train, check := xorExamples(400, 1), xorExamples(200, 2)
	m := Train("t", 4, train, Options{})
	linear := accuracy(m, check)
	TrainDeep(m, train, DeepOptions{Hidden: 16, Iterations: 600, Rate: 0.05, L2: 1e-4})
	if m.Deep == nil {
		t.Fatal("no deep reading trained")
	}
	both := accuracy(m, check)
	t.Logf("linear %.3f, with the hidden layer %.3f", linear, both)
	if linear > 0.7 || both < 0.9 {
		t.Fatalf("accuracy on unseen examples: linear %.3f, with the hidden layer %.3f; want at most 0.7 and at least 0.9", linear, both)
	}
	again := Train("t", 4, train, Options{})
	TrainDeep(again, train, DeepOptions{Hidden: 16, Iterations: 600, Rate: 0.05, L2: 1e-4})
	if !slices.Equal(m.Deep.In, again.Deep.In) || !slices.Equal(m.Deep.Kind[Pref], again.Deep.Kind[Pref]) {
		t.Fatal("the same examples trained different weights")
	}
	writeParse(t, m)
	// A sentence read without its vector is read by the linear rows alone.
	e := check[0]
	if got, want := m.Read(e.Text, nil).P, (&Model{VecDim: 4, Kind: m.Kind, Global: m.Global, Positive: m.Positive}).Read(e.Text, nil).P; got != want {
		t.Fatalf("without a vector: %v, want the linear reading %v", got, want)
	}
}
