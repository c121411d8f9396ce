package embed

import (
	"encoding/json"
	"math"
	"os"
	"sort"
	"testing"
)

// recallSet is testdata/recall.json: short episode-like notes and prompts
// that should recall some of them, written by hand, with paraphrases rather
// than copies so that word overlap is partial.
type recallSet struct {
	Docs    map[string]string `json:"docs"`
	Queries []struct {
		Q   string   `json:"q"`
		Rel []string `json:"rel"`
	} `json:"queries"`
}

func loadRecallSet(tb testing.TB) recallSet {
	tb.Helper()
	b, err := os.ReadFile("testdata/recall.json")
	if err != nil {
		tb.Fatal(err)
	}
	var rs recallSet
	if err := json.Unmarshal(b, &rs); err != nil {
		tb.Fatalf("testdata/recall.json: %v", err)
	}
	return rs
}

type recallScores struct {
	mrr, top1, top3 float64
	pairOrder       float64 // share of (query, relevant, irrelevant) triples ranked right
	noise           float64 // RMS of (hashed cosine - exact cosine) over all pairs of texts
}

// exactFeatures is the sparse, collision-free form of a Local vector:
// feature key → weight, before hashing into dimensions.
func exactFeatures(text string) map[uint64]float64 {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.reset()
	tokenize(sc, text)
	sc.finish()
	m := make(map[uint64]float64, len(sc.feats))
	for _, f := range sc.feats {
		m[f.key] += float64(f.w)
	}
	sc.release()
	return m
}

