package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// MergeTx is an import's view of the store inside its one write
// transaction: it reads this store's version of each record and writes the
// merged one, so that nothing changes between the two, and a failure
// anywhere leaves the store as it was. Package portable decides what to
// write (the merge rules); this type only reads and writes rows.
type MergeTx struct {
	ctx context.Context
	tx  *sql.Tx
	st  *stmts
	bt  *BeliefTx
	now int64
}

// ImportMerge runs fn in one write transaction: all of it, or nothing.
func (db *DB) ImportMerge(ctx context.Context, fn func(*MergeTx) error) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		st := newStmts(ctx, tx)
		defer st.close()
		return fn(&MergeTx{ctx: ctx, tx: tx, st: st, bt: &BeliefTx{ctx: ctx, tx: tx}, now: time.Now().UnixMilli()})
	})
}

// Episode returns this store's episode id, if it holds one.
func (t *MergeTx) Episode(id string) (episode.Episode, bool, error) {
	e, err := scanEpisode(t.st.queryRow("SELECT "+episodeCols+" FROM episodes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, false, nil
	}
	return e, err == nil, err
}

// EpisodeWithContent returns the id of the episode holding this content
// hash ("" for none).
func (t *MergeTx) EpisodeWithContent(hash string) (string, error) { return episodeIDByHash(t.st, hash) }

// Belief returns this store's belief id, if it holds one.
func (t *MergeTx) Belief(id string) (belief.Belief, bool, error) {
	b, err := t.bt.Get(id)
	if errors.Is(err, ErrNotFound) {
		return b, false, nil
	}
	return b, err == nil, err
}

// Forgotten reports whether this store forgot id: its history holds a
// 'forgotten' event (forget replaces a memory's history by one).
func (t *MergeTx) Forgotten(id string) (bool, error) {
	var n int
	err := t.st.queryRow("SELECT count(*) FROM history WHERE memory_id = ? AND action = ?", id, ActionForgotten).Scan(&n)
	return n > 0, err
}

// InsertEpisode stores a new episode as it is.
func (t *MergeTx) InsertEpisode(e *episode.Episode) error { return t.st.insertEpisode(e, t.now) }

// UpdateEpisode rewrites every column of an episode the store holds, but
// its sequence number.
func (t *MergeTx) UpdateEpisode(e *episode.Episode) error {
	sessions := e.SessionIDs
	if len(sessions) == 0 && e.SessionID != "" {
		sessions = []string{e.SessionID}
	}
	res, err := t.st.exec(`UPDATE episodes SET summary=?, context=?, entities=?, signals=?, importance=?, type=?, scope=?,
		project=?, project_path=?, session_id=?, session_ids=?, content_hash=?, embedding=?, embedder=?, extractor=?,
		occurred_at=?, created_at=?, updated_at=?, access_count=?, last_accessed_at=?, stability=?, compressed=?,
		graduated_at=?, kind=?, speculative=?, due_at=?, lifecycle=? WHERE id=?`,
		e.Summary, e.Context, jsonOf(nonNil(e.Entities)), jsonOf(nonNilSignals(e.Signals)), e.Importance, e.Type, e.Scope,
		e.Project, e.ProjectPath, e.SessionID, jsonOf(nonNil(sessions)), e.ContentHash, vectorBlob(e.Embedding), e.Embedder,
		e.Extractor, ms(e.OccurredAt), ms(e.CreatedAt), ms(e.UpdatedAt), e.AccessCount, nullMS(e.LastAccessedAt), e.Stability,
		boolInt(e.Compressed), nullMS(e.GraduatedAt), e.Kind, boolInt(e.Speculative), nullMS(e.DueAt), e.Lifecycle, e.ID)
	if err != nil {
		return fmt.Errorf("update episode %s: %w", e.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("episode %s: %w", e.ID, ErrNotFound)
	}
	return nil
}

// InsertBelief stores a new belief as it is.
func (t *MergeTx) InsertBelief(b *belief.Belief) error { return t.bt.Insert(b) }

// UpdateBelief rewrites every column of a belief the store holds (its
// links follow its status, as in any update).
func (t *MergeTx) UpdateBelief(b *belief.Belief) error { return t.bt.Update(b) }

// HasEvent reports whether the history holds this very event (every field
// alike).
func (t *MergeTx) HasEvent(ev Event) (bool, error) {
	before, err := valuesJSON(ev.Before)
	if err != nil {
		return false, err
	}
	after, err := valuesJSON(ev.After)
	if err != nil {
		return false, err
	}
	var n int
	err = t.st.queryRow(`SELECT count(*) FROM history WHERE memory_id = ? AND action = ? AND at = ? AND cause = ? AND detail = ?
		AND before = ? AND after = ?`, ev.MemoryID, ev.Action, ms(ev.At), ev.Cause, ev.Detail, before, after).Scan(&n)
	return n > 0, err
}

// InsertEvent adds an event to the history.
func (t *MergeTx) InsertEvent(ev Event) error { return insertEvent(t.ctx, t.tx, ev) }

// Link makes the link between two active beliefs, both ways, with its
// confidence and last reinforcement, and reports whether it was new (a
// link whose ends are not both active beliefs is not made). Where the
// store links them already, the greater confidence stays (edge.Merge);
// merged reports whether that changed the store's link.
func (t *MergeTx) Link(l Link) (made, merged bool, err error) { return t.bt.putLink(l) }

// Level returns a belief's level row, if it has one.
func (t *MergeTx) Level(beliefID string) (LevelRecord, bool, error) {
	r := LevelRecord{BeliefID: beliefID}
	var since int64
	err := t.st.queryRow("SELECT level, since, core_target FROM belief_levels WHERE belief_id = ?", beliefID).
		Scan(&r.Level, &since, &r.CoreTarget)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	r.Since = fromMS(since)
	return r, err == nil, err
}

// SetLevel writes a belief's level row; the belief must be in the store.
func (t *MergeTx) SetLevel(r LevelRecord) error { return insertLevel(t.ctx, t.tx, r, t.now) }

// ForgetEpisode forgets an episode as Forget does (its captures, history,
// quarantine entry and place in beliefs' evidence), its history then
// holding one 'forgotten' event at at.
func (t *MergeTx) ForgetEpisode(id string, at time.Time) error {
	return forgetEpisode(t.ctx, t.tx, id, at)
}

// ForgetBelief forgets a belief as Forget does.
func (t *MergeTx) ForgetBelief(id string, at time.Time) error {
	return forgetBelief(t.ctx, t.tx, id, at)
}
