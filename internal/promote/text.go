package promote

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/redact"
)

// oneLine makes text fit on one bullet line of a MEMORY.md: secrets
// redacted (again: a belief may come from an import), white space
// collapsed, engram's markers defused, "@path" tokens put in code spans so
// that Claude Code does not import the file they name, and at most max
// runes, cut at a word with "…".
func oneLine(s string, max int) string {
	s, _ = redact.String(s)
	s = strings.Join(strings.Fields(s), " ")
	for strings.Contains(s, "<!--") || strings.Contains(s, "-->") {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "<!--", "<!-"), "-->", "->")
	}
	s = cut(s, max)
	return defuseImports(s)
}

// cut shortens s to at most max runes, at a word boundary when there is
// one in the second half, ending with "…".
func cut(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)[:max-1]
	end := len(runes)
	for i := len(runes) - 1; i > max/2; i-- {
		if unicode.IsSpace(runes[i]) {
			end = i
			break
		}
	}
	return strings.TrimRightFunc(string(runes[:end]), func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) && r != ')' && r != '`'
	}) + "…"
}

// defuseImports wraps every "@…" token that starts the text or follows
// white space, outside code spans, in backticks: Claude Code treats such a
// token in a loaded memory file as an import of the file it names, and
// does not look inside code spans.
func defuseImports(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	inCode := codeSpans(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '@' && !inCode[i] && (i == 0 || s[i-1] == ' ') {
			j := i
			for j < len(s) && s[j] != ' ' {
				j++
			}
			token := s[i:j]
			if len(token) > 1 && !strings.Contains(token, "`") {
				b.WriteString("`" + token + "`")
				i = j
				continue
			}
			if len(token) > 1 { // a backtick inside: neutralise the @ itself
				b.WriteString("＠")
				i++
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// codeSpans marks the bytes of s inside Markdown code spans: a run of n
// backticks opens one that the next run of exactly n backticks closes; an
// unmatched run is literal.
func codeSpans(s string) []bool {
	in := make([]bool, len(s))
	runAt := func(i int) int {
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := runAt(i)
		closeAt := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := runAt(j)
			if m == n {
				closeAt = j
				break
			}
			j += m
		}
		if closeAt < 0 {
			i += n
			continue
		}
		for k := i; k < closeAt+n; k++ {
			in[k] = true
		}
		i = closeAt + n
	}
	return in
}
