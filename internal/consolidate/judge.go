package consolidate

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
)

// Relation is how one episode bears on one belief.
type Relation string

// The four relations of the classification.
const (
	Supports    Relation = "SUPPORTS"
	Contradicts Relation = "CONTRADICTS"
	Partial     Relation = "PARTIAL"
	Irrelevant  Relation = "IRRELEVANT"
)

// Predicates of the beliefs the local judge makes. An LLM may use others.
const (
	PredPrefers = "prefers"
	PredAvoids  = "avoids"
	PredIs      = "is"
)

// MaxStatementWords bounds a belief statement.
const MaxStatementWords = 30

// Group is the episodes a synthesis or a classification works on: one
// cluster, or one side of a split.
type Group struct {
	Scope       string
	Project     string
	ProjectPath string
	Episodes    []episode.Episode
}

// Candidate is a belief a judge proposes for some episodes of a group.
type Candidate struct {
	Statement string
	Subject   string
	Predicate string
	Context   string
	Timeframe string
	// Episodes are the episodes of the group the candidate speaks for.
	Episodes []episode.Episode
}

// Judge synthesizes candidate beliefs and classifies episodes against
// beliefs. The Local judge works from the extractor's signals; the LLM
// judge asks a model. Neither decides a destructive change: the gates do.
type Judge interface {
	Name() string
	// Synthesize proposes beliefs for a group: the LLM judge at most one,
	// the local judge one per subject the group's signals speak of.
	Synthesize(ctx context.Context, g Group) ([]Candidate, error)
	// Classify says how an episode bears on a belief.
	Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (Relation, error)
}

// Local is the offline judge. A preference, avoidance, switch, decision or
// correction about a subject gives a "prefers"/"avoids" belief about that
// subject; a fact "S is O" gives an "is" belief. An episode supports a
// belief when its signal about the same subject agrees, contradicts it when
// the polarity (or, for a fact, the value) differs, and is partial when it
// disagrees only for a named purpose ("not bun for production") or says
// both.
type Local struct{}

// Name implements Judge.
func (Local) Name() string { return "local" }

// sigClass groups signals that can bear on each other.
const (
	classPref = "pref"
	classFact = "fact"
)

// claim is a signal reduced to what beliefs compare.
type claim struct {
	subject  string
	class    string
	polarity int    // +1 / -1 for classPref
	object   string // purpose for classPref, value for classFact
}

// claimOf reduces a signal; ok is false for signals no belief can use.
func claimOf(s episode.Signal) (claim, bool) {
	subj := headTerm(normTerm(s.Subject))
	if subj == "" || dangling(subj) || lexicon.NotAThing(asWritten(s.Text, s.Subject)) != "" || lexicon.NotAThing(asWritten(s.Text, subj)) != "" {
		// Not a thing a lasting belief can be about: "User prefers is.",
		// "User prefers Option 2." (a one-off choice), "User avoids fix
		// anything.". A subject that names the speakers is one ("don't
		// recap what you changed", "never start the dev server yourself",
		// "don't remove my comments"): refusing those dropped 13 right
		// claims and 8 wrong ones on the speech corpus's train split (8
		// and 3 on validation).
		return claim{}, false
	}
	pol := 1
	if s.Polarity < 0 {
		pol = -1
	}
	switch s.Kind {
	case episode.SignalPreference, episode.SignalDecision, episode.SignalCorrection:
		return claim{subject: subj, class: classPref, polarity: pol, object: purpose(s.Object)}, true
	case episode.SignalAvoid:
		return claim{subject: subj, class: classPref, polarity: -1, object: purpose(s.Object)}, true
	case episode.SignalSwitch:
		// "switch from X to Y": X is what is left behind; Y comes with a
		// preference signal of its own.
		return claim{subject: subj, class: classPref, polarity: -1}, true
	case episode.SignalFact:
		if obj := normTerm(s.Object); obj != "" && !dangling(obj) && !speakerWords(obj) {
			return claim{subject: subj, class: classFact, polarity: 1, object: obj}, true
		}
	}
	return claim{}, false
}

