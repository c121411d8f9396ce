// Command locomo measures engram's retrieval on a LoCoMo-format file through
// the real interface, offline.
//
//	go run ./bench/locomo -data ../shared/eval/locomo-dev.json [-out bench/out/locomo.json] [-keep DIR] [-limit N]
//
// For each conversation, in a fresh HOME (ENGRAM_HOME=$HOME/.claude-memory,
// CLAUDE_CONFIG_DIR=$HOME/.claude, no ENGRAM_LLM_* nor OPENAI_API_KEY):
//
//  1. the project is $HOME/src/<conversation>, a git repository, the cwd of
//     every session;
//  2. `engram-worker run` creates the store, as the installer's first cycle
//     does;
//  3. each LoCoMo session becomes one Claude Code session transcript under
//     $CLAUDE_CONFIG_DIR/projects/<sanitized cwd>/<uuid>.jsonl, in the real
//     transcript format, dated from the session's date_time. Consecutive
//     dialog turns pair into one Claude Code turn: the first is the user's
//     prompt, the second the assistant's text reply, each prefixed with its
//     speaker's name ("Ada: …"); a session with an odd number of turns
//     ends with a prompt alone. The transcript grows turn by turn and the
//     real engram-hook-stop runs after each turn with the Stop input;
//  4. `engram-worker run` ingests everything (local extractor, local
//     embedder) and writes the recollection files;
//  5. each question is the prompt of a fresh session (nothing is held back
//     as already injected) sent to the real engram-hook-userprompt; its
//     additionalContext is what the model would get.
//
// An evidence turn "reaches" the context by the rules in match.go (strict:
// its whole text is there; lenient: its first 60 characters are). The
// report gives, per LoCoMo category (1 multi-hop, 2 temporal, 3
// open-domain, 4 single-hop, 5 adversarial) and overall: evidence recall,
// the share of questions with any (and all) evidence reached, the share
// with nothing injected, injected size in bytes and approximate tokens
// (bytes/4 and words×4/3), and the hook's wall time. With -diagnose (the
// default) each missed turn is classed by cause (diagnose.go). A second
// table scores by the content-word rule of bench/internal/benchkit, per
// category and for categories 1-4: engram's evidence recall and injected
// tokens next to plain BM25 over the conversation's turns given the same
// budget (baseline.go) and 600 tokens.
//
// The embedder's ENGRAM_EMBED_* variables pass through to engram; every
// other ENGRAM_* variable is removed.
//
// The data's licence (CC BY-NC) forbids copying it into this repository:
// the JSON report holds figures and ids only; -show-misses prints text to
// the terminal only; -keep refuses a directory inside the repository.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	var opt options
	flag.StringVar(&opt.Data, "data", "", "LoCoMo-format file (required), e.g. ../shared/eval/locomo-dev.json")
	flag.StringVar(&opt.Out, "out", "bench/out/locomo.json", "JSON report (figures and ids only); empty for none")
	flag.StringVar(&opt.Keep, "keep", "", "keep each conversation's HOME (transcripts, store, logs) under this directory, outside the repository")
	flag.StringVar(&opt.Reuse, "reuse", "", "ask the questions again on the conversations kept by an earlier run's -keep DIR (one worker cycle rewrites the recollection files; no capture)")
	flag.IntVar(&opt.Limit, "limit", 0, "run only the first N conversations (0: all)")
	flag.IntVar(&opt.MaxQuestions, "max-questions", 0, "ask only the first N questions of each conversation (0: all)")
	flag.BoolVar(&opt.Captions, "captions", false, "append the caption of a shared photo to its turn's text")
	prefix := flag.Bool("speaker-prefix", true, "prefix each turn's text with \"Speaker: \" in the transcript")
	flag.StringVar(&opt.PromptDeadline, "prompt-deadline", "", "set ENGRAM_PROMPT_HOOK_DEADLINE (default: engram's own)")
	flag.BoolVar(&opt.Diagnose, "diagnose", true, "class each missed evidence turn by cause (exports the store, runs engram-worker recall)")
	flag.IntVar(&opt.ShowMisses, "show-misses", 0, "print up to N missed turns per cause and conversation, with text, to stderr")
	quiet := flag.Bool("q", false, "no progress on stderr")
	flag.Parse()
	opt.NoSpeakerPrefix = !*prefix
	if opt.Data == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/locomo -data FILE [-out FILE.json] [-keep DIR] [-limit N]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if _, err := os.Stat(opt.Data); err != nil {
		fmt.Fprintf(os.Stderr, "locomo: %v (the LoCoMo file is not part of the repository; give its path with -data)\n", err)
		os.Exit(1)
	}
	if !*quiet {
		opt.Log = os.Stderr
	}
	opt.Examples = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "locomo:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
	if opt.Out != "" {
		if err := rep.writeJSON(opt.Out); err != nil {
			fmt.Fprintln(os.Stderr, "locomo:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stdout, "report: %s\n", opt.Out)
	}
}
