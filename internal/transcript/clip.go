package transcript

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// clip keeps the first headMax and the last tailMax bytes written to it and
// counts the rest, so that a tool result of any size is cut down while it is
// being decoded instead of after.
type clip struct {
	headMax, tailMax int
	head, tail       []byte // tail holds up to 2*tailMax bytes between trims
	total            int
}

func (c *clip) write(p []byte) {
	c.total += len(p)
	if n := c.headMax - len(c.head); n > 0 {
		n = min(n, len(p))
		c.head = append(c.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 || c.tailMax == 0 {
		return
	}
	if len(p) >= c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		return
	}
	if len(c.tail)+len(p) > 2*c.tailMax {
		keep := c.tailMax - len(p)
		c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-keep:])]
	}
	c.tail = append(c.tail, p...)
}

func (c *clip) writeByte(b byte) {
	c.write([]byte{b})
}

func (c *clip) writeRune(r rune) {
	var a [utf8.UTFMax]byte
	c.write(a[:utf8.EncodeRune(a[:], r)])
}

// String returns what was written, or its head and tail around a marker
// saying how many bytes were left out. Cuts fall on rune boundaries and the
// result is valid UTF-8.
func (c *clip) String() string {
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	if c.total == len(c.head)+len(tail) {
		return validUTF8(string(c.head) + string(tail))
	}
	h := trimPartialRune(c.head)
	t := tail[runeStartAfter(tail, 0):]
	omitted := c.total - len(h) - len(t)
	return validUTF8(string(h) + truncMarker(omitted) + string(t))
}

func truncMarker(omitted int) string {
	return "\n…[truncated " + strconv.Itoa(omitted) + " bytes]…\n"
}

// runeStartBefore returns the largest i ≤ n at which b does not split a
// rune, n < len(b). Invalid bytes are not worth searching past: at most one
// rune's length is looked at.
func runeStartBefore[T string | []byte](b T, n int) int {
	for i := n; i >= 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

// runeStartAfter returns the smallest i ≥ n at which b does not split a
// rune. Bytes from n to the end that start no rune, fewer than a rune's
// length, are the last bytes of a cut rune: i is len(b), so that they are
// dropped, not shown as a replacement character that outgrows the bound.
func runeStartAfter(b []byte, n int) int {
	for i := n; i < len(b) && i < n+utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	if len(b)-n < utf8.UTFMax {
		return len(b)
	}
	return n
}

// trimPartialRune drops an incomplete rune at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// unquoteTo decodes the JSON string literal raw into c as encoding/json
// would. raw comes from a validated line.
func unquoteTo(raw []byte, c *clip) {
	if len(raw) < 2 || raw[0] != '"' {
		return
	}
	s := raw[1 : len(raw)-1]
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			writePlain(c, s)
			return
		}
		if i > 0 {
			writePlain(c, s[:i])
		}
		s = s[i:]
		if len(s) < 2 {
			return
		}
		switch e := s[1]; e {
		case 'b':
			c.writeByte('\b')
		case 'f':
			c.writeByte('\f')
		case 'n':
			c.writeByte('\n')
		case 'r':
			c.writeByte('\r')
		case 't':
			c.writeByte('\t')
		case 'u':
			r, n := unquoteRune(s)
			c.writeRune(r)
			s = s[n:]
			continue
		default: // '"', '\\', '/'
			c.writeByte(e)
		}
		s = s[2:]
	}
}

// writePlain writes a run of a string without escapes, replacing each byte
// of invalid UTF-8 with U+FFFD as encoding/json does.
func writePlain(c *clip, s []byte) {
	if utf8.Valid(s) {
		c.write(s)
		return
	}
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			c.writeRune(utf8.RuneError)
		} else {
			c.write(s[:n])
		}
		s = s[n:]
	}
}

// unquoteRune decodes the \uXXXX escape (or surrogate pair) at the start of
// s the way encoding/json does, returning the rune and the bytes used.
func unquoteRune(s []byte) (rune, int) {
	r := hex4(s[2:])
	if r < 0 {
		return utf8.RuneError, len(s)
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if r2 := hex4(s[8:]); r2 >= 0 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
	}
	return utf8.RuneError, 6
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// renderToolInput renders a tool call's input as the one line a reader of
// the conversation needs (what ran, on which file), at most max bytes.
func renderToolInput(name string, input []byte, max int) string {
	s := renderKnown(name, input)
	if s == "" {
		// Unknown tools, and known ones whose input changed shape.
		s = string(compactPrefix(input, max+1))
	}
	return truncate(validUTF8(s), max)
}

func renderKnown(name string, input []byte) string {
	field := func(want string) (raw []byte) {
		eachField(input, func(k, v []byte) {
			if string(k) == want {
				raw = v
			}
		})
		return raw
	}
	get := func(want string) string { return str(field(want)) }
	switch name {
	case "Bash":
		cmd, desc := get("command"), get("description")
		if cmd != "" && desc != "" {
			return cmd + " — " + desc
		}
		return cmd
	case "Write":
		path, content := get("file_path"), field("content")
		if path == "" || len(content) == 0 || content[0] != '"' {
			return path
		}
		c := clip{}
		unquoteTo(content, &c)
		return fmt.Sprintf("%s (%d bytes)", path, c.total)
	case "Edit", "MultiEdit", "Read":
		return get("file_path")
	case "NotebookEdit":
		if p := get("notebook_path"); p != "" {
			return p
		}
		return get("file_path")
	case "Grep", "Glob":
		pat, path := get("pattern"), get("path")
		if pat != "" && path != "" {
			return pat + " in " + path
		}
		return pat
	case "WebFetch":
		return get("url")
	case "WebSearch", "ToolSearch":
		return get("query")
	case "Task", "Agent":
		return get("description")
	}
	return ""
}

// compactPrefix returns the first n bytes of raw (valid JSON) with the
// whitespace between tokens removed, without compacting the rest: a tool's
// input can be megabytes.
func compactPrefix(raw []byte, n int) []byte {
	out := make([]byte, 0, min(n, len(raw)))
	inString, escaped := false, false
	for _, c := range raw {
		if len(out) >= n {
			break
		}
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out = append(out, c)
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
		}
		out = append(out, c)
	}
	return out
}

// truncate cuts s to at most max bytes on a rune boundary, ending it with an
// ellipsis when something was cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const ell = "…"
	n := max - len(ell)
	if n <= 0 {
		return s[:runeStartBefore(s, max)]
	}
	return strings.TrimRight(s[:runeStartBefore(s, n)], " \n") + ell
}
