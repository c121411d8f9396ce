package recollect

import (
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
	// (a rebuild, and the changes of one sync, are cut into segments of
	// this many episodes).
	SegmentItems int
	// SegmentBytes is the largest segment file written: whatever is to be
	// written (the changes of one sync, a merge, a rebuild) is cut into as
	// many segments as its size needs. recall.MaxFileSize, what the readers
	// accept, when 0 or more.
	SegmentBytes int
	// MaxSegments: past it, the two adjacent segments with the fewest
	// episodes are merged even when they are large (when their files fit
	// in one).
	MaxSegments int
	// DeadShare: a segment with at least this share of records that newer
	// segments replace or delete is rewritten without them.
	DeadShare float64
}

// DefaultIndexOptions are used for zero fields.
var DefaultIndexOptions = IndexOptions{SegmentItems: 16384, SegmentBytes: recall.MaxFileSize, MaxSegments: 16, DeadShare: 0.25}

// IndexStats says what SyncIndex did.
type IndexStats struct {
	Rebuilt  bool // the whole index was written anew
	Changed  int  // episodes added or changed since the last sync
	Deleted  int  // episodes deleted since the last sync
	Written  int  // segment files written
	Segments int  // segments in the index now
	Episodes int  // episode records written (new and rewritten)
	// Skipped counts the episodes whose record alone is larger than a
	// segment may be: they are left out of the index (a deletion hides any
	// older record of theirs).
	Skipped int
}

// SyncIndex brings the prompt hook's search index up to date with the
// store's episodes. It applies the store's change log: new segments hold
// the episodes added or changed since the last sync and the seqs deleted
// since, cut by count and size (IndexOptions). A deleted episode's text
// never stays on disk: every older segment that holds it is rewritten
// without it in the same sync. Small segments are merged as they pile up
// (each at least half the size of the one before it), so the hook reads a
// few segments and a cycle rewrites little. An index built from another
// store, a damaged one, or none at all is built anew. Segments are written
// beside the manifest and renamed into place before a new manifest is
// renamed over the old one, so the hook always reads a complete index, old
// or new.
//
// A sync that fails leaves the index as it was, and records why
// (recall.IndexFailure) for status and doctor until one succeeds; the next
// sync applies the same changes and any newer. Waiting for the lock in
// vain, or being cancelled, is not recorded: the index is not at fault.
func SyncIndex(ctx context.Context, db *store.DB, home string, opt IndexOptions, now time.Time) (IndexStats, error) {
	st, changes, err := syncIndex(ctx, db, home, opt, now)
	switch {
	case err == nil:
		if ferr := recall.WriteIndexFailure(home, nil); ferr != nil {
			return st, fmt.Errorf("search index: %w", ferr)
		}
	case ctx.Err() != nil || errors.Is(err, errIndexBusy):
	default:
		// Best effort: the error itself is returned either way.
		recall.WriteIndexFailure(home, &recall.IndexFailure{At: now, Error: err.Error(), Changes: changes})
	}
	return st, err
}

// errIndexBusy: another sync held the index's lock for as long as this one
// could wait.
var errIndexBusy = errors.New("search index: another update holds the lock")

