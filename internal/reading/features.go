// Package reading is engram's learned reading of what a user says: a
// small logistic-regression model that decides whether one sentence of a
// user's message states something lasting (a preference or rule, a fact
// with its value, a correction) or not (a one-off request, a question, a
// plan, a past habit, pasted material), which of those it is, whether it
// holds for the user everywhere or for this project, and whether it says
// "do" or "don't".
//
// Its input is the sentence's lexical features (hashed words and word
// pairs, their shapes, and named cues: negation, modality, person,
// "always/never/from now on", "in this repo/here/our", question and
// condition marks) and, when the sentence embedder is installed, the
// sentence's MiniLM vector; with the vector, the kind is the mean of
// that reading and a hidden-layer one (Deep). The weights are trained from the labelled
// corpus in internal/extract/testdata/speech by `go generate` (see
// ./train); the same corpus always gives the same weights.
package reading

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// Buckets is the number of hashed lexical features.
const Buckets = 1 << 12

// Cue names, each a dense feature after the hashed ones. Their order is
// part of the weights file's format: append, never reorder.
var cueNames = []string{
	"bias",
	"negation",       // not, never, no, don't, without, avoid, stop
	"always",         // always, never, every time, whenever, by default
	"from-now-on",    // from now on, going forward, in future, moving forward
	"first-singular", // I, my, me, I'm, I'd
	"first-plural",   // we, our, us, we're
	"second",         // you, your
	"imperative",     // opens with a verb form
	"please",         // please, pls, kindly
	"modal-rule",     // should, must, need to, have to, has to
	"modal-maybe",    // might, maybe, perhaps, could, probably, consider
	"prefer-verb",    // prefer, like, love, hate, want, rather, favour
	"project-marker", // in this repo, here, this project/service/codebase
	"global-marker",  // in all my projects, everywhere, in general, every project
	"question",       // ends with ?, or opens with a question word
	"conditional",    // opens with if/when/unless/in case
	"past",           // used to, was, were, did, had
	"plan",           // let's, going to, will, plan, try, we'll
	"correction",     // actually, anymore, no longer, instead, switched, moved, now
	"fact-copula",    // is/are/'re/uses/runs on
	"version",        // a version-like token: 16, 3.12, v2
	"path",           // a path or file name
	"code",           // backticks, braces, = or ( in a token
	"short",          // at most 4 words
	"long",           // more than 25 words
	"ack",            // ok, thanks, great, lgtm, sure
	"task-deixis",    // this file, this function, this bug, this one, it, that
	"reported",       // says, said, told, suggested, according
}

// Dim is the number of lexical features: hashed buckets, then cues.
var Dim = Buckets + len(cueNames)

// Feature is one active feature: its index and value.
type Feature struct {
	I int
	V float32
}

// Words splits a sentence into lower-case words: letters, digits and the
// joiners ' - _ . / + # @ inside a word.
func Words(s string) []string {
	ts := Tokens(s)
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.W
	}
	return out
}

// Token is one word of a sentence, lower-cased, with what its case and
// quoting said.
type Token struct {
	W     string
	Upper bool // written with a capital after its first letter, or all caps, or capitalised mid-sentence
	Code  bool // inside backticks or quotes
}

// Tokens splits a sentence into its words (see Words).
func Tokens(s string) []Token {
	var out []Token
	var b strings.Builder
	upper, quoted := false, false
	caps, letters := 0, 0
	flush := func() {
		// Joiners at a word's edges are punctuation, but for a package
		// scope or decorator's "@" ("@nestjs/swagger", "@Prop") and a
		// language's "++" or "#" ("c++", "c#").
		w := strings.TrimRight(strings.TrimLeft(b.String(), "'-_./+#"), "'-_./@")
		if w != "" {
			up := upper && (len(out) > 0 || caps > 1) || caps > 1 && caps == letters
			out = append(out, Token{W: w, Upper: up, Code: quoted})
		}
		b.Reset()
		upper, caps, letters = false, 0, 0
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) {
				upper = true
				caps++
			}
			if unicode.IsLetter(r) {
				letters++
			}
			b.WriteRune(unicode.ToLower(r))
		case r == '’':
			b.WriteByte('\'')
		case strings.ContainsRune("'-_./+#@", r) && b.Len() > 0 && i+1 < len(rs) &&
			(unicode.IsLetter(rs[i+1]) || unicode.IsDigit(rs[i+1])):
			b.WriteRune(r)
		case r == '@' && b.Len() == 0 && i+1 < len(rs) && unicode.IsLetter(rs[i+1]):
			b.WriteRune(r) // "@nestjs/swagger", "@Prop"
		case (r == '+' || r == '#') && b.Len() > 0:
			b.WriteRune(r) // "c++", "c#"
		default:
			flush()
			if r == '`' || r == '"' {
				quoted = !quoted
			}
		}
	}
	flush()
	return out
}

