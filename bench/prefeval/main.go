// Command prefeval measures whether engram brings back a user's stated
// preference when a later question needs it, by PrefEval's protocol
// (explicit preferences; ../shared/eval/README.md), through the real
// interface and offline.
//
//	go run ./bench/prefeval [-data ../shared/eval/prefeval-dev.json] [-users 30] [-unrelated DIR] [-out bench/out/prefeval.json]
//
// Each simulated user u gets a fresh HOME (ENGRAM_HOME=$HOME/.claude-memory,
// CLAUDE_CONFIG_DIR=$HOME/.claude; no ENGRAM_* but the embedder's
// ENGRAM_EMBED_*, no OPENAI_API_KEY) with one project, $HOME/src/app (a git
// repository). `engram-worker run` creates the store. Then, sessions nine
// hours apart: the filler conversations, and for each topic preference
// number u mod (topic size) as the prompt of a session of its own (reply
// "Got it, I'll keep that in mind."), spread evenly among the fillers; the
// transcripts are written in Claude Code's format and engram-hook-stop runs
// after each turn. `engram-worker run`, `run --consolidate` and `run` follow,
// as the scheduled worker would; then each topic's question (same item) is
// the prompt of a fresh session sent to engram-hook-userprompt.
//
// Scored by the content-word rule (bench/internal/benchkit): a hit when at
// least 60% of the preference's distinct content words are in the injected
// context (alone, and with the MEMORY.md files the client loads). Reported
// per topic and overall: hit rates, the same on questions that share no
// content word with their preference, injected tokens (chars/4), engram's
// always-loaded MEMORY.md tokens per user, the share of injected bites that
// are preferences of the user, plain BM25 at the same budget and at 600
// tokens, and, with -unrelated DIR (the homes a `bench/locomo -keep DIR` run
// left), the share of the questions that get no injection from stores that
// hold nothing related.
//
// The data's licence (CC BY-NC) forbids copying it into this repository:
// the JSON report holds figures and ids only; -keep refuses a directory
// inside the repository.
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
	flag.StringVar(&opt.Data, "data", defaultDataRelPath, "PrefEval-format file; the run is skipped when it is absent")
	flag.StringVar(&opt.Out, "out", "bench/out/prefeval.json", "JSON report (figures and ids only); empty for none")
	flag.StringVar(&opt.Keep, "keep", "", "keep each user's HOME (transcripts, store, logs) under this directory, outside the repository")
	flag.StringVar(&opt.Reuse, "reuse", "", "ask the questions again of the users' homes an earlier -keep DIR run left (one worker cycle rewrites the recollection files; no capture)")
	flag.IntVar(&opt.Users, "users", defaultUsers, "simulated users (each asks one question per topic); 0 with -unrelated: only that run")
	flag.IntVar(&opt.Fillers, "fillers", -1, "filler conversations per user (-1: all)")
	flag.StringVar(&opt.Unrelated, "unrelated", "", "also send the questions to the stores under this directory (the HOMEs of a `bench/locomo -keep DIR` run) and report the share with no injection")
	flag.StringVar(&opt.PromptDeadline, "prompt-deadline", "", "set ENGRAM_PROMPT_HOOK_DEADLINE (default: engram's own)")
	flag.IntVar(&opt.Jobs, "jobs", 2, "users captured and asked at once")
	quiet := flag.Bool("q", false, "no progress on stderr")
	flag.Parse()
	if flag.NArg() > 0 || opt.Users < 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/prefeval [-data FILE] [-users N] [-unrelated DIR] [-out FILE.json]")
		flag.PrintDefaults()
		os.Exit(2)
	}
	if _, err := os.Stat(opt.Data); err != nil {
		fmt.Fprintf(os.Stderr, "prefeval: skipped: %v (the PrefEval file is not part of the repository; give its path with -data)\n", err)
		return
	}
	if !*quiet {
		opt.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, opt)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prefeval:", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
	if opt.Out != "" {
		if err := rep.writeJSON(opt.Out); err != nil {
			fmt.Fprintln(os.Stderr, "prefeval:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stdout, "report: %s\n", opt.Out)
	}
}
