// Package lexicon holds closed classes of English words — the words that
// carry grammar rather than content — and what can be told from them: a
// phrase with no word of content in it cannot be what a belief is about.
package lexicon

import (
	"strings"
	"unicode"
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// Function words: determiners, pronouns, prepositions, conjunctions,
// auxiliaries and modals, and the adverbs and particles that only modify.
// A closed class: English adds no new ones.
var function = set(`
a an the this that these those some any each every either neither no none all both half
such what which whatever whichever whose
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself
it its itself we us our ours ourselves they them their theirs themselves one ones oneself
anything everything something nothing anyone everyone someone noone anybody everybody somebody nobody
anywhere everywhere somewhere nowhere
about above across after against along amid among around as at before behind below beneath beside
besides between beyond but by despite down during except for from in inside into like near of off
on onto out outside over past per since than through throughout till to toward towards under
underneath unlike until up upon via with within without
and or nor so yet if because although though unless whether while whereas
am is are was were be been being do does did done doing have has had having
can could may might must shall should will would ought
not very just only also too quite rather really so then there here now again ever never always
often still even already yet perhaps maybe please ok okay yes yeah
's 're 've 'd 'll 'm n't
i'm i've i'd i'll we're we've we'd we'll you're you've you'd you'll it's that's there's here's what's
they're they've he's she's let's don't doesn't didn't isn't aren't wasn't weren't won't wouldn't
shouldn't can't couldn't haven't hasn't im ive dont doesnt didnt isnt arent wasnt wont cant couldnt
`)

// Verbs: common English verbs that are rarely nouns in what developers say (not "build", "run",
// "check", "change", "update"), in every form. A
// subject made of one of them alone ("exists", "is") or of one with only
// function words ("fix anything") is a bare verb: what was said was an
// action, not a thing one prefers.
var verbs = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range strings.Fields(`
exist seem become make get give take go come know think say tell ask let put keep bring begin
happen mean feel find leave try want need like love hate prefer avoid use add remove delete fix
see write read explain describe allow enable disable continue include consider suggest provide
create ensure implement apply accept reject agree refer remember forget believe understand decide
choose pick rename rewrite rerun retry revert undo redo`) {
		m[v] = true
		for _, f := range inflect(v) {
			m[f] = true
		}
	}
	for _, w := range strings.Fields(`made got gave took went gone came knew known thought said told
put let kept brought began begun meant felt found left wrote written read ran seen saw chose chosen
picked understood forgot forgotten is are was were been`) {
		m[w] = true
	}
	return m
}()

// inflect returns the regular -s, -ed and -ing forms of a verb.
func inflect(v string) []string {
	var s, ed, ing string
	switch {
	case strings.HasSuffix(v, "y") && !strings.ContainsRune("aeiou", rune(v[len(v)-2])):
		s, ed, ing = v[:len(v)-1]+"ies", v[:len(v)-1]+"ied", v+"ing"
	case strings.HasSuffix(v, "e"):
		s, ed, ing = v+"s", v+"d", v[:len(v)-1]+"ing"
	case strings.HasSuffix(v, "s") || strings.HasSuffix(v, "sh") || strings.HasSuffix(v, "ch") || strings.HasSuffix(v, "x"):
		s, ed, ing = v+"es", v+"ed", v+"ing"
	default:
		s, ed, ing = v+"s", v+"ed", v+"ing"
	}
	return []string{s, ed, ing}
}

// referenceNouns name an item of a list the assistant just showed ("option
// 2", "the second approach", "#91"): said of one answer, not of a habit.
var referenceNouns = set(`option options choice choices alternative alternatives approach approaches
solution solutions suggestion suggestions proposal proposals variant variants version item items
step steps point points number answer answers one`)

var ordinals = set(`first second third fourth fifth sixth seventh eighth ninth tenth last former latter
previous next above below`)

// IsFunctionWord reports whether w (lower case) is a function word.
func IsFunctionWord(w string) bool { return function[w] }

// IsVerbForm reports whether w (lower case) is a form of a common verb
// that is rarely a noun.
func IsVerbForm(w string) bool { return verbs[w] }

// Words splits s into words: runs of letters, digits and the joiners
// ' - . # / + inside them.
func Words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("'-.#/+_@", r))
	}) {
		f = strings.Trim(f, "'-.")
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// number reports whether w is a number or a reference by number: "2",
// "#91", "2nd", "v2" is not (a version is a value).
func number(w string) bool {
	w = strings.TrimPrefix(w, "#")
	if w == "" {
		return false
	}
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	if digits == len(w) {
		return true
	}
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if strings.HasSuffix(w, suf) && digits == len(w)-2 && digits > 0 {
			return true
		}
	}
	return false
}

// NoContent is NotAThing without the verb test, for a subject whose
// casing is lost (lower-cased: "go" may be the language): it says why the
// words hold no thing, or "".
func NoContent(subject string) string {
	why := NotAThing(subject)
	if why == "a bare verb" {
		return ""
	}
	return why
}

// NotAThing says why the words of a belief's subject cannot be what a
// lasting belief is about, or "" when they can: no word of content (only
// function words: "is", "it", "that one"), a number alone ("2", "#91"), a
// bare verb ("exists", "fix anything"), or a reference to an item of the
// assistant's answer ("option 2", "the second approach": a one-off choice,
// not a standing preference).
func NotAThing(subject string) string {
	words := Words(subject)
	if len(words) == 0 {
		return "no words"
	}
	var content []string
	refs, nums, ords := 0, 0, 0
	verb := false
	for _, word := range words {
		w := strings.ToLower(word)
		switch {
		case number(w):
			nums++
		case ordinals[w]:
			ords++
		case referenceNouns[w]:
			refs++
		case function[w]:
		case len(w) == 1 && w == word && unicode.IsLetter(rune(w[0])):
			// A lone lower-case letter: a format verb's ("%s", "%b"),
			// a variable's, a list's label; no thing ("C", "R" are names).
		default:
			content = append(content, w)
			// A capitalised word is a name ("Go", "Make"), not a verb.
			verb = verbs[w] && w == word
		}
	}
	switch {
	case len(content) == 0 && refs == 0 && nums == 0 && ords == 0:
		return "only function words"
	case len(content) == 0 && refs == 0 && ords == 0:
		return "a number alone"
	case len(content) == 0:
		return "a reference to an item of an answer"
	case len(content) == 1 && verb && len(words) <= 3 && refs+nums+ords == 0:
		return "a bare verb"
	}
	return ""
}
