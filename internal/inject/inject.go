// Package inject owns the framing of the context engram injects into a
// Claude Code prompt, and its removal: whatever engram injected comes back in
// the transcript, and capturing it would make engram re-learn its own output.
package inject

import "strings"

// Open and Close delimit everything engram injects.
const (
	Open  = "<engram-recall>"
	Close = "</engram-recall>"
)

// Wrap frames text as engram's injected context.
func Wrap(text string) string { return Open + "\n" + text + "\n" + Close }

// Contains reports whether s carries engram's injected context.
func Contains(s string) bool { return strings.Contains(s, Open) }

// Strip removes every framed span from s. An unterminated span is removed
// to the end of s: a truncated injection is still ours.
func Strip(s string) string {
	if !strings.Contains(s, Open) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, Open)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		rest := s[i+len(Open):]
		j := strings.Index(rest, Close)
		if j < 0 {
			break
		}
		s = rest[j+len(Close):]
	}
	return strings.TrimSpace(b.String())
}
