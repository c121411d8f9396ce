package extract

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/reading"
)

// The scan of one text: the scanner, its user and assistant passes, and
// scanSentence, which reads one sentence clause by clause with the pattern
// table of signals.go.

// scanner collects the signals of one exchange.
type scanner struct {
	sigs  []episode.Signal
	off   []bool                 // patterns left out (Local.WithoutRule)
	adds  bool                   // the reading alone makes statements (Local.WithAdd)
	model *reading.Model         // nil: the rules alone
	vec   func(string) []float32 // the sentence vector model reads, when it reads one
	// vectors counts the sentence vectors taken (see maxVectors).
	vectors int
	// corrects: a sentence of the text so far corrects (see readSentence).
	corrects bool
	// long: the user text being scanned has more sentences than
	// maxReadAddSentences (see readSentence).
	long bool
}

// add appends s unless an equal signal is already there; an equal one
// becomes global when s is.
func (sc *scanner) add(s episode.Signal) {
	// Every reading bounds what a signal is about, but case folding can
	// lengthen text whose bytes are not UTF-8 (each becomes U+FFFD, three
	// bytes) after the bound: the bound holds here, for all of them.
	s.Subject = clipWords(s.Subject, maxSubjectBytes)
	s.Object = clipWords(s.Object, maxSubjectBytes)
	for i := range sc.sigs {
		o := &sc.sigs[i]
		if o.Kind == s.Kind && o.Subject == s.Subject && o.Object == s.Object && o.Polarity == s.Polarity {
			o.Global = o.Global || s.Global
			o.Stated = o.Stated || s.Stated
			return
		}
	}
	if len(sc.sigs) < maxSignals {
		sc.sigs = append(sc.sigs, s)
	}
}

// scanUser scans one user text block.
func (sc *scanner) scanUser(text string) {
	text = clipBytes(text, maxScanUser)
	if i := instructionColon(text); i > 0 {
		text = text[:i] // the rest is material to work on, not the user's word
	} else if i := rewordLead(text); i > 0 {
		text = text[:i]
	}
	text = blankTabbed(text)
	m := prepare(text)
	sents := sentences(m)
	sc.long = len(sents) > maxReadAddSentences
	for k := 0; k < len(sents); k++ {
		st, ok := newSentence(m, text, sents[k])
		if !ok {
			if st, ok = questionLead(m, text, sents[k]); !ok {
				continue
			}
		}
		st.off = sc.off
		r := scanSentence(&st, false)
		sc.readSentence(&st, &r)
		if r.bare && k+1 < len(sents) {
			// "No." / "Wrong file." says what is right in the next
			// sentence: one correction for both.
			if next, ok := newSentence(m, text, sents[k+1]); ok {
				k++
				next.off = sc.off
				nr := scanSentence(&next, false)
				c := &r.sigs[0]
				switch {
				case len(nr.sigs) > 0 && nr.sigs[0].Kind == episode.SignalCorrection:
					c.Subject, c.Polarity = nr.sigs[0].Subject, nr.sigs[0].Polarity
					c.Object = cmp.Or(nr.sigs[0].Object, c.Object)
					nr.sigs = nr.sigs[1:]
				case nr.prim.ok:
					c.Subject, c.Polarity = nr.prim.subject, nr.prim.polarity
					c.Object = cmp.Or(nr.prim.object, c.Object)
				case len(next.toks) <= 5 && !negatedLead(next.toks):
					if subj := normSubject(joinTokens(text, next.toks)); subj != "" {
						c.Subject, c.Polarity = subj, 1
					}
				}
				c.Text = clipRunes(collapseSpace(text[st.a:next.b]), maxSignalText)
				r.sigs = append(r.sigs, nr.sigs...)
			}
		}
		for _, s := range r.sigs {
			// A decision ("let's go with the map here") is often about
			// the task at hand, and so is a bare request ("nature themed
			// usernames please"): they take the clustering path, three
			// mentions. What the user states as a rule is Stated.
			s.Stated = s.Kind != episode.SignalDecision && !r.requests[signalKey(s)]
			sc.add(s)
		}
	}
}

