package recall

import (
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
	if err := SaveLinks(home, links); err != nil {
		t.Fatal(err)
	}
	if got := LoadLinks(home); len(got) != 3 || got["bl_a"][0].Text != "User prefers pytest markers." {
		t.Fatalf("round trip: %+v", got)
	}
	res := Result{Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_a"}, Score: 1}, {Item: Item{Kind: KindBelief, ID: "bl_b"}, Score: 0.5},
		{Item: Item{Kind: KindBelief, ID: "bl_c"}, Score: 0.45}, {Item: Item{Kind: KindBelief, ID: "bl_d"}, Score: 0.4}}}
	ExpandLinks(&res, LoadLinks(home), "/p")
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
	ExpandLinks(&empty, links, "/p")
	if len(empty.Beliefs) != 0 {
		t.Fatal("neighbours without a parent")
	}
	if LoadLinks(filepath.Join(home, "none")) != nil {
		t.Fatal("a missing file read as links")
	}
}
