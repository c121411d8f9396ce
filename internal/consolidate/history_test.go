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

func (f *fixture) history(id string) []store.Event {
	f.tb.Helper()
	evs, err := f.db.History(context.Background(), id)
	if err != nil {
		f.tb.Fatal(err)
	}
	return evs
}

func actions(evs []store.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Action
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestHistoryOfARevision: a belief formed from three episodes, reinforced,
// contradicted ten times and revised tells each step, with the episode
// that caused it and its confidence before and after; its successor's
// history begins where its own ends.
func TestHistoryOfARevision(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(4)))
	reinforcer := f.add(t0.Add(hours(5)), "I prefer bun", pref("bun"))
	f.run(t0.Add(hours(6)))
	old := f.only(belief.StatusActive)
	var con []string
	for i := range 10 {
		con = append(con, f.add(t0.Add(hours(10+i)), fmt.Sprintf("stop using bun, it broke again (%d)", i), avoid("bun")))
	}
	f.run(t0.Add(hours(30)))
	cur := f.only(belief.StatusActive)

	evs := f.history(old.ID)
	want := slices.Concat([]string{store.ActionFormed, store.ActionReinforced}, repeat(store.ActionContradicted, 10), []string{store.ActionRevised})
	if !slices.Equal(actions(evs), want) {
		t.Fatalf("history of %s: %v, want %v", old.ID, actions(evs), want)
	}
	formed := evs[0]
	if formed.Cause != "consolidate" || formed.After["statement"] != "User prefers bun." || formed.After["status"] != "active" ||
		formed.After["confidence"] != 0.8 || !formed.At.Equal(t0.Add(hours(4))) {
		t.Fatalf("formed: %+v", formed)
	}
	if r := evs[1]; r.Cause != reinforcer || r.Before["confidence"] != 0.8 || r.After["confidence"] != 0.833 ||
		r.Before["evidence"] != float64(3) || r.After["evidence"] != float64(4) {
		t.Fatalf("reinforced: %+v", r)
	}
	prev := 0.833
	for i, ev := range evs[2:12] {
		c := ev.After["confidence"].(float64)
		if ev.Cause != con[i] || ev.Before["confidence"] != prev || c >= prev {
			t.Fatalf("contradiction %d: %+v (confidence before %v)", i, ev, prev)
		}
		prev = c
	}
	rev := evs[12]
	if rev.Before["status"] != "active" || rev.After["status"] != "revised" || rev.After["child"] != cur.ID ||
		rev.Before["statement"] != "User prefers bun." || rev.Detail == "" {
		t.Fatalf("revised: %+v", rev)
	}
	next := f.history(cur.ID)
	if len(next) != 1 || next[0].Action != store.ActionFormed || next[0].Cause != old.ID ||
		next[0].After["statement"] != "User avoids bun." || next[0].Detail != "revision of "+old.ID {
		t.Fatalf("history of the revision %s: %+v", cur.ID, next)
	}
}

