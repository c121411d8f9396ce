package recall

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

// Searcher is the full-text side of recall: the search index the worker
// keeps for the prompt hook (Index), or the store's own FTS5 index (the
// worker's recollect.StoreSearcher, which the index is checked against).
type Searcher interface {
	// Search looks at each term's newest window matches (every match when
	// window is 0), scores each episode found by the summed weights of the
	// terms it matched, and returns the best limit of those visible from
	// projectPath (its own and global ones; all when ""), best first and
	// newest first among equals. A term is one word as typed (folded); it
	// matches what the store's FTS5 index would match for it. Terms past
	// MaxSearchTerms are ignored.
	Search(ctx context.Context, terms []string, weights []float64, window, limit int, projectPath string) ([]Hit, error)
	// Neighbours finds, for each episode, the episodes of its session just
	// before and just after it in time, among those stored within window
	// seqs of it; keyed by id.
	Neighbours(ctx context.Context, eps []Item, window int) (map[string]Neighbours, error)
}

// MaxSearchTerms bounds the terms of a search (one bit each in a mask).
const MaxSearchTerms = 62

// Hit is an episode a search found.
type Hit struct {
	Item
	Score float64 // the sum of the weights of the terms it matched
	Mask  uint64  // bit i set when it matched terms[i]
}

// Neighbours are the episodes just before and just after one episode in
// its session (nil when there is none nearby).
type Neighbours struct {
	Before, After *Item
}

// DenseSearcher is a Searcher that can also search by dense vectors (the
// search index).
type DenseSearcher interface {
	DenseSearch(ctx context.Context, name string, q []float32, floor float32, limit int, projectPath string) ([]DenseHit, error)
}

