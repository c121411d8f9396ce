package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestStoodOut(t *testing.T) {
	w := DefaultSettings.Weights
	for _, c := range []struct {
		name string
		c    Candidate
		want bool
	}{
		{"stated episode past the gap", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.40, DenseGap: 0.07}, true},
		{"stated episode under the gap", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.40, DenseGap: 0.065}, false},
		{"stated episode under the least cosine", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.27, DenseGap: 0.2}, false},
		{"stated episode at the least cosine", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, HasDenseCos: true, Dense: 0.29, DenseGap: 0.2}, true},
		{"ordinary episode: never by meaning alone", Candidate{Item: Item{Kind: KindEpisode}, HasDenseCos: true, Dense: 0.6, DenseGap: 0.3}, false},
		{"belief past its own gap", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Dense: 0.5, DenseGap: 0.14}, true},
		{"belief just under its own gap", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Dense: 0.5, DenseGap: 0.12}, false},
		{"belief past the episodes' gap only", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Dense: 0.5, DenseGap: 0.08}, false},
		{"no dense cosine", Candidate{Item: Item{Kind: KindEpisode, Stated: true}, Dense: 0.9, DenseGap: 0.5}, false},
	} {
		if got := stoodOut(c.c, w); got != c.want {
			t.Errorf("%s: stoodOut=%v", c.name, got)
		}
		if got := denseRelevance(c.c, w) >= DefaultSettings.MinRelevance; got != c.want {
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
	got := ids(dropRestatedBeliefs([]Candidate{belief, unrelated, stated}, DefaultSettings.RestatedCos))
	if len(got) != 2 || got[0] != "bl_2" || got[1] != "ep_1" {
		t.Errorf("with the stated episode: %v", got)
	}
	// An episode that is not a statement does not replace a belief.
	got = ids(dropRestatedBeliefs([]Candidate{belief, plain}, DefaultSettings.RestatedCos))
	if len(got) != 2 {
		t.Errorf("with an ordinary episode: %v", got)
	}
}

func TestOpensAndNearByWords(t *testing.T) {
	r := New("", nil)
	ep := func(cov, dense float32) Candidate {
		return Candidate{Item: Item{Kind: KindEpisode}, HasDenseCos: true, Coverage: cov, Dense: dense}
	}
	for _, c := range []struct {
		name        string
		c           Candidate
		opens, near bool
	}{
		{"at OpenCoverage, past OpenScore", ep(0.3, 0.5), true, true},
		{"past both", ep(0.6, 0.45), true, true},
		{"coverage under OpenCoverage, however near", ep(0.29, 0.9), false, true},
		{"coverage plus cosine under OpenScore", ep(0.45, 0.28), false, true},
		{"at WordScore only", ep(0.4, 0.3), false, true},
		{"under WordScore", ep(0.5, 0.19), false, false},
		// Not re-embedded yet: by coverage alone, as before the sentence
		// embedder.
		{"no dense cosine, at LexicalOpenCoverage", Candidate{Item: Item{Kind: KindEpisode}, Coverage: 0.4}, true, true},
		{"no dense cosine, under it", Candidate{Item: Item{Kind: KindEpisode}, Coverage: 0.39}, false, true},
		{"a belief opens nothing", Candidate{Item: Item{Kind: KindBelief}, HasDenseCos: true, Coverage: 1, Dense: 0.9}, false, true},
	} {
		if got := r.opens(c.c); got != c.opens {
			t.Errorf("%s: opens=%v", c.name, got)
		}
		if got := r.nearByWords(c.c); got != c.near {
			t.Errorf("%s: nearByWords=%v", c.name, got)
		}
	}
}

func TestDropTrailing(t *testing.T) {
	mk := func(kind byte, id string, score float64) Candidate {
		return Candidate{Item: Item{Kind: kind, ID: id}, Score: score}
	}
	ranked := func() []Candidate {
		return []Candidate{mk(KindBelief, "bl_1", 0.2), mk(KindEpisode, "ep_1", 1.0), mk(KindEpisode, "ep_2", 0.6),
			mk(KindBelief, "bl_2", 0.1), mk(KindEpisode, "ep_3", 0.59)}
	}
	ids := func(cs []Candidate) (s []string) {
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return s
	}
	// At the share an episode stays, under it it goes; beliefs always stay.
	if got := ids(dropTrailing(ranked(), 0.6)); !slices.Equal(got, []string{"bl_1", "ep_1", "ep_2", "bl_2"}) {
		t.Errorf("share 0.6: %v", got)
	}
	if got := ids(dropTrailing(ranked(), 0)); len(got) != 5 {
		t.Errorf("share 0 must keep all: %v", got)
	}
}

// episodesNear returns a maker of global episodes, an hour apart, whose
// dense vectors have the given cosine with q, and five coding memories far
// from q that share none of the gate tests' words.
func episodesNear(r *rand.Rand, q []float32) (func(text string, cos float64) Item, []Item) {
	seq := int64(0)
	mk := func(text string, cos float64) Item {
		seq++
		return Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%012d", seq), Seq: seq, Scope: "global", Text: text,
			At: now.Add(-time.Duration(seq) * time.Hour), Dense: near(r, q, cos)}
	}
	return mk, []Item{mk("renamed the parseDate helper", 0.05), mk("cached the Go modules in CI", 0.08),
		mk("bumped node to version 22", 0.02), mk("fixed the flaky login test", 0.06), mk("added a dark mode toggle", 0.04)}
}

