package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

// ErrNotFound means no row has the given id.
var ErrNotFound = errors.New("store: not found")

// NewID returns prefix + 12 random hex digits ("ep_", "bl_").
func NewID(prefix string) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return prefix + hex.EncodeToString(b[:])
}

// Outcome is what ingest decided for one capture.
type Outcome struct {
	CaptureID int64
	// Exactly one of the following applies.
	Episode   *episode.Episode // a new episode (ID set by the caller)
	MergeInto string           // an existing episode this capture also supports
	Merge     *EpisodeMerge    // what to add to MergeInto
	Skip      string           // a reason: nothing worth remembering
	Fail      string           // an error; the capture is retried up to MaxAttempts
	// Panicked marks a Fail that was a panic: it would happen again, so
	// the capture is quarantined at once.
	Panicked bool
	// Build names the build that failed on the capture (its quarantine
	// is lifted by another).
	Build string
}

// EpisodeMerge is what a duplicate or a continuation adds to an episode.
type EpisodeMerge struct {
	SessionID  string
	Context    string // appended to the context (bounded by MaxContext)
	Entities   []string
	Importance float64
	MaxContext int
}

// MaxAttempts is how often a failing capture is tried before it is marked
// failed and quarantined.
const MaxAttempts = 3

// IngestResult says what CommitOutcomes did.
type IngestResult struct {
	Inserted, Merged, Skipped, Failed, Stale int
	// IDs maps capture id to the episode it now belongs to.
	IDs map[int64]string
}

// CommitOutcomes applies ingest outcomes in one transaction: episodes are
// inserted or merged and each capture's status changes in the same commit,
// so a worker killed at any point leaves every capture either untouched
// (pending, retried next run) or done with exactly one episode. A capture
// that is no longer pending (another run got to it) is left alone. An
// episode whose content hash already exists is merged into the existing one.
func (db *DB) CommitOutcomes(ctx context.Context, outs []Outcome) (IngestResult, error) {
	var res IngestResult
	err := db.write(ctx, func(tx *sql.Tx) error {
		res = IngestResult{IDs: map[int64]string{}}
		now := time.Now().UnixMilli()
		st := newStmts(ctx, tx)
		defer st.close()
		for _, o := range outs {
			var status string
			var attempts int
			err := st.queryRow("SELECT status, attempts FROM captures WHERE id = ?", o.CaptureID).Scan(&status, &attempts)
			if errors.Is(err, sql.ErrNoRows) || (err == nil && status != CapturePending) {
				res.Stale++
				continue
			}
			if err != nil {
				return err
			}
			switch {
			case o.Fail != "":
				next := CapturePending
				if attempts+1 >= MaxAttempts || o.Panicked {
					next = CaptureFailed
					res.Failed++
					if err := quarantine(ctx, tx, QuarantineCapture, strconv.FormatInt(o.CaptureID, 10), "ingest", o.Fail,
						o.Build, time.UnixMilli(now)); err != nil {
						return err
					}
				}
				if _, err := tx.ExecContext(ctx, "UPDATE captures SET status = ?, attempts = attempts + 1, error = ?, processed_at = ? WHERE id = ?",
					next, clipReason(o.Fail), now, o.CaptureID); err != nil {
					return err
				}
				continue
			case o.Skip != "":
				if _, err := tx.ExecContext(ctx, "UPDATE captures SET status = 'skipped', error = ?, processed_at = ? WHERE id = ?",
					o.Skip, now, o.CaptureID); err != nil {
					return err
				}
				res.Skipped++
				continue
			}
			id := o.MergeInto
			if o.Episode != nil {
				existing, err := episodeIDByHash(st, o.Episode.ContentHash)
				if err != nil {
					return err
				}
				if existing == "" {
					if err := st.insertEpisode(o.Episode, now); err != nil {
						return err
					}
					id = o.Episode.ID
					res.Inserted++
					if err := insertEvent(ctx, tx, episodeFormed(o.Episode, now, fmt.Sprintf("capture %d", o.CaptureID))); err != nil {
						return err
					}
				} else {
					id = existing
					o.Merge = &EpisodeMerge{SessionID: o.Episode.SessionID, Entities: o.Episode.Entities, Importance: o.Episode.Importance}
				}
			}
			if id != "" && id != idOf(o.Episode) {
				if err := mergeEpisode(ctx, tx, id, o.Merge, now, fmt.Sprintf("capture %d", o.CaptureID)); err != nil {
					return err
				}
				res.Merged++
			}
			if id == "" {
				return fmt.Errorf("outcome for capture %d names no episode", o.CaptureID)
			}
			if _, err := st.exec("UPDATE captures SET status = 'done', episode_id = ?, error = '', processed_at = ? WHERE id = ?",
				id, now, o.CaptureID); err != nil {
				return err
			}
			res.IDs[o.CaptureID] = id
		}
		return nil
	})
	if err != nil {
		return IngestResult{}, fmt.Errorf("store: commit ingest: %w", err)
	}
	return res, nil
}

