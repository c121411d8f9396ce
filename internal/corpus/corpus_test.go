package corpus

import (
	"context"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/extract"
)

const dir = "../extract/testdata/speech"

func loadAll(t *testing.T) []Item {
	t.Helper()
	items, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestCorpusSize: at least 3,000 utterances; every split has every kind
// of belief and many that yield none; the test split holds a fifth of
// the sources or so.
func TestCorpusSize(t *testing.T) {
	items := loadAll(t)
	if len(items) < 3000 {
		t.Errorf("corpus has %d utterances, want at least 3000", len(items))
	}
	splits := Splits(items)
	for _, name := range []string{Train, Val, Test} {
		kinds := map[string]int{}
		for _, it := range splits[name] {
			if len(it.Labels) == 0 {
				kinds["none"]++
			}
			for _, l := range it.Labels {
				kinds[l.Kind]++
			}
		}
		for _, k := range []string{"pref", "fact", "corr", "none"} {
			if kinds[k] < 40 {
				t.Errorf("%s: %d labels of kind %s, want at least 40", name, kinds[k], k)
			}
		}
	}
	if n := len(splits[Test]); n*8 < len(items) {
		t.Errorf("test split has %d of %d utterances, want at least an eighth", n, len(items))
	}
}

// TestSplitBySource: no source has utterances in two splits, and the
// legacy parts keep their places.
func TestSplitBySource(t *testing.T) {
	where := map[string]string{}
	for _, it := range loadAll(t) {
		s := SplitOf(it.Source)
		if w, ok := where[it.Source]; ok && w != s {
			t.Fatalf("source %s in %s and %s", it.Source, w, s)
		}
		where[it.Source] = s
	}
	if SplitOf("tune/x") != Train || SplitOf("heldout/x") != Val {
		t.Error("the legacy tuning part must train and the legacy held-out part validate")
	}
}

// TestValidation holds the figures the extractor with the committed
// lexical reading reaches on the validation split, "yields the right
// belief" (MeansLabel), and that the reading earns its place: its F1 (the
// measure the training chooses its settings by) above the rules' alone.
func TestValidation(t *testing.T) {
	val := Splits(loadAll(t))[Val]
	with, err := EvaluateMeaning(context.Background(), extract.NewLocal(), val)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := EvaluateMeaning(context.Background(), extract.NewReading(nil, nil), val)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	Report(&b, "val, with the reading", with)
	Report(&b, "val, rules alone", alone)
	t.Log("\n" + b.String())
	if p := with.All.Precision(); p < 0.57 {
		t.Errorf("validation precision %.3f, want ≥ 0.57", p)
	}
	if r := with.All.Recall(); r < 0.35 {
		t.Errorf("validation recall %.3f, want ≥ 0.35", r)
	}
	f := func(c Counts) float64 {
		p, r := c.Precision(), c.Recall()
		return 2 * p * r / (p + r)
	}
	if f(with.All) <= f(alone.All)+0.1 {
		t.Errorf("F1 with the reading %.3f, rules alone %.3f: the reading must do clearly better", f(with.All), f(alone.All))
	}
	if with.NoneClaimed*20 > with.None {
		t.Errorf("%d of %d utterances labelled none yielded a belief, want at most a twentieth", with.NoneClaimed, with.None)
	}
}

// TestMeansLabel: the looser match still wants kind, polarity, scope and
// a fact's value right, and the claim about the label's thing.
func TestMeansLabel(t *testing.T) {
	items, err := Parse(strings.NewReader("@source written/x\n"+
		"never put emoji in commit messages => pref - g emoji in commit messages :: Never put emoji in commit messages.\n"+
		"we're on postgres 16 => fact + p database=postgres 16 :: The project is on Postgres 16.\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	emoji, pg := items[0].Labels[0], items[1].Labels[0]
	for _, c := range []struct {
		l    Label
		c    consolidate.Claim
		want bool
	}{
		{emoji, consolidate.Claim{Kind: "pref", Polarity: -1, Global: true, Subject: "emoji"}, true},
		{emoji, consolidate.Claim{Kind: "pref", Polarity: -1, Global: true, Subject: "commit messages"}, true},
		{emoji, consolidate.Claim{Kind: "pref", Polarity: 1, Global: true, Subject: "emoji"}, false},
		{emoji, consolidate.Claim{Kind: "pref", Polarity: -1, Global: false, Subject: "emoji"}, false},
		{emoji, consolidate.Claim{Kind: "pref", Polarity: -1, Global: true, Subject: "tabs"}, false},
		{pg, consolidate.Claim{Kind: "fact", Polarity: 1, Subject: "postgres", Value: "postgres 16"}, true},
		{pg, consolidate.Claim{Kind: "fact", Polarity: 1, Subject: "database", Value: "postgres 15"}, false},
		{pg, consolidate.Claim{Kind: "pref", Polarity: 1, Subject: "postgres 16"}, false},
	} {
		if got := MeansLabel(c.l, c.c); got != c.want {
			t.Errorf("MeansLabel(%+v, %+v) = %v, want %v", c.l, c.c, got, c.want)
		}
	}
}

// TestNorm: the comparison folds plurals, hyphens and articles, and the
// verb of a fact about the user.
func TestNorm(t *testing.T) {
	for in, want := range map[string]string{
		"Table-driven tests": "table driven test",
		"concise replies":    "concise reply",
		"the CET timezone":   "cet timezone",
		"is on macOS":        "on maco",
		"fly.io":             "fly.io",
		"internal/gen":       "internal/gen",
	} {
		if got := Norm(in); got != want {
			t.Errorf("Norm(%q)=%q, want %q", in, got, want)
		}
	}
}

// TestParseErrors: a malformed label names its line.
func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"no separator here",
		"text => pref + x tabs",
		"text => like + g tabs",
		"text => pref ~ g tabs",
		"text => fact + p nameonly",
		"text => pref + g",
		"@source nogroup\ntext => none",
	} {
		if _, err := Parse(strings.NewReader(bad), "c"); err == nil || !strings.Contains(err.Error(), "c:1") {
			t.Errorf("Parse(%q) err=%v, want an error naming c:1", bad, err)
		}
	}
}
