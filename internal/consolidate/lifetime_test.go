package consolidate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

func days(d int) time.Duration { return time.Duration(d) * 24 * time.Hour }

// addKind stores a global episode of a kind, as the extractor would make it.
func (f *fixture) addKind(at time.Time, summary, kind string, speculative bool, due time.Time, importance float64, sigs ...episode.Signal) string {
	f.tb.Helper()
	f.n++
	id := fmt.Sprintf("ep_%012x", f.n)
	vs, err := f.emb.Embed(context.Background(), []string{summary})
	if err != nil {
		f.tb.Fatal(err)
	}
	e := episode.Episode{ID: id, Summary: summary, Context: "User: " + summary, Signals: sigs, Importance: importance,
		Type: episode.TypeEvent, Scope: episode.ScopeGlobal, SessionID: fmt.Sprintf("s%d", f.n), ContentHash: id,
		Embedding: vs[0], Embedder: f.emb.Name(), Extractor: "local", OccurredAt: at, CreatedAt: at, UpdatedAt: at,
		Kind: kind, Speculative: speculative, DueAt: due}
	if err := f.db.ImportEpisodes(context.Background(), []episode.Episode{e}); err != nil {
		f.tb.Fatal(err)
	}
	return id
}

func (f *fixture) episode(id string) episode.Episode {
	f.tb.Helper()
	e, err := f.db.GetEpisode(context.Background(), id)
	if err != nil {
		f.tb.Fatal(err)
	}
	return e
}

// A belief made only of hedged episodes is speculative: it expires 30 days
// after it formed unless a firm episode confirms it first.
func TestSpeculativeBeliefExpires(t *testing.T) {
	for _, confirmed := range []bool{false, true} {
		t.Run(fmt.Sprintf("confirmed=%v", confirmed), func(t *testing.T) {
			f := newFixture(t)
			for i := range 3 {
				f.addKind(t0.Add(hours(i)), "maybe bun would be faster here", episode.KindPreference, true, time.Time{}, 0.5, pref("bun"))
			}
			f.run(t0.Add(hours(4)))
			b := f.only(belief.StatusActive)
			if !b.Speculative || b.Kind != episode.KindPreference {
				t.Fatalf("formed: speculative %v kind %q, want a speculative preference", b.Speculative, b.Kind)
			}
			formed := b.CreatedAt
			if confirmed {
				f.addKind(t0.Add(days(10)), "I prefer bun, use it", episode.KindPreference, false, time.Time{}, 0.5, pref("bun"))
				f.run(t0.Add(days(10) + hours(1)))
				if b := f.only(belief.StatusActive); b.Speculative {
					t.Fatal("a firm episode did not confirm the belief")
				}
			}
			// At the threshold it holds; past it, it expires unless confirmed.
			if st := f.run(formed.Add(SpeculativeTTL)); st.Expired != 0 {
				t.Fatalf("expired at exactly %v: %+v", SpeculativeTTL, st)
			}
			st := f.run(formed.Add(SpeculativeTTL + time.Hour))
			if confirmed {
				if st.Expired != 0 || len(f.beliefs(belief.StatusActive)) != 1 {
					t.Fatalf("a confirmed belief expired: %+v %v", st, statements(f.beliefs("")))
				}
				return
			}
			if st.Expired != 1 {
				t.Fatalf("past %v: %+v %v", SpeculativeTTL, st, statements(f.beliefs("")))
			}
			gone := f.only(belief.StatusExpired)
			evs := f.history(gone.ID)
			last := evs[len(evs)-1]
			if last.Action != store.ActionExpired || last.Before["status"] != "active" || last.After["status"] != "expired" ||
				last.Detail != "speculative and not confirmed for 30 days" {
				t.Fatalf("history: %+v", evs)
			}
		})
	}
}