func exactCosine(a, b map[uint64]float64) float64 {
	var dot, na, nb float64
	for k, x := range a {
		dot += x * b[k]
		na += x * x
	}
	for _, y := range b {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// study holds the recall set as indexed texts: queries first, then
// documents.
type study struct {
	texts    []string
	nq       int
	rel      []map[int]bool // per query: relevant text indexes
	exactCos [][]float64
}

func newStudy(rs recallSet) *study {
	st := &study{nq: len(rs.Queries)}
	ids := make([]string, 0, len(rs.Docs))
	for id := range rs.Docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	index := map[string]int{}
	for _, q := range rs.Queries {
		st.texts = append(st.texts, q.Q)
	}
	for _, id := range ids {
		index[id] = len(st.texts)
		st.texts = append(st.texts, rs.Docs[id])
	}
	for _, q := range rs.Queries {
		rel := map[int]bool{}
		for _, r := range q.Rel {
			i, ok := index[r]
			if !ok {
				panic("recall.json: unknown document " + r)
			}
			rel[i] = true
		}
		st.rel = append(st.rel, rel)
	}
	fs := make([]map[uint64]float64, len(st.texts))
	for i, t := range st.texts {
		fs[i] = exactFeatures(t)
	}
	st.exactCos = make([][]float64, len(st.texts))
	for i := range st.texts {
		st.exactCos[i] = make([]float64, len(st.texts))
		for j := range i {
			c := exactCosine(fs[i], fs[j])
			st.exactCos[i][j], st.exactCos[j][i] = c, c
		}
	}
	return st
}

// score ranks the documents for every query by cos(i, j).
func (st *study) score(cos func(i, j int) float64) recallScores {
	var s recallScores
	var pairs, right int
	for q := 0; q < st.nq; q++ {
		rel := st.rel[q]
		docs := make([]int, 0, len(st.texts)-st.nq)
		for d := st.nq; d < len(st.texts); d++ {
			docs = append(docs, d)
		}
		sort.SliceStable(docs, func(a, b int) bool { return cos(q, docs[a]) > cos(q, docs[b]) })
		for rank, d := range docs {
			if rel[d] {
				s.mrr += 1 / float64(rank+1)
				if rank == 0 {
					s.top1++
				}
				if rank < 3 {
					s.top3++
				}
				break
			}
		}
		for _, a := range docs {
			for _, b := range docs {
				if rel[a] && !rel[b] {
					pairs++
					if cos(q, a) > cos(q, b) {
						right++
					}
				}
			}
		}
	}
	n := float64(st.nq)
	s.mrr, s.top1, s.top3 = s.mrr/n, s.top1/n, s.top3/n
	s.pairOrder = float64(right) / float64(pairs)
	return s
}

// scoreLocal scores l and measures its hashing noise: the RMS difference
// between its cosines and the collision-free ones over every pair of texts.
func (st *study) scoreLocal(l *Local) recallScores {
	vs := make([][]float32, len(st.texts))
	for i, t := range st.texts {
		vs[i] = l.EmbedText(t)
	}
	cos := make([][]float64, len(st.texts))
	for i := range cos {
		cos[i] = make([]float64, len(st.texts))
		for j := range i {
			c := float64(Cosine(vs[i], vs[j]))
			cos[i][j], cos[j][i] = c, c
		}
	}
	s := st.score(func(i, j int) float64 { return cos[i][j] })
	var sum float64
	var n int
	for i := range st.texts {
		for j := i + 1; j < len(st.texts); j++ {
			d := cos[i][j] - st.exactCos[i][j]
			sum += d * d
			n++
		}
	}
	s.noise = math.Sqrt(sum / float64(n))
	return s
}

// TestLocalDimensionStudy is the measurement behind LocalDim; run it with
// -v to see the table. Every dimension is scored under several hash seeds
// (which features collide is luck; the average is not) and compared with
// the collision-free sparse vectors. It fails if hashing into LocalDim
// dimensions costs more recall than measured when LocalDim was chosen, or
// if the noise stops shrinking like 1/sqrt(dim) (a hashing bug).
func TestLocalDimensionStudy(t *testing.T) {
	if raceEnabled {
		t.Skip("a measurement, minutes under the race detector; TestLocalRecallSet covers quality")
	}
	st := newStudy(loadRecallSet(t))
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	ref := st.score(func(i, j int) float64 { return st.exactCos[i][j] })
	t.Logf("queries %d, documents %d, seeds %d", st.nq, len(st.texts)-st.nq, seeds)
	t.Logf("%6s %6s %6s %6s %9s %8s %9s", "dim", "MRR", "top1", "top3", "pairOrder", "noiseRMS", "1/sqrt(d)")
	t.Logf("%6s %6.3f %6.3f %6.3f %9.4f", "exact", ref.mrr, ref.top1, ref.top3, ref.pairOrder)
	for _, dim := range []int{128, 256, 384, 512, 768, 1024} {
		var avg recallScores
		for seed := range seeds {
			l := newLocal(dim)
			l.seed = uint64(seed) // seed 0 is the production hashing
			s := st.scoreLocal(l)
			avg.mrr += s.mrr / float64(seeds)
			avg.top1 += s.top1 / float64(seeds)
			avg.top3 += s.top3 / float64(seeds)
			avg.pairOrder += s.pairOrder / float64(seeds)
			avg.noise += s.noise / float64(seeds)
		}
		t.Logf("%6d %6.3f %6.3f %6.3f %9.4f %8.4f %9.4f", dim, avg.mrr, avg.top1, avg.top3, avg.pairOrder, avg.noise, 1/math.Sqrt(float64(dim)))
		if dim != LocalDim {
			continue
		}
		if avg.noise > 1.25/math.Sqrt(float64(dim)) {
			t.Errorf("dim %d: hashing noise %.4f, want about 1/sqrt(dim) = %.4f", dim, avg.noise, 1/math.Sqrt(float64(dim)))
		}
		if avg.mrr < ref.mrr-0.1 || avg.pairOrder < ref.pairOrder-0.02 {
			t.Errorf("dim %d: MRR %.3f, pair order %.4f; collision-free %.3f, %.4f",
				dim, avg.mrr, avg.pairOrder, ref.mrr, ref.pairOrder)
		}
	}
}
