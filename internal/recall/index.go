package recall

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// The search index is the prompt hook's full-text search: the worker keeps
// it from the store's episodes (package recollect), so that the hook never
// opens SQLite. It is a list of segments, oldest first, named by a small
// manifest. A segment is a recollection file of scope "search" whose items
// are episodes in seq order, each indexed by every term the store's FTS5
// index holds for it (summary, context, entities), and which may also list
// deleted seqs. An episode is what the newest segment that mentions its seq
// says: its record there, or gone. So a change or a deletion is one small
// new segment, and no segment is ever changed in place: the worker writes
// new files and renames a new manifest over the old one.

// SegmentScope is the scope of a search index segment.
const SegmentScope = "search"

// IndexDir is the search index's directory.
func IndexDir(home string) string { return filepath.Join(Dir(home), "search") }

// ManifestPath is the search index's manifest.
func ManifestPath(home string) string { return filepath.Join(IndexDir(home), "manifest") }

const manifestMagic = "ENGRAMIX"
const manifestVersion = 1

// Manifest names the segments of the search index and what of the store
// they reflect.
type Manifest struct {
	// StoreID is the store the index was built from, and LastChange the
	// newest entry of its change log the segments include.
	StoreID    string
	LastChange int64
	// NextName numbers the next segment file.
	NextName uint64
	// BuiltAt is when the manifest was written.
	BuiltAt  time.Time
	Segments []SegmentInfo // oldest first
}

// SegmentInfo describes one segment.
type SegmentInfo struct {
	Name  string // file name in IndexDir
	Items int
	Dels  int
}

// Encode serialises m.
func (m *Manifest) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(manifestMagic)
	w := writer{&b}
	w.uvarint(manifestVersion)
	w.str(m.StoreID)
	w.uvarint(uint64(max(0, m.LastChange)))
	w.uvarint(m.NextName)
	w.varint(ms(m.BuiltAt))
	w.uvarint(uint64(len(m.Segments)))
	for _, s := range m.Segments {
		w.str(s.Name)
		w.uvarint(uint64(max(0, s.Items)))
		w.uvarint(uint64(max(0, s.Dels)))
	}
	return b.Bytes()
}

