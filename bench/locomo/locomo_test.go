package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// synthetic is a tiny conversation in the LoCoMo format, made up for the
// test: two sessions (the second opens with speaker_b and has an odd number
// of turns), three questions, one of them with malformed evidence.
func synthetic() []map[string]any {
	turn := func(speaker, id, text string) map[string]any {
		return map[string]any{"speaker": speaker, "dia_id": id, "text": text}
	}
	withPhoto := func(t map[string]any, caption string) map[string]any {
		t["blip_caption"] = caption
		t["img_url"] = []string{"https://example.invalid/mugs.jpg"}
		return t
	}
	conv := map[string]any{
		"speaker_a":           "Ada",
		"speaker_b":           "Bruno",
		"session_1_date_time": "10:15 am on 3 March, 2024",
		"session_1": []any{
			turn("Ada", "D1:1", "Hi Bruno! I finally adopted a retired greyhound named Biscuit last weekend."),
			turn("Bruno", "D1:2", "That is wonderful news, Ada! Greyhounds are gentle dogs."),
			turn("Ada", "D1:3", "He sleeps most of the day on the sofa. How is your week going?"),
			turn("Bruno", "D1:4", "Busy. I started a pottery class at the community studio downtown."),
			turn("Ada", "D1:5", "Pottery sounds relaxing. What are you making first?"),
			turn("Bruno", "D1:6", "A set of blue glazed mugs for my sister Lucia."),
		},
		"session_2_date_time": "4:40 pm on 20 March, 2024",
		"session_2": []any{
			withPhoto(turn("Bruno", "D2:1", "Hey Ada, the mugs came out of the kiln yesterday!"), "a photo of blue mugs on a shelf"),
			turn("Ada", "D2:2", "Congratulations! Did Lucia like them?"),
			turn("Bruno", "D2:3", "She loved them and wants a matching teapot now."),
			turn("Ada", "D2:4", "Biscuit learned to sit on command this week, I am so proud."),
			turn("Bruno", "D2:5", "Good boy Biscuit!"),
		},
	}
	qa := []any{
		map[string]any{"question": "What is the name of the greyhound Ada adopted?", "answer": "Biscuit",
			"evidence": []string{"D1:1"}, "category": 4},
		map[string]any{"question": "When did the mugs Bruno made come out of the kiln?", "answer": "19 March 2024",
			"evidence": []string{"D2:1"}, "category": 2},
		map[string]any{"question": "What did Bruno make for his sister, and what does she want next?", "answer": "mugs; a teapot",
			"evidence": []string{"D1:6; D2:3", "D"}, "category": 1},
	}
	return []map[string]any{{"sample_id": "synthetic-1", "conversation": conv, "qa": qa}}
}