// DenseEmbedder embeds a prompt with the sentence embedder whose vectors the
// worker stored with the memories.
type DenseEmbedder interface {
	Name() string
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Recaller answers queries from recollection files and one FTS query.
type Recaller struct {
	Home     string
	DB       Searcher // may be nil: files only
	Embedder *embed.Local
	// Dense, when set, embeds the prompt for the dense side of recall: the
	// memories nearest in meaning, whatever words they use. It runs while
	// the lexical side works.
	Dense DenseEmbedder
	// Settings are the hand-set thresholds, limits and weights
	// (DefaultSettings in New; a policy file may set some).
	Settings
	// SkipUnknown skips the search (and so opening the store) when no
	// term of the prompt is in the store's vocabulary as the global file
	// recorded it: the prompt hook's fast path for prompts that have
	// nothing to do with any memory. The vocabulary is as old as the last
	// worker cycle, so a memory saved since, all of whose words are new to
	// the store, waits for the next cycle to be found this way.
	SkipUnknown bool
	// Policy holds the fitted gates (DefaultPolicy in New); the one for
	// the prompt's embedder, when fitted, decides which candidates pass.
	Policy *Policy
	// Observe, when set, sees every candidate at the gate (beliefs below
	// the confidence floor excepted) with the prompt's GateView and whether
	// it passed: what bench/gatefit fits the gate on. The candidate's
	// strings and vectors are the recollection files' bytes: a copy of
	// what is kept after the call must be made during it.
	Observe func(v *GateView, c *Candidate, passed bool)
}

// Query is one recall request.
type Query struct {
	Text        string
	ProjectPath string // git root of the session's cwd; "" for every project
	SessionID   string // for the session's neighbours file; may be empty
	Now         time.Time
	// Exclude lists ids not to return (already injected in this session).
	Exclude map[string]bool
}

// Result holds the ranked candidates that passed the relevance gate.
type Result struct {
	Episodes []Candidate
	Beliefs  []Candidate
	// Terms is the query's terms (as typed, lower case), Stop those of
	// them too common in the store to count, Searched those the full-text
	// search looked for (the rarest), and Match the same as an FTS5 query
	// ("" when no search ran).
	Terms    []string
	Stop     []string
	Searched []string
	Match    string
	// Candidates is how many memories were scored (before the gate).
	Candidates int
	// Problems lists what was skipped (a missing or unreadable file, a
	// failed search): recall degrades instead of failing.
	Problems []string
	// Dense names the sentence embedder the prompt was compared with ("":
	// lexical recall only).
	Dense string

	// Past reports whether the prompt asks what happened
	// (AsksAboutThePast), and so met the Past thresholds of the gate.
	Past bool
	// Many reports whether the prompt asks for several things
	// (AsksForMany): more episodes were kept (ManyKeepShare), and
	// LimitsFor gives it more bites.
	Many bool

	// Open reports whether some candidate covered OpenCoverage of the
	// prompt's terms: only then do memories pass by their words (with the
	// sentence embedder; without it, each passes on its own relevance).
	Open bool

	// What Expand needs of the prompt to judge neighbours: its project
	// ("" for every project) and how it reads.
	project    string
	cov        *Coverer
	qdense     []float32
	denseFloor float32
	denseRef   float32
}

// BeliefFloor: a belief of this confidence or less is never recalled,
// nor written into the recollection files. Set by hand, not fitted: a
// belief at or under it has been contradicted more often than
// supported (from the Beta(1, 1) prior, one support and two
// contradictions give 0.40).
const BeliefFloor = 0.4

// MaxQueryBytes: only the start of a longer prompt is used (a pasted log or
// file says what it is about early on, and a hook must not spend its
// deadline on a megabyte of text).
const MaxQueryBytes = 8 << 10

// New returns a Recaller with default settings.
func New(home string, db Searcher) *Recaller {
	return &Recaller{Home: home, DB: db, Embedder: embed.NewLocal(), Settings: DefaultSettings, Policy: DefaultPolicy()}
}

// Find is recall as every entry point runs it — the prompt hook, the
// CLI's recall and the MCP server's memory_recall: gather, rank and gate
// (Recall), raise the beliefs whose subject the prompt names and bring in
// their linked beliefs (the graph file), and give the bites that will be
// shown their neighbouring exchanges (Expand, for as many as LimitsFor
// allows). The callers differ only in what they do with the result.
func (r *Recaller) Find(ctx context.Context, q Query) Result {
	res := r.Recall(ctx, q)
	if len(res.Beliefs)+len(res.Episodes) > 0 {
		g := LoadGraph(r.Home)
		r.BoostSubjects(&res, g, q.Text)
		r.ExpandLinks(&res, g, q.ProjectPath)
	}
	r.Expand(ctx, &res, r.LimitsFor(res).Memories)
	return res
}

// Recall gathers and ranks the candidates for q.
func (r *Recaller) Recall(ctx context.Context, q Query) Result {
	var res Result
	res.project = q.ProjectPath
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	text := clipQuery(q.Text)
	terms := queryTerms(text)
	if len(terms) == 0 {
		return res
	}
	for _, t := range terms {
		res.Terms = append(res.Terms, t.word)
	}

	var views []*View
	var scopes []string
	paths := []string{GlobalPath(r.Home)}
	if q.ProjectPath != "" {
		paths = append(paths, ProjectPath(r.Home, q.ProjectPath))
	}
	if q.SessionID != "" {
		paths = append(paths, SessionPath(r.Home, q.SessionID))
	}
	for _, p := range paths {
		v, err := LoadView(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				res.Problems = append(res.Problems, err.Error())
			}
			continue
		}
		views = append(views, v)
		scopes = append(scopes, v.Scope)
	}
	defer func() {
		for _, v := range views {
			v.Close()
		}
	}()
	weighTerms(terms, views)
	for _, v := range views {
		if v.HasVocab() {
			for i := range terms {
				terms[i].absent = !v.MayHold(terms[i].hash)
			}
			break
		}
	}
	unknown := true // every term that could be searched is in no episode
	for _, t := range terms {
		unknown = unknown && (t.stop || t.absent)
	}
	for _, t := range terms {
		if t.stop {
			res.Stop = append(res.Stop, t.word)
		}
	}
	cov := newCoverer(terms)
	if cov.total == 0 {
		return res // every term is a stop term: nothing can be relevant
	}
	res.cov = cov
	// The prompt's dense vector is made while the lexical side works. Every
	// return from here on waits for it or for the context's end.
	dense := r.embedDense(ctx, text)

	qvec := r.Embedder.EmbedText(text)
	name := r.Embedder.Name()
	byID := map[string]*Candidate{}
	var cands []*Candidate

	// File items that hold at least one of the prompt's terms.
	type ref struct{ view, item int }
	masks := map[ref]uint64{}
	var order []ref
	for vi, v := range views {
		for ti := range terms {
			t := &terms[ti]
			if t.stop {
				continue
			}
			v.Postings(t.hash, func(item int) {
				k := ref{vi, item}
				m, ok := masks[k]
				if !ok {
					order = append(order, k)
				}
				masks[k] = m | 1<<ti
			})
		}
	}
	for _, k := range order {
		v := views[k.view]
		it, err := v.Item(k.item)
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
			continue
		}
		if q.Exclude[it.ID] {
			continue
		}
		if q.ProjectPath != "" && it.ProjectPath != "" && it.ProjectPath != q.ProjectPath && scopes[k.view] != episode.ScopeGlobal {
			continue // another project's memory
		}
		c := byID[it.ID]
		if c == nil {
			c = &Candidate{Item: it}
			byID[it.ID] = c
			cands = append(cands, c)
			if v.Embedder == name {
				c.Cos = v.Cos(k.item, qvec)
			}
			c.Coverage = cov.weigh(masks[k])
			if it.Kind == KindBelief {
				c.Coverage = max(c.Coverage, statementCoverage(it, terms))
			}
		}
		if scopes[k.view] == "session" {
			c.Neighbor = true
		}
	}

	if r.DB != nil && !(r.SkipUnknown && unknown) {
		res.Match = matchQuery(terms, r.MaxTerms)
		for _, i := range searchTerms(terms, r.MaxTerms) {
			res.Searched = append(res.Searched, terms[i].word)
		}
		if err := r.searchTerms(ctx, q, terms, cov, qvec, byID, &cands); err != nil {
			res.Problems = append(res.Problems, err.Error())
		}
	}
	if d := dense(); d.err != nil {
		res.Problems = append(res.Problems, d.err.Error())
	} else if d.vec != nil {
		res.Dense, res.qdense, res.denseFloor = d.name, d.vec, float32(r.Weights.DenseFloor)
		r.addDense(ctx, q, d.name, d.vec, qvec, views, scopes, cov, byID, &cands, &res)
	}
	res.Candidates = len(cands)

	// The gate first: only what passes is ranked. With the sentence
	// embedder, a memory passes by meaning when it is a statement of the
	// user's that stands out from the store (DenseGap), and by its words
	// only when the prompt's words find something well (Open: an episode
	// that shares enough of the prompt's rarer words and is near it in
	// meaning, see opens) and it is near enough in meaning itself
	// (WordScore): a prompt that shares a common word or two with the
	// store is no reason to inject anything. A prompt that asks what
	// happened meets lower thresholds (the Past ones): it asks to remember.
	//
	// Which words count: with the sentence embedder, those of what a bite
	// would show (the summary, a short exchange, a belief's statement), not
	// of a long context that mentions everything once; and the gate opens
	// on episodes only (a belief of two words opens nothing).
	res.Open = res.Dense == ""
	words, short := questionWords(text) // once, for both readings of the prompt
	res.Past = short && asksAboutThePast(words)
	gate := r.gate(res.Past)
	if !res.Open {
		for _, c := range cands {
			if c.Kind == KindEpisode {
				c.Coverage = min(c.Coverage, cov.weigh(cov.mask(c.Text, c.Detail)))
				res.Open = res.Open || gate.opens(*c)
			}
		}
	}
	many := short && asksForMany(words)
	// A fitted gate for this embedder (the policy's) decides in place of
	// the hand-set one; Observe sees every candidate with its features.
	model, lexical := r.Policy.Gate(res.Dense), r.Policy.Gate("")
	var gv *GateView
	if model != nil || lexical != nil || r.Observe != nil {
		var centroid []float32
		var norm float64
		if model != nil {
			centroid, norm = model.Centroid, model.CentroidNorm
		}
		gv = NewGateView(&res, cands, centroid, norm)
		gv.many = many
	}
	kept := make([]Candidate, 0, len(cands))
	for _, c := range cands {
		if c.Kind == KindBelief && c.Confidence <= BeliefFloor {
			continue
		}
		byWords := lexicalRelevance(*c) >= r.MinRelevance
		if res.Dense != "" {
			c.ByMeaning = stoodOut(*c, r.Weights)
			// An episode found by its words must be near the prompt in
			// meaning too (a list of usernames is not about pets because
			// it says "nature"), and a belief found by its words must stand
			// out in meaning as one found by meaning alone does: its
			// statement is a few words, which a prompt shares by chance
			// ("User prefers watch." is not about TV series).
			byWords = byWords && (res.Open && c.Kind == KindEpisode && gate.nearByWords(*c) ||
				c.Kind == KindBelief && c.HasDenseCos && float64(c.DenseGap) >= r.Weights.BeliefGap)
		} else {
			byWords = byWords && (res.Open || c.Kind == KindBelief)
		}
		passed := c.ByMeaning || byWords
		// A memory without the sentence embedder's vector (a store being
		// re-embedded) is judged as without the embedder.
		if m := model; m.Fitted() || lexical.Fitted() {
			if res.Dense != "" && !c.HasDenseCos {
				m = lexical
			}
			if m.Fitted() {
				passed = m.Pass(gv, c, passed)
			}
		}
		if r.Observe != nil {
			r.Observe(gv, c, passed)
		}
		// Parsing an exchange costs more than the gate: only for what passed.
		if passed && !Unanswered(c.Item) {
			c.detach() // the files are closed on return
			kept = append(kept, *c)
		}
	}
	kept = dropRestatedBeliefs(kept, r.RestatedCos)
	Rank(kept, r.Weights, q.Now)
	if res.Dense != "" {
		keep := r.KeepShare
		if res.Many = many; res.Many {
			keep = r.ManyKeepShare
		}
		kept = dropTrailing(kept, keep)
	}
	for _, c := range kept {
		if c.Kind == KindBelief {
			res.Beliefs = append(res.Beliefs, c)
		} else {
			res.Episodes = append(res.Episodes, c)
		}
	}
	return res
}

