package recollect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// IndexOptions shape the search index's segments.
type IndexOptions struct {
	// SegmentItems is the size at which a segment stops growing by merges
	// (a rebuild cuts segments of this many episodes).
	SegmentItems int
	// MaxSegments: past it, the two adjacent segments with the fewest
	// episodes are merged even when they are large.
	MaxSegments int
	// DeadShare: a segment with at least this share of records that newer
	// segments replace or delete is rewritten without them.
	DeadShare float64
}

// DefaultIndexOptions are used for zero fields.
var DefaultIndexOptions = IndexOptions{SegmentItems: 16384, MaxSegments: 16, DeadShare: 0.25}

// IndexStats says what SyncIndex did.
type IndexStats struct {
	Rebuilt  bool // the whole index was written anew
	Changed  int  // episodes added or changed since the last sync
	Deleted  int  // episodes deleted since the last sync
	Written  int  // segment files written
	Segments int  // segments in the index now
	Episodes int  // episode records written (new and rewritten)
}

// SyncIndex brings the prompt hook's search index up to date with the
// store's episodes. It applies the store's change log: one new segment holds
// the episodes added or changed since the last sync and the seqs deleted
// since. A deleted episode's text never stays on disk: every older segment
// that holds it is rewritten without it in the same sync. Small segments
// are merged as they pile up (each at least half the size of the one before
// it), so the hook reads a few segments and a cycle rewrites little. An
// index built from another store, a damaged one, or none at all is built
// anew. Segments are written beside the manifest and renamed into place
// before a new manifest is renamed over the old one, so the hook always
// reads a complete index, old or new.
func SyncIndex(ctx context.Context, db *store.DB, home string, opt IndexOptions, now time.Time) (IndexStats, error) {
	var st IndexStats
	if opt.SegmentItems <= 0 {
		opt.SegmentItems = DefaultIndexOptions.SegmentItems
	}
	if opt.MaxSegments <= 1 {
		opt.MaxSegments = DefaultIndexOptions.MaxSegments
	}
	if opt.DeadShare <= 0 {
		opt.DeadShare = DefaultIndexOptions.DeadShare
	}
	dir := recall.IndexDir(home)
	if err := ownDir(dir); err != nil {
		return st, err
	}
	lk := flock.New(filepath.Join(dir, "lock"), flock.SetPermissions(0o600))
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if ok, err := lk.TryLockContext(lctx, 20*time.Millisecond); !ok {
		return st, fmt.Errorf("search index: lock: %w", err)
	}
	defer lk.Unlock()

	storeID, err := db.StoreID(ctx)
	if err != nil {
		return st, err
	}
	m, merr := recall.ReadManifest(home)
	after := int64(0)
	if merr == nil {
		after = m.LastChange
	}
	last, lastEver, seqs, err := db.EpisodeChanges(ctx, after)
	if err != nil {
		return st, err
	}
	w := &indexWriter{db: db, home: home, dir: dir, now: now, local: embed.NewLocal(), dense: map[string]int{}}
	defer w.abandon() // the files of a sync that fails before its manifest
	if merr != nil || m.StoreID != storeID || m.LastChange > lastEver {
		w.next = nextName(dir, m)
		if err := w.rebuild(ctx, opt, lastEver, storeID, &st); err != nil {
			return st, err
		}
		return st, db.PruneEpisodeChanges(ctx, lastEver)
	}
	w.next = m.NextName
	segs, err := openAll(dir, m)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, recall.ErrFormat) {
		// A segment is missing or damaged: build anew.
		w.next = nextName(dir, m)
		if err := w.rebuild(ctx, opt, lastEver, storeID, &st); err != nil {
			return st, err
		}
		return st, db.PruneEpisodeChanges(ctx, lastEver)
	}
	if err != nil {
		return st, err
	}
	defer func() {
		for _, s := range segs {
			s.view.Close()
		}
	}()
	if len(seqs) == 0 {
		st.Segments = len(segs)
		return st, nil
	}

	// The new segment: the changed episodes as they are now; the others of
	// seqs are gone.
	var items []recall.Item
	found := map[int64]bool{}
	if err := db.EachIndexEpisode(ctx, seqs, func(e store.IndexEpisode) error {
		found[e.Seq] = true
		items = append(items, w.item(e))
		return nil
	}); err != nil {
		return st, err
	}
	var dels []int64
	for _, s := range seqs {
		if !found[s] {
			dels = append(dels, s)
		}
	}
	st.Changed, st.Deleted = len(items), len(dels)
	seg, err := w.write(items, dels)
	if err != nil {
		return st, err
	}
	st.Written++
	st.Episodes += len(items)
	segs = append(segs, seg)

	// Merges: while the newest segment is at least half the size of the one
	// before it (within SegmentItems), and while there are too many.
	for len(segs) >= 2 {
		a, b := segs[len(segs)-2], segs[len(segs)-1]
		if 2*b.size() < a.size() || a.size()+b.size() > opt.SegmentItems {
			break
		}
		if segs, err = w.rewrite(ctx, segs, len(segs)-2, len(segs)-1, &st); err != nil {
			return st, err
		}
	}
	for len(segs) > opt.MaxSegments {
		best := -1
		for i := 0; i+1 < len(segs); i++ {
			if best < 0 || segs[i].size()+segs[i+1].size() < segs[best].size()+segs[best+1].size() {
				best = i
			}
		}
		if segs, err = w.rewrite(ctx, segs, best, best+1, &st); err != nil {
			return st, err
		}
	}
	// Purges: a segment that still holds a deleted episode, or whose
	// records are mostly replaced, is rewritten alone.
	for i := 0; i < len(segs)-1; i++ {
		dead, deleted := deadRecords(segs, i)
		if deleted > 0 || (dead > 0 && float64(dead) >= opt.DeadShare*float64(segs[i].view.Len())) {
			if segs, err = w.rewrite(ctx, segs, i, i, &st); err != nil {
				return st, err
			}
		}
	}
	if err := w.commit(segs, storeID, last); err != nil {
		return st, err
	}
	st.Segments = len(segs)
	return st, db.PruneEpisodeChanges(ctx, last)
}