// blankTabbed blanks the lines that hold a tab: a pasted table, log or
// indented code, material and not the user's word (typed prose has no
// tabs). Blanks keep the offsets of the rest.
func blankTabbed(text string) string {
	if !strings.Contains(text, "\t") {
		return text
	}
	b := []byte(text)
	for start := 0; start < len(b); {
		end := bytes.IndexByte(b[start:], '\n')
		if end < 0 {
			end = len(b)
		} else {
			end += start
		}
		if bytes.IndexByte(b[start:end], '\t') >= 0 {
			for i := start; i < end; i++ {
				if b[i] != '\r' {
					b[i] = ' '
				}
			}
		}
		start = end + 1
	}
	return string(b)
}

// instructionColon finds where a request's material starts: the colon
// ending an opening instruction ("Make this grammatically correct: I like
// your watch.", "Translate to French: …", "Summarize: …"). What follows it
// is text the user wants worked on; its "I like" is not theirs. It returns
// the colon's index, or -1.
func instructionColon(text string) int {
	head := text[:min(len(text), maxInstruction)]
	i := strings.IndexByte(head, ':')
	if i <= 0 || i+1 < len(text) && text[i+1] != ' ' && text[i+1] != '\n' && text[i+1] != '\t' {
		return -1 // no colon, or one inside a URL, a time, a path
	}
	if strings.ContainsAny(head[:i], "\n.?!") {
		return -1 // the colon is not in the opening sentence
	}
	// The verb after "please", "can you" and the like.
	words := strings.Fields(strings.ToLower(head[:i]))
lead:
	for len(words) > 1 {
		switch {
		case words[0] == "please" || words[0] == "pls" || words[0] == "kindly":
			words = words[1:]
		case (words[0] == "can" || words[0] == "could" || words[0] == "would" || words[0] == "will") && words[1] == "you":
			words = words[2:]
		default:
			break lead
		}
	}
	if len(words) == 0 || !materialVerbs[strings.Trim(words[0], ",")] {
		return -1
	}
	return i
}

// rewordLead finds where the material of a request to reword text starts
// when no colon sets it off ("other ways to say Works of art always carry
// …", "paraphrase I like your watch"): everything after the request's
// opening words. It returns that index, or -1.
func rewordLead(text string) int {
	head := strings.ToLower(text[:min(len(text), maxInstruction)])
	for _, p := range []string{"please ", "can you ", "could you ", "would you ", "give me ", "what are ", "what's ", "what is ", "list "} {
		if strings.HasPrefix(head, p) {
			head = head[len(p):]
			break
		}
	}
	for _, lead := range rewordLeads {
		if strings.HasPrefix(head, lead) {
			return len(text[:min(len(text), maxInstruction)]) - len(head) + len(lead)
		}
	}
	return -1
}

var rewordLeads = []string{"other ways to say ", "another way to say ", "other ways of saying ",
	"another way of saying ", "ways to say ", "how to say ", "how do you say ", "how do i say ",
	"how would you say ", "how would i say ", "synonyms for ", "rephrase ", "paraphrase ", "reword ",
	"rewrite ", "translate ", "proofread ", "correct the grammar of ", "fix the grammar of ",
	"fix the grammar in ", "grammar check "}

// maxInstruction bounds how far into a request instructionColon looks.
const maxInstruction = 200

// materialVerbs open a request to work on text that follows a colon.
var materialVerbs = setOf("make", "rewrite", "correct", "fix", "translate", "summarize", "summarise",
	"paraphrase", "proofread", "edit", "improve", "reword", "rephrase", "explain", "write", "continue",
	"complete", "convert", "analyze", "analyse", "classify", "format", "shorten", "expand", "polish",
	"create", "generate", "craft", "answer", "solve", "evaluate", "review", "critique", "grade", "check",
	"respond", "reply", "compose", "draft", "simplify", "extract", "sort", "list", "add", "modify",
	"change", "turn", "transform", "interpret", "describe", "debug")

// scanAssistant scans one assistant text block for decisions.
func (sc *scanner) scanAssistant(text string) {
	text = clipBytes(text, maxScanAssistant)
	m := prepare(text)
	for _, span := range sentences(m) {
		if st, ok := newSentence(m, text, span); ok {
			st.off = sc.off
			for _, s := range scanSentence(&st, true).sigs {
				sc.add(s)
			}
		}
	}
}

// sentence is one sentence being scanned.
type sentence struct {
	text string  // the whole original text
	toks []token // its words
	a, b int     // its byte range in text
	off  []bool  // patterns left out, by index (Local.WithoutRule); nil: none
}

