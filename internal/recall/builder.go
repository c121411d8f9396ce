package recall

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// ErrTooLarge marks a recollection file that would be larger than a reader
// accepts (MaxFileSize): it is not written.
var ErrTooLarge = errors.New("recall: recollection file too large for its readers")

// checkSize is the one test of a recollection file's size, for the
// writers (Save, SaveBuilder) and the readers (LoadView, Load) alike: a
// file of 1 to MaxFileSize bytes.
func checkSize(size int64) bool { return size >= 1 && size <= MaxFileSize }

// Builder encodes a recollection file item by item and knows the file's
// exact size at every step, so that a writer can cut a set of items into
// files within the readers' limit before writing any (TryAdd). It keeps
// what the file will hold (int8 vectors, encoded records, delta-coded
// postings), not the items: about the file's size in memory.
//
// The file's dense vectors are those of one sentence embedder: File.Dense
// of the header when set; otherwise the embedder most of the items' dense
// vectors come from (TryAdd's denseBy; ties go to the first name in
// order). Items of another embedder keep no dense vector in the file.
type Builder struct {
	prefix []byte // the header up to the item count: fixed by the header's fields
	dense  string // File.Dense of the header ("": the items' majority)
	dels   []int64

	n         int
	dim       int // the longest local vector: the vector table's width
	q8        [][]int8
	inv       []float32
	seqs      []int64
	offsets   []uint32
	records   bytes.Buffer
	names     []string // the dense embedders of the items, in order of appearance
	nameCount []int    // items with a dense vector of names[i]
	nameDim   []int    // the longest of them
	dq        [][]int8 // dense int8 vectors (nil: none)
	dinv      []float32
	dsig      [][]uint64
	dname     []int16 // index in names (-1: none)
	posts     map[uint64]*postList
	postBytes int

	seen  map[uint64]bool // scratch: the stems of the item being added
	stems []uint64
	lists []*postList
	buf   []byte
}

// postList is one stem's postings: the item numbers delta-coded as
// uvarints, as the file holds them.
type postList struct {
	last uint32
	b    []byte
}

// NewBuilder starts a file with f's header fields and deletions (ascending);
// f.Items are not added.
func NewBuilder(f *File) *Builder {
	var b bytes.Buffer
	b.WriteString(magic)
	w := writer{&b}
	w.uvarint(version)
	w.str(f.Embedder)
	w.varint(ms(f.CreatedAt))
	w.str(f.Scope)
	w.str(f.ProjectPath)
	w.str(f.SessionID)
	w.uvarint(uint64(max(0, f.Docs)))
	w.uvarint(uint64(max(0, f.StopDocs)))
	// The common terms: (hash, count) sorted by hash, which the hook
	// searches in place, then the terms themselves for tools (Decode).
	common := slices.Clone(f.Common)
	slices.SortFunc(common, func(a, b TermDocs) int {
		return cmp.Compare(stemHash([]byte(a.Term)), stemHash([]byte(b.Term)))
	})
	common = slices.CompactFunc(common, func(a, b TermDocs) bool { return stemHash([]byte(a.Term)) == stemHash([]byte(b.Term)) })
	minDocs := 0
	for _, t := range common {
		if minDocs == 0 || t.Docs < minDocs {
			minDocs = t.Docs
		}
	}
	w.uvarint(uint64(max(0, minDocs)))
	w.uvarint(uint64(len(common)))
	var tmp [12]byte
	for _, t := range common {
		binary.LittleEndian.PutUint64(tmp[:8], stemHash([]byte(t.Term)))
		binary.LittleEndian.PutUint32(tmp[8:], uint32(max(0, min(t.Docs, math.MaxUint32))))
		b.Write(tmp[:])
	}
	var names bytes.Buffer
	for _, t := range common {
		writer{&names}.str(t.Term)
	}
	w.uvarint(uint64(names.Len()))
	b.Write(names.Bytes())
	if f.Vocab != nil && len(f.Vocab.Bits) > 0 && f.Vocab.K > 0 {
		w.uvarint(uint64(f.Vocab.K))
		w.uvarint(uint64(len(f.Vocab.Bits)))
		b.Write(f.Vocab.Bits)
	} else {
		w.uvarint(0)
		w.uvarint(0)
	}
	return &Builder{prefix: b.Bytes(), dense: f.Dense, dels: slices.Clone(f.Dels), posts: map[uint64]*postList{},
		seen: map[uint64]bool{}}
}

// Len is the number of items added.
func (b *Builder) Len() int { return b.n }

// Dels is the number of deletions the file holds.
func (b *Builder) Dels() int { return len(b.dels) }

// Size is the exact size of the file as it stands.
func (b *Builder) Size() int {
	name, ddim := b.chosen("", 0)
	return b.size(b.n, b.dim, name, ddim, len(b.posts), b.postBytes, b.records.Len(), len(b.dels))
}

