// Package recall finds the memories and beliefs that matter for a prompt.
// The worker precomputes recollection files (per project, one for global
// scope, and per active session) and a search index of every episode
// (index segments, Index), in a compact binary format; the prompt hook
// loads them in microseconds, searches the index for the prompt's rarer
// terms, scores everything with one blend, gates it (the hand-set gate,
// then the policy's fitted one) and formats the bites. The CLI's recall
// and the MCP server run the same engine (Recaller.Find), on the same
// index brought up to date first.
package recall

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/engram-memory/engram/internal/embed"
)

// Item kinds.
const (
	KindEpisode = 'E'
	KindBelief  = 'B'
)

// Item is one candidate memory: an episode or a belief.
type Item struct {
	Kind byte
	ID   string
	Text string // an episode's summary or a belief's statement
	// Detail is an episode's full context when it is short enough to be
	// the bite itself (a conversational exchange); empty otherwise.
	Detail      string
	Project     string
	ProjectPath string
	At          time.Time // when it happened (episodes) or was last reinforced (beliefs)
	Importance  float32
	Confidence  float32 // beliefs
	Evidence    int32   // beliefs
	AccessCount int32
	LastAccess  time.Time
	Stability   float32
	Scope       string // an episode's: "project" or "global" ("" when unknown)
	SessionID   string // an episode's session
	// Seq is an episode's rowid in the store (search index segments only;
	// 0 elsewhere): the index's order.
	Seq int64
	// Terms is more text that the item's postings come from without being
	// stored (the index's: an episode's full context and entities, as the
	// store's FTS index covers them).
	Terms string
	// Vec is the local embedder's vector (nil when unknown). It is stored
	// quantised to int8 with the inverse of the quantised vector's length:
	// a quarter of the bytes to read on every prompt, at a cosine error far
	// below what ranking can notice.
	Vec     []float32
	q8      []int8
	invNorm float32
	// Stated marks an episode in which the user stated something to keep
	// (a preference, a correction, a decision, a fact about the project,
	// their own situation), as the extractor or its wording says: few,
	// explicit, and what a question most often needs. Beliefs are stated
	// by nature. (Version 5.)
	Stated bool
	// Superseded marks an episode a correction replaced (episode
	// LifecycleSuperseded): recalled below what replaced it and shown
	// labelled, never as current.
	Superseded bool
	// Replaced is what superseded it, in the correcting user's words
	// (Replacement), and ReplacedAt when: a bite is labelled with them.
	// Both are zero when the correction is not known (only its time, or an
	// imported mark) or was forgotten. Stored with flagReplaced.
	Replaced   string
	ReplacedAt time.Time
	// Dense is the sentence embedder's vector (File.Dense names it; nil
	// when the item has none), stored like Vec as int8 with an inverse
	// length, plus its signs as bits: a first pass over a whole index
	// compares bits, and only the closest items are compared in full.
	Dense    []float32
	d8       []int8
	dInvNorm float32
}

// File is one recollection file.
type File struct {
	Embedder string // name of the embedder the vectors come from
	// Dense names the sentence embedder of the items' Dense vectors ("":
	// none). The prompt hook compares them with the prompt's vector only
	// when it has the same embedder.
	Dense       string
	CreatedAt   time.Time
	Scope       string // "project", "global" or "session"
	ProjectPath string
	SessionID   string
	Items       []Item
	// Docs is how many episodes the store held when the file was built, and
	// Common the terms (Porter stems, as the FTS index holds them) found in
	// the most of them, with their counts: the prompt's terms are weighted
	// by rarity, and those in StopDocs episodes or more are too common to
	// narrow a query (bm25 scores every match it ranks) or to make a memory
	// relevant. StopDocs 0: no stop terms.
	Docs     int
	StopDocs int
	Common   []TermDocs
	// Vocab holds every term of the store's index (the global file's only;
	// nil elsewhere): when it holds no term of a prompt, the prompt hook
	// does not search (see Recaller.SkipUnknown).
	Vocab *Bloom
	// Dels lists the seqs a search index segment deletes: an older segment's
	// episode with one of them is gone (ascending; segments only).
	Dels []int64
}

