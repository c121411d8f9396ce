package capture

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// SweepStats counts what a sweep did.
type SweepStats struct {
	Sessions, Read, Captures, Missing int
}

// Sweep captures the complete lines written after the last pass of every
// session active since the given time. The transcript can lag behind the
// Stop hook, so the last lines of a session's final turn are often only on
// disk after its last Stop: this is the pass that picks them up.
func Sweep(ctx context.Context, db *store.DB, since time.Time, opt Options, log *slog.Logger) (SweepStats, error) {
	var st SweepStats
	sessions, err := db.RecentSessions(ctx, since)
	if err != nil {
		return st, err
	}
	for _, s := range sessions {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		st.Sessions++
		fi, err := os.Stat(s.TranscriptPath)
		if errors.Is(err, fs.ErrNotExist) {
			st.Missing++
			continue
		}
		if err != nil || fi.Size() <= s.Offset {
			continue
		}
		st.Read++
		n, err := Session(ctx, db, Request{SessionID: s.ID, TranscriptPath: s.TranscriptPath, CWD: s.CWD,
			Source: SourceSweep, Now: fi.ModTime()}, opt) // activity is when the file last grew, not now
		if err != nil {
			log.Warn("sweep: capture failed", "session", s.ID, "err", err)
			continue
		}
		st.Captures += n
	}
	return st, nil
}

// Settle waits, up to max, until the transcript of every session active
// since the given time exists and has not grown for quiet: the client may
// run the Stop hook before it writes the turn, and a worker started by
// that hook would otherwise sweep before the turn is on disk (and, with no
// scheduler, leave it until the next session). It returns how many
// transcripts were still missing or growing when it gave up.
func Settle(ctx context.Context, db *store.DB, since time.Time, max, quiet time.Duration) (int, error) {
	sessions, err := db.RecentSessions(ctx, since)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(max)
	for {
		unsettled := 0
		now := time.Now()
		for _, s := range sessions {
			fi, err := os.Stat(s.TranscriptPath)
			if err != nil || now.Sub(fi.ModTime()) < quiet {
				unsettled++
			}
		}
		if unsettled == 0 || !now.Before(deadline) {
			return unsettled, nil
		}
		select {
		case <-ctx.Done():
			return unsettled, ctx.Err()
		case <-time.After(min(100*time.Millisecond, time.Until(deadline))):
		}
	}
}
