// Command corpus measures the local extractor and judge against the
// labelled speech corpus: precision and recall per kind of belief for
// each split (train, val, test; split by source), with the rules alone
// and with the learned reading, and by source group.
//
//	go run ./bench/corpus [-dir internal/extract/testdata/speech] [-strict] [-misses train|val|test] [-group G]
//
// A claim counts when it means the label (corpus.MeansLabel: kind,
// polarity, scope and the fact's value right, about the label's thing);
// -strict asks for the label's own subject words (corpus.Evaluate).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/reading"
	"github.com/engram-memory/engram/internal/reading/learn/vectors"
)

func main() {
	dir := flag.String("dir", "internal/extract/testdata/speech", "the speech corpus directory")
	misses := flag.String("misses", "", "list the utterances where claims and labels differ, for this split (with the reading)")
	group := flag.String("group", "", "only the sources of this group (e.g. written, sessions' entirecontext)")
	strict := flag.Bool("strict", false, "count a claim only with the label's own subject words")
	groups := flag.Bool("groups", false, "also report each source group of each split")
	test := flag.Bool("test", false, "also report the test split (kept out of all tuning: look at it last)")
	model := flag.String("minilm", "", "the published MiniLM model directory: also measure the reading with sentence vectors")
	phrasing := flag.Bool("phrasing", false, "also measure how the beliefs read against the labels' belief texts (the user's clause against the rendered statement)")
	flag.Parse()
	type variant struct {
		label string
		x     extract.Extractor
	}
	variants := []variant{
		{"rules alone", extract.NewReading(nil, nil)},
		{"with the lexical reading", extract.NewLocal()},
	}
	if *model != "" {
		vec, done, err := vectors.Open(*model)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		defer done()
		variants = append(variants, variant{"with the MiniLM reading", extract.NewReading(reading.MiniLM(), vec)})
	}
	if *misses != "" && !slices.Contains([]string{corpus.Train, corpus.Val, corpus.Test}, *misses) {
		fmt.Fprintf(os.Stderr, "corpus: -misses %q: want train, val or test\n", *misses)
		os.Exit(2)
	}
	items, err := corpus.LoadDir(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
	if *group != "" {
		items = slices.DeleteFunc(items, func(it corpus.Item) bool { return !strings.HasPrefix(it.Source, *group+"/") })
	}
	eval := corpus.EvaluateMeaning
	if *strict {
		eval = corpus.Evaluate
	}
	splits := corpus.Splits(items)
	names := []string{corpus.Train, corpus.Val}
	if *test {
		names = append(names, corpus.Test)
	}
	for _, name := range names {
		part := splits[name]
		sets := map[string][]corpus.Item{name: part}
		keys := []string{name}
		if *groups {
			for _, it := range part {
				g, _, _ := strings.Cut(it.Source, "/")
				k := name + " " + g
				if sets[k] == nil {
					keys = append(keys, k)
				}
				sets[k] = append(sets[k], it)
			}
			slices.Sort(keys[1:])
		}
		for _, k := range keys {
			for i, v := range variants {
				r, err := eval(context.Background(), v.x, sets[k])
				if err != nil {
					fmt.Fprintln(os.Stderr, "corpus:", err)
					os.Exit(1)
				}
				corpus.Report(os.Stdout, k+", "+v.label, r)
				if *phrasing && k == name {
					reportPhrasing(k+", "+v.label, v.x, sets[k])
				}
				if *misses == name && k == name && i == len(variants)-1 {
					corpus.WriteMisses(os.Stdout, r)
				}
			}
		}
	}
}

// reportPhrasing prints how the beliefs read: as the user's clause
// (Claim.Statement) and as rendered from subject and predicate.
func reportPhrasing(name string, x extract.Extractor, items []corpus.Item) {
	rendered := func(c consolidate.Claim) string {
		pred, ctxt := consolidate.PredPrefers, ""
		switch {
		case c.Kind == consolidate.ClaimFact:
			pred, ctxt = consolidate.PredIs, c.Value
		case c.Polarity < 0:
			pred = consolidate.PredAvoids
		}
		return consolidate.Render("global", "", c.Subject, pred, ctxt)
	}
	for _, v := range []struct {
		label string
		f     func(consolidate.Claim) string
	}{{"rendered", rendered}, {"in the user's words", nil}} {
		p, err := corpus.EvaluatePhrasing(context.Background(), x, items, v.f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		fmt.Printf("  phrasing %s, beliefs %s: %d met, word precision %.3f recall %.3f F1 %.3f\n", name, v.label, p.N, p.Precision, p.Recall, p.F1())
	}
}
