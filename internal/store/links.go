package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// Link is one belief's link to a related one.
type Link struct {
	From, To   string
	Similarity float64
	At         time.Time
}

// Link links two active beliefs both ways (a link to a belief that is not
// active, or to itself, is not made). An existing link is left as it is.
func (t *BeliefTx) Link(a, b string, sim float64, at time.Time) error {
	if a == b {
		return nil
	}
	var n int
	if err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM beliefs WHERE id IN (?, ?) AND status = 'active'", a, b).Scan(&n); err != nil {
		return fmt.Errorf("store: link %s %s: %w", a, b, err)
	}
	if n != 2 {
		return nil
	}
	for _, p := range [][2]string{{a, b}, {b, a}} {
		if _, err := t.tx.ExecContext(t.ctx, "INSERT OR IGNORE INTO belief_links(belief_id, linked_id, similarity, created_at) VALUES (?,?,?,?)",
			p[0], p[1], sim, ms(at)); err != nil {
			return fmt.Errorf("store: link %s %s: %w", a, b, err)
		}
	}
	return nil
}

// unlink removes every link of id, both ways.
func unlink(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM belief_links WHERE belief_id = ? OR linked_id = ?", id, id); err != nil {
		return fmt.Errorf("store: unlink %s: %w", id, err)
	}
	return nil
}

// followStatus keeps the links true to a belief's status after a write:
// an active belief keeps them; a merged one hands them to its survivor
// (its one child, when active) and loses them; any other loses them.
func followStatus(ctx context.Context, tx *sql.Tx, b *belief.Belief, at time.Time) error {
	if b.Status == belief.StatusActive {
		return nil
	}
	if b.Status == belief.StatusMerged && len(b.Children) == 1 && b.Children[0] != b.ID {
		keep := b.Children[0]
		rows, err := tx.QueryContext(ctx, "SELECT linked_id, similarity FROM belief_links WHERE belief_id = ?", b.ID)
		if err != nil {
			return fmt.Errorf("store: links of %s: %w", b.ID, err)
		}
		var moved []Link
		for rows.Next() {
			var l Link
			if err := rows.Scan(&l.To, &l.Similarity); err != nil {
				rows.Close()
				return err
			}
			moved = append(moved, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		bt := &BeliefTx{ctx: ctx, tx: tx}
		for _, l := range moved {
			if err := bt.Link(keep, l.To, l.Similarity, at); err != nil {
				return err
			}
		}
	}
	return unlink(ctx, tx, b.ID)
}

// Links returns a belief's links, the most similar first.
func (db *DB) Links(ctx context.Context, id string) ([]Link, error) {
	return db.links(ctx, "SELECT belief_id, linked_id, similarity, created_at FROM belief_links WHERE belief_id = ? ORDER BY similarity DESC, linked_id", id)
}

// AllLinks returns every link row, by belief, the most similar first.
func (db *DB) AllLinks(ctx context.Context) ([]Link, error) {
	return db.links(ctx, "SELECT belief_id, linked_id, similarity, created_at FROM belief_links ORDER BY belief_id, similarity DESC, linked_id")
}

func (db *DB) links(ctx context.Context, q string, args ...any) ([]Link, error) {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: links: %w", err)
	}
	defer rows.Close()
	var out []Link
	for rows.Next() {
		var l Link
		var at int64
		if err := rows.Scan(&l.From, &l.To, &l.Similarity, &at); err != nil {
			return nil, err
		}
		l.At = fromMS(at)
		out = append(out, l)
	}
	return out, rows.Err()
}

// LinkProblems checks the graph: every link has its reverse, joins two
// different beliefs that exist and are active. It returns what is wrong
// (nothing when the graph is sound).
func (db *DB) LinkProblems(ctx context.Context) ([]string, error) {
	var out []string
	rows, err := db.sql.QueryContext(ctx, `SELECT l.belief_id, l.linked_id,
		EXISTS (SELECT 1 FROM belief_links r WHERE r.belief_id = l.linked_id AND r.linked_id = l.belief_id),
		coalesce((SELECT status FROM beliefs WHERE id = l.belief_id), ''),
		coalesce((SELECT status FROM beliefs WHERE id = l.linked_id), '')
		FROM belief_links l ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("store: check links: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, sa, sb string
		var back bool
		if err := rows.Scan(&a, &b, &back, &sa, &sb); err != nil {
			return nil, err
		}
		switch {
		case a == b:
			out = append(out, fmt.Sprintf("%s links itself", a))
		case !back:
			out = append(out, fmt.Sprintf("%s → %s has no reverse", a, b))
		case sa != belief.StatusActive:
			out = append(out, fmt.Sprintf("%s → %s: %s is %q", a, b, a, sa))
		case sb != belief.StatusActive:
			out = append(out, fmt.Sprintf("%s → %s: %s is %q", a, b, b, sb))
		}
	}
	return out, rows.Err()
}
