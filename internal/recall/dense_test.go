package recall

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench/cputime"
	"github.com/engram-memory/engram/internal/embed"
)

const testDense = "minilm-test-16"

func randUnit(r *rand.Rand, dim int) []float32 {
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

// near returns a unit vector at about the given cosine from v.
func near(r *rand.Rand, v []float32, cos float64) []float32 {
	u := randUnit(r, len(v))
	// Remove u's component along v, then mix.
	var d float64
	for i := range v {
		d += float64(u[i]) * float64(v[i])
	}
	var n float64
	for i := range u {
		u[i] -= float32(d) * v[i]
		n += float64(u[i]) * float64(u[i])
	}
	s := math.Sqrt(1 - cos*cos)
	out := make([]float32, len(v))
	for i := range v {
		out[i] = float32(cos)*v[i] + float32(s)*u[i]/float32(math.Sqrt(n))
	}
	return out
}

func TestDenseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := &File{Embedder: "local-v1-256", Dense: testDense, Scope: "global"}
	for i := range 5 {
		it := Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", i), Text: "text", Dense: randUnit(r, 384)}
		if i == 3 {
			it.Dense = nil // an item without a dense vector
		}
		f.Items = append(f.Items, it)
	}
	v, err := DecodeView(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if v.Dense != testDense || v.DenseDim() != 384 {
		t.Fatalf("dense %q dim %d", v.Dense, v.DenseDim())
	}
	q := f.Items[1].Dense
	for i, it := range f.Items {
		got := v.DenseCos(i, q)
		want := float32(0)
		if it.Dense != nil {
			want = embed.Cosine(it.Dense, q)
		}
		if math.Abs(float64(got-want)) > 0.01 {
			t.Errorf("item %d: cosine %v, want %v", i, got, want)
		}
		item, err := v.Item(i)
		if err != nil {
			t.Fatal(err)
		}
		if item.HasDense() != (it.Dense != nil) {
			t.Errorf("item %d: HasDense %v", i, item.HasDense())
		}
	}
	back, err := Decode(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if back.Dense != testDense || len(back.Items[0].Dense) != 384 || back.Items[3].Dense != nil {
		t.Errorf("Decode lost the dense vectors: %q %d %d", back.Dense, len(back.Items[0].Dense), len(back.Items[3].Dense))
	}
	// Every truncation of the file is an error, never a panic.
	data := f.Encode()
	for n := 0; n < len(data); n += 7 {
		if _, err := DecodeView(data[:n]); err == nil {
			t.Fatalf("a file cut at %d of %d bytes decoded", n, len(data))
		}
	}
}

// A file of the previous format (version 4, no dense table) still reads:
// an upgrade keeps the hook answering until the worker rewrites the files.
func TestReadsVersion4(t *testing.T) {
	v, err := LoadView(filepath.Join("testdata", "global-v4.rec"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if v.HasDense() || v.Len() != 1 {
		t.Fatalf("dense %v, %d items", v.HasDense(), v.Len())
	}
	it, err := v.Item(0)
	if err != nil || it.Text != "User prefers pnpm over npm." || it.HasDense() {
		t.Fatalf("item %+v, %v", it, err)
	}
}

// writeIndex writes segments (oldest first) and their manifest.
func writeIndex(t testing.TB, home string, segs ...*File) *Index {
	t.Helper()
	m := &Manifest{StoreID: "s", LastChange: 1, NextName: uint64(len(segs) + 1), BuiltAt: time.Now()}
	for i, f := range segs {
		f.Scope = SegmentScope
		name := SegmentName(uint64(i + 1))
		if err := Save(filepath.Join(IndexDir(home), name), f); err != nil {
			t.Fatal(err)
		}
		m.Segments = append(m.Segments, SegmentInfo{Name: name, Items: len(f.Items), Dels: len(f.Dels)})
	}
	if err := WriteAtomic(ManifestPath(home), m.Encode()); err != nil {
		t.Fatal(err)
	}
	return OpenIndex(home)
}

// The two-pass dense search finds what an exact search over every vector
// finds: planted neighbours among 20,000 random vectors, at the cosines
// related texts have.
func TestDenseSearchMatchesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, queries = 20000, 20
	var items []Item
	vecs := make([][]float32, 0, n)
	qs := make([][]float32, queries)
	for i := range queries {
		qs[i] = randUnit(r, 384)
	}
	// Sentence vectors are not isotropic: every text shares a common
	// direction, so that unrelated texts have cosines around 0.1 to 0.2 and
	// their signs agree more than chance. The vectors here have one too.
	common := randUnit(r, 384)
	skew := func(v []float32) []float32 {
		out := make([]float32, len(v))
		var n float64
		for i := range v {
			out[i] = v[i] + 0.4*common[i]
			n += float64(out[i]) * float64(out[i])
		}
		for i := range out {
			out[i] /= float32(math.Sqrt(n))
		}
		return out
	}
	for i := range qs {
		qs[i] = skew(qs[i])
	}
	for i := range n {
		var v []float32
		if i%1000 < queries && i < queries*1000 {
			// Each query gets neighbours spread through the index.
			v = near(r, qs[i%1000], 0.3+0.3*r.Float64())
		} else {
			v = skew(randUnit(r, 384))
		}
		vecs = append(vecs, v)
		items = append(items, Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", i), Seq: int64(i + 1), Scope: "global", Dense: v})
	}
	home := t.TempDir()
	third := n / 3
	ix := writeIndex(t, home,
		&File{Embedder: "local-v1-256", Dense: testDense, Items: items[:third]},
		&File{Embedder: "local-v1-256", Dense: testDense, Items: items[third : 2*third]},
		&File{Embedder: "local-v1-256", Dense: testDense, Items: items[2*third:]})
	defer ix.Close()
	found, total := 0, 0
	for qi, q := range qs {
		type sc struct {
			i   int
			cos float32
		}
		var exact []sc
		for i, v := range vecs {
			exact = append(exact, sc{i, embed.Cosine(v, q)})
		}
		slices.SortFunc(exact, func(a, b sc) int {
			if a.cos > b.cos {
				return -1
			}
			if a.cos < b.cos {
				return 1
			}
			return 0
		})
		hits, err := ix.DenseSearch(context.Background(), testDense, q, 0.25, 10, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, h := range hits {
			got[h.ID] = true
		}
		for _, e := range exact[:10] {
			if e.cos < 0.25 {
				continue
			}
			total++
			if got[items[e.i].ID] {
				found++
			} else {
				t.Logf("query %d: missed %s at cosine %.3f", qi, items[e.i].ID, e.cos)
			}
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Cos > hits[i-1].Cos {
				t.Fatalf("query %d: hits out of order", qi)
			}
		}
	}
	if total == 0 || float64(found) < 0.95*float64(total) {
		t.Fatalf("dense search found %d of the %d nearest items above the floor", found, total)
	}
}

// A record a newer segment replaces or deletes is not returned, and another
// project's memories stay out.
func TestDenseSearchLiveAndVisible(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	q := randUnit(r, 384)
	mk := func(seq int64, project string, cos float64) Item {
		scope := "project"
		if project == "" {
			scope = "global"
		}
		return Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", seq), Seq: seq, Scope: scope, ProjectPath: project,
			Dense: near(r, q, cos)}
	}
	old := &File{Embedder: "x", Dense: testDense, Items: []Item{mk(1, "", 0.9), mk(2, "/p", 0.8), mk(3, "/q", 0.85), mk(4, "", 0.7)}}
	// Seq 1 changed (now far from the query), seq 4 deleted.
	newer := &File{Embedder: "x", Dense: testDense, Items: []Item{mk(1, "", 0.1)}, Dels: []int64{4}}
	ix := writeIndex(t, t.TempDir(), old, newer)
	defer ix.Close()
	hits, err := ix.DenseSearch(context.Background(), testDense, q, 0.25, 10, "/p")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	if !slices.Equal(ids, []string{"ep_000000000002"}) {
		t.Fatalf("hits %v, want only ep_000000000002 (seq 1 replaced, 3 another project's, 4 deleted)", ids)
	}
	// Another embedder's vectors are never compared.
	if hits, _ := ix.DenseSearch(context.Background(), "minilm-other-384", q, 0, 10, ""); len(hits) != 0 {
		t.Fatalf("another embedder's search found %d", len(hits))
	}
}

// shortlistViews writes n items in segs segments, every seventh without a
// dense vector, and returns the index's segments loaded.
func shortlistViews(tb testing.TB, r *rand.Rand, n, segs int) (*Index, []*View) {
	tb.Helper()
	files := make([]*File, segs)
	for s := range files {
		files[s] = &File{Embedder: "local-v1-256", Dense: testDense}
	}
	for i := range n {
		it := Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", i), Seq: int64(i + 1), Scope: "global"}
		if i%7 != 3 {
			it.Dense = randUnit(r, 384)
		}
		f := files[i*segs/n]
		f.Items = append(f.Items, it)
	}
	ix := writeIndex(tb, tb.TempDir(), files...)
	if err := ix.load(); err != nil {
		tb.Fatal(err)
	}
	return ix, ix.segs
}

// The first pass keeps the n items whose signs differ least from the
// query's, every item with a dense vector when there are fewer, none
// without one; at the boundary distance, the newest segments' first.
func TestShortlistNearest(t *testing.T) {
	for _, size := range []int{9000, parallelItems + 4000} { // one goroutine, then a segment per core
		t.Run(fmt.Sprint(size), func(t *testing.T) { testShortlistNearest(t, size) })
	}
}

func testShortlistNearest(t *testing.T, size int) {
	r := rand.New(rand.NewPCG(5, 6))
	ix, views := shortlistViews(t, r, size, 3+size/10000)
	defer ix.Close()
	for _, n := range []int{1, 100, 2048, size * 6 / 7, size} {
		q := randUnit(r, 384)
		qsig := Signature(q)
		type ref struct{ seg, item int }
		var all []shortItem
		for s, v := range views {
			for i := 0; i < v.n; i++ {
				if v.denseInvNorm(i) == 0 {
					continue
				}
				all = append(all, shortItem{sigDistance(v.dsigs[i*48:(i+1)*48], qsig), int32(s), int32(i)})
			}
		}
		got := shortlist(views, testDense, q, n)
		want := min(n, len(all))
		if len(got) != want {
			t.Fatalf("n=%d: %d candidates, want %d", n, len(got), want)
		}
		seen := map[ref]bool{}
		worst := 0
		for _, c := range got {
			k := ref{int(c.seg), int(c.item)}
			if seen[k] {
				t.Fatalf("n=%d: %v twice", n, k)
			}
			seen[k] = true
			if views[c.seg].denseInvNorm(int(c.item)) == 0 {
				t.Fatalf("n=%d: %v has no dense vector", n, k)
			}
			if d := sigDistance(views[c.seg].dsigs[int(c.item)*48:(int(c.item)+1)*48], qsig); d != c.dist {
				t.Fatalf("n=%d: %v at distance %d, said %d", n, k, d, c.dist)
			}
			worst = max(worst, c.dist)
		}
		newestLeft := -1 // the newest segment of an item left out at the boundary distance
		for _, c := range all {
			if seen[ref{int(c.seg), int(c.item)}] {
				continue
			}
			if c.dist < worst {
				t.Fatalf("n=%d: left out %v at distance %d, kept one at %d", n, c, c.dist, worst)
			}
			if c.dist == worst {
				newestLeft = max(newestLeft, int(c.seg))
			}
		}
		for _, c := range got {
			if c.dist == worst && int(c.seg) < newestLeft {
				t.Fatalf("n=%d: kept a tie of segment %d, left out one of segment %d", n, c.seg, newestLeft)
			}
		}
	}
	if got := shortlist(views, "minilm-other", randUnit(r, 384), 10); len(got) != 0 {
		t.Fatalf("another embedder's vectors: %d candidates", len(got))
	}
}

// denseCosines reads a mapped segment's vectors with pread, in runs of
// consecutive items: the same cosines as DenseCos through the mapping, for
// items in any order, with and without vectors, and for a view decoded
// from bytes (no file to read).
func TestDenseCosinesRead(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	ix, views := shortlistViews(t, r, 3000, 2)
	defer ix.Close()
	q := randUnit(r, 384)
	var items []int32
	for i := int32(0); i < 200; i++ { // a run longer than one read
		items = append(items, i)
	}
	for range 300 {
		items = append(items, int32(r.IntN(1500)))
	}
	items = append(items, 1499, 1498, 700, 3, 4)
	slices.Reverse(items)
	for s, v := range views {
		if v.file == nil {
			t.Fatalf("segment %d: mapped without its file kept open", s)
		}
		data, err := os.ReadFile(v.file.Name())
		if err != nil {
			t.Fatal(err)
		}
		heap, err := DecodeView(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []*View{v, heap} {
			got := make([]float32, len(items))
			w.denseCosines(items, q, got)
			nonzero := 0
			for k, i := range items {
				if want := v.DenseCos(int(i), q); got[k] != want {
					t.Fatalf("segment %d, item %d: %v, DenseCos %v", s, i, got[k], want)
				}
				if got[k] != 0 {
					nonzero++
				}
			}
			if nonzero < len(items)/2 {
				t.Fatalf("segment %d: %d of %d cosines are not 0", s, nonzero, len(items))
			}
		}
	}
}

// BenchmarkShortlist: the first pass over 100,000 items in seven
// segments, as an index of 100k episodes has them.
func BenchmarkShortlist(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	ix, views := shortlistViews(b, r, 100000, 7)
	defer ix.Close()
	q := randUnit(r, 384)
	start := cputime.Now()
	for b.Loop() {
		if got := shortlist(views, testDense, q, DenseShortlist); len(got) != DenseShortlist {
			b.Fatalf("%d candidates", len(got))
		}
	}
	b.ReportMetric(float64((cputime.Now()-start).Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
}
