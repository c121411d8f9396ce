package recall

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// Candidate is an item with the evidence gathered for one query.
type Candidate struct {
	Item
	// BM25 is the full-text search's score, negated like FTS5's bm25 (lower
	// is better): the summed rarity of the prompt's terms the episode
	// matched. Only meaningful with HasBM25.
	BM25    float64
	HasBM25 bool
	Cos     float32 // vector similarity to the query (the local, lexical vectors)
	// Dense is the cosine of the item's dense vector with the prompt's,
	// when both exist (HasDenseCos), and DenseGap how far it is above the
	// reference (the RefRank-th nearest episode's).
	Dense       float32
	DenseGap    float32
	HasDenseCos bool
	// ByMeaning: it passed the gate by its dense vector (stoodOut).
	ByMeaning bool
	Coverage  float32 // share of the query's terms found in the item's text
	Neighbor  bool    // found by the worker's session neighbours
	Score     float64
	// Before and After are the exchanges next to an episode in its
	// session, set by Expand for the episodes about to become bites.
	Before, After *Item
	// Linked is the belief whose link brought this one (ExpandLinks), and
	// LinkConfidence that link's confidence.
	Linked         string
	LinkConfidence float32
	// Rank is the score PageRank gave it over the links ExpandLinks read
	// (0 when it read none): the beliefs are in its order.
	Rank float64
}

// Weights of the blend.
type Weights struct {
	BM25       float64 `json:"bm25"`
	Vector     float64 `json:"vector"`
	Recency    float64 `json:"recency"`
	Strength   float64 `json:"strength"`
	Importance float64 `json:"importance"`
	// RecencyDays is the e-folding time of recency.
	RecencyDays float64 `json:"recency_days"`
	// Dense weighs the dense relevance (below) in an episode's score.
	Dense float64 `json:"dense"`
	// DenseCos weighs an episode's dense cosine in its score, when it has
	// one: with it the score is mostly relevance (BM25 for the words,
	// the cosine for the meaning), freshness, strength and importance
	// only breaking near ties (FreshShare of their weight).
	DenseCos   float64 `json:"dense_cos"`
	FreshShare float64 `json:"fresh_share"`
	// DenseFloor is the reference cosine of the dense gate when the store
	// has fewer than RefRank episodes with dense vectors.
	DenseFloor float64 `json:"dense_floor"`
	// StatedGap is how far above the reference a stated memory's cosine
	// (a belief, or an episode in which the user stated a preference, a
	// fact or their situation) must be to pass the gate by meaning alone,
	// and DenseMin the least cosine it must have.
	StatedGap float64 `json:"stated_gap"`
	DenseMin  float64 `json:"dense_min"`
	// BeliefGap is StatedGap for beliefs: a belief's statement is short,
	// and a short text's cosine with a prompt strays more than an
	// exchange's. A belief found by its words must stand BeliefGap above
	// the reference too (see Recall's gate).
	BeliefGap float64 `json:"belief_gap"`
	// DenseSlope: a memory that stands out has a dense relevance of one
	// half at its gap, rising by DenseSlope per unit of cosine above it
	// (to one).
	DenseSlope float64 `json:"dense_slope"`
	// A belief's score: BeliefMatch of its confidence times its best
	// similarity, BeliefStrength of its retrieval strength times its
	// relevance, BeliefWords of its BM25.
	BeliefMatch    float64 `json:"belief_match"`
	BeliefStrength float64 `json:"belief_strength"`
	BeliefWords    float64 `json:"belief_words"`
	// SessionNeighbour is added to the score of an episode the session's
	// neighbours file names.
	SessionNeighbour float64 `json:"session_neighbour"`
	// Superseded scales the score of an episode a correction replaced: it
	// may still be shown (what else it says holds), labelled, but below
	// what is current.
	Superseded float64 `json:"superseded"`
}

// RetrievalStrength is belief.RetrievalStrength, for episodes and beliefs alike.
var RetrievalStrength = belief.RetrievalStrength

