package recall

import (
	"unicode"
	"unicode/utf8"
)

// The store's full-text index tokenizes with SQLite FTS5's
// `porter unicode61 remove_diacritics 2`: runs of letters and digits, folded
// to lower case without diacritics, then reduced by the Porter stemmer. Its
// term statistics (episodes_vocab) hold those stems, so recall compares the
// prompt's words with them in the same form: a word whose stem is common in
// the store ("updated" → "updat") is never mistaken for a rare one. The
// tokenizer and the stemmer below follow FTS5's rules; TestStemMatchesFTS5
// checks them against the real index.

// portMaxToken: longer tokens (in bytes) are left unstemmed, as FTS5 does.
const porterMaxToken = 64

// eachToken calls fn with every token of text, folded (lower case,
// diacritics removed) into a buffer that fn must not keep.
func eachToken(text string, buf []byte, fn func(tok []byte)) []byte {
	tok := buf[:0]
	in := false
	flush := func() {
		if in && len(tok) > 0 {
			fn(tok)
		}
		tok = tok[:0]
		in = false
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				tok = append(tok, c)
				in = true
			case c >= 'A' && c <= 'Z':
				tok = append(tok, c+'a'-'A')
				in = true
			default:
				flush()
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Co):
			tok = utf8.AppendRune(tok, fold(r))
			in = true
		case in && unicode.In(r, unicode.Mn):
			// A combining mark inside a token: a diacritic, removed.
		default:
			flush()
		}
	}
	flush()
	return tok
}

// fold lower-cases r and removes its diacritic when it is a Latin letter
// with one (é → e, Å → a, ß stays).
func fold(r rune) rune {
	r = unicode.ToLower(r)
	if r >= 0xe0 && r <= 0x17f {
		if b := latinBase[r-0xe0]; b != 0 {
			return rune(b)
		}
	}
	return r
}

// latinBase maps U+00E0…U+017F (lower case Latin-1 Supplement and Latin
// Extended-A) to the base letter; 0 keeps the rune.
var latinBase = func() [0x17f - 0xe0 + 1]byte {
	var t [0x17f - 0xe0 + 1]byte
	set := func(from rune, bases string) {
		for i := 0; i < len(bases); i++ {
			if bases[i] != '.' {
				t[from-0xe0+rune(i)] = bases[i]
			}
		}
	}
	// à á â ã ä å æ ç è é ê ë ì í î ï ð ñ ò ó ô õ ö ÷ ø ù ú û ü ý þ ÿ
	set(0xe0, "aaaaaa.ceeeeiiii.nooooo.ouuuuy.y")
	// Latin Extended-A (U+0100…U+017F): runs of one base letter, in upper
	// and lower case pairs; ToLower has already made them lower.
	at := rune(0x100)
	for _, run := range []struct {
		base byte
		n    int
	}{{'a', 6}, {'c', 8}, {'d', 4}, {'e', 10}, {'g', 8}, {'h', 4}, {'i', 10}, {0, 2}, {'j', 2}, {'k', 3}, {'l', 10},
		{'n', 6}, {0, 3}, {'o', 6}, {0, 2}, {'r', 6}, {'s', 8}, {'t', 6}, {'u', 12}, {'w', 2}, {'y', 3}, {'z', 6}, {'s', 1}} {
		for range run.n {
			t[at-0xe0] = run.base
			at++
		}
	}
	return t
}()

// Stem is the Porter stem of one lower-case token, as FTS5's porter
// tokenizer makes it.
func Stem(tok string) string { return string(appendStem(nil, []byte(tok))) }

// appendStem appends the stem of tok to dst.
func appendStem(dst, tok []byte) []byte {
	if len(tok) > porterMaxToken || len(tok) < 3 {
		return append(dst, tok...)
	}
	start := len(dst)
	dst = append(dst, tok...)
	b := dst[start:]
	b = porterStep1(b)
	b = porterStep2(b)
	b = porterStep3(b)
	b = porterStep4(b)
	b = porterStep5(b)
	return dst[:start+len(b)]
}

