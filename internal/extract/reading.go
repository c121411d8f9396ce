package extract

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/reading"
)

// The learned reading (package reading) decides, sentence by sentence of
// the user's own text, whether the sentence states something lasting:
//
//   - a sentence the rules found a statement in is dropped when the model
//     reads it as nothing lasting (P(none) ≥ Model.Drop): the vetoes the
//     rules cannot write ("I used to …", "you suggested …", a one-off
//     request that looks like a rule);
//   - a sentence the rules found a statement in takes the model's reading
//     of it (its kind, polarity and spans, as derive makes them) when the
//     model reads another kind with confidence (Model.Rekind): the rules
//     read "we use optuna for tuning" as a preference, the model a fact;
//   - a sentence the rules found nothing in becomes a statement when the
//     model reads one (1-P(none) ≥ Model.Add): its kind, scope and
//     polarity are the model's; what it is about is derived from the
//     sentence's own words (derive), kept with its qualifiers.
//
// The thresholds are fitted on the corpus's validation split by the
// command that trains the model (internal/reading/train).

// NewReading returns the local extractor with the reading m (nil: the
// rules alone) and the sentence vectors vec (see WithReading).
func NewReading(m *reading.Model, vec func(string) []float32) *Local {
	return (&Local{add: true}).WithReading(m, vec)
}

// WithAdd returns a copy of the extractor that makes a statement of a
// sentence the rules read nothing in when the model reads one (Model.Add),
// or not. On by default (and in training): it finds what the rules miss
// ("I like table-driven tests in Go"), at about 58% precision on the
// validation split; off, only the rules make statements.
func (l *Local) WithAdd(on bool) *Local {
	c := *l
	c.add = on
	return &c
}

// WithReading returns a copy of the extractor that reads sentences with m
// (nil: the rules alone); vec gives a sentence's vector when m takes one
// (m.VecDim > 0), and may be nil otherwise.
func (l *Local) WithReading(m *reading.Model, vec func(string) []float32) *Local {
	c := *l
	c.model, c.vec = m, vec
	if m != nil && m.VecDim > 0 && vec == nil {
		c.model = reading.Lexical()
	}
	return &c
}

