package recall

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Searcher is the full-text side of recall (the store, opened read-only in
// the hook).
type Searcher interface {
	SearchEpisodes(ctx context.Context, match, projectPath string, limit int) ([]store.EpisodeHit, error)
}

// Recaller answers queries from recollection files and one FTS query.
type Recaller struct {
	Home     string
	DB       Searcher // may be nil: files only
	Embedder *embed.Local
	Weights  Weights
	// MinRelevance is the gate a candidate must pass: the larger of its
	// vector similarity and its share of the prompt's terms.
	MinRelevance float64
	// FTSLimit bounds the candidates of the FTS query.
	FTSLimit int
	// MaxTerms bounds the terms of the FTS query.
	MaxTerms int
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
	// Terms is the query's terms; Match the FTS query that ran.
	Terms []string
	Match string
	// Problems lists what was skipped (a missing or unreadable file, a
	// failed search): recall degrades instead of failing.
	Problems []string
}

// New returns a Recaller with default settings.
func New(home string, db Searcher) *Recaller {
	return &Recaller{Home: home, DB: db, Embedder: embed.NewLocal(), Weights: DefaultWeights,
		MinRelevance: 0.2, FTSLimit: 40, MaxTerms: 10}
}

// Recall gathers and ranks the candidates for q.
func (r *Recaller) Recall(ctx context.Context, q Query) Result {
	var res Result
	if q.Now.IsZero() {
		q.Now = time.Now()
	}
	res.Terms = Terms(q.Text)
	if len(res.Terms) == 0 {
		return res
	}
	qvec := r.Embedder.EmbedText(q.Text)
	name := r.Embedder.Name()

	byID := map[string]*Candidate{}
	var order []string
	add := func(it Item) *Candidate {
		if q.Exclude[it.ID] {
			return nil
		}
		if c, ok := byID[it.ID]; ok {
			return c
		}
		c := &Candidate{Item: it}
		byID[it.ID] = c
		order = append(order, it.ID)
		return c
	}

	stop := map[string]bool{}
	paths := []string{GlobalPath(r.Home)}
	if q.ProjectPath != "" {
		paths = append(paths, ProjectPath(r.Home, q.ProjectPath))
	}
	if q.SessionID != "" {
		paths = append(paths, SessionPath(r.Home, q.SessionID))
	}
	for _, p := range paths {
		f, err := Load(p)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				res.Problems = append(res.Problems, err.Error())
			}
			continue
		}
		for _, t := range f.StopTerms {
			stop[t] = true
		}
		sameSpace := f.Embedder == name
		for _, it := range f.Items {
			if q.ProjectPath != "" && it.ProjectPath != "" && it.ProjectPath != q.ProjectPath && f.Scope != "global" {
				continue // another project's memory
			}
			c := add(it)
			if c == nil {
				continue
			}
			if sameSpace {
				c.Cos = it.Cos(qvec)
			}
			if f.Scope == "session" {
				c.Neighbor = true
			}
		}
	}

	if r.DB != nil {
		res.Match = Match(res.Terms, stop, r.MaxTerms)
		if res.Match != "" {
			hits, err := r.DB.SearchEpisodes(ctx, res.Match, q.ProjectPath, r.FTSLimit)
			if err != nil {
				res.Problems = append(res.Problems, err.Error())
			}
			for _, h := range hits {
				c := add(EpisodeItem(h.Episode))
				if c == nil {
					continue
				}
				c.BM25, c.HasBM25 = h.BM25, true
				if h.Embedder == name && len(h.Embedding) == len(qvec) {
					c.Cos = embed.Cosine(h.Embedding, qvec)
				}
			}
		}
	}

	cands := make([]Candidate, 0, len(order))
	cov := NewCoverer(res.Terms)
	for _, id := range order {
		c := byID[id]
		c.Coverage = cov.Coverage(c.Text + " " + c.Detail)
		cands = append(cands, *c)
	}
	Rank(cands, r.Weights, q.Now)
	for _, c := range cands {
		if !Relevant(c, r.MinRelevance) {
			continue
		}
		switch c.Kind {
		case KindBelief:
			if c.Confidence > 0.4 {
				res.Beliefs = append(res.Beliefs, c)
			}
		default:
			res.Episodes = append(res.Episodes, c)
		}
	}
	return res
}

// Match builds a safe FTS5 query from terms: the rarest-looking ones (not
// stop terms, longest first), each quoted, joined by OR. Quoting keeps FTS5
// syntax in a prompt from being interpreted.
func Match(terms []string, stop map[string]bool, max int) string {
	var keep []string
	for _, t := range terms {
		if !stop[t] && len([]rune(t)) >= 3 {
			keep = append(keep, t)
		}
	}
	sort.SliceStable(keep, func(i, j int) bool { return len(keep[i]) > len(keep[j]) })
	if max > 0 && len(keep) > max {
		keep = keep[:max]
	}
	for i, t := range keep {
		keep[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(keep, " OR ")
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
		LastAccess: e.LastAccessedAt, Stability: float32(e.Stability)}
}
