package benchkit

import (
	"strings"
	"unicode/utf8"
)

// LenientPrefix is how many runes of a LoCoMo turn must reach a context for
// the lenient rule (bench/locomo's match.go says why).
const LenientPrefix = 60

var markdownMarkers = strings.NewReplacer("**", "", "__", "", "`", "")

// Normalize is the normalisation both sides of the turn rule go through:
// lower case, the markdown markers engram's local extractor strips from
// prose ("**", "__", "`") removed, white space folded to single spaces.
func Normalize(s string) string {
	s = strings.ToLower(s)
	if strings.ContainsAny(s, "*_`") {
		s = markdownMarkers.Replace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}

// PrefixRunes returns the first n runes of s.
func PrefixRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}
