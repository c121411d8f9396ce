package recall

import (
	"github.com/engram-memory/engram/internal/belief"
	"math"
	"sort"
	"strings"
	"time"
	"unicode"
)

// Candidate is an item with the evidence gathered for one query.
type Candidate struct {
	Item
	BM25     float64 // FTS5 bm25 (lower is better); only meaningful with HasBM25
	HasBM25  bool
	Cos      float32 // vector similarity to the query
	Coverage float32 // share of the query's terms found in the item's text
	Neighbor bool    // found by the worker's session neighbours
	Score    float64
}

// Weights of the blend.
type Weights struct {
	BM25, Vector, Recency, Strength, Importance float64
	// RecencyDays is the e-folding time of recency.
	RecencyDays float64
}

// DefaultWeights favour what matches the prompt, then what is fresh,
// strong and important.
var DefaultWeights = Weights{BM25: 0.40, Vector: 0.30, Recency: 0.10, Strength: 0.08, Importance: 0.12, RecencyDays: 30}

// RetrievalStrength is belief.RetrievalStrength, for episodes and beliefs alike.
var RetrievalStrength = belief.RetrievalStrength

// Rank scores candidates in place and sorts them best first. Episodes and
// beliefs are scored with their own blends; the scores are comparable
// within a kind.
func Rank(cands []Candidate, w Weights, now time.Time) {
	var maxBM25 float64
	for _, c := range cands {
		if c.HasBM25 && -c.BM25 > maxBM25 {
			maxBM25 = -c.BM25
		}
	}
	for i := range cands {
		c := &cands[i]
		bm := 0.0
		if c.HasBM25 && maxBM25 > 0 {
			bm = -c.BM25 / maxBM25
		}
		// A lexical match the FTS query did not return (a file candidate)
		// still counts through its term coverage.
		bm = math.Max(bm, float64(c.Coverage))
		cos := math.Max(0, float64(c.Cos))
		strength := RetrievalStrength(c.LastAccess, float64(c.Stability), now)
		if c.Kind == KindBelief {
			// The belief design's blend: confidence-weighted similarity first.
			c.Score = 0.5*float64(c.Confidence)*math.Max(cos, bm) + 0.3*strength*relevance(*c) + 0.2*bm
			continue
		}
		age := now.Sub(c.At).Hours() / 24
		recency := math.Exp(-math.Max(0, age) / w.RecencyDays)
		c.Score = w.BM25*bm + w.Vector*cos + relevance(*c)*(w.Recency*recency+w.Strength*strength+w.Importance*float64(c.Importance))
		if c.Neighbor {
			c.Score += 0.05
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Score != cands[j].Score {
			return cands[i].Score > cands[j].Score
		}
		return cands[i].ID < cands[j].ID
	})
}

// relevance is how much a candidate has to do with the query at all, in
// [0, 1]. Freshness, strength and importance only add to a candidate that is
// relevant: an important memory about something else stays out.
func relevance(c Candidate) float64 {
	return math.Max(float64(c.Coverage), math.Max(0, float64(c.Cos)))
}

// Relevant is the gate a candidate must pass to be injected.
func Relevant(c Candidate, minRelevance float64) bool {
	return relevance(c) >= minRelevance
}

// Terms splits text into lower-case search terms: letters and digits, at
// least two characters, stop words dropped, duplicates removed, in order.
func Terms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(f) < 2 || stopWords[f] || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	return out
}

// Coverage is the share of query terms that occur in text (by prefix of
// four characters, a cheap stand-in for stemming).
func Coverage(query []string, text string) float32 { return NewCoverer(query).Coverage(text) }

// Coverer measures Coverage of one query over many texts: the query's
// prefixes are computed once, and a text is scanned without building a
// term list or a set per text (the prompt hook scores thousands of them).
type Coverer struct {
	want  map[string]int // query prefix → how many query terms have it
	total int
	found map[string]bool
}

// NewCoverer prepares a query.
func NewCoverer(query []string) *Coverer {
	c := &Coverer{want: map[string]int{}, total: len(query), found: map[string]bool{}}
	for _, q := range query {
		c.want[stem4(q)]++
	}
	return c
}

// Coverage is the share of the query's terms whose prefix occurs among the
// text's terms (letters and digits, at least two characters, no stop words).
func (c *Coverer) Coverage(text string) float32 {
	if c.total == 0 {
		return 0
	}
	clear(c.found)
	n := 0
	lower := strings.ToLower(text)
	start := -1
	flush := func(end int) {
		tok := lower[start:end]
		start = -1
		if len(tok) < 2 || stopWords[tok] {
			return
		}
		p := stem4(tok)
		if k, ok := c.want[p]; ok && !c.found[p] {
			c.found[p] = true
			n += k
		}
	}
	for i, r := range lower {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			flush(i)
		}
	}
	if start >= 0 {
		flush(len(lower))
	}
	return float32(n) / float32(c.total)
}

// stem4 is the first four characters of s.
func stem4(s string) string {
	n := 0
	for i := range s {
		if n == 4 {
			return s[:i]
		}
		n++
	}
	return s
}

// stopWords are dropped from queries: they match everything.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are aren as at be because been
	before being below between both but by can cannot could couldn did didn do does doesn doing don down during each few for
	from further get got had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn
	it its itself just let me more most much must my myself no nor not now of off on once only or other ought our ours
	ourselves out over own please same shall she should shouldn so some such than that the their theirs them themselves then
	there these they this those through to too under until up us very was wasn we were weren what when where which while who
	whom why will with won would wouldn you your yours yourself yourselves ok okay yes yeah sure thanks thank hi hello hey
	want like know think make sure go going need tell say said one two also really well still use used using way thing things
	something anything give take see look can't don't i'm it's that's what's let's`) {
		m[w] = true
	}
	return m
}()

// trivialPrompts never get recall: acknowledgements and nudges.
var trivialPrompts = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"yes", "y", "no", "n", "ok", "okay", "k", "sure", "go on", "go ahead", "continue", "next",
		"thanks", "thank you", "thx", "ty", "lgtm", "done", "good", "great", "nice", "cool", "perfect", "right", "correct",
		"yep", "yup", "nope", "do it", "proceed", "keep going", "sounds good", "looks good", "yes please", "please do",
		"agreed", "fine", "retry", "try again", "again", "stop", "wait", "hmm"} {
		m[p] = true
	}
	return m
}()

// Trivial reports whether a prompt is too slight to recall anything for.
func Trivial(prompt string) bool {
	p := strings.ToLower(strings.TrimSpace(prompt))
	p = strings.TrimRight(p, ".!?… ")
	if p == "" || trivialPrompts[p] {
		return true
	}
	if strings.HasPrefix(p, "/") && !strings.ContainsAny(p, " \n") {
		return true // a bare slash command
	}
	return len(Terms(p)) == 0
}
