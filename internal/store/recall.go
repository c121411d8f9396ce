package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
)

// RecallProjects lists the project paths that have project-scoped episodes
// or beliefs.
func (db *DB) RecallProjects(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT project_path FROM episodes WHERE scope = 'project' AND project_path != ''
		UNION SELECT project_path FROM beliefs WHERE scope = 'project' AND project_path != '' AND status = 'active'`)
	if err != nil {
		return nil, fmt.Errorf("store: recall projects: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// CandidateEpisodes returns the episodes a recollection file carries for a
// scope (and project): the most important and the most recent, up to limit
// of each, without repeats; archived and expired ones are not recalled, and
// superseded ones are, to be shown as such.
func (db *DB) CandidateEpisodes(ctx context.Context, scope, projectPath string, limit int) ([]episode.Episode, error) {
	where := "lifecycle IN ('', 'superseded') AND scope = 'global'"
	args := []any{}
	if scope == episode.ScopeProject {
		where = "lifecycle IN ('', 'superseded') AND scope = 'project' AND project_path = ?"
		args = append(args, projectPath)
	}
	q := "SELECT " + episodeCols + " FROM episodes WHERE seq IN (" +
		"SELECT seq FROM (SELECT seq FROM episodes WHERE " + where + " ORDER BY importance DESC, occurred_at DESC LIMIT ?)" +
		" UNION SELECT seq FROM (SELECT seq FROM episodes WHERE " + where + " ORDER BY occurred_at DESC LIMIT ?)) ORDER BY seq"
	args = append(append(args, limit), append(append([]any{}, args...), limit)...)
	return db.queryEpisodes(ctx, "candidate episodes", q, args...)
}

// Access is one retrieval of an episode or a belief.
type Access struct {
	ID string
	At time.Time
}

// RecordAccesses applies retrievals in one transaction: access count, last
// access, and stability by the spaced-repetition rule (stability × (1 + 0.1
// × ln(1 + hours since the previous access / 24)), at most 365). Unknown ids
// (forgotten since) are ignored. It returns how many were applied.
func (db *DB) RecordAccesses(ctx context.Context, acc []Access) (int, error) {
	return db.RecordAccessesOnce(ctx, acc, "")
}

// RecordAccessesOnce is RecordAccesses that also sets the meta key marker
// (when not empty) in the same transaction, so that the caller can tell
// whether a batch was applied.
func (db *DB) RecordAccessesOnce(ctx context.Context, acc []Access, marker string) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		if marker != "" {
			if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET value = '1'", marker); err != nil {
				return err
			}
		}
		for _, a := range acc {
			table := "episodes"
			if len(a.ID) > 3 && a.ID[:3] == "bl_" {
				table = "beliefs"
			}
			var last sql.NullInt64
			var stability float64
			err := tx.QueryRowContext(ctx, "SELECT last_accessed_at, stability FROM "+table+" WHERE id = ?", a.ID).Scan(&last, &stability)
			if err == sql.ErrNoRows {
				continue
			}
			if err != nil {
				return err
			}
			next := belief.NextStability(stability, fromMS(last.Int64), a.At)
			at := a.At.UnixMilli()
			if last.Valid && last.Int64 > at {
				at = last.Int64
			}
			if _, err := tx.ExecContext(ctx, "UPDATE "+table+" SET access_count = access_count + 1, last_accessed_at = ?, stability = ? WHERE id = ?",
				at, next, a.ID); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: record accesses: %w", err)
	}
	return n, nil
}

// BeliefCard is what recall needs of a belief.
type BeliefCard struct {
	ID             string
	Statement      string
	Scope          string
	Project        string
	ProjectPath    string
	Alpha, Beta    float64
	EvidenceCount  int
	Embedding      []float32
	Embedder       string
	UpdatedAt      time.Time
	LastReinforced time.Time
	LastAccessed   time.Time
	AccessCount    int
	Stability      float64
}

// Confidence is α/(α+β).
func (b BeliefCard) Confidence() float64 { return b.Alpha / (b.Alpha + b.Beta) }

// SurfaceableBeliefs returns the active beliefs with confidence above min,
// except those the user denied.
func (db *DB) SurfaceableBeliefs(ctx context.Context, min float64) ([]BeliefCard, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, statement, scope, project, project_path, confidence_alpha, confidence_beta,
		evidence_count, embedding, embedder, updated_at, last_reinforced_at, last_accessed_at, access_count, stability
		FROM beliefs WHERE status = 'active' AND confidence_alpha / (confidence_alpha + confidence_beta) > ?
		AND id NOT IN (SELECT belief_id FROM belief_levels WHERE level = 'denied')
		ORDER BY seq`, min)
	if err != nil {
		return nil, fmt.Errorf("store: surfaceable beliefs: %w", err)
	}
	defer rows.Close()
	var out []BeliefCard
	for rows.Next() {
		var b BeliefCard
		var emb []byte
		var updated int64
		var reinforced, accessed sql.NullInt64
		if err := rows.Scan(&b.ID, &b.Statement, &b.Scope, &b.Project, &b.ProjectPath, &b.Alpha, &b.Beta, &b.EvidenceCount,
			&emb, &b.Embedder, &updated, &reinforced, &accessed, &b.AccessCount, &b.Stability); err != nil {
			return nil, err
		}
		b.Embedding, _ = embed.Decode(emb)
		b.UpdatedAt, b.LastReinforced, b.LastAccessed = fromMS(updated), fromMS(reinforced.Int64), fromMS(accessed.Int64)
		out = append(out, b)
	}
	return out, rows.Err()
}