// size is the length of a file of n items with local vectors of dim, dense
// vectors of embedder name and dimension ddim, keys stems in the index
// whose postings take postBytes, records of recBytes, and dels deletions:
// the layout Encode documents, counted.
func (b *Builder) size(n, dim int, name string, ddim, keys, postBytes, recBytes, dels int) int {
	s := len(b.prefix) + uvlen(n) + uvlen(dim) + uvlen(keys) + uvlen(dels)
	s += n * (4 + 4 + dim + 8) // offsets, norms, vectors, seqs
	if ddim == 0 {
		name = ""
	}
	s += uvlen(len(name)) + len(name) + uvlen(ddim)
	if ddim > 0 {
		s += n * (4 + 8*SigWords(ddim) + ddim)
	}
	s += 8 * dels
	s += 8*keys + 4*(keys+1) + uvlen(postBytes) + postBytes
	s += uvlen(recBytes) + recBytes
	return s
}

func uvlen(v int) int {
	n := 1
	for u := uint64(v); u >= 0x80; u >>= 7 {
		n++
	}
	return n
}

// chosen is the dense embedder the file keeps vectors of, and their
// dimension, counting one more vector of embedder extra ("": none) of
// extraDim dimensions.
func (b *Builder) chosen(extra string, extraDim int) (string, int) {
	best, bestCount, bestDim := "", 0, 0
	consider := func(name string, c, d int) {
		if b.dense != "" {
			if name == b.dense {
				best, bestCount, bestDim = name, c, d
			}
			return
		}
		if c > bestCount || (c == bestCount && c > 0 && name < best) {
			best, bestCount, bestDim = name, c, d
		}
	}
	found := false
	for i, name := range b.names {
		c, d := b.nameCount[i], b.nameDim[i]
		if name == extra {
			c, d, found = c+1, max(d, extraDim), true
		}
		consider(name, c, d)
	}
	if extra != "" && !found {
		consider(extra, 1, extraDim)
	}
	if bestCount == 0 || bestDim == 0 {
		return "", 0
	}
	return best, bestDim
}

// Add adds an item whatever the file's size becomes.
func (b *Builder) Add(it Item) { b.TryAdd(it, "", 0) }

// TryAdd adds an item unless the file would then be larger than limit
// bytes (0: no limit), and reports whether it did. denseBy names the
// embedder of it.Dense ("": the header's File.Dense). Items are numbered
// in the order they are added; a search index segment adds them by
// ascending seq.
func (b *Builder) TryAdd(it Item, denseBy string, limit int) bool {
	// The item's distinct stems and their cost in the index.
	clear(b.seen)
	b.stems = b.stems[:0]
	for _, text := range []string{it.Text, it.Detail, it.Terms} {
		b.buf = eachStem(text, b.buf, func(stem []byte) {
			h := stemHash(stem)
			if !b.seen[h] {
				b.seen[h] = true
				b.stems = append(b.stems, h)
			}
		})
	}
	keys, postBytes := len(b.posts), b.postBytes
	b.lists = b.lists[:0]
	for _, h := range b.stems {
		p := b.posts[h]
		if p != nil {
			postBytes += uvlen(b.n - int(p.last))
		} else {
			keys++
			postBytes += uvlen(b.n)
		}
		b.lists = append(b.lists, p)
	}
	// Its record, written in place and taken back if it does not fit.
	start := b.records.Len()
	b.writeRecord(it)
	dim := max(b.dim, len(it.Vec))
	name := denseBy
	if name == "" {
		name = b.dense
	}
	ni := -1
	if name != "" && len(it.Dense) > 0 {
		ni = slices.Index(b.names, name)
		if ni < 0 {
			ni = len(b.names)
		}
	} else {
		name = ""
	}
	dn, ddim := b.chosen(name, len(it.Dense))
	if limit > 0 && b.size(b.n+1, dim, dn, ddim, keys, postBytes, b.records.Len(), len(b.dels)) > limit {
		b.records.Truncate(start)
		return false
	}

	// It fits: keep it.
	item := uint32(b.n)
	for k, h := range b.stems {
		p := b.lists[k]
		if p == nil {
			p = &postList{}
			b.posts[h] = p
			p.b = binary.AppendUvarint(p.b, uint64(item))
		} else {
			p.b = binary.AppendUvarint(p.b, uint64(item-p.last))
		}
		p.last = item
	}
	b.postBytes = postBytes
	b.offsets = append(b.offsets, uint32(start))
	b.dim = dim
	q, inv := quantize(it.Vec)
	if len(q) != len(it.Vec) {
		q, inv = nil, 0
	}
	b.q8 = append(b.q8, q)
	b.inv = append(b.inv, inv)
	b.seqs = append(b.seqs, it.Seq)
	var dq []int8
	var dinv float32
	var dsig []uint64
	if ni >= 0 {
		if ni == len(b.names) {
			b.names = append(b.names, name)
			b.nameCount = append(b.nameCount, 0)
			b.nameDim = append(b.nameDim, 0)
		}
		b.nameCount[ni]++
		b.nameDim[ni] = max(b.nameDim[ni], len(it.Dense))
		if dq, dinv = quantize(it.Dense); len(dq) == len(it.Dense) {
			dsig = Signature(it.Dense)
		} else {
			dq, dinv = nil, 0
		}
	}
	b.dq = append(b.dq, dq)
	b.dinv = append(b.dinv, dinv)
	b.dsig = append(b.dsig, dsig)
	b.dname = append(b.dname, int16(ni))
	b.n++
	return true
}

