package minilm

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

//go:generate sh -c "python3 accents_gen.py && gofmt -w accents_table.go"

// tokenizer is the pipeline tokenizer.json describes for BERT uncased
// models, reproduced step by step from Hugging Face tokenizers:
//
//   - BertNormalizer: drop NUL, U+FFFD and control/format/unassigned
//     characters, turn whitespace into spaces, put spaces around CJK
//     ideographs, strip accents (canonical decomposition, nonspacing marks
//     dropped), lowercase;
//   - BertPreTokenizer: split on whitespace, and make every punctuation
//     character (Unicode P*, or any ASCII punctuation such as $ + < = > ^
//     ` | ~) a word of its own;
//   - WordPiece: greedy longest match from the start of each word, "##"
//     before pieces that continue a word, a word longer than maxChars
//     characters or with no full split becomes [UNK];
//   - [CLS] … [SEP], truncated so that the whole fits the token limit.
//
// Its tables live in the mapped runtime file.
type tokenizer struct {
	vocab         []byte
	offs          []uint32 // len vocabSize+1
	slots         []uint32 // id+1, 0 empty; power-of-two length
	cls, sep, unk int32
	maxChars      int
}

// encode appends to dst[:0] the ids of text, [CLS] and [SEP] included, at
// most maxTokens of them (maxTokens ≥ 2). word is scratch space.
func (tk *tokenizer) encode(dst []int32, word []byte, text string, maxTokens int) ([]int32, []byte) {
	dst = append(dst[:0], tk.cls)
	limit := maxTokens - 1 // room for [SEP]
	word = word[:0]
	chars := 0
	flush := func() {
		if len(word) > 0 {
			dst = tk.wordPiece(dst, word, chars)
			if len(dst) > limit {
				dst = dst[:limit]
			}
			word, chars = word[:0], 0
		}
	}
	// emit takes one normalized rune through the pre-tokenizer.
	emit := func(r rune) {
		if isBertPunct(r) {
			flush()
			word = utf8.AppendRune(word, r)
			chars = 1
			flush()
			return
		}
		word = utf8.AppendRune(word, r)
		chars++
	}
	for _, r := range text {
		if len(dst) >= limit {
			break
		}
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			continue
		case isWhitespace(r):
			flush()
			continue
		case isChinese(r):
			flush()
			emit(lower(r))
			flush()
			continue
		case r < 0x80:
			emit(lower(r))
			continue
		case unicode.Is(unicode.Mn, r):
			continue
		}
		if s, ok := stripAccent(r); ok {
			for _, x := range s {
				emit(lower(rune(x)))
			}
			continue
		}
		if r >= hangulBase && r < hangulBase+hangulCount {
			for _, x := range decomposeHangul(r) {
				if x != 0 {
					emit(x)
				}
			}
			continue
		}
		emit(lower(r))
	}
	flush()
	return append(dst, tk.sep), word
}

// wordPiece appends the pieces of one pre-tokenized word.
func (tk *tokenizer) wordPiece(dst []int32, word []byte, chars int) []int32 {
	if chars > tk.maxChars {
		return append(dst, tk.unk)
	}
	mark := len(dst)
	for start := 0; start < len(word); {
		end := len(word)
		id := int32(-1)
		for end > start {
			if id = tk.lookup(start > 0, word[start:end]); id >= 0 {
				break
			}
			_, n := utf8.DecodeLastRune(word[start:end])
			end -= n
		}
		if id < 0 {
			return append(dst[:mark], tk.unk)
		}
		dst = append(dst, id)
		start = end
	}
	return dst
}

// lookup finds the id of piece ("##"+piece when cont), or -1. A damaged
// table can only make it miss, never index outside the file.
func (tk *tokenizer) lookup(cont bool, piece []byte) int32 {
	mask := uint32(len(tk.slots) - 1)
	for i := pieceHash(cont, piece) & mask; ; i = (i + 1) & mask {
		s := tk.slots[i]
		if s == 0 || s > uint32(len(tk.offs)-1) {
			return -1
		}
		a, b := tk.offs[s-1], tk.offs[s]
		if a > b || b > uint32(len(tk.vocab)) {
			return -1
		}
		v := tk.vocab[a:b]
		if cont {
			if len(v) == len(piece)+2 && v[0] == '#' && v[1] == '#' && string(v[2:]) == string(piece) {
				return int32(s - 1)
			}
		} else if string(v) == string(piece) {
			return int32(s - 1)
		}
	}
}

// pieceHash is FNV-1a over the piece's bytes, "##" first when cont.
func pieceHash(cont bool, piece []byte) uint32 {
	h := uint32(2166136261)
	if cont {
		h = (h ^ '#') * 16777619
		h = (h ^ '#') * 16777619
	}
	for _, c := range piece {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func isWhitespace(r rune) bool { return unicode.IsSpace(r) }

// isControl is what BertNormalizer removes: categories Cc (except tab,
// newline, carriage return, which are whitespace), Cf, Co, Cs, and
// unassigned code points.
func isControl(r rune) bool {
	if r < 0x80 {
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
	}
	if unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// isChinese is BERT's "CJK ideograph" test (not Hangul, kana or CJK
// punctuation).
func isChinese(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF ||
		r >= 0x20000 && r <= 0x2A6DF || r >= 0x2A700 && r <= 0x2B73F ||
		r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

func isBertPunct(r rune) bool {
	if r < 0x80 {
		return r >= '!' && r <= '/' || r >= ':' && r <= '@' || r >= '[' && r <= '`' || r >= '{' && r <= '~'
	}
	return unicode.IsPunct(r)
}

func lower(r rune) rune {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(r)
}

// stripAccent returns what r becomes once decomposed without its
// nonspacing marks, if that differs from r.
func stripAccent(r rune) ([]uint32, bool) {
	i := sort.Search(len(accentRunes), func(i int) bool { return accentRunes[i] >= uint32(r) })
	if i == len(accentRunes) || accentRunes[i] != uint32(r) {
		return nil, false
	}
	return accentRepl[accentOffs[i]:accentOffs[i+1]], true
}

const (
	hangulBase  = 0xAC00
	hangulCount = 11172
)

// decomposeHangul splits a precomposed Hangul syllable into its conjoining
// jamo (the last is 0 when the syllable has no final consonant).
func decomposeHangul(r rune) [3]rune {
	s := r - hangulBase
	l, v, t := s/588, s%588/28, s%28
	out := [3]rune{0x1100 + l, 0x1161 + v, 0}
	if t != 0 {
		out[2] = 0x11A7 + t
	}
	return out
}
