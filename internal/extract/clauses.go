package extract

import (
	"strings"

	"github.com/engram-memory/engram/internal/episode"
)

// Corrections and clauses: correction markers ("actually", "no,"), "not X
// but Y", the clause splitter, fillers, conditionals, person, and the scope
// markers ("in this repo", "in all my projects", "from now on").

// correctionMarker returns how many words at the start of toks say the
// assistant got it wrong ("no,", "that's wrong", "actually,", "I said"),
// or 0.
func correctionMarker(toks []token) int {
	n := 0
	for n < len(toks)-1 && interjections[toks[n].w] {
		n++
	}
	lead := n
	for n < len(toks) {
		k := oneMarker(toks[n:])
		if k == 0 {
			break
		}
		n += k
	}
	if n == lead {
		return 0
	}
	return n
}

// interjections may come before a correction marker ("Hmm, no.").
var interjections = setOf("hmm", "hm", "well", "oh", "ugh", "wait", "sorry", "um", "uh", "err", "erm",
	"argh", "sigh", "ah")

var correctionSeqs = [][]string{
	{"that's", "not", "what", "i", "asked", "for"}, {"that's", "not", "what", "i", "asked"},
	{"that's", "not", "what", "i", "wanted"}, {"that's", "not", "what", "i", "meant"},
	{"that", "is", "not", "what", "i", "asked"}, {"not", "what", "i", "asked"}, {"not", "what", "i", "meant"},
	{"that", "is", "not", "right"}, {"that", "is", "not", "correct"}, {"that's", "not", "right"},
	{"that's", "not", "correct"}, {"that's", "not", "it"}, {"that's", "still", "wrong"},
	{"that", "is", "wrong"}, {"that", "is", "incorrect"}, {"that's", "wrong"}, {"that's", "incorrect"},
	{"this", "is", "wrong"}, {"it's", "wrong"}, {"this", "is", "not", "right"}, {"this", "isn't", "right"},
	{"that", "isn't", "right"}, {"that", "isn't", "correct"}, {"you're", "wrong"}, {"you", "are", "wrong"},
	{"you're", "mistaken"}, {"you", "are", "mistaken"}, {"wrong", "again"}, {"still", "wrong"},
	{"scratch", "that"}, {"i", "told", "you"}, {"i", "changed", "my", "mind"}, {"changed", "my", "mind"}, {"i've", "changed", "my", "mind"}, {"i", "asked", "you", "to"}, {"i", "asked", "for"}, {"i", "said"}, {"i", "meant"},
}

// correctionFirst holds the first words of correctionSeqs.
var correctionFirst = func() map[string]bool {
	m := map[string]bool{}
	for _, seq := range correctionSeqs {
		m[seq[0]] = true
	}
	return m
}()

func oneMarker(toks []token) int {
	w := toks[0].w
	endOrSep := len(toks) == 1 || toks[0].sep
	switch w {
	case "no":
		if endOrSep {
			return 1
		}
		switch toks[1].w {
		case "that's", "that", "it's", "you", "you're", "don't", "not", "stop", "never", "please", "actually",
			"wrong", "i", "we", "use", "just", "it", "instead":
			return 1
		}
		return 0
	case "nope", "nah", "wrong", "incorrect":
		return 1
	case "actually":
		// "Actually, …", "Actually we moved to …": what follows revises
		// what was said or assumed.
		return 1
	case "wait", "hmm":
		return 0
	case "not":
		if len(toks) > 1 && toks[1].w == "quite" {
			return 2
		}
	}
	if !correctionFirst[w] {
		return 0
	}
	for _, seq := range correctionSeqs {
		if len(seq) > len(toks) {
			continue
		}
		ok := true
		for i, s := range seq {
			if toks[i].w != s {
				ok = false
				break
			}
		}
		if ok {
			return len(seq)
		}
	}
	return 0
}

// ackRemainder reports a "no" that is polite, not a correction ("no,
// thanks", "no worries, that's fine").
func ackRemainder(toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	switch toks[0].w {
	case "thanks", "thank", "worries", "problem", "need", "rush", "it's", "that's", "all":
		if toks[0].w == "it's" || toks[0].w == "that's" {
			return len(toks) > 1 && (toks[1].w == "fine" || toks[1].w == "ok" || toks[1].w == "okay" || toks[1].w == "good")
		}
		if toks[0].w == "all" {
			return len(toks) > 1 && toks[1].w == "good"
		}
		return true
	}
	return false
}

