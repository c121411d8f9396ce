package consolidate

import (
	"cmp"
	"math"
	"slices"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// cluster is a group of episodes of one partition (scope and project) that
// may speak of the same thing. At least one of them is new.
type cluster struct {
	scope, project, projectPath string
	items                       []item
	embedder                    string
	sum                         []float64 // sum of the members' vectors
	keys                        map[string]bool
}

type item struct {
	store.SeqEpisode
	isNew bool
}

// newEpisodes are the cluster's episodes that arrived since the checkpoint.
func (c *cluster) newEpisodes() []*episode.Episode {
	var out []*episode.Episode
	for i := range c.items {
		if c.items[i].isNew {
			out = append(out, &c.items[i].Episode)
		}
	}
	return out
}

func (c *cluster) minNewSeq() int64 {
	m := int64(math.MaxInt64)
	for _, it := range c.items {
		if it.isNew {
			m = min(m, it.Seq)
		}
	}
	return m
}

func (c *cluster) maxNewSeq() int64 {
	m := int64(0)
	for _, it := range c.items {
		if it.isNew {
			m = max(m, it.Seq)
		}
	}
	return m
}

// similarity is the cosine between a vector and the cluster's centroid.
func (c *cluster) similarity(v []float32, embedder string) float64 {
	if len(v) == 0 || embedder != c.embedder || len(v) != len(c.sum) {
		return 0
	}
	var dot, norm float64
	for i, x := range v {
		dot += float64(x) * c.sum[i]
		norm += c.sum[i] * c.sum[i]
	}
	if norm == 0 {
		return 0
	}
	return dot / math.Sqrt(norm) // v is L2-normalised
}

func (c *cluster) add(it item) {
	c.items = append(c.items, it)
	if c.embedder == "" && len(c.sum) == 0 && len(it.Embedding) > 0 {
		c.embedder = it.Embedder
		c.sum = make([]float64, len(it.Embedding))
	}
	if it.Embedder == c.embedder && len(it.Embedding) == len(c.sum) {
		for i, x := range it.Embedding {
			c.sum[i] += float64(x)
		}
	}
	for _, k := range claimKeys(it) {
		c.keys[k] = true
	}
}

// claimKeys are the subjects an episode's signals speak of: episodes that
// share one belong together whatever their vectors say.
func claimKeys(it item) []string {
	var out []string
	for _, c := range claimsOf(&it.Episode) {
		k := c.class + "\x00" + c.subject
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func partKey(scope, projectPath string) string { return scope + "\x00" + partPath(scope, projectPath) }

// clusterEpisodes groups the new episodes, in order, with the first
// cluster of their partition that shares a claim subject or whose centroid
// is at least threshold close; then older pool episodes join the clusters
// they fit (they never start one: a cluster must hold something new).
// Biggest clusters come first.
func clusterEpisodes(newEps, pool []store.SeqEpisode, threshold float64) []*cluster {
	byPart := map[string][]*cluster{}
	var all []*cluster
	place := func(e store.SeqEpisode, isNew bool) {
		it := item{e, isNew}
		pk := partKey(e.Scope, e.ProjectPath)
		keys := claimKeys(it)
		var best *cluster
		bestSim := threshold
		for _, c := range byPart[pk] {
			if slices.ContainsFunc(keys, func(k string) bool { return c.keys[k] }) {
				best = c
				break
			}
			if sim := c.similarity(e.Embedding, e.Embedder); sim >= bestSim {
				best, bestSim = c, sim
			}
		}
		if best == nil {
			if !isNew {
				return
			}
			best = &cluster{scope: e.Scope, project: e.Project, projectPath: partPath(e.Scope, e.ProjectPath), keys: map[string]bool{}}
			byPart[pk] = append(byPart[pk], best)
			all = append(all, best)
		}
		best.add(it)
	}
	for _, e := range newEps {
		place(e, true)
	}
	for _, e := range pool {
		place(e, false)
	}
	slices.SortStableFunc(all, func(a, b *cluster) int {
		return cmp.Or(cmp.Compare(len(b.items), len(a.items)), cmp.Compare(a.minNewSeq(), b.minNewSeq()))
	})
	return all
}