// claimsOf returns an episode's claims, one per (subject, class, polarity,
// object).
func claimsOf(e *episode.Episode) []claim {
	var out []claim
	for _, s := range e.Signals {
		if c, ok := claimOf(s); ok && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// normTerm lower-cases and trims a subject or object and folds inner
// whitespace.
func normTerm(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.Trim(s, " \t\n.,;:!?\"'`"))), " ")
}

// headTerm drops a trailing place from a subject: "bun in the workflow",
// "bun in dockerfile" and "tab in config file" are about bun and tabs. The
// place is where the statement was made, not what it is about.
//
// A preposition after a participle or a gerund opens no place but its
// complement ("clothing made from wool", "purchasing from breeders"): the
// subject keeps it whole rather than end on "made" or "purchasing".
//
// A subject with a relative clause ("restaurants that serve gluten",
// "dining in places that are known for their wine lists") is kept whole:
// the clause restricts the noun before it, places and all.
func headTerm(s string) string {
	if relativeSubject(s) {
		return s
	}
	for _, p := range []string{" in ", " inside ", " within ", " across ", " on ", " at ", " from "} {
		i := strings.Index(s, p)
		if i <= 0 {
			continue
		}
		if w := lastWord(s[:i]); !participle(w) && !strings.HasSuffix(w, "ing") && !prepVerbs[w] {
			s = s[:i]
		}
	}
	return s
}

// prepVerbs take their complement after a preposition: "participate in
// water activities" is not about participating.
var prepVerbs = map[string]bool{"participate": true, "engage": true, "dine": true, "eat": true, "stay": true,
	"live": true, "invest": true, "travel": true, "swim": true, "camp": true, "shop": true, "sleep": true,
	"sit": true, "believe": true, "specialize": true, "specialise": true, "focus": true, "indulge": true,
	"partake": true, "volunteer": true, "compete": true, "walk": true, "hike": true, "play": true,
	"work": true, "train": true, "exercise": true, "ride": true, "drive": true, "fly": true, "vacation": true}

// lastWord is the last space-separated word of s.
func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }

// purpose is a preference's purpose as a claim keeps it: none when it is
// said in the speaker's own words ("for indentation in my own code").
func purpose(obj string) string {
	if obj = normTerm(obj); speakerWords(obj) {
		return ""
	}
	return obj
}

// speakerWords reports a phrase that speaks in the first or second person
// ("proud of how far i've come", "take care of yourself"): said of "User"
// it reads wrong or means another person, so no belief is made of it.
func speakerWords(s string) bool {
	for _, w := range strings.Fields(s) {
		switch strings.Trim(w, ".,;:!?\"'()") {
		case "i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "you", "you're", "you've", "you'd",
			"you'll", "your", "yours", "yourself", "yourselves":
			return true
		}
	}
	return false
}

