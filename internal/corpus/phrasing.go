package corpus

import (
	"context"
	"slices"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/extract"
)

// Phrasing is how close the beliefs an extractor yields read to the
// corpus's beliefs as they should read (Label.Belief), over the labels a
// claim meets (MeansLabel): per label, the share of the label's content
// words the statement has (Recall: its qualifiers kept) and the share of
// the statement's content words the label has (Precision: nothing said
// that the user did not mean), averaged.
type Phrasing struct {
	N                 int // labels with a belief text that a claim met
	Precision, Recall float64
}

// F1 is the harmonic mean of the average precision and recall.
func (p Phrasing) F1() float64 {
	if p.Precision+p.Recall == 0 {
		return 0
	}
	return 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
}

// framing are the words a rendered statement frames its subject with
// ("User prefers …", "Project corpus avoids …"), not counted against it.
var framing = []string{"user", "project", "corpus", "prefers", "avoids", "prefer", "avoid"}

// EvaluatePhrasing measures the statements of extractor x's claims on
// items; phrase gives a claim's statement (nil: Claim.Statement).
func EvaluatePhrasing(ctx context.Context, x extract.Extractor, items []Item, phrase func(consolidate.Claim) string) (Phrasing, error) {
	var p Phrasing
	if phrase == nil {
		phrase = func(c consolidate.Claim) string { return c.Statement }
	}
	for _, it := range items {
		if !slices.ContainsFunc(it.Labels, func(l Label) bool { return l.Belief != "" }) {
			continue
		}
		claims, err := Claims(ctx, x, it.Text)
		if err != nil {
			return p, err
		}
		used := make([]bool, len(claims))
		for _, l := range it.Labels {
			if l.Belief == "" {
				continue
			}
			for i, c := range claims {
				if used[i] || !MeansLabel(l, c) {
					continue
				}
				used[i] = true
				want := unique(content(l.Belief))
				got := slices.DeleteFunc(unique(content(phrase(c))), func(w string) bool { return slices.Contains(framing, w) })
				p.N++
				p.Recall += share(want, got)
				p.Precision += share(got, want)
				break
			}
		}
	}
	if p.N > 0 {
		p.Precision /= float64(p.N)
		p.Recall /= float64(p.N)
	}
	return p, nil
}

func unique(ws []string) []string {
	slices.Sort(ws)
	return slices.Compact(ws)
}

// share is the share of ws that are in set (1 when ws is empty).
func share(ws, set []string) float64 {
	if len(ws) == 0 {
		return 1
	}
	n := 0
	for _, w := range ws {
		if slices.Contains(set, w) {
			n++
		}
	}
	return float64(n) / float64(len(ws))
}

// Rendered is claim c's statement as the local judge renders a belief of
// its subject and predicate ("User avoids emoji."), for comparison with
// the user's words.
func Rendered(c consolidate.Claim) string {
	pred, ctxt := consolidate.PredPrefers, ""
	switch {
	case c.Kind == consolidate.ClaimFact:
		pred, ctxt = consolidate.PredIs, c.Value
	case c.Polarity < 0:
		pred = consolidate.PredAvoids
	}
	return consolidate.Render("global", "", c.Subject, pred, ctxt)
}
