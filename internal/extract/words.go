package extract

import (
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
)

// Words to subjects: normSubject and normSlot, and the word lists and
// tests they use.

// Subject normalisation. The same preference said in different words must
// end up with the same Subject, so normSubject:
//
//   - lower-cases, drops quotes, brackets and edge punctuation and the
//     possessive 's; an inline code span is one opaque word
//     ("`go test -race ./...`");
//   - rewrites a few aliases (golang → go, postgresql → postgres, k8s →
//     kubernetes, nodejs → node …);
//   - splits hyphenated plain words ("table-driven" → "table driven") and
//     then re-hyphenates the compound-adjective suffixes "driven", "based",
//     "first", "free", "safe", "style", "aware", "friendly", "specific",
//     "native", "agnostic", "oriented", "centric", so "table driven tests"
//     and "table-driven tests" both become "table-driven test" while
//     "pre-commit" and "pre commit" both become "pre commit";
//   - drops leading determiners, possessives, pronouns, "to" and light
//     verbs ("the", "my", "our", "use", "using", "write", "run", "add",
//     "go with", "stick with" …: "always write table driven tests" is about
//     "table-driven test"), and trailing fillers and scope phrases
//     ("please", "for now", "anymore", "instead", "by default", "in this
//     repo", "in all my projects", "last month" …), and articles anywhere
//     ("change the API" = "change API");
//   - keeps at most 6 words: the core noun phrase (an over-long subject is
//     cut first before examples — "like", "such as" —, then at its first
//     preposition, then after 6 words);
//   - singularises the head words (the last one and any before a
//     preposition) with a few safe rules and exceptions ("tests" → "test",
//     "dependencies" → "dependency", "postgres" and "redis" stay);
//   - returns "" for pronouns and fragments ("it", "that", "how you did
//     it"), which make no signal.
func normSubject(s string) string {
	return canon(stripTrailing(splitWords(s)))
}

// normSlot normalises a slot; with purpose, a "for Y" tail becomes the
// Object ("we use table-driven tests for Go").
func normSlot(s string, purpose bool) (subj, obj string) {
	words := stripTrailing(splitWords(s))
	if purpose {
		for i := 1; i < len(words)-1; i++ {
			if words[i] == "for" {
				obj = canon(words[i+1:])
				words = words[:i]
				break
			}
			if words[i] == "with" && scopeDets[words[i+1]] {
				// "ESLint with the Airbnb config": the detail goes.
				words = words[:i]
				break
			}
		}
	}
	if len(words) > 1 && (words[0] == "their" || words[0] == "his" || words[0] == "her") {
		return "", "" // someone else's: "I love their work", "his music"
	}
	return canon(words), obj
}

// maxSubjectWords and maxSubjectBytes bound a Subject or Object.
const (
	maxSubjectWords = 6
	// maxQualifiedWords bounds a subject kept whole for its "with" or
	// "without" qualifier.
	maxQualifiedWords = 9
	maxSubjectBytes   = 80
)

// splitWords lower-cases s and splits it into clean words.
func splitWords(s string) []string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "\"*") || strings.Contains(s, "\u201c") || strings.Contains(s, "\u201d") {
		s = quoteMarks.Replace(s)
	}
	if strings.Contains(s, "\u2019") {
		s = strings.ReplaceAll(s, "\u2019", "'")
	}
	words := make([]string, 0, 8)
	if strings.Contains(s, "`") {
		// Code is one opaque word: `go test -race ./...`.
		for i, seg := range strings.Split(s, "`") {
			if i%2 == 1 {
				if code := strings.Join(strings.Fields(seg), " "); code != "" {
					words = append(words, code)
				}
				continue
			}
			words = appendWords(words, seg)
		}
		return words
	}
	return appendWords(words, s)
}

var quoteMarks = strings.NewReplacer("\"", " ", "*", " ", "\u201c", " ", "\u201d", " ")

