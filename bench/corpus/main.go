// Command corpus measures the local extractor and judge against the
// labelled statement corpus: precision and recall per kind of belief, for
// the tuning part and the held-out part.
//
//	go run ./bench/corpus [-dir internal/extract/testdata/corpus] [-misses tune|heldout]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/extract"
)

func main() {
	dir := flag.String("dir", "internal/extract/testdata/corpus", "directory of tune.txt and heldout.txt")
	misses := flag.String("misses", "", "list the utterances where claims and labels differ, for this part (tune or heldout)")
	flag.Parse()
	if *misses != "" && *misses != "tune" && *misses != "heldout" {
		fmt.Fprintf(os.Stderr, "corpus: -misses %q: want tune or heldout\n", *misses)
		os.Exit(2)
	}
	for _, part := range []string{"tune", "heldout"} {
		items, err := corpus.Load(filepath.Join(*dir, part+".txt"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		r, err := corpus.Evaluate(context.Background(), extract.NewLocal(), items)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		corpus.Report(os.Stdout, part, r)
		if *misses == part {
			corpus.WriteMisses(os.Stdout, r)
		}
	}
}