func idOf(e *episode.Episode) string {
	if e == nil {
		return ""
	}
	return e.ID
}

func episodeIDByHash(st *stmts, hash string) (string, error) {
	var id string
	err := st.queryRow("SELECT id FROM episodes WHERE content_hash = ?", hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

const insertEpisodeSQL = `INSERT INTO episodes(id, summary, context, entities, signals, importance, type, scope,
		project, project_path, session_id, session_ids, content_hash, embedding, embedder, extractor,
		occurred_at, created_at, updated_at, access_count, last_accessed_at, stability, compressed, graduated_at,
		kind, speculative, due_at, lifecycle)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`

// stmts prepares the statements a transaction repeats, once: parsing SQL
// costs more than running these statements.
type stmts struct {
	ctx context.Context
	tx  *sql.Tx
	m   map[string]*sql.Stmt
}

func newStmts(ctx context.Context, tx *sql.Tx) *stmts {
	return &stmts{ctx: ctx, tx: tx, m: map[string]*sql.Stmt{}}
}

func (s *stmts) get(q string) (*sql.Stmt, error) {
	if st, ok := s.m[q]; ok {
		return st, nil
	}
	st, err := s.tx.PrepareContext(s.ctx, q)
	if err != nil {
		return nil, err
	}
	s.m[q] = st
	return st, nil
}

func (s *stmts) exec(q string, args ...any) (sql.Result, error) {
	st, err := s.get(q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(s.ctx, args...)
}

func (s *stmts) queryRow(q string, args ...any) *sql.Row {
	st, err := s.get(q)
	if err != nil {
		return s.tx.QueryRowContext(s.ctx, q, args...) // reports the same error on Scan
	}
	return st.QueryRowContext(s.ctx, args...)
}

func (s *stmts) close() {
	for _, st := range s.m {
		st.Close()
	}
}

func (s *stmts) insertEpisode(e *episode.Episode, now int64) error {
	if e.ID == "" || e.ContentHash == "" {
		return fmt.Errorf("episode without id or content hash")
	}
	sessions := e.SessionIDs
	if len(sessions) == 0 && e.SessionID != "" {
		sessions = []string{e.SessionID}
	}
	created, updated := ms(e.CreatedAt), ms(e.UpdatedAt)
	if created == 0 {
		created = now
	}
	if updated == 0 {
		updated = created
	}
	occurred := ms(e.OccurredAt)
	if occurred == 0 {
		occurred = created
	}
	stability := e.Stability
	if stability <= 0 {
		stability = 1
	}
	_, err := s.exec(insertEpisodeSQL,
		e.ID, e.Summary, e.Context, jsonOf(nonNil(e.Entities)), jsonOf(nonNilSignals(e.Signals)), e.Importance, e.Type, e.Scope,
		e.Project, e.ProjectPath, e.SessionID, jsonOf(nonNil(sessions)), e.ContentHash, vectorBlob(e.Embedding), e.Embedder, e.Extractor,
		occurred, created, updated, e.AccessCount, nullMS(e.LastAccessedAt), stability, boolInt(e.Compressed), nullMS(e.GraduatedAt),
		e.Kind, boolInt(e.Speculative), nullMS(e.DueAt), e.Lifecycle)
	if err != nil {
		return fmt.Errorf("insert episode %s: %w", e.ID, err)
	}
	return nil
}

// mergeEpisode adds a duplicate's or continuation's contribution to an episode.
func mergeEpisode(ctx context.Context, tx *sql.Tx, id string, m *EpisodeMerge, now int64, cause string) error {
	if m == nil {
		m = &EpisodeMerge{}
	}
	var sessionsJSON, entitiesJSON, context string
	var importance float64
	err := tx.QueryRowContext(ctx, "SELECT session_ids, entities, context, importance FROM episodes WHERE id = ?", id).
		Scan(&sessionsJSON, &entitiesJSON, &context, &importance)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("merge into %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	var sessions, entities []string
	_ = json.Unmarshal([]byte(sessionsJSON), &sessions)
	_ = json.Unmarshal([]byte(entitiesJSON), &entities)
	before := map[string]any{"importance": importance, "sessions": len(sessions), "context_bytes": len(context)}
	if m.SessionID != "" {
		sessions = appendUnique(sessions, m.SessionID)
	}
	for _, e := range m.Entities {
		if len(entities) >= 30 {
			break
		}
		entities = appendUnique(entities, e)
	}
	if m.Context != "" {
		context = strings.TrimSpace(context + "\n\n" + m.Context)
		if m.MaxContext > 0 && len(context) > m.MaxContext {
			context = context[:m.MaxContext]
			for len(context) > 0 && context[len(context)-1]&0xC0 == 0x80 {
				context = context[:len(context)-1]
			}
		}
	}
	importance = math.Max(importance, m.Importance)
	_, err = tx.ExecContext(ctx, "UPDATE episodes SET session_ids = ?, entities = ?, context = ?, importance = ?, updated_at = ? WHERE id = ?",
		jsonOf(nonNil(sessions)), jsonOf(nonNil(entities)), context, importance, now, id)
	if err != nil {
		return err
	}
	return insertEvent(ctx, tx, Event{At: fromMS(now), MemoryID: id, Action: ActionMerged, Cause: cause,
		Detail: "a duplicate or continuation of the turn was added", Before: before,
		After: map[string]any{"importance": importance, "sessions": len(sessions), "context_bytes": len(context)}})
}

// episodeFormed is the event of a new episode.
func episodeFormed(e *episode.Episode, now int64, cause string) Event {
	at := e.CreatedAt
	if at.IsZero() {
		at = fromMS(now)
	}
	return Event{At: at, MemoryID: e.ID, Action: ActionFormed, Cause: cause,
		After: map[string]any{"type": e.Type, "importance": e.Importance, "scope": e.Scope}}
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// PreviousEpisode returns the episode of the latest done capture of a
// session before the given byte offset ("" if none): a continuation capture
// belongs to it.
func (db *DB) PreviousEpisode(ctx context.Context, sessionID string, before int64) (string, error) {
	id, _, err := db.PreviousEpisodeStart(ctx, sessionID, before)
	return id, err
}

// PreviousEpisodeStart is PreviousEpisode with the byte offset its capture
// starts at (-1 when there is none), so that a caller can tell whether a
// capture of its own batch lies nearer.
func (db *DB) PreviousEpisodeStart(ctx context.Context, sessionID string, before int64) (string, int64, error) {
	var id string
	var start int64
	err := db.sql.QueryRowContext(ctx, `SELECT episode_id, byte_start FROM captures WHERE session_id = ? AND byte_start < ?
		AND status = 'done' AND episode_id != '' ORDER BY byte_start DESC LIMIT 1`, sessionID, before).Scan(&id, &start)
	if errors.Is(err, sql.ErrNoRows) {
		return "", -1, nil
	}
	return id, start, err
}

const episodeCols = `id, summary, context, entities, signals, importance, type, scope, project, project_path, session_id,
	session_ids, content_hash, embedding, embedder, extractor, occurred_at, created_at, updated_at, access_count,
	last_accessed_at, stability, compressed, graduated_at, kind, speculative, due_at, lifecycle`

func scanEpisode(sc interface{ Scan(...any) error }) (episode.Episode, error) {
	var e episode.Episode
	var entities, signals, sessions string
	var emb []byte
	var occurred, created, updated int64
	var accessed, graduated, due sql.NullInt64
	var compressed, speculative int
	err := sc.Scan(&e.ID, &e.Summary, &e.Context, &entities, &signals, &e.Importance, &e.Type, &e.Scope, &e.Project,
		&e.ProjectPath, &e.SessionID, &sessions, &e.ContentHash, &emb, &e.Embedder, &e.Extractor, &occurred, &created,
		&updated, &e.AccessCount, &accessed, &e.Stability, &compressed, &graduated, &e.Kind, &speculative, &due, &e.Lifecycle)
	if err != nil {
		return e, err
	}
	_ = json.Unmarshal([]byte(entities), &e.Entities)
	_ = json.Unmarshal([]byte(signals), &e.Signals)
	_ = json.Unmarshal([]byte(sessions), &e.SessionIDs)
	e.Embedding, _ = embed.Decode(emb)
	e.OccurredAt, e.CreatedAt, e.UpdatedAt = fromMS(occurred), fromMS(created), fromMS(updated)
	e.LastAccessedAt, e.GraduatedAt = fromMS(accessed.Int64), fromMS(graduated.Int64)
	e.Compressed, e.Speculative, e.DueAt = compressed != 0, speculative != 0, fromMS(due.Int64)
	return e, nil
}

// GetEpisode returns one episode by id.
func (db *DB) GetEpisode(ctx context.Context, id string) (episode.Episode, error) {
	e, err := scanEpisode(db.sql.QueryRowContext(ctx, "SELECT "+episodeCols+" FROM episodes WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("episode %s: %w", id, ErrNotFound)
	}
	return e, err
}

// queryEpisodes runs q, which selects episodeCols, and returns its rows;
// what names the query in an error.
func (db *DB) queryEpisodes(ctx context.Context, what, q string, args ...any) ([]episode.Episode, error) {
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	var out []episode.Episode
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// EachEpisode calls fn for every episode in creation order.
func (db *DB) EachEpisode(ctx context.Context, fn func(episode.Episode) error) error {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+episodeCols+" FROM episodes ORDER BY seq")
	if err != nil {
		return fmt.Errorf("store: list episodes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEpisode(rows)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return rows.Err()
}

// VectorRow is an episode's vector with what dedup needs to know.
type VectorRow struct {
	ID          string
	Scope       string
	ProjectPath string
	Vector      []float32
}

// EpisodeVectors loads the vectors of every episode made by one embedder.
func (db *DB) EpisodeVectors(ctx context.Context, embedder string) ([]VectorRow, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT id, scope, project_path, embedding FROM episodes WHERE embedder = ? AND embedding IS NOT NULL", embedder)
	if err != nil {
		return nil, fmt.Errorf("store: episode vectors: %w", err)
	}
	defer rows.Close()
	var out []VectorRow
	for rows.Next() {
		var r VectorRow
		var b []byte
		if err := rows.Scan(&r.ID, &r.Scope, &r.ProjectPath, &b); err != nil {
			return nil, err
		}
		if r.Vector, err = embed.Decode(b); err != nil {
			return nil, fmt.Errorf("episode %s: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// EpisodeCount returns the number of episodes.
func (db *DB) EpisodeCount(ctx context.Context) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM episodes").Scan(&n)
	return n, err
}

// DeleteEpisode removes an episode and its index entries.
func (db *DB) DeleteEpisode(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM episodes WHERE id = ?", id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("episode %s: %w", id, ErrNotFound)
		}
		return nil
	})
}

// RecordError says which record of a batch failed (0-based).
type RecordError struct {
	Index int
	Err   error
}

func (e *RecordError) Error() string { return fmt.Sprintf("record %d: %v", e.Index+1, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// ErrAlreadyStored is the cause of a *StoredError.
var ErrAlreadyStored = errors.New("already in the store")

// StoredError is an imported record the store already holds: the same id,
// or for an episode the same content hash under another id (SameAs).
type StoredError struct {
	Kind   string // "episode" or "belief"
	ID     string
	SameAs string // the stored episode with the same content hash; "" when ID itself is stored
}

func (e *StoredError) Error() string {
	if e.SameAs != "" {
		return fmt.Sprintf("%s %s has the content of %s %s, which is %v", e.Kind, e.ID, e.Kind, e.SameAs, ErrAlreadyStored)
	}
	return fmt.Sprintf("%s %s is %v", e.Kind, e.ID, ErrAlreadyStored)
}

func (e *StoredError) Unwrap() error { return ErrAlreadyStored }

// storedEpisode explains a failed insert of e: a *StoredError when the
// store holds its id or its content hash, else err. A failed statement
// leaves the transaction usable, so it can still be asked.
func (s *stmts) storedEpisode(e *episode.Episode, err error) error {
	var id string
	switch qerr := s.queryRow("SELECT id FROM episodes WHERE id = ?", e.ID).Scan(&id); {
	case qerr == nil:
		return &StoredError{Kind: "episode", ID: e.ID}
	case !errors.Is(qerr, sql.ErrNoRows):
		return err
	}
	if s.queryRow("SELECT id FROM episodes WHERE content_hash = ?", e.ContentHash).Scan(&id) == nil {
		return &StoredError{Kind: "episode", ID: e.ID, SameAs: id}
	}
	return err
}

// ImportEpisodes inserts episodes in one transaction: all or nothing. An
// episode whose id or content hash exists already is a *RecordError. Each
// one's history begins with a 'formed' event caused by "save" (the memory
// tools store episodes this way).
func (db *DB) ImportEpisodes(ctx context.Context, eps []episode.Episode) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		now := time.Now().UnixMilli()
		st := newStmts(ctx, tx)
		defer st.close()
		for i := range eps {
			if err := st.insertEpisode(&eps[i], now); err != nil {
				return &RecordError{Index: i, Err: st.storedEpisode(&eps[i], err)}
			}
			if err := insertEvent(ctx, tx, episodeFormed(&eps[i], now, "save")); err != nil {
				return err
			}
		}
		return nil
	})
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilSignals(s []episode.Signal) []episode.Signal {
	if s == nil {
		return []episode.Signal{}
	}
	return s
}

func nullMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// EpisodeHit is an episode found by full-text search.
type EpisodeHit struct {
	episode.Episode
	BM25 float64 // lower is better
}

// SearchEpisodes runs one FTS5 query (match is FTS5 syntax built by the
// caller from safe, quoted terms) over the episodes visible from a project:
// its own and global ones (every episode when projectPath is empty). The
// summary weighs most, then the entities, then the full context.
func (db *DB) SearchEpisodes(ctx context.Context, match, projectPath string, limit int) ([]EpisodeHit, error) {
	q := `SELECT ` + prefixed("e.", episodeCols) + `, bm25(episodes_fts, 3.0, 1.0, 2.0) AS r
		FROM episodes_fts JOIN episodes e ON e.seq = episodes_fts.rowid
		WHERE episodes_fts MATCH ?`
	args := []any{match}
	if projectPath != "" {
		q += ` AND (e.scope = 'global' OR e.project_path = ?)`
		args = append(args, projectPath)
	}
	q += ` ORDER BY r LIMIT ?`
	args = append(args, limit)
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search episodes: %w", err)
	}
	defer rows.Close()
	var out []EpisodeHit
	for rows.Next() {
		var h EpisodeHit
		var r float64
		e, err := scanEpisode(scanTail{rows, &r})
		if err != nil {
			return nil, err
		}
		h.Episode, h.BM25 = e, r
		out = append(out, h)
	}
	return out, rows.Err()
}

// scanTail appends extra destinations to a scan.
type scanTail struct {
	sc    interface{ Scan(...any) error }
	extra any
}

func (s scanTail) Scan(dest ...any) error { return s.sc.Scan(append(dest, s.extra)...) }

func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// vectorBlob is a vector as stored: NULL when there is none.
func vectorBlob(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	return embed.Encode(v)
}