// SetDels replaces the file's deletions (ascending seqs) unless the file
// would then be larger than limit bytes (0: no limit).
func (b *Builder) SetDels(dels []int64, limit int) bool {
	name, ddim := b.chosen("", 0)
	if limit > 0 && b.size(b.n, b.dim, name, ddim, len(b.posts), b.postBytes, b.records.Len(), len(dels)) > limit {
		return false
	}
	b.dels = slices.Clone(dels)
	return true
}

func (b *Builder) writeRecord(it Item) {
	rw := writer{&b.records}
	b.records.WriteByte(it.Kind)
	rw.str(it.ID)
	rw.str(it.Text)
	rw.str(it.Detail)
	rw.str(it.Project)
	rw.str(it.ProjectPath)
	rw.varint(ms(it.At))
	rw.f32(it.Importance)
	rw.f32(it.Confidence)
	rw.varint(int64(it.Evidence))
	rw.varint(int64(it.AccessCount))
	rw.varint(ms(it.LastAccess))
	rw.f32(it.Stability)
	rw.str(it.Scope)
	rw.str(it.SessionID)
	var flags byte
	if it.Stated {
		flags |= flagStated
	}
	if it.Superseded {
		flags |= flagSuperseded
	}
	replaced := it.Superseded && it.Replaced != ""
	if replaced {
		flags |= flagReplaced
	}
	b.records.WriteByte(flags)
	if replaced {
		rw.str(it.Replaced)
		rw.varint(ms(it.ReplacedAt))
	}
}

// WriteTo writes the file.
func (b *Builder) WriteTo(out io.Writer) (int64, error) {
	cw := &countWriter{w: out}
	bw := bufio.NewWriterSize(cw, 256<<10)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v int) { bw.Write(tmp[:binary.PutUvarint(tmp[:], uint64(v))]) }
	u32 := func(v uint32) { binary.LittleEndian.PutUint32(tmp[:4], v); bw.Write(tmp[:4]) }
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(tmp[:8], v); bw.Write(tmp[:8]) }
	name, ddim := b.chosen("", 0)
	if ddim == 0 {
		name = ""
	}
	keys := make([]uint64, 0, len(b.posts))
	for k := range b.posts {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	bw.Write(b.prefix)
	uv(b.n)
	uv(b.dim)
	uv(len(keys))
	uv(len(b.dels))
	for _, off := range b.offsets {
		u32(off)
	}
	for i, q := range b.q8 {
		if len(q) == b.dim && b.dim > 0 {
			u32(math.Float32bits(b.inv[i]))
		} else {
			u32(0)
		}
	}
	zeros := make([]byte, max(b.dim, ddim))
	for _, q := range b.q8 {
		if len(q) == b.dim {
			bw.Write(int8Bytes(q))
		} else {
			bw.Write(zeros[:b.dim])
		}
	}
	for _, s := range b.seqs {
		u64(uint64(s))
	}
	// The dense table: the embedder's name and dimension, then each item's
	// inverse norm, sign bits and int8 vector (zeros: none).
	uv(len(name))
	bw.WriteString(name)
	uv(ddim)
	if ddim > 0 {
		words := SigWords(ddim)
		keep := func(i int) bool {
			return b.dname[i] >= 0 && len(b.dq[i]) == ddim && b.names[b.dname[i]] == name
		}
		for i := range b.n {
			if keep(i) {
				u32(math.Float32bits(b.dinv[i]))
			} else {
				u32(0)
			}
		}
		for i := range b.n {
			for j := range words {
				if keep(i) {
					u64(b.dsig[i][j])
				} else {
					u64(0)
				}
			}
		}
		for i := range b.n {
			if keep(i) {
				bw.Write(int8Bytes(b.dq[i]))
			} else {
				bw.Write(zeros[:ddim])
			}
		}
	}
	for _, d := range b.dels {
		u64(uint64(d))
	}
	for _, k := range keys {
		u64(k)
	}
	off := 0
	for _, k := range keys {
		u32(uint32(off))
		off += len(b.posts[k].b)
	}
	u32(uint32(off))
	uv(off)
	for _, k := range keys {
		bw.Write(b.posts[k].b)
	}
	uv(b.records.Len())
	bw.Write(b.records.Bytes())
	if err := bw.Flush(); err != nil {
		return cw.n, err
	}
	if want := b.Size(); cw.n != int64(want) {
		return cw.n, fmt.Errorf("recall: wrote %d bytes of a file of %d", cw.n, want)
	}
	return cw.n, nil
}

// Bytes is the file.
func (b *Builder) Bytes() []byte {
	var buf bytes.Buffer
	buf.Grow(b.Size())
	b.WriteTo(&buf) // a bytes.Buffer does not fail
	return buf.Bytes()
}

func int8Bytes(q []int8) []byte {
	out := make([]byte, len(q))
	for i, v := range q {
		out[i] = byte(v)
	}
	return out
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
