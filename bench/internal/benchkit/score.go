package benchkit

import (
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/engram-memory/engram/internal/recall"
)

// HitShare is the share of a text's distinct content words that must be in
// a context for the text to count as reaching it.
const HitShare = 0.60

// RuleDoc describes the hit rule for reports.
const RuleDoc = "a text reaches a context when >= 60% of its distinct content words are words of the context; " +
	"content words: lower-cased [a-z0-9]+ runs of 3+ characters, minus English stop words; tokens = characters / 4"

// stopWords: NLTK's English list (179 words; the pieces of contractions
// are there because the [a-z0-9]+ split leaves them).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you your yours yourself yourselves he him
	his himself she her hers herself it its itself they them their theirs themselves what which who whom this that
	these those am is are was were be been being have has had having do does did doing a an the and but if or
	because as until while of at by for with about against between into through during before after above below
	to from up down in out on off over under again further then once here there when where why how all any both
	each few more most other some such no nor not only own same so than too very s t can will just don should now
	d ll m o re ve y ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren
	won wouldn`) {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether a lower-cased word is a stop word.
func IsStopWord(w string) bool { return stopWords[w] }

// Words returns the lower-cased [a-z0-9]+ runs of s (every length).
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
}

// ContentWords returns the distinct content words of s, in order of first
// appearance: lower-cased [a-z0-9]+ runs of 3+ characters that are not stop
// words.
func ContentWords(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range Words(s) {
		if len(w) < 3 || stopWords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// WordSet is the set of all [a-z0-9]+ words of a context.
type WordSet map[string]bool

// NewWordSet indexes the words of the given texts.
func NewWordSet(texts ...string) WordSet {
	s := WordSet{}
	for _, t := range texts {
		for _, w := range Words(t) {
			s[w] = true
		}
	}
	return s
}

// Coverage is the share of target's distinct content words that are in
// the set (0 when target has none).
func (s WordSet) Coverage(target string) float64 {
	cw := ContentWords(target)
	if len(cw) == 0 {
		return 0
	}
	n := 0
	for _, w := range cw {
		if s[w] {
			n++
		}
	}
	return float64(n) / float64(len(cw))
}

// Hit applies the rule: at least HitShare of target's distinct content
// words are in the set. A target without content words never hits.
func (s WordSet) Hit(target string) bool {
	cw := ContentWords(target)
	if len(cw) == 0 {
		return false
	}
	n := 0
	for _, w := range cw {
		if s[w] {
			n++
		}
	}
	// n/len >= 0.6, in integers: 5n >= 3len.
	return 5*n >= 3*len(cw)
}

// SharesContentWord reports whether a and b have a content word in common.
func SharesContentWord(a, b string) bool {
	set := map[string]bool{}
	for _, w := range ContentWords(a) {
		set[w] = true
	}
	for _, w := range ContentWords(b) {
		if set[w] {
			return true
		}
	}
	return false
}

// Tokens estimates tokens as characters (bytes) / 4.
func Tokens(s string) float64 { return float64(len(s)) / 4 }

// BM25 is plain Okapi BM25 over documents, terms Porter-stemmed (the stemmer
// of engram's full-text index), k1 = 1.2, b = 0.75, idf =
// ln(1 + (N - df + 0.5) / (df + 0.5)).
type BM25 struct {
	docs  [][]string // stemmed terms of each document
	tf    []map[string]int
	df    map[string]int
	avgdl float64
}

// BM25 parameters.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Terms are the BM25 terms of s: its [a-z0-9]+ words, Porter-stemmed.
// Nothing is removed: stop words weigh little through their idf.
func Terms(s string) []string {
	ws := Words(s)
	for i, w := range ws {
		ws[i] = recall.Stem(w)
	}
	return ws
}

// NewBM25 indexes docs.
func NewBM25(docs []string) *BM25 {
	b := &BM25{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		ts := Terms(d)
		tf := map[string]int{}
		for _, t := range ts {
			tf[t]++
		}
		for t := range tf {
			b.df[t]++
		}
		b.docs = append(b.docs, ts)
		b.tf = append(b.tf, tf)
		total += len(ts)
	}
	if len(docs) > 0 {
		b.avgdl = float64(total) / float64(len(docs))
	}
	return b
}

// Score is the BM25 score of document i for query.
func (b *BM25) Score(query string, i int) float64 {
	return b.score(queryTerms(query), i)
}

// queryTerms are the distinct terms of a query, sorted: the scores sum in
// a fixed order, so that equal inputs rank equally in every run.
func queryTerms(query string) []string {
	q := Terms(query)
	slices.Sort(q)
	return slices.Compact(q)
}

func (b *BM25) score(q []string, i int) float64 {
	n := float64(len(b.docs))
	dl := float64(len(b.docs[i]))
	s := 0.0
	for _, t := range q {
		f := float64(b.tf[i][t])
		if f == 0 {
			continue
		}
		df := float64(b.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		norm := 1 - BM25B
		if b.avgdl > 0 {
			norm += BM25B * dl / b.avgdl
		}
		s += idf * f * (BM25K1 + 1) / (f + BM25K1*norm)
	}
	return s
}

// Rank returns the indices of the documents that share a term with the
// query, best first (ties: earlier document first). Documents that share no
// term score 0 and are not ranked.
func (b *BM25) Rank(query string) []int {
	q := queryTerms(query)
	type hit struct {
		i int
		s float64
	}
	var hits []hit
	for i := range b.docs {
		if s := b.score(q, i); s > 0 {
			hits = append(hits, hit{i, s})
		}
	}
	sort.SliceStable(hits, func(x, y int) bool { return hits[x].s > hits[y].s })
	out := make([]int, len(hits))
	for k, h := range hits {
		out[k] = h.i
	}
	return out
}

// Pack joins documents in rank order, one per line, while they fit in
// budget characters (line breaks counted): it stops at the first document
// that does not fit, as a retriever given a budget would.
func Pack(docs []string, order []int, budget int) string {
	var b strings.Builder
	for _, i := range order {
		d := docs[i]
		need := len(d)
		if b.Len() > 0 {
			need++
		}
		if b.Len()+need > budget {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d)
	}
	return b.String()
}
