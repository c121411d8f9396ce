package redact

import "strings"

// findPrivateBlocks finds <private>…</private> blocks. Tags are matched
// case-insensitively and may have blanks before '>'. Nested open tags are
// counted so that the text after an inner close tag stays hidden; a close tag
// without an open one is left alone; an unterminated block runs to the end.
func findPrivateBlocks(t *text, spans []span) []span {
	s := t.s
	depth, start := 0, 0
	indexByteAll(s, '<', func(i int) int {
		j := i + 1
		closing := j < len(s) && s[j] == '/'
		if closing {
			j++
		}
		if !hasPrefixFold(s[j:], "private") {
			return j
		}
		end := skipBlanks(s, j+len("private"))
		if end >= len(s) || s[end] != '>' {
			return end
		}
		end++
		switch {
		case !closing:
			if depth == 0 {
				start = i
			}
			depth++
		case depth > 0:
			depth--
			if depth == 0 {
				spans = append(spans, span{start, end, typePrivate})
			}
		}
		return end
	})
	if depth > 0 {
		spans = append(spans, span{start, len(s), typePrivate})
	}
	return spans
}

// findPrivateKeys finds PEM and PGP private key blocks, from the BEGIN line to
// the end of the matching END line, or to the end of the text when the END
// line is missing (a truncated paste still holds key material).
func findPrivateKeys(t *text, spans []span) []span {
	s := t.s
	const begin, end = "-----BEGIN ", "-----END "
	// "BEGIN " is searched rather than begin: '-' is common, 'B' is not.
	indexAll(s, begin[5:], 5, func(j int) int {
		i := j - 5
		if !strings.HasPrefix(s[i:], begin) {
			return j + 1
		}
		labelEnd, ok := privateKeyLabel(s, i+len(begin))
		if !ok {
			return labelEnd
		}
		stop := len(s)
		indexAll(s, end, labelEnd, func(j int) int {
			e, ok := privateKeyLabel(s, j+len(end))
			if !ok {
				return e
			}
			for k := 0; k < 5 && e < len(s) && s[e] == '-'; k++ {
				e++
			}
			stop = e
			return len(s) + 1 // found: stop searching
		})
		spans = append(spans, span{i, stop, typePrivateKey})
		return stop
	})
	return spans
}

// privateKeyLabel reads the label of a BEGIN or END line starting at s[i:]
// ("RSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK" …) and reports where it ends
// and whether it names a private key.
func privateKeyLabel(s string, i int) (int, bool) {
	j := i
	for j < len(s) && j-i < 64 && (isUpper(s[j]) || isDigit(s[j]) || s[j] == ' ') {
		j++
	}
	return j, strings.Contains(s[i:j], "PRIVATE KEY")
}
