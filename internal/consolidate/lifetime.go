package consolidate

import (
	"context"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Lifetimes by kind.
const (
	// SpeculativeTTL: a speculative memory (the user hedged) not confirmed
	// within this long of being stored expires.
	SpeculativeTTL = 30 * 24 * time.Hour
	// DefaultCommitmentTTL: a commitment that names no date (or a date
	// before engram stored it) decays this long after it was stored
	// (ENGRAM_COMMITMENT_DAYS).
	DefaultCommitmentTTL = 30 * 24 * time.Hour
	// Fact archival: an episode of kind fact, less important than
	// FactArchiveImportance, not evidence of any belief, accessed at most
	// FactArchiveAccesses times and neither stored nor accessed within
	// FactArchiveAge, is archived.
	FactArchiveAge        = 90 * 24 * time.Hour
	FactArchiveImportance = 0.3
	FactArchiveAccesses   = 2
)

// Ages count from when engram stored a memory (CreatedAt), not from when
// its exchange happened: a backfill of last year's transcripts does not
// expire what it has just learned.

// CommitmentEnd is when a commitment decays: its date when it names one
// after it was stored, else ttl after it was stored.
func CommitmentEnd(created, due time.Time, ttl time.Duration) time.Time {
	if due.After(created) {
		return due
	}
	return created.Add(ttl)
}

// ExpireGate says whether an active belief's lifetime is over, and why:
// speculative and unconfirmed for SpeculativeTTL, or a commitment past
// CommitmentEnd.
func ExpireGate(b *belief.Belief, now time.Time, commitmentTTL time.Duration) (string, bool) {
	if b.Status != belief.StatusActive {
		return "", false
	}
	if b.Speculative && now.Sub(b.CreatedAt) > SpeculativeTTL {
		return fmt.Sprintf("speculative and not confirmed for %d days", int(SpeculativeTTL.Hours()/24)), true
	}
	if b.Kind == episode.KindCommitment {
		if end := CommitmentEnd(b.CreatedAt, b.DueAt, commitmentTTL); now.After(end) {
			if b.DueAt.After(b.CreatedAt) {
				return "a commitment past its date " + b.DueAt.Format("2006-01-02"), true
			}
			return fmt.Sprintf("a commitment older than %d days", int(commitmentTTL.Hours()/24)), true
		}
	}
	return "", false
}

// EpisodeEnd says whether a live episode leaves recall, to which state
// and why. confirmed: it supports a belief that is not speculative;
// evidence: it bears on some belief.
func EpisodeEnd(e *episode.Episode, now time.Time, commitmentTTL time.Duration, confirmed, evidence bool) (state, why string) {
	if e.Lifecycle != "" {
		return "", ""
	}
	switch {
	case e.Speculative && !confirmed && now.Sub(e.CreatedAt) > SpeculativeTTL:
		return episode.LifecycleExpired, fmt.Sprintf("speculative and not confirmed for %d days", int(SpeculativeTTL.Hours()/24))
	case e.Kind == episode.KindCommitment && !confirmed && now.After(CommitmentEnd(e.CreatedAt, e.DueAt, commitmentTTL)):
		if e.DueAt.After(e.CreatedAt) {
			return episode.LifecycleExpired, "a commitment past its date " + e.DueAt.Format("2006-01-02")
		}
		return episode.LifecycleExpired, fmt.Sprintf("a commitment older than %d days", int(commitmentTTL.Hours()/24))
	case e.Kind == episode.KindFact && !evidence && e.Importance < FactArchiveImportance && e.AccessCount <= FactArchiveAccesses:
		last := e.CreatedAt
		if e.LastAccessedAt.After(last) {
			last = e.LastAccessedAt
		}
		if now.Sub(last) > FactArchiveAge {
			return episode.LifecycleArchived, fmt.Sprintf("a fact of importance %.2f, not used for %d days", e.Importance, int(FactArchiveAge.Hours()/24))
		}
	}
	return "", ""
}

// episodeLifetimes ends the lifetimes of episodes that are over.
func (c *Consolidator) episodeLifetimes(ctx context.Context, o Options, now time.Time) (expired, archived int, err error) {
	eps, err := c.DB.LifetimeEpisodes(ctx, FactArchiveImportance)
	if err != nil || len(eps) == 0 {
		return 0, 0, err
	}
	confirmed, evidence := map[string]bool{}, map[string]bool{}
	err = c.DB.EachBelief(ctx, func(b belief.Belief) error {
		for _, l := range [][]string{b.Supporting, b.Contradicting, b.Partial} {
			for _, id := range l {
				evidence[id] = true
			}
		}
		if b.Status == belief.StatusActive && !b.Speculative {
			for _, id := range b.Supporting {
				confirmed[id] = true
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	var changes []store.LifecycleChange
	for i := range eps {
		e := &eps[i]
		if state, why := EpisodeEnd(e, now, o.CommitmentTTL, confirmed[e.ID], evidence[e.ID]); state != "" {
			changes = append(changes, store.LifecycleChange{ID: e.ID, State: state, Detail: why})
			if state == episode.LifecycleExpired {
				expired++
			} else {
				archived++
			}
		}
	}
	if len(changes) == 0 {
		return 0, 0, nil
	}
	if _, err := c.DB.EndEpisodes(ctx, changes, now); err != nil {
		return 0, 0, err
	}
	return expired, archived, nil
}

// kindOf is the kind of a belief made from episodes: the most common kind
// among them (the first of episode.Kinds on a tie), fact when none has
// one. A commitment's date is the latest its episodes name; the belief is
// speculative when every episode is.
func kindOf(eps []episode.Episode, ids []string) (kind string, speculative bool, due time.Time) {
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	count := map[string]int{}
	speculative = true
	n := 0
	for i := range eps {
		e := &eps[i]
		if !in[e.ID] {
			continue
		}
		n++
		if e.Kind != "" {
			count[e.Kind]++
		}
		speculative = speculative && e.Speculative
		if e.DueAt.After(due) {
			due = e.DueAt
		}
	}
	kind, best := episode.KindFact, 0
	for _, k := range episode.Kinds {
		if count[k] > best {
			kind, best = k, count[k]
		}
	}
	if kind != episode.KindCommitment {
		due = time.Time{}
	}
	return kind, speculative && n > 0, due
}

// confirm applies a supporting episode's bearing on a belief's lifetime:
// a firm one confirms a speculative belief, a later date moves a
// commitment's.
func confirm(b *belief.Belief, e *episode.Episode) {
	if b.Speculative && !e.Speculative {
		b.Speculative = false
	}
	if b.Kind == episode.KindCommitment && e.DueAt.After(b.DueAt) {
		b.DueAt = e.DueAt
	}
}