// TermDocs is an indexed term of the episodes (a Porter stem, as the FTS
// index holds it) and the number of episodes that contain it.
type TermDocs struct {
	Term string
	Docs int
}

const magic = "ENGRAMRC"

// version of the binary format; a reader treats any other as empty.
// Version 5 adds the dense vectors; a version 4 file reads as one without.
const (
	version    = 5
	minVersion = 4
)

// MaxFileSize bounds a recollection file: the readers refuse a larger one,
// and the writers never write one (checkSize is the test both use). The
// search index's writer cuts its segments to fit (Builder.TryAdd).
const MaxFileSize = 64 << 20

// Record flags (version 5).
const (
	flagStated     = 1
	flagSuperseded = 2 // a correction replaced what it says: shown as such
	// flagReplaced: the record goes on with Replaced and ReplacedAt. A
	// reader that does not know the flag reads the record without them
	// (records are found by offset, never read in sequence).
	flagReplaced = 4
)

// ErrFormat marks a file that is not a valid recollection file.
var ErrFormat = errors.New("recall: bad recollection file")

// The file holds a header, then fixed-size tables the prompt hook reads in
// place without decoding the file:
//
//	header      magic, version, embedder, creation time, scope, project, session,
//	            Docs, StopDocs, the smallest count of a common term, then the
//	            common terms: (hash, count) pairs sorted by hash and the terms
//	            themselves; a Bloom filter of every term (global file only);
//	            item count n, vector dimension d, index size k, deletions m
//	offsets     n × uint32: where each item's record starts in records
//	norms       n × float32: 1/|q| of each item's int8 vector (0: none)
//	vectors     n × d int8
//	seqs        n × int64: each item's seq in the store (0 but in segments)
//	dense       (version 5) the dense embedder's name and dimension e, then
//	            n × float32 inverse norms (0: none), n × ⌈e/64⌉ × uint64
//	            sign bits, n × e int8
//	dels        m × int64: the seqs a segment deletes, ascending
//	keys        k × uint64, ascending: hashes of the stems of the items' text
//	postings    (k+1) × uint32 offsets, then per key the ascending item
//	            numbers, delta-coded as uvarints
//	records     per item: kind, id, text, detail, project, project path,
//	            times, importance, confidence, evidence, access count,
//	            stability, scope, session, flags (version 5: stated, superseded,
//	            replaced), then what replaced it and when (flag replaced)
//
// So a prompt costs a mapping of the file, a binary search per term, and
// the decoding of the few items its terms lead to.

// Encode serialises f (see Builder).
func (f *File) Encode() []byte {
	b := NewBuilder(f)
	for _, it := range f.Items {
		b.Add(it)
	}
	return b.Bytes()
}

// SigWords is the number of 64-bit words of a signature of dim dimensions.
func SigWords(dim int) int { return (dim + 63) / 64 }

// Signature is the signs of a vector as bits (bit set: positive): the
// Hamming distance of two signatures estimates the angle between the
// vectors, at one XOR and one population count per 64 dimensions.
func Signature(v []float32) []uint64 {
	sig := make([]uint64, SigWords(len(v)))
	for i, x := range v {
		if x > 0 {
			sig[i/64] |= 1 << (i % 64)
		}
	}
	return sig
}

// quantize maps a vector to int8 (v[i] ≈ q[i] × max|v|/127) and returns
// the inverse length of q, so that a cosine with q is one dot product.
func quantize(v []float32) ([]int8, float32) {
	var maxAbs float32
	for _, x := range v {
		if x < 0 {
			x = -x
		}
		if x > maxAbs {
			maxAbs = x
		}
	}
	if maxAbs == 0 {
		return nil, 0
	}
	scale := maxAbs / 127
	q := make([]int8, len(v))
	var norm float64
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
		norm += float64(q[i]) * float64(q[i])
	}
	return q, float32(1 / math.Sqrt(norm))
}

