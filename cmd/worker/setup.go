package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// binDir is the directory of the running engram-worker: setup installs the
// hooks that sit next to it.
func binDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe), nil
}

func cmdSetup(ctx context.Context, e *env, args []string) error {
	fs := newFlags("setup", e.stderr)
	dir := fs.String("bin-dir", "", "directory holding the three engram binaries (default: this binary's)")
	llmChoice := fs.String("llm", "", "record the model backend in the env file: claude (the claude binary, within a daily budget), openai or off")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *llmChoice != "" && *llmChoice != config.LLMClaude && *llmChoice != config.LLMOpenAI && *llmChoice != config.LLMOff {
		return usagef("--llm %q: must be claude, openai or off", *llmChoice)
	}
	opts, err := setupOptions(*dir)
	if err != nil {
		return err
	}
	r, err := setup.Install(ctx, opts)
	fmt.Fprint(e.stdout, r.String())
	if err != nil {
		return err
	}
	return setupLLM(e, opts, *llmChoice)
}

// setupLLM records the model backend the user chose with --llm, or offers
// the claude binary when it is there and nothing is configured.
func setupLLM(e *env, opts setup.Options, choice string) error {
	if choice == "" {
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		if offer := setup.ClaudeOffer(cfg); offer != "" {
			fmt.Fprint(e.stdout, "\n"+offer)
		}
		return nil
	}
	if choice == config.LLMClaude {
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		if _, err := claudellm.FindBinary(cfg.ClaudeBin); err != nil {
			return fmt.Errorf("--llm claude: %w", err)
		}
	}
	path := filepath.Join(opts.Home, setup.EnvFileName)
	ch, err := setup.RecordLLM(path, choice)
	if err != nil {
		return err
	}
	if ch.Changed {
		fmt.Fprintf(e.stdout, "%s: set ENGRAM_LLM=%s\n", path, choice)
	} else {
		fmt.Fprintf(e.stdout, "%s: ENGRAM_LLM=%s already\n", path, choice)
	}
	return nil
}

func cmdUninstall(ctx context.Context, e *env, args []string) error {
	fs := newFlags("uninstall", e.stderr)
	dir := fs.String("bin-dir", "", "directory holding the three engram binaries (default: this binary's)")
	purge := fs.Bool("purge", false, "also delete engram's data directory (memories, logs)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts, err := setupOptions(*dir)
	if err != nil {
		return err
	}
	opts.Purge = *purge
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	opts.StripMemory = stripMemory(cfg, promote.LocationsFrom(cfg))
	r, err := setup.Uninstall(ctx, opts)
	fmt.Fprint(e.stdout, r.String())
	return err
}

func setupOptions(dir string) (setup.Options, error) {
	cfg, err := config.Load()
	if err != nil {
		return setup.Options{}, err
	}
	if dir == "" {
		if dir, err = binDir(); err != nil {
			return setup.Options{}, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return setup.Options{}, usagef("--bin-dir %q: %v", dir, err)
	}
	return setup.DefaultOptions(cfg, abs), nil
}

// uninstallWorkerWait bounds how long uninstall waits for a worker cycle
// that is running (it could write the MEMORY.md blocks again).
var uninstallWorkerWait = 30 * time.Second

// stripMemory is uninstall's MEMORY.md step: engram's blocks come out of
// every file the store lists, the global file and the autoMemoryDirectory
// one (loc is read before uninstall edits settings.json). It waits for a
// running cycle first and holds the worker's lock meanwhile. A store that
// cannot be read is said, and the usual places are searched instead;
// nothing here stops the rest of uninstall.
func stripMemory(cfg config.Config, loc promote.Locations) func(ctx context.Context) ([]setup.Change, []string, error) {
	return func(ctx context.Context) ([]setup.Change, []string, error) {
		var notes []string
		if _, err := os.Stat(cfg.Home); err == nil {
			lk, err := waitWorkerLock(ctx, cfg.Home, uninstallWorkerWait)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%v; if it writes MEMORY.md again, run uninstall again once it has finished", err))
			} else {
				defer lk.Unlock()
			}
		}
		list := func(context.Context) ([]store.MemoryFile, error) {
			return nil, errors.New("there is no store " + cfg.DBPath())
		}
		// The core-memory files: the global CLAUDE.md, and every file the
		// store lists.
		core := []store.CoreFile{{Path: filepath.Join(loc.ClaudeConfigDir, "CLAUDE.md")}}
		if _, err := os.Stat(cfg.DBPath()); !errors.Is(err, fs.ErrNotExist) {
			db, err := store.Open(ctx, cfg.DBPath(), store.Options{ReadOnly: true})
			if err != nil {
				list = func(context.Context) ([]store.MemoryFile, error) { return nil, err }
			} else {
				defer db.Close()
				list = db.MemoryFiles
				if fs, err := db.CoreFiles(ctx); err == nil {
					core = append(core, fs...)
				} else {
					notes = append(notes, fmt.Sprintf("the list of the CLAUDE.md and AGENTS.md files engram wrote could not be read (%v): a project's file keeps its block between %s and %s", err, promote.CoreBegin, promote.CoreEnd))
				}
			}
		}
		rep := promote.Clean(ctx, loc, list)
		var changes []setup.Change
		for _, f := range rep.Files {
			changes = append(changes, setup.Change{Path: f.Path, Changed: true, Removed: f.Removed, Actions: []string{f.Describe()}})
		}
		var coreErrs []error
		seen := map[string]bool{}
		for _, f := range core {
			if seen[f.Path] {
				continue
			}
			seen[f.Path] = true
			changed, removed, err := promote.StripCore(ctx, f.Path, f.Created)
			switch {
			case err != nil:
				coreErrs = append(coreErrs, fmt.Errorf("%s: engram's core-memory block is still in it (%w): delete the lines from %s to %s yourself",
					f.Path, err, promote.CoreBegin, promote.CoreEnd))
			case removed:
				changes = append(changes, setup.Change{Path: f.Path, Changed: true, Removed: true,
					Actions: []string{"took out engram's core-memory block; removed the file, which engram created and which held nothing else"}})
			case changed:
				changes = append(changes, setup.Change{Path: f.Path, Changed: true, Actions: []string{"took out engram's core-memory block"}})
			}
		}
		if rep.ListProblem != "" {
			notes = append(notes, fmt.Sprintf("the list of the MEMORY.md files engram wrote could not be read (%s): only %s were searched for engram's blocks; a file engram wrote elsewhere keeps them",
				rep.ListProblem, joinList(rep.Searched)))
		}
		var errs []error
		for _, f := range rep.Failed {
			if errors.Is(f.Err, promote.ErrSymlinkOutside) {
				notes = append(notes, f.Error())
			} else {
				errs = append(errs, f)
			}
		}
		return changes, notes, errors.Join(append(errs, coreErrs...)...)
	}
}

// waitWorkerLock takes the worker's lock, waiting up to wait for a running
// cycle to finish.
func waitWorkerLock(ctx context.Context, home string, wait time.Duration) (interface{ Unlock() error }, error) {
	deadline := time.Now().Add(wait)
	for {
		lk, err := worker.Lock(home)
		if err == nil {
			return lk, nil
		}
		if !errors.Is(err, worker.ErrBusy) || !time.Now().Before(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// joinList is "a", "a and b", "a, b and c".
func joinList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
