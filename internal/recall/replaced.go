package recall

import (
	"strings"
	"time"
	"unicode/utf8"
)

// ReplacedMax bounds the correcting words a superseded memory's label
// quotes: a sentence, not the turn.
const ReplacedMax = 140

// Replacement is what a bite of a superseded memory quotes as having
// replaced it: the sentence of the correcting exchange's user text
// (byContext, "User: …" as the store holds it) that shares the most terms
// with what the superseded memory says (old), so that in a long message
// the quote is the correction and not its greeting; the first sentence on
// a tie. "" when byContext holds no user text.
func Replacement(old, byContext string) string {
	user := strings.Join(parseExchange(byContext).user, " ")
	if strings.TrimSpace(user) == "" {
		return ""
	}
	cov := NewCoverer(Terms(old))
	best, bestCov := "", float32(-1)
	for _, s := range sentences(oneLine(user)) {
		if c := cov.Coverage(s); c > bestCov {
			best, bestCov = s, c
		}
	}
	return clipWords(best, ReplacedMax)
}

// sentences splits text after each '.', '!', '?' or ';' that a space
// follows; a full stop inside a name ("fly.io", "v1.2") does not end one.
func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '!', '?', ';':
			if i+1 < len(text) && text[i+1] == ' ' {
				if s := strings.TrimSpace(text[start : i+1]); s != "" {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// clipWords is s cut to at most max bytes at a word's end, with "…" when
// cut.
func clipWords(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > cut/2 {
		cut = i
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

// SupersededLabel is what a label says of a superseded memory: when and by
// what, in the correcting user's words (replaced, from Replacement), when
// those are known.
func SupersededLabel(replaced string, at, now time.Time) string {
	if replaced == "" {
		return "superseded by a later correction"
	}
	return "superseded " + When(at, now) + " by \"" + strings.ReplaceAll(replaced, `"`, "'") + "\""
}
