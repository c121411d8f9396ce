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
	rd, m := sc.read(text, text)
	if slices.ContainsFunc(r.sigs, func(s episode.Signal) bool {
		return s.Kind == episode.SignalSwitch || s.Kind == episode.SignalCorrection
	}) {
		if !sc.corrects && sc.adds && !sc.long && allBare(r.sigs) {
			// "actually the bot runs on Railway now, not Heroku": the
			// rules read that it corrects something ("actually") and not
			// what; the model's taggers read what it installs and retires.
			r.sigs = sc.readBare(m, st, r.sigs, rd)
		} else if !sc.corrects {
			r.sigs = sc.fillSwitch(m, st, r.sigs, rd)
		}
		sc.corrects = true
	}
	if sc.corrects {
		// A correction, and what follows it in the same text ("stop using
		// bun; switch to node"): what it says and where are the rules'
		// (package consolidate acts on it at once).
		return
	}
	cls := reading.Clauses(text)
	corr := rd.Kind() == reading.Corr && rd.Statement() >= m.AddFor(reading.Corr)
	if len(cls) <= 1 || corr {
		// One clause, or a correction: its old and new value may sit in
		// two clauses ("X is gone, it's Y now"); the sentence is one unit.
		r.sigs = sc.readUnit(m, st, st, r, r.sigs, rd)
		if corr && sc.adds {
			r.sigs = append(r.sigs, retiredBy(m, st, r.sigs, rd)...)
		}
		return
	}
	// Each clause is read on its own, with the rules' statements whose
	// subject it holds; what stays keeps its place, what the model adds
	// follows.
	units := make([][]int, len(cls)) // indices into r.sigs
	subs := make([]sentence, len(cls))
	for i, c := range cls {
		subs[i] = st.sub(st.a+c[0], st.a+c[1])
	}
	for j, s := range r.sigs {
		if !readKinds[s.Kind] {
			continue
		}
		best, bestN := 0, -1
		for i := range subs {
			if n := subjectWordsIn(s, subs[i].toks); n > bestN {
				best, bestN = i, n
			}
		}
		units[best] = append(units[best], j)
	}
	out := slices.Clone(r.sigs)
	gone := make([]bool, len(out))
	var added []episode.Signal
	for i, c := range cls {
		if len(subs[i].toks) == 0 {
			continue
		}
		in := make([]episode.Signal, len(units[i]))
		for k, j := range units[i] {
			in[k] = out[j]
		}
		// A clause that holds words of what the rules read elsewhere in
		// the sentence is part of that statement ("I prefer
		// self-directed, independent learning …", "From now on, run
		// gofmt …"): the model adds nothing of its own there.
		covered := slices.ContainsFunc(r.sigs, func(s episode.Signal) bool {
			return !slices.Contains(in, s) && subjectWordsIn(s, subs[i].toks) > 0
		})
		rdc, mc := sc.read(text[c[0]:c[1]], text)
		adds := sc.adds
		sc.adds = adds && !covered
		kept, add := sc.readClause(mc, st, &subs[i], r, in, rdc)
		sc.adds = adds
		for k, j := range units[i] {
			if kept[k] == nil {
				gone[j] = true
			} else {
				out[j] = *kept[k]
			}
		}
		added = append(added, add...)
	}
	r.sigs = r.sigs[:0]
	for j, s := range out {
		if !gone[j] {
			r.sigs = append(r.sigs, s)
		}
	}
	r.sigs = append(r.sigs, added...)
	if len(r.sigs) == 0 && sc.adds && !sc.long && tentativeCorrection(m, rd) {
		// No clause says anything on its own, and the sentence as a whole
		// reads as a correction the model is unsure of ("ignore what I
		// said about eslint for this repo, biome does the linting here
		// now"): its old and new value sit in two clauses.
		r.sigs = sc.readUnit(m, st, st, r, nil, rd)
	}
}

