package portable

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/store"
)

// Counts is what an import did with the records of one kind.
type Counts struct {
	// Added: new to the store. Skipped: the store already has them (or
	// forgot them: a tombstone wins). Merged: the store had another
	// version, and the merge changed it.
	Added, Skipped, Merged int
}

func (c Counts) total() int { return c.Added + c.Skipped + c.Merged }

// Result is what an import did.
type Result struct {
	Episodes, Beliefs, Events, Links, Levels Counts
	// ForgottenEpisodes and ForgottenBeliefs are the memories this store
	// held that the file says were forgotten where it was made: the import
	// forgot them here too (the caller rewrites the files that may still
	// show them, as forget does).
	ForgottenEpisodes []episode.Episode
	ForgottenBeliefs  []belief.Belief
}

// Total sums the counts of every kind.
func (r Result) Total() Counts {
	var t Counts
	for _, c := range []Counts{r.Episodes, r.Beliefs, r.Events, r.Links, r.Levels} {
		t.Added, t.Skipped, t.Merged = t.Added+c.Added, t.Skipped+c.Skipped, t.Merged+c.Merged
	}
	return t
}

// Records is how many records the file held.
func (r Result) Records() int { return r.Total().total() }

// Changed reports whether the import changed the store.
func (r Result) Changed() bool {
	t := r.Total()
	return t.Added+t.Merged+len(r.ForgottenEpisodes)+len(r.ForgottenBeliefs) > 0
}

