package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

// Box is a run of episodes of one project about one topic (package
// thread builds them): open while episodes keep coming on its topic,
// sealed once the topic shifts, after a pause, or when full.
type Box struct {
	ID          string
	Project     string
	ProjectPath string
	TraceID     string // "" until sealed and woven
	OpenedAt    time.Time
	LastAt      time.Time
	SealedAt    time.Time // zero while open
	SealReason  string
	Terms       []string  // key terms, most frequent first
	Centroid    []float32 // the mean of the members' vectors, or nil
	Embedder    string    // the embedder of Centroid
	Members     int
}

// Sealed reports whether the box is sealed.
func (b Box) Sealed() bool { return !b.SealedAt.IsZero() }

const boxCols = "id, project, project_path, trace_id, opened_at, last_at, sealed_at, seal_reason, terms, centroid, embedder, members"

func scanBox(sc interface{ Scan(...any) error }) (Box, error) {
	var b Box
	var opened, last int64
	var sealed sql.NullInt64
	var terms string
	var centroid []byte
	if err := sc.Scan(&b.ID, &b.Project, &b.ProjectPath, &b.TraceID, &opened, &last, &sealed, &b.SealReason, &terms, &centroid, &b.Embedder, &b.Members); err != nil {
		return b, err
	}
	b.OpenedAt, b.LastAt, b.SealedAt = fromMS(opened), fromMS(last), fromMS(sealed.Int64)
	if err := json.Unmarshal([]byte(terms), &b.Terms); err != nil {
		return b, fmt.Errorf("box %s: terms: %w", b.ID, err)
	}
	if len(centroid) > 0 {
		v, err := embed.Decode(centroid)
		if err != nil {
			return b, fmt.Errorf("box %s: centroid: %w", b.ID, err)
		}
		b.Centroid = v
	}
	return b, nil
}

func (db *DB) queryBoxes(ctx context.Context, q string, args ...any) ([]Box, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+boxCols+" FROM boxes "+q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: boxes: %w", err)
	}
	defer rows.Close()
	var out []Box
	for rows.Next() {
		b, err := scanBox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// OpenBoxes returns every open box.
func (db *DB) OpenBoxes(ctx context.Context) ([]Box, error) {
	return db.queryBoxes(ctx, "WHERE sealed_at IS NULL ORDER BY project_path, opened_at")
}

// SealedBoxes returns the sealed boxes of one project (its path), the
// latest sealed first, at most limit (0: all).
func (db *DB) SealedBoxes(ctx context.Context, projectPath string, limit int) ([]Box, error) {
	q := "WHERE sealed_at IS NOT NULL AND project_path = ? ORDER BY sealed_at DESC, id"
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", limit)
	}
	return db.queryBoxes(ctx, q, projectPath)
}

// AllBoxes returns every box, by project and time.
func (db *DB) AllBoxes(ctx context.Context) ([]Box, error) {
	return db.queryBoxes(ctx, "ORDER BY project_path, opened_at, id")
}

// TraceBoxes returns the boxes of one trace in the order they opened.
func (db *DB) TraceBoxes(ctx context.Context, traceID string) ([]Box, error) {
	return db.queryBoxes(ctx, "WHERE trace_id = ? ORDER BY opened_at, id", traceID)
}

// GetBox returns one box by id.
func (db *DB) GetBox(ctx context.Context, id string) (Box, error) {
	bs, err := db.queryBoxes(ctx, "WHERE id = ?", id)
	if err != nil {
		return Box{}, err
	}
	if len(bs) == 0 {
		return Box{}, fmt.Errorf("box %s: %w", id, ErrNotFound)
	}
	return bs[0], nil
}

// BoxOf returns the id of the box that holds an episode ("" for none).
func (db *DB) BoxOf(ctx context.Context, episodeID string) (string, error) {
	var id string
	err := db.sql.QueryRowContext(ctx, "SELECT box_id FROM box_members WHERE episode_id = ?", episodeID).Scan(&id)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return id, err
}

// BoxEpisodes returns the episodes of a box in the order they happened.
func (db *DB) BoxEpisodes(ctx context.Context, boxID string) ([]episode.Episode, error) {
	return db.queryEpisodes(ctx, "box episodes", "SELECT "+prefixed("e.", episodeCols)+
		" FROM box_members m JOIN episodes e ON e.id = m.episode_id WHERE m.box_id = ? ORDER BY m.at, e.seq", boxID)
}