// newSentence tokenizes one sentence of the prepared text m; questions
// and empty sentences are not scanned.
func newSentence(m string, text string, span [2]int) (sentence, bool) {
	a, b := span[0], span[1]
	toks := tokenize(m, text, a, b)
	if len(toks) == 0 || isQuestion(m, a, b, toks) {
		return sentence{}, false
	}
	return sentence{text: text, toks: toks, a: a, b: b}, true
}

// questionLead is what a request put as a question says before it asks,
// as a sentence of its own: the clauses before its last, when the last one
// asks the assistant to do something (asksYou) and the ones before it do
// not ask ("since we dropped Travis for GitLab CI, can you update the
// badge in the README?": "since we dropped Travis for GitLab CI"). A
// question of one clause says nothing before it asks.
func questionLead(m string, text string, span [2]int) (sentence, bool) {
	a, b := span[0], span[1]
	cls := reading.Clauses(text[a:b])
	if len(cls) < 2 {
		return sentence{}, false
	}
	end := a + cls[len(cls)-2][1]
	last := tokenize(m, text, a+cls[len(cls)-1][0], b)
	if len(last) < 2 || !strings.HasSuffix(strings.TrimSpace(m[a:b]), "?") || !asksYou(last) {
		return sentence{}, false
	}
	return newSentence(m, text, [2]int{a, end})
}

// asksYou reports whether a clause asks the assistant to do something
// ("can you port it to nx release?", "could you …", "would you …"): what
// comes before it is what the request rests on. Before a question of
// another kind it is what is asked about ("you never log the request id,
// is that on purpose?").
func asksYou(toks []token) bool {
	switch toks[0].w {
	case "can", "could", "would", "will":
		return toks[1].w == "you"
	}
	return false
}

func (st *sentence) quote() string {
	return clipRunes(collapseSpace(st.text[st.a:st.b]), maxSignalText)
}

// sentenceResult is what one sentence said.
type sentenceResult struct {
	sigs []episode.Signal
	prim primary // of the first signal that has one
	// bare: the sentence is only a correction ("No.", "That's wrong.",
	// "Wrong file."), its signal first in sigs.
	bare bool
	// requests are the signals that only a bare request gave ("air
	// themed names please"): what one asks for once is no rule yet.
	requests map[string]bool
}

// signalKey identifies a signal's claim.
func signalKey(s episode.Signal) string {
	return s.Kind + "\x00" + s.Subject + "\x00" + s.Object + "\x00" + strconv.Itoa(s.Polarity)
}