func TestSyntheticConversation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs engram's binaries")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "tiny-locomo.json")
	b, _ := json.Marshal(synthetic())
	if err := os.WriteFile(data, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var log, examples bytes.Buffer
	opt := options{Data: data, Out: filepath.Join(dir, "out", "report.json"), Diagnose: true, ShowMisses: 3,
		Log: &log, Examples: &examples,
		// A generous deadline: this test checks the pipeline, not speed,
		// and the machine may be busy.
		PromptDeadline: "10s"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := run(ctx, opt)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if err := rep.writeJSON(opt.Out); err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.print(&table)
	t.Logf("\n%s", table.String())

	// Capture: 2 sessions, 11 dialog turns, 3 + 3 Stop runs, each a capture.
	cv := rep.Conversations[0].Capture
	if cv.Sessions != 2 || cv.Turns != 11 || cv.StopRuns != 6 || cv.StopProblems != 0 {
		t.Errorf("capture: %+v", cv)
	}
	if cv.Ingest.Captures != 6 || cv.Ingest.Failed != 0 || cv.Ingest.Episodes == 0 || cv.Episodes == 0 {
		t.Errorf("ingest: %+v (worker said %q)", cv.Ingest, cv.WorkerSummary)
	}

	// Evidence parsing: "D1:6; D2:3" is split, "D" skipped.
	if rep.Evidence.Repaired != 2 || rep.Evidence.Skipped != 1 || rep.Evidence.QuestionsWithoutEvidence != 0 {
		t.Errorf("evidence: %+v", rep.Evidence)
	}
	if len(rep.Questions) != 3 || !slices.Equal(rep.Questions[2].Evidence, []string{"D1:6", "D2:3"}) {
		t.Fatalf("questions: %+v", rep.Questions)
	}

	// The easy question: its one evidence turn is short and holds the
	// question's rare words, so it reaches the context whole.
	q := rep.Questions[0]
	if !slices.Contains(q.Strict, "D1:1") || !slices.Contains(q.Lenient, "D1:1") || !slices.Contains(q.Episode, "D1:1") || q.Bytes == 0 || q.Bites == 0 {
		t.Errorf("easy question: %+v\nexamples:\n%s", q, examples.String())
	}

	// The report is consistent.
	if rep.Overall.Questions != 3 || rep.Overall.EvidenceTurns != 4 || rep.Overall.Photo != 1 {
		t.Errorf("overall: %+v", rep.Overall)
	}
	var nq, ne, rs, rl int
	for _, s := range rep.Categories {
		nq += s.Questions
		ne += s.EvidenceTurns
		rs += s.ReachedStrict
		rl += s.ReachedLenient
	}
	if nq != rep.Overall.Questions || ne != rep.Overall.EvidenceTurns || rs != rep.Overall.ReachedStrict || rl != rep.Overall.ReachedLenient {
		t.Errorf("categories do not add up to overall: q %d e %d strict %d lenient %d; overall %+v", nq, ne, rs, rl, rep.Overall)
	}
	misses := 0
	for _, s := range append(slices.Clone(rep.Categories), rep.Overall) {
		if s.ReachedStrict > s.ReachedLenient || s.ReachedLenient > s.EvidenceTurns || s.ReachedEpisode > s.EvidenceTurns {
			t.Errorf("%s: strict %d lenient %d of %d", s.Name, s.ReachedStrict, s.ReachedLenient, s.EvidenceTurns)
		}
		for _, v := range []float64{s.RecallStrict, s.RecallLenient, s.AnyHitStrict, s.AnyHitLenient, s.AllHitLenient, s.NothingInjected} {
			if v < 0 || v > 1 || math.IsNaN(v) {
				t.Errorf("%s: share out of range: %+v", s.Name, s)
			}
		}
		if s.EvidenceTurns > 0 && math.Abs(s.RecallLenient-float64(s.ReachedLenient)/float64(s.EvidenceTurns)) > 1e-9 {
			t.Errorf("%s: recall %v from %d/%d", s.Name, s.RecallLenient, s.ReachedLenient, s.EvidenceTurns)
		}
		if s.InjectedBytes.P95 > s.InjectedBytes.Max || math.Abs(s.TokensBytes.Mean-s.InjectedBytes.Mean/4) > 1e-9 {
			t.Errorf("%s: sizes %+v %+v", s.Name, s.InjectedBytes, s.TokensBytes)
		}
		if s.Name == "overall" {
			for cl, n := range s.Misses {
				if !slices.Contains(missOrder, cl) {
					t.Errorf("unknown miss class %q", cl)
				}
				misses += n
			}
		}
	}
	if misses != rep.Overall.EvidenceTurns-rep.Overall.ReachedLenient {
		t.Errorf("%d misses classed, %d evidence turns missed", misses, rep.Overall.EvidenceTurns-rep.Overall.ReachedLenient)
	}
	for _, want := range []string{"1 multi-hop", "2 temporal", "4 single-hop", "5 adversarial", "overall", "tok(b/4) mean"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}

	// The JSON report holds figures and ids, never the conversation's text.
	out, err := os.ReadFile(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(out, &back); err != nil || back.Overall.Questions != 3 || len(back.Categories) != 5 {
		t.Errorf("report JSON: %v %+v", err, back.Overall)
	}
	for _, text := range []string{"Biscuit", "greyhound", "teapot", "kiln"} {
		if bytes.Contains(out, []byte(text)) {
			t.Errorf("report JSON holds text of the data set (%q)", text)
		}
	}
}

// TestLoCoMoDev runs the real dev split. Opt in: it takes many minutes.
//
//	ENGRAM_LOCOMO=1 go test -run TestLoCoMoDev -timeout 90m -v ./bench/locomo
//
// ENGRAM_LOCOMO_DATA overrides the file (default ../shared/eval/locomo-dev.json
// next to the repository). It logs the report; thresholds are for the bench
// output, not for pass/fail.
func TestLoCoMoDev(t *testing.T) {
	if os.Getenv("ENGRAM_LOCOMO") != "1" {
		t.Skip("the LoCoMo run takes minutes: set ENGRAM_LOCOMO=1 to run it")
	}
	data := os.Getenv("ENGRAM_LOCOMO_DATA")
	if data == "" {
		data = filepath.Join("..", "..", "..", "shared", "eval", "locomo-dev.json")
	}
	if _, err := os.Stat(data); err != nil {
		t.Skipf("LoCoMo data not found at %s (it is not part of the repository; set ENGRAM_LOCOMO_DATA): %v", data, err)
	}
	var log bytes.Buffer
	rep, err := run(context.Background(), options{Data: data, Diagnose: true, Log: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	rep.print(&table)
	t.Logf("\n%s\n%s", log.String(), table.String())
}

func TestReaches(t *testing.T) {
	long := "I went to the **lake** on Sunday with my two kids and we spent the whole afternoon fishing and talking about school."
	ctx := normalize("<engram-recall>\n[Memory · 2 years ago] Ann: I went to the lake on Sunday with my two kids and we spent the whole… — Bo: nice\n</engram-recall>")
	for _, tc := range []struct {
		turn            string
		strict, lenient bool
	}{
		{long, false, true},
		{"nice", true, true},
		{"NICE  ", true, true},
		{"I went to the lake on Saturday with my two kids and we spent", false, false},
		{"", false, false},
	} {
		s, l := reaches(tc.turn, ctx)
		if s != tc.strict || l != tc.lenient {
			t.Errorf("reaches(%q) = %v, %v; want %v, %v", tc.turn, s, l, tc.strict, tc.lenient)
		}
	}
}

// A question's share of its evidence weighs as much as another's, however
// many evidence turns each has; the share of all evidence turns does not.
func TestQuestionRecallAveragesOverQuestions(t *testing.T) {
	s := &Stats{Name: "t"}
	docs := []string{"alpha beta gamma", "delta epsilon zeta", "eta theta iota"}
	s.add(questionResult{Evidence: []string{"D1:1", "D1:2", "D1:3"}, Content: []string{"D1:1"},
		bm25: bm25Ranking{docs: docs, order: []int{0, 1, 2}, evidence: docs}})
	s.add(questionResult{Evidence: []string{"D2:1"}, Content: []string{"D2:1"},
		bm25: bm25Ranking{docs: docs, order: []int{0}, evidence: docs[:1]}})
	s.finish()
	if got, want := s.RecallContent, 0.5; math.Abs(got-want) > 1e-9 {
		t.Errorf("evidence recall %.3f, want %.3f (2 of 4 turns)", got, want)
	}
	if got, want := s.QuestionRecallContent, (1.0/3+1)/2; math.Abs(got-want) > 1e-9 {
		t.Errorf("per-question recall %.3f, want %.3f", got, want)
	}
	// BM25 at the fixed budget packs all three turns for both questions.
	if s.BM25Recall600 != 1 || s.BM25QuestionRecall600 != 1 {
		t.Errorf("BM25 at 600 tokens: %.3f, per question %.3f; want 1 and 1", s.BM25Recall600, s.BM25QuestionRecall600)
	}
}
