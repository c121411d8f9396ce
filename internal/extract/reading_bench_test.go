package extract_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/reading"
)

// BenchmarkReading is the local extractor's cost per exchange, over the
// utterances of the corpus's real sessions (what users send: mostly no
// statement) and over its validation split (dense with statements): the
// rules alone, with the lexical reading, with the MiniLM reading, and, as
// the baseline of the same run, the sentence embedder embedding the
// exchange as the worker does for every episode anyway.
//
//	go test -run '^$' -bench BenchmarkReading ./internal/extract/
func BenchmarkReading(b *testing.B) {
	items, err := corpus.LoadDir("testdata/speech")
	if err != nil {
		b.Fatal(err)
	}
	sets := map[string][]corpus.Item{"val": corpus.Splits(items)[corpus.Val]}
	for _, it := range items {
		if strings.HasPrefix(it.Source, "entirecontext/") || strings.HasPrefix(it.Source, "checkpoints/") {
			sets["sessions"] = append(sets["sessions"], it)
		}
	}
	names := []string{"sessions", "val"}
	inputs := map[string][]extract.Input{}
	for name, set := range sets {
		for _, it := range set {
			inputs[name] = append(inputs[name], extract.Input{SessionID: "s", Project: "p", ProjectPath: "/p",
				TurnAt: time.Unix(0, 0).UTC(), Content: "user: " + it.Text,
				Blocks: []extract.Block{{Role: "user", Kind: "text", Text: it.Text}}})
		}
	}
	run := func(b *testing.B, name string, x extract.Extractor) {
		ctx := context.Background()
		in := inputs[name]
		for i := 0; b.Loop(); i++ {
			if _, err := x.Extract(ctx, in[i%len(in)]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, n := range names {
		b.Run(n+"/rules", func(b *testing.B) { run(b, n, extract.NewReading(nil, nil)) })
		b.Run(n+"/lexical", func(b *testing.B) { run(b, n, extract.NewLocal()) })
	}
	m, err := publishedMiniLM()
	if err != nil {
		b.Fatal(err)
	}
	if m == nil {
		b.Log("the sentence embedder is not installed: no MiniLM figures")
		return
	}
	for _, n := range names {
		b.Run(n+"/minilm", func(b *testing.B) {
			run(b, n, extract.NewReading(reading.MiniLM(), func(s string) []float32 { return m.EmbedText(s, reading.VecTokens) }))
		})
		b.Run(n+"/embed-episode", func(b *testing.B) {
			d := minilm.Documents{Model: m}
			ctx := context.Background()
			set := sets[n]
			for i := 0; b.Loop(); i++ {
				if _, err := d.Embed(ctx, []string{"User: " + set[i%len(set)].Text}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