// scanSentence finds the signals of one sentence. assistant restricts the
// scan to decisions and never makes them global.
func scanSentence(st *sentence, assistant bool) sentenceResult {
	toks := st.toks
	global := hasGlobalMarker(toks)
	project := !global && hasProjectMarker(toks)
	var out []episode.Signal // Text is set at the end
	var prims []primary
	var requests map[string]bool

	// Corrections: a marker at the start of the sentence; what follows it
	// is scanned like any sentence. "Wrong X" says X is what was wrong.
	corr, bare := false, false
	wrongObj := ""
	if !assistant {
		if n := correctionMarker(toks); n > 0 {
			corr = true
			if w := toks[n-1].w; (w == "wrong" || w == "incorrect") && n == 1 && len(toks)-n <= 3 {
				wrongObj = normSubject(joinTokens(st.text, toks[n:]))
				n = len(toks)
			}
			toks = trimLead(toks[n:], "to", "that")
			bare = len(toks) == 0
		}
		if c, ok := notButCorrection(toks, st.text); ok {
			out = append(out, c)
			prims = append(prims, primary{subject: c.Subject, object: c.Object, polarity: 1, ok: true})
		}
	}

	person, first, cond := byte(0), byte(0), false
	var last *episode.Signal // last preference/avoid/decision, for coordinated items
	lastAt := -1             // its index in out
	subject := false         // the first clause is a noun phrase the sentence is about
	factAt := -1             // the index in out of a fact about the user the previous clause ended on
	var prevToks []token     // the previous clause's tokens
	// rename gives the claim at lastAt a new subject (and the purpose
	// obj, when it has none) everywhere a clause stated it; drop removes
	// it.
	rename := func(subj, obj string) {
		old := out[lastAt]
		for i := range out {
			if sameClaim(out[i], old) {
				out[i].Subject, out[i].Object = subj, cmp.Or(old.Object, obj)
			}
		}
	}
	drop := func() {
		old := out[lastAt]
		out = slices.DeleteFunc(out, func(o episode.Signal) bool { return sameClaim(o, old) })
		last, lastAt = nil, -1
	}
	for ci, cl := range splitClauses(toks) {
		before := prevToks
		prevToks = cl.toks
		if ci == 0 {
			subject = subjectPhrase(cl.toks)
		} else if subject && cl.conj == "" && len(cl.toks) > 0 && (cl.toks[0].w == "always" || cl.toks[0].w == "never") {
			// "Works of art, regardless of their theme, always carry a
			// piece of reality": what the subject does, no rule.
			last, lastAt = nil, -1
			continue
		}
		if cl.conj == "" && cl.coord && lastAt >= 0 && relativeSubject(out[lastAt].Subject) && len(before) > 0 &&
			before[len(before)-1].sep && lastWord(out[lastAt].Subject) == before[len(before)-1].w &&
			adjectiveLike(before[len(before)-1].w) && phraseTail(cl.toks) {
			// "activities that involve monotonous, repetitive movements":
			// the comma lists modifiers inside the relative clause.
			tail := strings.ToLower(phraseOf(st.text, cl.toks))
			if subj := out[lastAt].Subject + " " + tail; len(subj) <= maxRelativeSubjectBytes {
				rename(subj, "")
				continue
			}
			drop() // cut off on a modifier, it says less than was said
			continue
		}
		if cl.conj != "" && relativeOpen(before) {
			// "brands that test on animals or use lanolin": the
			// coordinated verb carries on the relative clause, and so
			// does a short phrase the claim's relative clause ends on
			// ("games that involve magic or fantasy elements").
			if lastAt >= 0 && relativeSubject(out[lastAt].Subject) && len(before) > 0 &&
				strings.HasSuffix(out[lastAt].Subject, before[len(before)-1].w) && phraseTail(cl.toks) {
				if subj := out[lastAt].Subject + " " + cl.conj + " " + strings.ToLower(phraseOf(st.text, cl.toks)); len(subj) <= maxSubjectBytes {
					rename(subj, "")
				}
			}
			last, lastAt = nil, -1
			continue
		}
		ctoks, please := stripFillers(cl.toks)
		if p := clausePerson(cl.toks); p != 0 {
			person = p
			if first == 0 {
				first = p
			}
		}
		if len(ctoks) > 0 && conditional(ctoks) {
			cond = true // "if you prefer, use pytest": all of it is hedged
		}
		if len(ctoks) == 0 || len(ctoks) > maxClause || cond {
			last, lastAt = nil, -1
			continue
		}
		got, ps, kinds := clauseSignals(ctoks, st.text, please, assistant, st.off)
		request := kinds == 1<<emitPlease
		subject = subject && len(got) == 0 // "use pnpm here, never npm" is no subject
		if len(got) == 0 && factAt >= 0 && cl.conj != "" && factTail(out[factAt], before, ctoks) {
			// "I have a severe peanut and tree nut allergy": one fact.
			v := phraseOf(st.text, ctoks)
			out[factAt].Object += " " + cl.conj + " " + v
			factAt = -1
			continue
		}
		factAt = -1
		for i, g := range got {
			if g.Kind == episode.SignalFact && g.Subject == "user" && i == len(got)-1 {
				factAt = len(out) + i
			}
		}
		if request {
			if requests == nil {
				requests = map[string]bool{}
			}
			for _, g := range got {
				requests[signalKey(g)] = true
			}
		}
		prims = append(prims, ps...)
		if len(got) == 0 && last != nil && cl.coord && examplesOpen(before) {
			// "made from animal products like leather, wool, or silk":
			// the list goes on with examples, which its item holds.
			last, lastAt = nil, -1
			continue
		}
		if len(got) == 0 && last != nil && cl.coord {
			// "I prefer pytest, black and ruff", "never use mocks or
			// stubs", "I prefer X, not Y".
			if s, ok := coordinated(*last, ctoks, st.text); ok {
				if lastAt >= 0 && (sharedHead(out[lastAt], s, cl.conj, before, ctoks) || sharedModifier(out[lastAt], s, cl.conj, before, ctoks, st.text)) {
					// "interactive and gamified learning modes": one item
					// whose modifiers were coordinated, not two items.
					joint := " " + cl.conj + " "
					if cl.conj == "" {
						joint = " "
					}
					rename(out[lastAt].Subject+joint+s.Subject, s.Object)
					m := out[lastAt]
					last = &m
					continue
				}
				out = append(out, s) // keeps last's Global
				last, lastAt = &s, len(out)-1
				continue
			}
			if k := slices.IndexFunc(ctoks, func(t token) bool { return placePreps[t.w] }); lastAt >= 0 && cl.conj != "" && k > 1 &&
				!slices.ContainsFunc(ctoks[:k], func(t token) bool { return slotStops[t.w] || finiteVerbs[t.w] || t.sep }) {
				// "commercial flea and tick treatments on my pets": the
				// place is where, and the head is shared all the same.
				if s, ok := coordinated(*last, ctoks[:k], st.text); ok && sharedHead(out[lastAt], s, cl.conj, before, ctoks[:k]) {
					rename(out[lastAt].Subject+" "+cl.conj+" "+s.Subject, s.Object)
					last, lastAt = nil, -1
					continue
				}
			}
			if lastAt >= 0 && modifierFragment(out[lastAt], cl.conj, before, ctoks) {
				// "a preference for logical and analytical approaches
				// that involve …": "logical" alone is no item.
				drop()
				continue
			}
			if lastAt >= 0 && cl.conj != "" && qualifiedTail(out[lastAt], before, ctoks) {
				// "any clothing or accessories made from animal
				// products": the qualifier is the last item's and the
				// previous one's, so they are one item.
				if tail := normSubject(joinTokens(st.text, ctoks)); pointsBack(ctoks) {
					drop()
					continue
				} else if strings.Contains(tail, " ") {
					rename(out[lastAt].Subject+" "+cl.conj+" "+tail, "")
				}
				last, lastAt = nil, -1
				continue
			}
			if lastAt >= 0 && cl.conj != "" && relativeTail(out[lastAt], before, ctoks) {
				// "watch shows or movies that are more than two hours
				// long": the relative clause restricts both, and a claim
				// without it says more than was said (as for one noun).
				// Both with it are one claim, when the clause is whole.
				subj := rawPlural(out[lastAt].Subject, before[len(before)-1].w) + " " + cl.conj + " " +
					strings.ToLower(phraseOf(st.text, ctoks))
				if at := relativeAt(ctoks); at > 0 && len(subj) <= maxSubjectBytes {
					if _, ok := relativeClause(ctoks, [2]int{0, at}); ok && relativeClauseEnds(ctoks, at) {
						rename(subj, "")
						last, lastAt = nil, -1
						continue
					}
				}
				drop()
				continue
			}
		}
		sw := false
		for i := range got {
			got[i].Global = isGlobal(got[i].Kind, global, project, person) && !assistant
			sw = sw || got[i].Kind == episode.SignalSwitch
		}
		if sw {
			// A switch and the preference it states are one statement:
			// one scope, the switch's.
			g := isGlobal(episode.SignalSwitch, global, project, person) && !assistant
			for i := range got {
				got[i].Global = g
			}
		}
		last, lastAt = nil, -1
		for i := len(got) - 1; i >= 0 && last == nil; i-- {
			switch got[i].Kind {
			case episode.SignalPreference, episode.SignalAvoid, episode.SignalDecision:
				s := got[i]
				last, lastAt = &s, len(out)+i
			}
		}
		out = append(out, got...)
	}

	if taskPlan(st.toks) {
		// "I'll need to turn off the scroll bar and always show the full
		// text": the steps of a task the user plans, no standing rule.
		out = slices.DeleteFunc(out, func(o episode.Signal) bool {
			return o.Kind == episode.SignalPreference || o.Kind == episode.SignalAvoid
		})
	}
	if endedHabit(st.toks) {
		// "We don't use Docker anymore": an avoidance that ends a habit
		// is a switch away from it.
		for i := range out {
			if out[i].Kind == episode.SignalAvoid {
				out[i].Kind = episode.SignalSwitch
				out[i].Global = isGlobal(episode.SignalSwitch, global, project, first)
			}
		}
	}
	for i := range out {
		if out[i].Kind != episode.SignalDecision {
			continue
		}
		for _, o := range out {
			if o.Kind != episode.SignalDecision && o.Subject == out[i].Subject {
				out[i].Global = o.Global // one statement, one scope
				break
			}
		}
	}
	for _, o := range out {
		if o.Kind == episode.SignalSwitch {
			// A switch and what replaces it are one statement: one scope.
			for i := range out {
				out[i].Global = o.Global
			}
			break
		}
	}
	if corr && !ackRemainder(toks) {
		// Subject: what the user says instead, when they say it.
		c := episode.Signal{Kind: episode.SignalCorrection, Object: wrongObj, Polarity: -1,
			Global: isGlobal(episode.SignalCorrection, global, project, first)}
		if len(prims) > 0 {
			c.Subject, c.Polarity = prims[0].subject, prims[0].polarity
			c.Object = cmp.Or(prims[0].object, c.Object)
		} else if len(toks) > 0 && len(toks) <= 5 && !negatedLead(toks) {
			if c.Subject = normSubject(joinTokens(st.text, toks)); c.Subject != "" {
				c.Polarity = 1
			}
		}
		out = append([]episode.Signal{c}, out...)
	} else {
		bare = false
	}

	// "From now on, X": a decision about whatever X is.
	if !assistant && fromNowOnAt(st.toks) >= 0 {
		d := episode.Signal{Kind: episode.SignalDecision, Polarity: 1, Global: global}
		if len(prims) > 0 {
			d.Subject, d.Object, d.Polarity = prims[0].subject, prims[0].object, prims[0].polarity
			for _, o := range out {
				if o.Subject == d.Subject {
					d.Global = o.Global // one statement, one scope
					break
				}
			}
		} else if rest := untilStop(withoutFromNowOn(toks)); len(rest) > 0 && len(rest) <= 8 {
			d.Subject = normSubject(joinTokens(st.text, rest))
		}
		if d.Subject != "" {
			out = append(out, d)
		}
	}
	r := sentenceResult{sigs: out, bare: bare, requests: requests}
	if len(prims) > 0 {
		r.prim = prims[0]
	}
	if len(out) > 0 {
		text := st.quote()
		for i := range out {
			out[i].Text = text
		}
	}
	return r
}

