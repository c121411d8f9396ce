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
// leaves the active status, it is re-checked: with fewer than MetaProjects
// active sources it is archived. A principle
// the user states in so many words needs none of this (a stated global
// claim is a belief of its own); phrasing a principle from beliefs that
// agree only in meaning ("prefers minimal dependencies" from "avoids
// testify" and "avoids lodash") is not the local judge's to do: a judge
// that can (Generalizer: the LLM judge) is asked for the principle of each
// group of at least MetaGroup linked beliefs, once per group.
const MetaProjects = 3

// MetaGroup is the smallest group of linked beliefs a model is asked to
// generalize; MetaAsks bounds the questions per cycle.
const (
	MetaGroup = 3
	MetaAsks  = 2
)

// Generalizer is a judge that can state the principle a group of related
// beliefs share.
type Generalizer interface {
	Generalize(ctx context.Context, bs []*belief.Belief) (c Candidate, ok bool, err error)
}

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
		agreeing := 0
		var gone []string
		for _, sid := range m.Sources {
			if src := s.beliefs[sid]; src != nil && src.Status == belief.StatusActive {
				agreeing++
				continue
			}
			gone = append(gone, sid)
		}
		if agreeing >= MetaProjects {
			if k, ok := metaKeyOf(m); ok {
				covered[k] = true
			}
			for _, sid := range m.Sources {
				s.metaSources[sid] = true
			}
			continue
		}
		before := snapshot(m)
		m.Status, m.UpdatedAt = belief.StatusArchived, s.now
		s.dirty[id] = true
		s.st.Archived++
		s.record(m, store.ActionArchived, "consolidate", fmt.Sprintf("re-checked: %d of its sources still hold (%s changed or left)",
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
	if g, ok := s.judge.(Generalizer); ok {
		s.generalize(ctx, g)
	}
}

// generalize asks the judge for the principle of groups of linked active
// beliefs: a belief and the beliefs linked to it, at least MetaGroup, none
// of them a meta-belief or the source of one, never asked before.
func (s *cycle) generalize(ctx context.Context, g Generalizer) {
	links, err := s.c.DB.AllLinks(ctx)
	if err != nil {
		s.log.Warn("meta-beliefs skipped", "err", err)
		return
	}
	links = append(links, s.newLinks...)
	usable := func(id string) bool {
		b := s.beliefs[id]
		return b != nil && b.Status == belief.StatusActive && len(b.Sources) == 0 && !s.metaSources[id]
	}
	adj := map[string][]string{}
	for _, l := range links {
		if usable(l.From) && usable(l.To) && !slices.Contains(adj[l.From], l.To) {
			adj[l.From] = append(adj[l.From], l.To)
		}
	}
	asks := 0
	for _, id := range s.order {
		if asks >= MetaAsks || ctx.Err() != nil {
			return
		}
		if !usable(id) || len(adj[id])+1 < MetaGroup {
			continue
		}
		group := append([]string{id}, adj[id]...)
		if slices.ContainsFunc(group, func(x string) bool { return s.metaSources[x] }) {
			continue
		}
		slices.Sort(group)
		key := "meta_asked:" + strings.Join(group, ",")
		if v, _ := s.c.DB.Meta(ctx, key); v != "" || s.asked[key] {
			continue
		}
		asks++
		s.asked[key] = true
		bs := make([]*belief.Belief, len(group))
		for i, gid := range group {
			bs[i] = s.beliefs[gid]
		}
		c, ok, err := g.Generalize(ctx, bs)
		if err != nil {
			s.st.Fallbacks++
			s.log.Warn("meta-belief: the judge failed", "err", err)
			delete(s.asked, key) // asked again next cycle
			continue
		}
		if !ok {
			continue
		}
		s.principle(ctx, c, bs)
		for _, gid := range group {
			s.metaSources[gid] = true
		}
	}
}

// principle forms the meta-belief a judge stated for a group.
func (s *cycle) principle(ctx context.Context, c Candidate, srcs []*belief.Belief) {
	scope, project, path := srcs[0].Scope, srcs[0].Project, srcs[0].ProjectPath
	for _, b := range srcs[1:] {
		if b.Scope != scope || b.ProjectPath != path {
			scope, project, path = episode.ScopeGlobal, "", ""
		}
	}
	m := &belief.Belief{ID: store.NewID("bl_"), Statement: c.Statement, Subject: c.Subject, Predicate: c.Predicate, Context: c.Context,
		Timeframe: belief.TimeCurrent, Scope: scope, Project: project, ProjectPath: path, Alpha: 1, Beta: 1,
		Status: belief.StatusActive, Stability: 1, CreatedAt: s.now, UpdatedAt: s.now, LastReinforcedAt: s.now,
		Kind: episode.KindPrinciple}
	s.fold(ctx, m, srcs)
	s.formed(m, "consolidate", fmt.Sprintf("the principle %s stated of %d linked beliefs: %s", s.judge.Name(), len(srcs), strings.Join(m.Sources, ", ")))
	s.st.Created++
	s.st.Metas++
	s.log.Info("meta-belief formed", "id", m.ID, "sources", m.Sources)
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
	s.fold(ctx, m, srcs)
	s.formed(m, "consolidate", fmt.Sprintf("the principle of %d beliefs in %d projects: %s", len(srcs), projects, strings.Join(m.Sources, ", ")))
	s.st.Created++
	s.st.Metas++
	s.log.Info("meta-belief formed", "id", m.ID, "sources", m.Sources)
}

// fold gives a meta-belief its sources, their evidence and links to them,
// and registers it.
func (s *cycle) fold(ctx context.Context, m *belief.Belief, srcs []*belief.Belief) {
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
		s.metaLinks = append(s.metaLinks, store.Link{From: m.ID, To: b.ID, Similarity: 1, At: s.now})
	}
	if vec := s.embed(ctx, m.Statement); len(vec) > 0 {
		m.Embedding, m.Embedder = vec, s.embedderName()
	}
	m.PeakConfidence = m.Confidence()
	s.add(m)
}