func syncIndex(ctx context.Context, db *store.DB, home string, opt IndexOptions, now time.Time) (st IndexStats, changes int, err error) {
	if opt.SegmentItems <= 0 {
		opt.SegmentItems = DefaultIndexOptions.SegmentItems
	}
	if opt.SegmentBytes <= 0 || opt.SegmentBytes > recall.MaxFileSize {
		opt.SegmentBytes = recall.MaxFileSize
	}
	if opt.MaxSegments <= 1 {
		opt.MaxSegments = DefaultIndexOptions.MaxSegments
	}
	if opt.DeadShare <= 0 {
		opt.DeadShare = DefaultIndexOptions.DeadShare
	}
	dir := recall.IndexDir(home)
	if err := ownDir(dir); err != nil {
		return st, 0, err
	}
	lk := flock.New(filepath.Join(dir, "lock"), flock.SetPermissions(0o600))
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if ok, err := lk.TryLockContext(lctx, 20*time.Millisecond); !ok {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return st, 0, errIndexBusy
		}
		return st, 0, fmt.Errorf("search index: lock: %w", err)
	}
	defer lk.Unlock()

	storeID, err := db.StoreID(ctx)
	if err != nil {
		return st, 0, err
	}
	m, merr := recall.ReadManifest(home)
	after := int64(0)
	if merr == nil {
		after = m.LastChange
	}
	last, lastEver, seqs, err := db.EpisodeChanges(ctx, after)
	if err != nil {
		return st, 0, err
	}
	changes = len(seqs)
	w := &indexWriter{db: db, home: home, dir: dir, now: now, local: embed.NewLocal(), opt: opt}
	if w.repl, err = loadReplacements(ctx, db); err != nil {
		return st, changes, err
	}
	defer w.abandon() // the files of a sync that fails before its manifest
	if merr != nil || m.StoreID != storeID || m.LastChange > lastEver {
		w.next = nextName(dir, m)
		if err := w.rebuild(ctx, lastEver, storeID, &st); err != nil {
			return st, changes, err
		}
		return st, changes, db.PruneEpisodeChanges(ctx, lastEver)
	}
	w.next = m.NextName
	segs, err := openAll(dir, m)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, recall.ErrFormat) {
		// A segment is missing or damaged: build anew.
		w.next = nextName(dir, m)
		if err := w.rebuild(ctx, lastEver, storeID, &st); err != nil {
			return st, changes, err
		}
		return st, changes, db.PruneEpisodeChanges(ctx, lastEver)
	}
	if err != nil {
		return st, changes, err
	}
	defer func() {
		for _, s := range segs {
			s.view.Close()
		}
	}()
	if len(seqs) == 0 {
		st.Segments = len(segs)
		return st, 0, nil
	}

	// The new segments: the changed episodes as they are now; the others
	// of seqs are gone.
	c := w.cutter(opt.SegmentItems, &st)
	found := map[int64]bool{}
	if err := db.EachIndexEpisode(ctx, seqs, func(e store.IndexEpisode) error {
		found[e.Seq] = true
		st.Changed++
		return c.add(w.item(e))
	}); err != nil {
		c.discard()
		return st, changes, err
	}
	var dels []int64
	for _, s := range seqs {
		if !found[s] {
			dels = append(dels, s)
		}
	}
	st.Deleted = len(dels)
	news, err := c.finish(dels)
	if err != nil {
		return st, changes, err
	}
	segs = append(segs, news...)

	// Merges: while the newest segment is at least half the size of the one
	// before it (within SegmentItems and SegmentBytes), and while there are
	// too many.
	for len(segs) >= 2 {
		a, b := segs[len(segs)-2], segs[len(segs)-1]
		if 2*b.size() < a.size() || a.size()+b.size() > opt.SegmentItems || a.bytes()+b.bytes() > opt.SegmentBytes {
			break
		}
		var k int
		if segs, k, err = w.rewrite(ctx, segs, len(segs)-2, len(segs)-1, &st); err != nil {
			return st, changes, err
		}
		if k > 1 {
			break // it took two files after all
		}
	}
	if segs, err = w.fewer(ctx, segs, &st); err != nil {
		return st, changes, err
	}
	// Purges: a segment that still holds a deleted episode, or whose
	// records are mostly replaced, is rewritten alone (and dropped when
	// nothing of it is left).
	for i := 0; i < len(segs)-1; i++ {
		dead, deleted := deadRecords(segs, i)
		if deleted > 0 || (dead > 0 && float64(dead) >= opt.DeadShare*float64(segs[i].view.Len())) {
			var k int
			if segs, k, err = w.rewrite(ctx, segs, i, i, &st); err != nil {
				return st, changes, err
			}
			i += k - 1
		}
	}
	if segs, err = w.fewer(ctx, segs, &st); err != nil {
		return st, changes, err
	}
	if err := w.commit(segs, storeID, last); err != nil {
		return st, changes, err
	}
	st.Segments = len(segs)
	return st, changes, db.PruneEpisodeChanges(ctx, last)
}

