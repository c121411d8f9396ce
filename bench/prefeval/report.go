package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

type Dist = benchkit.Dist

func dist(v []float64) Dist  { return benchkit.NewDist(v) }
func share(n, d int) float64 { return benchkit.Share(n, d) }

// Targets of issue 13 (printed next to the figures; not pass/fail).
const (
	targetHit          = 0.70
	targetTokens       = 600
	targetNoInjection  = 0.90
	targetPrecision    = 0.80
	fixedBudgetTokens  = 600
	fixedBudgetChars   = fixedBudgetTokens * 4
	defaultUsers       = 30
	defaultDataRelPath = "../shared/eval/prefeval-dev.json"
)

// Stats are the figures of one topic, or of all of them.
type Stats struct {
	Name      string `json:"name"`
	Questions int    `json:"questions"`
	// Hit: the preference reached the injected context alone;
	// HitWithMemory: the injected context plus the MEMORY.md files loaded.
	Hits             int     `json:"hits_injected"`
	HitRate          float64 `json:"hit_rate_injected"`
	HitsWithMemory   int     `json:"hits_injected_plus_memory_md"`
	HitRateMemory    float64 `json:"hit_rate_injected_plus_memory_md"`
	HitsBitesOnly    int     `json:"hits_bites_only"`
	HitRateBitesOnly float64 `json:"hit_rate_bites_only"`
	NoShare          int     `json:"questions_sharing_no_content_word"`
	NoShareHits      int     `json:"hits_injected_sharing_no_word"`
	NoShareHitRate   float64 `json:"hit_rate_injected_sharing_no_word"`
	NoShareMemHits   int     `json:"hits_plus_memory_md_sharing_no_word"`
	NoShareMemRate   float64 `json:"hit_rate_plus_memory_md_sharing_no_word"`
	NothingInjected  float64 `json:"nothing_injected"`
	Tokens           Dist    `json:"injected_tokens"`
	Bites            int     `json:"bites"`
	BitesAsked       int     `json:"bites_asked_preference"`
	BitesOtherPref   int     `json:"bites_other_preference"`
	Precision        float64 `json:"bite_precision"`
	BM25Budget       int     `json:"bm25_budget_chars"`
	BM25HitRate      float64 `json:"bm25_hit_rate_same_budget"`
	BM25HitRate600   float64 `json:"bm25_hit_rate_600_tokens"`
	BM25NoShareRate  float64 `json:"bm25_hit_rate_same_budget_sharing_no_word"`
	BM25NoShare600   float64 `json:"bm25_hit_rate_600_tokens_sharing_no_word"`
	HookMs           Dist    `json:"hook_wall_ms"`
	DeadlineMisses   int     `json:"deadline_misses"`
	HookProblems     int     `json:"hook_contract_violations"`
	tokens, hookMs   []float64
	empty            int
	rankings         []bm25Ranking
	noShareRankings  []bm25Ranking
}

func (s *Stats) add(q questionResult) {
	s.Questions++
	s.tokens = append(s.tokens, q.Tokens)
	s.hookMs = append(s.hookMs, q.HookMs)
	if q.Bytes == 0 {
		s.empty++
	}
	if q.Hit {
		s.Hits++
	}
	if q.HitWithMemory {
		s.HitsWithMemory++
	}
	if q.HitBitesOnly {
		s.HitsBitesOnly++
	}
	if !q.SharesWord {
		s.NoShare++
		s.noShareRankings = append(s.noShareRankings, q.bm25)
		if q.Hit {
			s.NoShareHits++
		}
		if q.HitWithMemory {
			s.NoShareMemHits++
		}
	}
	s.Bites += q.Bites
	s.BitesAsked += q.BitesAsked
	s.BitesOtherPref += q.BitesOtherPref
	if q.DeadlineMiss {
		s.DeadlineMisses++
	}
	if q.HookProblem != "" {
		s.HookProblems++
	}
	s.rankings = append(s.rankings, q.bm25)
}

// finish computes the shares; budget is the BM25 baseline's character
// budget (engram's mean injection over the whole run).
func (s *Stats) finish(budget int) {
	s.HitRate = share(s.Hits, s.Questions)
	s.HitRateMemory = share(s.HitsWithMemory, s.Questions)
	s.HitRateBitesOnly = share(s.HitsBitesOnly, s.Questions)
	s.NoShareHitRate = share(s.NoShareHits, s.NoShare)
	s.NoShareMemRate = share(s.NoShareMemHits, s.NoShare)
	s.NothingInjected = share(s.empty, s.Questions)
	s.Tokens, s.HookMs = dist(s.tokens), dist(s.hookMs)
	s.Precision = share(s.BitesAsked+s.BitesOtherPref, s.Bites)
	s.BM25Budget = budget
	s.BM25HitRate, s.BM25HitRate600 = bm25Rate(s.rankings, budget), bm25Rate(s.rankings, fixedBudgetChars)
	s.BM25NoShareRate, s.BM25NoShare600 = bm25Rate(s.noShareRankings, budget), bm25Rate(s.noShareRankings, fixedBudgetChars)
}

