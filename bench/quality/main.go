// Command quality runs engram's retrieval benchmarks in one go and prints
// one report with the figures issue 13's "done when" reads:
//
//		go run ./bench/quality [-locomo ../shared/eval/locomo-dev.json] [-prefeval ../shared/eval/prefeval-dev.json]
//		                       [-conversations N] [-users N] [-out DIR] [-hook-timing]
//
//	 1. bench/locomo on the LoCoMo file, keeping its stores: evidence recall
//	    of categories 1-4 by the content-word rule, mean injected tokens, and
//	    plain BM25 given the same budget, per category;
//	 2. bench/prefeval on the PrefEval file: hit rates per topic (injected
//	    context alone, and with the MEMORY.md files), tokens, precision of the
//	    injected bites, plain BM25; and its questions sent to the LoCoMo
//	    stores of step 1 (nothing related stored): the share with no
//	    injection;
//	 3. with -hook-timing, bench/prompt-hook.sh (the prompt hook's
//	    whole-process time against the hello-world floor; slow).
//
// engram runs offline with its defaults, but the embedder's configuration
// passes through: every ENGRAM_EMBED_* variable of this command's
// environment reaches the worker and the hooks, so the same command
// measures engram with and without a model, e.g.
//
//	ENGRAM_EMBED_MODEL_DIR=$HOME/.claude-memory/models/minilm go run ./bench/quality
//
// A data file that is absent is skipped with a note.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

type options struct {
	locomo, prefeval string
	conversations    int
	users            int
	fillers          int
	out              string
	hookTiming       bool
	promptDeadline   string
}

