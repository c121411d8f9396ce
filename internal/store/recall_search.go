package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

// TermDocs is an indexed term of the episodes (a Porter stem, as the FTS
// index holds it) and the number of episodes that contain it.
type TermDocs struct {
	Term string
	Docs int
}

// MaxSearchTerms bounds the terms of SearchTerms (one bit each in a mask).
const MaxSearchTerms = 62

// TermHit is an episode found by SearchTerms.
type TermHit struct {
	Seq   int64
	Score float64 // the sum of the weights of the terms it matched
	Mask  uint64  // bit i set when it matched terms[i]
}

// SearchTerms is the prompt hook's full-text search, in one statement: for
// each term (one quoted FTS5 phrase, stemmed as the index is) its newest
// window matches (all when window is 0), without ranking; the rows are
// scored by the sum of the weights of the terms they match and the best
// limit returned, best first, newest first among equals. bm25 is not used:
// it scores every match, reading each one's column sizes, so its cost grows
// with the store; this stays within the terms times the window. Terms past
// MaxSearchTerms are ignored.
func (db *DB) SearchTerms(ctx context.Context, terms []string, weights []float64, window, limit int) ([]TermHit, error) {
	if len(terms) == 0 || limit <= 0 {
		return nil, nil
	}
	if len(terms) > MaxSearchTerms {
		terms = terms[:MaxSearchTerms]
	}
	perTerm := int64(window)
	if window <= 0 {
		perTerm = -1
	}
	var q strings.Builder
	q.WriteString("SELECT rowid, total(w), sum(b) FROM (")
	args := make([]any, 0, 4*len(terms)+1)
	for i, t := range terms {
		if i > 0 {
			q.WriteString(" UNION ALL ")
		}
		q.WriteString("SELECT ? AS w, ? AS b, rowid FROM (SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? ORDER BY rowid DESC LIMIT ?)")
		w := 1.0
		if i < len(weights) {
			w = weights[i]
		}
		args = append(args, w, int64(1)<<i, `"`+strings.ReplaceAll(t, `"`, `""`)+`"`, perTerm)
	}
	q.WriteString(") GROUP BY rowid ORDER BY 2 DESC, 1 DESC LIMIT ?")
	args = append(args, limit)
	rows, err := db.sql.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: search terms: %w", err)
	}
	defer rows.Close()
	var out []TermHit
	for rows.Next() {
		var h TermHit
		var mask int64
		if err := rows.Scan(&h.Seq, &h.Score, &mask); err != nil {
			return nil, err
		}
		h.Mask = uint64(mask)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search terms: %w", err)
	}
	return out, nil
}

// EachTerm calls fn with every indexed term of the episodes (a Porter
// stem) and the number of episodes that contain it, in term order, and
// returns how many episodes there are. It reads the whole index: for the
// worker, never the hook.
func (db *DB) EachTerm(ctx context.Context, fn func(term string, docs int) error) (int, error) {
	var total int
	if err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM episodes").Scan(&total); err != nil {
		return 0, fmt.Errorf("store: count episodes: %w", err)
	}
	rows, err := db.sql.QueryContext(ctx, "SELECT term, doc FROM episodes_vocab")
	if err != nil {
		return 0, fmt.Errorf("store: terms: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return 0, err
		}
		if err := fn(t, n); err != nil {
			return 0, err
		}
	}
	return total, rows.Err()
}

// RecallEpisode is what recall reads of an episode found by full-text
// search: the fields a bite and its ranking need (not the entities,
// signals or session list).
type RecallEpisode struct {
	Seq int64
	episode.Episode
}

// recallCols are the columns EpisodesBySeq reads, in scanRecall's order.
const recallCols = `seq, id, summary, context, importance, scope, project, project_path, session_id, embedding, embedder,
	occurred_at, access_count, last_accessed_at, stability, type, lifecycle`

