package embed

import (
	"context"
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"
)

// LocalDim is the dimension of Local vectors: 384 rather than 256, from
// the study in dim_test.go (TestLocalDimensionStudy, 41 prompts against 30
// notes, 12 hash seeds). Feature hashing adds noise to every cosine of
// about 1/sqrt(dim): RMS 0.051 at 384 against 0.062 at 256, measured
// against collision-free sparse vectors. Related notes have cosines of
// 0.1–0.4 with a paraphrased prompt, so that noise decides rankings: mean
// reciprocal rank 0.93 at 384, 0.90 at 256, 0.96 without collisions. The
// cost stays small: 1.5 KB per stored vector, about a microsecond per
// cosine.
const LocalDim = 384

// localVersion changes whenever tokenisation, features, weights or hashing
// change, so that vectors of an older Local are never compared with new
// ones (the version is part of Name). TestLocalGolden fails when the
// output changes: bump this constant and regenerate the golden file.
const localVersion = 1

// Feature weights, relative to a word of five letters or more (1). A
// word's character n-grams together weigh ngramShare of the word itself in
// L2 terms, spread evenly over them, so that shared stems and typos earn
// partial credit. Bigrams are light: on the recall study in dim_test.go
// they rarely matched paraphrased prompts, and what does not match only
// adds hashing noise (bigram weight 0.7 → 0.4 and n-gram share 0.6 → 0.8
// raised MRR at 384 dimensions from 0.90 to 0.93).
const (
	bigramWeight   = 0.4
	compoundWeight = 0.8
	ngramShare     = 0.8
)

const maxNgramRunes = 32 // longer tokens are hashes, IDs or blobs: no n-grams

// Feature kinds, mixed into every feature hash so that the word "go", the
// n-gram "<go>" and a bigram never share a key.
const (
	kindWord     = 'w'
	kindBigram   = 'b'
	kindNgram    = 'n'
	kindCompound = 'c'
)

// Local embeds text as deterministic hashed lexical vectors: word unigrams,
// order-insensitive word bigrams, identifiers such as go-openai as a whole,
// and character 3- and 4-grams of each word, feature-hashed with a sign bit
// into LocalDim dimensions and L2-normalised. It needs no model, no network
// and no state, runs in microseconds, and is safe for concurrent use.
//
// Text without any content word (empty, only punctuation or stop words)
// gives the zero vector; Cosine with a zero vector is 0.
type Local struct {
	dim  int
	name string
	seed uint64 // 0 in production; the dimension study varies it
}

var _ Embedder = (*Local)(nil)

// NewLocal returns the local embedder.
func NewLocal() *Local { return newLocal(LocalDim) }

func newLocal(dim int) *Local {
	return &Local{dim: dim, name: fmt.Sprintf("local-v%d-%d", localVersion, dim)}
}

// Name is "local-v<version>-<dim>", e.g. "local-v1-384".
func (l *Local) Name() string { return l.name }

// Dim is LocalDim.
func (l *Local) Dim() int { return l.dim }

// Embed embeds each text. It never fails except when ctx is done.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*l.dim)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := flat[i*l.dim : (i+1)*l.dim : (i+1)*l.dim]
		l.embed(sc, t, v)
		out[i] = v
	}
	return out, nil
}

// EmbedText embeds one text; the convenience the prompt hook wants.
func (l *Local) EmbedText(text string) []float32 {
	v := make([]float32, l.dim)
	sc := scratchPool.Get().(*scratch)
	l.embed(sc, text, v)
	scratchPool.Put(sc)
	return v
}

