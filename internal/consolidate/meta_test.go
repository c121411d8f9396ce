package consolidate

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// projectAvoids imports a project belief "Project pN avoids testify." with
// three supporting episodes of that project.
func (f *fixture) projectAvoids(n int, subject string) belief.Belief {
	f.tb.Helper()
	path := fmt.Sprintf("/src/p%d", n)
	var sup []string
	for i := range 3 {
		sup = append(sup, f.addIn(t0.Add(hours(i)), episode.ScopeProject, path, fmt.Sprintf("no %s in p%d (%d)", subject, n, i),
			episode.Signal{Kind: episode.SignalAvoid, Subject: subject, Polarity: -1, Text: "no " + subject}))
	}
	b := belief.Belief{ID: fmt.Sprintf("bl_%012x", 0xb00+n), Statement: Render(episode.ScopeProject, fmt.Sprintf("p%d", n), subject, PredAvoids, ""),
		Subject: subject, Predicate: PredAvoids, Scope: episode.ScopeProject, Project: fmt.Sprintf("p%d", n), ProjectPath: path,
		Alpha: 4, Beta: 1, Supporting: sup, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1, PeakConfidence: 0.8,
		CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0, Kind: episode.KindPreference}
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{b}); err != nil {
		f.tb.Fatal(err)
	}
	return b
}

func (f *fixture) metas() []belief.Belief {
	var out []belief.Belief
	for _, b := range f.beliefs("") {
		if len(b.Sources) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// The same preference held in MetaProjects projects becomes a principle of
// the user's, global, linked to its sources, with their evidence; in fewer
// projects, or when a global belief says it already, none.
func TestMetaBeliefThresholds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a, b := f.projectAvoids(1, "testify"), f.projectAvoids(2, "testify")
	f.run(t0.Add(hours(10)))
	if ms := f.metas(); len(ms) != 0 {
		t.Fatalf("a principle from 2 projects: %v", statements(ms))
	}
	c := f.projectAvoids(3, "testify")
	st := f.run(t0.Add(hours(11)))
	ms := f.metas()
	if st.Metas != 1 || len(ms) != 1 {
		t.Fatalf("3 projects: %+v %v", st, statements(f.beliefs("")))
	}
	m := ms[0]
	if m.Statement != "User avoids testify." || m.Scope != episode.ScopeGlobal || m.Kind != episode.KindPrinciple ||
		!slices.Equal(m.Sources, []string{a.ID, b.ID, c.ID}) || m.EvidenceCount != 9 || m.Alpha != 10 || m.Beta != 1 ||
		len(m.Supporting) != 9 {
		t.Fatalf("meta-belief: %v sources %v kind %q supporting %d", statements(ms), m.Sources, m.Kind, len(m.Supporting))
	}
	links, _ := f.db.Links(ctx, m.ID)
	if len(links) != 3 {
		t.Fatalf("links of the meta-belief: %+v", links)
	}
	for _, src := range []string{a.ID, b.ID, c.ID} {
		back, _ := f.db.Links(ctx, src)
		if !slices.ContainsFunc(back, func(l store.Link) bool { return l.To == m.ID }) {
			t.Fatalf("%s is not linked back to the meta-belief: %+v", src, back)
		}
	}
	// Another cycle states it once.
	if st := f.run(t0.Add(hours(12))); st.Metas != 0 || len(f.metas()) != 1 {
		t.Fatalf("stated twice: %+v", st)
	}

	// A global belief of the same claim: no meta-belief beside it.
	g := newFixture(t)
	for i := 1; i <= 3; i++ {
		g.projectAvoids(i, "lodash")
	}
	glob := belief.Belief{ID: "bl_00000000c10b", Statement: "User avoids lodash.", Subject: "lodash", Predicate: PredAvoids,
		Scope: episode.ScopeGlobal, Alpha: 4, Beta: 1, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1,
		PeakConfidence: 0.8, CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0}
	if err := g.db.ImportBeliefs(ctx, []belief.Belief{glob}); err != nil {
		t.Fatal(err)
	}
	if st := g.run(t0.Add(hours(10))); st.Metas != 0 {
		t.Fatalf("a meta-belief beside the global belief: %v", statements(g.beliefs("")))
	}
}

// When a source is revised, the meta-belief is re-checked: with fewer than
// MetaProjects agreeing sources it is archived, and its history says why.
func TestMetaBeliefRecheckedWhenASourceIsRevised(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var srcs []belief.Belief
	for i := 1; i <= 3; i++ {
		srcs = append(srcs, f.projectAvoids(i, "testify"))
	}
	f.run(t0.Add(hours(10)))
	m := f.metas()[0]
	// The third project's belief is revised (as the revision gate or a
	// correction does: status revised, a new belief its child).
	err := f.db.Beliefs(ctx, func(t *store.BeliefTx) error {
		b, err := t.Get(srcs[2].ID)
		if err != nil {
			return err
		}
		b.Status, b.Timeframe, b.UpdatedAt = belief.StatusRevised, belief.TimePast, t0.Add(hours(11))
		return t.UpdateEvidence(&b)
	})
	if err != nil {
		t.Fatal(err)
	}
	f.run(t0.Add(hours(12)))
	got, _ := f.db.GetBelief(ctx, m.ID)
	if got.Status != belief.StatusArchived {
		t.Fatalf("meta-belief after a source was revised: %s", got.Status)
	}
	evs := f.history(m.ID)
	last := evs[len(evs)-1]
	if last.Action != store.ActionArchived || last.Detail != "re-checked: 2 of its sources still agree ("+srcs[2].ID+" changed or left)" {
		t.Fatalf("history: %+v", evs)
	}
	if probs, _ := f.db.LinkProblems(ctx); len(probs) > 0 {
		t.Fatalf("graph: %v", probs)
	}
}
