package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/bench/internal/locomodata"
)

// Target of the later tuning work (a figure to print, not a pass/fail).
const (
	targetRecall = 0.60
	targetTokens = 2000
)

// Dist summarises a sample of values.
type Dist = benchkit.Dist

func dist(v []float64) Dist                          { return benchkit.NewDist(v) }
func mean(v []float64) float64                       { return benchkit.Mean(v) }
func percentile(sorted []float64, p float64) float64 { return benchkit.Percentile(sorted, p) }
func share(n, d int) float64                         { return benchkit.Share(n, d) }

// Stats are the figures of one category, or of all questions.
type Stats struct {
	Category              int     `json:"category,omitempty"`
	Name                  string  `json:"name"`
	Questions             int     `json:"questions"`
	QuestionsWithEvidence int     `json:"questions_with_evidence"`
	EvidenceTurns         int     `json:"evidence_turns"`
	ReachedStrict         int     `json:"evidence_reached_strict"`
	ReachedLenient        int     `json:"evidence_reached_lenient"`
	RecallStrict          float64 `json:"evidence_recall_strict"`
	RecallLenient         float64 `json:"evidence_recall_lenient"`
	// By the content-word rule (benchkit.RuleDoc), the rule of the
	// baseline below.
	ReachedContent int     `json:"evidence_reached_content60"`
	RecallContent  float64 `json:"evidence_recall_content60"`
	// The same, averaged over questions: each question's share of its
	// evidence turns reached, so that a multi-hop question with eight
	// evidence turns weighs as much as a single-hop one.
	QuestionRecallContent float64 `json:"question_recall_content60"`
	// Plain BM25 over the conversation's turns (baseline.go), scored by
	// the content-word rule: given engram's mean injected size of the same
	// rows (BM25BudgetBytes), and given 600 tokens (2,400 characters).
	BM25BudgetBytes int     `json:"bm25_budget_bytes"`
	BM25Recall      float64 `json:"bm25_recall_content60_same_budget"`
	BM25Recall600   float64 `json:"bm25_recall_content60_600_tokens"`
	// The BM25 figures averaged over questions, as QuestionRecallContent.
	BM25QuestionRecall    float64 `json:"bm25_question_recall_content60_same_budget"`
	BM25QuestionRecall600 float64 `json:"bm25_question_recall_content60_600_tokens"`
	// With -diagnose: evidence turns whose episode was injected, whether or
	// not its bite carried the turn's text. The gap to RecallLenient is
	// what the bites' text loses; the rest is ranking.
	ReachedEpisode int `json:"evidence_episode_injected,omitempty"`
	// Evidence turns that share a photo, and how many of them reached the
	// context (lenient).
	Photo         int     `json:"evidence_with_photo"`
	PhotoReached  int     `json:"evidence_with_photo_reached_lenient"`
	EpisodeRecall float64 `json:"evidence_episode_recall,omitempty"`
	// Shares of the questions with evidence: at least one evidence turn
	// reached (any), all of them (all).
	AnyHitStrict  float64 `json:"any_hit_strict"`
	AnyHitLenient float64 `json:"any_hit_lenient"`
	AllHitLenient float64 `json:"all_hit_lenient"`
	// NothingInjected is the share of questions the hook injected nothing for.
	NothingInjected float64 `json:"nothing_injected"`
	// Sizes per prompt, over all questions (nothing injected counts as 0).
	InjectedBytes Dist `json:"injected_bytes"`
	TokensBytes   Dist `json:"tokens_bytes_div_4"`
	TokensWords   Dist `json:"tokens_words_x_4_3"`
	Bites         Dist `json:"bites"`
	// HookMs is the prompt hook's wall time as a process.
	HookMs         Dist           `json:"hook_wall_ms"`
	DeadlineMisses int            `json:"deadline_misses"`
	HookProblems   int            `json:"hook_contract_violations"`
	Misses         map[string]int `json:"misses,omitempty"`

	bytes, tokB, tokW, bites, hookMs []float64
	rankings                         []bm25Ranking
	anyS, anyL, allL, empty          int
	questionContent                  float64 // sum of the questions' shares
}

