package recall

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestExpandLinks(t *testing.T) {
	home := t.TempDir()
	links := map[string][]Linked{
		"bl_a": {{ID: "bl_n1", Text: "User prefers pytest markers.", Confidence: 0.8, Edge: 1}, {ID: "bl_b", Text: "already there", Edge: 1},
			{ID: "bl_other", Text: "another project's", ProjectPath: "/other", Edge: 1}, {ID: "bl_mine", Text: "this project's", ProjectPath: "/p", Edge: 1}},
		"bl_b": {{ID: "bl_n1", Text: "User prefers pytest markers.", Edge: 1}, {ID: "bl_n2", Text: "User prefers pytest plugins.", Edge: 1}},
		"bl_d": {{ID: "bl_n3", Text: "linked to the fourth belief only", Edge: 1}},
	}
	if err := SaveGraph(home, Graph{Links: links}); err != nil {
		t.Fatal(err)
	}
	if got := LoadGraph(home).linksOf("bl_a"); len(got) != 4 || got[0].Text != "User prefers pytest markers." || got[3].ProjectPath != "/p" {
		t.Fatalf("round trip: %+v", got)
	}
	res := Result{Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_a"}, Score: 1}, {Item: Item{Kind: KindBelief, ID: "bl_b"}, Score: 0.5},
		{Item: Item{Kind: KindBelief, ID: "bl_c"}, Score: 0.45}, {Item: Item{Kind: KindBelief, ID: "bl_d"}, Score: 0.4}}}
	DefaultSettings.ExpandLinks(&res, LoadGraph(home), "/p")
	score := map[string]float64{}
	for _, c := range res.Beliefs {
		score[c.ID] = c.Score
	}
	// bl_n1 comes from bl_a (its best parent) at 0.8 × 1; bl_n2 from bl_b
	// at 0.8 × 0.5; bl_d is no top-3 parent; another project's stays out.
	if got := ids(res.Beliefs); !slices.Equal(slices.Sorted(slices.Values(got)), []string{"bl_a", "bl_b", "bl_c", "bl_d", "bl_mine", "bl_n1", "bl_n2"}) ||
		score["bl_n1"] != 0.8 || score["bl_n2"] != 0.4 || score["bl_mine"] != 0.8 {
		t.Fatalf("beliefs %v scores %v", got, score)
	}
	for _, c := range res.Beliefs {
		if c.Rank < c.Score {
			t.Errorf("%s ranks %v under its score %v", c.ID, c.Rank, c.Score)
		}
		if c.ID == "bl_n1" && (c.Linked != "bl_a" || c.LinkConfidence != 1 || c.Text != "User prefers pytest markers.") {
			t.Fatalf("neighbour: %+v", c)
		}
	}
	// bl_c and bl_d have no link among those read: their score is their rank.
	if !closeTo(rankOf(res, "bl_c"), 0.45) || !closeTo(rankOf(res, "bl_d"), 0.4) || res.Beliefs[0].ID != "bl_a" {
		t.Fatalf("order %v", ranks(res))
	}
	// No beliefs, or no file: nothing changes.
	empty := Result{}
	DefaultSettings.ExpandLinks(&empty, LoadGraph(home), "/p")
	if len(empty.Beliefs) != 0 {
		t.Fatal("neighbours without a parent")
	}
	if g := LoadGraph(filepath.Join(home, "none")); len(g.data) != 0 {
		t.Fatal("a missing file read as a graph")
	}
}

