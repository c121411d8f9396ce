package extract

import (
	"strings"
	"unicode/utf8"
)

// Text to words: masking code and quotes (prepare), sentences, tokens and
// their punctuation.

// prepare returns text lower-cased (ASCII only, so that byte offsets stay
// those of text) with code hidden: fenced blocks and block quotes become
// spaces and the inside of an inline code span becomes 'x' (one opaque
// word).
func prepare(text string) string {
	b := []byte(text)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	inFence := false
	var fence byte
	for ls := 0; ls < len(b); {
		le := ls
		for le < len(b) && b[le] != '\n' {
			le++
		}
		t := ls
		for t < le && t-ls < 4 && (b[t] == ' ' || b[t] == '\t') {
			t++
		}
		isFence := le-t >= 3 && (b[t] == '`' || b[t] == '~') && b[t+1] == b[t] && b[t+2] == b[t]
		if inFence || isFence || (t < le && b[t] == '>') {
			for k := ls; k < le; k++ {
				b[k] = ' '
			}
		}
		if isFence {
			if !inFence {
				inFence, fence = true, text[t]
			} else if text[t] == fence {
				inFence = false
			}
		}
		ls = le + 1
	}
	maskQuotes(b, text)
	for i := 0; i < len(b); i++ {
		if b[i] != '`' {
			continue
		}
		j := i + 1
		for j < len(b) && b[j] != '`' && b[j] != '\n' {
			j++
		}
		if j < len(b) && b[j] == '`' && j > i+1 {
			for k := i + 1; k < j; k++ {
				b[k] = 'x'
			}
			i = j
		}
	}
	return string(b)
}

// abbrevs end with a period that does not end a sentence.
var abbrevs = setOf("e.g", "i.e", "etc", "vs", "approx", "cf", "mr", "mrs", "ms", "dr", "eg", "ie", "resp", "incl", "esp")

// sentences splits the prepared text m into sentence ranges: at line
// breaks, at ';', and at '.', '!', '?' before a space or the end (keeping
// the mark in the sentence).
func sentences(m string) [][2]int {
	var out [][2]int
	start := 0
	push := func(end int) {
		if end > start {
			out = append(out, [2]int{start, end})
		}
		start = end
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch c {
		case '\n':
			push(i)
			start = i + 1
		case ';':
			push(i + 1)
		case '.', '!', '?':
			if i+1 < len(m) && m[i+1] != ' ' && m[i+1] != '\n' && m[i+1] != '\t' && m[i+1] != '\r' &&
				m[i+1] != '"' && m[i+1] != ')' && m[i+1] != '\'' {
				continue
			}
			if c == '.' {
				ws := i
				for ws > start && m[ws-1] != ' ' && m[ws-1] != '\n' && m[ws-1] != '(' {
					ws--
				}
				if abbrevs[m[ws:i]] {
					continue
				}
			}
			for i+1 < len(m) && (m[i+1] == '"' || m[i+1] == ')' || m[i+1] == '\'') {
				i++
			}
			push(i + 1)
		}
	}
	push(len(m))
	return out
}

// tokenize splits m[a:b] into words. Each word's text is taken from m
// (lower-cased), its offsets index the original text.
func tokenize(m string, text string, a, b int) []token {
	toks := make([]token, 0, (b-a)/5+1)
	i := a
	for i < b {
		for i < b && isSpace(m[i]) {
			i++
		}
		if i >= b {
			break
		}
		j := i
		for j < b && !isSpace(m[j]) {
			j++
		}
		s, e := i, j
		code := m[s] == '`'
		sep := false
		if !code {
			for s < e {
				if n := leadPunct(m[s:e]); n > 0 {
					s += n
					continue
				}
				break
			}
			for e > s {
				n, isSep := trailPunct(m[s:e])
				if n == 0 {
					break
				}
				sep = sep || isSep
				e -= n
			}
		} else {
			// `code`, possibly followed by punctuation.
			k := s + 1
			for k < e && m[k] != '`' {
				k++
			}
			if k < e {
				k++
				if strings.ContainsAny(m[k:e], ",;:") {
					sep = true
				}
				e = k
			}
		}
		if s >= e {
			// A lone dash or comma separates clauses.
			if len(toks) > 0 && isDash(m[i:j]) || len(toks) > 0 && (m[i] == ',' || m[i] == ';' || m[i] == ':') {
				toks[len(toks)-1].sep = true
			}
			i = j
			continue
		}
		w := m[s:e] // a substring: no copy
		if code {
			w = "`"
		} else if strings.Contains(w, "\u2019") {
			w = strings.ReplaceAll(w, "\u2019", "'")
		}
		toks = append(toks, token{w: contraction(w), start: s, end: e, rawStart: i, rawEnd: j, sep: sep})
		i = j
	}
	return toks
}

// contraction restores the apostrophe of common contractions typed
// without one.
func contraction(w string) string {
	switch w {
	case "dont":
		return "don't"
	case "doesnt":
		return "doesn't"
	case "didnt":
		return "didn't"
	case "isnt":
		return "isn't"
	case "arent":
		return "aren't"
	case "shouldnt":
		return "shouldn't"
	case "wouldnt":
		return "wouldn't"
	case "couldnt":
		return "couldn't"
	case "cant":
		return "can't"
	case "thats":
		return "that's"
	case "youre":
		return "you're"
	case "ive":
		return "i've"
	case "im":
		return "i'm"
	}
	return w
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

func isDash(s string) bool {
	return s == "-" || s == "--" || s == "\u2014" || s == "\u2013"
}

// leadPunct returns the length of punctuation opening b.
func leadPunct(b string) int {
	switch b[0] {
	case '(', '[', '{', '"', '\'', '*', '_', '<', ',', ';', ':', '-':
		return 1
	}
	if b[0] < utf8.RuneSelf {
		return 0
	}
	for _, q := range [...]string{"\u201c", "\u2018", "\u00ab"} {
		if strings.HasPrefix(b, q) {
			return len(q)
		}
	}
	return 0
}

// trailPunct returns the length of punctuation closing b, and whether it
// separates clauses.
func trailPunct(b string) (int, bool) {
	c := b[len(b)-1]
	switch c {
	case ',', ';', ':':
		return 1, true
	case ')', ']', '}', '"', '\'', '.', '!', '?', '*', '_', '>':
		return 1, false
	}
	if c < utf8.RuneSelf {
		return 0, false
	}
	for _, q := range [...]string{"\u201d", "\u2019", "\u00bb", "\u2026"} {
		if strings.HasSuffix(b, q) {
			return len(q), false
		}
	}
	return 0, false
}
