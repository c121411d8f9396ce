package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
)

// Link is one belief's link to a related one, with its place in the edge
// lifecycle (package edge): its confidence as the last maintenance left
// it, and its last reinforcement (At, when it was made, for a link never
// reinforced since). Both rows of a link hold the same state.
type Link struct {
	From, To   string
	Similarity float64
	At         time.Time
	edge.State
}

// NewLink is a link first observed at at (edge.New).
func NewLink(from, to string, sim float64, at time.Time) Link {
	return Link{From: from, To: to, Similarity: sim, At: at, State: edge.New(at)}
}

// Link records that two active beliefs were observed related at at, both
// ways (a link to a belief that is not active, or to itself, is not
// made): a new link starts as edge.New; an existing one, in either
// direction, is reinforced (edge.State.Reinforce), keeping its similarity
// and the time it was made.
func (t *BeliefTx) Link(a, b string, sim float64, at time.Time) error {
	ok, err := t.bothActive(a, b)
	if err != nil || !ok {
		return err
	}
	l := NewLink(a, b, sim, at)
	old, found, err := t.linkState(a, b)
	if err != nil {
		return err
	}
	if found {
		l.Similarity, l.At, l.State = old.Similarity, old.At, old.Reinforce(at)
	}
	return t.writeLink(l)
}

// putLink makes the link l between two active beliefs, both ways, as it
// is (a merge's or an import's): where a link joins them already, the
// state of the two is edge.Merge's (the greater confidence), the
// similarity the greater and the time it was made the earlier. It reports
// whether the link is new, and whether an existing one changed.
func (t *BeliefTx) putLink(l Link) (made, changed bool, err error) {
	ok, err := t.bothActive(l.From, l.To)
	if err != nil || !ok {
		return false, false, err
	}
	l.State = l.Clamped()
	old, found, err := t.linkState(l.From, l.To)
	if err != nil {
		return false, false, err
	}
	if found {
		l.State = edge.Merge(old.State, l.State)
		l.Similarity = max(old.Similarity, l.Similarity)
		if l.At.IsZero() || (!old.At.IsZero() && old.At.Before(l.At)) {
			l.At = old.At
		}
		if l.State == old.State && l.Similarity == old.Similarity && l.At.Equal(old.At) {
			return false, false, nil
		}
	}
	return !found, found, t.writeLink(l)
}

func (t *BeliefTx) bothActive(a, b string) (bool, error) {
	if a == b {
		return false, nil
	}
	var n int
	if err := t.tx.QueryRowContext(t.ctx, "SELECT count(*) FROM beliefs WHERE id IN (?, ?) AND status = 'active'", a, b).Scan(&n); err != nil {
		return false, fmt.Errorf("store: link %s %s: %w", a, b, err)
	}
	return n == 2, nil
}

// linkState reads the link between a and b, in either direction (both
// rows agree; were they not to, the one of greater confidence counts).
func (t *BeliefTx) linkState(a, b string) (Link, bool, error) {
	var l Link
	var at, rat int64
	err := t.tx.QueryRowContext(t.ctx, `SELECT similarity, created_at, confidence, reinforced_confidence, reinforced_at FROM belief_links
		WHERE (belief_id = ? AND linked_id = ?) OR (belief_id = ? AND linked_id = ?) ORDER BY confidence DESC LIMIT 1`, a, b, b, a).
		Scan(&l.Similarity, &at, &l.Confidence, &l.ReinforcedConfidence, &rat)
	if errors.Is(err, sql.ErrNoRows) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("store: link %s %s: %w", a, b, err)
	}
	l.From, l.To, l.At, l.ReinforcedAt = a, b, fromMS(at), fromMS(rat)
	return l, true, nil
}

// writeLink writes both rows of l, over any there are.
func (t *BeliefTx) writeLink(l Link) error {
	st := l.Clamped()
	for _, p := range [][2]string{{l.From, l.To}, {l.To, l.From}} {
		if _, err := t.tx.ExecContext(t.ctx, `INSERT INTO belief_links(belief_id, linked_id, similarity, created_at, confidence,
			reinforced_confidence, reinforced_at) VALUES (?,?,?,?,?,?,?)
			ON CONFLICT(belief_id, linked_id) DO UPDATE SET similarity = excluded.similarity, created_at = excluded.created_at,
			confidence = excluded.confidence, reinforced_confidence = excluded.reinforced_confidence, reinforced_at = excluded.reinforced_at`,
			p[0], p[1], l.Similarity, ms(l.At), st.Confidence, st.ReinforcedConfidence, ms(st.ReinforcedAt)); err != nil {
			return fmt.Errorf("store: link %s %s: %w", l.From, l.To, err)
		}
	}
	return nil
}

