package recall

import (
	"math/rand"
	"strings"
	"testing"
)

// plainCoverage is the reference: the text's set of stems, then the share
// of the query's distinct stems found in it. Coverer must give the same
// answers without building a set per text.
func plainCoverage(query []string, text string) float32 {
	have := map[string]bool{}
	eachToken(text, nil, func(tok []byte) { have[Stem(string(tok))] = true })
	want := map[string]bool{}
	for _, q := range query {
		eachToken(q, nil, func(tok []byte) { want[Stem(string(tok))] = true })
	}
	if len(want) == 0 {
		return 0
	}
	n := 0
	for s := range want {
		if have[s] {
			n++
		}
	}
	return float32(n) / float32(len(want))
}

func TestCovererMatchesPlain(t *testing.T) {
	words := strings.Fields("deploy deploying Deployment deployed billing bill fly flyctl things thinking über ÜBERall café " +
		"caffè go Go gopher x1 x12 éé testing tests TEST ays ai happy happiness relational relate generalization")
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 3000; i++ {
		pick := func(n int) string {
			var b []string
			for j := 0; j < n; j++ {
				b = append(b, words[rng.Intn(len(words))])
			}
			return strings.Join(b, []string{" ", ", ", "-", "\n", "/"}[rng.Intn(5)])
		}
		q := Terms(pick(1 + rng.Intn(5)))
		text := pick(rng.Intn(12))
		if a, b := plainCoverage(q, text), NewCoverer(q).Coverage(text); a != b {
			t.Fatalf("query %v text %q: plain %v coverer %v", q, text, a, b)
		}
	}
}

// Weighted coverage: a rare term counts for more than a common one, and
// stop terms count for nothing.
func TestCoverageWeighsRarity(t *testing.T) {
	terms := queryTerms("flaky billing test")
	for i := range terms {
		switch terms[i].word {
		case "flaky":
			terms[i].weight = 3
		case "billing":
			terms[i].weight = 1
		case "test":
			terms[i].stop = true
		}
	}
	c := newCoverer(terms)
	for text, want := range map[string]float32{"the flaky one": 0.75, "billing": 0.25, "tests": 0, "flaky billing tests": 1} {
		if got := c.Coverage(text); got != want {
			t.Errorf("Coverage(%q)=%v want %v", text, got, want)
		}
	}
}