func scanRecall(sc interface{ Scan(...any) error }) (RecallEpisode, error) {
	var e RecallEpisode
	var emb []byte
	var occurred int64
	var accessed sql.NullInt64
	err := sc.Scan(&e.Seq, &e.ID, &e.Summary, &e.Context, &e.Importance, &e.Scope, &e.Project, &e.ProjectPath, &e.SessionID,
		&emb, &e.Embedder, &occurred, &e.AccessCount, &accessed, &e.Stability, &e.Type, &e.Lifecycle)
	if err != nil {
		return e, err
	}
	e.Embedding, _ = embed.Decode(emb)
	e.OccurredAt, e.LastAccessedAt = fromMS(occurred), fromMS(accessed.Int64)
	return e, nil
}

// EpisodesBySeq reads the episodes with the given rowids that are visible
// from a project (its own and global ones; every one when projectPath is
// ""), in the order of seqs; archived and expired ones are not recalled.
func (db *DB) EpisodesBySeq(ctx context.Context, seqs []int64, projectPath string) ([]RecallEpisode, error) {
	if len(seqs) == 0 {
		return nil, nil
	}
	q := "SELECT " + recallCols + " FROM episodes WHERE lifecycle IN ('', 'superseded') AND seq IN (?" + strings.Repeat(",?", len(seqs)-1) + ")"
	args := make([]any, 0, len(seqs)+1)
	for _, s := range seqs {
		args = append(args, s)
	}
	if projectPath != "" {
		q += " AND (scope = 'global' OR project_path = ?)"
		args = append(args, projectPath)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: episodes by seq: %w", err)
	}
	defer rows.Close()
	bySeq := map[int64]RecallEpisode{}
	for rows.Next() {
		e, err := scanRecall(rows)
		if err != nil {
			return nil, err
		}
		bySeq[e.Seq] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]RecallEpisode, 0, len(bySeq))
	for _, s := range seqs {
		if e, ok := bySeq[s]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// Neighbours are the episodes just before and just after one episode in its
// session (nil when there is none nearby).
type Neighbours struct {
	Before, After *RecallEpisode
}

// SessionNeighbours finds, for each episode id, the episodes of the same
// session just before and just after it in time. They are looked for among
// the episodes stored within window rowids of it (a session's exchanges are
// ingested in order, a few at a time), so the cost does not grow with the
// store and needs no index on sessions; a neighbour further away is missed.
func (db *DB) SessionNeighbours(ctx context.Context, ids []string, window int) (map[string]Neighbours, error) {
	if len(ids) == 0 || window <= 0 {
		return nil, nil
	}
	q := `SELECT h.id, h.seq, h.session_id, h.occurred_at, ` + prefixed("e.", recallCols) + `
		FROM episodes h JOIN episodes e ON e.seq BETWEEN h.seq - ? AND h.seq + ? AND e.seq != h.seq
		WHERE h.session_id != '' AND e.session_id = h.session_id AND e.lifecycle = '' AND h.id IN (?` + strings.Repeat(",?", len(ids)-1) + ")"
	args := []any{window, window}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: session neighbours: %w", err)
	}
	defer rows.Close()
	out := map[string]Neighbours{}
	for rows.Next() {
		var id, session string
		var seq, at int64
		e, err := scanRecall(scanFront{rows, []any{&id, &seq, &session, &at}})
		if err != nil {
			return nil, err
		}
		// Order by (time, rowid): the nearest before and after.
		hitAt, eAt := fromMS(at), e.OccurredAt
		before := eAt.Before(hitAt) || (eAt.Equal(hitAt) && e.Seq < seq)
		n := out[id]
		if before {
			if n.Before == nil || later(e, *n.Before) {
				n.Before = &e
			}
		} else if n.After == nil || later(*n.After, e) {
			n.After = &e
		}
		out[id] = n
	}
	return out, rows.Err()
}

// later reports whether a comes after b in a session.
func later(a, b RecallEpisode) bool {
	if !a.OccurredAt.Equal(b.OccurredAt) {
		return a.OccurredAt.After(b.OccurredAt)
	}
	return a.Seq > b.Seq
}

// scanFront puts extra destinations before a scan's own.
type scanFront struct {
	sc    interface{ Scan(...any) error }
	front []any
}

func (s scanFront) Scan(dest ...any) error { return s.sc.Scan(append(s.front, dest...)...) }