// appendWords appends the clean words of prose s to words.
func appendWords(words []string, s string) []string {
	for _, f := range strings.Fields(s) {
		f = trimRightBytes(f, ".,;:!?)]}>'")
		f = trimLeftBytes(f, "([{<'")
		if len(f) > 4 && strings.HasSuffix(f, "'s") && f != "that's" && f != "let's" && f != "there's" && f != "what's" && f != "here's" {
			f = f[:len(f)-2] // possessive
		}
		if f == "" || f == "-" || f == "&" {
			continue
		}
		if a, ok := aliases[f]; ok {
			f = a
		}
		if plainHyphenated(f) && !prepCompound(f) {
			for _, part := range strings.Split(f, "-") {
				if part != "" {
					words = append(words, part)
				}
			}
			continue
		}
		words = append(words, f)
	}
	return words
}

// prepCompound reports a hyphenated word that opens with a preposition
// ("in-person", "off-site", "up-to-date"): split, it would read as a
// phrase of place cut from its noun ("traditional in person classroom
// settings" is about the settings, not "traditional").
func prepCompound(w string) bool {
	first, _, _ := strings.Cut(w, "-")
	switch first {
	case "in", "on", "off", "up", "out", "over", "under", "at", "by", "to":
		return true
	}
	return false
}

// plainHyphenated reports a word of letters joined by hyphens.
func plainHyphenated(w string) bool {
	if !strings.Contains(w, "-") {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c == '-') {
			return false
		}
	}
	return true
}

func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

var aliases = map[string]string{
	"golang": "go", "postgresql": "postgres", "nodejs": "node", "node.js": "node", "k8s": "kubernetes",
	"reactjs": "react", "react.js": "react", "vuejs": "vue", "vue.js": "vue", "yml": "yaml",
	"e-mail": "email", "py.test": "pytest", "favourite": "favorite", "colour": "color",
}

// trailing fillers and scope phrases, removed from the end of a slot.
var trailPhrases = [][]string{
	{"please"}, {"pls"}, {"plz"}, {"thanks"}, {"thank", "you"}, {"for", "now"}, {"for", "the", "time", "being"},
	{"instead"}, {"anymore"}, {"any", "more"}, {"again"}, {"ever"}, {"at", "all"}, {"too"}, {"as", "well"},
	{"also"}, {"by", "default"}, {"if", "possible"}, {"when", "possible"}, {"whenever", "possible"},
	{"where", "possible"}, {"wherever", "possible"}, {"going", "forward"}, {"moving", "forward"},
	{"from", "now", "on"}, {"from", "here", "on"}, {"from", "here", "on", "out"}, {"in", "the", "future"},
	{"in", "future"}, {"in", "general"}, {"generally"}, {"always"}, {"everywhere"}, {"globally"}, {"here"},
	{"in", "here"}, {"ok"}, {"okay"}, {"though"}, {"either"}, {"only"}, {"all", "the", "time"},
	{"every", "time"}, {"whenever", "you", "can"}, {"if", "you", "can"}, {"then"}, {"now"}, {"right", "now"},
	{"from", "now"}, {"personally"}, {"really"}, {"please", "thanks"}, {"thx"}, {"ty"},
	{"btw"}, {"fyi"}, {"anyway"}, {"anyways"}, {"tbh"}, {"imo"},
	{"last", "week"}, {"last", "month"}, {"last", "year"}, {"last", "time"}, {"last", "sprint"},
	{"this", "week"}, {"this", "month"}, {"this", "year"}, {"yesterday"}, {"today"}, {"recently"},
	{"a", "while", "ago"}, {"ago"}, {"lately"}, {"earlier"}, {"tonight"}, {"tomorrow"},
}

// scopePreps start a trailing scope phrase ("in this repo", "for all my
// projects", "across projects").
var (
	scopePreps = setOf("in", "for", "across", "on", "within", "throughout")
	scopeDets  = setOf("this", "the", "all", "every", "any", "each", "these", "my", "our", "your")
)

// trailByLast indexes trailPhrases by their last word.
var trailByLast = func() map[string][][]string {
	m := map[string][][]string{}
	for _, ph := range trailPhrases {
		last := ph[len(ph)-1]
		m[last] = append(m[last], ph)
	}
	for _, phs := range m {
		// Longest first: "in here" before "here".
		slices.SortStableFunc(phs, func(a, b []string) int { return len(b) - len(a) })
	}
	return m
}()

