package consolidate

import (
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Review decisions bear on consolidation (see internal/review):
//
//   - a denied or pinned belief is frozen: evidence still counts for or
//     against it, but no gate splits, revises, archives or merges it, and
//     a correction weighs against it without retiring it. A pinned belief
//     stays as the user keeps it; a denied one stays in the store so that
//     what it says keeps matching new evidence;
//   - a denied belief is not formed again: a candidate that matches it
//     (the same matching that reinforces an active belief: vectors, or
//     structured claims) and a stated claim that makes its claim become
//     evidence of it instead of a new belief.

// loadLevels reads the review levels before a cycle works.
func (s *cycle) loadLevels(levels map[string]string) { s.levels = levels }

// frozen reports whether a review decision keeps b as it is.
func (s *cycle) frozen(b *belief.Belief) bool {
	l := s.levels[b.ID]
	return l == store.LevelDenied || l == store.LevelPinned
}

// deniedMatch returns the denied belief a new belief of this partition
// would say again (nil when none): one the candidate matches, or whose
// claim it makes.
func (s *cycle) deniedMatch(cl *cluster, vec []float32, claims []claim, exact *claim) *belief.Belief {
	for _, id := range s.order {
		b := s.beliefs[id]
		if s.levels[id] != store.LevelDenied {
			continue
		}
		inScope := b.Scope == episode.ScopeGlobal || (b.Scope == cl.scope && partPath(b.Scope, b.ProjectPath) == cl.projectPath)
		if !inScope {
			continue
		}
		if sim, ok := s.similarity(b, vec, s.embedderName(), claims, exact); ok && sim > MatchSimilarity {
			return b
		}
	}
	return nil
}

// deniedClaim returns the denied belief that makes claim c in partition
// part or globally (nil when none).
func (s *cycle) deniedClaim(c claim, part string) *belief.Belief {
	for _, id := range s.order {
		b := s.beliefs[id]
		if s.levels[id] != store.LevelDenied {
			continue
		}
		bc, ok := beliefClaim(b)
		if !ok || bc.subject != c.subject || bc.class != c.class || !agrees(bc, c) {
			continue
		}
		if b.Scope == episode.ScopeGlobal || partKey(b.Scope, b.ProjectPath) == part {
			return b
		}
	}
	return nil
}