// allBare reports whether every change the rules read in sigs is a bare
// correction: one that names neither what it installs nor what it
// retires.
func allBare(sigs []episode.Signal) bool {
	for _, s := range sigs {
		switch {
		case s.Kind == episode.SignalSwitch:
			return false
		case s.Kind == episode.SignalCorrection && (s.Subject != "" || s.Object != ""):
			return false
		}
	}
	return true
}

// readBare reads what a sentence the rules read as a bare correction
// installs and retires with the model's correction taggers, when the
// model reads it as more likely a statement than not: the rules have read
// that it is a correction, whatever kind the model reads most, so the
// model's thresholds for adding a statement of its own do not apply ("No,
// that's wrong." says nothing of what is right: the model reads it as
// nothing lasting). The model's correction replaces the bare one when its
// taggers pick what it installs.
func (sc *scanner) readBare(m *reading.Model, st *sentence, sigs []episode.Signal, rd reading.Reading) []episode.Signal {
	if !m.CorrectionSpans() || rd.Statement() < 0.5 {
		return sigs
	}
	rd.P[reading.Corr] = 1 // read as the correction the rules say it is
	s, extra, ok := derive(m, st, st, rd)
	if !ok || s.Kind != episode.SignalCorrection || s.Subject == "" {
		return sigs
	}
	sigs = slices.DeleteFunc(slices.Clone(sigs), func(o episode.Signal) bool { return o.Kind == episode.SignalCorrection })
	sigs = append(sigs, s)
	if extra != nil {
		sigs = append(sigs, *extra)
	}
	return sigs
}

// readClause is readUnit for a clause u of sentence st: of its input
// signals, what stays (nil for one that goes, in their order), and what
// the model adds.
func (sc *scanner) readClause(m *reading.Model, st, u *sentence, r *sentenceResult, in []episode.Signal, rd reading.Reading) ([]*episode.Signal, []episode.Signal) {
	res := sc.readUnit(m, st, u, r, slices.Clone(in), rd)
	kept := make([]*episode.Signal, len(in))
	used := make([]bool, len(res))
	for k, s := range in {
		for i := range res {
			if !used[i] && signalKey(res[i]) == signalKey(s) && res[i].Text == s.Text {
				used[i] = true
				kept[k] = &res[i]
				break
			}
		}
	}
	var added []episode.Signal
	for i, s := range res {
		if !used[i] {
			added = append(added, s)
		}
	}
	return kept, added
}

// retiredBy is what a sentence the model reads as a correction retires
// when the rules read a fact in it with its new value and no change ("we
// moved off Fly.io, this service deploys to Render now": the rules' fact
// is deploy target = Render): the model's old value (derive's switch away
// from it), unless a statement of sigs already names it.
func retiredBy(m *reading.Model, st *sentence, sigs []episode.Signal, rd reading.Reading) []episode.Signal {
	if !slices.ContainsFunc(sigs, func(s episode.Signal) bool { return s.Kind == episode.SignalFact }) ||
		slices.ContainsFunc(sigs, func(s episode.Signal) bool {
			return s.Kind == episode.SignalSwitch || s.Kind == episode.SignalCorrection
		}) {
		return nil
	}
	_, extra, ok := derive(m, st, st, rd)
	if !ok || extra == nil || extra.Kind != episode.SignalSwitch {
		return nil
	}
	for _, s := range sigs {
		if s.Subject == extra.Subject || normSubject(s.Object) == extra.Subject {
			return nil
		}
	}
	return []episode.Signal{*extra}
}

// read reads unit (a sentence, or a clause of sentence) with the
// scanner's model: a model that takes sentence vectors reads first with
// its lexical Fallback, and a unit that reads as a possible statement
// (Model.Gate) gets a vector, at most maxVectors of an exchange. It
// returns the reading and the model that made it.
func (sc *scanner) read(unit, sentence string) (reading.Reading, *reading.Model) {
	m := sc.model
	if m.VecDim == 0 {
		return m.ReadIn(unit, sentence, nil), m
	}
	// Both models take the same lexical features: computed once.
	fs := reading.FeaturesIn(unit, sentence)
	lx := cmp.Or(m.Fallback, reading.Lexical())
	rd := lx.ReadFeatures(fs, nil)
	if sc.vec == nil || sc.vectors >= maxVectors || rd.Statement() < m.Gate {
		return rd, lx
	}
	sc.vectors++
	return m.ReadFeatures(fs, sc.vec(unit)), m
}