// View is a recollection file read in place: its tables are slices of the
// file's bytes, and an item is decoded only when asked for.
type View struct {
	Embedder    string
	CreatedAt   time.Time
	Scope       string
	ProjectPath string
	SessionID   string
	Docs        int
	StopDocs    int
	// MinCommonDocs is the smallest count among the common terms: a term
	// not among them is in fewer episodes (0 when the file lists none).
	MinCommonDocs int

	common  []byte // (hash, count) pairs, 12 bytes each, by hash
	names   []byte // the common terms, in the same order
	vocab   []byte // Bloom filter bits of every term of the store (or none)
	vocabK  int
	n, dim  int
	offsets []byte
	norms   []byte
	vecs    []byte
	seqs    []byte // n × int64: each item's seq (segments: ascending)
	version int
	// Dense names the embedder of the dense vectors ("" without), of
	// denseDim dimensions: dnorms n × float32, dsigs n × sigWords × uint64,
	// dvecs n × denseDim int8.
	Dense    string
	denseDim int
	sigWords int
	dnorms   []byte
	dsigs    []byte
	dvecs    []byte
	dels     []byte // m × int64, ascending: the seqs the segment deletes
	keys     []byte
	postOffs []byte
	posts    []byte
	records  []byte
	unmap    func() error // releases a mapped file; nil when data is on the heap
	// file is the mapped file, kept open when it has dense vectors:
	// denseCosines reads them at dvecsOff rather than through the mapping.
	file     *os.File
	dvecsOff int64
	size     int // the file's bytes
}

// Decode parses a whole recollection file, every item included. The
// result does not share data.
func Decode(data []byte) (*File, error) {
	v, err := DecodeView(data)
	if err != nil {
		return nil, err
	}
	f := &File{Embedder: v.Embedder, Dense: v.Dense, CreatedAt: v.CreatedAt, Scope: v.Scope, ProjectPath: v.ProjectPath,
		SessionID: v.SessionID, Docs: v.Docs, StopDocs: v.StopDocs}
	r := reader{b: v.names}
	for i := 0; i < len(v.common)/12 && r.err == nil; i++ {
		f.Common = append(f.Common, TermDocs{Term: r.str(), Docs: int(binary.LittleEndian.Uint32(v.common[12*i+8:]))})
	}
	if r.err != nil {
		return nil, r.err
	}
	for i := 0; i < len(v.dels)/8; i++ {
		f.Dels = append(f.Dels, int64(binary.LittleEndian.Uint64(v.dels[8*i:])))
	}
	if v.vocabK > 0 && len(v.vocab) > 0 {
		f.Vocab = &Bloom{Bits: slices.Clone(v.vocab), K: v.vocabK}
	}
	f.Items = make([]Item, 0, v.n)
	for i := range v.n {
		it, err := v.Item(i)
		if err != nil {
			return nil, err
		}
		it.detach()
		if it.dInvNorm != 0 {
			it.Dense = dequantize(it.d8)
		}
		f.Items = append(f.Items, it)
	}
	return f, nil
}

// DecodeView reads a recollection file's header and the places of its
// tables, without looking at their contents: every access through the view
// is bounds-checked instead, so a damaged file gives errors or wrong
// answers, never a crash. data must not change while the view is in use.
func DecodeView(data []byte) (*View, error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: no magic", ErrFormat)
	}
	r := reader{b: data[len(magic):]}
	ver := r.uvarint()
	if ver < minVersion || ver > version {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, ver)
	}
	v := &View{version: int(ver), size: len(data)}
	v.Embedder = r.str()
	v.CreatedAt = fromMS(r.varint())
	v.Scope = r.str()
	v.ProjectPath = r.str()
	v.SessionID = r.str()
	v.Docs = r.count(0)
	v.StopDocs = r.count(0)
	v.MinCommonDocs = r.count(0)
	v.common = r.take(12 * r.count(12))
	v.names = r.take(r.count(1))
	if v.vocabK = r.count(0); v.vocabK > maxBloomProbes {
		// A damaged count would make every MayHold loop for seconds.
		r.fail("bloom probes")
	}
	v.vocab = r.take(r.count(1))
	v.n = r.count(4)
	v.dim = r.count(0)
	k := r.count(12)
	m := r.count(8)
	v.offsets = r.take(4 * v.n)
	v.norms = r.take(4 * v.n)
	if v.dim > 0 && v.n > len(r.b)/v.dim {
		r.fail("vectors")
	}
	v.vecs = r.take(v.n * v.dim)
	v.seqs = r.take(8 * v.n)
	if ver >= 5 {
		v.Dense = r.str()
		v.denseDim = r.count(0)
		if v.denseDim > 0 {
			if v.n > len(r.b)/(v.denseDim+4) {
				r.fail("dense vectors")
			}
			v.sigWords = SigWords(v.denseDim)
			v.dnorms = r.take(4 * v.n)
			v.dsigs = r.take(8 * v.sigWords * v.n)
			v.dvecs = r.take(v.denseDim * v.n)
			if len(v.dvecs) > 0 {
				v.dvecsOff = int64(uintptr(unsafe.Pointer(unsafe.SliceData(v.dvecs))) - uintptr(unsafe.Pointer(unsafe.SliceData(data))))
			}
		} else {
			v.Dense = ""
		}
	}
	v.dels = r.take(8 * m)
	v.keys = r.take(8 * k)
	v.postOffs = r.take(4 * (k + 1))
	v.posts = r.take(r.count(1))
	v.records = r.take(r.count(1))
	if r.err != nil {
		return nil, r.err
	}
	return v, nil
}

