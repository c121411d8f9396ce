package reading

import (
	"math"
	"strings"

	"github.com/engram-memory/engram/internal/lexicon"
)

// What a statement is about is a span of its own words, found by two
// token taggers (logistic regression over each word, its neighbours and
// the statement's kind): the subject ("emoji in commit messages",
// "table-driven tests"; for a fact its name: "database", "test command")
// and a fact's value ("postgres 16", "pnpm test"). A span is the run of
// words whose scores, less one half, sum highest.

// Span tags. A correction's words have taggers of their own: what it
// retires ("off X", "X is gone", "not X anymore") and what it installs
// ("to Y", "it's Y now") read unlike a preference's subject or a fact's
// value, and one tagger for both learnt neither.
const (
	SpanSubject = iota // what a statement is about; a fact's name
	SpanValue          // a fact's value
	SpanNew            // what a correction installs
	SpanOld            // what a correction retires
	spans
)

var spanNames = [spans]string{"subject", "value", "new", "old"}

// CorrectionSpans reports whether m has the correction taggers (SpanNew,
// SpanOld); a model made without them reads a correction's new value
// with the subject tagger and its old one with the value tagger.
func (m *Model) CorrectionSpans() bool {
	return len(m.Spans[SpanNew]) > 0 && len(m.Spans[SpanOld]) > 0
}

// tokenFeatures are the features of word i of ws in a statement of kind.
func tokenFeatures(ts []Token, i int, kind int) []Feature {
	ws := make([]string, len(ts))
	for j, t := range ts {
		ws[j] = t.W
	}
	at := func(j int) string {
		switch {
		case j < 0:
			return "^"
		case j >= len(ws):
			return "$"
		}
		return ws[j]
	}
	w := ws[i]
	k := KindNames[kind]
	seen := map[int]float32{}
	add := func(s string) { seen[hash("t:"+s)] = 1 }
	add("bias")
	add("w:" + w)
	add("kw:" + k + "|" + w)
	add("p:" + at(i-1))
	add("pp:" + at(i-2))
	add("n:" + at(i+1))
	add("nn:" + at(i+2))
	add("kp:" + k + "|" + at(i-1))
	add("pw:" + at(i-1) + "|" + w)
	add("wn:" + w + "|" + at(i+1))
	if sh := shape(w); sh != "" {
		add("s:" + sh)
		add("ks:" + k + "|" + sh)
	}
	if ts[i].Upper {
		add("upper")
		add("kupper:" + k)
	}
	if ts[i].Code {
		add("code")
		add("kcode:" + k)
	}
	if strings.ContainsAny(w, "./-_@#+") {
		add("joined")
	}
	if lexicon.IsFunctionWord(w) {
		add("fw")
		add("kfw:" + k)
	}
	if lexicon.IsVerbForm(w) {
		add("verb")
	}
	if i == 0 {
		add("first")
	}
	if i == len(ws)-1 {
		add("last")
	}
	// how far into the sentence, in quarters
	add("pos:" + string(rune('0'+4*i/max(len(ws), 1))))
	// the nearest cue word before: what the span follows
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if verbsLead[ws[j]] || preferW[ws[j]] || negations[ws[j]] || copulaW[ws[j]] {
			add("after:" + ws[j])
			add("kafter:" + k + "|" + ws[j])
			break
		}
	}
	// the nearest change or slot word before and after: what a
	// correction retires follows "off", "from", "about" and comes before
	// "is gone", "anymore"; what it installs follows "to", "on", "it's"
	// and comes before "now"
	for j := i - 1; j >= 0 && j >= i-5; j-- {
		if changeW[ws[j]] {
			add("cafter:" + k + "|" + ws[j])
			break
		}
	}
	for j := i + 1; j < len(ws) && j <= i+4; j++ {
		if changeW[ws[j]] {
			add("cbefore:" + k + "|" + ws[j])
			break
		}
	}
	out := make([]Feature, 0, len(seen))
	for i, v := range seen {
		out = append(out, Feature{I: i, V: v})
	}
	sortFeatures(out)
	return out
}

// Span returns the words of sentence that tag (SpanSubject, SpanValue)
// picks for a statement of kind, joined by spaces; "" when no word scores
// above one half.
func (m *Model) Span(sentence string, kind int, tag int) string {
	ts := Tokens(sentence)
	if len(ts) == 0 || len(m.Spans[tag]) == 0 {
		return ""
	}
	ps := make([]float64, len(ts))
	top := 0.0
	for i := range ts {
		ps[i] = sigmoid(dot(m.Spans[tag], tokenFeatures(ts, i, kind), nil, 1))
		top = max(top, ps[i])
	}
	if top < minSpanScore {
		return ""
	}
	// A word is in when it scores above one half, or, when none does,
	// above most of the best word's score.
	cut := min(0.5, spanShare*top)
	best, bestA, bestB := 0.0, -1, -1
	run, runA := 0.0, 0
	for i := range ts {
		s := ps[i] - cut
		if run <= 0 {
			run, runA = 0, i
		}
		run += s
		if run > best {
			best, bestA, bestB = run, runA, i+1
		}
	}
	if bestA < 0 {
		return ""
	}
	// A span does not start or end with a word that only frames it ("the",
	// "now", "btw", "anymore"): what a belief is about is its content words.
	for bestA < bestB && edgeWord(ts[bestA].W) {
		bestA++
	}
	for bestB > bestA && edgeWord(ts[bestB-1].W) {
		bestB--
	}
	if bestA == bestB {
		return ""
	}
	if bestB-bestA > maxSpanWords {
		// What a statement is about is a few words: the best window of
		// them inside a longer run.
		a, top := bestA, math.Inf(-1)
		for i := bestA; i+maxSpanWords <= bestB; i++ {
			sum := 0.0
			for _, p := range ps[i : i+maxSpanWords] {
				sum += p
			}
			if sum > top+1e-12 {
				a, top = i, sum
			}
		}
		bestA, bestB = a, a+maxSpanWords
		for bestA < bestB && edgeWord(ts[bestA].W) {
			bestA++
		}
		for bestB > bestA && edgeWord(ts[bestB-1].W) {
			bestB--
		}
	}
	ws := make([]string, 0, bestB-bestA)
	for _, t := range ts[bestA:bestB] {
		ws = append(ws, t.W)
	}
	return strings.Join(ws, " ")
}

// edgeWord reports whether w cannot open or close a span: a function word
// or a word of time or framing.
func edgeWord(w string) bool {
	return lexicon.IsFunctionWord(w) || frameW[w]
}

// maxSpanWords bounds a span.
const maxSpanWords = 4

// minSpanScore: no word scoring this much, no span; spanShare: the share
// of the best word's score its neighbours need to join it when no word
// scores one half.
const (
	minSpanScore = 0.1
	spanShare    = 0.7
)

// SpanExample is one labelled statement for the span taggers: its words
// and, per tag, which of them are in the span.
type SpanExample struct {
	Words []Token
	Kind  int
	In    [spans][]bool // nil: no span of that tag labelled
}

// TrainSpans fits the span taggers of m on examples.
func TrainSpans(m *Model, examples []SpanExample, opt Options) {
	opt = opt.defaults()
	for tag := 0; tag < spans; tag++ {
		var feats [][]Feature
		var ys []int
		for _, e := range examples {
			if e.In[tag] == nil {
				continue
			}
			for i := range e.Words {
				feats = append(feats, tokenFeatures(e.Words, i, e.Kind))
				ys = append(ys, b2i(e.In[tag][i]))
			}
		}
		m.Spans[tag] = logistic(feats, ys, Buckets, opt)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