// Rank scores candidates in place and sorts them best first. Episodes and
// beliefs are scored with their own blends; the scores are comparable
// within a kind.
func Rank(cands []Candidate, w Weights, now time.Time) {
	var maxBM25 float64
	for _, c := range cands {
		if c.HasBM25 && -c.BM25 > maxBM25 {
			maxBM25 = -c.BM25
		}
	}
	for i := range cands {
		c := &cands[i]
		bm := 0.0
		if c.HasBM25 && maxBM25 > 0 {
			bm = -c.BM25 / maxBM25
		}
		// A lexical match the FTS query did not return (a file candidate)
		// still counts through its term coverage.
		bm = math.Max(bm, float64(c.Coverage))
		cos := math.Max(0, float64(c.Cos))
		strength := RetrievalStrength(c.LastAccess, float64(c.Stability), now)
		if c.Kind == KindBelief {
			// The belief design's blend: confidence-weighted similarity first.
			c.Score = w.BeliefMatch*float64(c.Confidence)*math.Max(math.Max(cos, bm), denseRelevance(*c, w)) + w.BeliefStrength*strength*relevance(*c, w) + w.BeliefWords*bm
			continue
		}
		age := now.Sub(c.At).Hours() / 24
		recency := math.Exp(-math.Max(0, age) / w.RecencyDays)
		fresh := relevance(*c, w) * (w.Recency*recency + w.Strength*strength + w.Importance*float64(c.Importance))
		if c.HasDenseCos {
			// Relevance first: the fusion of BM25 and the sentence
			// embedder's cosine (on conversation facts it ranks better
			// than either alone).
			c.Score = w.BM25*bm + w.Vector*cos + w.DenseCos*float64(c.Dense) + w.Dense*denseRelevance(*c, w) + w.FreshShare*fresh
		} else {
			c.Score = w.BM25*bm + w.Vector*cos + w.Dense*denseRelevance(*c, w) + fresh
		}
		if c.Neighbor {
			c.Score += w.SessionNeighbour
		}
		if c.Superseded {
			// What the user corrected since ranks below what it says
			// about anything else (Weights.Superseded).
			c.Score *= w.Superseded
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Score != cands[j].Score {
			return cands[i].Score > cands[j].Score
		}
		return cands[i].ID < cands[j].ID
	})
}

// relevance is how much a candidate has to do with the query at all, in
// [0, 1]: the larger of its lexical and its dense relevance.
//
// Lexical: its term coverage, which its local vector similarity can raise
// up to twice the coverage. A candidate that shares no term with the query
// has none: the local vectors are lexical, and a cosine without shared
// terms is hashing noise or a few shared letters ("haiku about falling
// leaves" against a note on feature flags scores 0.2).
//
// Dense: for a stated memory that stands out from the store's nearest (see
// stoodOut), one half plus how far it stands out past the gap. It finds
// what shares no word with the prompt.
//
// Freshness, strength and importance only add to a candidate that is
// relevant: an important memory about something else stays out.
func relevance(c Candidate, w Weights) float64 {
	return math.Max(lexicalRelevance(c), denseRelevance(c, w))
}

func lexicalRelevance(c Candidate) float64 {
	cov := float64(c.Coverage)
	if cov <= 0 {
		return 0
	}
	return math.Max(cov, math.Min(float64(c.Cos), 2*cov))
}

func denseRelevance(c Candidate, w Weights) float64 {
	if !stoodOut(c, w) {
		return 0
	}
	gap := w.StatedGap
	if c.Kind == KindBelief {
		gap = w.BeliefGap
	}
	return math.Min(1, 0.5+w.DenseSlope*(float64(c.DenseGap)-gap))
}

// stoodOut reports whether a candidate passes the gate by meaning: a
// stated episode StatedGap above the reference, or a belief BeliefGap above
// it, with a cosine of at least DenseMin.
func stoodOut(c Candidate, w Weights) bool {
	if !c.HasDenseCos || float64(c.Dense) < w.DenseMin {
		return false
	}
	if c.Kind == KindBelief {
		return float64(c.DenseGap) >= w.BeliefGap
	}
	return c.Stated && float64(c.DenseGap) >= w.StatedGap
}

// Relevant is the gate a candidate must pass to be injected.
func Relevant(c Candidate, w Weights, minRelevance float64) bool {
	return relevance(c, w) >= minRelevance
}

// Terms splits text into the search terms recall uses, as typed (lower
// case, diacritics removed): letters and digits, at least two characters,
// stop words dropped, one per stem, in order.
func Terms(text string) []string {
	var out []string
	for _, t := range queryTerms(clipQuery(text)) {
		out = append(out, t.word)
	}
	return out
}

// Coverage is the share of query terms whose stem occurs in text.
func Coverage(query []string, text string) float32 {
	return NewCoverer(query).Coverage(text)
}

// Coverer measures the coverage of one query over many texts: the query's
// stems are computed once, and a text's tokens are stemmed only when they
// could give one of them (same first two letters), without building a term
// list or set per text.
type Coverer struct {
	terms []term
	total float64 // sum of the weights of the terms that count (not stop terms)
	// first[c]: a query stem of at most two letters starts with c, so every
	// token starting with c is stemmed; pair: the two-letter starts of the
	// longer stems (a stem keeps its word's first two letters when it has
	// three or more).
	first [256]bool
	pair  [1024]uint64
	buf   []byte // tokens
	sbuf  []byte // stems
}