// Close releases the file's memory; the view, and items decoded from it
// and not detached, must not be used afterwards.
func (v *View) Close() error {
	if v == nil || v.unmap == nil {
		return nil
	}
	err := v.unmap()
	v.unmap = nil
	return err
}

// Len is the number of items.
func (v *View) Len() int { return v.n }

// Size is the file's size in bytes.
func (v *View) Size() int { return v.size }

// Item decodes item i. Its strings share the view's bytes.
func (v *View) Item(i int) (Item, error) {
	var it Item
	if i < 0 || i >= v.n {
		return it, fmt.Errorf("%w: item %d of %d", ErrFormat, i, v.n)
	}
	off := binary.LittleEndian.Uint32(v.offsets[4*i:])
	if int(off) >= len(v.records) {
		return it, fmt.Errorf("%w: item %d at %d", ErrFormat, i, off)
	}
	r := reader{b: v.records[off:], alias: true}
	it.Kind = r.byte()
	it.ID = r.str()
	it.Text = r.str()
	it.Detail = r.str()
	it.Project = r.str()
	it.ProjectPath = r.str()
	it.At = fromMS(r.varint())
	it.Importance = r.f32()
	it.Confidence = r.f32()
	it.Evidence = int32(r.varint())
	it.AccessCount = int32(r.varint())
	it.LastAccess = fromMS(r.varint())
	it.Stability = r.f32()
	it.Scope = r.str()
	it.SessionID = r.str()
	if v.version >= 5 {
		flags := r.byte()
		it.Stated, it.Superseded = flags&flagStated != 0, flags&flagSuperseded != 0
		if flags&flagReplaced != 0 {
			it.Replaced = r.str()
			it.ReplacedAt = fromMS(r.varint())
		}
	}
	it.Seq = v.Seq(i)
	if r.err != nil {
		return Item{}, r.err
	}
	if inv := v.invNorm(i); inv != 0 {
		it.q8 = v.vec(i)
		it.invNorm = inv
	}
	if inv := v.denseInvNorm(i); inv != 0 {
		it.d8 = v.denseVec(i)
		it.dInvNorm = inv
	}
	return it, nil
}

// HasDense reports whether the file carries dense vectors.
func (v *View) HasDense() bool { return v.denseDim > 0 }

// DenseDim is the dimension of the dense vectors (0 without).
func (v *View) DenseDim() int { return v.denseDim }

func (v *View) denseInvNorm(i int) float32 {
	if v.denseDim == 0 || i < 0 || i >= v.n {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(v.dnorms[4*i:]))
}

