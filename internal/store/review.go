package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Levels of a belief on its way to core memory (see internal/review).
const (
	LevelPending  = "pending"
	LevelLongTerm = "long_term"
	LevelCore     = "core"
	LevelDenied   = "denied"
	LevelPinned   = "pinned"
)

// ErrLevelChanged is a decision made against a level the belief no longer
// has (another decision came first).
var ErrLevelChanged = errors.New("store: the belief's level changed meanwhile")

// ReviewBelief is what review needs to know about one belief.
type ReviewBelief struct {
	ID            string
	Statement     string
	Scope         string
	Project       string
	ProjectPath   string
	Status        string
	Alpha, Beta   float64
	EvidenceCount int
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// Level is LevelPending for a belief without a level row.
	Level      string
	LevelSince time.Time
	CoreTarget string
	// Stated is true when one of its supporting episodes holds something
	// the user said in so many words, or the user wrote its statement (an
	// edit in review).
	Stated bool
	// Supporting are its supporting episodes' ids.
	Supporting int
}

const reviewCols = `b.id, b.statement, b.scope, b.project, b.project_path, b.status, b.confidence_alpha, b.confidence_beta,
	b.evidence_count, b.created_at, b.updated_at, coalesce(l.level, 'pending'), coalesce(l.since, 0), coalesce(l.core_target, ''),
	EXISTS (SELECT 1 FROM json_each(b.supporting_episodes) j JOIN episodes e ON e.id = j.value, json_each(e.signals) s
		WHERE json_extract(s.value, '$.stated') = 1)
	OR EXISTS (SELECT 1 FROM review_decisions d WHERE d.belief_id = b.id AND d.decision = 'edit' AND d.who = 'user'),
	json_array_length(b.supporting_episodes)`

func scanReview(sc interface{ Scan(...any) error }) (ReviewBelief, error) {
	var b ReviewBelief
	var created, updated, since int64
	err := sc.Scan(&b.ID, &b.Statement, &b.Scope, &b.Project, &b.ProjectPath, &b.Status, &b.Alpha, &b.Beta,
		&b.EvidenceCount, &created, &updated, &b.Level, &since, &b.CoreTarget, &b.Stated, &b.Supporting)
	b.CreatedAt, b.UpdatedAt, b.LevelSince = fromMS(created), fromMS(updated), fromMS(since)
	return b, err
}

