package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/store"
)

// session is what most commands start from: configuration, logger, store.
type session struct {
	cfg config.Config
	log *slog.Logger
	db  *store.DB
}

func open(ctx context.Context) (*session, error) {
	cfg, err := config.Load()
	if err != nil {
		return nil, err
	}
	log := logx.New(cfg.LogDir(), "worker.log", cfg.LogLevel)
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		return nil, err
	}
	return &session{cfg: cfg, log: log, db: db}, nil
}

func (s *session) Close() error { return s.db.Close() }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("engram-worker "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// lockWorker takes the worker's single-instance lock without waiting.
func lockWorker(home string) (*flock.Flock, bool, error) {
	lk := flock.New(filepath.Join(home, "worker.lock"))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	return lk, ok, nil
}

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags("run", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return cycle(ctx, e, "run")
}

func cmdSweep(ctx context.Context, e *env, args []string) error {
	fs := newFlags("sweep", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return cycle(ctx, e, "sweep")
}

// cycle runs one worker cycle under the single-instance lock.
func cycle(ctx context.Context, e *env, kind string) error {
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	lk, ok, err := lockWorker(s.cfg.Home)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(e.stdout, "engram-worker: another run is in progress; nothing to do")
		return nil
	}
	defer lk.Unlock()
	start := time.Now()
	opt := capture.OptionsFrom(s.cfg)
	drained, err := capture.Drain(ctx, s.db, s.cfg.SpoolDir(), opt, s.log)
	if err != nil {
		return fmt.Errorf("drain spool: %w", err)
	}
	swept, err := capture.Sweep(ctx, s.db, start.Add(-s.cfg.SweepWindow), opt, s.log)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	s.log.Info("cycle", "kind", kind, "spool_files", drained.Files, "spool_captures", drained.Captures,
		"swept_sessions", swept.Read, "swept_captures", swept.Captures, "ms", time.Since(start).Milliseconds())
	fmt.Fprintf(e.stdout, "spool: %d files, %d captures; sweep: %d sessions read, %d captures\n",
		drained.Files, drained.Captures, swept.Read, swept.Captures)
	return nil
}