func isVowel(c byte, yIsVowel bool) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || (yIsVowel && c == 'y')
}

// gobbleVC skips one vowel run then one consonant and returns the index
// after that consonant, or 0 when there is no such VC sequence.
func gobbleVC(s []byte, prevCons bool) int {
	cons := prevCons
	i := 0
	for ; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if !cons {
			break
		}
	}
	for i++; i < len(s); i++ {
		cons = !isVowel(s[i], cons)
		if cons {
			return i + 1
		}
	}
	return 0
}

// The measure conditions of the Porter rules, on the stem s.
func mGt0(s []byte) bool { return gobbleVC(s, false) != 0 }

func mGt1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) != 0
}

func mEq1(s []byte) bool {
	n := gobbleVC(s, false)
	return n != 0 && gobbleVC(s[n:], true) == 0
}

// oStar: the stem ends consonant-vowel-consonant, the last not w, x or y.
func oStar(s []byte) bool {
	last := s[len(s)-1]
	if last == 'w' || last == 'x' || last == 'y' {
		return false
	}
	mask, cons := 0, false
	for _, c := range s {
		cons = !isVowel(c, cons)
		mask <<= 1
		if cons {
			mask |= 1
		}
	}
	return mask&7 == 5
}

// hasVowel: the stem contains a vowel (y counts after the first letter).
func hasVowel(s []byte) bool {
	for i, c := range s {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

func hasSuffix(b []byte, suf string) bool {
	return len(b) > len(suf) && string(b[len(b)-len(suf):]) == suf
}

// rule is one suffix rule of a step: when b ends in suffix (and is longer
// than it) and cond holds for the stem before it, the suffix becomes repl.
// Within a step only the first rule whose suffix matches is considered,
// whether or not its condition holds.
type rule struct {
	suffix, repl string
	cond         func([]byte) bool
}

func applyRules(b []byte, rules []rule) []byte {
	for _, r := range rules {
		if hasSuffix(b, r.suffix) {
			stem := b[:len(b)-len(r.suffix)]
			if r.cond(stem) {
				return append(stem, r.repl...)
			}
			return b
		}
	}
	return b
}

// byPenult groups a step's rules by the last-but-one letter of their
// suffix, as FTS5 dispatches them.
type byPenult [256][]rule

func (m *byPenult) apply(b []byte) []byte {
	if len(b) < 2 {
		return b
	}
	return applyRules(b, m[b[len(b)-2]])
}

func porterStep1(b []byte) []byte {
	// 1a: plurals.
	if n := len(b); b[n-1] == 's' {
		if b[n-2] == 'e' {
			if (n > 4 && b[n-4] == 's' && b[n-3] == 's') || (n > 3 && b[n-3] == 'i') {
				b = b[:n-2]
			} else {
				b = b[:n-1]
			}
		} else if b[n-2] != 's' {
			b = b[:n-1]
		}
	}
	// 1b: -eed, -ed, -ing.
	removed := false
	if n := len(b); n >= 2 {
		switch b[n-2] {
		case 'e':
			if hasSuffix(b, "eed") {
				if mGt0(b[:n-3]) {
					b = b[:n-1]
				}
			} else if hasSuffix(b, "ed") && hasVowel(b[:n-2]) {
				b, removed = b[:n-2], true
			}
		case 'n':
			if hasSuffix(b, "ing") && hasVowel(b[:n-3]) {
				b, removed = b[:n-3], true
			}
		}
	}
	if removed {
		n := len(b)
		switch {
		case n > 2 && (hasSuffix(b, "at") || hasSuffix(b, "bl") || hasSuffix(b, "iz")):
			b = append(b, 'e')
		case n >= 2 && !isVowel(b[n-1], false) && b[n-1] != 'l' && b[n-1] != 's' && b[n-1] != 'z' && b[n-1] == b[n-2]:
			b = b[:n-1]
		case mEq1(b) && oStar(b):
			b = append(b, 'e')
		}
	}
	// 1c: y → i after a vowel.
	if n := len(b); b[n-1] == 'y' && hasVowel(b[:n-1]) {
		b[n-1] = 'i'
	}
	return b
}

var step2 = byPenult{
	'a': {{"ational", "ate", mGt0}, {"tional", "tion", mGt0}},
	'c': {{"enci", "ence", mGt0}, {"anci", "ance", mGt0}},
	'e': {{"izer", "ize", mGt0}},
	'g': {{"logi", "log", mGt0}},
	'l': {{"bli", "ble", mGt0}, {"alli", "al", mGt0}, {"entli", "ent", mGt0}, {"eli", "e", mGt0}, {"ousli", "ous", mGt0}},
	'o': {{"ization", "ize", mGt0}, {"ation", "ate", mGt0}, {"ator", "ate", mGt0}},
	's': {{"alism", "al", mGt0}, {"iveness", "ive", mGt0}, {"fulness", "ful", mGt0}, {"ousness", "ous", mGt0}},
	't': {{"aliti", "al", mGt0}, {"iviti", "ive", mGt0}, {"biliti", "ble", mGt0}},
}

var step3 = byPenult{
	'a': {{"ical", "ic", mGt0}},
	's': {{"ness", "", mGt0}},
	't': {{"icate", "ic", mGt0}, {"iciti", "ic", mGt0}},
	'u': {{"ful", "", mGt0}},
	'v': {{"ative", "", mGt0}},
	'z': {{"alize", "al", mGt0}},
}

func mGt1ST(s []byte) bool {
	return len(s) > 0 && (s[len(s)-1] == 's' || s[len(s)-1] == 't') && mGt1(s)
}

var step4 = byPenult{
	'a': {{"al", "", mGt1}},
	'c': {{"ance", "", mGt1}, {"ence", "", mGt1}},
	'e': {{"er", "", mGt1}},
	'i': {{"ic", "", mGt1}},
	'l': {{"able", "", mGt1}, {"ible", "", mGt1}},
	'n': {{"ant", "", mGt1}, {"ement", "", mGt1}, {"ment", "", mGt1}, {"ent", "", mGt1}},
	'o': {{"ion", "", mGt1ST}, {"ou", "", mGt1}},
	's': {{"ism", "", mGt1}},
	't': {{"ate", "", mGt1}, {"iti", "", mGt1}},
	'u': {{"ous", "", mGt1}},
	'v': {{"ive", "", mGt1}},
	'z': {{"ize", "", mGt1}},
}

func porterStep2(b []byte) []byte { return step2.apply(b) }
func porterStep3(b []byte) []byte { return step3.apply(b) }
func porterStep4(b []byte) []byte { return step4.apply(b) }

func porterStep5(b []byte) []byte {
	if n := len(b); b[n-1] == 'e' {
		if s := b[:n-1]; mGt1(s) || (mEq1(s) && !oStar(s)) {
			b = s
		}
	}
	if n := len(b); n > 1 && b[n-1] == 'l' && b[n-2] == 'l' && mGt1(b[:n-1]) {
		b = b[:n-1]
	}
	return b
}

// eachStem calls fn with the stem of every token of text, in a buffer fn
// must not keep; it returns the buffer for reuse.
func eachStem(text string, buf []byte, fn func(stem []byte)) []byte {
	return eachToken(text, buf, func(tok []byte) { fn(appendStem(tok[:0], tok)) })
}

// stemHash keys the recollection files' index: FNV-1a, 64 bits.
func stemHash(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// TermHash is the hash the files index a term (a Porter stem) by.
func TermHash(stem string) uint64 { return stemHash([]byte(stem)) }
