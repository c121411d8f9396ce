package transcript

import (
	"bytes"
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// A transcript is mostly bytes nobody here needs: request blobs holding the
// system prompt, attachments, and each tool's output twice (the tool_result
// and toolUseResult). encoding/json makes two passes over all of it, at a
// few hundred MB/s, for every struct it fills. This file makes one validating
// pass per line and then picks the wanted fields out of the validated bytes,
// skipping the rest at memchr speed. The decoding of strings matches
// encoding/json (FuzzUnquote and FuzzValid hold it to that); unlike
// encoding/json, keys are matched exactly, not case-insensitively.

// maxDepth is encoding/json's nesting limit: deeper input is invalid there
// too, and the limit bounds the validator's recursion.
const maxDepth = 10000

// valid reports whether b is one JSON value, surrounding whitespace allowed.
func valid(b []byte) bool {
	i, ok := validValue(b, skipSpace(b, 0), 0)
	return ok && skipSpace(b, i) == len(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// validValue validates the value starting at b[i] and returns the index just
// past it.
func validValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '{' || c == '[':
		if depth++; depth > maxDepth {
			return i, false
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1, true
		}
		for {
			var ok bool
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return i, false
				}
				if i, ok = validString(b, i); !ok {
					return i, false
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return i, false
				}
				i = skipSpace(b, i+1)
			}
			if i, ok = validValue(b, i, depth); !ok {
				return i, false
			}
			if i = skipSpace(b, i); i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case closer:
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return validString(b, i)
	case c == '-' || '0' <= c && c <= '9':
		return validNumber(b, i)
	case c == 't':
		return validLiteral(b, i, "true")
	case c == 'f':
		return validLiteral(b, i, "false")
	case c == 'n':
		return validLiteral(b, i, "null")
	}
	return i, false
}

func validLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// stringStop marks the bytes that end the plain run of a string: the quote,
// the backslash and the control characters JSON forbids raw.
var stringStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Eight bytes at a time: lo has 1 in each byte, hi the top bit of each byte.
const (
	lo = 0x0101010101010101
	hi = 0x8080808080808080
)

// plainWord reports whether none of the 8 bytes of w ends a plain run. The
// tests are the classic exact "has a zero byte" and "has a byte below n".
func plainWord(w uint64) bool {
	q := w ^ (lo * '"')
	bs := w ^ (lo * '\\')
	return ((w-lo*0x20)&^w|(q-lo)&^q|(bs-lo)&^bs)&hi == 0
}

func validString(b []byte, i int) (int, bool) {
	i++ // opening quote
	for {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !stringStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return i, false
		}
		switch b[i] {
		case '"':
			return i + 1, true
		case '\\':
			if i+1 >= len(b) {
				return i, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if hex4(b[i+2:]) < 0 {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default: // a control character
			return i, false
		}
	}
}

func validNumber(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else {
		var ok bool
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	if i < len(b) && b[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}

// The functions below walk JSON that valid accepted: they do not check it
// again, and return quietly on anything they do not expect.

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		q := j + k
		n := 0 // backslashes right before the quote: an odd count escapes it
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// eachField calls fn with the raw key (quotes removed, escapes kept) and raw
// value of each member of the object obj. A repeated key is seen each time,
// so a caller keeping the last one agrees with encoding/json.
func eachField(obj []byte, fn func(key, val []byte)) {
	if len(obj) == 0 || obj[0] != '{' {
		return
	}
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		k := skipString(obj, i)
		key := obj[i+1 : max(i+1, k-1)]
		i = skipSpace(obj, k)
		if i >= len(obj) || obj[i] != ':' {
			return
		}
		i = skipSpace(obj, i+1)
		v := skipValue(obj, i)
		fn(key, obj[i:v])
		i = skipSpace(obj, v)
		if i >= len(obj) || obj[i] != ',' {
			return
		}
		i = skipSpace(obj, i+1)
	}
}

// eachElem calls fn with each raw element of the array arr.
func eachElem(arr []byte, fn func(val []byte)) {
	if len(arr) == 0 || arr[0] != '[' {
		return
	}
	i := skipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		v := skipValue(arr, i)
		if v == i {
			return
		}
		fn(arr[i:v])
		i = skipSpace(arr, v)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = skipSpace(arr, i+1)
	}
}

// str decodes a raw JSON string; any other value gives "", as a field of an
// unexpected type would be left empty by encoding/json.
func str(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s)
	}
	c := clip{headMax: math.MaxInt}
	unquoteTo(raw, &c)
	return string(c.head)
}

func isTrue(raw []byte) bool { return string(raw) == "true" }