// nextName numbers a rebuild's first segment past every file in dir, so
// that no file a hook may be reading is replaced.
func nextName(dir string, m *recall.Manifest) uint64 {
	next := uint64(1)
	if m != nil {
		next = max(next, m.NextName)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seg-*.rec"))
	for _, f := range files {
		var n uint64
		if _, err := fmt.Sscanf(filepath.Base(f), "seg-%d.rec", &n); err == nil {
			next = max(next, n+1)
		}
	}
	return next
}

// ownDir creates the index directory 0700 and refuses one that is a
// symlink (or not a directory).
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("search index: %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return os.Chmod(dir, 0o700)
	}
	return nil
}

// segment is an index segment the writer has open.
type segment struct {
	name string
	view *recall.View
	seqs []int64 // its records', ascending
	dels []int64
}

func newSegment(name string, v *recall.View) *segment {
	s := &segment{name: name, view: v, dels: v.Dels(), seqs: make([]int64, v.Len())}
	for i := range s.seqs {
		s.seqs[i] = v.Seq(i)
	}
	return s
}

func (s *segment) size() int { return len(s.seqs) + len(s.dels) }

func (s *segment) holds(seq int64) bool { return has(s.seqs, seq) }

func (s *segment) deletes(seq int64) bool { return has(s.dels, seq) }

func (s *segment) mentions(seq int64) bool { return s.holds(seq) || s.deletes(seq) }

// has reports whether sorted holds v.
func has(sorted []int64, v int64) bool {
	if len(sorted) == 0 || v < sorted[0] || v > sorted[len(sorted)-1] {
		return false
	}
	_, ok := slices.BinarySearch(sorted, v)
	return ok
}

func openAll(dir string, m *recall.Manifest) ([]*segment, error) {
	var segs []*segment
	for _, info := range m.Segments {
		v, err := recall.LoadView(filepath.Join(dir, info.Name))
		if err == nil && v.Scope != recall.SegmentScope {
			v.Close()
			err = fmt.Errorf("%w: %s is not a segment", recall.ErrFormat, info.Name)
		}
		if err != nil {
			for _, s := range segs {
				s.view.Close()
			}
			return nil, err
		}
		segs = append(segs, newSegment(info.Name, v))
	}
	return segs, nil
}

// deadRecords counts the records of segment i that newer segments replace
// or delete, and among them those deleted for good (their newest mention is
// a deletion).
func deadRecords(segs []*segment, i int) (dead, deleted int) {
	for _, seq := range segs[i].seqs {
		for j := len(segs) - 1; j > i; j-- {
			if segs[j].holds(seq) {
				dead++
				break
			}
			if segs[j].deletes(seq) {
				dead++
				deleted++
				break
			}
		}
	}
	return dead, deleted
}

// indexWriter writes segments and manifests.
type indexWriter struct {
	db    *store.DB
	home  string
	dir   string
	now   time.Time
	local *embed.Local
	// dense counts the sentence embedders of the items made since the last
	// segment was written.
	dense map[string]int
	next  uint64
	// written are the files of this sync not (yet) in a manifest: removed
	// when it fails.
	written []string
}

// item is an episode as a segment holds it.
func (w *indexWriter) item(e store.IndexEpisode) recall.Item {
	it := recall.EpisodeItem(e.Episode)
	it.Seq = e.Seq
	it.Terms = e.EntitiesText
	if it.Detail == "" {
		it.Terms = e.Context + "\n" + e.EntitiesText
	}
	if e.Embedder == w.local.Name() {
		it.Vec = e.Embedding
	} else if embed.IsSentence(e.Embedder) {
		it.Dense = e.Embedding
		w.dense[e.Embedder]++
	}
	return it
}