// DecayLinks brings every link's confidence to what edge.Decayed makes of
// its last reinforcement at now, and returns how many links (counting
// each once, not its two rows) it lowered. It works from the reinforcement,
// not the confidence it finds, so a second run at the same now changes
// nothing.
func (db *DB) DecayLinks(ctx context.Context, now time.Time) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		type row struct {
			from, to string
			conf     float64
		}
		// A link still in its grace period keeps the confidence its last
		// reinforcement gave it: only the older ones are read.
		rows, err := tx.QueryContext(ctx, "SELECT belief_id, linked_id, confidence, reinforced_confidence, reinforced_at FROM belief_links WHERE reinforced_at <= ?",
			ms(now.Add(-edge.Grace)))
		if err != nil {
			return err
		}
		var changed []row
		for rows.Next() {
			var r row
			var cur, base float64
			var at int64
			if err := rows.Scan(&r.from, &r.to, &cur, &base, &at); err != nil {
				rows.Close()
				return err
			}
			if r.conf = edge.Decayed(base, fromMS(at), now); r.conf != cur {
				changed = append(changed, r)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range changed {
			if _, err := tx.ExecContext(ctx, "UPDATE belief_links SET confidence = ? WHERE belief_id = ? AND linked_id = ?", r.conf, r.from, r.to); err != nil {
				return err
			}
			if r.from < r.to {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: decay links: %w", err)
	}
	return n, nil
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
// (its one child, when active), each with its confidence (where the
// survivor has a link to the same belief already, the greater confidence
// stays), and loses them; any other loses them.
func followStatus(ctx context.Context, tx *sql.Tx, b *belief.Belief, at time.Time) error {
	if b.Status == belief.StatusActive {
		return nil
	}
	if b.Status == belief.StatusMerged && len(b.Children) == 1 && b.Children[0] != b.ID {
		keep := b.Children[0]
		rows, err := tx.QueryContext(ctx, "SELECT "+linkCols+" FROM belief_links WHERE belief_id = ?", b.ID)
		if err != nil {
			return fmt.Errorf("store: links of %s: %w", b.ID, err)
		}
		moved, err := scanLinks(rows)
		if err != nil {
			return fmt.Errorf("store: links of %s: %w", b.ID, err)
		}
		bt := &BeliefTx{ctx: ctx, tx: tx}
		for _, l := range moved {
			l.From = keep
			if l.At.IsZero() {
				l.At = at
			}
			if _, _, err := bt.putLink(l); err != nil {
				return err
			}
		}
	}
	return unlink(ctx, tx, b.ID)
}

// Links returns a belief's links, the most similar first.
func (db *DB) Links(ctx context.Context, id string) ([]Link, error) {
	return db.links(ctx, "SELECT "+linkCols+" FROM belief_links WHERE belief_id = ? ORDER BY similarity DESC, linked_id", id)
}

// AllLinks returns every link row, by belief, the most similar first.
func (db *DB) AllLinks(ctx context.Context) ([]Link, error) {
	return db.links(ctx, "SELECT "+linkCols+" FROM belief_links ORDER BY belief_id, similarity DESC, linked_id")
}

const linkCols = "belief_id, linked_id, similarity, created_at, confidence, reinforced_confidence, reinforced_at"

func (db *DB) links(ctx context.Context, q string, args ...any) ([]Link, error) {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: links: %w", err)
	}
	out, err := scanLinks(rows)
	if err != nil {
		return nil, fmt.Errorf("store: links: %w", err)
	}
	return out, nil
}

// scanLinks reads rows of linkCols, and closes them.
func scanLinks(rows *sql.Rows) ([]Link, error) {
	defer rows.Close()
	var out []Link
	for rows.Next() {
		var l Link
		var at, rat int64
		if err := rows.Scan(&l.From, &l.To, &l.Similarity, &at, &l.Confidence, &l.ReinforcedConfidence, &rat); err != nil {
			return nil, err
		}
		l.At, l.ReinforcedAt = fromMS(at), fromMS(rat)
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