// askerOn writes items into a search index and returns a function that
// recalls a prompt from it with the prompt's dense vector q.
func askerOn(t *testing.T, items []Item, q []float32) func(prompt string) Result {
	t.Helper()
	ix := writeIndex(t, t.TempDir(), &File{Embedder: "local-v1-256", Dense: testDense, Items: items})
	t.Cleanup(func() { ix.Close() })
	return func(prompt string) Result {
		rc := New(t.TempDir(), ix)
		rc.Dense = fixedDense(q)
		return rc.Recall(context.Background(), Query{Text: prompt, Now: now})
	}
}

// episodeIDs lists the ids of a result's episodes, in order.
func episodeIDs(res Result) (s []string) {
	for _, c := range res.Episodes {
		s = append(s, c.ID)
	}
	return s
}

// fixedDense embeds every prompt as one vector.
type fixedDense []float32

func (fixedDense) Name() string { return testDense }
func (d fixedDense) EmbedQuery(context.Context, string) ([]float32, error) {
	return d, nil
}

// The gate through Recall, on a search index with dense vectors: a prompt
// whose words the store shares only with memories far from it in meaning
// gets nothing; when one memory holds its words and is near it, that
// memory passes, and another that shares words but is far in meaning does
// not; trailing episodes that score much less than the best are dropped.
func TestGateByWordsAndMeaning(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	q := randUnit(r, 384)
	mk, unrelated := episodesNear(r, q)
	playlist := mk("road trip playlist ideas", 0.12)   // half the prompt's words, far in meaning
	budget := mk("road trip budget spreadsheet", 0.40) // half its words, near enough
	snacks := mk("snacks to pack for the road trip", 0.60)
	const prompt = "road trip snacks to pack?"
	run := func(keep float64, items ...Item) Result {
		t.Helper()
		ix := writeIndex(t, t.TempDir(), &File{Embedder: "local-v1-256", Dense: testDense, Items: items})
		t.Cleanup(func() { ix.Close() })
		rc := New(t.TempDir(), ix)
		rc.Dense = fixedDense(q)
		rc.KeepShare = keep
		return rc.Recall(context.Background(), Query{Text: prompt, Now: now})
	}
	ids := episodeIDs

	res := run(DefaultSettings.KeepShare, append(slices.Clone(unrelated), playlist)...)
	if res.Open || len(res.Episodes) != 0 {
		t.Errorf("only a far memory shares the words: open %v, episodes %v", res.Open, ids(res))
	}

	res = run(0, append(slices.Clone(unrelated), playlist, budget, snacks)...)
	if !res.Open || !slices.Equal(ids(res), []string{snacks.ID, budget.ID}) {
		for _, c := range res.Episodes {
			t.Logf("%s cov %.2f dense %.2f score %.3f", c.ID, c.Coverage, c.Dense, c.Score)
		}
		t.Fatalf("open %v, episodes %v, want the snacks then the budget memory (not the playlist)", res.Open, ids(res))
	}
	top, second := res.Episodes[0].Score, res.Episodes[1].Score
	t.Logf("scores %.3f %.3f", top, second)
	kept := run(DefaultSettings.KeepShare, append(slices.Clone(unrelated), playlist, budget, snacks)...)
	want := []string{snacks.ID}
	if second >= DefaultSettings.KeepShare*top {
		want = append(want, budget.ID)
	}
	if !slices.Equal(ids(kept), want) {
		t.Errorf("with KeepShare %.2f (scores %.3f, %.3f): %v, want %v", DefaultSettings.KeepShare, top, second, ids(kept), want)
	}

	// A store not re-embedded yet (no dense vectors): its memories pass by
	// their words as without the sentence embedder.
	var plain []Item
	for _, it := range append(slices.Clone(unrelated), playlist, snacks) {
		it.Dense = nil
		plain = append(plain, it)
	}
	res = run(DefaultSettings.KeepShare, plain...)
	if res.Dense == "" || !res.Open || len(res.Episodes) == 0 || res.Episodes[0].ID != snacks.ID {
		t.Errorf("store without dense vectors: dense %q, open %v, episodes %v", res.Dense, res.Open, ids(res))
	}
}

// With a dense cosine an episode's score is mostly relevance: the nearer
// in meaning of two equal lexical matches ranks first even when it is much
// older; freshness only breaks near ties. Without one, the blend is the
// lexical one, where freshness counts in full.
func TestRankFusesDense(t *testing.T) {
	old := Candidate{Item: Item{Kind: KindEpisode, ID: "ep_old", At: now.Add(-300 * 24 * time.Hour), Importance: 0.2},
		Coverage: 0.5, HasDenseCos: true, Dense: 0.6}
	fresh := Candidate{Item: Item{Kind: KindEpisode, ID: "ep_new", At: now, Importance: 0.9},
		Coverage: 0.5, HasDenseCos: true, Dense: 0.45}
	cs := []Candidate{fresh, old}
	Rank(cs, DefaultSettings.Weights, now)
	if cs[0].ID != "ep_old" {
		t.Errorf("with dense cosines: %s (%.3f) before %s (%.3f)", cs[0].ID, cs[0].Score, cs[1].ID, cs[1].Score)
	}
	// A near tie in meaning: the fresher, more important one first.
	tie := old
	tie.Dense = fresh.Dense
	cs = []Candidate{tie, fresh}
	Rank(cs, DefaultSettings.Weights, now)
	if cs[0].ID != "ep_new" {
		t.Errorf("equal cosines: %s before %s", cs[0].ID, cs[1].ID)
	}
	// Without dense cosines the fresh, important one wins.
	old.HasDenseCos, fresh.HasDenseCos = false, false
	cs = []Candidate{old, fresh}
	Rank(cs, DefaultSettings.Weights, now)
	if cs[0].ID != "ep_new" {
		t.Errorf("lexical only: %s before %s", cs[0].ID, cs[1].ID)
	}
}