func (s *Stats) add(q questionResult) {
	s.Questions++
	s.bytes = append(s.bytes, float64(q.Bytes))
	s.tokB = append(s.tokB, float64(q.Bytes)/4)
	s.tokW = append(s.tokW, float64(q.Words)*4/3)
	s.bites = append(s.bites, float64(q.Bites))
	s.hookMs = append(s.hookMs, q.HookMs)
	if q.Bytes == 0 {
		s.empty++
	}
	if q.DeadlineMiss {
		s.DeadlineMisses++
	}
	if q.HookProblem != "" {
		s.HookProblems++
	}
	for _, cl := range q.Misses {
		if s.Misses == nil {
			s.Misses = map[string]int{}
		}
		s.Misses[cl]++
	}
	if len(q.Evidence) == 0 {
		return
	}
	s.QuestionsWithEvidence++
	s.EvidenceTurns += len(q.Evidence)
	s.ReachedStrict += len(q.Strict)
	s.ReachedLenient += len(q.Lenient)
	s.ReachedContent += len(q.Content)
	s.questionContent += float64(len(q.Content)) / float64(len(q.Evidence))
	s.rankings = append(s.rankings, q.bm25)
	s.ReachedEpisode += len(q.Episode)
	s.Photo += len(q.Photo)
	for _, id := range q.Photo {
		if slices.Contains(q.Lenient, id) {
			s.PhotoReached++
		}
	}
	if len(q.Strict) > 0 {
		s.anyS++
	}
	if len(q.Lenient) > 0 {
		s.anyL++
	}
	if len(q.Lenient) == len(q.Evidence) {
		s.allL++
	}
}

func (s *Stats) finish() {
	s.RecallStrict = share(s.ReachedStrict, s.EvidenceTurns)
	s.RecallLenient = share(s.ReachedLenient, s.EvidenceTurns)
	s.EpisodeRecall = share(s.ReachedEpisode, s.EvidenceTurns)
	s.AnyHitStrict = share(s.anyS, s.QuestionsWithEvidence)
	s.AnyHitLenient = share(s.anyL, s.QuestionsWithEvidence)
	s.AllHitLenient = share(s.allL, s.QuestionsWithEvidence)
	s.NothingInjected = share(s.empty, s.Questions)
	s.InjectedBytes, s.TokensBytes, s.TokensWords = dist(s.bytes), dist(s.tokB), dist(s.tokW)
	s.Bites, s.HookMs = dist(s.bites), dist(s.hookMs)
	s.RecallContent = share(s.ReachedContent, s.EvidenceTurns)
	if s.QuestionsWithEvidence > 0 {
		s.QuestionRecallContent = s.questionContent / float64(s.QuestionsWithEvidence)
	}
	s.baseline()
}

// ConversationReport is what one conversation's capture did.
type ConversationReport struct {
	ID        string       `json:"id"`
	Questions int          `json:"questions"`
	Capture   captureStats `json:"capture"`
	StopMs    Dist         `json:"stop_hook_wall_ms"`
}