// SessionAnchor is the latest episode of a recently active session.
type SessionAnchor struct {
	SessionID   string
	ProjectPath string
	EpisodeID   string
}

// RecentSessionAnchors returns, for each session active since the given
// time, the episode of its latest ingested capture.
func (db *DB) RecentSessionAnchors(ctx context.Context, since time.Time) ([]SessionAnchor, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.session_id, s.project_path,
		(SELECT c.episode_id FROM captures c WHERE c.session_id = s.session_id AND c.status = 'done' AND c.episode_id != ''
		 ORDER BY c.byte_start DESC LIMIT 1)
		FROM sessions s WHERE s.last_activity_at >= ?`, ms(since))
	if err != nil {
		return nil, fmt.Errorf("store: session anchors: %w", err)
	}
	defer rows.Close()
	var out []SessionAnchor
	for rows.Next() {
		var a SessionAnchor
		var ep sql.NullString
		if err := rows.Scan(&a.SessionID, &a.ProjectPath, &ep); err != nil {
			return nil, err
		}
		if ep.Valid && ep.String != "" {
			a.EpisodeID = ep.String
			out = append(out, a)
		}
	}
	return out, rows.Err()
}

// BeliefSubject is what an active belief is about, with the episodes that
// support it.
type BeliefSubject struct {
	ID, Subject string
	Supporting  []string
}

// BeliefSubjects returns the subjects of the active beliefs with
// confidence above min, the most confident first.
func (db *DB) BeliefSubjects(ctx context.Context, min float64) ([]BeliefSubject, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, subject, supporting_episodes FROM beliefs
		WHERE status = 'active' AND subject != '' AND confidence_alpha / (confidence_alpha + confidence_beta) > ?
		ORDER BY confidence_alpha / (confidence_alpha + confidence_beta) DESC, seq`, min)
	if err != nil {
		return nil, fmt.Errorf("store: belief subjects: %w", err)
	}
	defer rows.Close()
	var out []BeliefSubject
	for rows.Next() {
		var s BeliefSubject
		var sup string
		if err := rows.Scan(&s.ID, &s.Subject, &sup); err != nil {
			return nil, err
		}
		_ = json.Unmarshal([]byte(sup), &s.Supporting)
		out = append(out, s)
	}
	return out, rows.Err()
}
