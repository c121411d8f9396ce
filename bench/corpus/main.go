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
	misses := flag.String("misses", "", "list the utterances where claims and labels differ, for this split (with the MiniLM reading when -minilm is given, else the lexical one)")
	group := flag.String("group", "", "only the sources of this group (e.g. written, sessions' entirecontext)")
	strict := flag.Bool("strict", false, "count a claim only with the label's own subject words")
	groups := flag.Bool("groups", false, "also report each source group of each split")
	test := flag.Bool("test", false, "also report the test split (kept out of all tuning: look at it last)")
	model := flag.String("minilm", "", "the published MiniLM model directory: also measure the reading with sentence vectors")
	rules := flag.Bool("rules", false, "also measure what each rule of the rule scan earns: the claims it alone accounts for, right and wrong, on train and val (left out one at a time, with the lexical reading)")
	phrasing := flag.Bool("phrasing", false, "also measure how the beliefs read against the labels' belief texts (the user's clause against the rendered statement)")
	flag.Parse()
	type variant struct {
		label string
		x     extract.Extractor
	}
	variants := []variant{
		{"rules alone", extract.NewReading(nil, nil)},
		{"with the lexical reading", extract.NewLocal()},
		{"with the lexical reading, adding no statements", extract.NewLocal().WithAdd(false)},
	}
	// The misses are listed for the full reading: the sentence model's
	// when it is given, else the lexical one.
	missesOf := 1
	if *model != "" {
		missesOf = len(variants)
		vec, done, err := vectors.Open(*model)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		defer done()
		variants = append(variants, variant{"with the MiniLM reading", extract.NewReading(reading.MiniLM(), vec)},
			variant{"with the MiniLM reading, adding no statements", extract.NewReading(reading.MiniLM(), vec).WithAdd(false)})
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
	if *rules {
		reportRules(corpus.Splits(items))
		return
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
				if *misses == name && k == name && i == missesOf {
					corpus.WriteMisses(os.Stdout, r)
				}
			}
		}
	}
}

// reportPhrasing prints how the beliefs read: as the user's clause
// (Claim.Statement) and as rendered from subject and predicate.
func reportPhrasing(name string, x extract.Extractor, items []corpus.Item) {
	for _, v := range []struct {
		label string
		f     func(consolidate.Claim) string
	}{{"rendered", corpus.Rendered}, {"in the user's words", nil}} {
		p, err := corpus.EvaluatePhrasing(context.Background(), x, items, v.f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		fmt.Printf("  phrasing %s, beliefs %s: %d met, word precision %.3f recall %.3f F1 %.3f\n", name, v.label, p.N, p.Precision, p.Recall, p.F1())
	}
}

// reportRules leaves each rule of the rule scan out in turn and reports
// what the extractor (with the lexical reading) loses on train and val:
// the right claims and the wrong ones that rule alone accounts for, its
// precision on them, and the change in F0.5 were it dropped.
func reportRules(splits map[string][]corpus.Item) {
	ctx := context.Background()
	x := extract.NewLocal()
	base := map[string]corpus.Counts{}
	for _, name := range []string{corpus.Train, corpus.Val} {
		r, err := corpus.EvaluateMeaning(ctx, x, splits[name])
		if err != nil {
			fmt.Fprintln(os.Stderr, "corpus:", err)
			os.Exit(1)
		}
		base[name] = r.All
	}
	f := func(c corpus.Counts) float64 {
		p, r := c.Precision(), c.Recall()
		if p+r == 0 {
			return 0
		}
		return 1.25 * p * r / (0.25*p + r)
	}
	fmt.Printf("rule: the claims it alone accounts for on train (right, wrong, precision) and val, and F0.5 if dropped (train, val; base %.4f, %.4f)\n",
		f(base[corpus.Train]), f(base[corpus.Val]))
	for i, rule := range extract.Rules() {
		var line strings.Builder
		var df [2]float64
		for j, name := range []string{corpus.Train, corpus.Val} {
			r, err := corpus.EvaluateMeaning(ctx, x.WithoutRule(i), splits[name])
			if err != nil {
				fmt.Fprintln(os.Stderr, "corpus:", err)
				os.Exit(1)
			}
			tp, fp := base[name].TP-r.All.TP, base[name].FP-r.All.FP
			prec := "   -"
			if tp+fp > 0 {
				prec = fmt.Sprintf("%.2f", float64(tp)/float64(tp+fp))
			}
			fmt.Fprintf(&line, " %s %4d %4d %s", name, tp, fp, prec)
			df[j] = f(r.All) - f(base[name])
		}
		verdict := ""
		if df[0] > 0 && df[1] > 0 {
			verdict = "  does not earn its place"
		}
		fmt.Printf("%3d%s  dropped: %+.4f %+.4f%s  %s\n", i, line.String(), df[0], df[1], verdict, rule)
	}
}
