package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/recall"
)

// -dense-from keeps the sentence embedder's gate of a policy file as it is
// and fits the lexical one only; a file without that gate is an error.
func TestDenseFromKeepsTheDenseGate(t *testing.T) {
	src := filepath.Join("..", "..", "internal", "recall", "gate.json")
	kept, err := recall.LoadPolicy(src)
	if err != nil {
		t.Fatal(err)
	}
	name := "minilm-l6-v2-384"
	if kept.Gate(name) == nil {
		t.Fatalf("%s holds no gate of %s", src, name)
	}
	cov := slices.Index(allFeatures, "coverage")
	r := rand.New(rand.NewPCG(5, 6))
	var rows []Row
	for i := range 400 {
		x := make([]float64, len(allFeatures))
		for j := range x {
			x[j] = r.Float64()
		}
		src := "locomo"
		if i%4 == 0 {
			src = "unrelated"
		}
		rows = append(rows, Row{Source: src, Fit: i%2 == 0, Prompt: fmt.Sprintf("%s-%d", src, i/2), Label: src == "locomo" && x[cov] > 0.5, Old: true, Kind: "episode", X: x})
	}
	out := filepath.Join(t.TempDir(), "gate.json")
	o := options{denseFrom: src, lexical: true, model: "linear", silence: 0.95, l2: 1, out: out}
	if err := fitAll(o, name, denseFeatures, nil, rows, nil, 0); err != nil {
		t.Fatal(err)
	}
	got, err := recall.LoadPolicy(out)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(kept.Gate(name))
	b, _ := json.Marshal(got.Gate(name))
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the sentence embedder's gate changed")
	}
	if lex := got.Gate(""); !lex.Fitted() || !slices.Equal(lex.Features, lexicalFeatures) {
		t.Errorf("the lexical gate: %+v", lex)
	}

	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"gates": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	o.denseFrom = empty
	if err := fitAll(o, name, denseFeatures, nil, rows, nil, 0); err == nil {
		t.Error("a policy file without the sentence embedder's gate: no error")
	}
}
