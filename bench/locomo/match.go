package main

import (
	"strings"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

// The rule deciding whether an evidence turn reached the injected context.
//
// Both sides are normalised the same way: lower case, the markdown markers
// engram's local extractor strips from prose ("**", "__", "`") removed,
// white space folded to single spaces. The turn is compared without the
// "Speaker: " prefix the harness writes into the transcript.
//
//   - strict: the whole normalised turn text occurs in the normalised
//     injected context.
//   - lenient: its first LenientPrefix runes occur (the whole text when it
//     is shorter). Bites are summaries clipped to a few hundred characters,
//     so a long turn can reach the context only in part; this counts a turn
//     whose opening made it.
//
// Neither rule gives credit for a paraphrase: engram's offline extractor
// keeps the exchange's own words, so a turn that reached the context is
// found verbatim.
const LenientPrefix = benchkit.LenientPrefix

const ruleDoc = "normalised = lower case, markdown markers ** __ ` removed, white space folded; turn compared without its \"Speaker: \" prefix. " +
	"strict: the whole normalised turn text is a substring of the normalised injected context. " +
	"lenient: its first 60 runes (the whole text when shorter) are."

// normalize and prefixRunes are benchkit's (bench/gatefit labels by the
// same rule).
var (
	normalize   = benchkit.Normalize
	prefixRunes = benchkit.PrefixRunes
)

// reaches applies both rules to a turn's text (without the speaker prefix)
// against an already normalised context.
func reaches(turnText, normContext string) (strict, lenient bool) {
	t := normalize(turnText)
	if t == "" || normContext == "" {
		return false, false
	}
	strict = strings.Contains(normContext, t)
	lenient = strict || strings.Contains(normContext, prefixRunes(t, LenientPrefix))
	return strict, lenient
}

// wordTokens estimates tokens from words: English prose runs about 0.75
// words per token.
func wordTokens(s string) float64 {
	return float64(len(strings.Fields(s))) * 4 / 3
}
