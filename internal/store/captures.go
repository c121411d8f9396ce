package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrOffsetMoved means another writer captured the same session since its
// offset was read: the caller re-reads from the new offset.
var ErrOffsetMoved = errors.New("store: session offset moved")

// Session is the capture state of one Claude Code session.
type Session struct {
	ID               string
	TranscriptPath   string
	CWD              string
	Project          string
	ProjectPath      string
	Offset           int64 // end of the last complete line captured
	PendingReplyHash string
	LastReplyHash    string
	// LastPromptID is the promptId of the latest prompt captured.
	LastPromptID string
	// DeferredReplies holds, as JSON, final replies taken from Stop inputs
	// whose prompt the transcript did not hold yet (see package capture).
	DeferredReplies string
	// CopiedBefore is set while the transcript may still hold lines copied
	// from the session it was forked from (see transcript.Result).
	CopiedBefore time.Time
	LastActivity time.Time
}

// Capture is one captured turn (or the late tail of one).
type Capture struct {
	ID             int64
	SessionID      string
	Project        string
	ProjectPath    string
	CWD            string
	TranscriptPath string
	ByteStart      int64
	ByteEnd        int64
	TurnAt         time.Time
	Content        string
	Messages       string // JSON
	ContentHash    string
	Continuation   bool
	Source         string
	Status         string
	Attempts       int
	Error          string
	EpisodeID      string
	CreatedAt      time.Time
}

// Capture statuses.
const (
	CapturePending = "pending"
	CaptureDone    = "done"
	CaptureSkipped = "skipped"
	CaptureFailed  = "failed"
)

// GetSession returns the capture state of a session; ok is false when the
// session has never been captured.
func (db *DB) GetSession(ctx context.Context, id string) (s Session, ok bool, err error) {
	var last, copied int64
	err = db.sql.QueryRowContext(ctx, `SELECT session_id, transcript_path, cwd, project, project_path,
		byte_offset, pending_reply_hash, last_reply_hash, last_prompt_id, deferred_replies, copied_before, last_activity_at
		FROM sessions WHERE session_id = ?`, id).
		Scan(&s.ID, &s.TranscriptPath, &s.CWD, &s.Project, &s.ProjectPath, &s.Offset, &s.PendingReplyHash, &s.LastReplyHash,
			&s.LastPromptID, &s.DeferredReplies, &copied, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, false, nil
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("store: read session %s: %w", id, err)
	}
	s.LastActivity, s.CopiedBefore = fromMS(last), fromMS(copied)
	return s, true, nil
}

// CaptureCommit is the outcome of one capture pass over a session's
// transcript: the captures found in [From, Session.Offset) and the
// session's new state.
type CaptureCommit struct {
	// From is the offset the pass started reading at; the commit fails with
	// ErrOffsetMoved if the stored offset is no longer From.
	From     int64
	Session  Session
	Captures []Capture
	// AnyOffset skips the From check and never moves the offset backwards
	// (the spool drain, whose captures were trimmed to the stored offset).
	AnyOffset bool
}

// CommitCaptures stores the captures of a pass and the session's new offset
// in one transaction. A capture whose (session, byte range) is already stored
// is skipped, so replaying a pass stores nothing twice. It returns how many
// captures were inserted.
func (db *DB) CommitCaptures(ctx context.Context, c CaptureCommit) (int, error) {
	now := time.Now().UnixMilli()
	inserted := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		inserted = 0
		var cur int64
		var curPending, curLast, curPrompt, curDeferred string
		var curCopied int64
		err := tx.QueryRowContext(ctx, `SELECT byte_offset, pending_reply_hash, last_reply_hash, last_prompt_id, deferred_replies,
			copied_before FROM sessions WHERE session_id = ?`,
			c.Session.ID).Scan(&cur, &curPending, &curLast, &curPrompt, &curDeferred, &curCopied)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if !c.AnyOffset && cur != c.From {
			return fmt.Errorf("%w: %s at %d, pass started at %d", ErrOffsetMoved, c.Session.ID, cur, c.From)
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO captures(session_id, project, project_path, cwd,
			transcript_path, byte_start, byte_end, turn_at, content, messages, content_hash, continuation,
			source, status, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?)
			ON CONFLICT(session_id, byte_start, byte_end) DO NOTHING`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, cp := range c.Captures {
			if c.AnyOffset && cp.ByteStart < cur {
				continue
			}
			res, err := stmt.ExecContext(ctx, c.Session.ID, cp.Project, cp.ProjectPath, cp.CWD, cp.TranscriptPath,
				cp.ByteStart, cp.ByteEnd, ms(cp.TurnAt), cp.Content, cp.Messages, cp.ContentHash,
				boolInt(cp.Continuation), cp.Source, now)
			if err != nil {
				return fmt.Errorf("insert capture %s@%d: %w", c.Session.ID, cp.ByteStart, err)
			}
			n, _ := res.RowsAffected()
			inserted += int(n)
		}
		off, pending, last := c.Session.Offset, c.Session.PendingReplyHash, c.Session.LastReplyHash
		prompt, deferred, copied := c.Session.LastPromptID, c.Session.DeferredReplies, ms(c.Session.CopiedBefore)
		if c.AnyOffset && off <= cur {
			off, pending, last, prompt, deferred, copied = cur, curPending, curLast, curPrompt, curDeferred, curCopied
		}
		act := ms(c.Session.LastActivity)
		if act == 0 {
			act = now
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO sessions(session_id, transcript_path, cwd, project, project_path,
			byte_offset, pending_reply_hash, last_reply_hash, last_prompt_id, deferred_replies, copied_before,
			last_activity_at, created_at, updated_at)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(session_id) DO UPDATE SET transcript_path = excluded.transcript_path,
				cwd = CASE WHEN excluded.cwd != '' THEN excluded.cwd ELSE cwd END,
				project = CASE WHEN excluded.project != '' THEN excluded.project ELSE project END,
				project_path = CASE WHEN excluded.project_path != '' THEN excluded.project_path ELSE project_path END,
				byte_offset = excluded.byte_offset, pending_reply_hash = excluded.pending_reply_hash,
				last_reply_hash = excluded.last_reply_hash, last_prompt_id = excluded.last_prompt_id,
				deferred_replies = excluded.deferred_replies, copied_before = excluded.copied_before,
				last_activity_at = max(last_activity_at, excluded.last_activity_at), updated_at = excluded.updated_at`,
			c.Session.ID, c.Session.TranscriptPath, c.Session.CWD, c.Session.Project, c.Session.ProjectPath,
			off, pending, last, prompt, deferred, copied, act, now, now)
		return err
	})
	if err != nil {
		if errors.Is(err, ErrOffsetMoved) {
			return 0, err
		}
		return 0, fmt.Errorf("store: commit captures for %s: %w", c.Session.ID, err)
	}
	return inserted, nil
}

