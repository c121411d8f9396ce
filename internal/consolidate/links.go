package consolidate

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/store"
)

// Links between beliefs: a belief made in a cycle (formed, revised, split)
// is linked to at most MaxLinks active beliefs that are related but not
// duplicates: whose similarity lies in the band of the embedder that
// measures it. A belief that gains evidence observes its links again
// (relinks), which reinforces them (package edge).
const MaxLinks = 3

// LinkBand is the related-but-not-duplicate band of similarity.
type LinkBand struct{ Low, High float64 }

// Bands per embedder. The sentence embedder's vectors of two statements
// measure meaning: 0.40–0.85 is related, above is a restatement. The
// lexical embedder's vectors measure shared words, and every statement of
// the local judge shares its template ("User prefers …" vs "User prefers
// …": 0.74 for bun and tabs), so it compares what a belief is about (its
// subject and context, or its statement when it has no subject). Shared
// words are all it sees: "pytest fixtures" and "pytest markers" 0.44,
// "testify" and "testify assertions in go tests" 0.56, "go test runner" and
// "table-driven tests Go" 0.37 lie in 0.30–0.85, unrelated subjects below
// 0.25 ("tabs" and "deploy target fly.io" 0.14); "avoids testify" and
// "avoids lodash" are related only by meaning, which the sentence
// embedder sees and this measure cannot.
var (
	SentenceBand = LinkBand{0.40, 0.85}
	LexicalBand  = LinkBand{0.30, 0.85}
)

// linkText is what the lexical measure compares of a belief.
func linkText(b *belief.Belief) string {
	if s := strings.TrimSpace(b.Subject + " " + b.Context); s != "" {
		return s
	}
	return b.Statement
}

// linker measures the similarity of beliefs for links.
type linker struct {
	s   *cycle
	lex map[string][]float32 // lexical vectors of link texts, by belief id
}

// similarity of two beliefs and the band it is judged in; ok is false
// when they cannot be compared.
func (l *linker) similarity(ctx context.Context, a, b *belief.Belief) (float64, LinkBand, bool) {
	if embed.IsSentence(a.Embedder) && a.Embedder == b.Embedder && len(a.Embedding) == len(b.Embedding) && len(a.Embedding) > 0 {
		return float64(embed.Cosine(a.Embedding, b.Embedding)), SentenceBand, true
	}
	va, vb := l.vec(ctx, a), l.vec(ctx, b)
	if len(va) == 0 || len(va) != len(vb) {
		return 0, LinkBand{}, false
	}
	return float64(embed.Cosine(va, vb)), LexicalBand, true
}

func (l *linker) vec(ctx context.Context, b *belief.Belief) []float32 {
	if v, ok := l.lex[b.ID]; ok {
		return v
	}
	vs, err := embed.NewLocal().Embed(ctx, []string{linkText(b)})
	var v []float32
	if err == nil && len(vs) == 1 {
		v = vs[0]
	}
	l.lex[b.ID] = v
	return v
}

// links finds the links of the beliefs made in this cycle: for each, the
// MaxLinks most similar active beliefs of the band, of a partition it
// applies in (its own, or a global one; a global belief any).
func (s *cycle) links(ctx context.Context) []store.Link {
	l := &linker{s: s, lex: map[string][]float32{}}
	var out []store.Link
	for _, id := range s.order {
		b := s.beliefs[id]
		if !s.created[id] || b.Status != belief.StatusActive {
			continue
		}
		type cand struct {
			id  string
			sim float64
		}
		var cs []cand
		for _, oid := range s.order {
			o := s.beliefs[oid]
			if oid == id || o.Status != belief.StatusActive || !sharePartition(b, o) || related(b, o) {
				continue
			}
			sim, band, ok := l.similarity(ctx, b, o)
			if ok && sim >= band.Low && sim <= band.High {
				cs = append(cs, cand{oid, sim})
			}
		}
		slices.SortStableFunc(cs, func(x, y cand) int { return cmp.Compare(y.sim, x.sim) })
		for _, c := range cs[:min(len(cs), MaxLinks)] {
			out = append(out, store.Link{From: id, To: c.id, Similarity: c.sim, At: s.now})
		}
	}
	return append(out, s.relinks(ctx, l)...)
}

// relinks observes again the links of the beliefs that gained evidence in
// this cycle (and were not made in it): a belief seen again in what the
// user says is seen again with what it is related to. Each link to an
// active neighbour is measured again, and one still in the band, or a
// meta-belief's link to a source it still names, is observed again (the
// store reinforces a link it holds); one that left the band is not,
// and decays. A link is observed once a cycle, whichever end gained.
func (s *cycle) relinks(ctx context.Context, l *linker) []store.Link {
	var out []store.Link
	seen := map[[2]string]bool{}
	for _, id := range s.order {
		b := s.beliefs[id]
		if !s.gained[id] || s.created[id] || b.Status != belief.StatusActive {
			continue
		}
		old, err := s.c.DB.Links(ctx, id)
		if err != nil {
			s.log.Warn("links not observed again", "belief", id, "err", err)
			continue
		}
		for _, ol := range old {
			o := s.beliefs[ol.To]
			pair := [2]string{min(id, ol.To), max(id, ol.To)}
			if o == nil || o.Status != belief.StatusActive || seen[pair] {
				continue
			}
			sim, again := ol.Similarity, slices.Contains(b.Sources, o.ID) || slices.Contains(o.Sources, b.ID)
			if !again && sharePartition(b, o) && !related(b, o) {
				var band LinkBand
				var ok bool
				sim, band, ok = l.similarity(ctx, b, o)
				again = ok && sim >= band.Low && sim <= band.High
			}
			if again {
				seen[pair] = true
				out = append(out, store.Link{From: id, To: o.ID, Similarity: sim, At: s.now})
			}
		}
	}
	return out
}

// sharePartition: either is global, or both are of the same project.
func sharePartition(a, b *belief.Belief) bool {
	return a.Scope == "global" || b.Scope == "global" || partPath(a.Scope, a.ProjectPath) == partPath(b.Scope, b.ProjectPath)
}

// related: one descends from the other (a revision or a split is its
// parent's successor, not its neighbour).
func related(a, b *belief.Belief) bool {
	return a.ParentID == b.ID || b.ParentID == a.ID || slices.Contains(a.Children, b.ID) || slices.Contains(b.Children, a.ID)
}
