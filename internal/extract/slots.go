package extract

import (
	"strings"

	"github.com/engram-memory/engram/internal/episode"
)

// What a matched pattern says: emit and emitSlot turn a match into signals
// (the subject, its qualifiers, polarity and scope) and hold the guards
// that refuse a slot that is no statement.

// adverbs may stand between "I" and a verb ("I really prefer").
var adverbs = setOf("always", "usually", "generally", "really", "strongly", "definitely", "much", "just",
	"still", "personally", "actually", "also", "typically", "normally", "mostly", "very", "totally",
	"absolutely", "honestly", "truly", "do", "kinda", "sorta", "certainly", "far", "probably", "all", "strictly",
	"religiously", "exclusively")

// slotStops end a slot: what follows them is a reason, a condition or a
// relative clause, not part of the subject.
var slotStops = setOf("because", "since", "so", "when", "whenever", "while", "where", "which", "who",
	"that", "unless", "if", "until", "than", "instead", "except", "rather", "whereas", "though",
	"although", "otherwise", "as", "but", "cause", "cuz", "whereby", "unlike", "not", "due", "such")

// negators, hedges and reporting verbs block a positive pattern when they
// come within the three words before it.
var (
	negators = setOf("not", "no", "never", "don't", "dont", "doesn't", "didn't", "won't", "can't", "cannot",
		"shouldn't", "wouldn't", "isn't", "aren't", "wasn't", "weren't", "hardly", "without", "stop",
		"stopped", "mustn't", "haven't", "hasn't", "nor", "neither")
	hedges    = setOf("could", "might", "may", "maybe", "perhaps", "if", "whether", "wonder", "wondering", "unless")
	reporting = setOf("said", "says", "say", "wrote", "suggested", "suggests", "mentioned", "claimed", "claims", "asked", "thought")
)

// blockedBefore reports a negation, hedge or reported speech in the three
// words before toks[i].
func blockedBefore(toks []token, i int) bool {
	for k := max(0, i-3); k < i; k++ {
		w := toks[k].w
		if negators[w] || hedges[w] {
			return true
		}
		if reporting[w] && (k == 0 || toks[k-1].w != "i") {
			return true
		}
		if k+1 < i && (wishVerbs[w] && (toks[k+1].w == "us" || toks[k+1].w == "me" || toks[k+1].w == "you") ||
			w == "used" && toks[k+1].w == "to") {
			// "my boss wants us to use Java", "I used to prefer tabs".
			return true
		}
	}
	// "it should always return an error": a thing, not a person or the
	// codebase ("this service should never log tokens"), does it.
	if i >= 2 && modals[toks[i-1].w] && !persons[toks[i-2].w] && !scopeNouns[toks[i-2].w] {
		return true
	}
	return false
}

// purposeTo reports a "to" at toks[t] that opens the purpose of a task or
// names what is asked about ("explain how to use X", "enumerate solutions
// to keep the code compact", "ways to avoid deadlocks"), not a rule of the
// user's: an infinitive is theirs after a word of wanting, needing,
// trying, remembering or judging ("remember to keep functions small",
// "I want you to always use pnpm", "it's best to avoid X"), or opening
// its clause.
func purposeTo(toks []token, t int) bool {
	if t == 0 {
		return false
	}
	w := toks[t-1].w
	if ruleTo[w] || t >= 2 && (toks[t-2].w == "it's" || toks[t-2].w == "is" || toks[t-2].w == "be") {
		return false
	}
	return true
}

var ruleTo = setOf("want", "wants", "wanted", "need", "needs", "like", "love", "prefer", "prefers", "try",
	"trying", "remember", "sure", "important", "best", "better", "good", "essential", "crucial",
	"careful", "going", "gonna", "have", "has", "got", "ought", "tend", "tends", "continue", "you", "us",
	"me", "always", "never", "please", "rule", "habit", "policy", "convention", "practice", "and", "or",
	"also", "just", "rather", "wish", "hope", "plan", "planning", "intend", "mean", "decide", "decided",
	"chose", "choose", "agreed", "agree", "learned", "learn", "start", "started", "begin", "supposed",
	"required", "necessary", "able", "only", "still", "really", "definitely", "generally", "usually",
	"ideally", "strictly", "first", "not", "use", "used", "default", "forget")

