package recall

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

func TestExpandLinks(t *testing.T) {
	home := t.TempDir()
	links := map[string][]Linked{
		"bl_a": {{ID: "bl_n1", Text: "User prefers pytest markers.", Confidence: 0.8}, {ID: "bl_b", Text: "already there"},
			{ID: "bl_other", Text: "another project's", ProjectPath: "/other"}, {ID: "bl_mine", Text: "this project's", ProjectPath: "/p"}},
		"bl_b": {{ID: "bl_n1", Text: "User prefers pytest markers."}, {ID: "bl_n2", Text: "User prefers pytest plugins."}},
		"bl_d": {{ID: "bl_n3", Text: "linked to the fourth belief only"}},
	}
	if err := SaveGraph(home, Graph{Links: links}); err != nil {
		t.Fatal(err)
	}
	if got := LoadGraph(home).linksOf("bl_a"); len(got) != 4 || got[0].Text != "User prefers pytest markers." || got[3].ProjectPath != "/p" {
		t.Fatalf("round trip: %+v", got)
	}
	res := Result{Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_a"}, Score: 1}, {Item: Item{Kind: KindBelief, ID: "bl_b"}, Score: 0.5},
		{Item: Item{Kind: KindBelief, ID: "bl_c"}, Score: 0.45}, {Item: Item{Kind: KindBelief, ID: "bl_d"}, Score: 0.4}}}
	ExpandLinks(&res, LoadGraph(home), "/p")
	var ids []string
	score := map[string]float64{}
	for _, c := range res.Beliefs {
		ids = append(ids, c.ID)
		score[c.ID] = c.Score
	}
	// bl_n1 comes from bl_a (the first parent) at 0.8 × 1; bl_n2 from bl_b
	// at 0.8 × 0.5; bl_d is no top-3 parent; another project's stays out.
	want := []string{"bl_a", "bl_n1", "bl_mine", "bl_b", "bl_c", "bl_d", "bl_n2"} // a tie keeps the found one first
	if !slices.Equal(ids, want) || score["bl_n1"] != 0.8 || score["bl_n2"] != 0.4 {
		t.Fatalf("beliefs %v scores %v, want %v", ids, score, want)
	}
	if res.Beliefs[1].Linked != "bl_a" || res.Beliefs[1].Text != "User prefers pytest markers." {
		t.Fatalf("neighbour: %+v", res.Beliefs[1])
	}
	// No beliefs, or no file: nothing changes.
	empty := Result{}
	ExpandLinks(&empty, LoadGraph(home), "/p")
	if len(empty.Beliefs) != 0 {
		t.Fatal("neighbours without a parent")
	}
	if g := LoadGraph(filepath.Join(home, "none")); len(g.data) != 0 {
		t.Fatal("a missing file read as a graph")
	}
}

func TestBoostSubjects(t *testing.T) {
	graph := func(subjects map[string][]string) *GraphFile {
		home := t.TempDir()
		if err := SaveGraph(home, Graph{Subjects: subjects}); err != nil {
			t.Fatal(err)
		}
		return LoadGraph(home)
	}
	subjects := graph(map[string][]string{"fly.io": {"bl_f", "ep_2"}, "pytest fixture": {"ep_3"}, "bun": {"bl_b"}})
	mk := func() Result {
		return Result{
			Beliefs:  []Candidate{{Item: Item{ID: "bl_x"}, Score: 1}, {Item: Item{ID: "bl_f"}, Score: 0.9}, {Item: Item{ID: "bl_b"}, Score: 0.5}},
			Episodes: []Candidate{{Item: Item{ID: "ep_1"}, Score: 0.5}, {Item: Item{ID: "ep_2"}, Score: 0.45}, {Item: Item{ID: "ep_3"}, Score: 0.2}},
		}
	}
	ids := func(cs []Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	res := mk()
	BoostSubjects(&res, subjects, "Why does the deploy to Fly.io fail? Our PYTEST fixtures pass.")
	if got := ids(res.Beliefs); !slices.Equal(got, []string{"bl_f", "bl_x", "bl_b"}) || !closeTo(res.Beliefs[0].Score, 0.9*1.15) {
		t.Fatalf("beliefs %v (%v)", got, res.Beliefs[0].Score)
	}
	if got := ids(res.Episodes); !slices.Equal(got, []string{"ep_2", "ep_1", "ep_3"}) || !closeTo(res.Episodes[2].Score, 0.2*1.15) {
		t.Fatalf("episodes %v", got)
	}
	// Bounded: a memory about two named subjects is boosted once.
	res = mk()
	BoostSubjects(&res, graph(map[string][]string{"fly.io": {"ep_2"}, "deploy": {"ep_2"}}), "deploy to fly.io")
	if res.Episodes[0].ID != "ep_2" || !closeTo(res.Episodes[0].Score, 0.45*1.15) {
		t.Fatalf("boosted twice: %+v", res.Episodes[0])
	}
	// Part of a word is no mention: "bundle" does not name bun.
	res = mk()
	BoostSubjects(&res, subjects, "the bundle is too big")
	if res.Beliefs[2].Score != 0.5 {
		t.Fatalf("bun boosted by bundle: %+v", res.Beliefs)
	}
	if SubjectKey("  Fly.io. ") != "fly.io" || SubjectKey("Go") != "" || SubjectKey("Pytest   Fixtures") != "pytest fixture" {
		t.Fatalf("keys: %q %q %q", SubjectKey("  Fly.io. "), SubjectKey("Go"), SubjectKey("Pytest   Fixtures"))
	}
}

func closeTo(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// BenchmarkGraphAtPrompt is what the prompt hook adds for links and
// subjects: reading the graph file of a store with 2,000 beliefs (3 links
// each, a subject each with 10 memories), boosting and expanding.
func BenchmarkGraphAtPrompt(b *testing.B) {
	home := b.TempDir()
	g := Graph{Links: map[string][]Linked{}, Subjects: map[string][]string{}}
	for i := range 2000 {
		id := fmt.Sprintf("bl_%012x", i)
		for k := range 3 {
			g.Links[id] = append(g.Links[id], Linked{ID: fmt.Sprintf("bl_%012x", (i+k+1)%2000),
				Text: "User prefers some tool for some purpose in this project.", Confidence: 0.8, Evidence: 5})
		}
		var ids []string
		for k := range 10 {
			ids = append(ids, fmt.Sprintf("ep_%012x", i*10+k))
		}
		g.Subjects[fmt.Sprintf("tool%d", i)] = ids
	}
	if err := SaveGraph(home, g); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res := Result{Beliefs: []Candidate{{Item: Item{ID: "bl_000000000001"}, Score: 1}},
			Episodes: []Candidate{{Item: Item{ID: "ep_000000000011"}, Score: 0.5}}}
		gr := LoadGraph(home)
		BoostSubjects(&res, gr, "does tool1 work with tool7 here?")
		ExpandLinks(&res, gr, "")
		if len(res.Beliefs) != 4 {
			b.Fatalf("beliefs %d", len(res.Beliefs))
		}
	}
}
