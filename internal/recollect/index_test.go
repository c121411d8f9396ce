package recollect

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// words of the generated episodes: a few common ones, many rare ones, and
// forms that stem alike ("deploys", "deploying"), with diacritics and
// punctuation the tokenizer must split as FTS5 does.
var indexWords = func() []string {
	w := []string{"deploy", "deploys", "deploying", "billing", "fly", "postgres", "café", "naïve", "user's", "test-driven",
		"flyctl", "chrony", "migrations", "invoice", "invoices", "schema", "retry", "webhook", "Über", "x86_64"}
	for i := range 60 {
		w = append(w, fmt.Sprintf("term%dz", i))
	}
	return w
}()

type indexGen struct {
	r     *rand.Rand
	n     int
	local *embed.Local
}

func (g *indexGen) text(words int) string {
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteString([]string{" ", ", ", ". ", " (", ") "}[g.r.IntN(5)])
		}
		// Skewed: the first words are far more common.
		k := int(float64(len(indexWords)) * g.r.Float64() * g.r.Float64())
		b.WriteString(indexWords[k])
	}
	return b.String()
}

func (g *indexGen) episode(at time.Time) episode.Episode {
	g.n++
	id := fmt.Sprintf("ep_%012d", g.n)
	scope, project := "project", []string{"/p", "/q"}[g.r.IntN(2)]
	if g.r.IntN(5) == 0 {
		scope, project = "global", ""
	}
	summary := g.text(3 + g.r.IntN(6))
	ctxt := g.text(5 + g.r.IntN(40))
	if g.r.IntN(4) == 0 {
		ctxt = strings.Repeat(ctxt+" ", 1+recall.MaxDetail/max(1, len(ctxt))) // too long for a bite: indexed, not stored
	}
	e := episode.Episode{ID: id, Summary: summary, Context: ctxt, Entities: []string{g.text(1), g.text(2)},
		Type: episode.TypeEvent, Scope: scope, Project: filepath.Base(project), ProjectPath: project,
		SessionID: fmt.Sprintf("s%d", g.r.IntN(4)), ContentHash: id, Importance: g.r.Float64(),
		OccurredAt: at, CreatedAt: at, UpdatedAt: at, Stability: 1}
	if g.r.IntN(3) > 0 {
		e.Embedding, e.Embedder = g.local.EmbedText(summary), g.local.Name()
	}
	return e
}

// compareSearch checks that the index answers as the store's FTS5 index
// does, for random queries, windows and projects.
func compareSearch(t *testing.T, ctx context.Context, db *store.DB, home string, g *indexGen, round int) {
	t.Helper()
	ix := recall.OpenIndex(home)
	defer ix.Close()
	fts := StoreSearcher{DB: db}
	for q := range 40 {
		var terms []string
		var weights []float64
		for range 1 + g.r.IntN(5) {
			// One token each, as recall's terms are (with diacritics and
			// capitals, which both fold).
			w := strings.FieldsFunc(indexWords[g.r.IntN(len(indexWords))], func(r rune) bool { return strings.ContainsRune("'-_", r) })
			terms = append(terms, w[0])
			weights = append(weights, float64(1+g.r.IntN(4))/2)
		}
		if q%7 == 0 {
			terms = append(terms, "absentword")
			weights = append(weights, 3)
		}
		window := []int{0, 3, 10, 50}[g.r.IntN(4)]
		project := []string{"", "/p", "/q"}[g.r.IntN(3)]
		limit := 1 + g.r.IntN(20)
		want, err := fts.Search(ctx, terms, weights, window, limit, project)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.Search(ctx, terms, weights, window, limit, project)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffHits(got, want); d != "" {
			t.Fatalf("round %d: search %q weights %v window %d project %q limit %d: %s", round, terms, weights, window, project, limit, d)
		}
		// The neighbours of what was found.
		var items []recall.Item
		for _, h := range want {
			items = append(items, h.Item)
		}
		wantN, err := fts.Neighbours(ctx, items, recall.DefaultSettings.NeighbourWindow)
		if err != nil {
			t.Fatal(err)
		}
		gotN, err := ix.Neighbours(ctx, items, recall.DefaultSettings.NeighbourWindow)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffNeighbours(gotN, wantN); d != "" {
			t.Fatalf("round %d: neighbours of %q: %s", round, terms, d)
		}
	}
}

func hitLine(h recall.Hit) string {
	return fmt.Sprintf("%s seq=%d score=%g mask=%b text=%q detail=%d scope=%s project=%s session=%s access=%d stability=%g vec=%v",
		h.ID, h.Seq, h.Score, h.Mask, h.Text, len(h.Detail), h.Scope, h.ProjectPath, h.SessionID, h.AccessCount, h.Stability, h.HasVec())
}