// participle reports a word that reads as a past participle ("made",
// "based", "cooked"), which a subject cannot end on.
func participle(w string) bool {
	switch w {
	case "made", "built", "written", "grown", "worn", "done", "known", "held", "sold", "kept", "found", "shown":
		return true
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed")
}

// dangling reports a subject or value that ends where its phrase cannot:
// on a preposition that lost its complement ("story points per"), or on a
// pronoun whose referent was in the conversation ("learning with them",
// "stash it"). No belief is made of it: a fragment would read as a claim
// the user never made. A subject ending on a participle ("clothing made")
// is not refused any more: on the speech corpus that refusal dropped 17
// right claims and 7 wrong ones (train; 4 and 3 on validation), since a
// participle ends many a rule ("tests table driven", "anything generated").
func dangling(subj string) bool {
	w := lastWord(subj)
	switch w {
	case "per", "of", "to", "for", "with", "from", "by", "about", "like", "such", "than", "into", "onto", "via",
		"including", "involving", "containing", "using", "regarding",
		// A pronoun names what only the conversation knew ("is even
		// learning with them").
		"them", "it", "him", "her", "this", "that", "these", "those", "there":
		return true
	}
	return false
}

// relativeSubject reports a subject that holds a relative clause.
func relativeSubject(s string) bool {
	return strings.Contains(s, " that ") || strings.Contains(s, " who ") || strings.Contains(s, " where ")
}

// beliefClaim is what a belief claims, in the terms of claimOf; ok is
// false for a belief whose predicate the local judge does not know.
func beliefClaim(b *belief.Belief) (claim, bool) {
	subj := headTerm(normTerm(b.Subject))
	if subj == "" {
		return claim{}, false
	}
	ctx := normTerm(b.Context)
	if ctx == "general" {
		ctx = ""
	}
	p := normTerm(b.Predicate)
	switch {
	case p == PredIs:
		return claim{subject: subj, class: classFact, polarity: 1, object: ctx}, ctx != ""
	case p == PredAvoids || strings.Contains(p, "avoid") || strings.Contains(p, "dislike") || strings.HasPrefix(p, "not ") ||
		strings.HasPrefix(p, "does not") || strings.HasPrefix(p, "doesn't") || strings.HasPrefix(p, "stopped"):
		return claim{subject: subj, class: classPref, polarity: -1, object: ctx}, true
	case p == PredPrefers || strings.Contains(p, "prefer") || strings.Contains(p, "use") || strings.Contains(p, "like") ||
		strings.Contains(p, "want") || strings.Contains(p, "chose") || strings.Contains(p, "decided"):
		return claim{subject: subj, class: classPref, polarity: 1, object: ctx}, true
	}
	return claim{}, false
}

// Classify implements Judge.
func (Local) Classify(_ context.Context, b *belief.Belief, e *episode.Episode) (Relation, error) {
	return classifyLocal(b, e), nil
}

func classifyLocal(b *belief.Belief, e *episode.Episode) Relation {
	if selfReference(b, e) {
		return Irrelevant
	}
	bc, ok := beliefClaim(b)
	if !ok {
		return Irrelevant
	}
	agree, disagree, partial := false, false, false
	for _, c := range claimsOf(e) {
		if c.subject != bc.subject || c.class != bc.class {
			continue
		}
		switch bc.class {
		case classFact:
			if c.object == bc.object {
				agree = true
			} else if bc.subject != userSubject {
				disagree = true
			}
		case classPref:
			switch {
			case c.polarity == bc.polarity:
				agree = true
			case c.object != "" && c.object != bc.object:
				// Opposite, but only for a purpose the belief does not
				// name: it holds in some contexts, not in this one.
				partial = true
			default:
				disagree = true
			}
		}
	}
	switch {
	case agree && (disagree || partial), partial:
		return Partial
	case agree:
		return Supports
	case disagree:
		return Contradicts
	}
	return Irrelevant
}

// selfReference reports whether an episode merely repeats the belief's own
// statement (the model quoting a belief it was shown): that is the belief
// echoing itself, not new evidence.
func selfReference(b *belief.Belief, e *episode.Episode) bool {
	st := strings.ToLower(strings.TrimRight(strings.TrimSpace(b.Statement), "."))
	if utf8.RuneCountInString(st) < 12 {
		return false
	}
	return strings.Contains(strings.ToLower(e.Summary), st) || strings.Contains(strings.ToLower(e.Context), st)
}

// Synthesize implements Judge: one candidate per (subject, kind of claim)
// that the group's signals speak of, biggest first. The candidate states
// the majority view (polarity, or value for a fact); its Episodes are every
// episode of the group with a claim about that subject, so that the
// minority becomes contradicting evidence.
func (Local) Synthesize(_ context.Context, g Group) ([]Candidate, error) {
	type key struct{ subject, class string }
	type tally struct {
		eps     []episode.Episode
		pos     int
		neg     int
		objects map[string]int // per majority-side value
		lastPol int
		order   int
	}
	groups := map[key]*tally{}
	for _, e := range g.Episodes {
		seen := map[key]bool{}
		for _, c := range claimsOf(&e) {
			k := key{c.subject, c.class}
			t := groups[k]
			if t == nil {
				t = &tally{objects: map[string]int{}, order: len(groups)}
				groups[k] = t
			}
			if !seen[k] {
				seen[k] = true
				t.eps = append(t.eps, e)
			}
			if c.polarity > 0 {
				t.pos++
			} else {
				t.neg++
			}
			t.lastPol = c.polarity
			t.objects[objKey(c.polarity, c.object)]++
		}
	}
	var out []Candidate
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		ta, tb := groups[a], groups[b]
		return cmp.Or(cmp.Compare(len(tb.eps), len(ta.eps)), cmp.Compare(ta.order, tb.order))
	})
	for _, k := range keys {
		t := groups[k]
		c := Candidate{Subject: k.subject, Timeframe: belief.TimeCurrent, Episodes: t.eps}
		switch k.class {
		case classFact:
			c.Predicate = PredIs
			c.Context = majorityObject(t.objects, 1, len(t.eps))
			if c.Context == "" {
				continue
			}
		default:
			pol := 1
			if t.neg > t.pos || (t.neg == t.pos && t.lastPol < 0) {
				pol = -1
			}
			c.Predicate = PredPrefers
			if pol < 0 {
				c.Predicate = PredAvoids
			}
			// A purpose becomes the context when most claims of the
			// majority side name the same one.
			c.Context = majorityObject(t.objects, pol, max(t.pos, t.neg))
		}
		c.Statement = Render(g.Scope, g.Project, c.Subject, c.Predicate, c.Context)
		out = append(out, c)
	}
	return out, nil
}