// subjectWordsIn counts the content words of s's subject (or its
// value) that toks hold, a hyphenated word ("self-directed") as its parts.
func subjectWordsIn(s episode.Signal, toks []token) int {
	var words []string
	for _, t := range toks {
		words = append(words, t.w, normSubject(t.w))
		words = append(words, strings.FieldsFunc(t.w, func(r rune) bool { return r == '-' || r == '_' || r == '/' })...)
	}
	n := 0
	for _, w := range strings.Fields(s.Subject + " " + s.Object) {
		if !lexicon.IsFunctionWord(w) && slices.Contains(words, w) {
			n++
		}
	}
	return n
}

// sub is the part [a, b) of the sentence's text as a sentence of its own
// (a clause), with the tokens that lie inside it.
func (st *sentence) sub(a, b int) sentence {
	c := sentence{text: st.text, a: a, b: b, off: st.off}
	for _, t := range st.toks {
		if t.start >= a && t.end <= b {
			c.toks = append(c.toks, t)
		}
	}
	return c
}

// readUnit applies reading rd (by model m) of one unit of sentence st (st
// itself, or a clause u of it) to sigs, the rules' statements in it, and
// returns what stays of them and what the model adds.
func (sc *scanner) readUnit(m *reading.Model, st, u *sentence, r *sentenceResult, sigs []episode.Signal, rd reading.Reading) []episode.Signal {
	stated := slices.ContainsFunc(sigs, func(s episode.Signal) bool { return readKinds[s.Kind] })
	if len(sigs) > 0 {
		if stated && rd.P[reading.None] >= m.Drop {
			// What the user states as lasting the model reads as nothing
			// lasting: dropped. A decision is about the task at hand and a
			// correction says what was wrong: the rules keep those.
			sigs = slices.DeleteFunc(sigs, func(s episode.Signal) bool { return readKinds[s.Kind] })
		} else if out, ok := sc.rekind(m, st, u, r, sigs, rd); ok {
			return out
		}
		if math.Abs(rd.Global-0.5) >= m.Scope && !hasGlobalMarker(st.toks) && !hasProjectMarker(st.toks) {
			// The rules' markers ("in this repo", "in all my projects")
			// say the scope in so many words; without one, the model
			// reads it, for what the user states as lasting (a decision
			// is about the task at hand, a correction's scope is what it
			// corrects).
			for i := range sigs {
				if s := &sigs[i]; readKinds[s.Kind] && !r.requests[signalKey(*s)] {
					s.Global = rd.Global >= 0.5
				}
			}
		}
		if stated || len(u.toks) == len(st.toks) {
			return sigs
		}
	}
	if !sc.adds || sc.long {
		return sigs
	}
	tentative := false
	if rd.Statement() < m.AddFor(rd.Kind()) {
		if !tentativeCorrection(m, rd) {
			return sigs
		}
		tentative = true
	}
	if s, extra, ok := derive(m, st, u, rd); ok {
		s.Tentative = tentative
		sigs = append(sigs, s)
		if extra != nil {
			extra.Tentative = tentative
			sigs = append(sigs, *extra)
		}
	}
	return sigs
}

