package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Run is one recorded worker cycle.
type Run struct {
	ID         int64
	Kind       string
	StartedAt  time.Time
	FinishedAt time.Time
	Stats      json.RawMessage
	Error      string
}

// StartRun records the start of a worker cycle.
func (db *DB) StartRun(ctx context.Context, kind string) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "INSERT INTO runs(kind, started_at) VALUES (?, ?)", kind, time.Now().UnixMilli())
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: start run: %w", err)
	}
	return id, nil
}

// FinishRun records the end of a worker cycle with its stats and error.
func (db *DB) FinishRun(ctx context.Context, id int64, stats any, runErr error) error {
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE runs SET finished_at = ?, stats = ?, error = ? WHERE id = ?",
			time.Now().UnixMilli(), jsonOf(stats), msg, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: finish run: %w", err)
	}
	return nil
}

// LastRun returns the latest finished run of a kind ("" for any); ok is
// false when there is none.
func (db *DB) LastRun(ctx context.Context, kind string) (r Run, ok bool, err error) {
	var finished sql.NullInt64
	var started int64
	var stats string
	q := "SELECT id, kind, started_at, finished_at, stats, error FROM runs WHERE finished_at IS NOT NULL"
	args := []any{}
	if kind != "" {
		q += " AND kind = ?"
		args = append(args, kind)
	}
	q += " ORDER BY id DESC LIMIT 1"
	err = db.sql.QueryRowContext(ctx, q, args...).Scan(&r.ID, &r.Kind, &started, &finished, &stats, &r.Error)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, false, nil
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("store: last run: %w", err)
	}
	r.StartedAt, r.FinishedAt, r.Stats = fromMS(started), fromMS(finished.Int64), json.RawMessage(stats)
	return r, true, nil
}

// BeliefCounts returns the number of beliefs by status.
func (db *DB) BeliefCounts(ctx context.Context) (map[string]int, error) {
	return db.countBy(ctx, "SELECT status, count(*) FROM beliefs GROUP BY status")
}

// KindCounts returns the number of episodes recalled (lifecycle ”) and
// of active beliefs by kind ("unknown" for imported memories that name
// none), and of episodes by lifecycle ("live", archived, expired).
func (db *DB) KindCounts(ctx context.Context) (episodes, beliefs, lifecycle map[string]int, err error) {
	if episodes, err = db.countBy(ctx, "SELECT CASE kind WHEN '' THEN 'unknown' ELSE kind END, count(*) FROM episodes WHERE lifecycle = '' GROUP BY 1"); err != nil {
		return
	}
	if beliefs, err = db.countBy(ctx, "SELECT CASE kind WHEN '' THEN 'unknown' ELSE kind END, count(*) FROM beliefs WHERE status = 'active' GROUP BY 1"); err != nil {
		return
	}
	lifecycle, err = db.countBy(ctx, "SELECT CASE lifecycle WHEN '' THEN 'live' ELSE lifecycle END, count(*) FROM episodes GROUP BY 1")
	return
}

// countBy runs a "key, count" query into a map.
func (db *DB) countBy(ctx context.Context, q string) (map[string]int, error) {
	rows, err := db.sql.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("store: count: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

// OldestPending returns when the oldest capture still waiting for the
// worker was stored; ok is false when none waits.
func (db *DB) OldestPending(ctx context.Context) (at time.Time, ok bool, err error) {
	var ms int64
	err = db.sql.QueryRowContext(ctx, "SELECT created_at FROM captures WHERE status = 'pending' ORDER BY id LIMIT 1").Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: oldest pending capture: %w", err)
	}
	return fromMS(ms), true, nil
}

// KindsOf returns the kind of each episode and belief of ids that exists.
func (db *DB) KindsOf(ctx context.Context, ids []string) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	err := inChunks(ids, func(in string, args []any) error {
		rows, err := db.sql.QueryContext(ctx, "SELECT id, kind FROM episodes WHERE id IN ("+in+") UNION ALL SELECT id, kind FROM beliefs WHERE id IN ("+in+")",
			append(args, args...)...)
		if err != nil {
			return fmt.Errorf("store: kinds: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, kind string
			if err := rows.Scan(&id, &kind); err != nil {
				return err
			}
			out[id] = kind
		}
		return rows.Err()
	})
	return out, err
}