// describedBefore reports whether the words before i say what someone
// other than the user or their team is or does ("you are", "it's",
// "this is").
func describedBefore(toks []token, i int) bool {
	for k := max(0, i-2); k < i; k++ {
		switch toks[k].w {
		case "you", "you're", "it", "it's", "this", "that", "that's", "they", "they're", "he", "she", "he's", "she's":
			return true
		}
	}
	return false
}

var (
	wishVerbs = setOf("wants", "want", "wanted", "told", "asked", "asks", "expects", "expected", "requires",
		"required", "forces", "forced", "makes", "made", "lets", "needs", "needed")
	modals  = setOf("should", "must", "will", "would", "shall")
	persons = setOf("i", "we", "you", "please", "and", "so", "really", "just", "also", "then", "definitely")
)

// emit turns a match into signals (Text and Global are set by the caller)
// and records its primary. adopt, for a decision wrapping another match,
// is that match's primary.
func emit(m *match, toks []token, text string, please bool, adopt *primary) []episode.Signal {
	switch patterns[m.p].emit {
	case emitPref, emitAvoid, emitDont, emitNever:
	default:
		return emitSlot(m, toks, text, please, adopt, false)
	}
	if e := asQualifier(toks, m.x); e > 0 {
		m.x[1] = e // "fish as pets": not fish as food
	}
	if !restricted(toks, m.x) {
		return emitSlot(m, toks, text, please, adopt, false)
	}
	// "I avoid restaurants that serve gluten": the claim is about what
	// the relative clause restricts, and says it.
	rel, ok := relativeClause(toks, m.x)
	if !ok {
		return nil
	}
	out := emitSlot(m, toks, text, please, adopt, true)
	if len(out) != 1 {
		return nil
	}
	subj := rawPlural(out[0].Subject, toks[m.x[1]-1].w) + " " + rel // "beauty products that …"
	if len(subj) > maxSubjectBytes {
		return nil
	}
	out[0].Subject = subj
	m.prim.subject = subj
	return out
}

// rawPlural gives subject's last word back its plural as written (raw),
// for a subject a relative clause goes on from: "beauty products that
// …", not "beauty product that …".
func rawPlural(subject, raw string) string {
	if w := lastWord(subject); raw != w && singular(raw) == w {
		return subject[:len(subject)-len(w)] + raw
	}
	return subject
}

// asQualifier returns where an "as" phrase after slot x ends when it says
// in which role the slot's thing is meant ("fish as pets", "cycling as a
// form of exercise"), or 0: not when "as" opens a reason or a comparison
// ("as I'm vegan", "as well", "as much as").
func asQualifier(toks []token, x [2]int) int {
	a := x[1]
	if a <= x[0] || a+1 >= len(toks) || toks[a].w != "as" || toks[a-1].sep {
		return 0
	}
	switch toks[a+1].w {
	case "well", "much", "many", "long", "soon", "far", "if", "though", "such", "possible", "usual", "needed",
		"necessary", "often", "little", "few", "good", "best":
		return 0
	}
	e := a + 1
	for e < len(toks) && !toks[e-1].sep && !slotStops[toks[e].w] {
		w := toks[e].w
		if clauseSubjects[w] || objPronouns[w] || finiteVerbs[w] || modals[w] || negators[w] || w == "`" {
			return 0
		}
		e++
	}
	if e-a > 5 {
		return 0
	}
	return e
}