// NewCoverer prepares a query given as words: every term weighs the same.
func NewCoverer(query []string) *Coverer {
	var terms []term
	seen := map[string]bool{}
	for _, w := range query {
		eachToken(w, nil, func(tok []byte) {
			s := Stem(string(tok))
			if !seen[s] && len(terms) < maxQueryTerms {
				seen[s] = true
				terms = append(terms, term{word: string(tok), stem: s, hash: stemHash([]byte(s)), weight: 1})
			}
		})
	}
	return newCoverer(terms)
}

func newCoverer(terms []term) *Coverer {
	c := &Coverer{terms: terms}
	for _, t := range terms {
		if t.stop {
			continue
		}
		c.total += t.weight
		if len(t.stem) <= 2 {
			c.first[t.stem[0]] = true
		} else {
			p := uint16(t.stem[0])<<8 | uint16(t.stem[1])
			c.pair[p>>6] |= 1 << (p & 63)
		}
	}
	return c
}

// Coverage is the weighted share of the query's terms (stop terms aside)
// whose stem occurs among the text's.
func (c *Coverer) Coverage(text string) float32 { return c.weigh(c.mask(text)) }

// mask has bit i set when term i occurs in one of the texts.
func (c *Coverer) mask(texts ...string) uint64 {
	var m uint64
	for _, text := range texts {
		c.buf = eachToken(text, c.buf, func(tok []byte) {
			if len(tok) < 2 {
				return
			}
			if !c.first[tok[0]] {
				p := uint16(tok[0])<<8 | uint16(tok[1])
				if c.pair[p>>6]&(1<<(p&63)) == 0 {
					return
				}
			}
			c.sbuf = appendStem(c.sbuf[:0], tok)
			s := c.sbuf
			for i := range c.terms {
				if !c.terms[i].stop && string(s) == c.terms[i].stem {
					m |= 1 << i
				}
			}
		})
	}
	return m
}

// weigh turns a mask of matched terms into a share of the query's weight.
func (c *Coverer) weigh(m uint64) float32 {
	if c.total == 0 || m == 0 {
		return 0
	}
	var w float64
	for i := range c.terms {
		if m&(1<<i) != 0 && !c.terms[i].stop {
			w += c.terms[i].weight
		}
	}
	return float32(min(1, w/c.total))
}

// isStopWord reports whether a folded token is dropped from queries: it
// matches everything. (A switch: no table to build when the hook starts.)
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
		"aren", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
		"can", "cannot", "could", "couldn", "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during",
		"each", "few", "for", "from", "further", "get", "got", "had", "hadn", "has", "hasn", "have", "haven",
		"having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
		"is", "isn", "it", "its", "itself", "just", "let", "me", "more", "most", "much", "must", "my", "myself",
		"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours",
		"ourselves", "out", "over", "own", "please", "same", "shall", "she", "should", "shouldn", "so", "some",
		"such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
		"this", "those", "through", "to", "too", "under", "until", "up", "us", "very", "was", "wasn", "we", "were",
		"weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "won", "would",
		"wouldn", "you", "your", "yours", "yourself", "yourselves", "ok", "okay", "yes", "yeah", "sure", "thanks",
		"thank", "hi", "hello", "hey", "want", "like", "know", "think", "make", "go", "going", "need", "tell",
		"say", "said", "one", "two", "really", "well", "still", "use", "used", "using", "way", "thing", "things",
		"something", "anything", "give", "take", "see", "look":
		return true
	}
	return false
}

// isTrivialPrompt: acknowledgements and nudges never get recall.
func isTrivialPrompt(p string) bool {
	switch p {
	case "yes", "y", "no", "n", "ok", "okay", "k", "sure", "go on", "go ahead", "continue", "next", "thanks",
		"thank you", "thx", "ty", "lgtm", "done", "good", "great", "nice", "cool", "perfect", "right", "correct",
		"yep", "yup", "nope", "do it", "proceed", "keep going", "sounds good", "looks good", "yes please",
		"please do", "agreed", "fine", "retry", "try again", "again", "stop", "wait", "hmm":
		return true
	}
	return false
}

// Trivial reports whether a prompt is too slight to recall anything for.
func Trivial(prompt string) bool {
	p := strings.ToLower(strings.TrimSpace(prompt))
	p = strings.TrimRight(p, ".!?… ")
	if p == "" || isTrivialPrompt(p) {
		return true
	}
	if strings.HasPrefix(p, "/") && !strings.ContainsAny(p, " \n") {
		return true // a bare slash command
	}
	return len(Terms(p)) == 0
}
