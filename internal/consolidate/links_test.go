package consolidate

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
	"github.com/engram-memory/engram/internal/store"
)

// TestEvidenceReinforcesLinks: a belief that gains evidence observes its
// links to neighbours still in the band again, and the store reinforces
// them (both rows, stamped with the cycle's time); a link neither of whose
// ends gained evidence keeps decaying.
func TestEvidenceReinforcesLinks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	// Five times each, so that the beliefs are not archived as stale (see
	// StaleEvidence) when the long quiet below has passed.
	subjects := []string{"pytest fixtures", "pytest markers", "pytest plugins"}
	for i, s := range subjects {
		for k := range StaleEvidence {
			f.add(t0.Add(hours(i*StaleEvidence+k)), "I prefer "+s, pref(s))
		}
	}
	f.run(t0.Add(hours(20)))
	id := map[string]string{}
	for _, b := range f.beliefs(belief.StatusActive) {
		id[b.Subject] = b.ID
	}
	if len(id) != 3 {
		t.Fatalf("beliefs: %v", id)
	}
	edgeOf := func(a, b string) store.Link {
		t.Helper()
		var found []store.Link
		for _, p := range [][2]string{{a, b}, {b, a}} {
			ls, err := f.db.Links(ctx, id[p[0]])
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if l.To == id[p[1]] {
					found = append(found, l)
				}
			}
		}
		if len(found) != 2 || found[0].State != found[1].State {
			t.Fatalf("link %s – %s: %+v", a, b, found)
		}
		return found[0]
	}
	// Long unobserved: in the second window past the grace (the links were
	// made at the first run), two decay steps.
	later := t0.Add(hours(20) + edge.Grace + 2*edge.Window - hours(2))
	if _, err := f.db.DecayLinks(ctx, later); err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]string{{"pytest fixtures", "pytest markers"}, {"pytest fixtures", "pytest plugins"}, {"pytest markers", "pytest plugins"}} {
		if l := edgeOf(p[0], p[1]); l.Confidence != 0.8 {
			t.Fatalf("%v decayed to %v, want 0.8", p, l.Confidence)
		}
	}
	// The user speaks of fixtures again.
	sup := f.add(later, "I prefer pytest fixtures", pref("pytest fixtures"))
	now := later.Add(hours(1))
	f.run(now)
	fixtures := f.beliefs(belief.StatusActive)
	if len(fixtures) != 3 {
		t.Fatalf("beliefs after the new evidence: %v", statements(fixtures))
	}
	for _, b := range fixtures {
		if b.ID == id["pytest fixtures"] && !hasEvidence(&b, sup) {
			t.Fatalf("the fixtures belief did not gain the new episode: %+v", b.Supporting)
		}
	}
	for _, other := range []string{"pytest markers", "pytest plugins"} {
		if l := edgeOf("pytest fixtures", other); l.Confidence != 0.85 || l.ReinforcedConfidence != 0.85 || !l.ReinforcedAt.Equal(now) {
			t.Errorf("fixtures – %s after the new evidence: %+v, want 0.85 reinforced at %v", other, l.State, now)
		}
	}
	if l := edgeOf("pytest markers", "pytest plugins"); l.Confidence != 0.8 || l.ReinforcedAt.Equal(now) {
		t.Errorf("markers – plugins, whose ends gained nothing, was reinforced: %+v", l.State)
	}
	if probs, err := f.db.LinkProblems(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("graph: %v %v", probs, err)
	}
}