// TestExpandLinksWeighsByConfidence: a neighbour's score is LinkDiscount
// × its parent's × the link's confidence; a neighbour on a 0.9 link ranks
// above one on a 0.3 link; a link under edge.PruneFloor is not followed,
// one at it is.
func TestExpandLinksWeighsByConfidence(t *testing.T) {
	home := t.TempDir()
	g := Graph{Links: map[string][]Linked{"bl_p": {
		{ID: "bl_weak", Text: "weak", Edge: 0.3}, {ID: "bl_strong", Text: "strong", Edge: 0.9},
		{ID: "bl_pruned", Text: "pruned", Edge: 0.19}, {ID: "bl_edge", Text: "at the floor", Edge: 0.2},
	}}}
	if err := SaveGraph(home, g); err != nil {
		t.Fatal(err)
	}
	res := Result{Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_p"}, Score: 1}, {Item: Item{Kind: KindBelief, ID: "bl_q"}, Score: 0.5}}}
	DefaultSettings.ExpandLinks(&res, LoadGraph(home), "")
	got := ids(res.Beliefs)
	if slices.Contains(got, "bl_pruned") || !slices.Contains(got, "bl_edge") {
		t.Fatalf("pruning: %v", got)
	}
	if i, j := slices.Index(got, "bl_strong"), slices.Index(got, "bl_weak"); i < 0 || j < 0 || i > j {
		t.Fatalf("the 0.9 neighbour does not rank above the 0.3 one: %v", ranks(res))
	}
	want := map[string]float64{"bl_strong": 0.8 * 0.9, "bl_weak": 0.8 * 0.3, "bl_edge": 0.8 * 0.2}
	for _, c := range res.Beliefs {
		if w, ok := want[c.ID]; ok && (math.Abs(c.Score-w) > 1e-6 || c.LinkConfidence != float32(g.Links["bl_p"][slices.IndexFunc(g.Links["bl_p"],
			func(l Linked) bool { return l.ID == c.ID })].Edge)) {
			t.Errorf("%s: score %v (edge %v), want %v", c.ID, c.Score, c.LinkConfidence, w)
		}
	}
}

// TestPageRankRefinesTheOrder: on a hand-built graph, the order is the one
// the fixed point of personalised PageRank gives (solved here exactly, by
// elimination, not by iterating), each rank floored at its score. A, B and
// C were found; D too, with no link; X hangs from A on a 0.9 link, Z on a
// 0.3 one; Y is linked to A, B and C (0.5 each). Y, a bridge between three
// found beliefs, rises from sixth to second; B and C keep their scores
// and their order.
func TestPageRankRefinesTheOrder(t *testing.T) {
	home := t.TempDir()
	g := Graph{Links: map[string][]Linked{
		"bl_A": {{ID: "bl_X", Edge: 0.9}, {ID: "bl_Y", Edge: 0.5}, {ID: "bl_Z", Edge: 0.3}},
		"bl_B": {{ID: "bl_Y", Edge: 0.5}},
		"bl_C": {{ID: "bl_Y", Edge: 0.5}},
	}}
	if err := SaveGraph(home, g); err != nil {
		t.Fatal(err)
	}
	found := []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_A"}, Score: 1}, {Item: Item{Kind: KindBelief, ID: "bl_B"}, Score: 0.9},
		{Item: Item{Kind: KindBelief, ID: "bl_C"}, Score: 0.85}, {Item: Item{Kind: KindBelief, ID: "bl_D"}, Score: 0.6}}
	res := Result{Beliefs: slices.Clone(found)}
	DefaultSettings.ExpandLinks(&res, LoadGraph(home), "")

	// The same graph, solved: r = (1-d)·p + d·Mᵀr, M the links' weights
	// row-normalised (a node without a link keeps its own), p the scores.
	names := []string{"bl_A", "bl_B", "bl_C", "bl_D", "bl_X", "bl_Y", "bl_Z"}
	p := []float64{1, 0.9, 0.85, 0.6, 0.8 * 0.9, 0.8 * 0.5, 0.8 * 0.3} // Y's best parent is A
	w := map[[2]int]float64{{0, 4}: 0.9, {0, 5}: 0.5, {0, 6}: 0.3, {1, 5}: 0.5, {2, 5}: 0.5}
	exact := solvePageRank(p, w, 0.85)
	for i := range exact {
		exact[i] = max(exact[i], p[i])
	}
	want := slices.Clone(names)
	slices.SortStableFunc(want, func(a, b string) int {
		return cmp.Compare(exact[slices.Index(names, b)], exact[slices.Index(names, a)])
	})
	if got := ids(res.Beliefs); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v (exact %v)", ranks(res), want, exact)
	}
	if want[1] != "bl_Y" || slices.Index(want, "bl_B") > slices.Index(want, "bl_C") || slices.Index(want, "bl_X") > slices.Index(want, "bl_Z") {
		t.Fatalf("the hand-made expectation does not hold: %v", want)
	}
	if !closeTo(rankOf(res, "bl_D"), 0.6) || !closeTo(rankOf(res, "bl_B"), 0.9) {
		t.Fatalf("an unlinked belief's rank is its score, and a found one does not fall under its score: %v", ranks(res))
	}
}

