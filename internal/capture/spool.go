package capture

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/transcript"
)

// ToSpool writes a pass that could not be committed to the spool directory.
func ToSpool(dir string, p Pass, reason string) (string, error) {
	return spool.Write(dir, spool.Entry{
		SessionID: p.Request.SessionID, TranscriptPath: p.Request.TranscriptPath, CWD: p.Request.CWD,
		Source: p.Request.Source, From: p.From, End: p.End,
		PendingReplyHash: p.Replies.Pending, LastReplyHash: p.Replies.Last,
		LastPromptID: p.Replies.Prompt, DeferredReplies: encodeDeferred(p.Replies.Deferred), CopiedBefore: p.CopiedBefore,
		Messages: p.Messages, CreatedAt: p.Request.Now, Reason: reason,
	})
}

// SpooledState is the best guess of a session's state when the database
// cannot be read: the end of its newest spooled pass, or the start.
func SpooledState(dir, sessionID string) store.Session {
	end, e, ok := spool.LastEnd(dir, sessionID)
	if !ok {
		return store.Session{}
	}
	return store.Session{ID: sessionID, Offset: end, PendingReplyHash: e.PendingReplyHash, LastReplyHash: e.LastReplyHash,
		LastPromptID: e.LastPromptID, DeferredReplies: e.DeferredReplies, CopiedBefore: e.CopiedBefore}
}

// DrainStats counts what a drain did.
type DrainStats struct {
	Files, Captures, Quarantined int
}

// Drain moves every spooled pass into the store, oldest first. Messages the
// store already covers (the session's offset moved past them, because a later
// pass read them again) are dropped, so draining never duplicates a turn and
// can be repeated after a crash. A file is removed only after its commit.
func Drain(ctx context.Context, db *store.DB, dir string, opt Options, log *slog.Logger) (DrainStats, error) {
	var st DrainStats
	files, err := spool.List(dir)
	if err != nil {
		return st, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if f.Err != nil {
			log.Error("spool file unreadable, moved aside", "file", f.Path, "err", f.Err)
			if err := spool.Quarantine(f.Path); err == nil {
				st.Quarantined++
			}
			continue
		}
		n, err := drainOne(ctx, db, f.Entry, opt)
		if err != nil {
			return st, fmt.Errorf("drain %s: %w", f.Path, err)
		}
		if err := os.Remove(f.Path); err != nil {
			return st, fmt.Errorf("drain: remove %s: %w", f.Path, err)
		}
		st.Files++
		st.Captures += n
	}
	return st, nil
}

func drainOne(ctx context.Context, db *store.DB, e spool.Entry, opt Options) (int, error) {
	prev, _, err := db.GetSession(ctx, e.SessionID)
	if err != nil {
		return 0, err
	}
	var kept []transcript.Message
	for _, m := range e.Messages {
		if m.Offset >= prev.Offset {
			kept = append(kept, m)
		}
	}
	now := e.CreatedAt
	if now.IsZero() {
		now = time.Now()
	}
	p := Pass{
		Request: Request{SessionID: e.SessionID, TranscriptPath: e.TranscriptPath, CWD: e.CWD, Source: SourceSpool, Now: now},
		From:    e.From, End: e.End, Messages: kept,
		Replies: replyState{Pending: e.PendingReplyHash, Last: e.LastReplyHash, Prompt: e.LastPromptID,
			Deferred: decodeDeferred(e.DeferredReplies)},
		CopiedBefore: e.CopiedBefore,
	}
	c := p.Commit(prev, opt)
	c.AnyOffset = true
	return db.CommitCaptures(ctx, c)
}