// ReviewBeliefs returns every active belief and every belief with a level
// other than pending, in creation order.
func (db *DB) ReviewBeliefs(ctx context.Context) ([]ReviewBelief, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+reviewCols+` FROM beliefs b LEFT JOIN belief_levels l ON l.belief_id = b.id
		WHERE b.status = 'active' OR coalesce(l.level, 'pending') != 'pending' ORDER BY b.seq`)
	if err != nil {
		return nil, fmt.Errorf("store: review beliefs: %w", err)
	}
	defer rows.Close()
	var out []ReviewBelief
	for rows.Next() {
		b, err := scanReview(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// ReviewBelief returns one belief with its level.
func (db *DB) ReviewBelief(ctx context.Context, id string) (ReviewBelief, error) {
	b, err := scanReview(db.sql.QueryRowContext(ctx, `SELECT `+reviewCols+` FROM beliefs b
		LEFT JOIN belief_levels l ON l.belief_id = b.id WHERE b.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("belief %s: %w", id, ErrNotFound)
	}
	return b, err
}

// Decision is one change of a belief's level.
type Decision struct {
	BeliefID string
	// Decision is approve, deny, pin or edit (a person's or the model's),
	// or long_term or core (the gates').
	Decision string
	Who      string // user | model | gates
	At       time.Time
	Before   string
	After    string
	Note     string
	// CoreTarget is where a core belief goes (claude | agents | both; ""
	// for the setting's).
	CoreTarget string
	// Statement, when set, replaces the belief's statement (an edit).
	Statement string
	// Vector and Embedder are the new statement's vector and its
	// embedder's name: an edit replaces the old statement's vector with
	// them, or with none when Vector is empty (the worker's next cycle
	// embeds a belief without a vector).
	Vector   []float32
	Embedder string
}

// Decide records decisions in one transaction: all or nothing. Each one
// is made against the level it names as Before: a belief whose level is
// another by now fails it with ErrLevelChanged, one the store does not
// hold with ErrNotFound.
func (db *DB) Decide(ctx context.Context, ds []Decision) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, d := range ds {
			var statement string
			err := tx.QueryRowContext(ctx, "SELECT statement FROM beliefs WHERE id = ?", d.BeliefID).Scan(&statement)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("belief %s: %w", d.BeliefID, ErrNotFound)
			}
			if err != nil {
				return err
			}
			var level string
			var since int64
			err = tx.QueryRowContext(ctx, "SELECT level, since FROM belief_levels WHERE belief_id = ?", d.BeliefID).Scan(&level, &since)
			if errors.Is(err, sql.ErrNoRows) {
				level = LevelPending
			} else if err != nil {
				return err
			}
			if level != d.Before {
				return fmt.Errorf("belief %s is %s, not %s: %w", d.BeliefID, level, d.Before, ErrLevelChanged)
			}
			at := d.At.UnixMilli()
			if d.Statement != "" && d.Statement != statement {
				embedder := d.Embedder
				if len(d.Vector) == 0 {
					embedder = ""
				}
				if _, err := tx.ExecContext(ctx, "UPDATE beliefs SET statement = ?, embedding = ?, embedder = ?, updated_at = ? WHERE id = ?",
					d.Statement, vectorBlob(d.Vector), embedder, at, d.BeliefID); err != nil {
					return fmt.Errorf("belief %s: %w", d.BeliefID, err)
				}
			}
			if d.After != level {
				since = at
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO belief_levels(belief_id, level, since, core_target, updated_at)
				VALUES (?, ?, ?, ?, ?) ON CONFLICT(belief_id) DO UPDATE SET level = excluded.level, since = excluded.since,
				core_target = excluded.core_target, updated_at = excluded.updated_at`,
				d.BeliefID, d.After, since, d.CoreTarget, at); err != nil {
				return fmt.Errorf("belief %s: %w", d.BeliefID, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO review_decisions(belief_id, decision, who, at, level_before, level_after, note)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, d.BeliefID, d.Decision, d.Who, at, d.Before, d.After, d.Note); err != nil {
				return fmt.Errorf("belief %s: %w", d.BeliefID, err)
			}
			if err := insertEvent(ctx, tx, decisionEvent(d, statement)); err != nil {
				return err
			}
		}
		return nil
	})
}

// decisionEvent is a decision as the belief's history tells it: the level
// before and after, the statement an edit replaced, who decided.
func decisionEvent(d Decision, statement string) Event {
	action := ActionPromoted
	switch d.Decision {
	case "approve":
		action = ActionApproved
	case "deny":
		action = ActionDenied
	case "pin":
		action = ActionPinned
	case "edit":
		action = ActionEdited
	}
	ev := Event{At: d.At, MemoryID: d.BeliefID, Action: action, Cause: "review by " + d.Who, Detail: d.Note,
		Before: map[string]any{"level": d.Before}, After: map[string]any{"level": d.After}}
	if d.Statement != "" && d.Statement != statement {
		ev.Before["statement"], ev.After["statement"] = statement, d.Statement
	}
	return ev
}

// Decisions returns the decisions made about a belief, oldest first.
func (db *DB) Decisions(ctx context.Context, beliefID string) ([]Decision, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT belief_id, decision, who, at, level_before, level_after, note
		FROM review_decisions WHERE belief_id = ? ORDER BY at, id`, beliefID)
	if err != nil {
		return nil, fmt.Errorf("store: decisions: %w", err)
	}
	defer rows.Close()
	var out []Decision
	for rows.Next() {
		var d Decision
		var at int64
		if err := rows.Scan(&d.BeliefID, &d.Decision, &d.Who, &at, &d.Before, &d.After, &d.Note); err != nil {
			return nil, err
		}
		d.At = fromMS(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// BeliefLevels returns the level of every belief that has one other than
// pending, by belief id.
func (db *DB) BeliefLevels(ctx context.Context) (map[string]string, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT belief_id, level FROM belief_levels WHERE level != 'pending'")
	if err != nil {
		return nil, fmt.Errorf("store: belief levels: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, level string
		if err := rows.Scan(&id, &level); err != nil {
			return nil, err
		}
		out[id] = level
	}
	return out, rows.Err()
}

// LevelRecord is a belief's level as exported.
type LevelRecord struct {
	BeliefID   string    `json:"belief_id"`
	Level      string    `json:"level"`
	Since      time.Time `json:"since"`
	CoreTarget string    `json:"core_target,omitempty"`
}

// LevelRecords returns every level row, in belief id order.
func (db *DB) LevelRecords(ctx context.Context) ([]LevelRecord, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT belief_id, level, since, core_target FROM belief_levels ORDER BY belief_id")
	if err != nil {
		return nil, fmt.Errorf("store: belief levels: %w", err)
	}
	defer rows.Close()
	var out []LevelRecord
	for rows.Next() {
		var r LevelRecord
		var since int64
		if err := rows.Scan(&r.BeliefID, &r.Level, &since, &r.CoreTarget); err != nil {
			return nil, err
		}
		r.Since = fromMS(since)
		out = append(out, r)
	}
	return out, rows.Err()
}

// insertLevel stores an imported level row; the belief must be in the
// store, without a level yet.
func insertLevel(ctx context.Context, tx *sql.Tx, r LevelRecord, now int64) error {
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM beliefs WHERE id = ?", r.BeliefID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("level of belief %s: %w", r.BeliefID, ErrNotFound)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO belief_levels(belief_id, level, since, core_target, updated_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT(belief_id) DO UPDATE SET level = excluded.level, since = excluded.since,
		core_target = excluded.core_target, updated_at = excluded.updated_at`,
		r.BeliefID, r.Level, ms(r.Since), r.CoreTarget, now)
	if err != nil {
		return fmt.Errorf("level of belief %s: %w", r.BeliefID, err)
	}
	return nil
}

