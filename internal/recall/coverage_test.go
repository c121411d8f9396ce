package recall

import (
	"math/rand"
	"strings"
	"testing"
)

// oldCoverage is the plain reference: build the text's term set, then look the
// query up in it. Coverer must give the same answers without the allocations.
func oldCoverage(query []string, text string) float32 {
	if len(query) == 0 {
		return 0
	}
	have := map[string]bool{}
	for _, t := range Terms(text) {
		r := []rune(t)
		if len(r) > 4 {
			t = string(r[:4])
		}
		have[t] = true
	}
	n := 0
	for _, q := range query {
		r := []rune(q)
		if len(r) > 4 {
			q = string(r[:4])
		}
		if have[q] {
			n++
		}
	}
	return float32(n) / float32(len(query))
}

func TestCovererMatchesOld(t *testing.T) {
	words := strings.Fields("deploy deploying Deployment billing bill fly flyctl things thinking über ÜBERall café caffè go Go gopher a an the ok x1 x12 éé testing tests TEST")
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
		if a, b := oldCoverage(q, text), NewCoverer(q).Coverage(text); a != b {
			t.Fatalf("query %v text %q: old %v new %v", q, text, a, b)
		}
	}
}
