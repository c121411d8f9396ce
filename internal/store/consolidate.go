package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// SeqEpisode is an episode with its insertion sequence number, the
// position consolidation's checkpoint counts in.
type SeqEpisode struct {
	Seq int64
	episode.Episode
}

func (db *DB) seqEpisodes(ctx context.Context, q string, args ...any) ([]SeqEpisode, error) {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list episodes: %w", err)
	}
	defer rows.Close()
	var out []SeqEpisode
	for rows.Next() {
		var se SeqEpisode
		e, err := scanEpisode(scanTail{rows, &se.Seq})
		if err != nil {
			return nil, err
		}
		se.Episode = e
		out = append(out, se)
	}
	return out, rows.Err()
}

// EpisodesAfter returns up to limit episodes inserted after seq, oldest
// first.
func (db *DB) EpisodesAfter(ctx context.Context, seq int64, limit int) ([]SeqEpisode, error) {
	return db.seqEpisodes(ctx, "SELECT "+episodeCols+", seq FROM episodes WHERE seq > ? ORDER BY seq LIMIT ?", seq, limit)
}

// EpisodesWithSeq returns the episodes with the given ids that still
// exist, with their seqs, oldest first.
func (db *DB) EpisodesWithSeq(ctx context.Context, ids []string) ([]SeqEpisode, error) {
	var out []SeqEpisode
	err := inChunks(ids, func(in string, args []any) error {
		got, err := db.seqEpisodes(ctx, "SELECT "+episodeCols+", seq FROM episodes WHERE id IN ("+in+")", args...)
		out = append(out, got...)
		return err
	})
	slices.SortFunc(out, func(a, b SeqEpisode) int { return cmp.Compare(a.Seq, b.Seq) })
	return out, err
}

// EpisodesMentioning returns up to limit live episodes of a project said
// before a time whose summary or context holds term (case aside; the
// caller checks word bounds), newest first.
func (db *DB) EpisodesMentioning(ctx context.Context, projectPath, term string, before time.Time, limit int) ([]episode.Episode, error) {
	return db.episodesHolding(ctx, "episodes mentioning a value", "lifecycle = '' AND ", projectPath, term, before, limit)
}

// EpisodesNaming is EpisodesMentioning whatever the episodes' lifecycle:
// one a correction superseded, archived or expired still says what was
// there.
func (db *DB) EpisodesNaming(ctx context.Context, projectPath, term string, before time.Time, limit int) ([]episode.Episode, error) {
	return db.episodesHolding(ctx, "episodes naming a value", "", projectPath, term, before, limit)
}

// episodesHolding is the query of EpisodesMentioning and EpisodesNaming;
// cond (a constant) narrows it.
func (db *DB) episodesHolding(ctx context.Context, what, cond, projectPath, term string, before time.Time, limit int) ([]episode.Episode, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(term) + "%"
	return db.queryEpisodes(ctx, what, "SELECT "+episodeCols+` FROM episodes
		WHERE `+cond+`project_path = ? AND occurred_at < ? AND (summary LIKE ? ESCAPE '\' OR context LIKE ? ESCAPE '\')
		ORDER BY occurred_at DESC LIMIT ?`, projectPath, ms(before), like, like, limit)
}

// ProjectEpisodes counts the episodes of a project that occurred before a
// time, whatever their lifecycle.
func (db *DB) ProjectEpisodes(ctx context.Context, projectPath string, before time.Time) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM episodes WHERE project_path = ? AND occurred_at < ?",
		projectPath, ms(before)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: project episodes: %w", err)
	}
	return n, nil
}

// StatedBefore returns up to limit episodes of a project that occurred
// before a time and state something (a stated signal), newest first,
// whatever their lifecycle.
func (db *DB) StatedBefore(ctx context.Context, projectPath string, before time.Time, limit int) ([]episode.Episode, error) {
	return db.queryEpisodes(ctx, "stated episodes", "SELECT "+episodeCols+` FROM episodes
		WHERE project_path = ? AND occurred_at < ? AND signals LIKE '%"stated":true%'
		ORDER BY occurred_at DESC LIMIT ?`, projectPath, ms(before), limit)
}

// CorrectingEpisodes returns the episodes of the given projects that hold
// a switch or a correction signal (the caller reads which), whatever their
// lifecycle.
func (db *DB) CorrectingEpisodes(ctx context.Context, projectPaths []string) ([]episode.Episode, error) {
	var out []episode.Episode
	err := inChunks(projectPaths, func(in string, args []any) error {
		eps, err := db.queryEpisodes(ctx, "correcting episodes", "SELECT "+episodeCols+` FROM episodes
			WHERE project_path IN (`+in+`) AND (signals LIKE '%"kind":"switch"%' OR signals LIKE '%"kind":"correction"%')`, args...)
		out = append(out, eps...)
		return err
	})
	return out, err
}

