package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOneReport runs the command on made-up files in both formats and
// checks that the summary carries the benchmarks' own figures (the JSON
// field names the summary reads are those the benchmarks write).
func TestOneReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs engram's binaries")
	}
	dir := t.TempDir()
	turn := func(s, id, text string) map[string]any {
		return map[string]any{"speaker": s, "dia_id": id, "text": text}
	}
	locomo := []any{map[string]any{
		"sample_id": "made-up",
		"conversation": map[string]any{
			"speaker_a": "Ada", "speaker_b": "Bruno", "session_1_date_time": "10:15 am on 3 March, 2024",
			"session_1": []any{
				turn("Ada", "D1:1", "I adopted a retired greyhound named Biscuit."),
				turn("Bruno", "D1:2", "Lovely! I started a pottery class downtown."),
			},
		},
		"qa": []any{
			map[string]any{"question": "What is the name of Ada's greyhound?", "answer": "Biscuit", "evidence": []string{"D1:1"}, "category": 4},
			map[string]any{"question": "Which class did Bruno start?", "answer": "pottery", "evidence": []string{"D1:2"}, "category": 1},
		},
	}}
	pref := map[string]any{
		"topics": map[string]any{
			"food":  []any{map[string]any{"preference": "I follow a strict gluten-free diet for celiac disease.", "question": "Which gluten-free bakeries suit my celiac diet?"}},
			"music": []any{map[string]any{"preference": "I only listen to baroque harpsichord recordings.", "question": "Recommend baroque harpsichord albums."}},
		},
		"filler": []any{map[string]any{"conversation": []any{
			map[string]any{"role": "user", "content": "How do I convert CSV to JSON in Python?"},
			map[string]any{"role": "assistant", "content": "Read rows with the csv module and write them with json.dump."},
		}}},
	}
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := options{locomo: write("l.json", locomo), prefeval: write("p.json", pref), users: 2, fillers: -1,
		out: filepath.Join(dir, "out"), promptDeadline: "10s"}
	// The benchmarks run with go run from the repository's root.
	wd, _ := os.Getwd()
	if err := os.Chdir(filepath.Join(wd, "..", "..")); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var w bytes.Buffer
	if err := run(ctx, o, &w); err != nil {
		t.Fatalf("run: %v\n%s", err, w.String())
	}
	out := w.String()
	t.Logf("\n%s", out)
	loc, err := readLocomo(filepath.Join(o.out, "locomo.json"))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := readPrefeval(filepath.Join(o.out, "prefeval.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The figures read back are the benchmarks' own, not zero values of
	// misspelt fields.
	if loc.Cat14.EvidenceTurns != 2 || loc.Cat14.Tokens.Mean == 0 || loc.Cat14.BM25Budget == 0 || len(loc.Categories) == 0 {
		t.Errorf("LoCoMo report as read: %+v", loc.Cat14)
	}
	if pr.Overall.Questions != 4 || pr.Overall.Tokens.Mean == 0 || len(pr.Topics) != 2 || pr.Unrelated == nil || pr.Unrelated.Questions != 4 {
		t.Errorf("PrefEval report as read: %+v, unrelated %+v", pr.Overall, pr.Unrelated)
	}
	for _, want := range []string{"== summary", "PrefEval: hit rate", "precision: PrefEval questions against the LoCoMo stores",
		"LoCoMo: categories 1-4 evidence recall", "evidence recall per question", "go run ./bench/locomo -data " + o.locomo, "go run ./bench/prefeval -data " + o.prefeval,
		"4 single-hop", "overall"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestSummaryVerdicts(t *testing.T) {
	loc := &locomoReport{Categories: []locomoStats{
		{Name: "multi-hop", Category: 1, EvidenceTurns: 10, Recall: 0.5, BM25: 0.6, QRecall: 0.7, QBM25: 0.65},
		{Name: "temporal", Category: 2, EvidenceTurns: 10, Recall: 0.9, BM25: 0.6, QRecall: 0.5, QBM25: 0.6},
		{Name: "adversarial", Category: 5, EvidenceTurns: 10, Recall: 0.1, BM25: 0.6}, // not one of 1-4
	}, Cat14: locomoStats{Name: "categories 1-4", EvidenceTurns: 20, Recall: 0.76, QRecall: 0.74}}
	loc.Cat14.Tokens.Mean = 590
	pref := &prefevalReport{Overall: prefevalStats{Name: "overall", Questions: 300, Hit: 0.71, Precision: 0.79}}
	pref.Overall.Tokens.Mean = 601
	var w bytes.Buffer
	summary(&w, loc, pref)
	out := w.String()
	for _, want := range []string{
		"0.710 at 601 tokens mean (p95 0); target >= 0.70 at <= 600: NOT met (", // tokens over budget
		"0.790; target >= 0.80: NOT met",
		"evidence recall (share of evidence turns) 0.760 at 590 tokens mean; target >= 0.75 at <= 600: met",
		"LoCoMo: not below plain BM25 at the same budget in any category: NOT met (below in 1 multi-hop)",
		"per question (each question's share of its evidence turns, averaged) 0.740 at 590 tokens mean; target >= 0.75 at <= 600: NOT met",
		"LoCoMo per question: not below plain BM25 at the same budget in any category: NOT met (below in 2 temporal)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "5 adversarial)") {
		t.Error("category 5 counted in the BM25 criterion")
	}
}