// DecodeManifest parses a manifest.
func DecodeManifest(data []byte) (*Manifest, error) {
	if len(data) < len(manifestMagic) || string(data[:len(manifestMagic)]) != manifestMagic {
		return nil, fmt.Errorf("%w: manifest: no magic", ErrFormat)
	}
	r := reader{b: data[len(manifestMagic):]}
	if v := r.uvarint(); v != manifestVersion {
		return nil, fmt.Errorf("%w: manifest version %d", ErrFormat, v)
	}
	m := &Manifest{StoreID: r.str()}
	m.LastChange = int64(r.uvarint() & (1<<63 - 1))
	m.NextName = r.uvarint()
	m.BuiltAt = fromMS(r.varint())
	n := r.count(3)
	for range n {
		s := SegmentInfo{Name: r.str(), Items: r.count(0), Dels: r.count(0)}
		if r.err == nil && !validSegmentName(s.Name) {
			return nil, fmt.Errorf("%w: manifest names %q", ErrFormat, s.Name)
		}
		m.Segments = append(m.Segments, s)
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

// SegmentName is the file name of segment number n.
func SegmentName(n uint64) string { return fmt.Sprintf("seg-%08d.rec", n) }

// validSegmentName: the manifest only ever names files in the index's own
// directory.
func validSegmentName(name string) bool {
	if !strings.HasPrefix(name, "seg-") || !strings.HasSuffix(name, ".rec") {
		return false
	}
	for _, c := range name[4 : len(name)-4] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(name) > 8
}

// MaxManifestSize bounds the manifest, for its reader and its writer
// alike (about 40,000 segments).
const MaxManifestSize = 1 << 20

// ReadManifest reads the search index's manifest.
func ReadManifest(home string) (*Manifest, error) {
	data, err := readSmall(ManifestPath(home), MaxManifestSize)
	if err != nil {
		return nil, err
	}
	return DecodeManifest(data)
}

// WriteManifest renames a new manifest into place; one larger than its
// reader accepts is not written (ErrTooLarge).
func WriteManifest(home string, m *Manifest) error {
	data := m.Encode()
	if len(data) > MaxManifestSize {
		return fmt.Errorf("%w: a manifest of %d segments is %d bytes, over %d", ErrTooLarge, len(m.Segments), len(data), MaxManifestSize)
	}
	return WriteAtomic(ManifestPath(home), data)
}

// IndexFailure is the last update of the search index that failed: the
// index stays as it was before it (the manifest is replaced last), and
// `status` and `doctor` say why until an update succeeds.
type IndexFailure struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
	// Changes is how many changed episodes the update was to apply.
	Changes int `json:"changes"`
}

// IndexFailurePath is where the last failed update is recorded.
func IndexFailurePath(home string) string { return filepath.Join(IndexDir(home), "failed.json") }

// ReadIndexFailure returns the last failed update of the search index, or
// nil when the last update succeeded (or none failed).
func ReadIndexFailure(home string) (*IndexFailure, error) {
	data, err := readSmall(IndexFailurePath(home), 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f IndexFailure
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", IndexFailurePath(home), err)
	}
	return &f, nil
}

// WriteIndexFailure records a failed update; a nil f clears the record.
func WriteIndexFailure(home string, f *IndexFailure) error {
	if f == nil {
		if err := os.Remove(IndexFailurePath(home)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	g := *f
	if len(g.Error) > 4000 {
		g.Error = g.Error[:4000] + "…"
	}
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return WriteAtomic(IndexFailurePath(home), append(data, '\n'))
}

// Index reads the search index. It is opened lazily: nothing is read until
// the first search, so a prompt that searches nothing costs nothing.
type Index struct {
	home   string
	loaded bool
	err    error
	segs   []*View
	buf    []int32
}

// OpenIndex returns the search index of a data directory, not yet read.
func OpenIndex(home string) *Index { return &Index{home: home} }

// Close releases the segments.
func (x *Index) Close() error {
	for _, s := range x.segs {
		s.Close()
	}
	x.segs = nil
	return nil
}

// Segments is the number of segments read (after a search).
func (x *Index) Segments() int { return len(x.segs) }

// load maps the manifest's segments. A segment the worker removed between
// the reading of the manifest and its own opening means a newer manifest:
// it is read again (a few times: syncs may follow each other closely). No
// manifest is an empty index (the worker has not built it yet).
func (x *Index) load() error {
	if x.loaded {
		return x.err
	}
	x.loaded = true
	for attempt := 0; ; attempt++ {
		m, err := ReadManifest(x.home)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			x.err = fmt.Errorf("search index: %w", err)
			return x.err
		}
		segs, err := openSegments(IndexDir(x.home), m)
		if errors.Is(err, fs.ErrNotExist) && attempt < 4 {
			continue
		}
		if err != nil {
			x.err = fmt.Errorf("search index: %w", err)
			return x.err
		}
		x.segs = segs
		return nil
	}
}

func openSegments(dir string, m *Manifest) ([]*View, error) {
	segs := make([]*View, 0, len(m.Segments))
	for _, s := range m.Segments {
		v, err := LoadView(filepath.Join(dir, s.Name))
		if err == nil && v.Scope != SegmentScope {
			v.Close()
			err = fmt.Errorf("%w: %s is not a search index segment", ErrFormat, s.Name)
		}
		if err != nil {
			for _, o := range segs {
				o.Close()
			}
			return nil, err
		}
		segs = append(segs, v)
	}
	return segs, nil
}

// find is the position of seq in a sorted int64 table, or -1.
func find(table []byte, seq int64) int {
	n := len(table) / 8
	i := sort.Search(n, func(k int) bool { return int64(binary.LittleEndian.Uint64(table[8*k:])) >= seq })
	if i < n && int64(binary.LittleEndian.Uint64(table[8*i:])) == seq {
		return i
	}
	return -1
}

// Dels is the seqs a segment deletes.
func (v *View) Dels() []int64 {
	out := make([]int64, len(v.dels)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(v.dels[8*i:]))
	}
	return out
}

// mentions reports whether segment v holds or deletes seq.
func (v *View) mentions(seq int64) bool { return find(v.seqs, seq) >= 0 || find(v.dels, seq) >= 0 }

// live reports whether the record of seq in segment s is current: no newer
// segment mentions seq.
func (x *Index) live(s int, seq int64) bool {
	for t := s + 1; t < len(x.segs); t++ {
		if x.segs[t].mentions(seq) {
			return false
		}
	}
	return true
}

// lookup finds the current record of seq: its segment and item, or -1.
func (x *Index) lookup(seq int64) (int, int) {
	for s := len(x.segs) - 1; s >= 0; s-- {
		if i := find(x.segs[s].seqs, seq); i >= 0 {
			return s, i
		}
		if find(x.segs[s].dels, seq) >= 0 {
			return -1, -1
		}
	}
	return -1, -1
}

// Search is Searcher.Search over the index.
func (x *Index) Search(ctx context.Context, terms []string, weights []float64, window, limit int, projectPath string) ([]Hit, error) {
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if err := x.load(); err != nil || len(x.segs) == 0 {
		return nil, err
	}
	if len(terms) > MaxSearchTerms {
		terms = terms[:MaxSearchTerms]
	}
	type ref struct {
		seg, item int32
	}
	type acc struct {
		ref
		seq   int64
		score float64
		mask  uint64
	}
	found := map[int64]*acc{}
	lists := make([][]int32, len(x.segs))
	var stem []byte
	for j, t := range terms {
		w := 1.0
		if j < len(weights) {
			w = weights[j]
		}
		// Folded and stemmed as the store's FTS5 tokenizer does. recall's
		// terms are single tokens; a term of several tokens (which FTS5
		// would take as a phrase) matches nothing here.
		var toks int
		var h uint64
		stem = eachStem(t, stem[:0], func(s []byte) { toks++; h = stemHash(s) })
		if toks != 1 {
			continue
		}
		// Each segment's matches, then the newest window of them all, by
		// seq, that are current.
		pool := x.buf[:0]
		for s, v := range x.segs {
			start := len(pool)
			v.Postings(h, func(item int) { pool = append(pool, int32(item)) })
			lists[s] = pool[start:len(pool):len(pool)]
		}
		x.buf = pool
		taken := 0
		for window <= 0 || taken < window {
			best, bestSeq := -1, int64(0)
			for s, l := range lists {
				if len(l) == 0 {
					continue
				}
				if seq := x.segs[s].Seq(int(l[len(l)-1])); best < 0 || seq > bestSeq {
					best, bestSeq = s, seq
				}
			}
			if best < 0 {
				break
			}
			item := lists[best][len(lists[best])-1]
			lists[best] = lists[best][:len(lists[best])-1]
			if !x.live(best, bestSeq) {
				continue
			}
			taken++
			a := found[bestSeq]
			if a == nil {
				a = &acc{ref: ref{int32(best), item}, seq: bestSeq}
				found[bestSeq] = a
			}
			a.score += w
			a.mask |= 1 << j
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	ranked := make([]*acc, 0, len(found))
	for _, a := range found {
		ranked = append(ranked, a)
	}
	slices.SortFunc(ranked, func(a, b *acc) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if a.seq != b.seq {
			if a.seq > b.seq {
				return -1
			}
			return 1
		}
		return 0
	})
	var out []Hit
	for _, a := range ranked {
		if len(out) == limit {
			break
		}
		it, err := x.segs[a.seg].Item(int(a.item))
		if err != nil {
			return out, err
		}
		if projectPath != "" && it.Scope != episode.ScopeGlobal && it.ProjectPath != projectPath {
			continue
		}
		out = append(out, Hit{Item: it, Score: a.score, Mask: a.mask})
	}
	return out, nil
}

// Neighbours is Searcher.Neighbours over the index. Episodes without a seq
// (from a file older than the index) are skipped.
func (x *Index) Neighbours(ctx context.Context, eps []Item, window int) (map[string]Neighbours, error) {
	if len(eps) == 0 || window <= 0 {
		return nil, nil
	}
	if err := x.load(); err != nil || len(x.segs) == 0 {
		return nil, err
	}
	out := map[string]Neighbours{}
	for _, h := range eps {
		if h.Seq <= 0 || h.SessionID == "" {
			continue
		}
		var n Neighbours
		for seq := h.Seq - int64(window); seq <= h.Seq+int64(window); seq++ {
			if seq == h.Seq || seq <= 0 {
				continue
			}
			s, i := x.lookup(seq)
			if s < 0 {
				continue
			}
			e, err := x.segs[s].Item(i)
			if err != nil {
				return out, err
			}
			if e.SessionID != h.SessionID {
				continue
			}
			// Ordered by (time, seq): the nearest before and after.
			before := e.At.Before(h.At) || (e.At.Equal(h.At) && e.Seq < h.Seq)
			if before {
				if n.Before == nil || after(e, *n.Before) {
					n.Before = &e
				}
			} else if n.After == nil || after(*n.After, e) {
				n.After = &e
			}
		}
		if n.Before != nil || n.After != nil {
			out[h.ID] = n
		}
	}
	return out, ctx.Err()
}

// after reports whether a comes after b in a session.
func after(a, b Item) bool {
	if !a.At.Equal(b.At) {
		return a.At.After(b.At)
	}
	return a.Seq > b.Seq
}

// IndexReady reports whether the index has been built (its manifest exists).
func IndexReady(home string) bool {
	_, err := os.Lstat(ManifestPath(home))
	return err == nil
}