// TestHistoryOfGates: split, merge and archive each leave their event on
// every belief they change.
func TestHistoryOfGates(t *testing.T) {
	t.Run("split", func(t *testing.T) {
		f := newFixture(t)
		var sup, con, par []string
		for i := range 4 {
			sup = append(sup, f.add(t0.Add(hours(i)), "use bun for scripts", pref("bun")))
		}
		for i := range 3 {
			con = append(con, f.add(t0.Add(hours(10+i)), "bun is not for production", avoidFor("bun", "production")))
		}
		for i := range 2 {
			par = append(par, f.add(t0.Add(hours(20+i)), "no bun for production deploys", avoidFor("bun", "production")))
		}
		b := belief.Belief{ID: "bl_00000000000a", Statement: "User prefers bun.", Subject: "bun", Predicate: PredPrefers,
			Scope: episode.ScopeGlobal, Alpha: 5, Beta: 4, Supporting: sup, Contradicting: con, Partial: par,
			Status: belief.StatusActive, EvidenceCount: 9, Stability: 1, PeakConfidence: 0.8, CreatedAt: t0, UpdatedAt: t0,
			LastReinforcedAt: t0}
		if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{b}); err != nil {
			t.Fatal(err)
		}
		f.run(t0.Add(hours(30)))
		parent := f.only(belief.StatusSplit)
		evs := f.history(parent.ID)
		if len(evs) != 1 || evs[0].Action != store.ActionSplit || evs[0].Before["status"] != "active" ||
			evs[0].After["status"] != "split" || fmt.Sprint(evs[0].After["children"]) != fmt.Sprint(parent.Children) {
			t.Fatalf("history of the split belief: %+v", evs)
		}
		for _, k := range parent.Children {
			kh := f.history(k)
			if len(kh) != 1 || kh[0].Action != store.ActionFormed || kh[0].Cause != parent.ID {
				t.Fatalf("history of child %s: %+v", k, kh)
			}
		}
	})
	t.Run("merge", func(t *testing.T) {
		f := newFixture(t)
		vs, _ := f.emb.Embed(context.Background(), []string{"User prefers table-driven tests in Go"})
		old := t0.Add(-30 * 24 * hours(1))
		e1, e2, e3, e4 := f.add(old, "a"), f.add(old, "b"), f.add(old, "c"), f.add(old, "d")
		mk := func(id, statement string, sup []string) belief.Belief {
			return belief.Belief{ID: id, Statement: statement, Subject: "table-driven tests", Predicate: "likes writing",
				Scope: episode.ScopeGlobal, Alpha: 1 + float64(len(sup)), Beta: 1, Supporting: sup, Status: belief.StatusActive,
				EvidenceCount: len(sup), Stability: 1, PeakConfidence: 0.8, Embedding: vs[0], Embedder: f.emb.Name(),
				CreatedAt: old, UpdatedAt: old, LastReinforcedAt: old}
		}
		a := mk("bl_00000000000a", "User prefers table-driven tests in Go", []string{e1, e2, e3})
		b := mk("bl_00000000000b", "User likes table driven tests for Go code", []string{e3, e4})
		if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{a, b}); err != nil {
			t.Fatal(err)
		}
		if st := f.run(t0); st.Merged != 1 {
			t.Fatalf("no merge: %+v", st)
		}
		ka, kb := f.history(a.ID), f.history(b.ID)
		if len(ka) != 1 || ka[0].Action != store.ActionMerged || ka[0].Cause != b.ID || ka[0].Before["evidence"] != float64(3) ||
			ka[0].After["evidence"] != float64(4) {
			t.Fatalf("history of the survivor: %+v", ka)
		}
		if len(kb) != 1 || kb[0].Action != store.ActionMerged || kb[0].Cause != a.ID || kb[0].After["status"] != "merged" {
			t.Fatalf("history of the merged belief: %+v", kb)
		}
		for _, ev := range ka {
			if _, ok := ev.After["statement"]; ok {
				t.Fatalf("the survivor's event holds a statement: %+v", ev)
			}
		}
	})
	t.Run("archive", func(t *testing.T) {
		f := newFixture(t)
		weak := belief.Belief{ID: "bl_0000000000a1", Statement: "User prefers tabs.", Subject: "tabs", Predicate: PredPrefers,
			Scope: episode.ScopeGlobal, Alpha: 1, Beta: 4, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1,
			PeakConfidence: 0.5, CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0}
		if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{weak}); err != nil {
			t.Fatal(err)
		}
		f.run(t0)
		evs := f.history(weak.ID)
		if len(evs) != 1 || evs[0].Action != store.ActionArchived || evs[0].Cause != "consolidate" ||
			evs[0].After["status"] != "archived" || evs[0].Detail != "confidence 0.20 below 0.30" {
			t.Fatalf("history of the archived belief: %+v", evs)
		}
	})
}

// TestHistoryOfForgottenBelief: forgetting a belief leaves one event with
// no values, and a cycle that still held it in memory writes none of its
// own events back.
func TestHistoryOfForgottenBelief(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(4)))
	b := f.only(belief.StatusActive)
	f.add(t0.Add(hours(5)), "bun", pref("bun"))
	j := &forgettingAll{db: f.db, id: b.ID}
	f.run(t0.Add(hours(6)), func(c *Consolidator) { c.Judge = j })
	evs := f.history(b.ID)
	if len(evs) != 1 || evs[0].Action != store.ActionForgotten || evs[0].Cause != "forget" || len(evs[0].Before) != 0 ||
		len(evs[0].After) != 0 || evs[0].Detail != "" {
		t.Fatalf("history of a forgotten belief: %+v", evs)
	}
}

// forgettingAll forgets a belief (store.Forget, as the forget command
// does) the moment it is first consulted.
type forgettingAll struct {
	Local
	db   *store.DB
	id   string
	done bool
}

func (j *forgettingAll) Name() string { return "forgetting" }

func (j *forgettingAll) Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (Relation, error) {
	if !j.done {
		j.done = true
		if err := j.db.Forget(ctx, nil, []string{j.id}); err != nil {
			return "", err
		}
	}
	return Local{}.Classify(ctx, b, e)
}