func bm25Rate(rs []bm25Ranking, budget int) float64 {
	n := 0
	for _, r := range rs {
		if r.hit(budget) {
			n++
		}
	}
	return share(n, len(rs))
}

// UserReport is one user's capture and MEMORY.md.
type UserReport struct {
	User         int          `json:"user"`
	Capture      captureStats `json:"capture"`
	MemoryTokens float64      `json:"memory_md_engram_tokens"`
	GlobalLines  int          `json:"global_memory_md_lines"`
	ProjectLines int          `json:"project_memory_md_lines_loaded"`
}

// Report is the whole outcome; the JSON holds figures and ids only.
type Report struct {
	Generated string `json:"generated"`
	Data      string `json:"data"`
	Settings  struct {
		Users          int      `json:"users"`
		Fillers        string   `json:"fillers"`
		PromptDeadline string   `json:"prompt_hook_deadline"`
		Environment    []string `json:"engram_environment"`
		Protocol       string   `json:"protocol"`
		Rule           string   `json:"rule"`
		BM25           string   `json:"bm25"`
		Precision      string   `json:"precision"`
	} `json:"settings"`
	Topics  []*Stats `json:"topics"`
	Overall *Stats   `json:"overall"`
	Capture struct {
		Sessions     int  `json:"sessions"`
		Messages     int  `json:"messages"`
		StopRuns     int  `json:"stop_hook_runs"`
		StopProblems int  `json:"stop_hook_contract_violations"`
		StopMs       Dist `json:"stop_hook_wall_ms"`
	} `json:"capture"`
	// MemoryTokens: engram's part of the MEMORY.md files loaded in every
	// session, per user (chars / 4).
	MemoryTokens Dist             `json:"memory_md_engram_tokens_per_user"`
	Users        []UserReport     `json:"users"`
	Unrelated    *UnrelatedStats  `json:"unrelated,omitempty"`
	Questions    []questionResult `json:"questions"`
	Seconds      float64          `json:"seconds"`

	topics       map[string]*Stats
	stopMs, memT []float64
}

func newReport(opt options, d *Data) *Report {
	r := &Report{Generated: time.Now().UTC().Format(time.RFC3339), Data: opt.Data, Overall: &Stats{Name: "overall"}, topics: map[string]*Stats{}}
	r.Settings.Users = opt.Users
	r.Settings.Fillers = "all"
	if opt.Fillers >= 0 && opt.Fillers < len(d.Filler) {
		r.Settings.Fillers = fmt.Sprint(opt.Fillers)
	}
	r.Settings.PromptDeadline = opt.PromptDeadline
	if r.Settings.PromptDeadline == "" {
		r.Settings.PromptDeadline = "engram default"
	}
	r.Settings.Environment = benchkit.Passed()
	if r.Settings.Environment == nil {
		r.Settings.Environment = []string{}
	}
	r.Settings.Protocol = "user u states, per topic, preference u mod (topic size) as the prompt of its own one-exchange session " +
		"(reply \"" + ackReply + "\"); the store also holds the filler conversations; sessions 9 h apart, the preferences spread evenly " +
		"among the fillers (topic order rotated by u); every turn captured by engram-hook-stop from a real transcript file; then " +
		"engram-worker run, run --consolidate, run; each topic's question (same item) to engram-hook-userprompt in a fresh session"
	r.Settings.Rule = benchkit.RuleDoc + "; MEMORY.md loaded: $ENGRAM_HOME/MEMORY.md whole (CLAUDE.md import), the project's auto-memory MEMORY.md first 200 lines"
	r.Settings.BM25 = fmt.Sprintf("plain Okapi BM25 (Porter stemmed, k1=%.1f, b=%.2f) over the user's turns (the user's messages of "+
		"the fillers and the preference prompts; the replies are not the user's), the question as the query, turns packed in rank order until the next does not fit: into engram's "+
		"mean injected size over the run, and into %d tokens", benchkit.BM25K1, benchkit.BM25B, fixedBudgetTokens)
	r.Settings.Precision = "a bite (a [Memory …] or [Belief …] line of the injected context) is the asked-about preference when the hit rule holds for the " +
		"bite alone; else another preference of the same user when it holds for one of those; else filler; precision = preference bites / bites"
	for _, t := range d.names {
		r.topics[t] = &Stats{Name: t}
	}
	return r
}