func diffHits(got, want []recall.Hit) string {
	var g, w []string
	for _, h := range got {
		g = append(g, hitLine(h))
	}
	for _, h := range want {
		w = append(w, hitLine(h))
	}
	if slices.Equal(g, w) {
		return ""
	}
	return fmt.Sprintf("\nindex:\n  %s\nfts5:\n  %s", strings.Join(g, "\n  "), strings.Join(w, "\n  "))
}

func diffNeighbours(got, want map[string]recall.Neighbours) string {
	id := func(it *recall.Item) string {
		if it == nil {
			return "-"
		}
		return it.ID
	}
	line := func(m map[string]recall.Neighbours) []string {
		var out []string
		for k, n := range m {
			out = append(out, k+": "+id(n.Before)+" "+id(n.After))
		}
		slices.Sort(out)
		return out
	}
	if g, w := line(got), line(want); !slices.Equal(g, w) {
		return fmt.Sprintf("index %v, fts5 %v", g, w)
	}
	return ""
}

func openStore(t *testing.T, home string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(home, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// The index answers every search as the store's FTS5 index would, through
// inserts, access updates, compression, deletions, merges and purges.
func TestIndexMatchesFTS5(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(1, 2)), local: embed.NewLocal()}
	at := now.Add(-1000 * time.Hour)
	var live []string
	insert := func(n int) {
		var eps []episode.Episode
		for range n {
			at = at.Add(time.Duration(g.r.IntN(90)) * time.Minute)
			eps = append(eps, g.episode(at))
		}
		if err := db.ImportEpisodes(ctx, eps); err != nil {
			t.Fatal(err)
		}
		for _, e := range eps {
			live = append(live, e.ID)
		}
	}
	opt := IndexOptions{SegmentItems: 64, MaxSegments: 6}
	insert(150)
	st, err := SyncIndex(ctx, db, home, opt, now)
	if err != nil || !st.Rebuilt || st.Segments != 3 || st.Episodes != 150 {
		t.Fatalf("first sync: %+v %v", st, err)
	}
	compareSearch(t, ctx, db, home, g, 0)
	segsSeen := 0
	for round := 1; round <= 12; round++ {
		insert(g.r.IntN(25))
		// Accesses of old and new episodes.
		var acc []store.Access
		for range g.r.IntN(6) {
			acc = append(acc, store.Access{ID: live[g.r.IntN(len(live))], At: now})
		}
		if _, err := db.RecordAccesses(ctx, acc); err != nil {
			t.Fatal(err)
		}
		// Compression of a few (summary shorter, context dropped).
		if round%3 == 0 {
			id := live[g.r.IntN(len(live))]
			if _, err := db.CompressEpisodes(ctx, []store.StaleEpisode{{ID: id, Summary: "compressed " + g.text(2)}}); err != nil {
				t.Fatal(err)
			}
		}
		// Deletions.
		for range g.r.IntN(4) {
			k := g.r.IntN(len(live))
			if err := db.DeleteEpisode(ctx, live[k]); err != nil {
				t.Fatal(err)
			}
			live = slices.Delete(live, k, k+1)
		}
		st, err := SyncIndex(ctx, db, home, opt, now)
		if err != nil || st.Rebuilt {
			t.Fatalf("round %d: %+v %v", round, st, err)
		}
		if st.Segments > opt.MaxSegments {
			t.Fatalf("round %d: %d segments", round, st.Segments)
		}
		segsSeen = max(segsSeen, st.Segments)
		compareSearch(t, ctx, db, home, g, round)
	}
	if segsSeen < 4 {
		t.Errorf("at most %d segments: the merges were not exercised", segsSeen)
	}
	// Nothing to do: no new segment.
	m1, _ := recall.ReadManifest(home)
	if st, err := SyncIndex(ctx, db, home, opt, now); err != nil || st.Written != 0 {
		t.Errorf("idle sync: %+v %v", st, err)
	}
	if m2, _ := recall.ReadManifest(home); len(m2.Segments) != len(m1.Segments) {
		t.Error("idle sync changed the manifest")
	}
	// The change log is pruned up to what the index holds.
	if last, _, seqs, err := db.EpisodeChanges(ctx, 0); err != nil || len(seqs) != 0 || last != 0 {
		t.Errorf("change log after sync: last %d seqs %v err %v", last, seqs, err)
	}
}