// fewer merges the two adjacent segments with the fewest episodes while
// there are more than MaxSegments, of the pairs whose files fit in one.
func (w *indexWriter) fewer(ctx context.Context, segs []*segment, st *IndexStats) ([]*segment, error) {
	for len(segs) > w.opt.MaxSegments {
		best := -1
		for i := 0; i+1 < len(segs); i++ {
			if segs[i].bytes()+segs[i+1].bytes() > w.opt.SegmentBytes {
				continue
			}
			if best < 0 || segs[i].size()+segs[i+1].size() < segs[best].size()+segs[best+1].size() {
				best = i
			}
		}
		if best < 0 {
			break // none fits: more segments, each within the readers' limit
		}
		n := len(segs)
		var err error
		if segs, _, err = w.rewrite(ctx, segs, best, best+1, st); err != nil {
			return segs, err
		}
		if len(segs) >= n {
			break
		}
	}
	return segs, nil
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

// bytes is the size of the segment's file.
func (s *segment) bytes() int { return s.view.Size() }

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
	opt   IndexOptions
	repl  replacements // what superseded the superseded episodes
	next  uint64
	// written are the files of this sync not (yet) in a manifest: removed
	// when it fails.
	written []string
}

// item is an episode as a segment holds it, and the sentence embedder of
// its dense vector ("" without one).
func (w *indexWriter) item(e store.IndexEpisode) (recall.Item, string) {
	it := recall.EpisodeItem(e.Episode)
	it.Seq = e.Seq
	w.repl.apply(&it, e.Episode)
	it.Terms = e.EntitiesText
	if it.Detail == "" {
		it.Terms = e.Context + "\n" + e.EntitiesText
	}
	denseBy := ""
	if e.Embedder == w.local.Name() {
		it.Vec = e.Embedding
	} else if embed.IsSentence(e.Embedder) {
		it.Dense, denseBy = e.Embedding, e.Embedder
	}
	return it, denseBy
}

// cutter starts cutting items into new segments of at most maxItems
// episodes (0: any number) and w.opt.SegmentBytes bytes.
func (w *indexWriter) cutter(maxItems int, st *IndexStats) *segmentCutter {
	return &segmentCutter{w: w, maxItems: maxItems, st: st}
}

// segmentCutter writes items, by ascending seq, into as many new segments
// as their count and size need. A segment's dense vectors are those of the
// sentence embedder most of its items have (normally the only one); items
// of another keep none there.
type segmentCutter struct {
	w        *indexWriter
	maxItems int
	st       *IndexStats
	b        *recall.Builder
	lastSeq  int64
	out      []*segment
	skipped  []int64
}

func (c *segmentCutter) builder() *recall.Builder {
	return recall.NewBuilder(&recall.File{Embedder: c.w.local.Name(), CreatedAt: c.w.now, Scope: recall.SegmentScope})
}

func (c *segmentCutter) add(it recall.Item, denseBy string) error {
	if it.Seq <= c.lastSeq {
		return fmt.Errorf("search index: episode seq %d after %d", it.Seq, c.lastSeq)
	}
	c.lastSeq = it.Seq
	limit := c.w.opt.SegmentBytes
	if c.b != nil && c.maxItems > 0 && c.b.Len() >= c.maxItems {
		if err := c.flush(); err != nil {
			return err
		}
	}
	if c.b == nil {
		c.b = c.builder()
	}
	if c.b.TryAdd(it, denseBy, limit) {
		return nil
	}
	if c.b.Len() > 0 {
		if err := c.flush(); err != nil {
			return err
		}
		c.b = c.builder()
		if c.b.TryAdd(it, denseBy, limit) {
			return nil
		}
	}
	// Too large for a segment of its own.
	c.skipped = append(c.skipped, it.Seq)
	c.st.Skipped++
	return nil
}

