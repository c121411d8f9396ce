package stophook

import (
	"context"
	"log/slog"
	"time"

	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/store"
)

// updateNotice writes the notice the prompt hook tells the user (see
// package notice) while a capture has waited for the worker longer than
// notice.After, and removes it otherwise: one indexed query and a stat or
// a read when nothing changes.
func updateNotice(ctx context.Context, home string, db *store.DB, now time.Time, log *slog.Logger) {
	oldest, ok, err := db.OldestPending(ctx)
	if err != nil {
		return
	}
	if !ok || now.Sub(oldest) <= notice.After {
		if err := notice.Remove(home); err != nil {
			log.Warn("remove the worker notice", "err", err)
		}
		return
	}
	n := notice.Notice{Oldest: oldest}
	if run, ok, err := db.LastRun(ctx, ""); err == nil && ok {
		n.LastRun = run.FinishedAt
	}
	if changed, err := notice.Write(home, n); err != nil {
		log.Warn("write the worker notice", "err", err)
	} else if changed {
		log.Warn("captures have waited for the worker since "+oldest.UTC().Format(time.RFC3339)+"; the prompt hook tells the user once a day", "last_run", n.LastRun)
	}
}