// notButCorrection finds "not X but Y" ("use pnpm, not npm" is handled by
// coordination): a correction whose Subject is Y and Object X.
func notButCorrection(toks []token, text string) (episode.Signal, bool) {
	for k := 0; k < len(toks); k++ {
		if toks[k].w != "not" {
			continue
		}
		if k > 0 {
			switch toks[k-1].w {
			case "it's", "it", "is", "that's", "was", "use", "meant", "want", "should", "be", "but", "i",
				"the", "answer", "fix":
			default:
				continue
			}
		}
		if k+1 < len(toks) {
			switch toks[k+1].w {
			case "sure", "only", "just", "yet", "really", "that", "able", "going", "too", "very", "quite",
				"necessarily", "always", "exactly", "bad", "a", "an", "the":
				continue
			}
		}
		b := -1
		for j := k + 2; j < len(toks) && j <= k+5; j++ {
			if toks[j].w == "but" {
				b = j
				break
			}
		}
		if b < 0 || b+1 >= len(toks) {
			continue
		}
		e := b + 1
		for e < len(toks) && e-b <= 6 && !slotStops[toks[e].w] {
			e++
			if toks[e-1].sep {
				break
			}
		}
		if e == b+1 {
			// "but" is followed by a stop word ("but as a document",
			// "but when you have time"): no Y to switch to.
			continue
		}
		x := normSubject(text[toks[k+1].start:toks[b-1].end])
		y := normSubject(text[toks[b+1].start:toks[e-1].end])
		if x == "" || y == "" || x == y {
			continue
		}
		return episode.Signal{Kind: episode.SignalCorrection, Subject: y, Object: x, Polarity: 1}, true
	}
	return episode.Signal{}, false
}

// clause is one clause of a sentence; coord says it was joined to the
// previous one by a comma, "and", "or" or "nor" (a coordinated item can
// extend the previous clause's signal).
type clause struct {
	toks  []token
	coord bool
	conj  string // the coordinating word before it ("and", "or"), "" after a comma
}

// Clause boundaries: words that start a new clause, coordinating or not.
var (
	coordWords = setOf("and", "or", "nor", "&", "plus")
	subWords   = setOf("but", "so", "then", "because", "although", "though", "while", "whereas", "cause",
		"however", "otherwise", "also")
)

// splitClauses splits a sentence at separators and conjunctions. A clause
// of fillers only ("…, please") is glued to the previous one, and one
// starting with "instead of" to the next ("instead of npm, use pnpm").
// Clauses are sub-slices of toks; a glued one spans both parts and what
// lies between them.
func splitClauses(toks []token) []clause {
	type span struct {
		a, b  int
		coord bool
		conj  string
	}
	spans := make([]span, 0, 4)
	start, coord, conj := 0, true, ""
	flush := func(end int, next bool) {
		if end > start {
			spans = append(spans, span{start, end, coord, conj})
		}
		coord, conj = next, ""
	}
	for i, t := range toks {
		switch {
		case i > 0 && coordWords[t.w]:
			flush(i, true)
			start, conj = i+1, t.w
			continue
		case i > 0 && subWords[t.w] && !(t.w == "so" && i+1 < len(toks) && toks[i+1].w == "that"):
			flush(i, false)
			start = i
		}
		if t.sep && !(i+1 < len(toks) && toks[i+1].w == "not") && !modifierComma(toks, i) { // "X, not Y" is one clause
			flush(i+1, true)
			start = i + 1
		}
	}
	flush(len(toks), false)
	merged := spans[:0]
	for i := 0; i < len(spans); i++ {
		sp := spans[i]
		if len(merged) > 0 && onlyFillers(toks[sp.a:sp.b]) {
			merged[len(merged)-1].b = sp.b
			continue
		}
		if i+1 < len(spans) && sp.b-sp.a >= 2 && (toks[sp.a].w == "instead" && toks[sp.a+1].w == "of" ||
			toks[sp.a].w == "rather" && toks[sp.a+1].w == "than") {
			sp.b = spans[i+1].b
			i++
		}
		merged = append(merged, sp)
	}
	out := make([]clause, len(merged))
	for i, sp := range merged {
		out[i] = clause{toks: toks[sp.a:sp.b:sp.b], coord: sp.coord, conj: sp.conj}
	}
	return out
}

// modifierComma reports a comma after the first word of what a verb of
// taste takes when that word is a modifier and another follows: "I only
// use vegan, cruelty-free beauty products", "I prefer self-directed,
// independent learning" are one noun phrase, not a list ("I like Go,
// Rust and Zig" is one).
func modifierComma(toks []token, i int) bool {
	if i < 1 || i+2 >= len(toks) || !tasteVerbs[toks[i-1].w] && !qualifierPreps[toks[i-1].w] {
		return false
	}
	w, next := toks[i].w, toks[i+1].w
	modifier := func(w string) bool {
		return adjectiveLike(w) || plainAdjectives[w] || strings.Contains(w, "-") || pastTense(w) || strings.HasSuffix(w, "an")
	}
	return modifier(w) && modifier(next) && !coordWords[next] && !finiteVerbs[next]
}

