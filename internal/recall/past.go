package recall

import (
	"slices"
	"strings"
	"unicode"
)

// AsksAboutThePast reports whether a prompt asks what happened: a past
// auxiliary ("when did we move to pnpm?", "what was the error?", "has the
// migration been run?"), a word of remembering or of time gone by ("last
// week", "two days ago", "earlier", "have you ever"), or a date ("in June",
// "on 3 March, 2024"). Such a prompt is a request to remember, and recall
// passes more for it (see Recaller.PastOpenCoverage): a memory that shares
// one word with it and is near it in meaning is worth showing, where for a
// request of new work ("recommend a good laptop") it would be noise.
//
// A prompt of more than maxQuestionWords words is no such question: a
// pasted log, file or long request says "was" or names a year somewhere.
//
// A scan of the words, no pattern to compile: the prompt hook calls it on
// every prompt.
func AsksAboutThePast(text string) bool {
	words, ok := questionWords(text)
	return ok && asksAboutThePast(words) // a longer prompt: material pasted with it says "was" somewhere
}

// asksAboutThePast is AsksAboutThePast on a question's words.
func asksAboutThePast(words []string) bool {
	if whPast(words) {
		return true
	}
	for i, w := range words {
		lw := strings.ToLower(w)
		switch lw {
		case "did", "didn", "was", "wasn", "were", "weren", "had", "hadn", "ago", "earlier", "previously",
			"yesterday", "ever", "remember", "remembered", "recall", "recalled":
			return true
		case "has", "have", "hasn", "haven":
			// A perfect ("has Tim been", "have we tried", "which
			// city have Ana and Ben both visited?"), not a possession
			// ("do you have any tips").
			for _, n := range words[i+1 : min(len(words), i+5)] {
				if n = strings.ToLower(n); n == "been" || isParticiple(n) {
					return true
				}
			}
			if isParticiple(strings.ToLower(words[len(words)-1])) && slices.ContainsFunc(words[max(0, i-3):i], func(p string) bool {
				return isWh(strings.ToLower(p))
			}) {
				return true
			}
		case "last":
			if i+1 < len(words) && isTimeNoun(strings.ToLower(words[i+1])) {
				return true
			}
		case "january", "february", "march", "april", "june", "july", "august", "september", "october",
			"november", "december":
			return true
		case "may":
			// The month, not the verb: "in May", "May 3".
			if w == "May" && (i+1 < len(words) && isNumber(words[i+1]) ||
				i > 0 && isMonthPreposition(strings.ToLower(words[i-1]))) {
				return true
			}
		}
		if len(lw) == 4 && isNumber(lw) && (lw[:2] == "19" || lw[:2] == "20") {
			return true // a year
		}
	}
	return false
}

// whPast reports a question whose subject is its wh-phrase and whose verb
// is in the past: "what inspired the rewrite?", "how many users
// reported the bug?". The verb comes within four words of the wh-word,
// with no form of "be", "do" or a modal before it ("what are some
// highly-rated laptops?" asks for something new).
func whPast(words []string) bool {
	if len(words) < 2 || !isWh(strings.ToLower(words[0])) {
		return false
	}
	for _, w := range words[1:min(len(words), 6)] {
		lw := strings.ToLower(w)
		if isAuxiliary(lw) {
			return false
		}
		if isParticiple(lw) && strings.HasSuffix(lw, "ed") {
			return true
		}
	}
	return false
}

func isWh(w string) bool {
	switch w {
	case "what", "which", "who", "whom", "whose", "how", "where", "when", "why":
		return true
	}
	return false
}

// isAuxiliary: a form of "be" or "do", a modal, or "have" (whose perfects
// AsksAboutThePast reads itself).
func isAuxiliary(w string) bool {
	switch w {
	case "is", "are", "be", "been", "being", "am", "s", "re", "do", "does", "did", "can", "could", "would", "should",
		"will", "shall", "might", "must", "may", "ll", "d", "have", "has", "was", "were":
		return true
	}
	return false
}

// maxQuestionWords bounds the prompts AsksAboutThePast considers.
const maxQuestionWords = 40

// questionWords splits text into its runs of letters and digits, or
// reports false as soon as there are more than maxQuestionWords.
func questionWords(text string) ([]string, bool) {
	var words []string
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if len(words) == maxQuestionWords {
				return nil, false
			}
			words = append(words, text[start:i])
			start = -1
		}
	}
	if start >= 0 {
		if len(words) == maxQuestionWords {
			return nil, false
		}
		words = append(words, text[start:])
	}
	return words, true
}

// isParticiple: a regular past participle, or a common irregular one.
func isParticiple(w string) bool {
	if len(w) > 4 && strings.HasSuffix(w, "ed") && w != "need" && w != "feed" && w != "seed" && w != "speed" {
		return true
	}
	switch w {
	case "done", "gone", "seen", "made", "taken", "written", "given", "eaten", "known", "begun", "told", "said",
		"bought", "brought", "thought", "found", "got", "gotten", "met", "read", "won", "lost", "left", "kept",
		"felt", "built", "sent", "spent", "taught", "worn", "chosen", "drawn", "flown", "grown", "shown", "spoken",
		"broken", "driven", "ridden", "forgotten", "run", "heard", "held", "paid", "put", "set", "tried":
		return true
	}
	return false
}

func isTimeNoun(w string) bool {
	switch w {
	case "time", "times", "week", "weeks", "month", "months", "year", "years", "night", "day", "days", "weekend",
		"session", "sessions", "sprint", "release", "meeting", "summer", "winter", "spring", "fall", "autumn",
		"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "morning", "evening":
		return true
	}
	return false
}

func isMonthPreposition(w string) bool {
	switch w {
	case "in", "on", "of", "since", "during", "last", "early", "late", "mid", "until", "by":
		return true
	}
	return false
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