// Detail says, kind by kind, what was added, skipped and merged (the kinds
// the file held, the counts that are not zero).
func (r Result) Detail() string {
	var parts []string
	for _, k := range []struct {
		name string
		c    Counts
	}{{"episodes", r.Episodes}, {"beliefs", r.Beliefs}, {"history", r.Events}, {"links", r.Links}, {"levels", r.Levels}} {
		var n []string
		for _, x := range []struct {
			v    int
			what string
		}{{k.c.Added, "added"}, {k.c.Skipped, "skipped"}, {k.c.Merged, "merged"}} {
			if x.v > 0 {
				n = append(n, fmt.Sprintf("%d %s", x.v, x.what))
			}
		}
		if len(n) > 0 {
			parts = append(parts, k.name+" "+strings.Join(n, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// Import reads and validates r (a file with a bad line stores nothing),
// then merges it into the store in one transaction:
//
//   - a record the store does not hold is added, unless the store forgot
//     its memory (a tombstone wins), or holds an episode of the same
//     content under another id (the same exchange, said on both
//     machines): that episode is merged as one the store holds by id, and
//     the file's beliefs and history name it by this store's id, so that
//     it is not counted twice;
//   - a record the store holds is merged by the rules sharing uses
//     (share.JoinEpisode, share.JoinBelief): the later episode wins, a
//     belief's statement and status by the stronger retirement then the
//     later update, its evidence as a set; an episode's lifecycle by the
//     stronger retirement; a review level as joinLevels says; history
//     events and links as sets; skipped when the merge changes nothing;
//   - a memory the file says was forgotten (its 'forgotten' event) is
//     forgotten here, as forget does it in the store, and its other
//     records, and every record of a memory this store forgot, are
//     skipped.
//
// So importing the same file twice changes nothing the second time, and
// two stores that import each other's exports hold the same memories.
func Import(ctx context.Context, db *store.DB, r io.Reader) (Result, error) {
	d, lines, err := read(r)
	if err != nil {
		return Result{}, err
	}
	var res Result
	err = db.ImportMerge(ctx, func(t *store.MergeTx) error {
		m := &merger{t: t, lines: lines, tomb: map[string]time.Time{}, forgot: map[string]bool{}, alias: map[string]string{}}
		err := m.run(d)
		res = m.res
		return err
	})
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

type merger struct {
	t     *store.MergeTx
	lines []int // of each record: episodes, beliefs, events, links, levels
	next  int   // the index of the record at hand in lines
	res   Result
	// tomb holds the memories the file says were forgotten, with when;
	// forgot caches whether this store forgot an id.
	tomb   map[string]time.Time
	forgot map[string]bool
	// alias maps the id of a file's episode whose exchange this store
	// holds under another id to that id: the file's beliefs and history
	// then count and name the exchange as this store does, so that it is
	// not counted twice as evidence.
	alias map[string]string
}

// local is id as this store knows the episode.
func (m *merger) local(id string) string {
	if a, ok := m.alias[id]; ok {
		return a
	}
	return id
}

func (m *merger) localIDs(ids []string) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id = m.local(id); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// fail names the line of the record at hand.
func (m *merger) fail(err error) error { return &LineError{Line: m.lines[m.next], Err: err} }

// gone reports whether a memory was forgotten, in the file or here.
func (m *merger) gone(id string) (bool, error) {
	if _, ok := m.tomb[id]; ok {
		return true, nil
	}
	if g, ok := m.forgot[id]; ok {
		return g, nil
	}
	g, err := m.t.Forgotten(id)
	m.forgot[id] = g
	return g, err
}

// goneFunc is gone for the merge rules, which cannot fail: an error is
// kept for after.
func (m *merger) goneFunc(errp *error) func(string) bool {
	return func(id string) bool {
		g, err := m.gone(id)
		if err != nil && *errp == nil {
			*errp = err
		}
		return g
	}
}

func (m *merger) run(d Data) error {
	for _, ev := range d.Events {
		if ev.Action == store.ActionForgotten {
			if at, ok := m.tomb[ev.MemoryID]; !ok || ev.At.Before(at) {
				m.tomb[ev.MemoryID] = ev.At
			}
		}
	}
	if err := m.forgetTombstoned(d); err != nil {
		return err
	}
	for _, e := range d.Episodes {
		if err := m.episode(e); err != nil {
			return m.fail(err)
		}
		m.next++
	}
	for _, b := range d.Beliefs {
		if err := m.belief(b); err != nil {
			return m.fail(err)
		}
		m.next++
	}
	for _, ev := range d.Events {
		if err := m.event(ev); err != nil {
			return m.fail(err)
		}
		m.next++
	}
	for _, l := range d.Links {
		if err := m.link(l); err != nil {
			return m.fail(err)
		}
		m.next++
	}
	for _, l := range d.Levels {
		if err := m.level(l); err != nil {
			return m.fail(err)
		}
		m.next++
	}
	return nil
}

// forgetTombstoned forgets here what the file says was forgotten where it
// was made: episodes first, so that the beliefs they supported lose them
// as evidence (and are retired when nothing else holds them up).
func (m *merger) forgetTombstoned(d Data) error {
	ids := make([]string, 0, len(m.tomb))
	for id := range m.tomb {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, pass := range []string{"ep_", "bl_"} {
		for _, id := range ids {
			if !strings.HasPrefix(id, pass) {
				continue
			}
			if pass == "ep_" {
				e, ok, err := m.t.Episode(id)
				if err != nil {
					return err
				}
				if ok {
					if err := m.t.ForgetEpisode(id, m.tomb[id]); err != nil {
						return err
					}
					m.res.ForgottenEpisodes = append(m.res.ForgottenEpisodes, e)
				}
				continue
			}
			b, ok, err := m.t.Belief(id)
			if err != nil {
				return err
			}
			if ok {
				if err := m.t.ForgetBelief(id, m.tomb[id]); err != nil {
					return err
				}
				m.res.ForgottenBeliefs = append(m.res.ForgottenBeliefs, b)
			}
		}
	}
	return nil
}

func (m *merger) episode(e episode.Episode) error {
	c := &m.res.Episodes
	if g, err := m.gone(e.ID); err != nil || g {
		c.Skipped++
		return err
	}
	local, ok, err := m.t.Episode(e.ID)
	if err != nil {
		return err
	}
	if !ok {
		other, err := m.t.EpisodeWithContent(e.ContentHash)
		if err != nil {
			return err
		}
		if other == "" {
			c.Added++
			return m.t.InsertEpisode(&e)
		}
		// The same exchange, stored here under another id: the file's
		// version merges into this store's, which keeps its id.
		m.alias[e.ID] = other
		if local, ok, err = m.t.Episode(other); err != nil || !ok {
			return err
		}
		e.ID = other
	}
	merged, changed := share.JoinEpisode(local, e)
	if lc := strongerLifecycle(local.Lifecycle, e.Lifecycle); lc != merged.Lifecycle {
		merged.Lifecycle, changed = lc, true
	}
	if !changed {
		c.Skipped++
		return nil
	}
	c.Merged++
	return m.t.UpdateEpisode(&merged)
}

// lifecycleRank orders an episode's lifecycle as retirements, the way a
// belief's status is ordered for sharing: out of recall (archived,
// expired) beats live, and a correction (superseded) beats both.
func lifecycleRank(l string) int {
	switch l {
	case "":
		return 0
	case episode.LifecycleArchived:
		return 1
	case episode.LifecycleExpired:
		return 2
	}
	return 3
}

// strongerLifecycle is the merge rule for an episode's lifecycle: the
// stronger retirement wins.
func strongerLifecycle(a, b string) string {
	if lifecycleRank(b) > lifecycleRank(a) {
		return b
	}
	return a
}

func (m *merger) belief(b belief.Belief) error {
	c := &m.res.Beliefs
	if g, err := m.gone(b.ID); err != nil || g {
		c.Skipped++
		return err
	}
	var gerr error
	gone := m.goneFunc(&gerr)
	b.Supporting, b.Contradicting, b.Partial = m.localIDs(b.Supporting), m.localIDs(b.Contradicting), m.localIDs(b.Partial)
	local, ok, err := m.t.Belief(b.ID)
	if err != nil {
		return err
	}
	if !ok {
		// Its evidence loses what was forgotten, as forget takes a
		// forgotten episode out of every belief.
		b.Supporting = slices.DeleteFunc(slices.Clone(b.Supporting), gone)
		b.Contradicting = slices.DeleteFunc(slices.Clone(b.Contradicting), gone)
		b.Partial = slices.DeleteFunc(slices.Clone(b.Partial), gone)
		if gerr != nil {
			return gerr
		}
		c.Added++
		return m.t.InsertBelief(&b)
	}
	merged, changed := share.JoinBelief(local, b, gone)
	if gerr != nil {
		return gerr
	}
	if !changed {
		c.Skipped++
		return nil
	}
	c.Merged++
	return m.t.UpdateBelief(&merged)
}

func (m *merger) event(ev store.Event) error {
	c := &m.res.Events
	ev.MemoryID, ev.Cause = m.local(ev.MemoryID), m.local(ev.Cause)
	// A forgotten memory's history is its 'forgotten' event alone.
	if g, err := m.gone(ev.MemoryID); err != nil || g && ev.Action != store.ActionForgotten {
		c.Skipped++
		return err
	}
	has, err := m.t.HasEvent(ev)
	if err != nil || has {
		c.Skipped++
		return err
	}
	c.Added++
	return m.t.InsertEvent(ev)
}

func (m *merger) link(l store.Link) error {
	c := &m.res.Links
	for _, id := range []string{l.From, l.To} {
		if g, err := m.gone(id); err != nil || g {
			c.Skipped++
			return err
		}
	}
	made, merged, err := m.t.Link(l)
	switch {
	case err != nil:
		return err
	case made:
		c.Added++
	case merged:
		c.Merged++
	default:
		c.Skipped++
	}
	return nil
}

func (m *merger) level(l store.LevelRecord) error {
	c := &m.res.Levels
	if g, err := m.gone(l.BeliefID); err != nil || g {
		c.Skipped++
		return err
	}
	if _, ok, err := m.t.Belief(l.BeliefID); err != nil || !ok {
		c.Skipped++ // not stored here (same content under another id)
		return err
	}
	local, ok, err := m.t.Level(l.BeliefID)
	if err != nil {
		return err
	}
	if !ok {
		c.Added++
		return m.t.SetLevel(l)
	}
	j := joinLevels(local, l)
	if j.Level == local.Level && j.Since.Equal(local.Since) && j.CoreTarget == local.CoreTarget {
		c.Skipped++
		return nil
	}
	c.Merged++
	return m.t.SetLevel(j)
}

// levelClass puts the levels only a decision reaches (denied, pinned)
// above those the gates (and approvals) move a belief through.
func levelClass(level string) int {
	if level == store.LevelDenied || level == store.LevelPinned {
		return 1
	}
	return 0
}

func levelRank(level string) int {
	switch level {
	case store.LevelLongTerm:
		return 1
	case store.LevelCore:
		return 2
	}
	return 0
}

// joinLevels is the merge rule for a belief's review level: a person's
// decision (denied, pinned) over a level of the way to core memory; of
// those the higher (a belief only moves up them); between a denial and a
// pin the later decision; the same level since the earlier time; then the
// core target by name. It picks the greater of two records in one total
// order, so every order of imports ends on the same record. (A denial
// taken back on one machine, which makes the belief long-term there, does
// not undo the denial on a machine that holds it.)
func joinLevels(a, b store.LevelRecord) store.LevelRecord {
	if levelLess(a, b) {
		return b
	}
	return a
}

func levelLess(a, b store.LevelRecord) bool {
	if ca, cb := levelClass(a.Level), levelClass(b.Level); ca != cb {
		return ca < cb
	}
	if a.Level != b.Level {
		if levelClass(a.Level) == 0 {
			return levelRank(a.Level) < levelRank(b.Level)
		}
		if !a.Since.Equal(b.Since) {
			return a.Since.Before(b.Since)
		}
		return a.Level < b.Level
	}
	if !a.Since.Equal(b.Since) {
		return a.Since.After(b.Since)
	}
	return a.CoreTarget < b.CoreTarget
}
