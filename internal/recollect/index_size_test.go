package recollect

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

const testSentence = "minilm-test-384"

func unitVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// segmentFiles checks that the manifest names every segment file of the
// index and that none is larger than limit; it returns the segments' names
// and their records.
func segmentFiles(t *testing.T, home string, limit int) ([]string, int) {
	t.Helper()
	m, err := recall.ReadManifest(home)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	records := 0
	for _, s := range m.Segments {
		names = append(names, s.Name)
		records += s.Items
		fi, err := os.Stat(filepath.Join(recall.IndexDir(home), s.Name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > int64(limit) {
			t.Errorf("%s: %d bytes, over %d", s.Name, fi.Size(), limit)
		}
	}
	files, _ := filepath.Glob(filepath.Join(recall.IndexDir(home), "seg-*.rec"))
	if len(files) != len(names) {
		t.Errorf("%d segment files for %d segments in the manifest", len(files), len(names))
	}
	return names, records
}

// A set of changes far larger than a segment file may be (every episode
// re-embedded by the sentence embedder at once) is written in as many
// segments as its size needs, each within the limit; the segments it
// replaces wholly are dropped. An episode too large for a segment of its
// own is left out, and its older record with it.
func TestIndexCutsSegmentsBySize(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(9, 10)), local: embed.NewLocal()}
	var eps []episode.Episode
	for range 200 {
		eps = append(eps, g.episode(now))
	}
	eps[7].Summary += " quuxolder"
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	// Segments of at most 1,000 episodes, but of 24 KiB: about 50 of these
	// episodes with local vectors, 25 with sentence vectors.
	opt := IndexOptions{SegmentItems: 1000, SegmentBytes: 24 << 10}
	st, err := SyncIndex(ctx, db, home, opt, now)
	if err != nil || !st.Rebuilt || st.Segments < 3 || st.Episodes != len(eps) {
		t.Fatalf("rebuild: %+v %v", st, err)
	}
	before, _ := segmentFiles(t, home, opt.SegmentBytes)

	vecs := map[string][]float32{}
	var vs []store.Vector
	for _, e := range eps {
		v := unitVec(g.r, 384)
		vecs[e.ID] = v
		vs = append(vs, store.Vector{ID: e.ID, Vector: v})
	}
	if err := db.SetEpisodeVectors(ctx, testSentence, vs); err != nil {
		t.Fatal(err)
	}
	st, err = SyncIndex(ctx, db, home, opt, now)
	if err != nil || st.Rebuilt || st.Changed != len(eps) || st.Written < 6 || st.Segments != st.Written {
		t.Fatalf("sync of every episode re-embedded: %+v %v", st, err)
	}
	after, records := segmentFiles(t, home, opt.SegmentBytes)
	if records != len(eps) {
		t.Errorf("%d records for %d episodes: replaced segments left", records, len(eps))
	}
	for _, name := range after {
		if slices.Contains(before, name) {
			t.Errorf("%s was wholly replaced but is still in the index", name)
		}
	}
	for _, name := range after {
		v, err := recall.LoadView(filepath.Join(recall.IndexDir(home), name))
		if err != nil {
			t.Fatal(err)
		}
		if v.Dense != testSentence || v.DenseDim() != 384 {
			t.Fatalf("%s: dense vectors of %q, %d dimensions", name, v.Dense, v.DenseDim())
		}
		for i := range v.Len() {
			it, err := v.Item(i)
			if err != nil {
				t.Fatal(err)
			}
			if cos := v.DenseCos(i, vecs[it.ID]); cos < 0.99 {
				t.Fatalf("%s: %s's dense vector is off (cosine %.3f)", name, it.ID, cos)
			}
		}
		v.Close()
	}
	compareSearch(t, ctx, db, home, g, 1)
	if last, _, seqs, err := db.EpisodeChanges(ctx, 0); err != nil || len(seqs) != 0 || last != 0 {
		t.Errorf("change log after sync: last %d seqs %v err %v", last, seqs, err)
	}

	// An episode whose record alone is larger than a segment may be.
	big := eps[7]
	huge := strings.Repeat("zanzibarquux ", 6000)
	if _, err := db.CompressEpisodes(ctx, []store.StaleEpisode{{ID: big.ID, Summary: huge}}); err != nil {
		t.Fatal(err)
	}
	ix := recall.OpenIndex(home)
	oldWord := recall.Terms("quuxolder")[0]
	hitsBefore, err := ix.Search(ctx, []string{oldWord}, nil, 0, 1000, "")
	if err != nil || len(hitsBefore) != 1 || hitsBefore[0].ID != big.ID {
		t.Fatalf("test setup: %q finds %d hits before (%v)", oldWord, len(hitsBefore), err)
	}
	ix.Close()
	st, err = SyncIndex(ctx, db, home, opt, now)
	if err != nil || st.Skipped != 1 {
		t.Fatalf("sync with an episode too large: %+v %v", st, err)
	}
	segmentFiles(t, home, opt.SegmentBytes)
	ix = recall.OpenIndex(home)
	defer ix.Close()
	if hits, _ := ix.Search(ctx, []string{"zanzibarquux"}, nil, 0, 10, ""); len(hits) != 0 {
		t.Errorf("the episode too large is found: %d hits", len(hits))
	}
	hitsAfter, err := ix.Search(ctx, []string{oldWord}, nil, 0, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hitsAfter {
		if h.ID == big.ID {
			t.Errorf("the older record of the episode too large is still found")
		}
	}
}

// A sync that fails halfway leaves the index as it was, in use, and no
// file of its own behind; it says why until a sync succeeds, and the next
// sync applies the same changes.
func TestIndexFailedSyncKeepsIndex(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(11, 12)), local: embed.NewLocal()}
	var eps []episode.Episode
	for range 50 {
		eps = append(eps, g.episode(now))
	}
	eps[3].Summary = "the vault code is kept in quuxvault"
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	opt := IndexOptions{SegmentItems: 20}
	if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(recall.ManifestPath(home))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recall.ReadManifest(home)
	// 30 new episodes: two new segments of 20 and 10. The second cannot be
	// written: a directory holds its name.
	var more []episode.Episode
	for range 30 {
		more = append(more, g.episode(now))
	}
	more[25].Summary = "the deploy key is zanzibarquux"
	if err := db.ImportEpisodes(ctx, more); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(recall.IndexDir(home), recall.SegmentName(m.NextName+1))
	if err := os.Mkdir(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = SyncIndex(ctx, db, home, opt, now)
	if err == nil {
		t.Fatal("the sync succeeded with a segment it cannot write")
	}
	if got, _ := os.ReadFile(recall.ManifestPath(home)); !bytes.Equal(got, manifest) {
		t.Error("a failed sync changed the manifest")
	}
	f, ferr := recall.ReadIndexFailure(home)
	if ferr != nil || f == nil || f.Changes != len(more) || !strings.Contains(f.Error, filepath.Base(blocker)) || !f.At.Equal(now) {
		t.Fatalf("failure recorded: %+v %v (sync error %v)", f, ferr, err)
	}
	entries, _ := os.ReadDir(recall.IndexDir(home))
	for _, e := range entries {
		name := e.Name()
		known := name == "manifest" || name == "lock" || name == "failed.json" || name == filepath.Base(blocker)
		for _, s := range m.Segments {
			known = known || name == s.Name
		}
		if !known {
			t.Errorf("a failed sync left %s", name)
		}
	}
	// The previous index is the one in use.
	ix := recall.OpenIndex(home)
	if hits, err := ix.Search(ctx, []string{"quuxvault"}, nil, 0, 5, ""); err != nil || len(hits) != 1 {
		t.Errorf("previous index: %d hits, %v", len(hits), err)
	}
	if hits, _ := ix.Search(ctx, []string{"zanzibarquux"}, nil, 0, 5, ""); len(hits) != 0 {
		t.Errorf("an episode of the failed sync is found")
	}
	ix.Close()

	// The cause gone, the next sync does the job and clears the record.
	os.Remove(blocker)
	st, err := SyncIndex(ctx, db, home, opt, now)
	if err != nil || st.Changed != len(more) {
		t.Fatalf("next sync: %+v %v", st, err)
	}
	if f, err := recall.ReadIndexFailure(home); f != nil || err != nil {
		t.Errorf("failure still recorded: %+v %v", f, err)
	}
	compareSearch(t, ctx, db, home, g, 0)
	ix = recall.OpenIndex(home)
	defer ix.Close()
	if hits, _ := ix.Search(ctx, []string{"zanzibarquux"}, nil, 0, 5, ""); len(hits) != 1 {
		t.Errorf("after the next sync: %d hits", len(hits))
	}
}

// A cancelled sync is not the index's failure.
func TestIndexCancelledSyncIsNoFailure(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	if _, err := SyncIndex(ctx, db, home, IndexOptions{}, now); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := SyncIndex(cctx, db, home, IndexOptions{}, now); err == nil {
		t.Fatal("a cancelled sync succeeded")
	}
	if f, err := recall.ReadIndexFailure(home); f != nil || err != nil {
		t.Errorf("a cancelled sync recorded a failure: %+v %v", f, err)
	}
}
