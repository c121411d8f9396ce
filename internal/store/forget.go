package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Forget deletes episodes, with every capture they were made from, and
// beliefs, in one transaction: all or nothing. An id the store does not
// hold fails it with ErrNotFound. Each memory's history is replaced by one
// 'forgotten' event that holds none of its values. The deleted text can still be read from
// the database files until Scrub has run.
func (db *DB) Forget(ctx context.Context, episodeIDs, beliefIDs []string) error {
	now := time.Now()
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, id := range episodeIDs {
			// The captures first: they name the episode.
			if _, err := tx.ExecContext(ctx, "DELETE FROM captures WHERE episode_id = ?", id); err != nil {
				return fmt.Errorf("store: forget the captures of %s: %w", id, err)
			}
			res, err := tx.ExecContext(ctx, "DELETE FROM episodes WHERE id = ?", id)
			if err != nil {
				return fmt.Errorf("store: forget %s: %w", id, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("episode %s: %w", id, ErrNotFound)
			}
			if err := forgetHistory(ctx, tx, id, now); err != nil {
				return err
			}
			if err := forgetQuarantine(ctx, tx, QuarantineEpisode, id); err != nil {
				return err
			}
		}
		for _, id := range beliefIDs {
			res, err := tx.ExecContext(ctx, "DELETE FROM beliefs WHERE id = ?", id)
			if err != nil {
				return fmt.Errorf("store: forget %s: %w", id, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("belief %s: %w", id, ErrNotFound)
			}
			if err := unlink(ctx, tx, id); err != nil {
				return err
			}
			if err := forgetReview(ctx, tx, id); err != nil {
				return err
			}
			if err := forgetQuarantine(ctx, tx, QuarantineBelief, id); err != nil {
				return err
			}
			if err := forgetHistory(ctx, tx, id, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// Scrub makes deleted text leave the database's files. A delete only marks
// space free: the bytes stay in the page, in FTS5's index segments (a
// deleted row's terms stay in older segments beside a tombstone until the
// segments merge), and in the WAL. So: both full-text indexes are merged
// into one segment each ('optimize' drops deleted entries), VACUUM rebuilds
// the file from live rows only, and a TRUNCATE checkpoint copies the WAL
// into the file and empties it. It costs time in proportion to the store,
// which is why only forget runs it.
func (db *DB) Scrub(ctx context.Context) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: scrub: %w", err)
	}
	defer conn.Close()
	for _, q := range []string{
		"INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')",
		"INSERT INTO beliefs_fts(beliefs_fts) VALUES ('optimize')",
		"VACUUM",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("store: scrub: %s: %w", q, err)
		}
	}
	var busy, logPages, done int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return fmt.Errorf("store: scrub: checkpoint: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("store: scrub: checkpoint: another connection is reading; the WAL (%d pages) is not emptied yet", logPages)
	}
	return nil
}
