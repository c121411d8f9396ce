// Command replay replays real Claude Code session transcripts through the
// real engram: the three binaries built from this tree run as processes on a
// real SQLite store in a temporary HOME, in the order the prompts were
// typed. Before each prompt's turn is written to its transcript the prompt
// hook gets the prompt (what it injects is recorded), then the turn's lines
// are appended and the Stop hook captures them; the worker runs whenever
// the prompts' clock crosses a day (-worker-every) and once at the end.
//
//	go run ./bench/replay -transcripts DIR [-out DIR] [-json FILE]
//	go run ./bench/replay -entirecontext DIR [-entirecontext-cwd PATH]
//	go run ./bench/replay -label FILE
//
// See bench/replay/README.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

func main() {
	if err := run(); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	transcripts := fs.String("transcripts", "", "directory of Claude Code transcripts (*.jsonl, searched recursively)")
	ec := fs.String("entirecontext", "", "directory of entirecontext session records (sessions/<id>/{meta.json,transcript.jsonl}) to convert and replay")
	ecCwd := fs.String("entirecontext-cwd", "/home/dev/entirecontext", "the cwd of the converted sessions (their records name none)")
	ecTypes := fs.String("entirecontext-types", "claude", "session_type values to convert, comma-separated")
	out := fs.String("out", "", "directory for the report, the injections, the label sample and the replay's HOME (default: a new temporary directory; never inside the repository)")
	jsonOut := fs.String("json", "", "also write the JSON report to this file")
	every := fs.Duration("worker-every", 24*time.Hour, "run engram-worker when the prompts' clock crosses a multiple of this (UTC); 0: only at the start and the end")
	deadline := fs.String("prompt-deadline", "", "ENGRAM_PROMPT_HOOK_DEADLINE for the prompt hook (default: engram's own, 150ms)")
	limit := fs.Int("limit", 0, "replay only the first N prompts")
	sample := fs.Int("sample", 200, "bites drawn into label-sample.jsonl for labelling (0: all)")
	seed := fs.Uint64("seed", 1, "seed of the label sample")
	label := fs.String("label", "", "summarise a labelled label-sample.jsonl and exit")
	prompts := fs.String("prompts", "", "write the real prompts in time order to this file (JSON lines: session, at, prompt) and exit, replaying nothing")
	quiet := fs.Bool("q", false, "print only the report")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *label != "" {
		return summariseLabels(*label, *jsonOut)
	}
	if *transcripts == "" && *ec == "" {
		return errors.New("give -transcripts DIR and/or -entirecontext DIR (or -label FILE)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	work := *out
	if work == "" {
		d, err := os.MkdirTemp("", "engram-replay-")
		if err != nil {
			return err
		}
		work = d
	}
	work, err := benchkit.OutsideRepo("-out", work)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(work, "home")); err == nil {
		return fmt.Errorf("-out %s holds a home/ of an earlier replay: choose a new directory", work)
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}
	}
	logf("work directory: %s", work)

	var in Input
	var sessions []*Session
	if *transcripts != "" {
		c, err := LoadDir(*transcripts)
		if err != nil {
			return err
		}
		in.Transcripts, in.Files, in.Skipped, in.Snapshots, in.Merged = *transcripts, c.Files, c.Skipped, c.Snapshots, c.Merged
		sessions = append(sessions, c.Sessions...)
	}
	if *ec != "" {
		dir := filepath.Join(work, "converted")
		st, err := ConvertEntireContext(*ec, dir, *ecCwd, strings.Split(*ecTypes, ","))
		if err != nil {
			return err
		}
		c, err := LoadDir(dir)
		if err != nil {
			return err
		}
		in.EntireContext, in.Converted = *ec, &st
		in.Files += c.Files
		for k, v := range c.Skipped {
			if in.Skipped == nil {
				in.Skipped = map[string]int{}
			}
			in.Skipped[k] += v
		}
		sessions = append(sessions, c.Sessions...)
		logf("converted %d sessions (%d turns) into %s", st.Sessions, st.Turns, dir)
	}
	if err := uniqueSessions(sessions); err != nil {
		return err
	}
	for _, s := range sessions {
		in.Turns += len(s.Turns)
		in.Lines += len(s.Lines)
	}
	in.Sessions = len(sessions)
	turns := Order(sessions)
	if *prompts != "" {
		return writePrompts(*prompts, turns)
	}
	logf("%d sessions, %d prompts; building the binaries", len(sessions), len(turns))

	bins, err := build(ctx, filepath.Join(work, "bin"))
	if err != nil {
		return err
	}
	injPath := filepath.Join(work, "injections.jsonl")
	injFile, err := os.OpenFile(injPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	r, err := NewReplayer(work, bins, sessions, injFile, Options{WorkerEvery: *every, PromptDeadline: *deadline,
		Limit: *limit, Quiet: *quiet, Log: os.Stderr})
	if err != nil {
		injFile.Close()
		return err
	}
	rep, runErr := r.Run(ctx, turns)
	if err := injFile.Close(); err != nil && runErr == nil {
		runErr = err
	}
	rep.Input = in
	rep.Outputs = map[string]string{"injections": injPath}

	if f, err := os.Open(injPath); err == nil {
		injections, err := ReadInjections(f)
		f.Close()
		if err == nil {
			p := filepath.Join(work, "label-sample.jsonl")
			if err := benchkit.WriteJSONL(p, SampleBites(injections, *sample, *seed)); err == nil {
				rep.Outputs["label sample"] = p
			}
		}
	}
	rep.Outputs["report"] = filepath.Join(work, "report.json")
	rep.Hooks.Stop, rep.Hooks.Prompt = benchkit.NewDist(rep.Hooks.StopMs), benchkit.NewDist(rep.Hooks.PromptMs)
	for _, p := range []string{rep.Outputs["report"], *jsonOut} {
		if p == "" {
			continue
		}
		if err := writeJSON(p, rep); err != nil {
			return err
		}
	}
	rep.Print(os.Stdout)
	return runErr
}

// PromptLine is one real prompt of -prompts.
type PromptLine struct {
	Session string    `json:"session"`
	At      time.Time `json:"at"`
	Prompt  string    `json:"prompt"`
	// Cwd is the session's cwd on the original machine (a replay recreates
	// it under its fs/ directory).
	Cwd string `json:"cwd,omitempty"`
}

// writePrompts writes each turn's prompt (those the hook would be asked
// about: not empty) as a JSON line.
func writePrompts(path string, turns []*Turn) error {
	var lines []PromptLine
	for _, t := range turns {
		if strings.TrimSpace(t.Prompt) == "" {
			continue
		}
		lines = append(lines, PromptLine{Session: t.Session.ID, At: t.At, Prompt: t.Prompt, Cwd: t.Session.Cwd})
	}
	return benchkit.WriteJSONL(path, lines)
}

// build builds the three binaries as scripts/install.sh does (see
// benchkit.BuildInstalled).
func build(ctx context.Context, dir string) (benchkit.Bins, error) {
	return benchkit.BuildInstalled(ctx, dir)
}

// uniqueSessions refuses two inputs that hold the same session: their
// transcripts would be written into one file.
func uniqueSessions(sessions []*Session) error {
	seen := map[string]*Session{}
	for _, s := range sessions {
		if o, ok := seen[s.ID]; ok {
			return fmt.Errorf("session %s is in both %s and %s", s.ID, o.Files[0], s.Files[0])
		}
		seen[s.ID] = s
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

func summariseLabels(path, jsonOut string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := SummariseLabels(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.Print(os.Stdout)
	if jsonOut != "" {
		return writeJSON(jsonOut, s)
	}
	return nil
}