// denseVec is item i's int8 dense vector, in place.
func (v *View) denseVec(i int) []int8 {
	b := v.dvecs[i*v.denseDim : (i+1)*v.denseDim]
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

// DenseCos is the cosine between item i's dense vector and q (an
// L2-normalised vector of the file's dense embedder); 0 when the item has
// none or sizes differ.
func (v *View) DenseCos(i int, q []float32) float32 {
	inv := v.denseInvNorm(i)
	if inv == 0 || len(q) != v.denseDim {
		return 0
	}
	return cosQ8(v.denseVec(i), inv, q)
}

// cosQ8 is the cosine of an int8 vector whose inverse norm is inv with the
// L2-normalised q (0 when inv is: no vector).
func cosQ8(vec []int8, inv float32, q []float32) float32 {
	if inv == 0 {
		return 0
	}
	return dotQ8(vec, q) * inv
}

// denseCosines sets out[k] to the cosine between item items[k]'s dense
// vector and q, as DenseCos. A mapped file's vectors are read with pread,
// not through the mapping: the items a query compares are scattered
// through a segment, and the first touch of a mapped page maps its
// neighbours too (the kernel's fault-around), so that the 2,048 vectors of
// a query mapped, and at exit unmapped, nearly every page of the vectors
// of an index of 100,000 memories: most of the growth of the prompt hook's
// time with the store. Runs of consecutive items are one read.
func (v *View) denseCosines(items []int32, q []float32, out []float32) {
	dim := v.denseDim
	if v.file == nil || dim == 0 || len(q) != dim {
		for k, i := range items {
			out[k] = v.DenseCos(int(i), q)
		}
		return
	}
	order := make([]int, len(items))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(items[a], items[b]) })
	const maxRun = 64
	buf := make([]byte, maxRun*dim)
	for start := 0; start < len(order); {
		first := int(items[order[start]])
		end := start + 1
		for end < len(order) && end-start < maxRun && int(items[order[end]]) == first+(end-start) {
			end++
		}
		run := buf[:(end-start)*dim]
		read := first >= 0 && first+(end-start) <= v.n
		if read {
			_, err := v.file.ReadAt(run, v.dvecsOff+int64(first)*int64(dim))
			read = err == nil
		}
		for k := start; k < end; k++ {
			i := int(items[order[k]])
			if !read { // out of range, or the read failed: through the mapping
				out[order[k]] = v.DenseCos(i, q)
				continue
			}
			b := run[(k-start)*dim : (k-start+1)*dim]
			out[order[k]] = cosQ8(unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), dim), v.denseInvNorm(i), q)
		}
		start = end
	}
}

// dequantize turns an int8 vector back into an L2-normalised float one.
func dequantize(q []int8) []float32 {
	out := make([]float32, len(q))
	var n float64
	for i, x := range q {
		out[i] = float32(x)
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range out {
			out[i] *= inv
		}
	}
	return out
}

func (v *View) invNorm(i int) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(v.norms[4*i:]))
}

// vec is item i's int8 vector, in place.
func (v *View) vec(i int) []int8 {
	if v.dim == 0 {
		return nil
	}
	b := v.vecs[i*v.dim : (i+1)*v.dim]
	return unsafe.Slice((*int8)(unsafe.Pointer(&b[0])), len(b))
}

// Cos is the cosine between item i's vector and q (an L2-normalised vector
// of the file's embedder); 0 when the item has none or sizes differ.
func (v *View) Cos(i int, q []float32) float32 {
	inv := v.invNorm(i)
	if inv == 0 || len(q) != v.dim {
		return 0
	}
	return dotQ8(v.vec(i), q) * inv
}

// TermDocs is the number of episodes holding a term (a stem) when it is one
// of the store's most common terms; 0 otherwise.
func (v *View) TermDocs(stem string) int {
	if i := findKey(v.common, 12, stemHash([]byte(stem))); i >= 0 {
		return int(binary.LittleEndian.Uint32(v.common[12*i+8:]))
	}
	return 0
}

// findKey is the index of the record of table (records of stride bytes,
// sorted by the little-endian uint64 they start with) that starts with h,
// or -1.
func findKey(table []byte, stride int, h uint64) int {
	n := len(table) / stride
	i, j := 0, n
	for i < j {
		m := int(uint(i+j) >> 1)
		if binary.LittleEndian.Uint64(table[stride*m:]) < h {
			i = m + 1
		} else {
			j = m
		}
	}
	if i < n && binary.LittleEndian.Uint64(table[stride*i:]) == h {
		return i
	}
	return -1
}