// embed writes the vector of text into v (len l.dim, all zero).
func (l *Local) embed(sc *scratch, text string, v []float32) {
	sc.reset()
	tokenize(sc, text)
	sc.finish()
	dim := uint64(l.dim)
	for _, f := range sc.feats {
		key := f.key
		if l.seed != 0 {
			key = mix(key ^ l.seed)
		}
		// High 32 bits choose the dimension (multiply-shift, no modulo
		// bias worth the name), bit 31 the sign.
		idx := (key >> 32) * dim >> 32
		if key&(1<<31) != 0 {
			v[idx] -= f.w
		} else {
			v[idx] += f.w
		}
	}
	sc.release()
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// scratch is the per-call working memory, pooled so that embedding a text
// allocates only its output vector.
//
// Words, bigrams and identifiers go through a hash table first so that
// repeats get a sublinear term frequency. Character n-grams are made once
// per distinct word afterwards, weighted by that word's final weight: a
// repeated word does not repeat its n-grams, and n-grams never need the
// table.
type scratch struct {
	buf   []byte  // lower-cased bytes of the current identifier
	parts []int32 // offsets in buf where the identifier's parts start
	ends  []int32 // and end
	prev  uint64  // hash of the previous content word, 0 at a sentence start

	slots []entry   // open-addressing table: feature key → weights, count
	used  []int32   // occupied slots, in insertion order (keeps output deterministic)
	words []byte    // stemmed bytes of the distinct words that get n-grams
	feats []feature // finish's output: every feature with its final weight

	trace func(kind byte, text []byte) // tests only: sees every word, compound and bigram
}

type entry struct {
	key   uint64 // 0 means empty
	sum   float32
	n     uint32
	woff  uint32 // word bytes in scratch.words, for n-grams
	wlen  uint16 // 0: no n-grams
	runes uint16
}

type feature struct {
	key uint64
	w   float32
}

// weight is the mean weight of the feature's occurrences times the
// sublinear term frequency 1+ln(tf).
func (e *entry) weight() float32 {
	if e.n <= 1 {
		return e.sum
	}
	return float32(float64(e.sum) / float64(e.n) * (1 + math.Log(float64(e.n))))
}

const (
	initialSlots   = 1024 // power of two; grows by doubling at half load
	maxPooledSlots = 1 << 15
	maxPooledBuf   = 1 << 16
)

var scratchPool = sync.Pool{New: func() any {
	return &scratch{
		buf:   make([]byte, 0, 256),
		parts: make([]int32, 0, 16),
		ends:  make([]int32, 0, 16),
		slots: make([]entry, initialSlots),
		used:  make([]int32, 0, initialSlots/2),
		words: make([]byte, 0, 1024),
		feats: make([]feature, 0, 1024),
	}
}}

func (sc *scratch) reset() {
	sc.buf, sc.parts, sc.ends, sc.prev = sc.buf[:0], sc.parts[:0], sc.ends[:0], 0
	sc.words, sc.feats = sc.words[:0], sc.feats[:0]
}

// release clears the table for the next text and drops buffers a huge
// text grew, so that the pool does not keep megabytes.
func (sc *scratch) release() {
	for _, slot := range sc.used {
		sc.slots[slot] = entry{}
	}
	sc.used = sc.used[:0]
	if len(sc.slots) > maxPooledSlots {
		sc.slots, sc.used = make([]entry, initialSlots), make([]int32, 0, initialSlots/2)
	}
	if cap(sc.buf) > maxPooledBuf {
		sc.buf = make([]byte, 0, 256)
	}
	if cap(sc.words) > maxPooledBuf {
		sc.words = make([]byte, 0, 1024)
	}
	if cap(sc.feats) > maxPooledSlots {
		sc.feats = make([]feature, 0, 1024)
	}
}

// add accumulates weight w for the feature key and returns its entry,
// valid until the next add.
func (sc *scratch) add(key uint64, w float32) *entry {
	if key == 0 {
		key = 1
	}
	if 2*(len(sc.used)+1) > len(sc.slots) {
		sc.grow()
	}
	mask := uint64(len(sc.slots) - 1)
	for i := key & mask; ; i = (i + 1) & mask {
		e := &sc.slots[i]
		if e.key == key {
			e.sum += w
			e.n++
			return e
		}
		if e.key == 0 {
			*e = entry{key: key, sum: w, n: 1}
			sc.used = append(sc.used, int32(i))
			return e
		}
	}
}

func (sc *scratch) grow() {
	old := sc.slots
	sc.slots = make([]entry, 2*len(old))
	mask := uint64(len(sc.slots) - 1)
	for j, slot := range sc.used {
		e := old[slot]
		i := e.key & mask
		for sc.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		sc.slots[i] = e
		sc.used[j] = int32(i)
	}
}

// finish turns the table into sc.feats: each entry with its final weight,
// followed for words by their character n-grams.
func (sc *scratch) finish() {
	for _, slot := range sc.used {
		e := &sc.slots[slot]
		w := e.weight()
		sc.feats = append(sc.feats, feature{e.key, w})
		if e.wlen > 0 {
			sc.ngrams(sc.words[e.woff:e.woff+uint32(e.wlen)], int(e.runes), w)
		}
	}
}

// ngrams appends the character 3- and 4-grams of "<w>": 2·runes-1 of them,
// weighted so that together they weigh ngramShare·w in L2 terms.
func (sc *scratch) ngrams(w []byte, runes int, weight float32) {
	nw := ngramShare * weight * invSqrt[2*runes-1]
	var g [4*maxNgramRunes + 2]byte // "<w>"
	var off [maxNgramRunes + 3]int  // where each rune of "<w>" starts, then the end
	g[0] = '<'
	copy(g[1:], w)
	g[len(w)+1] = '>'
	n := 1 // off[0] = 0: '<'
	for i := range string(w) {
		off[n] = i + 1
		n++
	}
	off[n] = len(w) + 1 // '>'
	off[n+1] = len(w) + 2
	units := n + 1 // runes of "<w>"
	for size := 3; size <= 4; size++ {
		for s := 0; s+size <= units; s++ {
			h := uint64(fnvOffset)
			h = (h ^ kindNgram) * fnvPrime
			for _, c := range g[off[s]:off[s+size]] {
				h = (h ^ uint64(c)) * fnvPrime
			}
			sc.feats = append(sc.feats, feature{mix(h), nw})
		}
	}
}

// tokenize scans text and feeds every feature to sc.add.
//
// A token is a run of letters and digits. Runs joined by '-', '_', '.' or
// '/' (go-openai, table_driven, internal/embed/local.go, v1.43.0) form one
// identifier: the identifier is a feature of its own and each run is a
// word; a lower-to-upper case change (CreateEmbeddings) also splits words.
// Han, Hiragana and Katakana characters are words on their own (those
// scripts do not separate words with spaces), so their bigrams carry the
// meaning. Sentence punctuation ends the bigram chain.
func tokenize(sc *scratch, text string) {
	inToken := false
	prevLower := false
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf && inToken && asciiLowerDigit[c] {
			// Fast path: the middle of a lower-case ASCII word.
			sc.buf = append(sc.buf, c)
			prevLower = c >= 'a'
			i++
			continue
		}
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		switch {
		case isAlnum(r):
			if r >= 0x2E80 && isCJK(r) {
				if inToken {
					flushToken(sc)
				}
				sc.buf = utf8.AppendRune(sc.buf, r)
				sc.parts = append(sc.parts, 0)
				sc.ends = append(sc.ends, int32(len(sc.buf)))
				flushToken(sc)
				inToken, prevLower = false, false
				continue
			}
			upper := unicode.IsUpper(r)
			if !inToken {
				inToken = true
				sc.parts = append(sc.parts, int32(len(sc.buf)))
			} else if upper && prevLower {
				sc.ends = append(sc.ends, int32(len(sc.buf)))
				sc.parts = append(sc.parts, int32(len(sc.buf)))
			}
			prevLower = !upper && unicode.IsLetter(r)
			if r < utf8.RuneSelf {
				b := byte(r)
				if 'A' <= b && b <= 'Z' {
					b += 'a' - 'A'
				}
				sc.buf = append(sc.buf, b)
			} else {
				sc.buf = utf8.AppendRune(sc.buf, unicode.ToLower(r))
			}
		case inToken && isJoiner(r) && i < len(text) && nextIsAlnum(text[i:]):
			sc.ends = append(sc.ends, int32(len(sc.buf)))
			sc.buf = append(sc.buf, byte(r))
			sc.parts = append(sc.parts, int32(len(sc.buf)))
			prevLower = false
		default:
			if inToken {
				flushToken(sc)
				inToken, prevLower = false, false
			}
			if isSentenceEnd(r) {
				sc.prev = 0
			}
		}
	}
	if inToken {
		flushToken(sc)
	}
}