// taskPlan reports a sentence that opens with what the user will have to
// do ("I'll need to …", "we will have to …", "I'm going to need to …").
func taskPlan(toks []token) bool {
	ws := make([]string, 0, 5)
	for _, t := range toks[:min(len(toks), 5)] {
		ws = append(ws, t.w)
	}
	s := strings.Join(ws, " ") + " "
	for _, who := range []string{"i'll ", "we'll ", "i will ", "we will ", "i'm going to ", "we're going to "} {
		if rest, ok := strings.CutPrefix(s, who); ok {
			return strings.HasPrefix(rest, "need to ") || strings.HasPrefix(rest, "have to ")
		}
	}
	return false
}

// subjectPhrase reports a clause that is a bare noun phrase of two to six
// words ("Works of art", "The unit tests"): set off by a comma, it is the
// subject of what follows. A phrase of place or time ("For tests", "In
// this repo", "Going forward"), a pronoun or a verb makes it no subject,
// and a lone word may be whom the user addresses ("Claude, always …").
func subjectPhrase(toks []token) bool {
	if len(toks) < 2 || len(toks) > 6 {
		return false
	}
	w := toks[0].w
	if preps[w] || fillers[w] || adverbs[w] || hedges[w] || subWords[w] || coordWords[w] || scopeDets[w] && w != "the" && w != "my" && w != "our" ||
		strings.HasSuffix(w, "ing") || strings.HasSuffix(w, "ly") {
		return false
	}
	switch w {
	case "as", "once", "since", "after", "before", "until", "whenever", "where", "here", "there", "from",
		"going", "moving", "next", "first", "lastly", "finally", "otherwise", "also", "again", "today", "tomorrow":
		return false
	}
	for i, t := range toks {
		switch t.w {
		case "i", "we", "you", "let's", "lets", "me", "us", "it", "they", "he", "she", "please", "i'm", "we're", "you're":
			return false
		}
		if i > 0 && (finiteVerbs[t.w] || pastTense(t.w)) {
			return false
		}
	}
	return true
}

