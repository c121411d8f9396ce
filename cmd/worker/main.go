// Command engram-worker runs engram's background work (one cycle per `run`,
// started by a systemd timer or a launchd agent) and is the command line a
// user lives with.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sort"
	"syscall"

	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/worker"
)

// Exit codes scripts can rely on.
const (
	exitOK    = 0
	exitError = 1 // the command failed
	exitUsage = 2 // the command line was wrong
)

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type command struct {
	summary string
	run     func(ctx context.Context, env *env, args []string) error
}

var commands = map[string]command{
	"run":        {"run one worker cycle: drain the spool, sweep recent transcripts, ingest captures", cmdRun},
	"backfill":   {"capture every existing Claude Code transcript, then ingest (resumable)", cmdBackfill},
	"recall":     {"rank memories and beliefs for a query, with scores", cmdRecall},
	"expand":     {"show an episode or a belief in full", cmdExpand},
	"beliefs":    {"list beliefs with confidence, evidence and status", cmdBeliefs},
	"forget":     {"remove episodes or beliefs (ep_… or bl_…), or every one holding a text (--matching), with every copy", cmdForget},
	"quarantine": {"list the items a step of the worker failed on (list [--json]), or retry ID… / drop ID…", cmdQuarantine},
	"history":    {"show how a memory (ep_… or bl_…) came to be: every change, its cause, before and after", cmdHistory},
	"trace":      {"list the threads of work, or show one as a timeline: trace [TOPIC | tr_… | bx_… | ep_…] [--json]", cmdTrace},
	"export":     {"write episodes and beliefs as JSON Lines", cmdExport},
	"import":     {"merge a JSON Lines export into the store: add what is new, skip what is here, merge what differs", cmdImport},
	"doctor":     {"check the installation, the hooks, the scheduler, the database and the LLM endpoint", cmdDoctor},
	"setup":      {"install the hooks, the MCP server, the CLAUDE.md import line and the scheduler (idempotent)", cmdSetup},
	"uninstall":  {"remove what setup added; --purge also deletes the data", cmdUninstall},
	"sweep":      {"capture late transcript lines and drain the spool, without ingesting", cmdSweep},
	"review":     {"browse and edit every belief by level (a screen), list them (--list), or approve, deny, pin or edit them", cmdReview},
	"status":     {"show counts, the last run and the settings in use", cmdStatus},
	"version":    {"print the version", cmdVersion},
	"model":      {"install the sentence embedder's model (model install DIR) or show its state (model status)", cmdModel},
	"share":      {"share memory through PostgreSQL: init, enable, disable, status, sync, --dry-run", cmdShare},
	"mcp":        {"serve engram's memory tools to Claude Code over stdio (MCP; setup registers it)", cmdMCP},
}

// env is what a command may touch: its streams and the environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// heapLimit is the worker's soft limit on the Go heap unless GOMEMLIMIT
// says otherwise: a backfill of 20,000 turns peaks at 245 MB of RSS
// with the sentence embedder's 91 MB of mapped weights (315 MB without the
// limit, at the same speed). The runtime collects harder near it; it never
// fails an allocation for it.
const heapLimit = 128 << 20

func main() {
	loadEnvFile()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(heapLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Main runs the command line and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	worker.SetBuild(version, commit)
	e := &env{stdin: os.Stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 { // a mistake: the usage goes with the errors
		usage(stderr)
		return exitUsage
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "engram-worker: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
	err := cmd.run(ctx, e, args[1:])
	if err == nil || errors.Is(err, flag.ErrHelp) { // -h: the flags went to stderr
		return exitOK
	}
	fmt.Fprintf(stderr, "engram-worker %s: %v\n", args[0], err)
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: engram-worker <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}

// loadEnvFile reads $ENGRAM_HOME/env (ENGRAM_* settings, OPENAI_API_KEY)
// before the configuration: launchd and cron cannot read an environment
// file themselves. Variables already set win; a file readable by others is
// refused, because it may hold an API key.
func loadEnvFile() {
	home := os.Getenv("ENGRAM_HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return
		}
		home = filepath.Join(h, ".claude-memory")
	}
	if _, err := setup.LoadEnvFile(filepath.Join(home, setup.EnvFileName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "engram-worker: %v\n", err)
	}
}