// shape names the form of a technical word, or "".
func shape(w string) string {
	digits, letters := 0, 0
	for _, r := range w {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
		}
	}
	switch {
	case strings.ContainsAny(w, "/") || strings.Count(w, ".") == 1 && letters > 0 && digits == 0 && !strings.HasSuffix(w, "."):
		return "<path>"
	case digits > 0 && letters <= 1:
		return "<num>"
	case digits > 0:
		return "<alnum>"
	}
	return ""
}

func hash(s string) int {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int(h.Sum64() % Buckets)
}

var cueIndex = func() map[string]int {
	m := map[string]int{}
	for i, n := range cueNames {
		m[n] = Buckets + i
	}
	return m
}()

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	negations  = wordSet(`not never no don't dont doesn't isn't aren't won't shouldn't can't cannot nor without avoid stop nothing none n't`)
	always     = wordSet(`always never whenever default usually generally consistently`)
	firstSing  = wordSet(`i my me i'm im i'd i've i'll mine myself`)
	firstPlur  = wordSet(`we our us we're were we've we'll ours`)
	second     = wordSet(`you your you're youre you've yourself`)
	pleaseW    = wordSet(`please pls plz kindly`)
	modalRule  = wordSet(`should must shall`)
	modalMaybe = wordSet(`might maybe perhaps could probably possibly consider considering wondering`)
	preferW    = wordSet(`prefer prefers preferred preference like likes love loves hate hates want wants rather favor favour dislike`)
	qWords     = wordSet(`what why how which who where when whats does do did is are can could would should will shall have has`)
	condW      = wordSet(`if unless suppose assuming`)
	pastW      = wordSet(`was were did had used`)
	planW      = wordSet(`let's lets going will we'll i'll plan planning try trying gonna`)
	corrW      = wordSet(`actually anymore longer instead switched moved migrated dropped replaced changed now scratch wrong nope correction upgraded downgraded renamed`)
	copulaW    = wordSet(`is are 're we're uses use using runs run on lives live`)
	ackW       = wordSet(`ok okay thanks thank great lgtm sure cool nice perfect yes yep yeah awesome`)
	deixisW    = wordSet(`it that this these those`)
	reportedW  = wordSet(`says said told suggested according mentioned recommends recommended`)
	// changeW: the words around what a change retires or installs.
	changeW = wordSet(`off from to about over away instead anymore longer gone dropped ditched replaced switched moved
		migrated upgraded downgraded bumped left now wrong not no is are it's its on with for`)
	// frameW: words of time and framing, never the edge of what a
	// statement is about.
	frameW = wordSet(`now anymore btw fyi lol yesterday today tonight tomorrow recently lately currently
		week weekend month sprint days ago pls plz thanks asap`)
	taskNouns = wordSet(`file function bug test line one error method component page issue pr commit branch change`)
	verbsLead = wordSet(`use add write run keep make put avoid never always stick prefer default name format put create return
		use include remove follow check test build commit push deploy document comment wrap handle log validate split import export
		place store call pin lint ensure do don't dont`)
)

// Features returns the active features of one sentence, sorted by index
// with no repeats. vec, when not nil, is appended as dense features after
// the lexical ones (see Model.Dim).
func Features(sentence string) []Feature {
	return FeaturesIn(sentence, sentence)
}