// qualifierPreps open a phrase that qualifies a noun, whose modifiers a
// comma may part as well: "vehicles with large, intrusive front grilles",
// "clothing made from organic, vegan materials".
var qualifierPreps = setOf("with", "without", "from", "of")

// plainAdjectives are common adjectives without an adjective's ending.
var plainAdjectives = setOf("large", "big", "small", "bright", "loud", "dark", "heavy", "light", "bold", "soft",
	"long", "short", "strong", "thick", "thin", "tall", "wide", "high", "low", "fast", "slow", "cheap", "warm",
	"cold", "hot", "sweet", "spicy", "quiet", "simple", "clean", "fresh", "raw", "rich", "plain", "deep",
	"old", "new", "young", "modern", "natural", "wild", "huge", "tiny", "flashy", "busy", "crowded")

// tasteVerbs take a noun phrase of the user's taste.
var tasteVerbs = setOf("prefer", "use", "like", "love", "enjoy", "wear", "eat", "buy", "avoid", "dislike", "hate",
	"want", "choose", "favor", "favour")

// fillers are dropped from the start of a clause before matching.
var fillers = setOf("please", "pls", "plz", "also", "and", "but", "so", "just", "oh", "btw", "ok", "okay",
	"well", "then", "plus", "hey", "hi", "yes", "yeah", "yep", "sure", "alright", "great", "cool", "nice",
	"thanks", "kindly", "now", "ideally", "personally", "honestly", "basically", "overall", "generally",
	"again", "hmm", "right", "anyway", "anyways", "fyi", "note", "reminder", "remember", "important",
	"seriously", "really", "and,", "or")

func onlyFillers(toks []token) bool {
	for _, t := range toks {
		if !fillers[t.w] && t.w != "thank" && t.w != "you" {
			return false
		}
	}
	return true
}

// stripFillers drops leading fillers and reports whether the clause said
// "please" anywhere.
func stripFillers(toks []token) ([]token, bool) {
	please := false
	for _, t := range toks {
		if t.w == "please" || t.w == "pls" || t.w == "plz" {
			please = true
		}
	}
	for len(toks) > 0 {
		if fillers[toks[0].w] {
			// "so that", "right now" and the like are not fillers before
			// something that needs them; keep "then" when nothing follows.
			toks = toks[1:]
			continue
		}
		// A leading scope ("in this repo, don't …", "here we use …") says
		// where, not what.
		if toks[0].w == "here" && len(toks) > 1 && !beForms[toks[1].w] {
			toks = toks[1:]
			continue
		}
		if len(toks) > 3 && (toks[0].w == "in" || toks[0].w == "for") && (toks[1].w == "this" || toks[1].w == "our") &&
			scopeNouns[toks[2].w] {
			toks = toks[3:]
			continue
		}
		break
	}
	return toks, please
}

// trimLead drops the given words from the start of toks.
func trimLead(toks []token, words ...string) []token {
	for len(toks) > 0 {
		found := false
		for _, w := range words {
			if toks[0].w == w {
				found = true
				break
			}
		}
		if !found {
			break
		}
		toks = toks[1:]
	}
	return toks
}

// conditional reports a clause that only states a condition.
func conditional(toks []token) bool {
	switch toks[0].w {
	case "if", "unless", "whether", "suppose", "assuming", "supposing", "what":
		return true
	case "in":
		return len(toks) > 1 && toks[1].w == "case"
	}
	return false
}

// clausePerson returns 'i' for a clause in the first person singular, 'w'
// for the first person plural (a team, a codebase), 'o' for a third
// person, 0 for none (an imperative, a request to "you" or a fragment,
// which inherits the previous clause's).
func clausePerson(toks []token) byte {
	for _, t := range toks {
		switch t.w {
		case "i", "i'm", "i'd", "i've", "i'll", "my", "me", "myself", "mine":
			return 'i'
		case "we", "we're", "we'd", "we've", "we'll", "our", "us", "let's", "team":
			return 'w'
		case "they", "their", "he", "she", "his", "her", "they're", "he's", "she's":
			return 'o'
		}
	}
	return 0
}