// solvePageRank solves (I - d·Mᵀ) r = (1-d)·p by Gaussian elimination, M
// the symmetric weights w row-normalised (a row without weight keeps its
// node's own rank).
func solvePageRank(p []float64, w map[[2]int]float64, d float64) []float64 {
	n := len(p)
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
	}
	for k, v := range w {
		m[k[0]][k[1]], m[k[1]][k[0]] = v, v
	}
	for i := range m {
		sum := 0.0
		for _, v := range m[i] {
			sum += v
		}
		if sum == 0 {
			m[i][i] = 1
			continue
		}
		for j := range m[i] {
			m[i][j] /= sum
		}
	}
	a := make([][]float64, n) // the augmented system
	for i := range a {
		a[i] = make([]float64, n+1)
		for j := range n {
			a[i][j] = -d * m[j][i]
		}
		a[i][i]++
		a[i][n] = (1 - d) * p[i]
	}
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		a[c], a[piv] = a[piv], a[c]
		for r := range n {
			if r != c {
				f := a[r][c] / a[c][c]
				for k := c; k <= n; k++ {
					a[r][k] -= f * a[c][k]
				}
			}
		}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = a[i][n] / a[i][i]
	}
	return out
}

// TestGraphFileFormat: SaveGraph then linksOf give back each link with its
// confidence; a line of the format before links had a confidence, or a
// broken one, is skipped, not misread.
func TestGraphFileFormat(t *testing.T) {
	home := t.TempDir()
	at := time.UnixMilli(1_800_000_000_000)
	in := Linked{ID: "bl_b", Text: "User prefers tabs.", Project: "p", ProjectPath: "/p", At: at, Confidence: 0.75, Evidence: 4, Edge: 0.85}
	if err := SaveGraph(home, Graph{Links: map[string][]Linked{"bl_a": {in}}, Subjects: map[string][]string{"tab": {"bl_b"}}}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(GraphPath(home))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, []byte("L\tbl_a\tbl_old\t0.8\t5\t0\t\t\tan old line: confidence 0.8, evidence 5\n"+
		"E\tbl_a\tbl_short\t0.9\ttoo few fields\n"+
		"E\tbl_a\tbl_nan\tNaN\t0.8\t5\t0\t\t\tno number\n")...)
	if err := os.WriteFile(GraphPath(home), data, 0o600); err != nil {
		t.Fatal(err)
	}
	got := LoadGraph(home).linksOf("bl_a")
	if len(got) != 1 || got[0] != in {
		t.Fatalf("links %+v, want [%+v]", got, in)
	}
	// A file all in the old format: no link, the prompt's beliefs as found.
	old := t.TempDir()
	if err := os.MkdirAll(Dir(old), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(GraphPath(old), []byte("L\tbl_a\tbl_old\t0.8\t5\t0\t\t\tUser prefers spaces.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := Result{Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_a"}, Score: 1}}}
	DefaultSettings.ExpandLinks(&res, LoadGraph(old), "")
	if len(res.Beliefs) != 1 {
		t.Fatalf("an old-format line was followed: %+v", res.Beliefs)
	}
}

func rankOf(res Result, id string) float64 {
	for _, c := range res.Beliefs {
		if c.ID == id {
			return c.Rank
		}
	}
	return math.NaN()
}