// A commitment decays after the date it names, or, naming none, TTL after
// it was stored.
func TestCommitmentBeliefDecays(t *testing.T) {
	f := newFixture(t)
	mk := func(id, statement string, due time.Time) belief.Belief {
		return belief.Belief{ID: id, Statement: statement, Subject: "plan", Predicate: "will send", Scope: episode.ScopeGlobal,
			Alpha: 4, Beta: 1, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1, PeakConfidence: 0.8,
			CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0, Kind: episode.KindCommitment, DueAt: due}
	}
	dated := mk("bl_0000000000c1", "User will send the migration plan on Friday.", t0.Add(days(2)))
	undated := mk("bl_0000000000c2", "User will rotate the keys.", time.Time{})
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{dated, undated}); err != nil {
		t.Fatal(err)
	}
	ttl := func(c *Consolidator) { c.Options.CommitmentTTL = days(10) }
	if st := f.run(t0.Add(days(2)), ttl); st.Expired != 0 {
		t.Fatalf("on its date: %+v", st)
	}
	if st := f.run(t0.Add(days(2)+time.Minute), ttl); st.Expired != 1 {
		t.Fatalf("past its date: %+v", st)
	}
	if b, _ := f.db.GetBelief(context.Background(), dated.ID); b.Status != belief.StatusExpired {
		t.Fatalf("dated commitment: %s", b.Status)
	}
	if st := f.run(t0.Add(days(10)), ttl); st.Expired != 0 {
		t.Fatalf("undated, at its TTL: %+v", st)
	}
	if st := f.run(t0.Add(days(10)+time.Minute), ttl); st.Expired != 1 {
		t.Fatalf("undated, past its TTL: %+v", st)
	}
	evs := f.history(dated.ID)
	if len(evs) != 1 || evs[0].Detail != "a commitment past its date "+t0.Add(days(2)).Format("2006-01-02") {
		t.Fatalf("history of the dated commitment: %+v", evs)
	}
}

// Episodes: a speculative one unconfirmed for 30 days expires, a confirmed
// one stays; a commitment past its date expires; an old, unimportant,
// unused fact is archived, an important one stays. Out of recall (and of
// the search index), still in the store for export.
func TestEpisodeLifetimes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	spec := f.addKind(t0, "maybe the cache is what makes it slow", episode.KindMoment, true, time.Time{}, 0.5)
	firm := make([]string, 3)
	for i := range firm {
		firm[i] = f.addKind(t0.Add(hours(1+i)), "I prefer zig", episode.KindPreference, false, time.Time{}, 0.5, pref("zig"))
	}
	specConfirmed := f.addKind(t0.Add(hours(5)), "perhaps zig, I think I prefer it", episode.KindPreference, true, time.Time{}, 0.5, pref("zig"))
	commit := f.addKind(t0, "I'll send the migration plan on Friday", episode.KindCommitment, false, t0.Add(days(2)), 0.5)
	oldFact := f.addKind(t0, "the staging port is 5433", episode.KindFact, false, time.Time{}, 0.2)
	keyFact := f.addKind(t0, "production runs in eu-west-1", episode.KindFact, false, time.Time{}, 0.6)
	f.run(t0.Add(hours(6)))
	if b := f.only(belief.StatusActive); b.Speculative {
		t.Fatalf("belief from firm and hedged episodes is speculative: %v", statements([]belief.Belief{b}))
	}
	st := f.run(t0.Add(days(3)))
	if st.EpisodesExpired != 1 || f.episode(commit).Lifecycle != episode.LifecycleExpired {
		t.Fatalf("after the commitment's date: %+v, lifecycle %q", st, f.episode(commit).Lifecycle)
	}
	if f.episode(spec).Lifecycle != "" {
		t.Fatal("the speculative episode expired before 30 days")
	}
	st = f.run(t0.Add(SpeculativeTTL + time.Hour))
	if st.EpisodesExpired != 1 || f.episode(spec).Lifecycle != episode.LifecycleExpired || f.episode(specConfirmed).Lifecycle != "" {
		t.Fatalf("after 30 days: %+v; speculative %q, confirmed %q", st, f.episode(spec).Lifecycle, f.episode(specConfirmed).Lifecycle)
	}
	if f.episode(oldFact).Lifecycle != "" {
		t.Fatal("a fact archived before 90 days")
	}
	st = f.run(t0.Add(FactArchiveAge + time.Hour))
	if st.EpisodesArchived != 1 || f.episode(oldFact).Lifecycle != episode.LifecycleArchived || f.episode(keyFact).Lifecycle != "" {
		t.Fatalf("after 90 days: %+v; unimportant %q, important %q", st, f.episode(oldFact).Lifecycle, f.episode(keyFact).Lifecycle)
	}
	cands, err := f.db.CandidateEpisodes(ctx, episode.ScopeGlobal, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	recalled := map[string]bool{}
	for _, e := range cands {
		recalled[e.ID] = true
	}
	indexed := map[string]bool{}
	if err := f.db.EachIndexEpisode(ctx, nil, func(e store.IndexEpisode) error { indexed[e.ID] = true; return nil }); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{spec, commit, oldFact} {
		if recalled[id] || indexed[id] {
			t.Errorf("%s left its lifetime but is recalled (%v) or indexed (%v)", id, recalled[id], indexed[id])
		}
	}
	for _, id := range append([]string{specConfirmed, keyFact}, firm...) {
		if !recalled[id] || !indexed[id] {
			t.Errorf("%s is live but not recalled (%v) or not indexed (%v)", id, recalled[id], indexed[id])
		}
	}
	evs := f.history(oldFact)
	if last := evs[len(evs)-1]; last.Action != store.ActionArchived || last.After["lifecycle"] != "archived" {
		t.Fatalf("history of the archived fact: %+v", evs)
	}
}

