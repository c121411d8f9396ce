package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/setup"
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	opts, err := setupOptions(*dir)
	if err != nil {
		return err
	}
	r, err := setup.Install(ctx, opts)
	fmt.Fprint(e.stdout, r.String())
	return err
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
