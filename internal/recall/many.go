package recall

import "strings"

// AsksForMany reports whether a prompt asks for several things: "what
// books has she read?", "which tests did we skip?", "what other flags
// exist?", "what kinds of yoga…", "how many times…". The answer is spread
// over several memories, so recall keeps more of them (ManyKeepShare,
// ManyLimits) and they take the room neighbours would have had.
//
// A scan of the first words: the prompt hook calls it on every prompt.
func AsksForMany(text string) bool {
	words, ok := questionWords(text)
	return ok && asksForMany(words)
}

// asksForMany is AsksForMany on a question's words.
func asksForMany(words []string) bool {
	if len(words) < 3 {
		return false
	}
	first, second := strings.ToLower(words[0]), strings.ToLower(words[1])
	if first == "how" {
		return second == "many"
	}
	if first != "what" && first != "which" {
		return false
	}
	switch second {
	case "kinds", "types", "sorts":
		return true
	}
	if plural(second) {
		return true
	}
	// A modifier before the noun: "what other flags", "which new tests"
	// (not "which class handles retries?": a verb ends in s too).
	return listModifiers[second] && plural(strings.ToLower(words[2]))
}

var listModifiers = map[string]bool{"other": true, "new": true, "old": true, "main": true, "recent": true,
	"different": true, "specific": true, "popular": true, "common": true, "open": true, "failing": true,
	"two": true, "three": true, "four": true, "five": true, "several": true, "favorite": true, "favourite": true,
	"past": true, "previous": true, "top": true, "all": true}

// plural reports a word that reads as a plural noun: "books", "cities";
// not "is", "does", "this", "status", "class".
func plural(w string) bool {
	if len(w) < 4 || !strings.HasSuffix(w, "s") || isAuxiliary(w) {
		return false
	}
	for _, e := range []string{"ss", "us", "is", "ys'"} {
		if strings.HasSuffix(w, e) {
			return false
		}
	}
	switch w {
	case "does", "goes", "was", "has", "its", "plus", "yes", "always", "perhaps", "whereas", "sometimes":
		return false
	}
	return true
}