func TestEpisodeEndThresholds(t *testing.T) {
	now := t0
	for _, tt := range []struct {
		name      string
		e         episode.Episode
		confirmed bool
		evidence  bool
		want      string
	}{
		{"speculative at 30 days", episode.Episode{Speculative: true, CreatedAt: now.Add(-SpeculativeTTL)}, false, false, ""},
		{"speculative past 30 days", episode.Episode{Speculative: true, CreatedAt: now.Add(-SpeculativeTTL - time.Second)}, false, false, episode.LifecycleExpired},
		{"speculative confirmed", episode.Episode{Speculative: true, CreatedAt: now.Add(-days(100))}, true, true, ""},
		{"commitment on its date", episode.Episode{Kind: episode.KindCommitment, CreatedAt: now.Add(-days(1)), DueAt: now}, false, false, ""},
		{"commitment past its date", episode.Episode{Kind: episode.KindCommitment, CreatedAt: now.Add(-days(1)), DueAt: now.Add(-time.Second)}, false, false, episode.LifecycleExpired},
		{"commitment dated before it was stored", episode.Episode{Kind: episode.KindCommitment, CreatedAt: now.Add(-days(5)), DueAt: now.Add(-days(400))}, false, false, ""},
		{"fact at 90 days", episode.Episode{Kind: episode.KindFact, Importance: 0.2, CreatedAt: now.Add(-FactArchiveAge)}, false, false, ""},
		{"fact past 90 days", episode.Episode{Kind: episode.KindFact, Importance: 0.2, CreatedAt: now.Add(-FactArchiveAge - time.Second)}, false, false, episode.LifecycleArchived},
		{"fact accessed lately", episode.Episode{Kind: episode.KindFact, Importance: 0.2, CreatedAt: now.Add(-days(200)), LastAccessedAt: now.Add(-days(10))}, false, false, ""},
		{"fact accessed often", episode.Episode{Kind: episode.KindFact, Importance: 0.2, CreatedAt: now.Add(-days(200)), AccessCount: 3}, false, false, ""},
		{"fact at the importance bar", episode.Episode{Kind: episode.KindFact, Importance: FactArchiveImportance, CreatedAt: now.Add(-days(200))}, false, false, ""},
		{"fact that is evidence", episode.Episode{Kind: episode.KindFact, Importance: 0.1, CreatedAt: now.Add(-days(200))}, false, true, ""},
		{"a preference never ends", episode.Episode{Kind: episode.KindPreference, Importance: 0.1, CreatedAt: now.Add(-days(900))}, false, false, ""},
	} {
		if got, _ := EpisodeEnd(&tt.e, now, DefaultCommitmentTTL, tt.confirmed, tt.evidence); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Beliefs formed in a cycle link to their related (not duplicate) active
// neighbours, both ways, at most MaxLinks each; unrelated ones stay apart.
func TestBeliefsLink(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	subjects := []string{"pytest fixtures", "pytest markers", "pytest plugins", "tabs"}
	for i, s := range subjects {
		for k := range 3 {
			f.add(t0.Add(hours(i*3+k)), "I prefer "+s, pref(s))
		}
	}
	f.run(t0.Add(hours(20)))
	bs := f.beliefs(belief.StatusActive)
	if len(bs) != len(subjects) {
		t.Fatalf("beliefs: %v", statements(bs))
	}
	bySubject := map[string]string{}
	for _, b := range bs {
		bySubject[b.Subject] = b.ID
	}
	linked := func(a, b string) bool {
		ls, err := f.db.Links(ctx, bySubject[a])
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.To == bySubject[b] {
				if l.Similarity < LexicalBand.Low || l.Similarity > LexicalBand.High {
					t.Errorf("link %s → %s at %.2f, outside the band", a, b, l.Similarity)
				}
				return true
			}
		}
		return false
	}
	for _, p := range [][2]string{{"pytest fixtures", "pytest markers"}, {"pytest fixtures", "pytest plugins"},
		{"pytest markers", "pytest plugins"}} {
		if !linked(p[0], p[1]) || !linked(p[1], p[0]) {
			t.Errorf("%q and %q are not linked both ways", p[0], p[1])
		}
	}
	for _, s := range subjects[:3] {
		if linked("tabs", s) || linked(s, "tabs") {
			t.Errorf("tabs is linked to %q", s)
		}
	}
	if probs, err := f.db.LinkProblems(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("graph: %v %v", probs, err)
	}
}