func (r *Report) add(us *user) {
	ur := UserReport{User: us.u, Capture: us.capture, MemoryTokens: us.memory.EngramTokens,
		GlobalLines: us.memory.GlobalLines, ProjectLines: us.memory.ProjectLines}
	r.Users = append(r.Users, ur)
	r.memT = append(r.memT, us.memory.EngramTokens)
	r.Capture.Sessions += us.capture.Sessions
	r.Capture.Messages += us.capture.Messages
	r.Capture.StopRuns += us.capture.StopRuns
	r.Capture.StopProblems += us.capture.StopProblems
	r.stopMs = append(r.stopMs, us.capture.StopMs...)
	for _, q := range us.results {
		r.topics[q.Topic].add(q)
		r.Overall.add(q)
		r.Questions = append(r.Questions, q)
	}
}

func (r *Report) finish(took time.Duration) {
	r.Seconds = math.Round(took.Seconds()*10) / 10
	r.Capture.StopMs = dist(r.stopMs)
	r.MemoryTokens = dist(r.memT)
	// The baseline's budget: engram's mean injection over the whole run.
	budget := int(math.Round(benchkit.Mean(r.Overall.tokens) * 4))
	for _, name := range slices.Sorted(maps.Keys(r.topics)) {
		s := r.topics[name]
		if s.Questions == 0 {
			continue
		}
		s.finish(budget)
		r.Topics = append(r.Topics, s)
	}
	r.Overall.finish(budget)
}

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

func (r *Report) print(w io.Writer) {
	env := "none"
	if len(r.Settings.Environment) > 0 {
		env = strings.Join(r.Settings.Environment, " ")
	}
	fmt.Fprintf(w, "PrefEval through engram's hooks (offline; ENGRAM_EMBED_* passed: %s), %d users, %d questions, %.0f s\n",
		env, len(r.Users), r.Overall.Questions, r.Seconds)
	if len(r.Users) > 0 {
		fmt.Fprintf(w, "capture: %d sessions, %d messages, %d Stop runs (wall mean %.0f ms, %d contract violations); fillers: %s\n\n",
			r.Capture.Sessions, r.Capture.Messages, r.Capture.StopRuns, r.Capture.StopMs.Mean, r.Capture.StopProblems, r.Settings.Fillers)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "topic\tq\thit inj\thit bites only\thit +MEMORY\tno-word q\tno-word hit inj\tno-word hit +MEM\ttok mean\ttok p95\tnothing inj\t"+
			"bites\tprecision\tBM25 same budget\tBM25 @600\tBM25 no-word @600\thook ms p95\tdeadline misses\t")
		for _, s := range append(append([]*Stats{}, r.Topics...), r.Overall) {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%d\t%.3f\t%.3f\t%.0f\t%.0f\t%.3f\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.0f\t%d\t\n",
				s.Name, s.Questions, s.HitRate, s.HitRateBitesOnly, s.HitRateMemory, s.NoShare, s.NoShareHitRate, s.NoShareMemRate, s.Tokens.Mean, s.Tokens.P95,
				s.NothingInjected, s.Bites, s.Precision, s.BM25HitRate, s.BM25HitRate600, s.BM25NoShare600, s.HookMs.P95, s.DeadlineMisses)
		}
		tw.Flush()
		o := r.Overall
		fmt.Fprintf(w, "\nBM25 same budget = %d chars (engram's mean injection); BM25 on no-word questions at that budget: %.3f\n",
			o.BM25Budget, o.BM25NoShareRate)
		fmt.Fprintf(w, "MEMORY.md always loaded, engram's part per user: mean %.0f tokens, max %.0f\n", r.MemoryTokens.Mean, r.MemoryTokens.Max)
		fmt.Fprintf(w, "bites: %d, of them the asked preference %d, another preference of the user %d, filler %d: precision %.3f (target >= %.2f)\n",
			o.Bites, o.BitesAsked, o.BitesOtherPref, o.Bites-o.BitesAsked-o.BitesOtherPref, o.Precision, targetPrecision)
		fmt.Fprintf(w, "target (issue 13): hit rate from the injected context alone >= %.2f at <= %d tokens per prompt; now %.3f at %.0f tokens mean (p95 %.0f)\n",
			targetHit, targetTokens, o.HitRate, o.Tokens.Mean, o.Tokens.P95)
	}
	if u := r.Unrelated; u != nil {
		fmt.Fprintf(w, "unrelated stores (%s): %d questions, %d got no injection: %.3f (target >= %.2f); injected tokens mean %.0f, p95 %.0f; %d bites\n",
			strings.Join(u.Homes, " "), u.Questions, u.Empty, u.NoInjection, targetNoInjection, u.Tokens.Mean, u.Tokens.P95, u.Bites)
	}
	fmt.Fprintf(w, "rule: %s\n", r.Settings.Rule)
}