var asciiLowerDigit = func() (t [utf8.RuneSelf]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	return t
}()

func isAlnum(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}

func isJoiner(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' }

func isSentenceEnd(r rune) bool {
	return r == '.' || r == '!' || r == '?' || r == ';' || r == '\n' || r == '。'
}

func nextIsAlnum(s string) bool {
	r := rune(s[0])
	if r >= utf8.RuneSelf {
		r, _ = utf8.DecodeRuneInString(s)
	}
	return isAlnum(r) && !(r >= 0x2E80 && isCJK(r))
}

// flushToken emits the features of the identifier in sc.buf and clears it.
func flushToken(sc *scratch) {
	if len(sc.ends) < len(sc.parts) {
		sc.ends = append(sc.ends, int32(len(sc.buf)))
	}
	if len(sc.parts) > 1 {
		sc.add(hashBytes(kindCompound, sc.buf), compoundWeight)
		if sc.trace != nil {
			sc.trace(kindCompound, sc.buf)
		}
	}
	for p, start := range sc.parts {
		word(sc, sc.buf[start:sc.ends[p]])
	}
	sc.buf, sc.parts, sc.ends = sc.buf[:0], sc.parts[:0], sc.ends[:0]
}

// word emits the features of one lower-cased word. It may rewrite w in
// place (stemming).
func word(sc *scratch, w []byte) {
	if isStopWord(w) {
		return
	}
	digits := true
	for _, b := range w {
		if b < '0' || b > '9' {
			digits = false
			break
		}
	}
	if !digits {
		w = stem(w)
	}
	runes := utf8.RuneCount(w)
	h := hashBytes(kindWord, w)
	e := sc.add(h, wordWeight(runes))
	if e.n == 1 && !digits && runes >= 3 && runes <= maxNgramRunes {
		// First occurrence of a word that gets n-grams (numbers do not:
		// 2024 and 2025 are not related).
		e.woff, e.wlen, e.runes = uint32(len(sc.words)), uint16(len(w)), uint16(runes)
		sc.words = append(sc.words, w...)
	}
	if sc.trace != nil {
		sc.trace(kindWord, w)
	}
	if sc.prev != 0 && sc.prev != h {
		a, b := sc.prev, h
		if a > b {
			a, b = b, a
		}
		sc.add(mix(a^bits(b, 23)^kindBigram), bigramWeight)
		if sc.trace != nil {
			sc.trace(kindBigram, nil)
		}
	}
	sc.prev = h
}

// wordWeight is a cheap IDF proxy: short words are common, so they weigh
// less.
func wordWeight(runes int) float32 {
	if runes >= 5 {
		return 1
	}
	return 0.3 + 0.15*float32(runes)
}

var invSqrt = func() (t [2*maxNgramRunes + 1]float32) {
	for i := 1; i < len(t); i++ {
		t[i] = float32(1 / math.Sqrt(float64(i)))
	}
	return t
}()

// stem strips plural, -ing and -ed endings and a final e, in place, so that
// test/tests/testing/tested and use/uses/using/used meet. It is deliberately
// simple and deterministic rather than linguistically right: both sides of
// a comparison go through the same rules.
func stem(w []byte) []byte {
	n := len(w)
	if n <= 3 {
		if n == 3 && w[2] == 'e' {
			return w[:2]
		}
		return w
	}
	switch {
	case n > 4 && hasSuffix(w, "ies"):
		w[n-3] = 'y'
		w = w[:n-2]
	case hasSuffix(w, "sses"):
		w = w[:n-2]
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case w[n-1] == 's':
		w = w[:n-1]
	}
	n = len(w)
	switch {
	case n > 4 && hasSuffix(w, "ing") && hasVowel(w[:n-3]):
		w = undouble(w[:n-3])
	case n > 3 && hasSuffix(w, "ed") && w[n-3] != 'e' && hasVowel(w[:n-2]) && !edWord(w):
		w = undouble(w[:n-2])
	}
	if n = len(w); n >= 3 && w[n-1] == 'e' {
		w = w[:n-1]
	}
	return w
}

// edWord reports words whose "ed" is not an ending, among those the
// rules would otherwise cut (embed would become emb while embedded and
// embedding become embed).
func edWord(w []byte) bool {
	switch string(w) {
	case "embed", "hundred", "naked", "wicked", "sacred", "kindred":
		return true
	}
	return false
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func hasVowel(w []byte) bool {
	for _, b := range w {
		switch b {
		case 'a', 'e', 'i', 'o', 'u', 'y':
			return true
		}
	}
	return false
}

// undouble turns "runn" (from running) into "run", but leaves ll, ss, zz
// (falling, missed) and stems that would become too short (added).
func undouble(w []byte) []byte {
	n := len(w)
	if n >= 4 && w[n-1] == w[n-2] {
		switch w[n-1] {
		case 'l', 's', 'z', 'a', 'e', 'i', 'o', 'u':
		default:
			return w[:n-1]
		}
	}
	return w
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashBytes is FNV-1a over kind and b, finished by mix.
func hashBytes(kind byte, b []byte) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(kind)) * fnvPrime
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return mix(h)
}

// mix is the splitmix64 finaliser: FNV-1a's high bits, which choose the
// dimension, are weak for short inputs.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func bits(x uint64, k uint) uint64 { return x<<k | x>>(64-k) }

// isStopWord reports the words removed before any feature is made.
// Negations are among them: a bag of words cannot use them, and they are
// frequent.
func isStopWord(w []byte) bool {
	if len(w) > 7 {
		return false
	}
	switch string(w) {
	case "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any",
		"are", "aren", "as", "at", "be", "because", "been", "before", "being", "below",
		"between", "both", "but", "by", "can", "could", "couldn", "d", "did", "didn", "do",
		"does", "doesn", "doing", "don", "down", "during", "each", "else", "etc", "few",
		"for", "from", "further", "had", "has", "have", "having", "he", "her", "here",
		"hers", "him", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its",
		"just", "let", "ll", "m", "me", "might", "more", "most", "must", "my", "no", "nor",
		"not", "now", "of", "off", "ok", "okay", "on", "once", "only", "or", "other", "our",
		"ours", "out", "over", "own", "please", "re", "s", "same", "shall", "she", "should",
		"shouldn", "so", "some", "such", "t", "than", "that", "the", "their", "them", "then",
		"there", "these", "they", "this", "those", "through", "to", "too", "under", "until",
		"up", "us", "ve", "very", "was", "wasn", "we", "were", "weren", "what", "when",
		"where", "which", "while", "who", "whom", "why", "will", "with", "won", "would",
		"wouldn", "yes", "you", "your", "yours":
		return true
	}
	return false
}