// flush writes the segment being built, if it holds anything.
func (c *segmentCutter) flush() error {
	b := c.b
	c.b = nil
	if b == nil || (b.Len() == 0 && b.Dels() == 0) {
		return nil
	}
	seg, err := c.w.save(b)
	if err != nil {
		c.discard()
		return err
	}
	c.out = append(c.out, seg)
	c.st.Written++
	c.st.Episodes += seg.view.Len()
	return nil
}

// finish writes the last segment, which also holds the deletions dels
// (ascending) and those of the skipped items, and returns the new
// segments, by ascending seqs (none when there was nothing to write).
func (c *segmentCutter) finish(dels []int64) ([]*segment, error) {
	if len(c.skipped) > 0 {
		dels = append(slices.Clone(dels), c.skipped...)
		slices.Sort(dels)
		dels = slices.Compact(dels)
	}
	if len(dels) > 0 {
		if c.b == nil {
			c.b = c.builder()
		}
		if !c.b.SetDels(dels, c.w.opt.SegmentBytes) {
			if err := c.flush(); err != nil {
				return nil, err
			}
			c.b = c.builder()
			c.b.SetDels(dels, 0) // alone: SaveBuilder refuses it if it is too large
		}
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	return c.out, nil
}

// discard closes the segments written so far (their files go with the
// failed sync's, abandon).
func (c *segmentCutter) discard() {
	for _, s := range c.out {
		s.view.Close()
	}
	c.out = nil
}

// save writes a new segment.
func (w *indexWriter) save(b *recall.Builder) (*segment, error) {
	name := recall.SegmentName(w.next)
	w.next++
	path := filepath.Join(w.dir, name)
	if err := recall.SaveBuilder(path, b); err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	w.written = append(w.written, path)
	v, err := recall.LoadView(path)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	return newSegment(name, v), nil
}

// rewrite replaces segments a..b with new ones, k of them: each seq whose
// newest mention in the index is among them, as a record read anew from
// the store, or as a deletion that an older segment still needs. Records
// that newer segments replace are dropped; when nothing is left, so are
// the segments (k = 0). Normally k is 1; more when the records do not fit
// in one file.
func (w *indexWriter) rewrite(ctx context.Context, segs []*segment, a, b int, st *IndexStats) ([]*segment, int, error) {
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
	slices.Sort(dels)
	c := w.cutter(0, st)
	if len(keep) > 0 { // (no seqs would read every episode)
		if err := w.db.EachIndexEpisode(ctx, keep, func(e store.IndexEpisode) error {
			return c.add(w.item(e))
		}); err != nil {
			c.discard()
			return segs, 0, err
		}
	}
	news, err := c.finish(dels)
	if err != nil {
		return segs, 0, err
	}
	for i := a; i <= b; i++ {
		segs[i].view.Close()
	}
	out := append(slices.Clone(segs[:a]), news...)
	return append(out, segs[b+1:]...), len(news), nil
}

// rebuild writes the whole index anew from the store.
func (w *indexWriter) rebuild(ctx context.Context, last int64, storeID string, st *IndexStats) error {
	st.Rebuilt = true
	c := w.cutter(w.opt.SegmentItems, st)
	err := w.db.EachIndexEpisode(ctx, nil, func(e store.IndexEpisode) error {
		return c.add(w.item(e))
	})
	var segs []*segment
	if err == nil {
		segs, err = c.finish(nil)
	} else {
		c.discard()
	}
	defer func() {
		for _, s := range segs {
			s.view.Close()
		}
	}()
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
	if err := recall.WriteManifest(w.home, m); err != nil {
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