// UnboxedEpisodes returns up to limit episodes in no box, in the order
// they happened (then stored).
func (db *DB) UnboxedEpisodes(ctx context.Context, limit int) ([]episode.Episode, error) {
	return db.queryEpisodes(ctx, "unboxed episodes", "SELECT "+prefixed("e.", episodeCols)+
		" FROM episodes e LEFT JOIN box_members m ON m.episode_id = e.id WHERE m.episode_id IS NULL ORDER BY e.occurred_at, e.seq LIMIT ?", limit)
}

// SaveBox writes a box with its members (episode ids and times) in one
// transaction: the box as given, and the members added to it (members it
// already has stay).
func (db *DB) SaveBox(ctx context.Context, b Box, add []BoxMember) error {
	terms, err := json.Marshal(nonNil(b.Terms))
	if err != nil {
		return err
	}
	var centroid []byte
	if len(b.Centroid) > 0 {
		centroid = embed.Encode(b.Centroid)
	}
	var sealed any
	if b.Sealed() {
		sealed = ms(b.SealedAt)
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO boxes(`+boxCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT(id) DO UPDATE SET project = excluded.project, project_path = excluded.project_path,
			trace_id = excluded.trace_id, opened_at = excluded.opened_at, last_at = excluded.last_at,
			sealed_at = excluded.sealed_at, seal_reason = excluded.seal_reason, terms = excluded.terms,
			centroid = excluded.centroid, embedder = excluded.embedder, members = excluded.members`,
			b.ID, b.Project, b.ProjectPath, b.TraceID, ms(b.OpenedAt), ms(b.LastAt), sealed, b.SealReason, string(terms),
			centroid, b.Embedder, b.Members); err != nil {
			return fmt.Errorf("store: save box %s: %w", b.ID, err)
		}
		for _, m := range add {
			if _, err := tx.ExecContext(ctx, "INSERT INTO box_members(episode_id, box_id, at) VALUES (?,?,?) ON CONFLICT(episode_id) DO UPDATE SET box_id = excluded.box_id, at = excluded.at",
				m.EpisodeID, b.ID, ms(m.At)); err != nil {
				return fmt.Errorf("store: box %s: add %s: %w", b.ID, m.EpisodeID, err)
			}
		}
		return nil
	})
}

// BoxMember is one episode of a box.
type BoxMember struct {
	EpisodeID string
	At        time.Time
}

// DeleteBox removes a box and its memberships.
func (db *DB) DeleteBox(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM box_members WHERE box_id = ?", id); err != nil {
			return fmt.Errorf("store: delete box %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM boxes WHERE id = ?", id); err != nil {
			return fmt.Errorf("store: delete box %s: %w", id, err)
		}
		return nil
	})
}

// StaleBoxes drops the memberships of episodes the store no longer holds
// (merged into another, or deleted by an older build) and returns the ids
// of the boxes whose members changed since they were saved (a forgotten
// episode left, see forgetMembership), so that their terms and centroid
// are made again from what they hold.
func (db *DB) StaleBoxes(ctx context.Context) ([]string, error) {
	var ids []string
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM box_members WHERE episode_id NOT IN (SELECT id FROM episodes)"); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT b.id FROM boxes b
			WHERE b.members != (SELECT count(*) FROM box_members m WHERE m.box_id = b.id) ORDER BY b.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: stale boxes: %w", err)
	}
	return ids, nil
}

// forgetMembership takes a forgotten episode out of its box (inside the
// forget's transaction); package thread makes the box again from what it
// holds, or drops it when empty.
func forgetMembership(ctx context.Context, tx *sql.Tx, episodeID string) error {
	// Its words leave the box's terms at once; the count stays until the
	// box is made again (StaleBoxes finds it by the count).
	if _, err := tx.ExecContext(ctx, `UPDATE boxes SET terms = '[]', centroid = NULL
		WHERE id = (SELECT box_id FROM box_members WHERE episode_id = ?)`, episodeID); err != nil {
		return fmt.Errorf("store: forget %s: its box: %w", episodeID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM box_members WHERE episode_id = ?", episodeID); err != nil {
		return fmt.Errorf("store: forget %s: its box: %w", episodeID, err)
	}
	return nil
}

// ClearBoxes removes every box and membership: the next build boxes every
// episode again (after a change of the settings boxes are made by).
func (db *DB) ClearBoxes(ctx context.Context) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM box_members"); err != nil {
			return fmt.Errorf("store: clear boxes: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM boxes"); err != nil {
			return fmt.Errorf("store: clear boxes: %w", err)
		}
		return nil
	})
}
