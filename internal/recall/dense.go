package recall

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

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

// parallelItems is the size of an index from which the dense search
// spreads its passes over the cores, a segment per goroutine; a smaller
// one costs less than starting goroutines.
const parallelItems = 20000

// inParallel runs fn(worker, j) for every j < n on workers goroutines (the
// caller's alone when workers <= 1).
func inParallel(n, workers int, fn func(worker, j int)) {
	if workers <= 1 {
		for j := range n {
			fn(0, j)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := int(next.Add(1) - 1); j < n; j = int(next.Add(1) - 1) {
				fn(w, j)
			}
		})
	}
	wg.Wait()
}

// noDense marks, among the first pass's distances, an item without a
// dense vector.
const noDense = math.MaxUint16

// shortlist runs the first pass over views (those whose dense vectors are
// of embedder name and q's dimension) and returns up to n candidates: the
// items whose signs differ least from q's, and at the boundary distance
// those of the newest segments first.
//
// Distances are small integers (at most 64 per signature word), so the n
// nearest are selected by counting, not by a heap: one tight pass computes
// every item's distance and their histogram, which gives the largest
// distance kept, and a second pass over the distances collects the items.
// Its cost is a few nanoseconds per item, whatever the order of the items
// (a heap's replacements grow with the index: most of the first pass's
// time at 100,000 memories); from parallelItems items on, the segments'
// distances are computed on every core.
func shortlist(views []*View, name string, q []float32, n int) []shortItem {
	qsig := Signature(q)
	words := len(qsig)
	use := func(v *View) bool { return v.Dense == name && v.denseDim == len(q) && v.sigWords == words }
	total := 0
	for _, v := range views {
		if use(v) {
			total += v.n
		}
	}
	if total == 0 || n <= 0 {
		return nil
	}
	dist := make([]uint16, total)
	var parts []func(hist []int)
	k := 0
	for _, v := range views {
		if !use(v) {
			continue
		}
		d := dist[k : k+v.n]
		parts = append(parts, func(hist []int) { distances(v, qsig, d, hist) })
		k += v.n
	}
	hist := make([]int, 64*words+1)
	if total < parallelItems {
		for _, p := range parts {
			p(hist)
		}
	} else {
		// A segment per goroutine, each with its own histogram.
		hists := make([][]int, min(runtime.GOMAXPROCS(0), len(parts)))
		for w := range hists {
			hists[w] = make([]int, len(hist))
		}
		inParallel(len(parts), len(hists), func(w, j int) { parts[j](hists[w]) })
		for _, h := range hists {
			for d, c := range h {
				hist[d] += c
			}
		}
	}
	// limit: items at a smaller distance are all kept; at limit, ties of
	// them (newest segments first).
	limit, kept := 0, 0
	for ; limit < len(hist) && kept+hist[limit] < n; limit++ {
		kept += hist[limit]
	}
	ties := n - kept
	if limit == len(hist) {
		ties = 0 // fewer items than n: all of them
	}
	out := make([]shortItem, 0, min(n, total))
	k = total
	for s := len(views) - 1; s >= 0; s-- {
		v := views[s]
		if !use(v) {
			continue
		}
		k -= v.n
		for i, d := range dist[k : k+v.n] {
			if d == noDense || int(d) > limit {
				continue
			}
			if int(d) == limit {
				if ties == 0 {
					continue
				}
				ties--
			}
			out = append(out, shortItem{int(d), int32(s), int32(i)})
		}
	}
	return out
}

// distances sets dist[i] to the Hamming distance of item i's signature
// from qsig (noDense for an item without a dense vector) and counts the
// distances in hist.
func distances(v *View, qsig []uint64, dist []uint16, hist []int) {
	stride := 8 * len(qsig)
	sigs, norms := v.dsigs[:v.n*stride], v.dnorms[:4*v.n]
	if len(qsig) == 6 { // 384 dimensions: the sentence embedder's
		q0, q1, q2, q3, q4, q5 := qsig[0], qsig[1], qsig[2], qsig[3], qsig[4], qsig[5]
		for i := range dist {
			if binary.LittleEndian.Uint32(norms[4*i:])&0x7fffffff == 0 {
				dist[i] = noDense
				continue
			}
			s := sigs[i*48 : i*48+48 : i*48+48]
			d := bits.OnesCount64(binary.LittleEndian.Uint64(s[0:])^q0) +
				bits.OnesCount64(binary.LittleEndian.Uint64(s[8:])^q1) +
				bits.OnesCount64(binary.LittleEndian.Uint64(s[16:])^q2) +
				bits.OnesCount64(binary.LittleEndian.Uint64(s[24:])^q3) +
				bits.OnesCount64(binary.LittleEndian.Uint64(s[32:])^q4) +
				bits.OnesCount64(binary.LittleEndian.Uint64(s[40:])^q5)
			dist[i] = uint16(d)
			hist[d]++
		}
		return
	}
	for i := range dist {
		if binary.LittleEndian.Uint32(norms[4*i:])&0x7fffffff == 0 {
			dist[i] = noDense
			continue
		}
		d := sigDistance(sigs[i*stride:(i+1)*stride], qsig)
		dist[i] = uint16(d)
		hist[d]++
	}
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
	// The second pass, a segment at a time (shortlist returns each
	// segment's items together), on every core once the index is large.
	items := make([]int32, len(short))
	cos := make([]float32, len(short))
	var groups [][2]int
	for start := 0; start < len(short); {
		end := start
		for ; end < len(short) && short[end].seg == short[start].seg; end++ {
			items[end] = short[end].item
		}
		groups = append(groups, [2]int{start, end})
		start = end
	}
	workers, n := 1, 0
	for _, v := range x.segs {
		n += v.n
	}
	if n >= parallelItems {
		workers = min(runtime.GOMAXPROCS(0), len(groups))
	}
	inParallel(len(groups), workers, func(_, j int) {
		g := groups[j]
		x.segs[short[g[0]].seg].denseCosines(items[g[0]:g[1]], q, cos[g[0]:g[1]])
	})
	cands := make([]scored, 0, len(short))
	for k, c := range cos {
		if c >= floor {
			cands = append(cands, scored{short[k], c})
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
