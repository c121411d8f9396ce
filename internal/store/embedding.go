package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"github.com/engram-memory/engram/internal/episode"
)

// Re-embedding: when the embedder changes (a sentence model arrives after
// months of lexical vectors), the worker re-makes the vectors of the
// existing episodes and beliefs a batch at a time, newest first, so that
// what matters most is searchable by meaning first. Vectors of different
// embedders are never compared, so a half-done store works: each memory is
// found by the vectors it has.

// EpisodesToEmbed returns up to limit episodes whose vector is not
// embedder's (or missing), newest first, among those below seq `below`
// (0: all), and the lowest seq among them: a caller going through the
// store passes it to the next call, which then starts where this one
// stopped instead of stepping again over every episode done since.
func (db *DB) EpisodesToEmbed(ctx context.Context, embedder string, below int64, limit int) ([]episode.Episode, int64, error) {
	if below <= 0 {
		below = math.MaxInt64
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT seq, "+episodeCols+
		" FROM episodes WHERE (embedder != ? OR embedding IS NULL) AND seq < ? ORDER BY seq DESC LIMIT ?", embedder, below, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("store: episodes to embed: %w", err)
	}
	defer rows.Close()
	var out []episode.Episode
	lowest := below
	for rows.Next() {
		var seq int64
		e, err := scanEpisode(scanHead{rows, &seq})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, e)
		lowest = min(lowest, seq)
	}
	return out, lowest, rows.Err()
}

// scanHead scans a column before those sc's caller expects.
type scanHead struct {
	sc   interface{ Scan(...any) error }
	head any
}

func (s scanHead) Scan(dest ...any) error { return s.sc.Scan(append([]any{s.head}, dest...)...) }

// Vector is a new vector for one episode or belief.
type Vector struct {
	ID     string
	Vector []float32
}

// SetEpisodeVectors stores the vectors of embedder for the episodes named,
// in one transaction. An episode forgotten meanwhile is skipped. Only the
// vector changes: not the episode's update time.
func (db *DB) SetEpisodeVectors(ctx context.Context, embedder string, vs []Vector) error {
	return db.setVectors(ctx, "UPDATE episodes SET embedding = ?, embedder = ? WHERE id = ?", embedder, vs)
}

// BeliefText is what a belief's vector is made from.
type BeliefText struct {
	ID, Statement string
}

// BeliefsToEmbed returns up to limit beliefs whose vector is not
// embedder's, active ones first.
func (db *DB) BeliefsToEmbed(ctx context.Context, embedder string, limit int) ([]BeliefText, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, statement FROM beliefs WHERE embedder != ? OR embedding IS NULL
		ORDER BY status = 'active' DESC, rowid DESC LIMIT ?`, embedder, limit)
	if err != nil {
		return nil, fmt.Errorf("store: beliefs to embed: %w", err)
	}
	defer rows.Close()
	var out []BeliefText
	for rows.Next() {
		var b BeliefText
		if err := rows.Scan(&b.ID, &b.Statement); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// BeliefsWithoutVector returns up to limit beliefs that have no vector (an
// edited statement not embedded yet, a belief pulled from a share), active
// ones first.
func (db *DB) BeliefsWithoutVector(ctx context.Context, limit int) ([]BeliefText, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, statement FROM beliefs WHERE embedding IS NULL
		ORDER BY status = 'active' DESC, rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: beliefs without a vector: %w", err)
	}
	defer rows.Close()
	var out []BeliefText
	for rows.Next() {
		var b BeliefText
		if err := rows.Scan(&b.ID, &b.Statement); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// SetBeliefVectors is SetEpisodeVectors for beliefs.
func (db *DB) SetBeliefVectors(ctx context.Context, embedder string, vs []Vector) error {
	return db.setVectors(ctx, "UPDATE beliefs SET embedding = ?, embedder = ? WHERE id = ?", embedder, vs)
}

func (db *DB) setVectors(ctx context.Context, q, embedder string, vs []Vector) error {
	if len(vs) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, v := range vs {
			if _, err := st.ExecContext(ctx, vectorBlob(v.Vector), embedder, v.ID); err != nil {
				return fmt.Errorf("store: set vector of %s: %w", v.ID, err)
			}
		}
		return nil
	})
}

// EmbedderCounts counts the episodes and the beliefs by the embedder of
// their vectors ("" for none).
func (db *DB) EmbedderCounts(ctx context.Context) (episodes, beliefs map[string]int, err error) {
	count := func(table string) (map[string]int, error) {
		rows, err := db.sql.QueryContext(ctx, "SELECT CASE WHEN embedding IS NULL THEN '' ELSE embedder END, count(*) FROM "+
			table+" GROUP BY 1")
		if err != nil {
			return nil, fmt.Errorf("store: count vectors of %s: %w", table, err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var name string
			var n int
			if err := rows.Scan(&name, &n); err != nil {
				return nil, err
			}
			out[name] = n
		}
		return out, rows.Err()
	}
	if episodes, err = count("episodes"); err != nil {
		return nil, nil, err
	}
	beliefs, err = count("beliefs")
	return episodes, beliefs, err
}