func ranks(res Result) []string {
	var out []string
	for _, c := range res.Beliefs {
		out = append(out, fmt.Sprintf("%s %.3f (score %.3f)", c.ID, c.Rank, c.Score))
	}
	return out
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
	res := mk()
	DefaultSettings.BoostSubjects(&res, subjects, "Why does the deploy to Fly.io fail? Our PYTEST fixtures pass.")
	if got := ids(res.Beliefs); !slices.Equal(got, []string{"bl_f", "bl_x", "bl_b"}) || !closeTo(res.Beliefs[0].Score, 0.9*1.15) {
		t.Fatalf("beliefs %v (%v)", got, res.Beliefs[0].Score)
	}
	if got := ids(res.Episodes); !slices.Equal(got, []string{"ep_2", "ep_1", "ep_3"}) || !closeTo(res.Episodes[2].Score, 0.2*1.15) {
		t.Fatalf("episodes %v", got)
	}
	// Bounded: a memory about two named subjects is boosted once.
	res = mk()
	DefaultSettings.BoostSubjects(&res, graph(map[string][]string{"fly.io": {"ep_2"}, "deploy": {"ep_2"}}), "deploy to fly.io")
	if res.Episodes[0].ID != "ep_2" || !closeTo(res.Episodes[0].Score, 0.45*1.15) {
		t.Fatalf("boosted twice: %+v", res.Episodes[0])
	}
	// Part of a word is no mention: "bundle" does not name bun.
	res = mk()
	DefaultSettings.BoostSubjects(&res, subjects, "the bundle is too big")
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
				Text: "User prefers some tool for some purpose in this project.", Confidence: 0.8, Evidence: 5, Edge: 0.9})
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
		DefaultSettings.BoostSubjects(&res, gr, "does tool1 work with tool7 here?")
		DefaultSettings.ExpandLinks(&res, gr, "")
		if len(res.Beliefs) != 4 {
			b.Fatalf("beliefs %d", len(res.Beliefs))
		}
	}
}

// BenchmarkExpandLinksInMemory is ExpandLinks alone, on a graph file
// already read (BenchmarkGraphAtPrompt's, 2,000 beliefs): 20 found
// beliefs, the top 3 bringing 3 neighbours each, and the PageRank over
// the 29 candidates.
func BenchmarkExpandLinksInMemory(b *testing.B) {
	home := b.TempDir()
	g := Graph{Links: map[string][]Linked{}}
	for i := range 2000 {
		id := fmt.Sprintf("bl_%012x", i)
		for k := range 3 {
			g.Links[id] = append(g.Links[id], Linked{ID: fmt.Sprintf("bl_%012x", (i*3+k+100)%2000),
				Text: "User prefers some tool for some purpose in this project.", Confidence: 0.8, Evidence: 5, Edge: 0.9})
		}
	}
	if err := SaveGraph(home, g); err != nil {
		b.Fatal(err)
	}
	gr := LoadGraph(home)
	found := make([]Candidate, 20)
	for i := range found {
		found[i] = Candidate{Item: Item{Kind: KindBelief, ID: fmt.Sprintf("bl_%012x", i)}, Score: 1 - float64(i)/40}
	}
	for b.Loop() {
		res := Result{Beliefs: slices.Clone(found)}
		DefaultSettings.ExpandLinks(&res, gr, "")
		if len(res.Beliefs) != 29 {
			b.Fatalf("beliefs %d", len(res.Beliefs))
		}
	}
}

// BenchmarkPageRank is the refinement alone: 29 candidates, 12 links.
func BenchmarkPageRank(b *testing.B) {
	cands := make([]Candidate, 29)
	for i := range cands {
		cands[i].Score = 1 - float64(i)/40
	}
	var links []graphEdge
	for k := range 9 {
		links = append(links, graphEdge{k / 3, 20 + k, 0.9})
	}
	links = append(links, graphEdge{0, 5, 0.5}, graphEdge{1, 7, 0.4}, graphEdge{2, 21, 0.3})
	for b.Loop() {
		pageRank(cands, links)
	}
}