// TentativeCorr is the statement probability from which a unit the model
// reads as a correction, under the model's own threshold for adding one
// (Model.AddFor), still yields its correction, marked tentative
// (episode.Signal.Tentative): said of a value the project's memory holds,
// it stands; otherwise it counts for nothing (package consolidate). The
// sentence alone is not enough ("we swapped Redux out for Zustand in the
// app" read 0.82 under the 0.85 the corpus fitted then), and what it
// would retire being there is what a correction needs.
//
// Where it came from: on the speech corpus's validation split, of the
// utterances the MiniLM reading (linear alone, as it was then) read as
// corrections under its add threshold, each band of 0.1 from 0.5 up held
// mostly corrections (0.5-0.6: 8 corrections, 4 utterances that state
// nothing; 0.6-0.7: 10 and 1; 0.7-0.85: 23 and 2) and the band under it
// did not (0.4-0.5: 4 and 5). On bench/correct (halves by a hash of the
// scenario id) uptake was the same for every threshold from 0.4 to 0.7 on
// both halves (A 23/26, B 30/38, from 21/26 and 27/38 without tentative
// corrections), and at 0.3 a near-miss was applied as a correction. With
// the hidden layer the add threshold for corrections is 0.7 and the band
// under it holds fewer (0.5-0.6: 6 corrections and 5 that state nothing;
// 0.6-0.7: 4 and 1; 0.4-0.5: 3 and 3).
var TentativeCorr = 0.5

// tentativeCorrection reports whether a unit read rd by m, under m's
// threshold for adding a statement, yields a tentative correction.
func tentativeCorrection(m *reading.Model, rd reading.Reading) bool {
	return rd.Kind() == reading.Corr && m.CorrectionSpans() && rd.Statement() >= TentativeCorr
}

// fillSwitch completes a switch away the rules read without what
// replaces it ("we dropped table-driven tests, use plain subtests now":
// the rules see the drop) with the model's reading of what the correction
// installs, where the model reads the unit as a correction as surely as
// it must to add one: the switch gets its new side and, as a switch the
// rules read whole, a preference of it.
func (sc *scanner) fillSwitch(m *reading.Model, u *sentence, sigs []episode.Signal, rd reading.Reading) []episode.Signal {
	at := -1
	for i, s := range sigs {
		switch {
		case s.Kind == episode.SignalSwitch && s.Object == "" && s.Subject != "":
			at = i
		case s.Kind == episode.SignalPreference || s.Kind == episode.SignalSwitch || s.Kind == episode.SignalCorrection:
			return sigs // it says what replaces it, or more than one change
		}
	}
	if at < 0 || !sc.adds || sc.long || rd.Kind() != reading.Corr || rd.Statement() < m.AddFor(reading.Corr) || !m.CorrectionSpans() {
		return sigs
	}
	text := u.text[u.a:u.b]
	nv := normSubject(m.Span(text, reading.Corr, reading.SpanNew))
	if nv == "" || nv == sigs[at].Subject || strings.Contains(sigs[at].Subject, nv) || strings.Contains(nv, sigs[at].Subject) {
		return sigs
	}
	out := slices.Clone(sigs)
	out[at].Object = nv
	p := out[at]
	p.Kind, p.Subject, p.Object, p.Polarity = episode.SignalPreference, nv, "", 1
	return append(out, p)
}

// rekind replaces what the rules read as lasting in a unit (sigs) by the
// model's reading of it (derive) when the model reads another kind with
// at least Model.Rekind of its statement probability; it returns the
// unit's signals and whether it did.
func (sc *scanner) rekind(m *reading.Model, st, u *sentence, r *sentenceResult, sigs []episode.Signal, rd reading.Reading) ([]episode.Signal, bool) {
	k := rd.Kind()
	if m.Rekind > 1 || rd.P[k] < m.Rekind*rd.Statement() {
		return sigs, false
	}
	read := false
	for _, s := range sigs {
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
			return sigs, false
		}
	}
	if !read {
		return sigs, false
	}
	s, extra, ok := derive(m, st, u, rd)
	if !ok {
		return sigs, false
	}
	sigs = slices.DeleteFunc(slices.Clone(sigs), func(s episode.Signal) bool { return readKinds[s.Kind] && !r.requests[signalKey(s)] })
	sigs = append(sigs, s)
	if extra != nil {
		sigs = append(sigs, *extra)
	}
	return sigs, true
}

// readKinds are the kinds of signal the model may drop and whose scope
// it reads: what the user states as lasting.
var readKinds = map[string]bool{episode.SignalPreference: true, episode.SignalAvoid: true, episode.SignalFact: true}