// hasGlobalMarker finds "in general", "in all my projects", "everywhere"…
func hasGlobalMarker(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "generally", "globally", "everywhere", "universally":
			return true
		case "general":
			if i > 0 && toks[i-1].w == "in" {
				return true
			}
		case "all", "every", "any", "each", "across":
			j := i + 1
			for j < len(toks) && j <= i+2 && (toks[j].w == "my" || toks[j].w == "our" || toks[j].w == "the" ||
				toks[j].w == "of" || toks[j].w == "your") {
				j++
			}
			if j < len(toks) && scopeNouns[toks[j].w] && (t.w != "any" || i > 0 && toks[i-1].w == "in") {
				return true
			}
		}
	}
	return false
}

// hasProjectMarker finds "this repo", "our codebase", "in here"…
func hasProjectMarker(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "this", "our", "current":
			if i+1 < len(toks) && scopeNouns[toks[i+1].w] {
				return true
			}
		case "the":
			if i+1 < len(toks) && repoNouns[toks[i+1].w] {
				return true
			}
		case "generated", "vendored":
			return true // "never edit the generated client": a part of this codebase
		case "here":
			// "in here", "use pnpm here", "here we use tabs"; not "here is
			// the log".
			if i+1 < len(toks) && beForms[toks[i+1].w] || i > 0 && (toks[i-1].w == "over" || toks[i-1].w == "from" ||
				toks[i-1].w == "come" || toks[i-1].w == "get" || toks[i-1].w == "is" || toks[i-1].w == "are") {
				continue
			}
			return true
		}
	}
	return false
}

var repoNouns = setOf("project", "repo", "repository", "codebase", "workspace", "monorepo")

var scopeNouns = setOf("project", "projects", "repo", "repos", "repository", "repositories", "codebase",
	"codebases", "code", "service", "services", "app", "apps", "application", "package", "module",
	"crate", "workspace", "monorepo", "library", "lib", "tool", "cli", "team")

var fromNowOn = [][]string{{"from", "now", "on"}, {"going", "forward"}, {"moving", "forward"},
	{"from", "here", "on"}, {"from", "now"}, {"henceforth"}, {"in", "future"}, {"in", "the", "future"}}

func fromNowOnAt(toks []token) int {
	for i := range toks {
		switch toks[i].w {
		case "from", "going", "moving", "henceforth", "in":
		default:
			continue
		}
		for _, seq := range fromNowOn {
			if i+len(seq) <= len(toks) {
				ok := true
				for k, s := range seq {
					if toks[i+k].w != s {
						ok = false
						break
					}
				}
				if ok {
					return i
				}
			}
		}
	}
	return -1
}

// withoutFromNowOn returns toks without the "from now on" phrase and
// what precedes it when it opens the sentence.
func withoutFromNowOn(toks []token) []token {
	i := fromNowOnAt(toks)
	if i < 0 {
		return toks
	}
	n := 0
	for _, seq := range fromNowOn {
		if i+len(seq) <= len(toks) {
			ok := true
			for k, s := range seq {
				if toks[i+k].w != s {
					ok = false
					break
				}
			}
			if ok {
				n = len(seq)
				break
			}
		}
	}
	if i == 0 {
		rest := toks[n:]
		if len(rest) > 0 && rest[0].w == "on" {
			rest = rest[1:]
		}
		rest, _ = stripFillers(rest)
		return rest
	}
	return toks[:i]
}

func joinTokens(text string, toks []token) string {
	if len(toks) == 0 {
		return ""
	}
	return text[toks[0].start:toks[len(toks)-1].end]
}

// isQuestion reports a sentence that asks rather than states: it ends
// with "?" or opens like a question ("should we …", "do you …"). Polite
// requests ("can you …", "could you please …") are statements.
func isQuestion(m string, a, b int, toks []token) bool {
	w0 := toks[0].w
	w1 := ""
	if len(toks) > 1 {
		w1 = toks[1].w
	}
	if w0 == "please" || (w0 == "can" || w0 == "could" || w0 == "would" || w0 == "will") && w1 == "you" {
		return false
	}
	end := b
	for end > a && (m[end-1] == ' ' || m[end-1] == '\n' || m[end-1] == '\t' || m[end-1] == '\r') {
		end--
	}
	if end > a && m[end-1] == '?' {
		return true
	}
	switch w0 {
	case "should", "shall", "is", "are", "was", "were", "does", "did", "am", "isn't", "aren't", "doesn't",
		"didn't", "shouldn't", "wouldn't", "couldn't", "why", "whether":
		return true
	case "do":
		switch w1 {
		case "you", "we", "i", "they", "it":
			return true
		}
	case "can", "could", "would", "will":
		switch w1 {
		case "we", "i", "it", "they", "this", "that", "there":
			return true
		}
	}
	return false
}
