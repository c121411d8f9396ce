// Package stophook is engram-hook-stop: Claude Code's Stop hook. It captures
// the turn that just ended and never disturbs Claude Code: it prints nothing,
// and whatever goes wrong it does less, logs, and lets the process exit 0.
package stophook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/store"
)

// Run handles one Stop hook invocation with its input on stdin.
func Run(ctx context.Context, cfg config.Config, stdin io.Reader, log *slog.Logger) error {
	start := time.Now()
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	if err := hookio.ValidSessionID(in.SessionID); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StopHookDeadline)
	defer cancel()
	req := capture.Request{
		SessionID: in.SessionID, TranscriptPath: in.TranscriptPath, CWD: in.CWD,
		LastAssistantMessage: in.LastAssistantMessage, PromptID: in.PromptID, Source: capture.SourceStop, Now: start,
	}
	opt := capture.OptionsFrom(cfg)
	if err := hookio.ValidTranscriptPath(in.TranscriptPath, in.SessionID); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// Under load the client may run the hook before its first write of
		// the transcript. Make the session known, so that the worker's
		// sweep reads the whole file once it exists: the turn is not lost.
		return register(ctx, cfg, req, log, err, start)
	}

	// Leave a third of the deadline for the spool fallback.
	busy := cfg.StopHookDeadline * 2 / 3
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{MustExist: true, BusyTimeout: busy})
	if err != nil {
		return toSpool(cfg, nil, req, opt, log, fmt.Sprintf("open store: %v", err))
	}
	defer db.Close()
	n, err := capture.Session(ctx, db, req, opt)
	if err == nil {
		log.Debug("captured", "session", in.SessionID, "captures", n, "ms", time.Since(start).Milliseconds())
		lookAfterWorker(ctx, cfg, db, start, log)
		return nil
	}
	if errors.Is(err, capture.ErrTranscript) {
		return err // nothing readable to keep; the offset did not move, a later pass retries
	}
	return toSpool(cfg, db, req, opt, log, fmt.Sprintf("commit: %v", err))
}

// register records a session whose transcript does not exist yet (offset
// 0, nothing pending), in the store or, failing that, in the spool.
func register(ctx context.Context, cfg config.Config, req capture.Request, log *slog.Logger, why error, now time.Time) error {
	log.Warn("transcript not written yet; session registered for the worker's sweep", "session", req.SessionID, "err", why)
	p := capture.Pass{Request: req}
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{MustExist: true, BusyTimeout: cfg.StopHookDeadline * 2 / 3})
	if err == nil {
		defer db.Close()
		if _, known, gerr := db.GetSession(ctx, req.SessionID); gerr == nil && known {
			lookAfterWorker(ctx, cfg, db, now, log)
			return nil // already registered: the sweep will read it
		}
		if _, err = db.CommitCaptures(ctx, p.Commit(store.Session{}, capture.OptionsFrom(cfg))); err == nil || errors.Is(err, store.ErrOffsetMoved) {
			lookAfterWorker(ctx, cfg, db, now, log) // its sweep reads the turn
			return nil
		}
	}
	if _, serr := capture.ToSpool(cfg.SpoolDir(), p, fmt.Sprintf("register: %v", err)); serr != nil {
		return fmt.Errorf("register session %s: %v; spool: %w", req.SessionID, err, serr)
	}
	return nil
}

// toSpool captures the turn into the spool directory when the store cannot
// take it. It resumes from the stored offset when the store can still be read
// (a locked database still serves reads), else from what was spooled before.
func toSpool(cfg config.Config, db *store.DB, req capture.Request, opt capture.Options, log *slog.Logger, reason string) error {
	prev := capture.SpooledState(cfg.SpoolDir(), req.SessionID)
	if db != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		s, ok, err := db.GetSession(ctx, req.SessionID)
		cancel()
		if err == nil && ok && s.Offset >= prev.Offset {
			prev = s
		}
	}
	p, err := capture.Read(req, prev, opt)
	if err != nil {
		return fmt.Errorf("%s; spool: %w", reason, err)
	}
	path, err := capture.ToSpool(cfg.SpoolDir(), p, reason)
	if err != nil {
		return fmt.Errorf("%s; spool: %w", reason, err)
	}
	log.Warn("capture spooled", "session", req.SessionID, "reason", reason, "file", path, "messages", len(p.Messages))
	return nil
}

// lookAfterWorker runs once the store holds the turn (or the session,
// for the worker's sweep): the notice for the prompt hook, and the
// fallback start of the worker.
func lookAfterWorker(ctx context.Context, cfg config.Config, db *store.DB, now time.Time, log *slog.Logger) {
	updateNotice(ctx, cfg.Home, db, now, log)
	if cfg.SelfSchedule {
		maybeStartWorker(ctx, cfg, db, now, log)
	}
}

// maybeStartWorker is the fallback for a worker no scheduler runs: see
// selfSchedule. A failure is logged; the capture is done already.
func maybeStartWorker(ctx context.Context, cfg config.Config, db *store.DB, now time.Time, log *slog.Logger) {
	s, err := newSelfScheduler(cfg, now)
	if err == nil {
		_, err = s.selfSchedule(ctx, db, log)
	}
	if err != nil {
		log.Warn("self-schedule", "err", err)
	}
}