// Report is the whole outcome, written as JSON to -out. It holds figures
// and ids only, never text of the data set.
type Report struct {
	Generated string `json:"generated"`
	Data      string `json:"data"`
	Settings  struct {
		Mode string `json:"mode"`
		// Environment lists the ENGRAM_EMBED_* variables passed to engram.
		Environment    []string `json:"engram_environment"`
		PromptDeadline string   `json:"prompt_hook_deadline"`
		Captions       bool     `json:"captions"`
		SpeakerPrefix  bool     `json:"speaker_prefix"`
		Limit          int      `json:"limit,omitempty"`
		MaxQuestions   int      `json:"max_questions,omitempty"`
		Diagnose       bool     `json:"diagnose"`
		// Reused: the questions were asked of the stores an earlier run
		// captured and kept (-reuse), not of a new capture.
		Reused bool   `json:"reused_stores,omitempty"`
		Turns  string `json:"turns"`
		Rule   string `json:"rule"`
		Tokens string `json:"tokens"`
		Misses string `json:"misses,omitempty"`
	} `json:"settings"`
	Evidence struct {
		Repaired                 int `json:"ids_repaired"`
		Skipped                  int `json:"entries_skipped"`
		QuestionsWithoutEvidence int `json:"questions_without_evidence"`
	} `json:"evidence"`
	Capture struct {
		Sessions      int  `json:"sessions"`
		Turns         int  `json:"dialog_turns"`
		StopRuns      int  `json:"stop_hook_runs"`
		StopMs        Dist `json:"stop_hook_wall_ms"`
		StopProblems  int  `json:"stop_hook_contract_violations"`
		SpoolFiles    int  `json:"spool_files_before_worker"`
		Episodes      int  `json:"episodes"`
		IngestMerged  int  `json:"ingest_merged"`
		IngestSkipped int  `json:"ingest_skipped"`
		IngestFailed  int  `json:"ingest_failed"`
	} `json:"capture"`
	Target struct {
		Recall          float64 `json:"evidence_recall"`
		TokensPerPrompt int     `json:"tokens_per_prompt"`
	} `json:"target"`
	Categories []*Stats `json:"categories"`
	Overall    *Stats   `json:"overall"`
	// Cat14 is categories 1-4 together (5, adversarial, has no evidence
	// to reach): the recall target and BM25 comparison.
	Cat14         *Stats               `json:"categories_1_to_4"`
	Conversations []ConversationReport `json:"conversations"`
	Questions     []questionResult     `json:"questions"`
	Seconds       float64              `json:"seconds"`

	cats   map[int]*Stats
	stopMs []float64
}

func newReport(opt options) *Report {
	r := &Report{Generated: time.Now().UTC().Format(time.RFC3339), Data: opt.Data, cats: map[int]*Stats{},
		Overall: &Stats{Name: "overall"}, Cat14: &Stats{Name: "categories 1-4"}}
	r.Settings.Mode = "offline (no ENGRAM_LLM_* nor OPENAI_API_KEY: local extractor; the embedder as ENGRAM_EMBED_* say)"
	r.Settings.PromptDeadline = opt.PromptDeadline
	r.Settings.Environment = benchkit.Passed()
	if r.Settings.Environment == nil {
		r.Settings.Environment = []string{}
	}
	if r.Settings.PromptDeadline == "" {
		r.Settings.PromptDeadline = "engram default"
	}
	r.Settings.SpeakerPrefix = !opt.NoSpeakerPrefix
	r.Settings.Captions, r.Settings.Limit, r.Settings.MaxQuestions, r.Settings.Diagnose = opt.Captions, opt.Limit, opt.MaxQuestions, opt.Diagnose
	r.Settings.Reused = opt.Reuse != ""
	r.Settings.Turns = "each LoCoMo session is one Claude Code session; consecutive dialog turns pair into one turn " +
		"(first = user prompt, second = assistant reply), each text prefixed \"Speaker: \" (unless speaker_prefix is false); the Stop hook runs after each turn; " +
		"the worker runs once before (creating the store, as the installer does) and once after all sessions; " +
		"each question is a prompt of a fresh session"
	r.Settings.Rule = ruleDoc
	r.Settings.Tokens = "approximate: bytes/4, and words x 4/3"
	if opt.Diagnose {
		r.Settings.Misses = "each missed evidence turn (lenient rule) is classed; see bench/locomo/diagnose.go"
	}
	r.Target.Recall, r.Target.TokensPerPrompt = targetRecall, targetTokens
	for c := 1; c <= 5; c++ {
		r.cats[c] = &Stats{Category: c, Name: locomodata.CategoryName(c)}
	}
	return r
}

