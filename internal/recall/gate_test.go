package recall

import (
	"math/rand/v2"
	"testing"
)

func TestStoodOut(t *testing.T) {
	w := DefaultWeights
	for _, c := range []struct {
		name string
		c    Candidate
		want bool
	}{
		{"stated episode past the gap", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.40, DenseGap: 0.07}, true},
		{"stated episode under the gap", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.40, DenseGap: 0.05}, false},
		{"stated episode under the least cosine", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.15, DenseGap: 0.2}, false},
		{"ordinary episode: never by meaning alone", Candidate{Item: Item{Kind: KindEpisode}, HasDenseCos: true, Dense: 0.6, DenseGap: 0.3}, false},
		{"belief past its own gap", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Dense: 0.5, DenseGap: 0.11}, true},
		{"belief past the episodes' gap only", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Dense: 0.5, DenseGap: 0.08}, false},
		{"no dense cosine", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, Dense: 0.9, DenseGap: 0.5}, false},
	} {
		if got := stoodOut(c.c, w); got != c.want {
			t.Errorf("%s: stoodOut=%v", c.name, got)
		}
		if got := denseRelevance(c.c, w) >= DefaultMinRelevance; got != c.want {
			t.Errorf("%s: dense relevance %.2f", c.name, denseRelevance(c.c, w))
		}
	}
}

func TestStated(t *testing.T) {
	for _, c := range []struct {
		typ, ctx string
		want     bool
	}{
		{"event", "User: I avoid gluten, it makes me sick.\n\nAssistant: Got it.", true},
		{"event", "User: my cat is diabetic and needs insulin twice a day\n\nAssistant: Noted.", true},
		{"event", "User: we never deploy on Fridays\n\nAssistant: Understood.", true},
		{"preference", "User: use pnpm here\n\nAssistant: Will do.", true},
		{"event", "User: do I prefer tabs?\n\nAssistant: You said spaces.", false},
		{"event", "User: rename the helper to parseDate\n\nAssistant: Renamed.", false},
		{"event", "User: the build is broken again\n\nAssistant: Fixed the import.", false},
	} {
		if got := Stated(c.typ, c.ctx); got != c.want {
			t.Errorf("Stated(%q, %q) = %v", c.typ, c.ctx, got)
		}
	}
}

func TestDropRestatedBeliefs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	v := randUnit(r, 384)
	other := randUnit(r, 384)
	belief := Candidate{Item: Item{Kind: KindBelief, ID: "bl_1", Dense: near(r, v, 0.9)}}
	unrelated := Candidate{Item: Item{Kind: KindBelief, ID: "bl_2", Dense: other}}
	stated := Candidate{Item: Item{Kind: KindEpisode, ID: "ep_1", Stated: true, Dense: v}}
	plain := Candidate{Item: Item{Kind: KindEpisode, ID: "ep_2", Dense: near(r, v, 0.95)}}
	ids := func(cs []Candidate) (s []string) {
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return s
	}
	got := ids(dropRestatedBeliefs([]Candidate{belief, unrelated, stated}))
	if len(got) != 2 || got[0] != "bl_2" || got[1] != "ep_1" {
		t.Errorf("with the stated episode: %v", got)
	}
	// An episode that is not a statement does not replace a belief.
	got = ids(dropRestatedBeliefs([]Candidate{belief, plain}))
	if len(got) != 2 {
		t.Errorf("with an ordinary episode: %v", got)
	}
}