// gate is r, with the Past thresholds for a prompt that asks what
// happened.
func (r *Recaller) gate(past bool) *Recaller {
	if !past {
		return r
	}
	g := *r
	g.OpenCoverage, g.OpenScore, g.WordScore = r.PastOpenCoverage, r.PastOpenScore, r.PastWordScore
	return &g
}

// opens reports whether an episode opens the gate by words (with the
// sentence embedder): it holds at least OpenCoverage of the prompt's
// weighted terms, and its coverage plus its dense cosine is at least
// OpenScore. Coverage alone is not enough: a question about a trip shares
// "trip" and "road" with a chat about a road trip, but the chat is far
// from it in meaning; a question about what the store holds shares its
// rarer words and is near in meaning. An episode without a dense cosine
// (the store is being re-embedded) opens by its coverage alone, at
// LexicalOpenCoverage.
func (r *Recaller) opens(c Candidate) bool {
	if c.Kind != KindEpisode {
		return false
	}
	if !c.HasDenseCos {
		return float64(c.Coverage) >= r.LexicalOpenCoverage
	}
	return float64(c.Coverage) >= r.OpenCoverage && float64(c.Coverage)+float64(c.Dense) >= r.OpenScore
}

// nearByWords reports whether an episode found by its words is near
// enough to the prompt in meaning to pass: its coverage plus its dense
// cosine is at least WordScore. One without a dense cosine (not
// re-embedded yet) passes by its words as without the embedder.
func (r *Recaller) nearByWords(c Candidate) bool {
	return !c.HasDenseCos || float64(c.Coverage)+float64(c.Dense) >= r.WordScore
}