// phraseOf is the text of toks as written, white space folded, without
// the punctuation that ends it.
func phraseOf(text string, toks []token) string {
	return collapseSpace(strings.TrimRight(joinTokens(text, toks), ".,;:!?"))
}

// untilStop cuts toks at the first slot stop or clause separator.
func untilStop(toks []token) []token {
	for i, t := range toks {
		if i > 0 && slotStops[t.w] {
			return toks[:i]
		}
		if t.sep {
			return toks[:i+1]
		}
	}
	return toks
}

// isGlobal applies the scope rule documented at the top of this file.
func isGlobal(kind string, global, project bool, person byte) bool {
	if global {
		return true
	}
	if project {
		return false
	}
	switch kind {
	case episode.SignalPreference, episode.SignalAvoid:
		// The user's own habits and taste: "I prefer X", "never X".
		return person == 'i' || person == 0
	case episode.SignalSwitch, episode.SignalCorrection, episode.SignalFact:
		// A change of the codebase unless the user speaks of themself.
		return person == 'i'
	}
	return false
}

// kindBit gives each signal kind a bit, so that at one word only the first
// matching pattern of a kind counts.
func kindBit(kind string) uint8 {
	switch kind {
	case episode.SignalPreference:
		return 1
	case episode.SignalAvoid:
		return 2
	case episode.SignalSwitch:
		return 4
	case episode.SignalDecision:
		return 8
	case episode.SignalFact:
		return 16
	}
	return 32
}

