package recall

import (
	"slices"
	"strings"
)

// What a memory bite shows of an exchange. A captured turn holds what was
// said and what the tools did; a bite keeps what was said, names the tool
// calls once each in a short list, and leaves out tool results ("File
// created successfully at … no need to Read it back") and repeated command
// lines: they cost the prompt's budget and tell the model nothing.

// maxToolCall bounds one tool call's rendering in a bite, and maxToolCalls
// the calls listed.
const (
	maxToolCall  = 80
	maxToolCalls = 4
)

// exchange is a captured turn split into what the bite needs.
type exchange struct {
	user, assistant []string // what each said, in order
	plain           []string // text not in the rendered form, kept as it is
	tools           []string // "Bash: go test ./…", distinct, in order
	toolErrors      int
}

// parseExchange splits a rendered turn (transcript.Render: "User: …",
// "Assistant: …", "Assistant used X: …", "Tool result (X): …" paragraphs).
// Text that is not in that form is kept as it is.
func parseExchange(s string) exchange {
	var ex exchange
	var para strings.Builder
	flush := func() {
		p := strings.TrimSpace(para.String())
		para.Reset()
		switch {
		case p == "":
		case strings.HasPrefix(p, "User:"):
			ex.user = append(ex.user, strings.TrimSpace(p[len("User:"):]))
		case strings.HasPrefix(p, "Assistant used "):
			call := oneLine(strings.TrimPrefix(p, "Assistant used "))
			call = clip(call, maxToolCall)
			if !slices.Contains(ex.tools, call) {
				ex.tools = append(ex.tools, call)
			}
		case strings.HasPrefix(p, "Assistant:"):
			ex.assistant = append(ex.assistant, strings.TrimSpace(p[len("Assistant:"):]))
		case strings.HasPrefix(p, "Tool error"):
			ex.toolErrors++
		case strings.HasPrefix(p, "Tool result"):
		default:
			ex.plain = append(ex.plain, p)
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if isParaStart(line) {
			flush()
		}
		if para.Len() > 0 {
			para.WriteByte('\n')
		}
		para.WriteString(line)
	}
	flush()
	return ex
}

// BiteText is a rendered turn as a bite shows it: what was said, the tool
// calls named once, no tool output ("" for an empty turn).
func BiteText(context string) string { return parseExchange(context).render() }

// SaidBy is what the user said in a rendered turn (their paragraphs,
// joined; "" when none).
func SaidBy(context string) string {
	ex := parseExchange(context)
	if len(ex.user) == 0 {
		return strings.Join(ex.plain, " ")
	}
	return strings.Join(ex.user, " ")
}

// Restates reports whether text names at least half of what a belief's
// statement is about (its framing, "User prefers", aside), by stem: the
// sentence a belief was stated in, not another one of its evidence.
func Restates(statement, text string) bool {
	return statementCoverage(Item{Text: statement}, queryTerms(clipQuery(text))) > 0
}

// isParaStart: a line that starts a paragraph of a rendered turn.
func isParaStart(line string) bool {
	for _, p := range []string{"User:", "Assistant:", "Assistant used ", "Tool result", "Tool error"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// render is the bite's text of an exchange: the user's words, the tool
// calls listed once, and the assistant's words.
func (ex exchange) render() string {
	var b strings.Builder
	add := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	add(strings.Join(ex.plain, " "))
	if len(ex.user) > 0 {
		add("User: " + strings.Join(ex.user, " "))
	}
	if len(ex.tools) > 0 {
		calls := ex.tools
		more := ""
		if len(calls) > maxToolCalls {
			more = "; …"
			calls = calls[:maxToolCalls]
		}
		add("(Assistant used " + strings.Join(calls, "; ") + more + ")")
	}
	if len(ex.assistant) > 0 {
		add("Assistant: " + strings.Join(ex.assistant, " "))
	}
	return oneLine(b.String())
}

// lastSaid is the last thing the exchange's first speaker said (the
// user's, or plain text).
func (ex exchange) lastSaid() string {
	if len(ex.user) > 0 {
		return ex.user[len(ex.user)-1]
	}
	if len(ex.plain) > 0 {
		return ex.plain[len(ex.plain)-1]
	}
	return ""
}

// endsAsking reports whether the exchange ends on a question: the user's
// with no reply, or the assistant's.
func (ex exchange) endsAsking() bool {
	if len(ex.assistant) > 0 {
		return isQuestion(ex.assistant[len(ex.assistant)-1])
	}
	return isQuestion(ex.lastSaid())
}

// leftOpen reports whether the exchange asks something its own reply does
// not settle (no reply, or a short one): the next exchange may.
func (ex exchange) leftOpen() bool {
	return isQuestion(ex.lastSaid()) && len(ex.tools) == 0 && len(strings.Join(ex.assistant, " ")) < 200
}

// unanswered reports whether an exchange is a question that got no answer:
// the user asked, and the assistant neither did anything nor said more than
// an acknowledgement or a promise to look ("Understood.", "Let me check…").
// Such an exchange is never a memory worth showing: recalling it brings
// back the question without what settles it.
func (ex exchange) unanswered() bool {
	if len(ex.user) == 0 || len(ex.tools) > 0 {
		return false
	}
	if !isQuestion(ex.user[len(ex.user)-1]) {
		return false
	}
	reply := strings.ToLower(strings.TrimSpace(strings.Join(ex.assistant, " ")))
	if reply == "" {
		return true
	}
	return isNonAnswer(reply)
}

// isQuestion: text that ends asking something.
func isQuestion(s string) bool {
	s = strings.TrimRight(strings.TrimSpace(s), " .!)\"'`*_")
	return strings.HasSuffix(s, "?")
}

// isNonAnswer: a short reply that acknowledges or defers and says nothing.
func isNonAnswer(reply string) bool {
	reply = strings.TrimRight(reply, " .!…")
	if len(reply) > 120 {
		return false
	}
	for _, p := range []string{"understood", "got it", "ok", "okay", "sure", "noted", "will do", "sounds good", "right",
		"let me check", "let me look", "let me see", "let me find", "let me think", "i'll check", "i'll look",
		"i will check", "i will look", "checking", "one moment", "good question", "i'm not sure", "i am not sure",
		"i don't know", "i do not know", "not sure"} {
		if reply == p || strings.HasPrefix(reply, p+" ") || strings.HasPrefix(reply, p+",") || strings.HasPrefix(reply, p+".") ||
			strings.HasPrefix(reply, p+"…") || strings.HasPrefix(reply, p+"—") {
			// A reply that goes on past a short opening ("Sure, we use pnpm
			// because …") answers.
			return len(reply) < len(p)+40
		}
	}
	return false
}

// Stated reports whether an episode is one in which the user stated
// something to keep: the extractor typed it a preference, a correction, a
// decision or a fact, or the user's words read as a first-person statement
// of a preference or of their situation ("I avoid gluten", "we never push
// on Fridays", "my cat is diabetic"). The prompt hook lets such episodes in
// by meaning alone when they stand out from the rest of the store (see
// Weights.StatedGap): they are few, and they are what a later question
// most often needs without sharing a word with it.
func Stated(typ, context string) bool {
	switch typ {
	case "preference", "correction", "decision", "fact":
		return true
	}
	ex := parseExchange(context)
	said := strings.TrimSpace(strings.Join(ex.user, " "))
	if said == "" && len(ex.assistant) == 0 && len(ex.tools) == 0 {
		said = strings.TrimSpace(strings.Join(ex.plain, " "))
	}
	return statedWording(said)
}

// statedWording: a short first-person statement (not a question) with a
// word of stance or situation in it.
func statedWording(s string) bool {
	if s == "" || len(s) > 250 || isQuestion(s) {
		return false
	}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'' || r == '’')
	}) {
		words = append(words, strings.ReplaceAll(w, "’", "'"))
	}
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "i", "i'm", "i've", "i'd", "i'll", "my", "we", "we're", "we've", "our", "please", "always", "never", "don't", "do":
	default:
		return false
	}
	for _, w := range words {
		switch w {
		case "prefer", "prefers", "preferred", "preference", "avoid", "avoids", "love", "loves", "like", "likes", "enjoy",
			"hate", "hates", "dislike", "dislikes", "never", "always", "don't", "won't", "can't", "cannot", "refuse",
			"am", "i'm", "have", "i've", "need", "must", "allergic", "allergy", "intolerant", "vegan", "vegetarian",
			"favorite", "favourite", "usually", "rather", "only", "want", "wish", "care", "mind", "fan", "use", "uses",
			"are", "we're", "is", "stick", "keep", "tend":
			return true
		}
	}
	return false
}