func (r *Report) add(c *conversation) {
	cr := ConversationReport{ID: c.sample.ID, Questions: len(c.results), Capture: c.capture, StopMs: dist(c.capture.StopMs)}
	r.Conversations = append(r.Conversations, cr)
	r.Capture.Sessions += c.capture.Sessions
	r.Capture.Turns += c.capture.Turns
	r.Capture.StopRuns += c.capture.StopRuns
	r.Capture.StopProblems += c.capture.StopProblems
	r.Capture.SpoolFiles += c.capture.SpoolFiles
	r.Capture.Episodes += c.capture.Ingest.Episodes
	r.Capture.IngestMerged += c.capture.Ingest.Merged
	r.Capture.IngestSkipped += c.capture.Ingest.Skipped
	r.Capture.IngestFailed += c.capture.Ingest.Failed
	r.stopMs = append(r.stopMs, c.capture.StopMs...)
	for _, q := range c.results {
		st, ok := r.cats[q.Category]
		if !ok {
			st = &Stats{Category: q.Category, Name: locomodata.CategoryName(q.Category)}
			r.cats[q.Category] = st
		}
		st.add(q)
		r.Overall.add(q)
		if q.Category >= 1 && q.Category <= 4 {
			r.Cat14.add(q)
		}
		r.Evidence.Repaired += q.Repaired
		r.Evidence.Skipped += q.Skipped
		if len(q.Evidence) == 0 {
			r.Evidence.QuestionsWithoutEvidence++
		}
		r.Questions = append(r.Questions, q)
	}
}

