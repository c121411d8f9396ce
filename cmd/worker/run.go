package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
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
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// flagError is the error of a failed fs.Parse: a usage error, or
// flag.ErrHelp itself when -h was asked for (the flags are printed; Main
// exits 0).
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err.Error()}
}

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags("run", e.stderr)
	quiet := fs.Bool("quiet", false, "print nothing on success")
	withBackfill := fs.Bool("backfill", false, "first capture every existing transcript (the installer's first cycle)")
	force := fs.Bool("consolidate", false, "consolidate beliefs now, whatever the episode and time triggers say")
	settle := fs.Duration("settle", 0, "first wait up to this long for the transcripts of sessions active in the last minute to be written (the Stop hook's background run)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *withBackfill && *force {
		return usagef("--backfill and --consolidate cannot be combined (a backfill consolidates when its triggers say so)")
	}
	if *settle < 0 || *settle > time.Minute {
		return usagef("--settle %v: want a duration from 0 to 1m", *settle)
	}
	return locked(ctx, e, false, func(s *session) error {
		if *settle > 0 {
			if n, err := capture.Settle(ctx, s.db, time.Now().Add(-time.Minute), *settle, settleQuiet); err != nil {
				return err
			} else if n > 0 {
				s.log.Info("settle: transcripts still missing or growing; the next run's sweep takes them", "sessions", n)
			}
		}
		return runCycle(ctx, e, s, *withBackfill, *force, *quiet)
	})
}

// settleQuiet is how long a transcript must not have grown for --settle to
// take its turn as written.
const settleQuiet = 300 * time.Millisecond

func runCycle(ctx context.Context, e *env, s *session, withBackfill, force, quiet bool) error {
	if withBackfill {
		return backfill(ctx, e, s, true)
	}
	comp, err := worker.NewComponents(ctx, s.cfg, s.log)
	if err != nil {
		return err
	}
	defer comp.Close()
	comp.ForceConsolidation = force
	runID, err := s.db.StartRun(ctx, "run")
	if err != nil {
		return err
	}
	st, runErr := worker.Cycle(ctx, s.cfg, s.db, comp, s.log)
	if err := s.db.FinishRun(context.WithoutCancel(ctx), runID, st, runErr); err != nil {
		s.log.Error("record run", "err", err)
	}
	s.log.Info("cycle", "stats", st, "err", runErr)
	if runErr == nil {
		// The captures are taken: the next Stop writes the notice again if
		// some still wait.
		if err := notice.Remove(s.cfg.Home); err != nil {
			s.log.Warn("remove the worker notice", "err", err)
		}
	}
	if !quiet || runErr != nil {
		fmt.Fprintf(e.stdout, "spool: %d files, %d captures; sweep: %d sessions, %d captures; ingest: %d captures -> %d episodes (%d merged, %d skipped, %d failed) in %d ms\n",
			st.SpoolFiles, st.SpoolCaptures, st.SweptSessions, st.SweptCaptures, st.Ingest.Captures, st.Ingest.Episodes,
			st.Ingest.Merged, st.Ingest.Skipped, st.Ingest.Failed, st.Millis)
		if r := st.Reembed; r.Episodes+r.Beliefs > 0 {
			fmt.Fprintf(e.stdout, "vectors: %d episodes and %d beliefs re-embedded by %s, %d episodes left\n",
				r.Episodes, r.Beliefs, comp.Embedder.Name(), r.Left)
		}
		fmt.Fprintln(e.stdout, beliefLine(st.Beliefs))
		if sh := st.Share; sh != nil {
			if st.ShareError != "" {
				fmt.Fprintf(e.stdout, "share: not synced (%s); %d changes wait for the next cycle\n", st.ShareError, sh.Pending)
			} else {
				fmt.Fprintf(e.stdout, "share: pushed %d, forgotten %d; pulled %d (%d new, %d changed, %d removed) in %d ms\n",
					sh.Pushed, sh.Tombstones, sh.Pulled, sh.Inserted, sh.Updated, sh.Deleted, sh.Millis)
			}
		}
		if r := st.Review; r.LongTerm+r.Core+r.Waiting > 0 {
			fmt.Fprintf(e.stdout, "review: %d to long-term, %d to core, %d waiting (engram-worker review --list)\n",
				r.LongTerm, r.Core, r.Waiting)
		}
		p := st.Promotion
		fmt.Fprintf(e.stdout, "MEMORY.md: %d promoted, %d demoted, %d removed, %d graduated, %d compressed, %d files written\n",
			p.Promoted, p.Demoted, p.Removed, p.Graduated, p.Compressed, p.Files)
		for _, problem := range p.Problems {
			fmt.Fprintf(e.stdout, "MEMORY.md: left alone: %s\n", problem)
		}
		if st.Released+st.Quarantined > 0 {
			fmt.Fprintf(e.stdout, "quarantine: %d items held (engram-worker quarantine list), %d tried again by this build\n",
				st.Quarantined, st.Released)
		}
		for _, f := range st.Failures {
			fmt.Fprintf(e.stdout, "failed: %s (the other steps ran)\n", f.Step)
		}
	}
	return runErr
}

// cmdSweep captures without ingesting: the spool drain and the transcript
// sweep of a cycle, for when captures are all one wants to bring up to date.
func cmdSweep(ctx context.Context, e *env, args []string) error {
	fs := newFlags("sweep", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return locked(ctx, e, false, func(s *session) error {
		st, err := worker.Capture(ctx, s.cfg, s.db, s.log)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "spool: %d files, %d captures; sweep: %d sessions, %d captures\n",
			st.SpoolFiles, st.SpoolCaptures, st.SweptSessions, st.SweptCaptures)
		return nil
	})
}

// locked opens the store and runs fn under the worker's single-instance
// lock. When another run holds it, a scheduled command (busyIsError false)
// says so and succeeds; a command the user asked for fails.
func locked(ctx context.Context, e *env, busyIsError bool, fn func(*session) error) error {
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	lk, err := worker.Lock(s.cfg.Home)
	if errors.Is(err, worker.ErrBusy) {
		if busyIsError {
			return fmt.Errorf("%w; try again when it has finished", err)
		}
		fmt.Fprintln(e.stdout, "engram-worker: another engram-worker run is in progress; nothing to do")
		return nil
	}
	if err != nil {
		return err
	}
	defer lk.Unlock()
	return fn(s)
}

// beliefLine is the one-line account of a consolidation.
func beliefLine(b consolidate.Stats) string {
	if b.Skipped != "" {
		return "beliefs: not due (" + b.Skipped + ")"
	}
	line := fmt.Sprintf("beliefs: %d episodes in %d clusters -> %d formed, %d supported, %d contradicted, %d partial, %d revised, %d split, %d merged, %d archived",
		b.Episodes, b.Clusters, b.Created, b.Supported, b.Contradicted, b.Partial, b.Revised, b.Split, b.Merged, b.Archived)
	if b.Deferred {
		line += " (budget reached: the rest waits for the next cycle)"
	}
	return line
}