// relativeClause returns the words of the restrictive relative clause
// after slot x, lower-cased ("that have been tested on animals"), up to
// the end of its clause or a reason, an example or an aside ("… due to
// ethical concerns", "… like beeswax"). It fails when the clause is a
// single word or longer than maxRelativeWords.
func relativeClause(toks []token, x [2]int) (string, bool) {
	if x[1]-x[0] >= 2 && toks[x[1]-2].w == "to" {
		return "", false // "to learn that": an object, no relative clause
	}
	e := x[1] + 1
	for e < len(toks) && !toks[e-1].sep && !relativeStops[toks[e].w] {
		e++
	}
	if e-x[1] < 2 || e-x[1] > maxRelativeWords {
		return "", false
	}
	ws := make([]string, 0, e-x[1])
	for _, t := range toks[x[1]:e] {
		if t.w == "`" {
			return "", false
		}
		ws = append(ws, t.w)
	}
	for len(ws) > 2 && preps[ws[len(ws)-1]] {
		ws = ws[:len(ws)-1]
	}
	if l := ws[len(ws)-1]; looksLikeValue(l) || numberWords[l] || modals[l] || finiteVerbs[l] || adverbs[l] ||
		modals[ws[len(ws)-2]] || hedges[ws[len(ws)-2]] || hedges[l] || clauseSubjects[l] || l == "too" || l == "either" {
		// "movies that are over two [and a half hours long]", "that
		// could potentially [cause …]": cut off, it says nothing.
		return "", false
	}
	return strings.TrimRight(strings.Join(ws, " "), ".,;:!?"), true
}

// reactionVerbs before one of shownDets say what the user thinks of a
// thing in front of them.
var (
	reactionVerbs = setOf("like", "love", "enjoy", "adore", "likes", "loves", "into")
	shownDets     = setOf("the", "this", "that", "these", "those", "your")
)

// genericThe are the nouns English names in general with "the".
var genericThe = setOf("ocean", "sea", "beach", "mountains", "outdoors", "countryside", "city", "snow", "rain",
	"sun", "wilderness", "desert", "forest", "woods", "water", "cold", "heat", "winter", "summer", "spring",
	"autumn", "fall", "night", "morning", "evening", "theater", "theatre", "opera", "ballet", "piano",
	"guitar", "violin", "drums", "terminal", "command", "keyboard")

// thirdPerson reports a verb in the third person singular ("gets",
// "fails"), not the plain form an imperative or the user's own habit takes.
func thirdPerson(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || !plainWord(w) {
		return false
	}
	for _, e := range []string{"ss", "us", "is", "ys", "as", "os"} {
		if strings.HasSuffix(w, e) {
			return false
		}
	}
	return thirdPersonVerbs[w] || strings.HasSuffix(w, "es") && thirdPersonVerbs[strings.TrimSuffix(w, "es")+"e"] ||
		thirdPersonVerbs[strings.TrimSuffix(w, "s")]
}

// thirdPersonVerbs are verbs whose -s form is only a verb: "never gets old".
var thirdPersonVerbs = setOf("get", "gets", "go", "goes", "fail", "work", "happen", "seem", "look", "come",
	"take", "make", "give", "stop", "end", "change", "matter", "help", "hurt", "last", "run", "break",
	"cease", "fade", "disappoint", "lie", "sleep", "rest", "quit", "tire", "leave", "let", "say", "tell")

// followNouns end what a user follows as a way of living.
var followNouns = setOf("diet", "lifestyle", "regimen", "fast", "religion", "faith")

