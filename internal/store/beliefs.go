package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/edge"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

const beliefCols = `id, statement, subject, predicate, context, timeframe, confidence_alpha, confidence_beta, scope, project,
	project_path, supporting_episodes, contradicting_episodes, partial_episodes, revision_history, parent_belief_id,
	child_belief_ids, embedding, embedder, status, evidence_count, stability, peak_confidence, created_at, updated_at,
	last_reinforced_at, last_accessed_at, access_count, promoted_at, demoted_at, kind, speculative, due_at, source_belief_ids`

func beliefArgs(b *belief.Belief) []any {
	revs := b.Revisions
	if revs == nil {
		revs = []belief.Revision{}
	}
	return []any{b.ID, b.Statement, b.Subject, b.Predicate, b.Context, b.Timeframe, b.Alpha, b.Beta, b.Scope, b.Project,
		b.ProjectPath, jsonOf(nonNil(b.Supporting)), jsonOf(nonNil(b.Contradicting)), jsonOf(nonNil(b.Partial)), jsonOf(revs),
		b.ParentID, jsonOf(nonNil(b.Children)), vectorBlob(b.Embedding), b.Embedder, b.Status, b.EvidenceCount, b.Stability,
		b.PeakConfidence, ms(b.CreatedAt), ms(b.UpdatedAt), nullMS(b.LastReinforcedAt), nullMS(b.LastAccessedAt),
		b.AccessCount, nullMS(b.PromotedAt), nullMS(b.DemotedAt), b.Kind, boolInt(b.Speculative), nullMS(b.DueAt),
		jsonOf(nonNil(b.Sources))}
}

func scanBelief(sc interface{ Scan(...any) error }) (belief.Belief, error) {
	var b belief.Belief
	var sup, con, par, revs, kids string
	var emb []byte
	var created, updated int64
	var reinforced, accessed, promoted, demoted, due sql.NullInt64
	var speculative int
	var sources string
	err := sc.Scan(&b.ID, &b.Statement, &b.Subject, &b.Predicate, &b.Context, &b.Timeframe, &b.Alpha, &b.Beta, &b.Scope,
		&b.Project, &b.ProjectPath, &sup, &con, &par, &revs, &b.ParentID, &kids, &emb, &b.Embedder, &b.Status,
		&b.EvidenceCount, &b.Stability, &b.PeakConfidence, &created, &updated, &reinforced, &accessed, &b.AccessCount,
		&promoted, &demoted, &b.Kind, &speculative, &due, &sources)
	if err != nil {
		return b, err
	}
	_ = json.Unmarshal([]byte(sup), &b.Supporting)
	_ = json.Unmarshal([]byte(con), &b.Contradicting)
	_ = json.Unmarshal([]byte(par), &b.Partial)
	_ = json.Unmarshal([]byte(revs), &b.Revisions)
	_ = json.Unmarshal([]byte(kids), &b.Children)
	b.Embedding, _ = embed.Decode(emb)
	b.CreatedAt, b.UpdatedAt = fromMS(created), fromMS(updated)
	b.LastReinforcedAt, b.LastAccessedAt = fromMS(reinforced.Int64), fromMS(accessed.Int64)
	b.PromotedAt, b.DemotedAt = fromMS(promoted.Int64), fromMS(demoted.Int64)
	b.Speculative, b.DueAt = speculative != 0, fromMS(due.Int64)
	_ = json.Unmarshal([]byte(sources), &b.Sources)
	if len(b.Sources) == 0 {
		b.Sources = nil
	}
	return b, nil
}

// BeliefTx is a write transaction over beliefs (consolidation's unit of
// work: every change of one cycle step commits together).
type BeliefTx struct {
	ctx context.Context
	tx  *sql.Tx
}

// Beliefs runs fn in one write transaction.
func (db *DB) Beliefs(ctx context.Context, fn func(*BeliefTx) error) error {
	return db.write(ctx, func(tx *sql.Tx) error { return fn(&BeliefTx{ctx: ctx, tx: tx}) })
}