// CoreFile is a CLAUDE.md or AGENTS.md engram keeps a core-memory block in.
type CoreFile struct {
	Path    string
	Root    string
	Created bool
}

// CoreFiles lists the files engram keeps a core-memory block in.
func (db *DB) CoreFiles(ctx context.Context) ([]CoreFile, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT path, root, created FROM core_files ORDER BY path")
	if err != nil {
		return nil, fmt.Errorf("store: core files: %w", err)
	}
	defer rows.Close()
	var out []CoreFile
	for rows.Next() {
		var f CoreFile
		if err := rows.Scan(&f.Path, &f.Root, &f.Created); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// SetCoreFile records that f holds a core-memory block (held false: it no
// longer does, and is forgotten). A file once created by engram stays so.
func (db *DB) SetCoreFile(ctx context.Context, f CoreFile, held bool, at time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if !held {
			_, err := tx.ExecContext(ctx, "DELETE FROM core_files WHERE path = ?", f.Path)
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO core_files(path, root, created, written_at) VALUES (?, ?, ?, ?)
			ON CONFLICT(path) DO UPDATE SET root = excluded.root, created = core_files.created OR excluded.created,
			written_at = excluded.written_at`, f.Path, f.Root, f.Created, at.UnixMilli())
		return err
	})
}

// forgetReview deletes a belief's level and decisions (the decisions may
// quote its statement), inside a forget.
func forgetReview(ctx context.Context, tx *sql.Tx, beliefID string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM belief_levels WHERE belief_id = ?", beliefID); err != nil {
		return fmt.Errorf("store: forget the level of %s: %w", beliefID, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM review_decisions WHERE belief_id = ?", beliefID); err != nil {
		return fmt.Errorf("store: forget the decisions about %s: %w", beliefID, err)
	}
	return nil
}
