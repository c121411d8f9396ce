package benchkit

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestContentWords(t *testing.T) {
	got := ContentWords("I'm vegan, and I AVOID gluten; no dairy at all. Vegan!! Go 5k 10k")
	want := []string{"vegan", "avoid", "gluten", "dairy", "10k"}
	if !slices.Equal(got, want) {
		t.Errorf("ContentWords = %q; want %q", got, want)
	}
	if cw := ContentWords("I am at it, to be or not"); len(cw) != 0 {
		t.Errorf("stop words and short words kept: %q", cw)
	}
}

func TestHitRule(t *testing.T) {
	// Five content words: alpha beta gamma delta epsilon.
	target := "alpha beta gamma delta epsilon"
	for _, tc := range []struct {
		context string
		hit     bool
		cov     float64
	}{
		{"alpha beta gamma", true, 0.6},         // 3/5 = 60%: the boundary counts
		{"alpha beta", false, 0.4},              // 2/5
		{"ALPHA, Beta-gamma: delta", true, 0.8}, // case and punctuation do not matter
		{"alphabet betamax gammas", false, 0},   // whole words only
		{"", false, 0},                          // nothing injected
		{"alpha beta gamma delta epsilon", true, 1},
	} {
		set := NewWordSet(tc.context)
		if got := set.Hit(target); got != tc.hit {
			t.Errorf("Hit(%q) = %v; want %v", tc.context, got, tc.hit)
		}
		if got := set.Coverage(target); math.Abs(got-tc.cov) > 1e-9 {
			t.Errorf("Coverage(%q) = %v; want %v", tc.context, got, tc.cov)
		}
	}
	// Repeated words count once: "gluten gluten gluten free" has two
	// content words, and 1 of 2 is below 60%.
	if NewWordSet("gluten").Hit("gluten gluten gluten free") {
		t.Error("1 of 2 distinct content words counted as a hit")
	}
	// A target with no content word never hits, even in a full context.
	if NewWordSet("I am to be").Hit("I am to be") {
		t.Error("a target without content words hit")
	}
	// Several texts make one set.
	if !NewWordSet("alpha beta", "gamma").Hit(target) {
		t.Error("words of the second text not counted")
	}
}

func TestSharesContentWord(t *testing.T) {
	if SharesContentWord("What restaurants should I try in Rome?", "I avoid gluten") {
		t.Error("no content word in common, but shared")
	}
	if !SharesContentWord("Which gluten-free places are there?", "I avoid gluten") {
		t.Error("gluten in both, not shared")
	}
	if SharesContentWord("what should I do", "I should do what I can") {
		t.Error("stop words counted as shared")
	}
}

func TestPack(t *testing.T) {
	docs := []string{"aaaa", "bbbbbbbbbb", "cc", "dddd"}
	for _, tc := range []struct {
		order  []int
		budget int
		want   string
	}{
		{[]int{0, 2, 3}, 100, "aaaa\ncc\ndddd"},
		{[]int{0, 2, 3}, 12, "aaaa\ncc\ndddd"}, // 4+1+2+1+4 = 12: fits exactly
		{[]int{0, 2, 3}, 11, "aaaa\ncc"},       // line breaks count
		{[]int{0, 1, 2}, 12, "aaaa"},           // stops at the first that does not fit, though "cc" would
		{[]int{1, 0}, 5, ""},                   // the best does not fit: nothing
		{nil, 100, ""},
	} {
		if got := Pack(docs, tc.order, tc.budget); got != tc.want {
			t.Errorf("Pack(%v, %d) = %q; want %q", tc.order, tc.budget, got, tc.want)
		}
		if got := Pack(docs, tc.order, tc.budget); len(got) > tc.budget {
			t.Errorf("Pack(%v, %d) is %d characters", tc.order, tc.budget, len(got))
		}
	}
}