func objKey(pol int, obj string) string {
	if pol > 0 {
		return "+" + obj
	}
	return "-" + obj
}

// majorityObject returns the object named by more than half of n claims of
// polarity pol, or "".
func majorityObject(objects map[string]int, pol int, n int) string {
	best, bestN := "", 0
	for k, v := range objects {
		if k[1:] == "" || (k[0] == '+') != (pol > 0) {
			continue
		}
		if v > bestN || (v == bestN && k[1:] < best) {
			best, bestN = k[1:], v
		}
	}
	if bestN*2 > n {
		return best
	}
	return ""
}

// Render phrases a belief the local judge made: "User prefers bun for
// scripts.", "Project api avoids testify.", "In project api, the port is
// 8080."
func Render(scope, project, subject, predicate, context string) string {
	subject = clipPhrase(subject, 10)
	if predicate == PredIs && subject == "user" {
		context = clipPhrase(context, 14) // the fact itself: "is passionate about …"
	} else {
		context = clipPhrase(context, 8)
	}
	var s string
	switch {
	case predicate == PredIs && subject == "user":
		// A fact about the user keeps its verb: "User is on macOS.",
		// "User has a severe peanut allergy."
		s = "user " + context
	case predicate == PredIs:
		s = subject + " is " + context
		if scope == episode.ScopeProject && project != "" {
			s = "In project " + clipWords(project, 4) + ", " + s
		}
	default:
		who := "User"
		if scope == episode.ScopeProject && project != "" {
			who = "Project " + clipWords(project, 4)
		}
		s = who + " " + predicate + " " + verbPhrase(predicate, subject)
		if context != "" {
			s += " for " + context
		}
	}
	s = clipWords(s, MaxStatementWords)
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:] + "."
}

// verbPhrase gives a subject that opens with a verb the form its
// predicate takes: "User prefers to eat organic produce.", "User avoids
// wearing heels." (not "User avoids wear heels."). Only the verbs of
// gerunds, a closed list: a subject that opens with a noun spelt like a
// verb stays as it is.
func verbPhrase(predicate, subject string) string {
	first, rest, _ := strings.Cut(subject, " ")
	g, ok := gerunds[strings.ToLower(first)]
	if !ok || rest == "" {
		return subject
	}
	switch predicate {
	case PredPrefers:
		return "to " + subject
	case PredAvoids:
		return g + " " + rest
	}
	return subject
}