// Insert stores a new belief.
func (t *BeliefTx) Insert(b *belief.Belief) error {
	if b.ID == "" || b.Statement == "" {
		return fmt.Errorf("belief without id or statement")
	}
	now := time.Now()
	if b.CreatedAt.IsZero() {
		b.CreatedAt = now
	}
	if b.UpdatedAt.IsZero() {
		b.UpdatedAt = b.CreatedAt
	}
	if b.Stability <= 0 {
		b.Stability = 1
	}
	_, err := t.tx.ExecContext(t.ctx, "INSERT INTO beliefs("+beliefCols+") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		beliefArgs(b)...)
	if err != nil {
		return fmt.Errorf("insert belief %s: %w", b.ID, err)
	}
	return nil
}

// Update rewrites every column of an existing belief.
func (t *BeliefTx) Update(b *belief.Belief) error {
	args := beliefArgs(b)
	res, err := t.tx.ExecContext(t.ctx, `UPDATE beliefs SET statement=?, subject=?, predicate=?, context=?, timeframe=?,
		confidence_alpha=?, confidence_beta=?, scope=?, project=?, project_path=?, supporting_episodes=?,
		contradicting_episodes=?, partial_episodes=?, revision_history=?, parent_belief_id=?, child_belief_ids=?, embedding=?,
		embedder=?, status=?, evidence_count=?, stability=?, peak_confidence=?, created_at=?, updated_at=?,
		last_reinforced_at=?, last_accessed_at=?, access_count=?, promoted_at=?, demoted_at=?, kind=?, speculative=?,
		due_at=?, source_belief_ids=? WHERE id=?`,
		append(args[1:], args[0])...)
	if err != nil {
		return fmt.Errorf("update belief %s: %w", b.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("belief %s: %w", b.ID, ErrNotFound)
	}
	return followStatus(t.ctx, t.tx, b, b.UpdatedAt)
}

// Get returns a belief inside the transaction.
func (t *BeliefTx) Get(id string) (belief.Belief, error) {
	b, err := scanBelief(t.tx.QueryRowContext(t.ctx, "SELECT "+beliefCols+" FROM beliefs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("belief %s: %w", id, ErrNotFound)
	}
	return b, err
}

// GetBelief returns one belief by id.
func (db *DB) GetBelief(ctx context.Context, id string) (belief.Belief, error) {
	b, err := scanBelief(db.sql.QueryRowContext(ctx, "SELECT "+beliefCols+" FROM beliefs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return b, fmt.Errorf("belief %s: %w", id, ErrNotFound)
	}
	return b, err
}

// BeliefFilter selects beliefs to list.
type BeliefFilter struct {
	Status      string // "" for every status
	Scope       string
	ProjectPath string
	MinConf     float64
	Kind        string // "" for every kind
}

// ListBeliefs returns beliefs matching f, by confidence then evidence.
func (db *DB) ListBeliefs(ctx context.Context, f BeliefFilter) ([]belief.Belief, error) {
	q := "SELECT " + beliefCols + " FROM beliefs WHERE confidence_alpha / (confidence_alpha + confidence_beta) >= ?"
	args := []any{f.MinConf}
	if f.Status != "" {
		q += " AND status = ?"
		args = append(args, f.Status)
	}
	if f.Scope != "" {
		q += " AND scope = ?"
		args = append(args, f.Scope)
	}
	if f.ProjectPath != "" {
		q += " AND project_path = ?"
		args = append(args, f.ProjectPath)
	}
	if f.Kind != "" {
		q += " AND kind = ?"
		args = append(args, f.Kind)
	}
	q += " ORDER BY confidence_alpha / (confidence_alpha + confidence_beta) DESC, evidence_count DESC, seq"
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list beliefs: %w", err)
	}
	defer rows.Close()
	var out []belief.Belief
	for rows.Next() {
		b, err := scanBelief(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// EachBelief calls fn for every belief in creation order.
func (db *DB) EachBelief(ctx context.Context, fn func(belief.Belief) error) error {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+beliefCols+" FROM beliefs ORDER BY seq")
	if err != nil {
		return fmt.Errorf("store: list beliefs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		b, err := scanBelief(rows)
		if err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DeleteBelief removes a belief and its index entries.
func (db *DB) DeleteBelief(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM beliefs WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("belief %s: %w", id, ErrNotFound)
		}
		if err := unlink(ctx, tx, id); err != nil {
			return err
		}
		return forgetReview(ctx, tx, id)
	})
}

// ImportBeliefs inserts beliefs in one transaction: all or nothing.
func (db *DB) ImportBeliefs(ctx context.Context, bs []belief.Belief) error {
	return db.Beliefs(ctx, func(t *BeliefTx) error {
		for i := range bs {
			if err := t.Insert(&bs[i]); err != nil {
				return &RecordError{Index: i, Err: storedBelief(ctx, t.tx, &bs[i], err)}
			}
		}
		return nil
	})
}

// storedBelief explains a failed insert of b: a *StoredError when the store
// holds its id, else err.
func storedBelief(ctx context.Context, tx *sql.Tx, b *belief.Belief, err error) error {
	var id string
	if tx.QueryRowContext(ctx, "SELECT id FROM beliefs WHERE id = ?", b.ID).Scan(&id) == nil {
		return &StoredError{Kind: "belief", ID: b.ID}
	}
	return err
}

// Import inserts episodes, then beliefs, then history events in one
// transaction: all or nothing. A failing record is a *RecordError whose
// Index counts the episodes first, then the beliefs, then the events.
func (db *DB) Import(ctx context.Context, eps []episode.Episode, bs []belief.Belief, evs ...Event) error {
	return db.ImportAll(ctx, eps, bs, evs, nil)
}

// ImportAll is Import with links between beliefs (a link whose ends are
// not both active beliefs is not made; one without a lifecycle, a zero
// edge.State, is new at its At), then the beliefs' review levels.
// A failing record's Index counts on through the links and the levels.
func (db *DB) ImportAll(ctx context.Context, eps []episode.Episode, bs []belief.Belief, evs []Event, links []Link, levels ...LevelRecord) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixMilli()
		st := newStmts(ctx, tx)
		defer st.close()
		for i := range eps {
			if err := st.insertEpisode(&eps[i], now); err != nil {
				return &RecordError{Index: i, Err: st.storedEpisode(&eps[i], err)}
			}
		}
		bt := &BeliefTx{ctx: ctx, tx: tx}
		for i := range bs {
			if err := bt.Insert(&bs[i]); err != nil {
				return &RecordError{Index: len(eps) + i, Err: storedBelief(ctx, tx, &bs[i], err)}
			}
		}
		for i, ev := range evs {
			if err := insertEvent(ctx, tx, ev); err != nil {
				return &RecordError{Index: len(eps) + len(bs) + i, Err: err}
			}
		}
		for i, l := range links {
			if l.State == (edge.State{}) {
				l.State = edge.New(l.At)
			}
			if _, _, err := bt.putLink(l); err != nil {
				return &RecordError{Index: len(eps) + len(bs) + len(evs) + i, Err: err}
			}
		}
		for i, r := range levels {
			if err := insertLevel(ctx, tx, r, now); err != nil {
				return &RecordError{Index: len(eps) + len(bs) + len(evs) + len(links) + i, Err: err}
			}
		}
		return nil
	})
}
