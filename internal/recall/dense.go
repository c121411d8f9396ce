package recall

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/engram-memory/engram/internal/episode"
)

// The dense side of recall: the prompt's vector from the sentence embedder
// against the dense vectors the worker stored with every item, so that a
// prompt finds memories it shares no word with ("which restaurants should I
// try in Rome?" and "I avoid gluten").
//
// A whole index is searched in two passes. The first compares sign bits
// (384 dimensions are six words: an XOR and a population count each) and
// keeps the DenseShortlist items whose signs differ least from the prompt's;
// the second computes their cosines from the int8 vectors. The number of
// differing signs estimates the angle between two vectors, so the
// shortlist holds the nearest items with high probability, and the cost of
// a prompt stays a small fraction of a millisecond per 10,000 memories.

// DenseShortlist is how many items the first pass keeps for the second.
const DenseShortlist = 2048

// DenseHit is an item found by its dense vector.
type DenseHit struct {
	Item
	Cos float32
}

// sigDistance is the number of differing signs of two signatures.
func sigDistance(a []byte, q []uint64) int {
	d := 0
	for j, w := range q {
		d += bits.OnesCount64(binary.LittleEndian.Uint64(a[8*j:]) ^ w)
	}
	return d
}

// shortItem is a candidate of the first pass.
type shortItem struct {
	dist      int
	seg, item int32
}

// shortHeap is a max-heap by distance: its top is the worst kept.
type shortHeap []shortItem

func (h shortHeap) Len() int           { return len(h) }
func (h shortHeap) Less(i, j int) bool { return h[i].dist > h[j].dist }
func (h shortHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *shortHeap) Push(x any)        { *h = append(*h, x.(shortItem)) }
func (h *shortHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// shortlist runs the first pass over views (those whose dense vectors are
// of embedder name and q's dimension) and returns up to n candidates.
func shortlist(views []*View, name string, q []float32, n int) []shortItem {
	qsig := Signature(q)
	h := make(shortHeap, 0, n)
	for s, v := range views {
		if v.Dense != name || v.denseDim != len(q) {
			continue
		}
		stride := 8 * v.sigWords
		for i := 0; i < v.n; i++ {
			if v.denseInvNorm(i) == 0 {
				continue
			}
			d := sigDistance(v.dsigs[i*stride:(i+1)*stride], qsig)
			if len(h) < n {
				heap.Push(&h, shortItem{d, int32(s), int32(i)})
			} else if d < h[0].dist {
				h[0] = shortItem{d, int32(s), int32(i)}
				heap.Fix(&h, 0)
			}
		}
	}
	return h
}

// DenseSearch finds the limit items of the index nearest to q (an
// L2-normalised vector of embedder name) that are current and visible from
// projectPath (its own and global ones; all when ""), nearest first, with
// a cosine of at least floor.
func (x *Index) DenseSearch(ctx context.Context, name string, q []float32, floor float32, limit int, projectPath string) ([]DenseHit, error) {
	if name == "" || len(q) == 0 || limit <= 0 {
		return nil, nil
	}
	if err := x.load(); err != nil || len(x.segs) == 0 {
		return nil, err
	}
	short := shortlist(x.segs, name, q, DenseShortlist)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type scored struct {
		shortItem
		cos float32
	}
	cands := make([]scored, 0, len(short))
	for _, s := range short {
		if c := x.segs[s.seg].DenseCos(int(s.item), q); c >= floor {
			cands = append(cands, scored{s, c})
		}
	}
	slices.SortFunc(cands, func(a, b scored) int {
		if a.cos != b.cos {
			if a.cos > b.cos {
				return -1
			}
			return 1
		}
		// Newer segments first among equals: their records are current.
		if a.seg != b.seg {
			return cmp.Compare(b.seg, a.seg)
		}
		return cmp.Compare(a.item, b.item)
	})
	var out []DenseHit
	for _, c := range cands {
		if len(out) == limit {
			break
		}
		v := x.segs[c.seg]
		if !x.live(int(c.seg), v.Seq(int(c.item))) {
			continue
		}
		it, err := v.Item(int(c.item))
		if err != nil {
			return out, err
		}
		if projectPath != "" && it.Scope != episode.ScopeGlobal && it.ProjectPath != projectPath {
			continue
		}
		out = append(out, DenseHit{Item: it, Cos: c.cos})
	}
	return out, ctx.Err()
}