// asWrittenIn returns the words of u that subject was made from, with the
// case the user wrote them in ("Go" the language, "go" the verb), or
// subject when they are not found one for one.
func asWrittenIn(u *sentence, subject string) string {
	want := strings.Fields(subject)
	for i := 0; i+len(want) <= len(u.toks); i++ {
		ok := true
		for j, w := range want {
			if t := u.toks[i+j]; t.w != w && normSubject(t.w) != w {
				ok = false
				break
			}
		}
		if ok {
			return u.text[u.toks[i].start:u.toks[i+len(want)-1].end]
		}
	}
	return subject
}

// onlyScopeNouns reports whether subject names only a place a statement
// holds in ("repo", "this project").
func onlyScopeNouns(subject string) bool {
	for _, w := range strings.Fields(subject) {
		if !scopeNouns[w] && !lexicon.IsFunctionWord(w) {
			return false
		}
	}
	return true
}

// valueLike reports whether a fact's value reads as a value on its own,
// without a name beside it: more than one word, or a version, path, host,
// package or command ("postgres 16", "v3", "fly.io", "@nestjs/swagger").
func valueLike(val string) bool {
	return len(strings.Fields(val)) > 1 || strings.ContainsAny(val, "0123456789./@:+#_")
}

// thingOfNumber gives a span that is only a number or version ("21",
// "3.12", "v2") what it counts, the word after it ("4 spaces"), or else
// the thing it numbers, the words of text just before it (past a function
// word or two: "upgraded react to 19"): "we're on java 21 now" installs
// "java 21", not "21". Any other span is returned as it is, and so is a
// number with no such word around it.
func thingOfNumber(text, span string) string {
	ws := strings.Fields(span)
	if len(ws) == 0 || !slices.ContainsFunc(ws, numberWord) || slices.ContainsFunc(ws, func(w string) bool { return !numberWord(w) }) {
		return span
	}
	ts := reading.Tokens(text)
	at := -1
	for i := 0; i+len(ws) <= len(ts) && at < 0; i++ {
		at = i
		for j, w := range ws {
			if ts[i+j].W != w {
				at = -1
				break
			}
		}
	}
	if at < 0 {
		return span
	}
	if j := at + len(ws); j < len(ts) && unitWord(ts[j].W) {
		// a quantity: "4 spaces", "120 chars"
		return span + " " + ts[j].W
	}
	if at == 0 {
		return span
	}
	i := at - 1
	for skipped := 0; i >= 0 && skipped < 2 && lexicon.IsFunctionWord(ts[i].W); skipped++ {
		i--
	}
	var thing []string
	for ; i >= 0 && len(thing) < 2; i-- {
		w := ts[i].W
		if lexicon.IsFunctionWord(w) || lexicon.IsVerbForm(w) || numberWord(w) || stateWord(w) || frameWord[w] {
			break
		}
		thing = append([]string{w}, thing...)
	}
	if len(thing) == 0 {
		return span
	}
	return strings.Join(thing, " ") + " " + span
}

// numberWithin reports whether a is a number or version of b's: what a
// correction installs ("go 1.23") does not retire its own version
// ("1.23"). A name inside it may well be what it retires ("drizzle
// typeorm", read for "team-api uses Drizzle, TypeORM was only in the
// prototype").
func numberWithin(a, b string) bool {
	return wordsWithin(a, b) && !slices.ContainsFunc(strings.Fields(a), func(w string) bool { return !numberWord(w) })
}

