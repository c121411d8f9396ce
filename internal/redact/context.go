package redact

import (
	"encoding/base64"
	"strings"
)

// afterSeparator parses what follows a key ending at s[k:]: an optional
// closing quote of a quoted key, blanks, one of "=", ":", ":=", "=>", and
// blanks. It returns where the value starts and the separator. Comparisons
// ("==", "!=", "<=") and "::" are not separators.
func afterSeparator(s string, k int) (v int, sep string, ok bool) {
	v, sep, _, ok = separator(s, k)
	return v, sep, ok
}

// separator is afterSeparator that also reports whether blanks surround
// the separator.
func separator(s string, k int) (v int, sep string, spaced, ok bool) {
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
	}
	q := skipBlanks(s, k)
	if q >= len(s) {
		return 0, "", false, false
	}
	switch s[q] {
	case '=':
		switch {
		case q+1 < len(s) && s[q+1] == '=':
			return 0, "", false, false
		case q+1 < len(s) && s[q+1] == '>':
			sep = "=>"
		default:
			sep = "="
		}
	case ':':
		switch {
		case q+1 < len(s) && s[q+1] == '=':
			sep = ":="
		case q+1 < len(s) && s[q+1] == ':':
			return 0, "", false, false
		default:
			sep = ":"
		}
	default:
		return 0, "", false, false
	}
	v = skipBlanks(s, q+len(sep))
	return v, sep, q > k || v > q+len(sep), true
}

// skipBlanks skips spaces and tabs (never newlines: a value is on the same
// line as its key).
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// isURLStop ends the authority part of a URL.
func isURLStop(c byte) bool {
	switch c {
	case '/', '?', '#', '"', '\'', '`', '<', '>', '\\', ')', '|':
		return true
	}
	return isSpace(c)
}

// findURLPasswords finds the password in scheme://user:password@host and in
// `curl -u user:password`; scheme, user and host stay readable.
func findURLPasswords(t *text, spans []span) []span {
	s := t.s
	indexAll(s, "://", 0, func(i int) int {
		a := i + 3
		e := runEnd(s, a, func(c byte) bool { return !isURLStop(c) })
		if i == 0 || !isAlnum(s[i-1]) {
			return e
		}
		at := strings.LastIndexByte(s[a:e], '@')
		if at < 0 {
			return e
		}
		if sp, ok := userinfoPassword(s, a, a+at); ok {
			spans = append(spans, sp)
		}
		return e
	})
	indexByteAll(s, '-', func(i int) int {
		// " -u user:pass", " --user user:pass", " --user=user:pass" on a curl line
		if i == 0 || s[i-1] != ' ' {
			return i + 1
		}
		a := 0
		switch {
		case strings.HasPrefix(s[i:], "-u ") || strings.HasPrefix(s[i:], "-u\t"):
			a = i + 3
		case strings.HasPrefix(s[i:], "--user ") || strings.HasPrefix(s[i:], "--user="):
			a = i + 7
		default:
			return i + 1
		}
		if !curlOnLine(s, i) {
			return a
		}
		a = skipBlanks(s, a)
		q := byte(0)
		if a < len(s) && (s[a] == '"' || s[a] == '\'') {
			q = s[a]
			a++
		}
		e := runEnd(s, a, func(c byte) bool {
			return !isSpace(c) && c != '"' && c != '\'' && (q != 0 || c != ';')
		})
		if sp, ok := userinfoPassword(s, a, e); ok {
			spans = append(spans, sp)
		}
		return e
	})
	return spans
}

// curlOnLine reports whether "curl" occurs on the line before s[i].
func curlOnLine(s string, i int) bool {
	lo := max(0, i-512)
	line := s[lo:i]
	if nl := strings.LastIndexByte(line, '\n'); nl >= 0 {
		line = line[nl+1:]
	}
	return strings.Contains(line, "curl")
}

// userinfoPassword returns the password part of the user:password in
// s[a:e]. The colon is searched outside placeholders, so an already redacted
// user name does not split. References ($VAR, ${VAR}) and placeholders are
// not passwords.
func userinfoPassword(s string, a, e int) (span, bool) {
	colon := -1
	for k := a; k < e; k++ {
		if n := placeholderLen(s[:e], k); n > 0 {
			k += n - 1
			continue
		}
		if s[k] == ':' {
			colon = k
			break
		}
	}
	if colon < 0 {
		return span{}, false
	}
	pw := s[colon+1 : e]
	if pw == "" || isReference(pw) || startsWithPlaceholder(pw) || isMask(pw) {
		return span{}, false
	}
	return span{colon + 1, e, typeURLPassword}, true
}