// stripTrailing removes trailing fillers and scope phrases.
func stripTrailing(words []string) []string {
	for changed := true; changed && len(words) > 0; {
		changed = false
		for _, ph := range trailByLast[words[len(words)-1]] {
			if len(ph) <= len(words) && equalWords(words[len(words)-len(ph):], ph) {
				words = words[:len(words)-len(ph)]
				changed = true
				break
			}
		}
		if changed || len(words) < 2 {
			continue
		}
		// [prep] [det…] scope-noun
		last := len(words) - 1
		if !scopeNouns[words[last]] || words[last] == "code" && last > 0 && !scopeDets[words[last-1]] {
			continue
		}
		k := last
		for k > 0 && scopeDets[words[k-1]] {
			k--
		}
		if words[k] == "the" && k+1 == last && !repoNouns[words[last]] {
			continue // "for the CLI" is a purpose, "in the repo" a scope
		}
		if k > 0 && scopePreps[words[k-1]] && k < last {
			words = words[:k-1]
			changed = true
		} else if k > 0 && scopePreps[words[k-1]] && words[last] != "code" {
			words = words[:k-1] // "in projects"
			changed = true
		}
	}
	return words
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Leading words removed from a subject: determiners, pronouns and light
// verbs, and two-word light verbs.
var (
	leadStrip = setOf("the", "a", "an", "my", "our", "your", "their", "its", "this", "that", "these",
		"those", "some", "any", "all", "more", "only", "just", "always", "also", "really", "to", "you", "we",
		"i", "ever", "please", "even", "still", "actually", "definitely", "usually", "generally", "strictly",
		"be", "use", "using", "uses", "write", "writing", "run", "running", "add", "adding", "choose",
		"choosing", "pick", "picking", "apply", "applying", "follow", "following", "prefer", "preferring",
		"include", "including", "have", "having", "adopt", "adopting", "try", "trying", "do", "doing",
		"stick", "sticking", "go", "going", "rely", "relying", "depend", "depending", "with", "on",
		"utilize", "utilise", "employ", "introduce", "introducing", "import", "importing", "install",
		"installing", "keep", "keeping", "want", "wants", "put", "putting", "create", "creating", "touch",
		"touching")
	// leadOnlyBefore are stripped only when followed by these words ("go
	// with X", "stick to X", "rely on X"); "go" alone is a language.
	leadPairs = map[string]map[string]bool{
		"go":        setOf("with", "for"),
		"going":     setOf("with", "for"),
		"stick":     setOf("with", "to"),
		"sticking":  setOf("with", "to"),
		"rely":      setOf("on"),
		"relying":   setOf("on"),
		"depend":    setOf("on"),
		"depending": setOf("on"),
		"keep":      setOf("using", "to", "with"),
		"use":       setOf("of"),
		"form":      setOf("of"),
		"forms":     setOf("of"),
		"kind":      setOf("of"),
		"kinds":     setOf("of"),
		"type":      setOf("of"),
		"types":     setOf("of"),
		"sort":      setOf("of"),
		"sorts":     setOf("of"),
		"keeping":   setOf("using", "to", "with"),
	}
)

// compoundSuffixes are re-joined to the previous word with a hyphen.
var compoundSuffixes = setOf("driven", "based", "first", "free", "safe", "style", "aware", "friendly",
	"specific", "native", "agnostic", "oriented", "centric")

// preps cut an over-long subject and mark the head word before them.
var preps = setOf("in", "on", "at", "with", "for", "from", "by", "into", "before", "after", "during",
	"without", "within", "inside", "across", "over", "under", "to", "via", "per", "when", "while")

// exampleWords introduce examples, cut first from a long subject.
var exampleWords = setOf("like", "such", "including", "e.g", "e.g.", "eg", "i.e", "i.e.", "especially", "say",
	"particularly", "notably")

// junkSubjects make no subject on their own.
var junkSubjects = setOf("it", "that", "this", "these", "those", "them", "they", "one", "ones", "something",
	"anything", "everything", "nothing", "stuff", "thing", "things", "what", "which", "who", "how", "why",
	"so", "there", "here", "same", "you", "me", "us", "him", "her", "yes", "no", "ok", "okay", "it's",
	"that's", "lot", "more", "less", "much", "many", "way", "idea", "better", "best", "good", "bad", "well",
	"sure", "fine", "again", "too", "now", "then", "not", "never", "always", "mind", "please", "thanks",
	"and", "or", "but", "to", "for", "with", "of", "in", "on", "at", "a", "an", "the", "i", "we", "me",
	"myself", "yourself", "itself", "either", "neither", "both", "other", "others", "another", "all",
	"fewer", "larger", "smaller", "bigger", "shorter", "longer", "simpler", "faster", "slower", "newer",
	"older", "different", "similar", "as", "like", "usual",
	// Verbs of perceiving, knowing and helping say no taste alone ("that's
	// what I like to hear", "I love to help"), nor does a particle.
	"hear", "see", "say", "know", "think", "help", "off", "out", "up")

// particles make a phrasal verb of the verb before them ("drop off").
var particles = setOf("off", "out", "up", "by", "over", "back", "down", "away", "in")

// timePhrases say how often or when, not what: "a job I enjoy every day".
var timePhrases = setOf("every day", "everyday", "every week", "every time", "all time", "each day", "these days",
	"daily", "sometimes", "every morning", "every night", "every weekend")

// canon turns slot words into a Subject (see normSubject).
func canon(words []string) string {
	// Leading determiners, pronouns and light verbs.
	for len(words) > 0 {
		w := words[0]
		if pair, ok := leadPairs[w]; ok {
			if len(words) > 1 && pair[words[1]] {
				words = words[2:]
				continue
			}
			if w == "go" || w == "going" || w == "keep" || w == "keeping" {
				break
			}
		}
		if !leadStrip[w] || len(words) == 1 && !junkSubjects[w] && !lightOnly[w] || len(words) > 1 && words[1] == "as" {
			break // "running as a form of exercise" is about running
		}
		words = words[1:]
	}
	words = stripTrailing(words)
	if len(words) == 0 {
		return ""
	}
	// Articles inside carry nothing ("change the API" = "change API").
	if slices.ContainsFunc(words, isArticle) {
		words = slices.DeleteFunc(slices.Clone(words), isArticle)
	}
	// Re-join compound adjectives.
	joined := words[:0:0]
	for i := 0; i < len(words); i++ {
		w := words[i]
		if i+1 < len(words) && compoundSuffixes[words[i+1]] && plainWord(w) && !preps[w] &&
			!(words[i+1] == "free" && i+2 < len(words) && (words[i+2] == "of" || words[i+2] == "from")) { // "shoes free of leather"
			w += "-" + words[i+1]
			i++
		}
		joined = append(joined, w)
	}
	words = joined
	// At most maxSubjectWords: the core noun phrase, without examples
	// ("animal-based fabrics like leather": the quote keeps them, and the
	// item alone says less than was said).
	for i := 1; i < len(words); i++ {
		if exampleWords[words[i]] && (len(words) > maxSubjectWords || i >= 2 && words[i] != "say") {
			words = words[:i]
			break
		}
	}
	if len(words) > maxSubjectWords {
		limit := maxSubjectWords
		for i := 1; i < len(words); i++ {
			if (words[i] == "with" || words[i] == "without" || i+1 < len(words) && pastTense(words[i]) && preps[words[i+1]]) &&
				len(words) <= maxQualifiedWords {
				// "movies with heavy use of special effects", "clothing
				// made from animal derived fabrics": the qualifier is what
				// is meant, "movies" alone is more.
				limit = maxQualifiedWords
				break
			}
			if preps[words[i]] {
				words = words[:i]
				break
			}
		}
		if len(words) > limit {
			words = words[:limit]
		}
	}
	for len(words) > 0 && (preps[words[len(words)-1]] || words[len(words)-1] == "and" || words[len(words)-1] == "or") {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return ""
	}
	// A tool's subcommand: "npm install", "yarn add" are about the tool.
	if len(words) == 2 && subcommands[words[1]] && cliTools[words[0]] {
		words = words[:1]
	}
	// Discard fragments.
	if len(words) == 1 && junkSubjects[words[0]] || timePhrases[strings.Join(words, " ")] {
		return ""
	}
	switch words[0] {
	case "how", "what", "why", "which", "who", "whether", "if", "it", "they", "he", "she", "there", "it's",
		"that's", "not", "when", "where", "here":
		return ""
	case "good", "great", "nice", "glad", "happy", "fun", "awesome", "cool":
		if len(words) > 1 && words[1] == "to" {
			return "" // "good to hear", "nice to see"
		}
	}
	switch words[len(words)-1] {
	case "it", "them", "that", "this", "so", "one":
		return ""
	}
	// Singular head words.
	out := make([]string, len(words))
	for i, w := range words {
		if i == len(words)-1 || i+1 < len(words) && preps[words[i+1]] {
			w = singular(w)
		}
		out[i] = w
	}
	return clipWords(strings.Join(out, " "), maxSubjectBytes)
}

func isArticle(w string) bool { return w == "the" || w == "a" || w == "an" }

// lightOnly are light verbs that are no subject on their own ("I prefer
// using" says nothing).
var lightOnly = setOf("use", "using", "uses", "write", "writing", "run", "running", "add", "adding",
	"have", "having", "do", "doing", "be", "try", "trying", "to", "the", "a", "an", "my", "our", "your")

var irregularPlural = map[string]string{
	"statuses": "status", "aliases": "alias", "buses": "bus", "viruses": "virus", "indices": "index",
	"indexes": "index", "caches": "cache", "children": "child", "people": "person", "criteria": "criterion",
	"analyses": "analysis", "matrices": "matrix", "vertices": "vertex", "cookies": "cookie",
	"movies": "movie", "zombies": "zombie", "lies": "lie", "ties": "tie", "pies": "pie", "dies": "die",
	"newbies": "newbie", "rookies": "rookie", "selfies": "selfie", "headaches": "headache",
	"niches": "niche", "biases": "bias", "canvases": "canvas", "atlases": "atlas", "heroes": "hero",
	"potatoes": "potato", "tomatoes": "tomato", "echoes": "echo", "vetoes": "veto", "quizzes": "quiz",
	"bonuses": "bonus", "campuses": "campus", "goes": "go", "does": "do", "avalanches": "avalanche",
	"mustaches": "mustache", "moustaches": "moustache", "synopses": "synopsis", "theses": "thesis",
	"hypotheses": "hypothesis", "parentheses": "parenthesis", "appendices": "appendix",
	"apis": "api", "clis": "cli", "uis": "ui", "guis": "gui", "tuis": "tui", "cpus": "cpu", "gpus": "gpu",
	"emojis": "emoji", "taxis": "taxi", "skus": "sku", "menus": "menu",
}

// noSingular end in "s" but are not plurals (or have no singular worth
// using).
var noSingular = setOf("postgres", "kubernetes", "jenkins", "pandas", "rails", "express", "emacs", "sass",
	"less", "series", "species", "news", "chaos", "macos", "ios", "aws", "https", "http", "always",
	"perhaps", "various", "previous", "serious", "numerous", "analytics", "physics", "mathematics",
	"statistics", "ethics", "logistics", "semantics", "graphics", "diagnostics", "metrics",
	"lots", "plus", "yes", "thanks", "redis", "nodemon", "electronics", "economics", "windows",
	"linux", "ubuntu", "centos", "debian", "nuxt", "gatsby", "cypress", "whereas", "unless",
	"css", "dns", "gcs", "gps", "ssl", "tls", "sms", "os", "vs", "vscode")

// singular returns the singular of an English plural, conservatively.
func singular(w string) string {
	if s, ok := irregularPlural[w]; ok {
		return s
	}
	if len(w) < 4 || !plainWord(w) || noSingular[w] {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "shes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "zzes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// specific words open a reference to one thing at hand ("use the helper",
// "this please"), not a habit or a taste.
var specific = setOf("the", "this", "that", "these", "those", "it", "them", "its", "it's", "me", "him",
	"her", "here", "there", "what", "which", "one", "some")

// taskVerbs open a request to do something now ("fix it please", "run
// tests please"), not a preference.
var taskVerbs = setOf("run", "fix", "add", "update", "check", "commit", "push", "open", "show", "try",
	"make", "do", "create", "write", "remove", "delete", "rename", "test", "build", "deploy", "merge",
	"rebase", "explain", "continue", "stop", "start", "look", "read", "review", "help", "give", "send",
	"tell", "go", "install", "restart", "revert", "undo", "move", "change", "refactor", "debug", "call",
	"wait", "retry", "proceed", "lint", "format", "print", "list", "find", "search", "get", "set", "let",
	"keep", "thanks", "thank", "yes", "ok", "okay", "sure", "no", "not", "more", "less", "again", "one")

// beDeny: "be X" that is no preference ("be sure to", "be back").
var beDeny = setOf("sure", "able", "aware", "done", "ready", "back", "there", "here", "a", "an", "the", "so",
	"too", "like", "afraid", "sorry", "surprised", "shy", "happy", "glad", "fine", "ok", "okay", "in", "on",
	"at", "used", "going", "honest", "right", "wrong", "quick", "patient", "it", "that", "this", "my",
	"your", "our", "any", "some", "more", "less")

// styleAdjs close "keep N ADJ" ("keep answers short").
var styleAdjs = setOf("short", "concise", "brief", "small", "simple", "minimal", "focused", "tight",
	"clean", "readable", "terse", "lean", "compact", "tidy", "flat", "shallow", "consistent")

// valueStops end a fact's value ("deploys to Fly.io every Friday").
var valueStops = setOf("every", "each", "on", "at", "in", "with", "via", "using", "when", "whenever",
	"after", "before", "by", "from", "for", "and", "but", "because", "since", "so", "if", "unless",
	"now", "nowadays", "today", "too", "also", "as")

// onlyScopeAfter reports that nothing but a scope phrase or a filler
// follows toks[end:] in the clause ("pnpm only in this repo").
func onlyScopeAfter(toks []token, end int) bool {
	for _, t := range toks[end:] {
		switch {
		case scopePreps[t.w], scopeDets[t.w], scopeNouns[t.w], t.w == "here", t.w == "please",
			t.w == "thanks", t.w == "always", t.w == "now":
		default:
			return false
		}
	}
	return true
}

// factName names the fact of a verb pattern from its verb and preposition:
// "deploys to Y" is the deploy target, "deploys with Y" the deploy tool,
// "is hosted on Y" the hosting, "builds with Y" the build tool, "releases
// on Y" the release day, "licensed under Y" the license.
func factName(toks []token, x, y [2]int) string {
	verb := toks[x[1]].w
	if (verb == "is" || verb == "are" || verb == "gets" || verb == "get") && x[1]+1 < y[0] {
		verb = toks[x[1]+1].w
	}
	if x[0] >= 2 && (toks[x[0]-2].w == "host" || toks[x[0]-2].w == "deploy" || toks[x[0]-2].w == "ship") {
		verb = toks[x[0]-2].w // "we host the app on Render"
	}
	prep := toks[y[0]-1].w
	head := toks[x[1]-1].w
	for k := x[0]; k < x[1]; k++ {
		if finiteVerbs[toks[k].w] || negators[toks[k].w] || hedges[toks[k].w] {
			return ""
		}
	}
	target := prep == "to" || prep == "on" || prep == "into"
	switch verb {
	case "deploys", "deploy", "deployed", "ships":
		if target {
			return "deploy target"
		}
		return "deploy tool"
	case "goes", "go", "run", "runs", "happen", "happens":
		switch head {
		case "deploy", "deploys", "deployment", "deployments", "release", "releases":
		default:
			return ""
		}
		if target {
			return "deploy target"
		}
		return "deploy tool"
	case "hosted", "host", "hosts":
		return "hosting"
	case "build", "builds", "built":
		return "build tool"
	case "release", "releases", "ship":
		return "release day"
	case "licensed":
		return "license"
	}
	return ""
}

// userFact reads "I'm X" / "I have X": the user's situation ("I'm on
// macOS", "I have a severe peanut allergy", "I'm new to Rust"), not a
// passing state ("I'm not sure", "I have a question", "I'm getting an
// error"). The value keeps its verb: "is on macOS", "has a … allergy".
func userFact(text string, toks []token, x [2]int) (string, bool) {
	if x[1]-x[0] > 6 || x[0] == 0 {
		return "", false
	}
	verb := "is"
	switch toks[x[0]-1].w {
	case "have", "got":
		verb = "has"
	}
	first := toks[x[0]].w
	if userDeny[first] && !(first == "an" && verb == "has") || negators[first] || hedges[first] || specific[first] {
		// "I'm an idiot" is a mood; "I have an egg allergy" a situation
		// (haveDeny below keeps out "an idea", "an error").
		return "", false
	}
	for k := x[0]; k < x[1] && k < x[0]+4; k++ {
		if stanceNouns[toks[k].w] {
			// "I have a strong aversion to X": a preference or an
			// avoidance of X (the patterns above), no fact about the user.
			return "", false
		}
	}
	if verb == "is" {
		if strings.HasSuffix(first, "ing") && first != "learning" && first != "studying" {
			return "", false
		}
		if !strings.Contains(first, "-") && pastTense(first) && first != "based" && first != "located" {
			return "", false
		}
		if first == "in" && x[1]-x[0] > 1 {
			// "I'm in the CET timezone", "I'm in Berlin"; not "in a meeting".
			last := toks[x[1]-1]
			if !timeWords[last.w] && !(text[last.start] >= 'A' && text[last.start] <= 'Z') {
				return "", false
			}
		}
	} else {
		if pastTense(first) || first == "to" {
			return "", false
		}
		for k := x[0]; k < x[1]; k++ {
			if haveDeny[strings.TrimSuffix(toks[k].w, "s")] {
				return "", false
			}
		}
	}
	for k := x[0]; k < x[1]; k++ {
		if finiteVerbs[toks[k].w] || toks[k].w == "`" || toks[k].w == "fan" || toks[k].w == "fans" {
			return "", false
		}
	}
	if last := toks[x[1]-1].w; x[1]-x[0] > 1 && (isArticle(last) || preps[last]) {
		return "", false // "passionate about helping people and making a": cut off
	}
	if x[1]-x[0] <= 2 && first == "as" || first == "on" && x[0]+1 < x[1] && toks[x[0]+1].w == "fire" {
		return "", false // "I'm as well", "I'm on fire": no situation
	}
	v := collapseSpace(strings.TrimRight(text[toks[x[0]].start:toks[x[1]-1].end], ".,;:!?"))
	if v == "" || verb == "has" && balance(v) {
		return "", false
	}
	return verb + " " + v, true
}

// balance reports an amount of money or points ("100 coins", "$500 to
// spend", "20 credits left"): what the user has now in a game or a
// purchase, which the next turn changes, not their situation.
func balance(v string) bool {
	f := strings.Fields(strings.ToLower(v))
	if len(f) == 0 {
		return false
	}
	if strings.ContainsAny(f[0][:1], "$€£¥") {
		return true
	}
	if !looksLikeValue(f[0]) {
		return false
	}
	for _, w := range f[1:min(len(f), 3)] {
		if balanceUnits[strings.TrimRight(w, ".,;:!?")] {
			return true
		}
	}
	return false
}

var balanceUnits = setOf("coin", "coins", "dollar", "dollars", "buck", "bucks", "euro", "euros", "pound",
	"pounds", "usd", "eur", "gbp", "point", "points", "credit", "credits", "token", "tokens", "gold", "gems",
	"chips", "lives", "gp", "cents")

var (
	userDeny = setOf("sure", "done", "going", "gonna", "confused", "stuck", "back", "ready", "fine", "ok",
		"okay", "afraid", "sorry", "happy", "glad", "so", "just", "still", "also", "about", "here", "there",
		"curious", "unable", "able", "aware", "pretty", "really", "very", "kind", "kinda", "too",
		"now", "currently", "already", "almost", "off", "out", "up", "down", "over", "at", "into", "all",
		"busy", "tired", "late", "away", "fairly", "quite", "totally", "good", "great", "lost", "fed",
		"certain", "worried", "concerned", "interested", "excited", "afk", "sick", "no", "an", "not",
		// Moods and intensifiers before them: how the user feels now.
		"super", "always", "definitely", "finally", "completely", "even", "more", "mostly", "proud",
		"grateful", "thankful", "thrilled", "nervous", "lucky", "motivated", "content", "stoked", "eager",
		"honored", "honoured", "blessed", "inspired", "determined", "relieved", "frustrated", "annoyed",
		"upset", "disappointed", "impressed", "amazed", "delighted", "overwhelmed", "anxious", "hopeful")
	haveDeny = setOf("question", "idea", "problem", "issue", "error", "bug", "concern", "suggestion",
		"request", "doubt", "feeling", "meeting", "call", "change", "pr", "branch", "file", "test",
		"minute", "time", "look", "go", "try", "thought", "update", "fix", "patch", "commit", "plan",
		"draft", "version", "copy", "list", "few", "couple", "quick", "another", "one", "other", "similar",
		"same", "lot", "bunch", "some", "no", "nothing", "everything", "something", "access", "permission",
		"deadline", "appointment", "task", "ticket")
	timeWords = setOf("timezone", "time", "utc", "gmt", "cet", "cest", "pst", "pdt", "est", "edt", "zone")
)

// beForms of "to be" after "here" make it a presentation ("here is …").
var beForms = setOf("is", "are", "was", "were", "it", "it's", "you", "we", "goes", "comes")

// anymoreWords say a habit ended: "we don't use Docker anymore".
func endedHabit(toks []token) bool {
	for i, t := range toks {
		switch t.w {
		case "anymore":
			return true
		case "any":
			if i+1 < len(toks) && toks[i+1].w == "more" {
				return true
			}
		case "longer":
			if i > 0 && toks[i-1].w == "no" {
				return true
			}
		}
	}
	return false
}

// subcommands of package managers and build tools.
var subcommands = setOf("install", "ci", "add", "exec", "dlx", "npx", "i", "run", "update", "upgrade")

// cliTools take subcommands.
var cliTools = setOf("npm", "pnpm", "yarn", "bun", "pip", "pip3", "cargo", "go", "uv", "poetry", "brew",
	"apt", "apt-get", "gem", "bundle", "composer", "mvn", "gradle", "make", "docker", "deno", "npx", "pipx",
	"conda", "dnf", "yum", "pacman", "nix")

// movePreps follow a verb of motion or placement ("deploy to", "run on").
var movePreps = setOf("to", "on", "onto", "into", "in", "with", "via", "through", "from")

// maskQuotes hides what stands between double quotes ("…" or “…”)
// on one line: quoted words are someone's words, not the user's statement
// ("the README says \"always use npm ci\""). The span becomes 'x's, one
// opaque word.
func maskQuotes(b []byte, text string) {
	for i := 0; i < len(b); i++ {
		open, n := 0, 0
		switch {
		case b[i] == '"':
			open, n = i, 1
		case strings.HasPrefix(text[i:], "\u201c"):
			open, n = i, 3
		default:
			continue
		}
		j := open + n
		for j < len(b) && b[j] != '\n' && b[j] != '"' && !strings.HasPrefix(text[j:], "\u201d") {
			j++
		}
		if j >= len(b) || b[j] == '\n' || j == open+n {
			continue
		}
		for k := open + n; k < j; k++ {
			b[k] = 'x'
		}
		if b[j] == '"' {
			i = j
		} else {
			i = j + 2
		}
	}
}

// notAfter reads "not Y" right after a preference's slot, up to the end
// of the clause: the avoidance that goes with it.
func notAfter(toks []token, end int, span func([2]int) string) (episode.Signal, bool) {
	if end >= len(toks) || toks[end].w != "not" && toks[end].w != "never" || len(toks)-end-1 > 3 || len(toks)-end-1 < 1 {
		return episode.Signal{}, false
	}
	for _, t := range toks[end+1:] {
		if finiteVerbs[t.w] || specific[t.w] || slotStops[t.w] {
			return episode.Signal{}, false
		}
	}
	subj, _ := normSlot(span([2]int{end + 1, len(toks)}), false)
	if subj == "" {
		return episode.Signal{}, false
	}
	return episode.Signal{Kind: episode.SignalAvoid, Subject: subj, Polarity: -1}, true
}

// placeVerbs put something somewhere: "add X to Y" is about X.
var placeVerbs = setOf("add", "put", "append", "insert", "include", "commit", "push", "write", "paste")