// factSlot is the slot (normalized) and value a statement u reads as
// when read as a fact, "", "" when it names no thing with a value.
func factSlot(m *reading.Model, u *sentence, text string) (slot, val string) {
	val = m.Span(text, reading.Fact, reading.SpanValue)
	if val == "" || slices.ContainsFunc(strings.Fields(val), stateNotName) || slices.ContainsFunc(u.toks, func(t token) bool { return momentWords[t.w] }) {
		return "", ""
	}
	slot = normSubject(thingOfNumber(text, m.Span(text, reading.Fact, reading.SpanSubject)))
	if slot == "" || slot == normSubject(val) || sharesWord(slot, normSubject(val)) || lexicon.NoContent(slot) != "" || onlyScopeNouns(slot) ||
		!slices.ContainsFunc(strings.Fields(slot), func(w string) bool { return !lexicon.IsVerbForm(w) && !strings.HasSuffix(w, "ed") }) {
		// no thing, or only what happened to it ("bumped the toolchain
		// to go 1.23": "bumped" is no slot)
		return "", ""
	}
	return slot, val
}

// hasDigit reports whether s holds a digit.
func hasDigit(s string) bool { return strings.ContainsAny(s, "0123456789") }

// wordsWithin reports whether every word of a is a word of b.
func wordsWithin(a, b string) bool {
	ws := strings.Fields(a)
	return len(ws) > 0 && !slices.ContainsFunc(ws, func(w string) bool { return !slices.Contains(strings.Fields(b), w) })
}

// sharesWord reports whether a and b have a word in common.
func sharesWord(a, b string) bool {
	return slices.ContainsFunc(strings.Fields(a), func(w string) bool { return slices.Contains(strings.Fields(b), w) })
}