// isB64Token reports the characters of an RFC 6750 b64token.
func isB64Token(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '='
}

// findBearer finds credentials after a standalone "Bearer" or "Basic"
// scheme word, as in curl commands, logs and prose. Authorization headers
// are handled with the other key: value pairs (see authHeaderValue).
func findBearer(t *text, spans []span) []span {
	s := t.s
	for _, c := range []byte{'b', 'B'} {
		indexByteAll(s, c, func(i int) int {
			if !leftBoundary(s, i) {
				return i + 1
			}
			switch {
			case hasPrefixFold(s[i:], "bearer"):
				k := i + len("bearer")
				if k >= len(s) || (s[k] != ' ' && s[k] != '\t') {
					return k
				}
				a := skipBlanks(s, k)
				e := trimDots(s, a, runEnd(s, a, isB64Token))
				// Outside a header "bearer" is often prose: demand a long,
				// mixed token.
				l, u, d := classes(s[a:e])
				if e-a >= 16 && (d || (l && u)) && !isMask(s[a:e]) {
					spans = append(spans, span{a, e, typeBearer})
					return e
				}
				// Not past the rejected word: whether a later "Bearer" is
				// examined must not depend on this one, which a later pass
				// may redact.
				return k
			case hasPrefixFold(s[i:], "basic"):
				k := i + len("basic")
				if k >= len(s) || (s[k] != ' ' && s[k] != '\t') {
					return k
				}
				a := skipBlanks(s, k)
				e := runEnd(s, a, func(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' })
				if e-a >= 8 && isBasicCredential(s[a:e]) {
					spans = append(spans, span{a, e, typeBearer})
					return e
				}
				return k
			}
			return i + 1
		})
	}
	return spans
}

// authHeaderValue returns the credentials of an Authorization header whose
// value starts at s[v:]: the part after a known scheme word ("Bearer x",
// "Basic x", "token x"), or a bare token.
func authHeaderValue(s string, v int) (span, int, bool) {
	if v < len(s) && (s[v] == '"' || s[v] == '\'' || s[v] == '`') {
		v++
	}
	w := runEnd(s, v, isAlpha)
	if w > v && w < len(s) && s[w] == ' ' {
		if !isAuthScheme(s[v:w]) {
			return span{}, w, false // prose: "Authorization: Required for …"
		}
		c := skipBlanks(s, w)
		e := trimDots(s, c, runEnd(s, c, isB64Token))
		if !tokenish(s[c:e]) {
			return span{}, max(e, w), false
		}
		return span{c, e, typeBearer}, e, true
	}
	e := trimDots(s, v, runEnd(s, v, isB64Token))
	if !bareCredential(s[v:e]) || (e < len(s) && isValueCodeChar(s[e])) {
		return span{}, e, false
	}
	return span{v, e, typeBearer}, e, true
}

// isAuthScheme reports the HTTP authentication schemes whose credentials
// follow the scheme word in an Authorization header.
func isAuthScheme(w string) bool {
	for _, a := range []string{"bearer", "basic", "token", "jwt", "apikey", "key", "oauth", "negotiate", "ntlm", "sso"} {
		if len(w) == len(a) && hasPrefixFold(w, a) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// tokenish reports whether v, found where a credential is expected, looks
// like one rather than a word: at least 8 bytes, and digits, mixed case or
// token punctuation.
func tokenish(v string) bool {
	if len(v) < 8 || isMask(v) {
		return false
	}
	l, u, d := classes(v)
	return d || (l && u) || strings.ContainsAny(v, "-._~+/=")
}

// bareCredential reports whether v, the whole value of an Authorization
// header, is a credential rather than a word or a type name: long enough and
// with digits, or long and mixed-case.
func bareCredential(v string) bool {
	if isMask(v) {
		return false
	}
	l, u, d := classes(v)
	return (len(v) >= 12 && d) || (len(v) >= 20 && l && u)
}

// trimDots moves e back over trailing dots of s[c:e] (a sentence's full stop
// is not part of a token).
func trimDots(s string, c, e int) int {
	for e > c && s[e-1] == '.' {
		e--
	}
	return e
}

// isBasicCredential reports whether v is base64 of "user:password" (a
// printable text with a colon).
func isBasicCredential(v string) bool {
	if len(v) > 1024 {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(v)
		if err != nil {
			return false
		}
	}
	colon := false
	for _, c := range dec {
		if c < 0x20 || c == 0x7f {
			return false
		}
		colon = colon || c == ':'
	}
	return colon
}