func main() {
	var o options
	flag.StringVar(&o.locomo, "locomo", "../shared/eval/locomo-dev.json", "LoCoMo-format file (skipped when absent)")
	flag.StringVar(&o.prefeval, "prefeval", "../shared/eval/prefeval-dev.json", "PrefEval-format file (skipped when absent)")
	flag.IntVar(&o.conversations, "conversations", 0, "LoCoMo conversations (0: all)")
	flag.IntVar(&o.users, "users", 30, "PrefEval users")
	flag.IntVar(&o.fillers, "fillers", -1, "PrefEval filler conversations per user (-1: all)")
	flag.StringVar(&o.out, "out", "bench/out", "directory of the JSON reports (locomo.json, prefeval.json)")
	flag.BoolVar(&o.hookTiming, "hook-timing", false, "also run bench/prompt-hook.sh (the prompt hook's whole-process time vs the hello-world floor; slow)")
	flag.StringVar(&o.promptDeadline, "prompt-deadline", "", "ENGRAM_PROMPT_HOOK_DEADLINE for both benchmarks (default: engram's own)")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quality:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, w io.Writer) error {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "engram-quality-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	env := benchkit.Passed()
	envLine := "none"
	if len(env) > 0 {
		envLine = strings.Join(env, " ")
	}
	fmt.Fprintf(w, "engram quality report, %s; embedder configuration passed to engram (ENGRAM_EMBED_*): %s\n\n",
		time.Now().UTC().Format(time.RFC3339), envLine)

	var cmds []string
	var loc *locomoReport
	var pref *prefevalReport
	unrelated := ""
	if _, err := os.Stat(o.locomo); err != nil {
		fmt.Fprintf(w, "LoCoMo: skipped (%v)\n\n", err)
	} else {
		unrelated = filepath.Join(tmp, "locomo-homes")
		out := filepath.Join(o.out, "locomo.json")
		args := []string{"-data", o.locomo, "-diagnose=false", "-keep", unrelated, "-out", out, "-q"}
		if o.conversations > 0 {
			args = append(args, "-limit", fmt.Sprint(o.conversations))
		}
		if o.promptDeadline != "" {
			args = append(args, "-prompt-deadline", o.promptDeadline)
		}
		cmd := "go run ./bench/locomo " + strings.Join(args, " ")
		cmds = append(cmds, cmd)
		fmt.Fprintf(w, "== %s\n", cmd)
		if err := goRun(ctx, w, "./bench/locomo", args); err != nil {
			return err
		}
		if loc, err = readLocomo(out); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if _, err := os.Stat(o.prefeval); err != nil {
		fmt.Fprintf(w, "PrefEval: skipped (%v)\n\n", err)
	} else {
		out := filepath.Join(o.out, "prefeval.json")
		args := []string{"-data", o.prefeval, "-users", fmt.Sprint(o.users), "-fillers", fmt.Sprint(o.fillers), "-out", out, "-q"}
		if unrelated != "" {
			args = append(args, "-unrelated", unrelated)
		}
		if o.promptDeadline != "" {
			args = append(args, "-prompt-deadline", o.promptDeadline)
		}
		cmd := "go run ./bench/prefeval " + strings.Join(args, " ")
		if unrelated != "" {
			cmd += "   # -unrelated: the homes the LoCoMo run kept"
		}
		cmds = append(cmds, cmd)
		fmt.Fprintf(w, "== %s\n", cmd)
		if err := goRun(ctx, w, "./bench/prefeval", args); err != nil {
			return err
		}
		if pref, err = readPrefeval(out); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	if o.hookTiming {
		cmd := "bash bench/prompt-hook.sh"
		cmds = append(cmds, cmd)
		fmt.Fprintf(w, "== %s\n", cmd)
		c := exec.CommandContext(ctx, "bash", "bench/prompt-hook.sh")
		c.Stdout, c.Stderr = w, os.Stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		fmt.Fprintln(w)
	}
	summary(w, loc, pref)
	fmt.Fprintf(w, "\ncommands (from the repository's root; environment: %s):\n", envLine)
	for _, c := range cmds {
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintf(w, "took %.0f s\n", time.Since(start).Seconds())
	return nil
}

// goRun runs one benchmark with go run, its report on w, its errors on
// stderr.
func goRun(ctx context.Context, w io.Writer, pkg string, args []string) error {
	c := exec.CommandContext(ctx, "go", append([]string{"run", pkg}, args...)...)
	c.Stdout, c.Stderr = w, os.Stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("go run %s: %w", pkg, err)
	}
	return nil
}

// The parts of the benchmarks' JSON reports the summary reads.
type locomoStats struct {
	Name          string  `json:"name"`
	Category      int     `json:"category"`
	EvidenceTurns int     `json:"evidence_turns"`
	Recall        float64 `json:"evidence_recall_content60"`
	Tokens        struct {
		Mean float64 `json:"mean"`
		P95  float64 `json:"p95"`
	} `json:"tokens_bytes_div_4"`
	BM25Budget int     `json:"bm25_budget_bytes"`
	BM25       float64 `json:"bm25_recall_content60_same_budget"`
	BM25600    float64 `json:"bm25_recall_content60_600_tokens"`
	// The same figures averaged over questions (bench/locomo).
	QRecall  float64 `json:"question_recall_content60"`
	QBM25    float64 `json:"bm25_question_recall_content60_same_budget"`
	QBM25600 float64 `json:"bm25_question_recall_content60_600_tokens"`
}

type locomoReport struct {
	Categories []locomoStats `json:"categories"`
	Cat14      locomoStats   `json:"categories_1_to_4"`
}

type prefevalStats struct {
	Name      string  `json:"name"`
	Questions int     `json:"questions"`
	Hit       float64 `json:"hit_rate_injected"`
	HitMem    float64 `json:"hit_rate_injected_plus_memory_md"`
	HitBites  float64 `json:"hit_rate_bites_only"`
	NoShare   float64 `json:"hit_rate_injected_sharing_no_word"`
	NoShareN  int     `json:"questions_sharing_no_content_word"`
	NoShareBM float64 `json:"bm25_hit_rate_same_budget_sharing_no_word"`
	Tokens    struct {
		Mean float64 `json:"mean"`
		P95  float64 `json:"p95"`
	} `json:"injected_tokens"`
	Precision float64 `json:"bite_precision"`
	BM25      float64 `json:"bm25_hit_rate_same_budget"`
	BM25600   float64 `json:"bm25_hit_rate_600_tokens"`
}

type prefevalReport struct {
	Topics       []prefevalStats `json:"topics"`
	Overall      prefevalStats   `json:"overall"`
	MemoryTokens struct {
		Mean float64 `json:"mean"`
		Max  float64 `json:"max"`
	} `json:"memory_md_engram_tokens_per_user"`
	Unrelated *struct {
		Questions   int     `json:"questions"`
		NoInjection float64 `json:"no_injection_share"`
	} `json:"unrelated"`
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func readLocomo(path string) (*locomoReport, error) {
	var r locomoReport
	return &r, readJSON(path, &r)
}

func readPrefeval(path string) (*prefevalReport, error) {
	var r prefevalReport
	return &r, readJSON(path, &r)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// summary prints the figures of issue 13's "done when", each with its
// target.
func summary(w io.Writer, loc *locomoReport, pref *prefevalReport) {
	fmt.Fprintln(w, "== summary (issue 13, done when)")
	if pref != nil {
		o := pref.Overall
		fmt.Fprintf(w, "PrefEval: hit rate, injected context alone: %.3f at %.0f tokens mean (p95 %.0f); target >= 0.70 at <= 600: %s "+
			"(bites alone, without engram's framing: %.3f)\n",
			o.Hit, o.Tokens.Mean, o.Tokens.P95, verdict(o.Hit >= 0.70 && o.Tokens.Mean <= 600), o.HitBites)
		fmt.Fprintf(w, "PrefEval: with the MEMORY.md files %.3f (engram's always-loaded part: mean %.0f tokens per user); "+
			"on the %d questions sharing no content word with their preference %.3f (BM25 same budget %.3f); "+
			"BM25 same budget %.3f, @600 tokens %.3f\n", o.HitMem, pref.MemoryTokens.Mean, o.NoShareN, o.NoShare, o.NoShareBM, o.BM25, o.BM25600)
		fmt.Fprintf(w, "precision: injected bites that are a preference of the user: %.3f; target >= 0.80: %s\n", o.Precision, verdict(o.Precision >= 0.80))
		if u := pref.Unrelated; u != nil {
			fmt.Fprintf(w, "precision: PrefEval questions against the LoCoMo stores, no injection: %.3f of %d; target >= 0.90: %s\n",
				u.NoInjection, u.Questions, verdict(u.NoInjection >= 0.90))
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "PrefEval topic\tq\thit inj\thit +MEMORY\tno-word hit\ttok mean\ttok p95\tprecision\tBM25 same\tBM25 @600\t")
		for _, s := range append(append([]prefevalStats{}, pref.Topics...), pref.Overall) {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t\n", s.Name, s.Questions, s.Hit, s.HitMem, s.NoShare,
				s.Tokens.Mean, s.Tokens.P95, s.Precision, s.BM25, s.BM25600)
		}
		tw.Flush()
	}
	if loc != nil {
		c := loc.Cat14
		for _, scale := range []struct {
			name       string
			recall     func(locomoStats) float64
			bm25       func(locomoStats) float64
			whatRecall string
		}{
			{"", func(s locomoStats) float64 { return s.Recall }, func(s locomoStats) float64 { return s.BM25 }, "evidence recall (share of evidence turns)"},
			{" per question", func(s locomoStats) float64 { return s.QRecall }, func(s locomoStats) float64 { return s.QBM25 },
				"evidence recall per question (each question's share of its evidence turns, averaged)"},
		} {
			below := []string{}
			for _, s := range loc.Categories {
				if s.Category >= 1 && s.Category <= 4 && s.EvidenceTurns > 0 && scale.recall(s) < scale.bm25(s) {
					below = append(below, fmt.Sprintf("%d %s", s.Category, s.Name))
				}
			}
			fmt.Fprintf(w, "LoCoMo: categories 1-4 %s %.3f at %.0f tokens mean; target >= 0.75 at <= 600: %s\n",
				scale.whatRecall, scale.recall(c), c.Tokens.Mean, verdict(scale.recall(c) >= 0.75 && c.Tokens.Mean <= 600))
			if len(below) == 0 {
				fmt.Fprintf(w, "LoCoMo%s: not below plain BM25 at the same budget in any category: met\n", scale.name)
			} else {
				fmt.Fprintf(w, "LoCoMo%s: not below plain BM25 at the same budget in any category: NOT met (below in %s)\n", scale.name, strings.Join(below, ", "))
			}
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "LoCoMo category\tevidence\tengram recall\ttok mean\ttok p95\tBM25 same budget\tBM25 @600\t"+
			"per question: engram\tBM25 same budget\tBM25 @600\t")
		for _, s := range append(append([]locomoStats{}, loc.Categories...), c) {
			if s.EvidenceTurns == 0 {
				continue
			}
			name := s.Name
			if s.Category > 0 {
				name = fmt.Sprintf("%d %s", s.Category, s.Name)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, s.EvidenceTurns, s.Recall, s.Tokens.Mean, s.Tokens.P95,
				s.BM25, s.BM25600, s.QRecall, s.QBM25, s.QBM25600)
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "prompt hook time vs the hello-world floor: bash bench/prompt-hook.sh (or -hook-timing)")
}