// Sentences returns the sentences of a user's text as the scan cuts them,
// questions included.
func Sentences(text string) []string {
	m := prepare(text)
	var out []string
	for _, sp := range sentences(m) {
		if s := strings.TrimSpace(text[sp[0]:sp[1]]); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxVectors bounds the sentence vectors the reading takes per exchange.
const maxVectors = 16

// maxReadAddSentences: in a user text of more sentences than this (a
// pasted article, a prompt written for another model, a long task), the
// model's reading alone makes no statement; it still drops and scopes
// what the rules read there. On PrefEval's dev conversations (chat
// with pasted articles and code), the model's own statements in long
// texts were material almost without exception, and crowded MEMORY.md.
const maxReadAddSentences = 6

// readSentence applies the model to one scanned sentence's signals.
func (sc *scanner) readSentence(st *sentence, r *sentenceResult) {
	m := sc.model
	if m == nil {
		return
	}
	if len(st.toks) > maxClause {
		return // a run of words no statement is as long as: the rules' own
	}
	if len(r.sigs) == 0 && sc.long {
		return // nothing to drop or scope, and nothing to add
	}
	text := st.text[st.a:st.b]
	var rd reading.Reading
	if m.VecDim > 0 {
		// A sentence vector costs a pass of the sentence embedder: only a
		// sentence the lexical model reads as a possible statement gets
		// one (Model.Gate), and at most maxVectors of an exchange.
		lx := cmp.Or(m.Fallback, reading.Lexical())
		if rd = lx.Read(text, nil); sc.vec == nil || sc.vectors >= maxVectors || rd.Statement() < m.Gate {
			m = lx
		} else {
			sc.vectors++
			rd = m.Read(text, sc.vec(text))
		}
	} else {
		rd = m.Read(text, nil)
	}
	if slices.ContainsFunc(r.sigs, func(s episode.Signal) bool {
		return s.Kind == episode.SignalSwitch || s.Kind == episode.SignalCorrection
	}) {
		sc.corrects = true
	}
	if sc.corrects {
		// A correction, and what follows it in the same text ("stop using
		// bun; switch to node"): what it says and where are the rules'
		// (package consolidate acts on it at once).
		return
	}
	if len(r.sigs) > 0 {
		if rd.P[reading.None] >= m.Drop {
			// What the user states as lasting the model reads as nothing
			// lasting: dropped. A decision is about the task at hand and a
			// correction says what was wrong: the rules keep those.
			r.sigs = slices.DeleteFunc(r.sigs, func(s episode.Signal) bool { return readKinds[s.Kind] })
		} else if sc.rekind(st, r, rd) {
			return
		}
		if math.Abs(rd.Global-0.5) >= m.Scope && !hasGlobalMarker(st.toks) && !hasProjectMarker(st.toks) {
			// The rules' markers ("in this repo", "in all my projects")
			// say the scope in so many words; without one, the model
			// reads it, for what the user states as lasting (a decision
			// is about the task at hand, a correction's scope is what it
			// corrects).
			for i := range r.sigs {
				if s := &r.sigs[i]; readKinds[s.Kind] && !r.requests[signalKey(*s)] {
					s.Global = rd.Global >= 0.5
				}
			}
		}
		return
	}
	if !sc.adds || rd.Statement() < m.AddFor(rd.Kind()) || sc.long {
		return
	}
	if s, extra, ok := derive(m, st, rd); ok {
		r.sigs = append(r.sigs, s)
		if extra != nil {
			r.sigs = append(r.sigs, *extra)
		}
	}
}

// rekind replaces what the rules read as lasting in a sentence by the
// model's reading of it (derive) when the model reads another kind with
// at least Model.Rekind of its statement probability, and reports
// whether it did.
func (sc *scanner) rekind(st *sentence, r *sentenceResult, rd reading.Reading) bool {
	m := sc.model
	k := rd.Kind()
	if m.Rekind > 1 || rd.P[k] < m.Rekind*rd.Statement() {
		return false
	}
	read := false
	for _, s := range r.sigs {
		if !readKinds[s.Kind] || r.requests[signalKey(s)] {
			continue
		}
		read = true
		ruled := reading.Pref
		if s.Kind == episode.SignalFact {
			ruled = reading.Fact
		}
		// A fact the rules read with its value ("the dev server is on
		// 3000 now") already corrects its slot where the model reads a
		// correction: the value is the rules', and what a correction
		// would retire is the slot's older value (package consolidate
		// revises it).
		if ruled == k || ruled == reading.Fact && k == reading.Corr {
			return false
		}
	}
	if !read {
		return false
	}
	s, extra, ok := derive(m, st, rd)
	if !ok {
		return false
	}
	r.sigs = slices.DeleteFunc(r.sigs, func(s episode.Signal) bool { return readKinds[s.Kind] && !r.requests[signalKey(s)] })
	r.sigs = append(r.sigs, s)
	if extra != nil {
		r.sigs = append(r.sigs, *extra)
	}
	return true
}

// readKinds are the kinds of signal the model may drop and whose scope
// it reads: what the user states as lasting.
var readKinds = map[string]bool{episode.SignalPreference: true, episode.SignalAvoid: true, episode.SignalFact: true}

// momentWords say a fact holds for the moment only.
var momentWords = setOf("failing", "fails", "failed", "broken", "down", "red", "flaky", "crashing", "crashes", "erroring",
	"stuck", "hanging", "timing", "missing")

// derive makes a signal of a sentence the model reads as a statement:
// the kind, scope and polarity the model gives; what it is about (and a
// fact's value) are the spans of its own words the model's taggers pick.
func derive(m *reading.Model, st *sentence, rd reading.Reading) (sig episode.Signal, extra *episode.Signal, ok bool) {
	text := st.text[st.a:st.b]
	kind := rd.Kind()
	if t, _ := stripFillers(st.toks); len(t) == 0 || ackRemainder(t) || (len(t) > 1 && ackRemainder(t[1:]) && (t[0].w == "no" || t[0].w == "not")) {
		return episode.Signal{}, nil, false // "no problem, please continue"
	}
	s := episode.Signal{Text: st.quote(), Polarity: 1, Stated: true}
	if rd.Positive < 0.5 {
		s.Polarity = -1
	}
	subj := m.Span(text, kind, reading.SpanSubject)
	switch kind {
	case reading.Fact:
		val := m.Span(text, kind, reading.SpanValue)
		if val == "" || slices.ContainsFunc(strings.Fields(val), stateWord) || slices.ContainsFunc(st.toks, func(t token) bool { return momentWords[t.w] }) {
			// no value, or a state of the moment ("the tests are
			// failing on CI", "the build is broken")
			return episode.Signal{}, nil, false
		}
		if subj == "" || subj == val {
			subj = val
		}
		s.Kind, s.Object, s.Polarity = episode.SignalFact, val, 1
	case reading.Corr:
		// The subject tagger picks what a correction installs, the value
		// tagger what it retires.
		s.Kind, s.Polarity = episode.SignalCorrection, 1
		if old := normSubject(m.Span(text, kind, reading.SpanValue)); old != "" && old != normSubject(subj) {
			r := s
			r.Kind, r.Subject = episode.SignalSwitch, old
			if subj == "" {
				return r, nil, true
			}
			extra = &r
		}
	default:
		s.Kind = episode.SignalPreference
		if s.Polarity < 0 {
			s.Kind = episode.SignalAvoid
		}
	}
	// Scope: the rules' markers when the sentence has one, else the
	// model's reading.
	s.Global = rd.Global >= 0.5
	if g := hasGlobalMarker(st.toks); g || hasProjectMarker(st.toks) {
		s.Global = g
	}
	if extra != nil {
		extra.Global = s.Global
	}
	s.Subject = normSubject(subj)
	if s.Subject == "" || lexicon.NoContent(s.Subject) != "" {
		return episode.Signal{}, nil, false
	}
	return s, extra, true
}
