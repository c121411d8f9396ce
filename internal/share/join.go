package share

import (
	"bytes"
	"slices"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// The merge rules, for a store meeting another store's version of one of
// its records without a server between them (an import of an export).
// They are the rules a pull applies: the result is what sharing the two
// versions through PostgreSQL would leave on this machine.

// JoinEpisode merges another version of an episode into this store's:
// the later version (by updated_at, then by content) wins whole, as
// joinEpisodes decides; what is this machine's own (accesses, stability,
// graduation, the project's path here) stays. The vector follows the
// text: the other version's when its text wins and it has one, none when
// the text changed otherwise (the worker embeds it again). changed is
// false when the local version wins as it is.
func JoinEpisode(local, other episode.Episode) (merged episode.Episode, changed bool) {
	ls, os := toSharedEpisode(&local), toSharedEpisode(&other)
	m := joinEpisodes(ls, os)
	if bytes.Equal(mustJSON(m), mustJSON(ls)) {
		return local, false
	}
	e := local
	m.into(&e)
	if bytes.Equal(mustJSON(m), mustJSON(os)) && len(other.Embedding) > 0 {
		e.Embedding, e.Embedder = other.Embedding, other.Embedder
	} else if e.Summary != local.Summary || e.Context != local.Context {
		e.Embedding, e.Embedder = nil, ""
	}
	return e, true
}

// JoinBelief merges another version of a belief into this store's: the
// statement and lifecycle as joinBeliefs decides (the stronger retirement,
// then the later update), children and revisions as sets; the evidence as
// a set of records keyed by episode, each counting what it counted where
// it was first recorded (this store's records first, as localEvidence
// derives them, then the other's new ones), α, β and the evidence count
// computed from the records as a pull computes them (beliefFrom). gone
// names episodes forgotten on either side: their records are dropped. The
// vector follows the statement as in JoinEpisode. changed is false when
// the merge leaves this store's version as it is.
func JoinBelief(local, other belief.Belief, gone func(episodeID string) bool) (merged belief.Belief, changed bool) {
	if samePortable(&local, &other) {
		return local, false
	}
	m := joinBeliefs(toSharedBelief(&local), toSharedBelief(&other))
	mine := localEvidence(&local, nil)
	known := make(map[string]Evidence, len(mine))
	for _, e := range mine {
		known[e.Episode] = e
	}
	theirs := localEvidence(&other, known)
	sortEvidence(theirs)
	var records []Evidence
	for _, e := range append(mine, theirs...) {
		if gone == nil || !gone(e.Episode) {
			records = append(records, e)
		}
	}
	nb := beliefFrom(m, records, &local, local.Project, local.ProjectPath)
	if samePortable(&local, &nb) {
		return local, false
	}
	if nb.Statement != local.Statement {
		nb.Embedding, nb.Embedder = nil, ""
		if nb.Statement == other.Statement && len(other.Embedding) > 0 {
			nb.Embedding, nb.Embedder = other.Embedding, other.Embedder
		}
	}
	return nb, true
}

// samePortable reports whether two versions of a belief agree on what
// travels between machines: the shared version (statement, lifecycle,
// times, children and revisions as sets), α, β, the evidence count, the
// kind and lifetime, and the evidence lists as sets. Where this machine
// keeps a project, how often it was recalled and its vector do not count.
func samePortable(a, b *belief.Belief) bool {
	return bytes.Equal(mustJSON(toSharedBelief(a)), mustJSON(toSharedBelief(b))) && a.Alpha == b.Alpha && a.Beta == b.Beta &&
		a.EvidenceCount == b.EvidenceCount && a.Kind == b.Kind && a.Speculative == b.Speculative && a.DueAt.Equal(b.DueAt) &&
		slices.Equal(sortedSet(a.Supporting), sortedSet(b.Supporting)) &&
		slices.Equal(sortedSet(a.Contradicting), sortedSet(b.Contradicting)) &&
		slices.Equal(sortedSet(a.Partial), sortedSet(b.Partial))
}