// clauseSignals matches the patterns in one clause and emits their
// signals in clause order, with the primaries of the matches that emitted.
// Overlaps: a preference, avoidance or fact whose slot holds another match
// is dropped in favour of the inner one ("always avoid X" is avoid X); a
// decision adopts it ("we decided to stop using X" is a decision against
// X).
func clauseSignals(toks []token, text string, please, assistant bool, off []bool) (sigs []episode.Signal, prims []primary, kinds uint64) {
	// Words are visited from the last to the first, so that the matches
	// inside a slot are settled before the match around them.
	var ms []match
	var buf [64]int
	for i := len(toks) - 1; i >= 0; i-- {
		cands := byFirst[toks[i].w]
		if i == 0 && len(slotFirst) > 0 {
			merged := append(append(buf[:0], cands...), slotFirst...)
			slices.Sort(merged)
			cands = merged
		}
		prev := ""
		if i > 0 {
			prev = toks[i-1].w
		}
		var done uint8
		for _, pi := range cands {
			p := &patterns[pi]
			b := kindBit(p.kind)
			if done&b != 0 || off != nil && off[pi] || assistant && !p.assistant || p.prev != nil && !p.prev[prev] || blockedBefore(toks, i) ||
				prev == "to" && p.prev != nil && purposeTo(toks, i-1) {
				continue
			}
			m, ok := matchAt(p, toks, i)
			if !ok {
				continue
			}
			m.p = pi
			var inner *match
			for j := range ms {
				if s := ms[j].start; s > i && s >= m.x[0] && s < m.x[1] && (inner == nil || s < inner.start) {
					inner = &ms[j]
				}
			}
			var adopt *primary
			if inner != nil {
				switch p.kind {
				case episode.SignalPreference, episode.SignalAvoid, episode.SignalFact:
					done |= b // the inner match says it better
					continue
				case episode.SignalDecision:
					adopt = &inner.prim
				}
			}
			if m.sigs = emit(&m, toks, text, please, adopt); len(m.sigs) > 0 {
				done |= b
				ms = append(ms, m)
			}
		}
	}
	if len(ms) == 0 {
		return nil, nil, 0
	}
	for i := range ms {
		kinds |= 1 << patterns[ms[i].p].emit
	}
	slices.SortFunc(ms, func(a, b match) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.p - b.p
	})
	n := 0
	for i := range ms {
		n += len(ms[i].sigs)
	}
	sigs = make([]episode.Signal, 0, n)
	prims = make([]primary, 0, len(ms))
	for i := range ms {
		sigs = append(sigs, ms[i].sigs...)
		prims = append(prims, ms[i].prim)
	}
	return sigs, prims, kinds
}

// negatedLead reports whether a clause opens on its negation ("don't use
// mocks", "do not rebase", "never that one"): said after "No,", it names
// what not to do, nothing to install in its place, and its words are no
// correction's subject.
func negatedLead(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	return negators[toks[0].w] || len(toks) > 1 && (toks[0].w == "do" || toks[0].w == "does") && toks[1].w == "not"
}