// RecentSessions lists sessions active since the given time, most recent first.
func (db *DB) RecentSessions(ctx context.Context, since time.Time) ([]Session, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT session_id, transcript_path, cwd, project, project_path,
		byte_offset, pending_reply_hash, last_reply_hash, last_prompt_id, deferred_replies, copied_before, last_activity_at
		FROM sessions WHERE last_activity_at >= ? ORDER BY last_activity_at DESC`, ms(since))
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		var s Session
		var last, copied int64
		if err := rows.Scan(&s.ID, &s.TranscriptPath, &s.CWD, &s.Project, &s.ProjectPath, &s.Offset, &s.PendingReplyHash,
			&s.LastReplyHash, &s.LastPromptID, &s.DeferredReplies, &copied, &last); err != nil {
			return nil, err
		}
		s.LastActivity, s.CopiedBefore = fromMS(last), fromMS(copied)
		out = append(out, s)
	}
	return out, rows.Err()
}

const captureCols = `id, session_id, project, project_path, cwd, transcript_path, byte_start, byte_end, turn_at,
	content, messages, content_hash, continuation, source, status, attempts, error, episode_id, created_at`

func scanCapture(sc interface{ Scan(...any) error }) (Capture, error) {
	var c Capture
	var turn, created int64
	var cont int
	err := sc.Scan(&c.ID, &c.SessionID, &c.Project, &c.ProjectPath, &c.CWD, &c.TranscriptPath, &c.ByteStart, &c.ByteEnd,
		&turn, &c.Content, &c.Messages, &c.ContentHash, &cont, &c.Source, &c.Status, &c.Attempts, &c.Error, &c.EpisodeID, &created)
	c.TurnAt, c.CreatedAt, c.Continuation = fromMS(turn), fromMS(created), cont != 0
	return c, err
}

// Captures lists the captures of a session in transcript order (all
// sessions when sessionID is empty).
func (db *DB) Captures(ctx context.Context, sessionID string) ([]Capture, error) {
	q := "SELECT " + captureCols + " FROM captures"
	var args []any
	if sessionID != "" {
		q += " WHERE session_id = ?"
		args = append(args, sessionID)
	}
	q += " ORDER BY session_id, byte_start"
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list captures: %w", err)
	}
	defer rows.Close()
	var out []Capture
	for rows.Next() {
		c, err := scanCapture(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// PendingCaptures returns up to limit captures waiting for ingest, oldest first.
func (db *DB) PendingCaptures(ctx context.Context, limit int) ([]Capture, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+captureCols+" FROM captures WHERE status = 'pending' ORDER BY id LIMIT ?", limit)
	if err != nil {
		return nil, fmt.Errorf("store: pending captures: %w", err)
	}
	defer rows.Close()
	var out []Capture
	for rows.Next() {
		c, err := scanCapture(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CaptureCounts returns the number of captures by status.
func (db *DB) CaptureCounts(ctx context.Context) (map[string]int, error) {
	return db.countBy(ctx, "SELECT status, count(*) FROM captures GROUP BY status")
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