// Seq is item i's seq in the store (0 outside search index segments).
func (v *View) Seq(i int) int64 {
	if i < 0 || i >= len(v.seqs)/8 {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(v.seqs[8*i:]))
}

// HasVocab reports whether the file carries the store's vocabulary.
func (v *View) HasVocab() bool { return v.vocabK > 0 && len(v.vocab) > 0 }

// MayHold reports whether some episode may hold the stem with hash h: false
// means none did when the file was written. Without a vocabulary, true.
func (v *View) MayHold(h uint64) bool { return mayHold(v.vocab, v.vocabK, h) }

// Postings calls fn with every item whose text holds the stem with hash h.
func (v *View) Postings(h uint64, fn func(item int)) {
	i := findKey(v.keys, 8, h)
	if i < 0 {
		return
	}
	from, to := binary.LittleEndian.Uint32(v.postOffs[4*i:]), binary.LittleEndian.Uint32(v.postOffs[4*(i+1):])
	if from > to || int(to) > len(v.posts) {
		return
	}
	p := v.posts[from:to]
	item := uint64(0)
	for first := true; len(p) > 0; first = false {
		d, n := binary.Uvarint(p)
		if n <= 0 {
			return
		}
		p = p[n:]
		if first {
			item = d
		} else {
			item += d
		}
		if item >= uint64(v.n) {
			return
		}
		fn(int(item))
	}
}

// detach copies what the item shares with its file's bytes, so that it
// outlives the view.
func (it *Item) detach() {
	it.ID = strings.Clone(it.ID)
	it.Text = strings.Clone(it.Text)
	it.Detail = strings.Clone(it.Detail)
	it.Project = strings.Clone(it.Project)
	it.ProjectPath = strings.Clone(it.ProjectPath)
	it.Scope = strings.Clone(it.Scope)
	it.SessionID = strings.Clone(it.SessionID)
	it.Replaced = strings.Clone(it.Replaced)
	it.q8 = slices.Clone(it.q8)
	it.d8 = slices.Clone(it.d8)
}

// HasDense reports whether the item carries a dense vector.
func (it *Item) HasDense() bool { return len(it.Dense) > 0 || len(it.d8) > 0 }

// DenseCos is the cosine between the item's dense vector and q (an
// L2-normalised vector of the same embedder); 0 when either is missing or
// sizes differ.
func (it *Item) DenseCos(q []float32) float32 {
	if len(it.Dense) > 0 {
		return embed.Cosine(it.Dense, q)
	}
	if len(it.d8) == 0 || len(it.d8) != len(q) {
		return 0
	}
	return dotQ8(it.d8, q) * it.dInvNorm
}

// HasVec reports whether the item carries a vector.
func (it *Item) HasVec() bool { return len(it.Vec) > 0 || len(it.q8) > 0 }

// Cos is the cosine between the item's vector and q (an L2-normalised
// vector of the same embedder); 0 when either is missing or sizes differ.
func (it *Item) Cos(q []float32) float32 {
	if len(it.Vec) > 0 {
		return embed.Cosine(it.Vec, q)
	}
	if len(it.q8) == 0 || len(it.q8) != len(q) {
		return 0
	}
	return dotQ8(it.q8, q) * it.invNorm
}

// dotQ8 is the dot product of an int8 vector and a float one of the same
// length, on four lanes.
func dotQ8(a []int8, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		a4, b4 := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += float32(a4[0]) * b4[0]
		s1 += float32(a4[1]) * b4[1]
		s2 += float32(a4[2]) * b4[2]
		s3 += float32(a4[3]) * b4[3]
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i]) * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Load reads a whole recollection file. A missing, unreadable or corrupt
// file is an error the caller treats as empty.
func Load(path string) (*File, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// LoadView maps a recollection file for the prompt hook: nothing is read
// but the header until items are asked for. Close releases it.
func LoadView(path string) (*View, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	keep := false // fd stays open for denseCosines
	defer func() {
		if !keep {
			fd.Close()
		}
	}()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !checkSize(st.Size()) {
		return nil, fmt.Errorf("%w: %s is not a regular file of 1 to %d bytes", ErrFormat, path, MaxFileSize)
	}
	// The worker replaces files by renaming new ones over them, never by
	// writing in place, so a mapping stays valid while it is used.
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		if data, err = readFile(path); err != nil {
			return nil, err
		}
		return DecodeView(data)
	}
	v, err := DecodeView(data)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	if len(v.dvecs) > 0 {
		// The same file as the mapping's, whatever the worker renames
		// over its path meanwhile.
		v.file, keep = fd, true
	}
	v.unmap = func() error {
		if v.file != nil {
			v.file.Close()
			v.file = nil
		}
		return syscall.Munmap(data)
	}
	return v, nil
}