func TestBM25(t *testing.T) {
	docs := []string{
		"the cat sat on the mat",
		"dogs are running in the park",
		"the the the the",
		"a cat and a dog",
		"nothing in common here",
	}
	b := NewBM25(docs)
	// "run" and "dog" match "running" and "dogs" through the stemmer;
	// documents without a query term are not ranked.
	got := b.Rank("Do dogs run?")
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("Rank(dogs run) = %v; want [1 3]", got)
	}
	// idf: "cat" is in 2 of 5 documents, "mat" in 1: a document with
	// the rarer term ranks first.
	got = b.Rank("cat mat")
	if len(got) != 2 || got[0] != 0 || got[1] != 3 {
		t.Errorf("Rank(cat mat) = %v; want [0 3]", got)
	}
	// The score by the formula: N=5, "mat" df=1, tf=1, |d|=6,
	// avgdl=(6+6+4+5+4)/5=5.
	idf := math.Log(1 + (5-1+0.5)/(1+0.5))
	want := idf * 1 * (1.2 + 1) / (1 + 1.2*(1-0.75+0.75*6/5.0))
	if s := b.Score("mat", 0); math.Abs(s-want) > 1e-12 {
		t.Errorf("Score(mat, 0) = %v; want %v", s, want)
	}
	if s := b.Score("zebra", 0); s != 0 {
		t.Errorf("Score of an unknown term = %v", s)
	}
	// The same query ranks the same way every time: scores sum in a fixed
	// order, whatever the order of a map's keys.
	many := NewBM25([]string{"alpha beta gamma delta epsilon zeta", "zeta epsilon delta gamma beta alpha eta",
		"alpha gamma epsilon", "beta delta zeta theta", "alpha beta gamma delta epsilon zeta eta theta"})
	first := many.Rank("theta eta zeta epsilon delta gamma beta alpha")
	for range 200 {
		if got := many.Rank("theta eta zeta epsilon delta gamma beta alpha"); !slices.Equal(got, first) {
			t.Fatalf("ranks differ between runs: %v, %v", first, got)
		}
	}
	// Ties keep the documents' order.
	tie := NewBM25([]string{"x apple", "y apple", "z apple"})
	if got := tie.Rank("apple"); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("ties: %v", got)
	}
}

func TestBites(t *testing.T) {
	ctx := "<engram-recall>\nNotes recalled ...\n[Belief (0.80): uses pnpm]\n[Memory · 2 days ago] a (just after: b)\nnot a bite [Memory x]\n[Memory · 1 year ago] c\n</engram-recall>"
	got := Bites(ctx)
	if len(got) != 3 || !strings.HasPrefix(got[0], "[Belief") || !strings.HasSuffix(got[1], "(just after: b)") {
		t.Errorf("Bites = %q", got)
	}
	if len(Bites("")) != 0 {
		t.Error("bites in an empty context")
	}
}

func TestChildEnv(t *testing.T) {
	t.Setenv("ENGRAM_EMBED_MODEL_DIR", "/models/minilm")
	t.Setenv("ENGRAM_LLM_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ENGRAM_HOME", "/elsewhere")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("ENGRAM_RECALL_POLICY", "/sweeps/keep-0.5.json")
	env := ChildEnv("/h", "5s")
	has := func(kv string) bool { return slices.Contains(env, kv) }
	for _, kv := range []string{"ENGRAM_EMBED_MODEL_DIR=/models/minilm", "ENGRAM_RECALL_POLICY=/sweeps/keep-0.5.json", "HOME=/h", "ENGRAM_HOME=/h/.claude-memory",
		"CLAUDE_CONFIG_DIR=/h/.claude", "ENGRAM_PROMPT_HOOK_DEADLINE=5s"} {
		if !has(kv) {
			t.Errorf("ChildEnv lacks %s", kv)
		}
	}
	for _, kv := range env {
		for _, bad := range []string{"ENGRAM_LLM_BASE_URL=", "ENGRAM_HOME=/elsewhere", "OPENAI_API_KEY="} {
			if strings.HasPrefix(kv, bad) {
				t.Errorf("ChildEnv passes %s", kv)
			}
		}
	}
	if p := Passed(); !slices.Equal(p, []string{"ENGRAM_EMBED_MODEL_DIR=/models/minilm", "ENGRAM_RECALL_POLICY=/sweeps/keep-0.5.json"}) {
		t.Errorf("Passed = %q", p)
	}
}

// ReadJSONL reads back what WriteJSONL wrote, skips blank lines, and names
// the file and line of one that does not parse.
func TestReadJSONL(t *testing.T) {
	type item struct{ A string }
	path := filepath.Join(t.TempDir(), "items.jsonl")
	if err := WriteJSONL(path, []item{{"x"}, {"y"}}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadJSONL[item](path)
	if err != nil || !slices.Equal(got, []item{{"x"}, {"y"}}) {
		t.Fatalf("read %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("{\"A\":\"x\"}\n\n{\"A\":\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSONL[item](path); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("a bad line: %v", err)
	}
}