// FeaturesIn returns the active features of one clause of sentence (see
// Clauses): the clause's own words and cues, and, when the clause is not
// the whole sentence, the cues of the sentence around it as hashed
// context features ("in this repo" in the next clause, a question mark
// at the sentence's end).
func FeaturesIn(clause, sentence string) []Feature {
	ws := Words(clause)
	seen := map[int]float32{}
	add := func(i int, v float32) { seen[i] += v }
	cue := func(name string) { add(cueIndex[name], 1) }
	cue("bias")
	prev := "^"
	for i, w := range ws {
		add(hash("u:"+w), 1)
		if sh := shape(w); sh != "" {
			add(hash("u:"+sh), 1)
		}
		add(hash("b:"+prev+" "+w), 1)
		if i == 0 {
			add(hash("f:"+w), 1)
		}
		prev = w
	}
	add(hash("b:"+prev+" $"), 1)
	for _, c := range cues(clause, ws) {
		cue(c)
	}
	if strings.TrimSpace(clause) != strings.TrimSpace(sentence) {
		add(hash("x:part"), 1)
		for _, c := range cues(sentence, Words(sentence)) {
			add(hash("x:"+c), 1)
		}
	}
	out := make([]Feature, 0, len(seen))
	for i, v := range seen {
		out = append(out, Feature{I: i, V: v})
	}
	sortFeatures(out)
	return out
}

// cues returns the names of the cues (cueNames) text, of words ws, has.
func cues(text string, ws []string) []string {
	var out []string
	cue := func(name string) { out = append(out, name) }
	// one cue per version-like or path-like word, as they come
	for _, w := range ws {
		switch shape(w) {
		case "<num>", "<alnum>":
			cue("version")
		case "<path>":
			cue("path")
		}
	}
	has := func(set map[string]bool) bool {
		for _, w := range ws {
			if set[w] {
				return true
			}
		}
		return false
	}
	phrase := " " + strings.Join(ws, " ") + " "
	in := func(ps ...string) bool {
		for _, p := range ps {
			if strings.Contains(phrase, " "+p+" ") {
				return true
			}
		}
		return false
	}
	if has(negations) || in("no longer") {
		cue("negation")
	}
	if has(always) || in("every time", "by default", "each time") {
		cue("always")
	}
	if in("from now on", "going forward", "moving forward", "in future", "in the future", "from here on", "for future reference") {
		cue("from-now-on")
	}
	if has(firstSing) {
		cue("first-singular")
	}
	if has(firstPlur) {
		cue("first-plural")
	}
	if has(second) {
		cue("second")
	}
	if len(ws) > 0 && verbsLead[ws[0]] {
		cue("imperative")
	}
	if has(pleaseW) {
		cue("please")
	}
	if has(modalRule) || in("need to", "needs to", "have to", "has to") {
		cue("modal-rule")
	}
	if has(modalMaybe) {
		cue("modal-maybe")
	}
	if has(preferW) {
		cue("prefer-verb")
	}
	if in("in this repo", "this repo", "this project", "this codebase", "this service", "this app", "here", "in this repository") {
		cue("project-marker")
	}
	if in("all my projects", "everywhere", "in general", "every project", "all projects", "any project", "all my repos") {
		cue("global-marker")
	}
	if t := strings.TrimSpace(text); strings.HasSuffix(t, "?") || len(ws) > 0 && qWords[ws[0]] && len(ws) > 1 && (second[ws[1]] || firstPlur[ws[1]] || ws[1] == "i" || ws[1] == "it" || ws[1] == "there") {
		cue("question")
	}
	if len(ws) > 0 && (condW[ws[0]] || ws[0] == "when" && !strings.HasSuffix(strings.TrimSpace(text), "?")) || in("in case") {
		cue("conditional")
	}
	if has(pastW) || in("used to") {
		cue("past")
	}
	if has(planW) || in("going to") {
		cue("plan")
	}
	if has(corrW) || in("no longer", "not anymore", "any more") {
		cue("correction")
	}
	if has(copulaW) {
		cue("fact-copula")
	}
	if strings.ContainsAny(text, "`{}()=<>[]") {
		cue("code")
	}
	if len(ws) <= 4 {
		cue("short")
	}
	if len(ws) > 25 {
		cue("long")
	}
	if len(ws) > 0 && ackW[ws[0]] {
		cue("ack")
	}
	for i := 0; i+1 < len(ws); i++ {
		if deixisW[ws[i]] && taskNouns[ws[i+1]] {
			cue("task-deixis")
			break
		}
	}
	if has(reportedW) {
		cue("reported")
	}
	return out
}

func sortFeatures(fs []Feature) {
	// insertion sort: a sentence has a few dozen features
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].I < fs[j-1].I; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}