// unitWord reports whether w, after a number, can be what it counts: a
// plural of letters, not a function word, a verb form or a word of time
// or state ("4 spaces", "120 chars", but not "21 now", "53 last" or "3
// days").
func unitWord(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || lexicon.IsFunctionWord(w) || lexicon.IsVerbForm(w) || stateWord(w) || frameWord[w] {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// frameWord: words of time and framing that neither count nor name a
// thing.
var frameWord = setOf("here", "there", "today", "yesterday", "tomorrow", "btw", "fyi", "actually", "anymore", "since", "until",
	"these", "those", "days", "lately", "recently", "ago", "please", "thanks")

// numberWord reports a number or version: "16", "3.12", "v2", "1.x".
func numberWord(w string) bool {
	w = strings.TrimPrefix(w, "v")
	if w == "" || w[0] < '0' || w[0] > '9' {
		return false
	}
	return strings.Trim(w, "0123456789.x") == ""
}

// stateNotName reports a word of a fact's value that says a state
// (stateWord), where it is not a name: a word joined with "-", "/", "@",
// "." or "_", or holding a digit, names a thing ("srt-model-quantizing",
// "@pinia/testing").
func stateNotName(w string) bool {
	return stateWord(w) && !strings.ContainsAny(w, "-/@._0123456789")
}

// momentWords say a fact holds for the moment only.
var momentWords = setOf("failing", "fails", "failed", "broken", "down", "red", "flaky", "crashing", "crashes", "erroring",
	"stuck", "hanging", "timing", "missing")

// derive makes a signal of a unit u of sentence st (st itself or one of
// its clauses) the model reads as a statement: the kind, scope and
// polarity the model gives; what it is about (and a fact's value) are the
// spans of the unit's own words the model's taggers pick; the scope
// markers and the quoted text are the sentence's.
func derive(m *reading.Model, st, u *sentence, rd reading.Reading) (sig episode.Signal, extra *episode.Signal, ok bool) {
	text := u.text[u.a:u.b]
	kind := rd.Kind()
	if t, _ := stripFillers(u.toks); len(t) == 0 || ackRemainder(t) || (len(t) > 1 && ackRemainder(t[1:]) && (t[0].w == "no" || t[0].w == "not")) {
		return episode.Signal{}, nil, false // "no problem, please continue"
	} else if conditional(t) && len(reading.Clauses(text)) <= 1 {
		// A condition alone states nothing, as in the rules' clauses
		// ("suppose we switched from npm to bun", "if we moved to
		// Postgres"); one with what holds under it is a rule ("if you
		// touch the schema, run make migrate").
		return episode.Signal{}, nil, false
	}
	s := episode.Signal{Text: st.quote(), Polarity: 1, Stated: true}
	if rd.Positive < 0.5 {
		s.Polarity = -1
	}
	// What it is about: for a correction, what it installs (its own
	// tagger where the model has one), else the subject tagger's words.
	tagNew, tagOld := reading.SpanSubject, reading.SpanValue
	if kind == reading.Corr && m.CorrectionSpans() {
		tagNew, tagOld = reading.SpanNew, reading.SpanOld
	}
	subj := thingOfNumber(text, m.Span(text, kind, tagNew))
	switch kind {
	case reading.Fact:
		val := m.Span(text, kind, reading.SpanValue)
		if val == "" || slices.ContainsFunc(strings.Fields(val), stateNotName) || slices.ContainsFunc(u.toks, func(t token) bool { return momentWords[t.w] }) {
			// no value, or a state of the moment ("the tests are
			// failing on CI", "the build is broken")
			return episode.Signal{}, nil, false
		}
		if len(u.toks) < 3 || (subj == "" || normSubject(subj) == normSubject(val)) && !valueLike(val) {
			// A fact names a thing and its value: "queue is kafka", "we're
			// on postgres 16"; "go on" and "here is the file" name neither.
			return episode.Signal{}, nil, false
		}
		if subj == "" || subj == val {
			subj = val
		}
		s.Kind, s.Object, s.Polarity = episode.SignalFact, val, 1
	case reading.Corr:
		// The correction taggers pick what it installs (subj) and what it
		// retires (a model made without them: the subject and the value
		// tagger).
		// It installs what it names ("no, it's pnpm"), or the avoidance
		// of it when the correction opens on its negation ("no, don't use
		// mocks"); the sentence's polarity is no guide ("we don't use
		// yarn, it's pnpm" installs pnpm).
		s.Kind, s.Polarity = episode.SignalCorrection, 1
		if t := u.toks; len(t) > 1 && (t[0].w == "no" || t[0].w == "nope" || t[0].w == "nah") && negatedLead(t[1:]) {
			s.Polarity = -1
		}
		old := normSubject(m.Span(text, kind, tagOld))
		// A correction that restates a fact's slot with a new value that
		// is a quantity, a time or a version ("actually the weekly digest
		// goes out at 08:00 CET now") is that fact too, so that the slot's
		// earlier value is what it retires; the old-side tagger's words
		// inside that slot are no value left behind ("runs" of "the
		// nightly report runs at 05:00 UTC now"), unless they are all the
		// slot or a value themselves ("n8n 1.x now, the old 0.x is dead").
		var slot, val string
		if subj != "" {
			slot, val = factSlot(m, u, text)
		}
		restated := slot != "" && hasDigit(val) && sharesWord(normSubject(val), normSubject(subj))
		if restated && old != "" && !hasDigit(old) && wordsWithin(old, slot) && len(strings.Fields(slot)) > len(strings.Fields(old)) {
			old = ""
		}
		if old != "" && old != normSubject(subj) && !numberWithin(old, normSubject(subj)) {
			r := s
			r.Kind, r.Subject = episode.SignalSwitch, old
			if subj == "" {
				return r, nil, true
			}
			extra = &r
		} else if restated {
			f := s
			f.Kind, f.Subject, f.Object, f.Polarity = episode.SignalFact, slot, val, 1
			extra = &f
		}
	default:
		s.Kind = episode.SignalPreference
		if s.Polarity < 0 {
			s.Kind = episode.SignalAvoid
			if endedHabit(u.toks) {
				// "We don't use Docker anymore": as in the rules, an
				// avoidance that ends a habit is a switch away from it.
				s.Kind = episode.SignalSwitch
			}
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
	if s.Subject == "" || lexicon.NoContent(s.Subject) != "" || onlyScopeNouns(s.Subject) ||
		kind == reading.Pref && lexicon.NotAThing(asWrittenIn(u, s.Subject)) != "" {
		// no thing ("i'm", "we don't"), or only the place it holds ("in
		// this repo, never commit to main": the repo is where, not what)
		return episode.Signal{}, nil, false
	}
	return s, extra, true
}