// gerunds of the verbs a habit opens with ("I never wear heels", "I only
// eat organic produce"), leaving out those that open a noun phrase as often
// ("go modules", "commit messages", "read replicas", "order of imports",
// "sleep schedule", "travel insurance").
var gerunds = map[string]string{
	"wear": "wearing", "eat": "eating", "drink": "drinking", "buy": "buying", "purchase": "purchasing",
	"watch": "watching", "play": "playing", "cook": "cooking", "drive": "driving", "choose": "choosing",
	"shop": "shopping", "listen": "listening", "stay": "staying", "consume": "consuming", "ride": "riding",
	"visit": "visiting", "dine": "dining", "join": "joining", "participate": "participating",
	"attend": "attending", "take": "taking", "learn": "learning", "adopt": "adopting", "keep": "keeping",
	"spend": "spending",
}

// clipPhrase keeps the first n words of s, and no function word at the
// cut's end: "passionate about helping people and making a positive
// impact" clipped to 8 words ends on "making", not on "a".
func clipPhrase(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	f = f[:n]
	for len(f) > 1 && clipEnds[strings.ToLower(f[len(f)-1])] {
		f = f[:len(f)-1]
	}
	return strings.Join(f, " ")
}

var clipEnds = map[string]bool{"a": true, "an": true, "the": true, "and": true, "or": true, "but": true, "of": true,
	"to": true, "for": true, "with": true, "in": true, "on": true, "at": true, "about": true, "by": true,
	"from": true, "my": true, "our": true, "your": true, "their": true, "his": true, "her": true, "its": true}

// clipWords keeps the first n words of s.
func clipWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.Join(f, " ")
}

// Claim kinds, as the statement corpus labels them.
const (
	ClaimPreference = "pref"
	ClaimFact       = "fact"
	ClaimCorrection = "corr"
)

// Claim is one belief an episode's signals would yield, in the terms of
// the local judge: what it is about, which way, and where it holds.
type Claim struct {
	Kind     string // ClaimPreference, ClaimFact or ClaimCorrection
	Subject  string
	Polarity int    // +1 / -1 (a fact is +1)
	Value    string // a fact's value
	Global   bool
	// Statement is how a stated belief of it reads: the user's clause
	// (Phrase), or rendered when there is none.
	Statement string
}

// Claims returns the beliefs e's signals would yield, one per (kind,
// subject, polarity, value, scope). A preference-like claim of an
// exchange that corrects or switches is a correction.
func Claims(e *episode.Episode) []Claim {
	corr := false
	for _, s := range e.Signals {
		if s.Kind == episode.SignalCorrection || s.Kind == episode.SignalSwitch {
			corr = true
		}
	}
	var out []Claim
	for _, s := range e.Signals {
		c, ok := claimOf(s)
		if !ok {
			continue
		}
		k := Claim{Kind: ClaimPreference, Subject: c.subject, Polarity: c.polarity, Global: s.Global}
		pred, ctxt := PredPrefers, ""
		switch {
		case c.class == classFact:
			k.Kind, k.Value = ClaimFact, c.object
			pred, ctxt = PredIs, c.object
		case corr:
			k.Kind = ClaimCorrection
		}
		if c.class != classFact && c.polarity < 0 {
			pred = PredAvoids
		}
		if slices.ContainsFunc(out, func(o Claim) bool { o.Statement = ""; return o == k }) {
			continue
		}
		display := asWritten(s.Text, c.subject)
		k.Statement = cmp.Or(saidOf(s, c, display), Render(episode.ScopeGlobal, "", cmp.Or(display, c.subject), pred, ctxt))
		out = append(out, k)
	}
	return out
}