func (r *Report) finish(took time.Duration) {
	r.Seconds = math.Round(took.Seconds()*10) / 10
	r.Capture.StopMs = dist(r.stopMs)
	keys := make([]int, 0, len(r.cats))
	for k := range r.cats {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	r.Categories = nil
	for _, k := range keys {
		r.cats[k].finish()
		r.Categories = append(r.Categories, r.cats[k])
	}
	r.Overall.finish()
	r.Cat14.finish()
}

// writeJSON writes the report to path, creating its directory.
func (r *Report) writeJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// print writes the tables.
func (r *Report) print(w io.Writer) {
	env := "none"
	if len(r.Settings.Environment) > 0 {
		env = strings.Join(r.Settings.Environment, " ")
	}
	fmt.Fprintf(w, "LoCoMo retrieval through engram's hooks (%s; ENGRAM_EMBED_* passed: %s), %d conversations, %d questions, %.0f s\n",
		r.Settings.Mode, env, len(r.Conversations), r.Overall.Questions, r.Seconds)
	fmt.Fprintf(w, "capture: %d sessions, %d dialog turns, %d Stop runs (wall mean %.0f ms, p95 %.0f ms, %d contract violations), "+
		"%d spooled, %d episodes (%d merged, %d skipped, %d failed)\n",
		r.Capture.Sessions, r.Capture.Turns, r.Capture.StopRuns, r.Capture.StopMs.Mean, r.Capture.StopMs.P95,
		r.Capture.StopProblems, r.Capture.SpoolFiles, r.Capture.Episodes, r.Capture.IngestMerged, r.Capture.IngestSkipped, r.Capture.IngestFailed)
	fmt.Fprintf(w, "evidence: %d ids repaired from malformed entries, %d entries skipped, %d questions without evidence\n\n",
		r.Evidence.Repaired, r.Evidence.Skipped, r.Evidence.QuestionsWithoutEvidence)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tquestions\tevidence\trecall strict\trecall lenient\tany-hit strict\tany-hit lenient\tall-hit lenient\tnothing injected\tepisode recall\t")
	rows := append(append([]*Stats{}, r.Categories...), r.Overall)
	for _, s := range rows {
		ep := "-"
		if r.Settings.Diagnose {
			ep = fmt.Sprintf("%.3f", s.EpisodeRecall)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n", label(s), s.Questions, s.EvidenceTurns,
			s.RecallStrict, s.RecallLenient, s.AnyHitStrict, s.AnyHitLenient, s.AllHitLenient, s.NothingInjected, ep)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tbytes mean\tbytes p95\tbytes max\ttok(b/4) mean\ttok(b/4) p95\ttok(words) mean\ttok(words) p95\tbites mean\thook ms mean\thook ms p95\tdeadline misses\t")
	for _, s := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t%.1f\t%.1f\t%d\t\n", label(s),
			s.InjectedBytes.Mean, s.InjectedBytes.P95, s.InjectedBytes.Max, s.TokensBytes.Mean, s.TokensBytes.P95,
			s.TokensWords.Mean, s.TokensWords.P95, s.Bites.Mean, s.HookMs.Mean, s.HookMs.P95, s.DeadlineMisses)
	}
	tw.Flush()
	fmt.Fprintln(w)
	r.printBaseline(w)
	fmt.Fprintf(w, "\nevidence turns sharing a photo (text may be in the picture, which no transcript carries): %d, %d reached (lenient)\n",
		r.Overall.Photo, r.Overall.PhotoReached)
	fmt.Fprintf(w, "target (later tuning): evidence recall >= %.2f with <= %d tokens per prompt; now: recall strict %.3f, lenient %.3f; "+
		"tokens per prompt (bytes/4) mean %.0f, max %.0f\n", targetRecall, targetTokens, r.Overall.RecallStrict,
		r.Overall.RecallLenient, r.Overall.TokensBytes.Mean, r.Overall.TokensBytes.Max)
	if r.Settings.Diagnose && len(r.Overall.Misses) > 0 {
		fmt.Fprintln(w, "\nmissed evidence turns (lenient rule) by cause:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		hdr := []string{"cause"}
		for _, s := range rows {
			hdr = append(hdr, label(s))
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
		for _, cl := range missOrder {
			if r.Overall.Misses[cl] == 0 {
				continue
			}
			line := []string{cl}
			for _, s := range rows {
				line = append(line, fmt.Sprint(s.Misses[cl]))
			}
			fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nrule: %s\n", r.Settings.Rule)
	if r.Settings.Diagnose {
		fmt.Fprintln(w, "episode recall: share of evidence turns whose episode (the capture of the turn's exchange) was injected, "+
			"as a bite or shown next to one, whatever the bite held.")
	}
}

func label(s *Stats) string {
	if s.Category == 0 {
		return s.Name
	}
	return fmt.Sprintf("%d %s", s.Category, s.Name)
}

// printBaseline writes engram's evidence recall by the content-word rule
// next to plain BM25's at the same budget, per category.
func (r *Report) printBaseline(w io.Writer) {
	fmt.Fprintf(w, "evidence recall by the content-word rule (%s), engram vs plain BM25 (Porter, k1=%.1f b=%.2f) over single turns:\n",
		benchkit.RuleDoc, benchkit.BM25K1, benchkit.BM25B)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tevidence\tengram recall\tengram tok mean\tengram tok p95\tBM25 same budget\tBM25 @600 tok\tengram - BM25\t"+
		"per question: engram\tBM25 same budget\tBM25 @600 tok\t")
	rows := append(append([]*Stats{}, r.Categories...), r.Cat14, r.Overall)
	for _, s := range rows {
		if s.EvidenceTurns == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.0f\t%.3f\t%.3f\t%+.3f\t%.3f\t%.3f\t%.3f\t\n", label(s), s.EvidenceTurns, s.RecallContent,
			s.TokensBytes.Mean, s.TokensBytes.P95, s.BM25Recall, s.BM25Recall600, s.RecallContent-s.BM25Recall,
			s.QuestionRecallContent, s.BM25QuestionRecall, s.BM25QuestionRecall600)
	}
	tw.Flush()
	fmt.Fprintln(w, "recall is the share of all evidence turns reached; per question, each question's share of its evidence turns, averaged over questions.")
	fmt.Fprintf(w, "target (issue 13): categories 1-4 recall >= 0.75 at <= 600 tokens mean, and not below BM25 at the same budget in any category; "+
		"now %.3f (per question %.3f) at %.0f tokens\n", r.Cat14.RecallContent, r.Cat14.QuestionRecallContent, r.Cat14.TokensBytes.Mean)
}
