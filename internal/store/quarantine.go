package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kinds of quarantined items.
const (
	QuarantineCapture = "capture"
	QuarantineEpisode = "episode"
	QuarantineBelief  = "belief"
)

// Quarantine states: held (kept out of its stage until an upgrade or a
// retry), retry (to be tried again at the next cycle), dropped (kept out
// for good, no longer reported).
const (
	QuarantineHeld    = "held"
	QuarantineRetry   = "retry"
	QuarantineDropped = "dropped"
)

// MaxReason bounds the stored reason of a quarantine (a panic's message and
// the top of its stack).
const MaxReason = 2000

// Quarantined is an item a stage of the cycle failed on.
type Quarantined struct {
	Kind     string    `json:"kind"`
	ID       string    `json:"id"` // as the CLI names it: capture:N, ep_…, bl_…
	Stage    string    `json:"stage"`
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	Build    string    `json:"build"`
	State    string    `json:"state"`
	FirstAt  time.Time `json:"first_at"`
	LastAt   time.Time `json:"last_at"`
	// Text is the start of the item's text (a capture's content, an
	// episode's summary, a belief's statement), for the user to recognise.
	Text string `json:"text"`
}

// QuarantineName is the name the CLI shows for an item: a capture's id
// as capture:N, an episode's or belief's as it is.
func QuarantineName(kind, itemID string) string {
	if kind == QuarantineCapture {
		return "capture:" + itemID
	}
	return itemID
}

// ParseQuarantineName reads a name QuarantineName made: its kind and item id.
func ParseQuarantineName(name string) (kind, itemID string, err error) {
	switch {
	case strings.HasPrefix(name, "capture:"):
		n, err := strconv.ParseInt(strings.TrimPrefix(name, "capture:"), 10, 64)
		if err != nil || n <= 0 {
			return "", "", fmt.Errorf("%q is not a capture's id (capture:N)", name)
		}
		return QuarantineCapture, strconv.FormatInt(n, 10), nil
	case strings.HasPrefix(name, "ep_"):
		return QuarantineEpisode, name, nil
	case strings.HasPrefix(name, "bl_"):
		return QuarantineBelief, name, nil
	}
	return "", "", fmt.Errorf("%q is not a quarantined item's id (capture:N, ep_…, bl_…)", name)
}

func clipReason(s string) string {
	if len(s) <= MaxReason {
		return s
	}
	s = s[:MaxReason]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s + "…"
}

// quarantine holds an item in the same transaction as the caller's change.
func quarantine(ctx context.Context, tx *sql.Tx, kind, itemID, stage, reason, build string, now time.Time) error {
	ms := now.UnixMilli()
	_, err := tx.ExecContext(ctx, `INSERT INTO quarantine (kind, item_id, stage, reason, attempts, build, state, first_at, last_at)
		VALUES (?, ?, ?, ?, 1, ?, 'held', ?, ?)
		ON CONFLICT (kind, item_id) DO UPDATE SET stage = excluded.stage, reason = excluded.reason,
			attempts = attempts + 1, build = excluded.build,
			state = CASE WHEN state = 'dropped' THEN 'dropped' ELSE 'held' END, last_at = excluded.last_at`,
		kind, itemID, stage, clipReason(reason), build, ms, ms)
	if err != nil {
		return fmt.Errorf("store: quarantine %s %s: %w", kind, itemID, err)
	}
	return nil
}

// Quarantine holds an episode or a belief out of the stage that failed on
// it. Captures are held by CommitOutcomes, with their status.
func (db *DB) Quarantine(ctx context.Context, kind, itemID, stage, reason, build string) error {
	if kind != QuarantineEpisode && kind != QuarantineBelief {
		return fmt.Errorf("store: quarantine: kind %q", kind)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		return quarantine(ctx, tx, kind, itemID, stage, reason, build, time.Now())
	})
}

// QuarantinedIDs returns the items of a kind a stage must leave alone: held
// or dropped (retry ones are to be tried).
func (db *DB) QuarantinedIDs(ctx context.Context, kind string) (map[string]bool, error) {
	return db.quarantineIDs(ctx, kind, "state != 'retry'")
}

// RetryIDs returns the items of a kind to be tried again.
func (db *DB) RetryIDs(ctx context.Context, kind string) (map[string]bool, error) {
	return db.quarantineIDs(ctx, kind, "state = 'retry'")
}

func (db *DB) quarantineIDs(ctx context.Context, kind, where string) (map[string]bool, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT item_id FROM quarantine WHERE kind = ? AND "+where, kind)
	if err != nil {
		return nil, fmt.Errorf("store: quarantined %ss: %w", kind, err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out[id] = true
	}
	return out, rows.Err()
}

// Unquarantine removes the rows of items a stage has now worked.
func (db *DB) Unquarantine(ctx context.Context, kind string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, "DELETE FROM quarantine WHERE kind = ? AND item_id = ?", kind, id); err != nil {
				return fmt.Errorf("store: unquarantine %s %s: %w", kind, id, err)
			}
		}
		return nil
	})
}

// ReleaseQuarantine makes every item held by another build than this one
// ready to be tried again (a new build may have fixed what failed): a
// capture goes back to pending, an episode or belief to retry. It returns
// how many.
func (db *DB) ReleaseQuarantine(ctx context.Context, build string) (int, error) {
	var n int
	err := db.write(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = release(ctx, tx, "state = 'held' AND build != ?", build)
		return err
	})
	return n, err
}

