package consolidate

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A belief the user stated reads in their own words: the clause of their
// sentence that holds what the belief is about, with its qualifiers ("in
// commit messages", "in Makefiles", "in this repo"), trimmed of what only
// frames it ("hey, quick context:", "and please", "can you", "thanks").
// "and please never put emoji in commit messages." becomes "Never put emoji
// in commit messages.", not "User avoids emoji.": MEMORY.md and the
// prompt's bites then read as instructions Claude can follow. The subject,
// predicate and value the belief is matched on (paraphrases, corrections)
// stay derived and are not shown.

// Phrase returns the clause of sentence that holds anchor (what the belief
// is about, as the user wrote it), trimmed and cased as a statement, or ""
// when there is none to use: anchor not in the sentence, or a clause too
// long to be one statement (the caller then renders the belief).
func Phrase(sentence, anchor string) string {
	sentence = strings.Join(strings.Fields(sentence), " ")
	anchor = strings.TrimSpace(anchor)
	if sentence == "" || anchor == "" {
		return ""
	}
	at := indexFold(sentence, anchor)
	if at < 0 {
		return ""
	}
	c := clauseAt(sentence, at, at+len(anchor))
	c = trimFrame(c)
	if c == "" || indexFold(c, anchor) < 0 {
		return ""
	}
	if n := len(strings.Fields(c)); n < 2 || n > MaxStatementWords {
		return ""
	}
	r, n := utf8.DecodeRuneInString(c)
	c = string(unicode.ToUpper(r)) + c[n:]
	c = strings.TrimRight(c, " ,;:-–—")
	if !strings.ContainsAny(c[len(c)-1:], ".!?") {
		c += "."
	}
	return c
}

// indexFold is strings.Index with case folded, on whole words.
func indexFold(s, sub string) int {
	ls, lsub := strings.ToLower(s), strings.ToLower(sub)
	for off := 0; off < len(ls); {
		i := strings.Index(ls[off:], lsub)
		if i < 0 {
			return -1
		}
		i += off
		j := i + len(lsub)
		if (i == 0 || !isWordByte(ls[i-1])) && (j == len(ls) || !isWordByte(ls[j])) {
			return i
		}
		off = i + 1
	}
	return -1
}

// clauseBreaks end one clause and start the next: what follows a
// semicolon, a dash, "so", "but" or a request in the same breath ("our
// tests use Jest; run them with pnpm test", "I like table-driven tests in
// Go, please write them that way") says something else.
var clauseBreaks = []string{"; ", " — ", " – ", " -- ", " - ", ", so ", ", but ", ", please ", ", pls ", ", plz ",
	", and please ", ", thanks", ", thank you", ", then ", " so please ", ", because ", " because ", ", since "}

// subjectBreaks start a clause at the new subject they lead to, after
// "and" or a comma: "add a lint target to the Makefile, in this repo we
// run golangci-lint …", "… tests and I never use testify".
var subjectBreaks = []string{" and i ", " and we ", ", and i ", ", and we ", ", i ", ", we ", ", our ", ", my ", ", i'm ",
	", we're ", ", in this ", ", here "}

// clauseAt returns the clause of s around [a, b).
func clauseAt(s string, a, b int) string {
	ls := strings.ToLower(s)
	start, end := 0, len(s)
	cut := func(br string, skip int) {
		for off := 0; off < len(ls); {
			i := strings.Index(ls[off:], br)
			if i < 0 {
				break
			}
			i += off
			switch {
			case i+len(br) <= a && i+skip > start:
				start = i + skip
			case i >= b && i < end:
				end = i
			}
			off = i + 1
		}
	}
	for _, br := range clauseBreaks {
		cut(br, len(br))
	}
	for _, br := range subjectBreaks {
		// the words after "and" or the comma open the clause
		rest := strings.TrimPrefix(strings.TrimPrefix(br, ","), " and")
		cut(br, len(br)-len(rest)+1)
	}
	// A short lead-in before a colon frames what follows: "hey, quick
	// context before we start: we're on Postgres 16", "reminder: …".
	if i := strings.LastIndex(s[start:a], ": "); i >= 0 && len(strings.Fields(s[start:start+i])) <= 6 {
		start += i + 2
	}
	return strings.TrimSpace(s[start:end])
}

// frameWords open a clause without saying anything of it: interjections,
// the conjunction that joined it to the last one, politeness, and asking.
var frameWords = setOfWords(`ok okay oh hey hi hello so and also btw fyi but alright yeah yep please pls plz
	kindly just anyway anyways ah um uh hmm reminder ps`)

// frameLeads are runs of words that frame a request ("can you always …")
// or a reminder ("remember that …", "note that …", "keep in mind that …").
var frameLeads = [][]string{
	{"can", "you"}, {"could", "you"}, {"would", "you"}, {"will", "you"}, {"can", "we"},
	{"remember", "that"}, {"note", "that"}, {"keep", "in", "mind", "that"}, {"keep", "in", "mind"},
	{"heads", "up"}, {"for", "the", "record"}, {"just", "so", "you", "know"}, {"fyi"}, {"by", "the", "way"},
	{"make", "sure", "to"}, {"make", "sure", "you"}, {"i", "want", "you", "to"}, {"i'd", "like", "you", "to"},
}

// frameTails close a clause without saying anything of it.
var frameTails = setOfWords(`please pls plz thanks thx ty btw fyi anyway anyways`)

// trimFrame removes the words that frame a clause at its two ends.
func trimFrame(c string) string {
	f := strings.Fields(c)
	for changed := true; changed && len(f) > 0; {
		changed = false
		if w := bare(f[0]); frameWords[w] {
			f, changed = f[1:], true
			continue
		}
		for _, lead := range frameLeads {
			if len(f) > len(lead) && hasLead(f, lead) {
				f, changed = f[len(lead):], true
				break
			}
		}
	}
	for len(f) > 1 && frameTails[bare(f[len(f)-1])] {
		f = f[:len(f)-1]
	}
	return strings.TrimLeft(strings.Join(f, " "), ",;:-–— ")
}

func hasLead(f, lead []string) bool {
	for i, w := range lead {
		if bare(f[i]) != w {
			return false
		}
	}
	return true
}

// bare is a word lower-cased without the punctuation around it.
func bare(w string) string {
	return strings.ToLower(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' }))
}

func setOfWords(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