// dropTrailing drops the ranked episodes whose score is below share of
// the best episode's (beliefs stay: they are ranked apart). share <= 0
// keeps all.
func dropTrailing(ranked []Candidate, share float64) []Candidate {
	if share <= 0 {
		return ranked
	}
	top, seen := 0.0, false
	out := ranked[:0]
	for _, c := range ranked {
		if c.Kind == KindEpisode {
			if !seen {
				top, seen = c.Score, true
			} else if c.Score < share*top {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// denseVec is the prompt's dense vector, or why there is none.
type denseVec struct {
	name string
	vec  []float32
	err  error
}

// embedDense starts embedding the prompt with the dense embedder; the
// function it returns waits for the vector (nil without an embedder, or
// when the context ends first).
func (r *Recaller) embedDense(ctx context.Context, text string) func() denseVec {
	if r.Dense == nil {
		return func() denseVec { return denseVec{} }
	}
	ch := make(chan denseVec, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- denseVec{err: fmt.Errorf("dense embedding panicked: %v", p)}
			}
		}()
		v, err := r.Dense.EmbedQuery(ctx, text)
		if err != nil {
			err = fmt.Errorf("dense embedding: %w", err)
		}
		ch <- denseVec{name: r.Dense.Name(), vec: v, err: err}
	}()
	return func() denseVec {
		select {
		case d := <-ch:
			return d
		case <-ctx.Done():
			return denseVec{err: fmt.Errorf("dense embedding: %w", ctx.Err())}
		}
	}
}

// addDense is the dense side. The index's episodes nearest to the prompt
// set the reference: the cosine of the RefRank-th nearest (unrelated texts
// of a sentence embedder still score 0.1 to 0.5 against a prompt, and how
// high depends on the store and the prompt, so an absolute threshold
// cannot tell related from unrelated; standing out from the store's
// nearest can). Every candidate already found gets its cosine; the index's
// nearest episodes and the file items that stand out join the candidates.
func (r *Recaller) addDense(ctx context.Context, q Query, name string, qv, qlocal []float32, views []*View, scopes []string,
	cov *Coverer, byID map[string]*Candidate, cands *[]*Candidate, res *Result) {
	var hits []DenseHit
	if ds, ok := r.DB.(DenseSearcher); ok && r.DenseLimit > 0 {
		var err error
		hits, err = ds.DenseSearch(ctx, name, qv, -1, max(r.DenseLimit, r.RefRank), q.ProjectPath)
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
		}
	}
	ref := float32(r.Weights.DenseFloor) // too few memories to compare with
	if len(hits) >= r.RefRank {
		ref = hits[r.RefRank-1].Cos
	}
	res.denseRef = ref
	for _, c := range *cands {
		if c.HasDense() {
			c.Dense, c.HasDenseCos = c.DenseCos(qv), true
		}
	}
	add := func(it Item, cos float32, neighbor bool) {
		if q.Exclude[it.ID] {
			return
		}
		c := byID[it.ID]
		if c == nil {
			c = &Candidate{Item: it}
			byID[it.ID] = c
			*cands = append(*cands, c)
			c.Coverage = cov.weigh(cov.mask(it.Text, it.Detail))
			if it.Kind == KindBelief {
				c.Coverage = max(c.Coverage, statementCoverage(it, cov.terms))
			}
			c.Cos = c.Item.Cos(qlocal)
		}
		c.Dense, c.HasDenseCos = cos, true
		c.Neighbor = c.Neighbor || neighbor
	}
	// File items (beliefs, and the most important and recent episodes)
	// only when they stand out: the others could not pass the gate.
	floor := ref + float32(r.Weights.StatedGap)
	for vi, v := range views {
		if v.Dense != name || v.DenseDim() != len(qv) {
			continue
		}
		for i := 0; i < v.Len(); i++ {
			cos := v.DenseCos(i, qv)
			if cos < floor {
				continue
			}
			it, err := v.Item(i)
			if err != nil {
				res.Problems = append(res.Problems, err.Error())
				continue
			}
			if q.ProjectPath != "" && it.ProjectPath != "" && it.ProjectPath != q.ProjectPath && scopes[vi] != episode.ScopeGlobal {
				continue
			}
			add(it, cos, scopes[vi] == "session")
		}
	}
	for i, h := range hits {
		if i == r.DenseLimit {
			break
		}
		add(h.Item, h.Cos, false)
	}
	for _, c := range *cands {
		if c.HasDenseCos {
			c.DenseGap = c.Dense - ref
		}
	}
}

// searchTerms is the full-text side: the newest FTSWindow matches of each
// of the rarest terms, ranked by the summed rarity of the terms each
// matched (then newest first); the best FTSLimit that the project can see
// are read.
func (r *Recaller) searchTerms(ctx context.Context, q Query, terms []term, cov *Coverer, qvec []float32,
	byID map[string]*Candidate, cands *[]*Candidate) error {
	pick := searchTerms(terms, r.MaxTerms)
	if len(pick) == 0 {
		return nil
	}
	words := make([]string, len(pick))
	weights := make([]float64, len(pick))
	for i, t := range pick {
		words[i], weights[i] = terms[t].word, terms[t].weight
	}
	found, err := r.DB.Search(ctx, words, weights, TermWindow(r.FTSWindow, len(pick)), r.FTSLimit, q.ProjectPath)
	if err != nil {
		return err
	}
	for _, f := range found {
		if q.Exclude[f.ID] {
			continue
		}
		var mask uint64 // over terms
		for j, t := range pick {
			if f.Mask&(1<<j) != 0 {
				mask |= 1 << t
			}
		}
		c := byID[f.ID]
		if c == nil {
			c = &Candidate{Item: f.Item}
			byID[f.ID] = c
			*cands = append(*cands, c)
			c.Coverage = cov.weigh(mask | cov.mask(c.Text, c.Detail))
			c.Cos = c.Item.Cos(qvec) // 0 without a vector
		}
		c.BM25, c.HasBM25 = -f.Score, true
	}
	return nil
}

// minTermWindow is the fewest newest matches of a term the search ranks.
const minTermWindow = 50

// TermWindow is how many of each term's newest matches a search of n terms
// ranks when window is shared among them (0: all).
func TermWindow(window, n int) int {
	if window <= 0 || n <= 0 {
		return 0
	}
	return max(minTermWindow, (window+n-1)/n)
}

// searchTerms picks the terms the FTS query looks for: the rarest ones (not
// stop terms, at least three characters), at most max; it returns their
// indexes in terms. Terms the vocabulary says no episode holds are searched
// too: it may be older than the store.
func searchTerms(terms []term, max int) []int {
	var keep []int
	for i, t := range terms {
		if !t.stop && len([]rune(t.word)) >= 3 {
			keep = append(keep, i)
		}
	}
	sort.SliceStable(keep, func(i, j int) bool {
		a, b := terms[keep[i]], terms[keep[j]]
		if a.weight != b.weight {
			return a.weight > b.weight
		}
		return len(a.word) > len(b.word)
	})
	if max > 0 && len(keep) > max {
		keep = keep[:max]
	}
	return keep
}

// Expand gives the first n episodes of res the exchanges just before and
// after them in their session, which their bites show too: a conversation's
// answer is often in the turn after the one that matches the prompt, and
// what led to a decision in the turn before it.
func (r *Recaller) Expand(ctx context.Context, res *Result, n int) {
	if r.DB == nil || n <= 0 || len(res.Episodes) == 0 {
		return
	}
	eps := res.Episodes[:min(n, len(res.Episodes))]
	items := make([]Item, len(eps))
	for i, e := range eps {
		items[i] = e.Item
	}
	nb, err := r.DB.Neighbours(ctx, items, r.NeighbourWindow)
	if err != nil {
		res.Problems = append(res.Problems, err.Error())
		return
	}
	for i := range eps {
		x := nb[eps[i].ID]
		if x.Before != nil && res.adds(eps[i], *x.Before, true) {
			it := *x.Before
			it.detach()
			eps[i].Before = &it
		}
		if x.After != nil && res.adds(eps[i], *x.After, false) {
			it := *x.After
			it.detach()
			eps[i].After = &it
		}
	}
}

// adds reports whether a neighbouring exchange adds to a bite: it is not an
// unanswered question itself, and it has to do with the prompt (a term of
// it, or a dense cosine past the floor), or it is the question the bite
// answers (the exchange before), or the answer to a question the bite
// leaves open (the exchange after).
func (res *Result) adds(bite Candidate, nb Item, before bool) bool {
	if Unanswered(nb) || !res.sees(nb) {
		return false
	}
	if res.cov != nil && res.cov.weigh(res.cov.mask(nb.Text, nb.Detail)) > 0 {
		return true
	}
	if res.qdense != nil && nb.DenseCos(res.qdense) >= res.denseFloor {
		return true
	}
	if before {
		return nb.Detail != "" && parseExchange(nb.Detail).endsAsking()
	}
	return bite.Detail != "" && parseExchange(bite.Detail).leftOpen()
}

// sees reports whether the prompt's project may be shown an episode: a
// global one, or one of the same project. A global bite said in another
// project has neighbours of that project, which are not this one's.
func (res *Result) sees(it Item) bool {
	return res.project == "" || it.Scope == "global" || it.ProjectPath == res.project
}

// clipQuery is the part of a prompt recall looks at: its first
// MaxQueryBytes, cut at a word boundary.
func clipQuery(s string) string {
	if len(s) <= MaxQueryBytes {
		return s
	}
	cut := strings.LastIndexAny(s[:MaxQueryBytes], " \t\n")
	if cut <= 0 {
		cut = MaxQueryBytes
	}
	return s[:cut]
}

// term is one search term of a prompt.
type term struct {
	word   string // folded as the index folds it (lower case, no diacritics)
	stem   string
	hash   uint64
	docs   int     // episodes holding it, when among the store's common terms
	weight float64 // rarity: what matching it is worth
	stop   bool    // too common to search for or to count
	absent bool    // in no episode, by the store's vocabulary in the global file
}

// IsFramingWord reports whether a word of a belief's statement is its
// framing ("user", "prefers", "avoids", …), not what it is about.
func IsFramingWord(w string) bool { return isFramingWord(w) }

// statementCoverage is how much of a belief the prompt names: the share of
// the statement's own words (its framing aside: "User prefers", "Project
// api avoids") whose stem is among the prompt's terms, counted only when it
// is at least half. A belief is short and says one thing, so a prompt that
// names what it is about is about it, however many other words the prompt
// has: "Should the cleanup script use bun?" is about "User prefers bun.".
func statementCoverage(it Item, terms []term) float32 {
	var project []string // its words frame a project's belief ("Project api avoids")
	eachToken(it.Project, nil, func(tok []byte) { project = append(project, string(tok)) })
	var words, found int
	var stem []byte
	eachToken(it.Text, nil, func(tok []byte) {
		w := string(tok)
		if len(tok) < 2 || isStopWord(w) || isFramingWord(w) || slices.Contains(project, w) {
			return
		}
		words++
		stem = appendStem(stem[:0], tok)
		for i := range terms {
			if terms[i].stem == string(stem) {
				found++
				return
			}
		}
	})
	if words == 0 || 2*found < words {
		return 0
	}
	return float32(found) / float32(words)
}

// isFramingWord: the words a belief's statement is framed with rather than
// what it is about.
func isFramingWord(w string) bool {
	switch w {
	case "user", "users", "prefers", "prefer", "preferred", "avoids", "avoid", "avoided", "project", "always",
		"never", "usually", "generally", "likes", "dislikes", "wants":
		return true
	}
	return false
}

// maxQueryTerms bounds the terms of a prompt (a bit mask per candidate).
const maxQueryTerms = 64

// queryTerms are the distinct terms of a prompt by stem, in order: tokens of
// two characters or more that are not stop words.
func queryTerms(text string) []term {
	var out []term
	seen := map[string]bool{}
	var stem []byte
	eachToken(text, nil, func(tok []byte) {
		if len(out) == maxQueryTerms || len(tok) < 2 || isStopWord(string(tok)) {
			return
		}
		stem = appendStem(stem[:0], tok)
		if seen[string(stem)] {
			return
		}
		s := string(stem)
		seen[s] = true
		out = append(out, term{word: string(tok), stem: s, hash: stemHash(stem), weight: 1})
	})
	return out
}

// weighTerms sets each term's rarity weight and stop flag from the
// statistics the files carry (the first file that has them: every file of
// one build has the same).
func weighTerms(terms []term, views []*View) {
	var v *View
	for _, x := range views {
		if x.Docs > 0 {
			v = x
			break
		}
	}
	if v == nil {
		return
	}
	// A term not among the common ones is in fewer episodes than the least
	// common of them: count it as rare.
	rare := max(1, v.MinCommonDocs/2)
	n := float64(v.Docs)
	for i := range terms {
		t := &terms[i]
		t.docs = v.TermDocs(t.stem)
		df := t.docs
		if df == 0 {
			df = rare
		}
		t.stop = v.StopDocs > 0 && t.docs >= v.StopDocs
		// The BM25 form of inverse document frequency, always > 0.
		t.weight = math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
	}
}

// matchQuery writes the terms the search looks for (searchTerms) as one
// FTS5 query, for display and diagnosis: each quoted as typed (FTS5 stems
// it as it stemmed the index), joined by OR.
func matchQuery(terms []term, max int) string {
	var words []string
	for _, i := range searchTerms(terms, max) {
		words = append(words, `"`+strings.ReplaceAll(terms[i].word, `"`, `""`)+`"`)
	}
	return strings.Join(words, " OR ")
}

// MaxDetail is the longest context a bite shows in full instead of the
// summary: a conversational exchange fits; a turn of tool work does not, and
// its summary says more in less room.
const MaxDetail = 1200

// EpisodeItem turns an episode into a recall item.
func EpisodeItem(e episode.Episode) Item {
	detail := ""
	if len(e.Context) <= MaxDetail {
		detail = e.Context
	}
	return Item{Kind: KindEpisode, ID: e.ID, Text: e.Summary, Detail: detail, Project: e.Project, ProjectPath: e.ProjectPath,
		At: e.OccurredAt, Importance: float32(e.Importance), AccessCount: int32(e.AccessCount),
		LastAccess: e.LastAccessedAt, Stability: float32(e.Stability), Scope: e.Scope, SessionID: e.SessionID,
		Stated: Stated(e.Type, e.Context), Superseded: e.Lifecycle == episode.LifecycleSuperseded}
}

// dropRestatedBeliefs drops a belief when an episode in which the user
// stated the same thing is also kept (their dense vectors nearly agree):
// one bite says it, in the user's own words, which carry what the belief's
// short statement leaves out ("in beauty products").
func dropRestatedBeliefs(kept []Candidate, restatedCos float64) []Candidate {
	out := kept[:0]
	for i, c := range kept {
		restated := false
		if c.Kind == KindBelief && c.HasDense() {
			for j := range kept {
				e := &kept[j]
				if j != i && e.Kind == KindEpisode && e.Stated && e.HasDense() && float64(denseBetween(&c.Item, &e.Item)) >= restatedCos {
					restated = true
					break
				}
			}
		}
		if !restated {
			out = append(out, c)
		}
	}
	return out
}

// denseBetween is the cosine between two items' dense vectors (0 when one
// lacks it or their sizes differ).
func denseBetween(a, b *Item) float32 {
	if len(a.Dense) > 0 {
		return b.DenseCos(a.Dense)
	}
	if len(b.Dense) > 0 {
		return a.DenseCos(b.Dense)
	}
	if len(a.d8) == 0 || len(a.d8) != len(b.d8) {
		return 0
	}
	var d int32
	for i := range a.d8 {
		d += int32(a.d8[i]) * int32(b.d8[i])
	}
	return float32(d) * a.dInvNorm * b.dInvNorm
}
