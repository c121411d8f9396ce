package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Meta-beliefs. The local judge states a general principle only where the
// structure makes it safe: the same preference (the same subject,
// polarity and purpose) held as a belief in MetaProjects projects or more
// is what the user holds everywhere ("User avoids testify." from the
// beliefs of three projects that each avoid it). The meta-belief is
// global, of kind principle, names its sources and is linked to them; its
// evidence is theirs (their supporting and contradicting episodes), so
// that it never outranks their contradictions. Whenever one of its sources
// leaves the active status or stops agreeing, it is re-checked: with fewer
// than MetaProjects agreeing active sources it is archived. A principle
// the user states in so many words needs none of this (a stated global
// claim is a belief of its own); phrasing a principle from beliefs that
// agree only in meaning ("prefers minimal dependencies" from "avoids
// testify" and "avoids lodash") is not the local judge's to do.
const MetaProjects = 3

// metaKey is what the sources of a meta-belief share.
type metaKey struct {
	subject, object string
	polarity        int
}

func metaKeyOf(b *belief.Belief) (metaKey, bool) {
	c, ok := beliefClaim(b)
	if !ok || c.class != classPref {
		return metaKey{}, false
	}
	return metaKey{c.subject, c.object, c.polarity}, true
}

// metas re-checks the active meta-beliefs, then states new ones.
func (s *cycle) metas(ctx context.Context) {
	covered := map[metaKey]bool{}
	for _, id := range slices.Clone(s.order) {
		m := s.beliefs[id]
		if m.Status != belief.StatusActive || len(m.Sources) == 0 {
			continue
		}
		k, ok := metaKeyOf(m)
		agreeing := 0
		var gone []string
		for _, sid := range m.Sources {
			if src := s.beliefs[sid]; src != nil && src.Status == belief.StatusActive {
				if sk, sok := metaKeyOf(src); sok && sk == k {
					agreeing++
					continue
				}
			}
			gone = append(gone, sid)
		}
		if ok && agreeing >= MetaProjects {
			covered[k] = true
			continue
		}
		before := snapshot(m)
		m.Status, m.UpdatedAt = belief.StatusArchived, s.now
		s.dirty[id] = true
		s.st.Archived++
		s.record(m, store.ActionArchived, "consolidate", fmt.Sprintf("re-checked: %d of its sources still agree (%s changed or left)",
			agreeing, strings.Join(gone, ", ")), before)
		s.log.Info("meta-belief archived", "id", id, "agreeing", agreeing)
	}
	// Groups of agreeing project beliefs, by the claim they share.
	groups := map[metaKey][]*belief.Belief{}
	var keys []metaKey
	for _, id := range s.order {
		b := s.beliefs[id]
		if b.Status != belief.StatusActive || b.Scope != episode.ScopeProject || len(b.Sources) > 0 {
			continue
		}
		k, ok := metaKeyOf(b)
		if !ok {
			continue
		}
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], b)
	}
	// A global belief of the same claim says it already.
	for _, id := range s.order {
		b := s.beliefs[id]
		if b.Status == belief.StatusActive && b.Scope == episode.ScopeGlobal {
			if k, ok := metaKeyOf(b); ok {
				covered[k] = true
			}
		}
	}
	for _, k := range keys {
		srcs := groups[k]
		projects := map[string]bool{}
		for _, b := range srcs {
			projects[b.ProjectPath] = true
		}
		if covered[k] || len(projects) < MetaProjects {
			continue
		}
		s.meta(ctx, srcs, len(projects))
	}
}

// meta states the meta-belief of a group of sources.
func (s *cycle) meta(ctx context.Context, srcs []*belief.Belief, projects int) {
	slices.SortStableFunc(srcs, func(a, b *belief.Belief) int { return cmp.Compare(b.Confidence(), a.Confidence()) })
	pred := PredPrefers
	if k, _ := metaKeyOf(srcs[0]); k.polarity < 0 {
		pred = PredAvoids
	}
	display := srcs[0].Subject
	m := &belief.Belief{ID: store.NewID("bl_"), Subject: display, Predicate: pred, Context: srcs[0].Context,
		Timeframe: belief.TimeCurrent, Scope: episode.ScopeGlobal, Alpha: 1, Beta: 1, Status: belief.StatusActive,
		Stability: 1, CreatedAt: s.now, UpdatedAt: s.now, LastReinforcedAt: s.now, Kind: episode.KindPrinciple}
	m.Statement = Render(episode.ScopeGlobal, "", display, pred, srcs[0].Context)
	for _, b := range srcs {
		m.Sources = append(m.Sources, b.ID)
		for _, id := range b.Supporting {
			if !hasEvidence(m, id) {
				m.Supporting = append(m.Supporting, id)
			}
		}
		for _, id := range b.Contradicting {
			if !hasEvidence(m, id) {
				m.Contradicting = append(m.Contradicting, id)
			}
		}
		m.Alpha += b.Alpha - 1
		m.Beta += b.Beta - 1
		m.EvidenceCount += b.EvidenceCount
	}
	if vec := s.embed(ctx, m.Statement); len(vec) > 0 {
		m.Embedding, m.Embedder = vec, s.embedderName()
	}
	m.PeakConfidence = m.Confidence()
	s.add(m)
	s.formed(m, "consolidate", fmt.Sprintf("the principle of %d beliefs in %d projects: %s", len(srcs), projects, strings.Join(m.Sources, ", ")))
	for _, b := range srcs {
		s.metaLinks = append(s.metaLinks, store.Link{From: m.ID, To: b.ID, Similarity: 1, At: s.now})
	}
	s.st.Created++
	s.st.Metas++
	s.log.Info("meta-belief formed", "id", m.ID, "statement", m.Statement, "sources", m.Sources)
}