// denseName is the sentence embedder of most of the items of a segment
// about to be written (normally the only one); items of another keep no
// dense vector there.
func denseName(count map[string]int) string {
	best := ""
	for name, n := range count {
		if n > count[best] || (n == count[best] && name < best) {
			best = name
		}
	}
	clear(count)
	return best
}

// write saves a new segment of items (ascending seqs) and dels.
func (w *indexWriter) write(items []recall.Item, dels []int64) (*segment, error) {
	slices.SortFunc(items, func(a, b recall.Item) int { return cmp.Compare(a.Seq, b.Seq) })
	slices.Sort(dels)
	name := recall.SegmentName(w.next)
	w.next++
	path := filepath.Join(w.dir, name)
	f := &recall.File{Embedder: w.local.Name(), Dense: denseName(w.dense), CreatedAt: w.now, Scope: recall.SegmentScope,
		Items: items, Dels: dels}
	if err := recall.Save(path, f); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	w.written = append(w.written, path)
	v, err := recall.LoadView(path)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	return newSegment(name, v), nil
}

// rewrite replaces segments a..b with one: each seq whose newest mention
// in the index is among them, as a record read anew from the store, or as
// a deletion that an older segment still needs. Records that newer
// segments replace are dropped.
func (w *indexWriter) rewrite(ctx context.Context, segs []*segment, a, b int, st *IndexStats) ([]*segment, error) {
	newest := func(seq int64) int {
		for j := len(segs) - 1; j >= 0; j-- {
			if segs[j].mentions(seq) {
				return j
			}
		}
		return -1
	}
	var keep, dels []int64
	seen := map[int64]bool{}
	for i := a; i <= b; i++ {
		for _, seq := range append(slices.Clone(segs[i].seqs), segs[i].dels...) {
			if seen[seq] {
				continue
			}
			seen[seq] = true
			n := newest(seq)
			switch {
			case n > b:
				// A newer segment replaces or deletes it.
			case segs[n].holds(seq):
				keep = append(keep, seq)
			default:
				// Deleted: the deletion stays while an older segment
				// holds or deletes the seq.
				for j := 0; j < a; j++ {
					if segs[j].mentions(seq) {
						dels = append(dels, seq)
						break
					}
				}
			}
		}
	}
	slices.Sort(keep)
	var items []recall.Item
	if err := w.db.EachIndexEpisode(ctx, keep, func(e store.IndexEpisode) error {
		items = append(items, w.item(e))
		return nil
	}); err != nil {
		return nil, err
	}
	seg, err := w.write(items, dels)
	if err != nil {
		return nil, err
	}
	st.Written++
	st.Episodes += len(items)
	for i := a; i <= b; i++ {
		segs[i].view.Close()
	}
	out := append(slices.Clone(segs[:a]), seg)
	return append(out, segs[b+1:]...), nil
}

// rebuild writes the whole index anew from the store.
func (w *indexWriter) rebuild(ctx context.Context, opt IndexOptions, last int64, storeID string, st *IndexStats) error {
	st.Rebuilt = true
	var segs []*segment
	defer func() {
		for _, s := range segs {
			s.view.Close()
		}
	}()
	var items []recall.Item
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		seg, err := w.write(items, nil)
		if err != nil {
			return err
		}
		segs = append(segs, seg)
		st.Written++
		st.Episodes += len(items)
		items = nil
		return nil
	}
	err := w.db.EachIndexEpisode(ctx, nil, func(e store.IndexEpisode) error {
		items = append(items, w.item(e))
		if len(items) == opt.SegmentItems {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = w.commit(segs, storeID, last)
	}
	if err != nil {
		w.abandon()
		return err
	}
	st.Segments = len(segs)
	return nil
}

// commit renames a manifest of segs into place and removes the segment
// files it does not name.
func (w *indexWriter) commit(segs []*segment, storeID string, last int64) error {
	m := &recall.Manifest{StoreID: storeID, LastChange: last, NextName: w.next, BuiltAt: w.now}
	keep := map[string]bool{}
	for _, s := range segs {
		m.Segments = append(m.Segments, recall.SegmentInfo{Name: s.name, Items: s.view.Len(), Dels: len(s.dels)})
		keep[s.name] = true
	}
	if err := recall.WriteAtomic(recall.ManifestPath(w.home), m.Encode()); err != nil {
		w.abandon()
		return fmt.Errorf("search index: %w", err)
	}
	w.written = nil
	old, _ := filepath.Glob(filepath.Join(w.dir, "seg-*.rec"))
	for _, p := range old {
		if !keep[filepath.Base(p)] {
			os.Remove(p)
		}
	}
	return nil
}

// abandon removes the files of a sync that failed.
func (w *indexWriter) abandon() {
	for _, p := range w.written {
		os.Remove(p)
	}
	w.written = nil
}