// A forgotten episode's words are in no file of the index after the sync,
// however old the segment that held it.
func TestIndexForgetLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(3, 4)), local: embed.NewLocal()}
	var eps []episode.Episode
	for range 100 {
		eps = append(eps, g.episode(now))
	}
	secret := "zanzibarquux"
	eps[10].Summary = "the vault code is " + secret
	eps[10].Context = "we keep the " + secret + " code here"
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	opt := IndexOptions{SegmentItems: 30}
	if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
		t.Fatal(err)
	}
	// Later segments, so that the one holding it is old.
	for i := range 3 {
		if err := db.ImportEpisodes(ctx, []episode.Episode{g.episode(now.Add(time.Duration(i) * time.Hour))}); err != nil {
			t.Fatal(err)
		}
		if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
			t.Fatal(err)
		}
	}
	ix := recall.OpenIndex(home)
	if hits, _ := ix.Search(ctx, []string{secret}, nil, 0, 5, ""); len(hits) != 1 {
		t.Fatalf("before: %d hits", len(hits))
	}
	ix.Close()
	if !traceIn(t, home, secret) {
		t.Fatal("the word is not in the index files to begin with")
	}
	if err := db.DeleteEpisode(ctx, eps[10].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
		t.Fatal(err)
	}
	if traceIn(t, home, secret) {
		t.Error("a forgotten episode's text is still in the index files")
	}
	ix = recall.OpenIndex(home)
	defer ix.Close()
	if hits, _ := ix.Search(ctx, []string{secret}, nil, 0, 5, ""); len(hits) != 0 {
		t.Errorf("after: %d hits", len(hits))
	}
	compareSearch(t, ctx, db, home, g, 0)
}

func traceIn(t *testing.T, home, word string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(recall.IndexDir(home), "*"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(word)) {
			return true
		}
	}
	return false
}

// An index that does not match its store is built anew: a damaged
// manifest, a missing segment, another store in the same place.
func TestIndexRebuilds(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(5, 6)), local: embed.NewLocal()}
	var eps []episode.Episode
	for range 50 {
		eps = append(eps, g.episode(now))
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	opt := IndexOptions{SegmentItems: 20}
	if st, err := SyncIndex(ctx, db, home, opt, now); err != nil || !st.Rebuilt {
		t.Fatalf("%+v %v", st, err)
	}
	os.WriteFile(recall.ManifestPath(home), []byte("ENGRAMIX junk"), 0o600)
	if st, err := SyncIndex(ctx, db, home, opt, now); err != nil || !st.Rebuilt || st.Segments != 3 {
		t.Fatalf("damaged manifest: %+v %v", st, err)
	}
	compareSearch(t, ctx, db, home, g, 1)
	m, _ := recall.ReadManifest(home)
	os.Remove(filepath.Join(recall.IndexDir(home), m.Segments[1].Name))
	if st, err := SyncIndex(ctx, db, home, opt, now); err != nil || !st.Rebuilt {
		t.Fatalf("missing segment: %+v %v", st, err)
	}
	compareSearch(t, ctx, db, home, g, 2)
	// A new store under the same home: none of the old episodes is found.
	db.Close()
	os.Remove(filepath.Join(home, "memory.db"))
	os.Remove(filepath.Join(home, "memory.db-wal"))
	os.Remove(filepath.Join(home, "memory.db-shm"))
	db2 := openStore(t, home)
	fresh := g.episode(now)
	if err := db2.ImportEpisodes(ctx, []episode.Episode{fresh}); err != nil {
		t.Fatal(err)
	}
	if st, err := SyncIndex(ctx, db2, home, opt, now); err != nil || !st.Rebuilt || st.Episodes != 1 {
		t.Fatalf("new store: %+v %v", st, err)
	}
	compareSearch(t, ctx, db2, home, g, 3)
	files, _ := filepath.Glob(filepath.Join(recall.IndexDir(home), "seg-*.rec"))
	if len(files) != 1 {
		t.Errorf("old segments left: %v", files)
	}
	for _, f := range append(files, recall.ManifestPath(home), recall.IndexDir(home)) {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %v", f, perm)
		}
	}
}

// Searches while the worker syncs (the hook and the worker at once) always
// see a complete index: no error, and every hit is a stored episode.
func TestIndexReadersDuringSyncs(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	db := openStore(t, home)
	g := &indexGen{r: rand.New(rand.NewPCG(7, 8)), local: embed.NewLocal()}
	var eps []episode.Episode
	for range 60 {
		eps = append(eps, g.episode(now))
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	opt := IndexOptions{SegmentItems: 40, MaxSegments: 4}
	if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ix := recall.OpenIndex(home)
				hits, err := ix.Search(ctx, []string{"deploy", "billing", "term3z"}, nil, 0, 50, "")
				if err == nil {
					for _, h := range hits {
						if !strings.HasPrefix(h.ID, "ep_") || h.Seq <= 0 {
							err = fmt.Errorf("bad hit %+v", h)
						}
					}
				}
				ix.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 30 {
		if err := db.ImportEpisodes(ctx, []episode.Episode{g.episode(now.Add(time.Duration(i) * time.Minute))}); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			db.DeleteEpisode(ctx, eps[i].ID)
		}
		if _, err := SyncIndex(ctx, db, home, opt, now); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	compareSearch(t, ctx, db, home, g, 0)
}