// EpisodesUpTo returns up to limit episodes inserted at or before seq that
// occurred at or after since, newest first.
func (db *DB) EpisodesUpTo(ctx context.Context, seq int64, since time.Time, limit int) ([]SeqEpisode, error) {
	return db.seqEpisodes(ctx, "SELECT "+episodeCols+", seq FROM episodes WHERE seq <= ? AND occurred_at >= ? ORDER BY seq DESC LIMIT ?",
		seq, ms(since), limit)
}

// CountEpisodesAfter counts the episodes inserted after seq.
func (db *DB) CountEpisodesAfter(ctx context.Context, seq int64) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM episodes WHERE seq > ?", seq).Scan(&n)
	return n, err
}

// EpisodesByID returns the episodes with the given ids that still exist.
func (db *DB) EpisodesByID(ctx context.Context, ids []string) (map[string]episode.Episode, error) {
	out := make(map[string]episode.Episode, len(ids))
	err := inChunks(ids, func(in string, args []any) error {
		rows, err := db.sql.QueryContext(ctx, "SELECT "+episodeCols+" FROM episodes WHERE id IN ("+in+")", args...)
		if err != nil {
			return fmt.Errorf("store: episodes by id: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			e, err := scanEpisode(rows)
			if err != nil {
				return err
			}
			out[e.ID] = e
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// inChunks calls fn for successive chunks of vals (at most 500 each, within
// SQLite's limit on bound parameters) with the chunk's placeholders ("?,?,…")
// and its values as arguments.
func inChunks[T any](vals []T, fn func(in string, args []any) error) error {
	const chunk = 500
	for len(vals) > 0 {
		n := min(chunk, len(vals))
		args := make([]any, n)
		for i, v := range vals[:n] {
			args[i] = v
		}
		if err := fn("?"+strings.Repeat(",?", n-1), args); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// SetMeta writes a value of the meta table inside the transaction, so
// that a checkpoint commits with the changes it accounts for.
func (t *BeliefTx) SetMeta(key, value string) error {
	_, err := t.tx.ExecContext(t.ctx, "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("set %s: %w", key, err)
	}
	return nil
}

// UpdateEvidence rewrites what consolidation owns of an existing belief:
// its statement and structured fields, confidence, evidence, lineage,
// embedding, status, kind and lifetime. Access columns (written by recall and expand) and
// promotion columns (written by the MEMORY.md cycle) are left as they are,
// so that a concurrent access is never overwritten by a stale copy.
func (t *BeliefTx) UpdateEvidence(b *belief.Belief) error {
	revs := b.Revisions
	if revs == nil {
		revs = []belief.Revision{}
	}
	res, err := t.tx.ExecContext(t.ctx, `UPDATE beliefs SET statement=?, subject=?, predicate=?, context=?, timeframe=?,
		confidence_alpha=?, confidence_beta=?, supporting_episodes=?, contradicting_episodes=?, partial_episodes=?,
		revision_history=?, parent_belief_id=?, child_belief_ids=?, embedding=?, embedder=?, status=?, evidence_count=?,
		peak_confidence=?, updated_at=?, last_reinforced_at=?, kind=?, speculative=?, due_at=?, source_belief_ids=? WHERE id=?`,
		b.Statement, b.Subject, b.Predicate, b.Context, b.Timeframe, b.Alpha, b.Beta, jsonOf(nonNil(b.Supporting)),
		jsonOf(nonNil(b.Contradicting)), jsonOf(nonNil(b.Partial)), jsonOf(revs), b.ParentID, jsonOf(nonNil(b.Children)),
		vectorBlob(b.Embedding), b.Embedder, b.Status, b.EvidenceCount, b.PeakConfidence, ms(b.UpdatedAt),
		nullMS(b.LastReinforcedAt), b.Kind, boolInt(b.Speculative), nullMS(b.DueAt), jsonOf(nonNil(b.Sources)), b.ID)
	if err != nil {
		return fmt.Errorf("update belief %s: %w", b.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("belief %s: %w", b.ID, ErrNotFound)
	}
	// A belief that leaves the active status takes its links along (a
	// merged one hands them to its survivor).
	return followStatus(t.ctx, t.tx, b, b.UpdatedAt)
}

// CountBeliefFTS counts the beliefs whose full-text index entry matches an
// FTS5 query; it shows that the index follows the table.
func (db *DB) CountBeliefFTS(ctx context.Context, match string) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM beliefs_fts f JOIN beliefs b ON b.seq = f.rowid
		WHERE beliefs_fts MATCH ?`, match).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: belief fts: %w", err)
	}
	return n, nil
}