func readFile(path string) ([]byte, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || !checkSize(st.Size()) {
		return nil, fmt.Errorf("%w: %s is not a regular file of 1 to %d bytes", ErrFormat, path, MaxFileSize)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, err
	}
	return data, nil
}

// Save writes f atomically (temp file in the same directory, fsync, rename)
// with mode 0600 in a 0700 directory. A file larger than the readers
// accept is not written (ErrTooLarge).
func Save(path string, f *File) error {
	b := NewBuilder(f)
	for _, it := range f.Items {
		b.Add(it)
	}
	return SaveBuilder(path, b)
}

// SaveBuilder writes b's file as Save does.
func SaveBuilder(path string, b *Builder) error {
	if size := b.Size(); !checkSize(int64(size)) {
		return fmt.Errorf("%w: %s would be %d bytes, over %d", ErrTooLarge, path, size, MaxFileSize)
	}
	return writeAtomic(path, func(w io.Writer) error {
		_, err := b.WriteTo(w)
		return err
	})
}

// WriteAtomic writes data to path through a temp file in the same directory
// (fsync, rename), with mode 0600 in a 0700 directory: a reader sees the old
// file or the new one, never a part.
func WriteAtomic(path string, data []byte) error {
	return writeAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func writeAtomic(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rec-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Dir is where recollection files live under the data directory.
func Dir(home string) string { return filepath.Join(home, "recall") }

// ProjectPath is the recollection file of a project (its git root).
func ProjectPath(home, projectPath string) string {
	sum := sha256.Sum256([]byte(projectPath))
	return filepath.Join(Dir(home), "project-"+hex.EncodeToString(sum[:8])+".rec")
}

// GlobalPath is the recollection file of global scope.
func GlobalPath(home string) string { return filepath.Join(Dir(home), "global.rec") }

// SessionPath is the neighbours file of a session (its id is validated by
// the caller: letters, digits, '-' and '_').
func SessionPath(home, sessionID string) string {
	return filepath.Join(Dir(home), "session-"+sessionID+".rec")
}

type writer struct{ b *bytes.Buffer }

func (w writer) uvarint(v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}

func (w writer) varint(v int64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutVarint(tmp[:], v)])
}

func (w writer) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b.WriteString(s)
}

func (w writer) f32(f float32) {
	var tmp [4]byte
	binary.LittleEndian.PutUint32(tmp[:], math.Float32bits(f))
	w.b.Write(tmp[:])
}

type reader struct {
	b     []byte
	err   error
	alias bool // strings share b's bytes instead of copying them
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated at %s", ErrFormat, what)
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that must fit in what is left, given a minimum
// size per element (0: a plain number below 2^31).
func (r *reader) count(minSize int) int {
	v := r.uvarint()
	if minSize == 0 {
		if v >= 1<<31 {
			r.fail("count")
			return 0
		}
		return int(v)
	}
	if v > uint64(len(r.b)/minSize) {
		r.fail("count")
		return 0
	}
	return int(v)
}

// take returns the next n bytes, in place.
func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.fail("table")
		return nil
	}
	b := r.b[:n:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) str() string {
	n := r.count(1)
	if r.err != nil || n == 0 {
		return ""
	}
	var s string
	if r.alias {
		s = unsafe.String(&r.b[0], n)
	} else {
		s = string(r.b[:n])
	}
	r.b = r.b[n:]
	return s
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail("byte")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) f32() float32 {
	if len(r.b) < 4 {
		r.fail("float")
		return 0
	}
	f := math.Float32frombits(binary.LittleEndian.Uint32(r.b))
	r.b = r.b[4:]
	return f
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}