// release makes the quarantine rows matching where (with args) retryable:
// a capture goes back to pending (its row goes: ingest holds it again if
// it fails again), an episode or a belief to retry. It returns how many.
func release(ctx context.Context, tx *sql.Tx, where string, args ...any) (int, error) {
	res, err := tx.ExecContext(ctx, `UPDATE captures SET status = 'pending', attempts = 0, error = ''
		WHERE status = 'failed' AND CAST(id AS TEXT) IN (SELECT item_id FROM quarantine WHERE kind = 'capture' AND `+where+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("store: release captures: %w", err)
	}
	caps, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, "DELETE FROM quarantine WHERE kind = 'capture' AND "+where, args...); err != nil {
		return 0, fmt.Errorf("store: release captures: %w", err)
	}
	res, err = tx.ExecContext(ctx, "UPDATE quarantine SET state = 'retry' WHERE kind != 'capture' AND "+where, args...)
	if err != nil {
		return 0, fmt.Errorf("store: release: %w", err)
	}
	others, _ := res.RowsAffected()
	return int(caps + others), nil
}

// ErrNotQuarantined is returned for a name no quarantined item has.
var ErrNotQuarantined = errors.New("not quarantined")

// RetryQuarantined makes the named items ready to be tried again at the
// next cycle; DropQuarantined keeps them out for good. All or nothing: an
// unknown name changes nothing.
func (db *DB) RetryQuarantined(ctx context.Context, names []string) error {
	return db.decideQuarantined(ctx, names, func(tx *sql.Tx, kind, id string) error {
		_, err := release(ctx, tx, "item_id = ? AND kind = ?", id, kind)
		return err
	})
}

// DropQuarantined keeps the named items out of their stage for good and
// stops reporting them.
func (db *DB) DropQuarantined(ctx context.Context, names []string) error {
	return db.decideQuarantined(ctx, names, func(tx *sql.Tx, kind, id string) error {
		_, err := tx.ExecContext(ctx, "UPDATE quarantine SET state = 'dropped' WHERE kind = ? AND item_id = ?", kind, id)
		return err
	})
}

func (db *DB) decideQuarantined(ctx context.Context, names []string, fn func(tx *sql.Tx, kind, id string) error) error {
	type item struct{ kind, id string }
	var items []item
	for _, name := range names {
		kind, id, err := ParseQuarantineName(name)
		if err != nil {
			return err
		}
		items = append(items, item{kind, id})
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		for i, it := range items {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM quarantine WHERE kind = ? AND item_id = ?", it.kind, it.id).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return fmt.Errorf("%s: %w", names[i], ErrNotQuarantined)
			}
			if err := fn(tx, it.kind, it.id); err != nil {
				return fmt.Errorf("store: %s: %w", names[i], err)
			}
		}
		return nil
	})
}

// ListQuarantine returns the quarantined items, newest failure first;
// dropped ones only with all.
func (db *DB) ListQuarantine(ctx context.Context, all bool) ([]Quarantined, error) {
	where := "WHERE q.state != 'dropped'"
	if all {
		where = ""
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT q.kind, q.item_id, q.stage, q.reason, q.attempts, q.build, q.state, q.first_at, q.last_at,
		substr(coalesce(c.content, e.summary, b.statement, ''), 1, 200)
		FROM quarantine q
		LEFT JOIN captures c ON q.kind = 'capture' AND c.id = CAST(q.item_id AS INTEGER)
		LEFT JOIN episodes e ON q.kind = 'episode' AND e.id = q.item_id
		LEFT JOIN beliefs b ON q.kind = 'belief' AND b.id = q.item_id
		`+where+` ORDER BY q.last_at DESC, q.kind, q.item_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list quarantine: %w", err)
	}
	defer rows.Close()
	var out []Quarantined
	for rows.Next() {
		var q Quarantined
		var first, last int64
		if err := rows.Scan(&q.Kind, &q.ID, &q.Stage, &q.Reason, &q.Attempts, &q.Build, &q.State, &first, &last, &q.Text); err != nil {
			return nil, err
		}
		q.ID = QuarantineName(q.Kind, q.ID)
		q.FirstAt, q.LastAt = time.UnixMilli(first), time.UnixMilli(last)
		out = append(out, q)
	}
	return out, rows.Err()
}

// QuarantineCounts counts the items held or waiting for a retry, by stage.
func (db *DB) QuarantineCounts(ctx context.Context) (map[string]int, error) {
	return db.countBy(ctx, "SELECT stage, count(*) FROM quarantine WHERE state != 'dropped' GROUP BY stage")
}

// forgetQuarantine drops a forgotten item's row (its reason may quote it).
func forgetQuarantine(ctx context.Context, tx *sql.Tx, kind, id string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM quarantine WHERE kind = ? AND item_id = ?", kind, id); err != nil {
		return fmt.Errorf("store: forget the quarantine of %s: %w", id, err)
	}
	return nil
}

// QuarantineTotal counts the items held or waiting for a retry.
func (db *DB) QuarantineTotal(ctx context.Context) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM quarantine WHERE state != 'dropped'").Scan(&n)
	return n, err
}
