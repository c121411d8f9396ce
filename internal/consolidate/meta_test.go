package consolidate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/openaistub"
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
	if last.Action != store.ActionArchived || last.Detail != "re-checked: 2 of its sources still hold ("+srcs[2].ID+" changed or left)" {
		t.Fatalf("history: %+v", evs)
	}
	if probs, _ := f.db.LinkProblems(ctx); len(probs) > 0 {
		t.Fatalf("graph: %v", probs)
	}
}

// With a judge that can generalize (the LLM judge), a group of linked
// beliefs that agree only in meaning gets the principle the model states,
// asked once; when a source is revised the principle is re-checked.
func TestMetaBeliefFromTheModel(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var asked []string
	skip := false
	srv := openaistub.Start(t, openaistub.Options{Chat: func(r *openaistub.Request) openaistub.Reply {
		mu.Lock()
		defer mu.Unlock()
		if !strings.Contains(r.System(), "general principle") {
			return openaistub.Status(400, "unexpected prompt")
		}
		asked = append(asked, r.User())
		if skip {
			return openaistub.JSON(map[string]any{"skip": true, "statement": "", "subject": "", "predicate": "", "context": ""})
		}
		return openaistub.JSON(map[string]any{"skip": false, "statement": "User prefers minimal dependencies",
			"subject": "minimal dependencies", "predicate": "prefers", "context": "general"})
	}})
	j := NewLLM(llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "gpt-4.1-mini", MaxRetries: -1, Timeout: 5 * time.Second}), 5*time.Second)
	withLLM := func(c *Consolidator) { c.Judge = j }

	f := newFixture(t)
	mk := func(n int, statement, subject, pred string) belief.Belief {
		e := f.add(t0, statement)
		return belief.Belief{ID: fmt.Sprintf("bl_%012x", 0xd00+n), Statement: statement, Subject: subject, Predicate: pred,
			Scope: episode.ScopeGlobal, Alpha: 4, Beta: 1, Supporting: []string{e}, Status: belief.StatusActive, EvidenceCount: 3,
			Stability: 1, PeakConfidence: 0.8, CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0, Kind: episode.KindPreference}
	}
	bs := []belief.Belief{mk(1, "User prefers the standard library testing package.", "standard library testing", PredPrefers),
		mk(2, "User avoids testify.", "testify", PredAvoids), mk(3, "User avoids lodash.", "lodash", PredAvoids),
		mk(4, "User prefers tabs.", "tabs", PredPrefers)}
	links := []store.Link{{From: bs[0].ID, To: bs[1].ID, Similarity: 0.5, At: t0}, {From: bs[0].ID, To: bs[2].ID, Similarity: 0.45, At: t0}}
	if err := f.db.ImportAll(ctx, nil, bs, nil, links); err != nil {
		t.Fatal(err)
	}
	st := f.run(t0.Add(hours(1)), withLLM)
	ms := f.metas()
	if st.Metas != 1 || len(ms) != 1 || len(asked) != 1 {
		t.Fatalf("%+v, metas %v, asked %d", st, statements(ms), len(asked))
	}
	m := ms[0]
	if m.Statement != "User prefers minimal dependencies" || m.Kind != episode.KindPrinciple || m.Scope != episode.ScopeGlobal ||
		!slices.Equal(m.Sources, []string{bs[0].ID, bs[1].ID, bs[2].ID}) || m.EvidenceCount != 9 {
		t.Fatalf("meta-belief %v sources %v", statements(ms), m.Sources)
	}
	for _, want := range []string{bs[0].Statement, bs[1].Statement, bs[2].Statement} {
		if !strings.Contains(asked[0], want) {
			t.Fatalf("the model was not shown %q:\n%s", want, asked[0])
		}
	}
	if strings.Contains(asked[0], "tabs") {
		t.Fatalf("an unlinked belief was in the group:\n%s", asked[0])
	}
	// Not asked again.
	f.run(t0.Add(hours(2)), withLLM)
	if len(asked) != 1 || len(f.metas()) != 1 {
		t.Fatalf("asked %d times, %d metas", len(asked), len(f.metas()))
	}
	// A source revised: re-checked and archived.
	err := f.db.Beliefs(ctx, func(t *store.BeliefTx) error {
		b, err := t.Get(bs[1].ID)
		if err != nil {
			return err
		}
		b.Status, b.UpdatedAt = belief.StatusRevised, t0.Add(hours(3))
		return t.UpdateEvidence(&b)
	})
	if err != nil {
		t.Fatal(err)
	}
	f.run(t0.Add(hours(4)), withLLM)
	if got, _ := f.db.GetBelief(ctx, m.ID); got.Status != belief.StatusArchived {
		t.Fatalf("after a source was revised: %s", got.Status)
	}

	// A group the model finds no principle for is not asked again either.
	g := newFixture(t)
	if err := g.db.ImportAll(ctx, nil, bs, nil, links); err != nil {
		t.Fatal(err)
	}
	skip, asked = true, nil
	g.run(t0.Add(hours(1)), withLLM)
	g.run(t0.Add(hours(2)), withLLM)
	if len(asked) != 1 || len(g.metas()) != 0 {
		t.Fatalf("skipped group: asked %d, metas %d", len(asked), len(g.metas()))
	}
}