var numberWords = setOf("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "half", "few")

// maxRelativeWords bounds a relative clause kept in a subject, and
// maxRelativeSubjectBytes a subject whose relative clause lists modifiers.
const (
	maxRelativeWords        = 9
	maxRelativeSubjectBytes = 120
)

var relativeStops = setOf("due", "because", "since", "as", "so", "including", "like", "such", "especially",
	"unless", "if", "when", "whenever", "while", "but", "except", "although", "though", "even", "e.g", "(")

// emitSlot is emit for a slot that is restricted by a relative clause
// only when rel says so (the caller adds the clause).
func emitSlot(m *match, toks []token, text string, please bool, adopt *primary, rel bool) []episode.Signal {
	p := &patterns[m.p]
	span := func(r [2]int) string {
		if r[1] <= r[0] {
			return ""
		}
		return text[toks[r[0]].start:toks[r[1]-1].end]
	}
	x, y := m.x, m.y
	var out []episode.Signal
	pref := func(kind string, pol int, r [2]int, purpose bool) (episode.Signal, bool) {
		subj, obj := normSlot(span(r), purpose)
		if subj == "" {
			return episode.Signal{}, false
		}
		return episode.Signal{Kind: kind, Subject: subj, Object: obj, Polarity: pol}, true
	}
	setPrim := func(s episode.Signal) {
		m.prim = primary{subject: s.Subject, object: s.Object, polarity: s.Polarity, ok: true}
	}
	switch p.emit {
	case emitPref, emitAvoid:
		pol := 1
		if p.emit != emitPref {
			pol = -1
		}
		if p.emit == emitPref && toks[m.start].w == "always" && !verbAfterAlways(toks, x) {
			return nil
		}
		if p.emit == emitPref && toks[m.start].w == "always" && x[1]-x[0] > 1 && (likeVerbs[toks[x[0]].w] || toks[x[0]].w == "love") {
			x[0]++ // "I will always love reading" is about reading
		}
		if p.emit == emitPref && x[0] == m.start+1 && (toks[m.start].w == "only" || toks[m.start].w == "exclusively") &&
			(!habitVerbs[toks[x[0]].w] || x[0]+1 < x[1] && anaphoric[toks[x[0]+1].w]) {
			// "I only eat organic produce" is a habit; "I only have two
			// hours", "I only need the summary" are not, and "I only
			// read it once" is about what was shown.
			return nil
		}
		if thatClause(toks, x) || pol > 0 && (negators[toks[x[0]].w] || avoidsAfter(toks, x)) || !rel && restricted(toks, x) {
			return nil
		}
		if anaphoric[toks[x[0]].w] && (p.emit == emitAvoid || p.emit == emitPref && toks[m.start].w == "i") {
			return nil
		}
		if pol > 0 && x[0] > 0 && reactionVerbs[toks[x[0]-1].w] && (shownDets[toks[x[0]].w] ||
			toks[x[0]].w == "all" && x[0]+1 < x[1] && shownDets[toks[x[0]+1].w]) &&
			!(x[1]-x[0] == 2 && toks[x[0]].w == "the" && genericThe[toks[x[0]+1].w]) {
			// "I love the yellow leaves", "I like this approach": a
			// reaction to what is shown, not a taste ("I love the
			// ocean" is one).
			return nil
		}
		if toks[m.start].w == "use" && y[1] > y[0] && specific[toks[x[0]].w] {
			// "use the staging config for this test": a task, not a habit.
			return nil
		}
		s, ok := pref(p.kind, pol, x, true)
		if !ok {
			return nil
		}
		if y[1] > y[0] { // "use X for Y"
			if s.Object, _ = normSlot(span(y), false); s.Object == "" {
				return nil
			}
		}
		if pol > 0 {
			// "I prefer JavaScript without semicolons", "clothing free
			// of leather": X, and not Y.
			for j := x[0] + 1; j < x[1]-1; j++ {
				skip := 0
				if toks[j].w == "without" {
					skip = 1
				} else if toks[j].w == "free" && j+2 < x[1] && (toks[j+1].w == "of" || toks[j+1].w == "from") {
					skip = 2
				}
				if skip > 0 {
					ws, wok := pref(episode.SignalAvoid, -1, [2]int{j + skip, x[1]}, false)
					if xs, xok := pref(p.kind, pol, [2]int{x[0], j}, true); wok && xok {
						out = append(out, xs, ws)
						setPrim(xs)
						return out
					}
				}
			}
		}
		out = append(out, s)
		setPrim(s)
		if a, ok := notAfter(toks, m.end, span); ok && pol > 0 {
			out = append(out, a) // "this service uses gRPC, not REST"
		}
	case emitPrefOver:
		if negators[toks[x[0]].w] {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, true)
		if !ok {
			return nil
		}
		// What it is preferred to is no avoidance: "composition over
		// inheritance" says which to pick, not that inheritance is never
		// used (of the speech corpus's comparatives none is labelled an
		// avoidance of the other side).
		if a, ok := pref(episode.SignalAvoid, -1, y, true); ok && s.Object == "" {
			s.Object = a.Object // "Go over Python for CLIs"
		}
		out = append(out, s)
		setPrim(s)
	case emitDont, emitNever:
		if x[1] <= x[0] || !rel && restricted(toks, x) {
			return nil
		}
		k := x[0]
		// "I don't completely understand": the verb after the adverbs says
		// whether it is a habit at all.
		for k < x[1] && (toks[k].w == "ever" || toks[k].w == "even" || dontAdverbs[toks[k].w]) {
			k++
		}
		if k == x[1] {
			return nil
		}
		verb := toks[k].w
		if p.emit == emitNever && (pastTense(verb) || verb == "mind" || verb == "again" || verb == "once") {
			return nil
		}
		if thirdPerson(verb) {
			return nil // "it never gets old": what something does
		}
		switch {
		case verb == "be" && k+1 < x[1] && x[1]-k <= 3 && !beDeny[toks[k+1].w] && !specific[toks[k+1].w]:
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, false)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case verb == "need" && k+1 < x[1] && !specific[toks[k+1].w] && toks[k+1].w != "to" && toks[k+1].w != "a" &&
			toks[k+1].w != "an" && toks[k+1].w != "you":
			// "I don't need long explanations".
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case dontDeny[verb]:
			return nil
		case likeVerbs[verb] && taskWish(verb, toks, k+1, x[1]):
			// "I don't want to modify the stack trace": this task's
			// object, no habit.
			return nil
		case likeVerbs[verb]:
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		case verb == "forget":
			s, ok := pref(episode.SignalPreference, 1, [2]int{k + 1, x[1]}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		default:
			e := x[1]
			if placeVerbs[verb] {
				// "don't add semicolons to my JS files": what is avoided
				// is the thing, not the place.
				for j := k + 2; j < e; j++ {
					if w := toks[j].w; w == "to" || w == "into" || w == "in" || w == "onto" {
						e = j
						break
					}
				}
			}
			s, ok := pref(episode.SignalAvoid, -1, [2]int{k, e}, true)
			if !ok {
				return nil
			}
			out = append(out, s)
			setPrim(s)
		}
	case emitInsteadRev:
		ws, wo := normSlot(span(y), true)
		ns, _ := normSlot(span(x), false)
		if ws == "" || ns == "" || ws == ns || placeWord(ws) {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalPreference, Subject: ws, Object: wo, Polarity: 1},
			episode.Signal{Kind: episode.SignalAvoid, Subject: ns, Polarity: -1})
		m.prim = primary{subject: ws, object: wo, polarity: 1, ok: true}
	case emitPlease:
		// The slot opens the clause and is a noun phrase: "table-driven
		// tests please".
		if x[1]-x[0] > 4 || !onlyScopeAfter(toks, m.end) {
			return nil
		}
		for k := x[0]; k < x[1]; k++ {
			w := toks[k].w
			if specific[w] || finiteVerbs[w] || negators[w] || w == "and" || w == "or" || w == "`" {
				return nil
			}
		}
		if taskVerbs[toks[x[0]].w] || adverbs[toks[x[0]].w] {
			return nil // a task, or a rule ("always use X please")
		}
		s, ok := pref(episode.SignalPreference, 1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitBe:
		if x[1]-x[0] > 2 || beDeny[toks[x[0]].w] || pastTense(toks[x[0]].w) || specific[toks[x[0]].w] {
			return nil
		}
		s, ok := pref(episode.SignalPreference, 1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitKeepAdj:
		k := x[0]
		if k < x[1] && (toks[k].w == "your" || toks[k].w == "my" || toks[k].w == "our") {
			k++
		}
		n := x[1] - k
		if n < 2 || n > 3 || !styleAdjs[toks[x[1]-1].w] || specific[toks[k].w] {
			return nil
		}
		subj := normSubject(toks[x[1]-1].w + " " + text[toks[k].start:toks[x[1]-2].end])
		if subj == "" {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalPreference, Subject: subj, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitUser:
		v, ok := userFact(text, toks, x)
		if !ok {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: v, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitFollow:
		// A way of living the user keeps to: "I strictly follow a Kosher
		// diet". Following a guide or a person is no fact about them.
		if x[1]-x[0] > 6 || !followNouns[singular(toks[x[1]-1].w)] {
			return nil
		}
		v := collapseSpace(strings.TrimRight(text[toks[x[0]].start:toks[x[1]-1].end], ".,;:!?"))
		s := episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: "follows " + v, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitFactAs:
		if x[1]-x[0] > 4 || y[1] <= y[0] {
			return nil
		}
		name := factName(toks, x, y)
		if name == "" {
			return nil
		}
		ye := y[0] + 1
		for ye < y[1] && !valueStops[toks[ye].w] {
			ye++
		}
		val := factValue(text, toks, [2]int{y[0], ye})
		if val == "" || ye-y[0] > 4 || specific[toks[y[0]].w] && ye-y[0] == 1 {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: name, Object: val, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	case emitSwitch:
		from, to := x, y
		if particles[toks[from[0]].w] || to[1] > to[0] && particles[toks[to[0]].w] {
			return nil // "I dropped off the cookies": a phrasal verb, no switch
		}
		fs, _ := normSlot(span(from), false)
		ts, _ := normSlot(span(to), false)
		if fs == "" || ts == "" || fs == ts || placeWord(ts) {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalSwitch, Subject: fs, Object: ts, Polarity: -1},
			episode.Signal{Kind: episode.SignalPreference, Subject: ts, Polarity: 1})
		m.prim = primary{subject: ts, polarity: 1, ok: true}
	case emitSwitchTo:
		ts, _ := normSlot(span(y), false)
		if ts == "" || placeWord(ts) {
			return nil
		}
		out = append(out,
			episode.Signal{Kind: episode.SignalSwitch, Object: ts, Polarity: -1},
			episode.Signal{Kind: episode.SignalPreference, Subject: ts, Polarity: 1})
		m.prim = primary{subject: ts, polarity: 1, ok: true}
	case emitSwitchAway:
		if toks[m.start].w == "stop" && toks[m.start+1].w != "using" && !strings.HasSuffix(toks[x[0]].w, "ing") {
			return nil
		}
		if particles[toks[x[0]].w] {
			return nil // "I dropped off the cookies": a phrasal verb
		}
		if toks[m.start].w == "no" && describedBefore(toks, m.start) {
			// "You are no longer hiding the widget": what the code or the
			// assistant now does, not a habit the user left.
			return nil
		}
		if x[1]-x[0] > 2 && movePreps[toks[x[0]+1].w] && !leadStrip[toks[x[0]].w] {
			// "no longer deploy to Heroku": what is left is Heroku.
			x[0] += 2
		}
		s, ok := pref(episode.SignalSwitch, -1, x, false)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitDecision, emitDecisionNo:
		pol := 1
		if p.emit == emitDecisionNo {
			pol = -1
		}
		if adopt != nil {
			s := episode.Signal{Kind: episode.SignalDecision, Subject: adopt.subject, Object: adopt.object,
				Polarity: pol * adopt.polarity}
			out = append(out, s)
			setPrim(s)
			break
		}
		k := x[0]
		if toks[k].w == "not" {
			pol = -pol
			k++
		}
		s, ok := pref(episode.SignalDecision, pol, [2]int{k, x[1]}, true)
		if !ok {
			return nil
		}
		out = append(out, s)
		setPrim(s)
	case emitFact, emitFactPath:
		if x[1]-x[0] > 6 || y[1] <= y[0] {
			return nil
		}
		val := factValue(text, toks, y)
		if i := strings.Index(val, " ("); i > 0 {
			val = val[:i] // "(see #12)", "(case 8)": an aside, not the value
		}
		if f := strings.Fields(val); len(f) > 1 && preps[strings.ToLower(f[len(f)-1])] {
			return nil // "42 story points per": cut off
		}
		if val == "" {
			return nil
		}
		subj := normSubject(span(x))
		if subj == "" {
			return nil
		}
		head := lastWord(subj)
		// A value is a path, a URL, a number… from its first word on: "is
		// unclear (case 8)" holds a digit but is a state.
		first := strings.Fields(val)[0]
		valueLike := looksLikeValue(first)
		if p.emit == emitFactPath && !(strings.Contains(val, "/") || strings.HasPrefix(val, "~")) {
			return nil
		}
		if strings.HasPrefix(subj, "other ") || strings.HasSuffix(toks[y[0]].w, "ing") && !strings.ContainsAny(toks[y[0]].w, "./") ||
			(repoNouns[subj] || subj == "service" || subj == "app" || subj == "team") && x[1] < len(toks) && toks[x[1]].w == "uses" ||
			subj == "default" || subj == "go" || subj == "go-to" || subj == "favorite" || subj == "preference" || factDeny[head] && !strings.Contains(val, "/") || (!factNouns[head] && !valueLike) {
			return nil
		}
		if !valueLike && (stateWord(toks[y[0]].w) || negators[toks[y[0]].w] || toks[y[0]].w == "too") {
			return nil
		}
		s := episode.Signal{Kind: episode.SignalFact, Subject: subj, Object: val, Polarity: 1}
		out = append(out, s)
		setPrim(s)
	}
	return out
}

// habitVerbs are what "I only …" says a habit with: what one wears, eats,
// buys, watches, plays or travels by.
var habitVerbs = setOf("wear", "eat", "drink", "buy", "purchase", "watch", "read", "play", "cook", "fly", "drive",
	"order", "choose", "pick", "shop", "listen", "stay", "book", "travel", "stream", "consume", "use", "take",
	"ride", "visit", "dine", "cycle", "bike", "walk")

// verbAfterAlways rejects "always" before a past tense or a form of "be"
// ("it has always been", "always was").
func verbAfterAlways(toks []token, x [2]int) bool {
	w := toks[x[0]].w
	switch w {
	case "been", "was", "were", "is", "are", "had", "has", "seems", "seemed", "fails", "works", "returns",
		"forget", "forgets", "miss", "misses", "lose", "loses", "break", "breaks", "mess", "mix", "confuse",
		"struggle", "struggles", "hit", "hits", "crash", "crashes", "get", "gets", "end", "ends", "takes", "take",
		"feel", "feels", "here", "there": // "I always feel like …", "always here to help"
		return false
	}
	return !pastTense(w)
}

// thatClause reports a slot holding a that-clause ("I like that you …"):
// a remark about what happened, not a preference.
func thatClause(toks []token, x [2]int) bool {
	if x[1]-x[0] < 2 {
		return false
	}
	switch toks[x[0]].w {
	case "that", "how", "what", "when", "where", "why", "it's", "it", "this":
		switch toks[x[0]+1].w {
		case "you", "we", "i", "it", "they", "he", "she", "the", "this", "there", "is", "was", "you're", "you've":
			return true
		}
	}
	return false
}

// restricted reports whether slot x is followed by a restrictive relative
// clause ("I avoid restaurants that serve gluten", "never hire people who
// …", no comma before it): the slot alone would claim far more than was said
// ("avoids restaurants"), so no signal is made of it. A clause after a comma
// ("I use pnpm, which is faster") only comments, and the slot stands.
func restricted(toks []token, x [2]int) bool {
	if x[1] <= x[0] || x[1] >= len(toks) || toks[x[1]-1].sep {
		return false
	}
	switch toks[x[1]].w {
	case "that", "who", "whom", "whose":
		return true
	case "where":
		// "use const where possible" says when, not which.
		return !(x[1]+1 < len(toks) && whereWhen[toks[x[1]+1].w])
	}
	return false
}

var whereWhen = setOf("possible", "necessary", "needed", "applicable", "appropriate", "feasible", "practical",
	"relevant", "sensible", "reasonable")
