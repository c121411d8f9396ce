package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The prompt hook's search index (internal/recollect writes it) follows the
// episodes through the change log of migration 0004.

// StoreID identifies the database: the index records the one it was built
// from, and one built from another store is rebuilt.
func (db *DB) StoreID(ctx context.Context) (string, error) {
	var id string
	err := db.sql.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'store_id'").Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: store id: %w", err)
	}
	return id, nil
}

// EpisodeChanges returns the distinct seqs of the episodes inserted,
// changed or deleted after change id `after`, ascending, and the id of the
// newest change (after itself when there is none). lastEver is the newest
// change id ever given (it survives pruning): an index that claims to have
// seen more than that was built from another store.
func (db *DB) EpisodeChanges(ctx context.Context, after int64) (last, lastEver int64, seqs []int64, err error) {
	err = db.sql.QueryRowContext(ctx,
		"SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'episode_changes'), 0)").Scan(&lastEver)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("store: episode changes: %w", err)
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT id, seq FROM episode_changes WHERE id > ? AND id <= ? ORDER BY seq, id", after, lastEver)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("store: episode changes: %w", err)
	}
	defer rows.Close()
	last = after
	for rows.Next() {
		var id, seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return 0, 0, nil, err
		}
		last = max(last, id)
		if n := len(seqs); n == 0 || seqs[n-1] != seq {
			seqs = append(seqs, seq)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, nil, fmt.Errorf("store: episode changes: %w", err)
	}
	return last, lastEver, seqs, nil
}

// PruneEpisodeChanges drops the change log up to and including id upto
// (what the index has applied).
func (db *DB) PruneEpisodeChanges(ctx context.Context, upto int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM episode_changes WHERE id <= ?", upto)
		return err
	})
}

// IndexEpisode is what the search index holds of an episode: the fields of
// a bite and of its ranking, and the text the FTS index covers (summary,
// context and the entities column as stored), which its terms come from.
type IndexEpisode struct {
	RecallEpisode
	EntitiesText string
}

const indexCols = recallCols + ", entities"

func scanIndex(sc interface{ Scan(...any) error }) (IndexEpisode, error) {
	var e IndexEpisode
	r, err := scanRecall(scanTail{sc, &e.EntitiesText})
	e.RecallEpisode = r
	return e, err
}

// EachIndexEpisode calls fn with every episode in seq order (seqs nil) or
// with those of seqs that exist (ascending; deleted ones are skipped). An
// archived or expired episode is left out as if deleted: the index follows
// it out of recall.
func (db *DB) EachIndexEpisode(ctx context.Context, seqs []int64, fn func(IndexEpisode) error) error {
	each := func(q string, args ...any) error {
		rows, err := db.sql.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("store: index episodes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanIndex(rows)
			if err != nil {
				return err
			}
			if err := fn(e); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	if seqs == nil {
		return each("SELECT " + indexCols + " FROM episodes WHERE lifecycle IN ('', 'superseded') ORDER BY seq")
	}
	return inChunks(seqs, func(in string, args []any) error {
		return each("SELECT "+indexCols+" FROM episodes WHERE lifecycle IN ('', 'superseded') AND seq IN ("+in+") ORDER BY seq", args...)
	})
}

// SeqsOf returns the seqs of the episodes with the given ids (those that
// exist).
func (db *DB) SeqsOf(ctx context.Context, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	err := inChunks(ids, func(in string, args []any) error {
		rows, err := db.sql.QueryContext(ctx, "SELECT id, seq FROM episodes WHERE id IN ("+in+")", args...)
		if err != nil {
			return fmt.Errorf("store: seqs: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			var seq int64
			if err := rows.Scan(&id, &seq); err != nil {
				return err
			}
			out[id] = seq
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
