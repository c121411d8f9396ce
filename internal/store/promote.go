package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// PromotionBelief is what promotion needs to know about one belief.
type PromotionBelief struct {
	ID            string
	Statement     string
	Subject       string
	Scope         string
	Project       string
	ProjectPath   string
	Status        string
	Alpha, Beta   float64
	EvidenceCount int
	CreatedAt     time.Time
	// PromotedAt is set while the belief is shown in a MEMORY.md, DemotedAt
	// while it is shown there as a former belief.
	PromotedAt time.Time
	DemotedAt  time.Time
	// PromotedTo is the MEMORY.md it is shown in ("" when none).
	PromotedTo string
	// PromotedConfidence is the confidence it was last shown with as an
	// active belief (0 when never shown).
	PromotedConfidence float64
	// FirstEvidence is the context and type of its first supporting
	// episode not superseded ("" when it has none or those episodes are
	// gone): the words the belief was first stated in, never words the
	// user has since corrected.
	FirstEvidence, FirstEvidenceType string
	// Level is the belief's review level (LevelPending when it has none).
	Level string
}

// Confidence is α/(α+β).
func (b PromotionBelief) Confidence() float64 { return belief.Confidence(b.Alpha, b.Beta) }

// Shown reports whether the belief is in a MEMORY.md, as a belief or a
// former one.
func (b PromotionBelief) Shown() bool { return !b.PromotedAt.IsZero() && b.PromotedTo != "" }

// PromotionCandidates returns every belief promotion has to consider: the
// active ones at or above the thresholds, the pinned ones, and every one
// shown or marked promoted now.
func (db *DB) PromotionCandidates(ctx context.Context, minConfidence float64, minEvidence int) ([]PromotionBelief, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT beliefs.id, beliefs.statement, beliefs.subject, scope, project, project_path, status, confidence_alpha,
		confidence_beta, evidence_count, created_at, promoted_at, demoted_at, promoted_to, promoted_confidence,
		coalesce((SELECT e.context FROM json_each(beliefs.supporting_episodes) j JOIN episodes e ON e.id = j.value
			WHERE e.lifecycle != 'superseded' ORDER BY j.key LIMIT 1), ''),
		coalesce((SELECT e.type FROM json_each(beliefs.supporting_episodes) j JOIN episodes e ON e.id = j.value
			WHERE e.lifecycle != 'superseded' ORDER BY j.key LIMIT 1), ''),
		coalesce(l.level, 'pending')
		FROM beliefs LEFT JOIN belief_levels l ON l.belief_id = beliefs.id
		WHERE (status = 'active' AND evidence_count >= ? AND confidence_alpha / (confidence_alpha + confidence_beta) >= ?)
		   OR promoted_at IS NOT NULL OR promoted_to != '' OR (status = 'active' AND l.level = 'pinned')
		ORDER BY beliefs.seq`, minEvidence, minConfidence)
	if err != nil {
		return nil, fmt.Errorf("store: promotion candidates: %w", err)
	}
	defer rows.Close()
	var out []PromotionBelief
	for rows.Next() {
		var b PromotionBelief
		var created int64
		var promoted, demoted sql.NullInt64
		var shownConf sql.NullFloat64
		if err := rows.Scan(&b.ID, &b.Statement, &b.Subject, &b.Scope, &b.Project, &b.ProjectPath, &b.Status, &b.Alpha, &b.Beta,
			&b.EvidenceCount, &created, &promoted, &demoted, &b.PromotedTo, &shownConf, &b.FirstEvidence, &b.FirstEvidenceType, &b.Level); err != nil {
			return nil, err
		}
		b.CreatedAt = fromMS(created)
		b.PromotedAt, b.DemotedAt = fromMS(promoted.Int64), fromMS(demoted.Int64)
		b.PromotedConfidence = shownConf.Float64
		out = append(out, b)
	}
	return out, rows.Err()
}

// PromotionOp is what happens to one belief in one MEMORY.md.
type PromotionOp int

// Promotion operations.
const (
	// OpPromote shows the belief in Target as a belief (a first promotion,
	// a re-promotion after a demotion, or a move from another file).
	OpPromote PromotionOp = iota + 1
	// OpKeep records the confidence a belief still shown is shown with.
	OpKeep
	// OpDemote moves a shown belief to the former beliefs.
	OpDemote
	// OpRemove takes the belief out of its file: promoted_at, demoted_at
	// and promoted_to are cleared.
	OpRemove
)

// PromotionChange is one belief's change after its MEMORY.md was written.
type PromotionChange struct {
	ID string
	Op PromotionOp
	// From is the file the belief is shown in as read (compare-and-set:
	// OpKeep, OpDemote and OpRemove change nothing when another file took
	// the belief over meanwhile).
	From string
	// Target is the file of an OpPromote.
	Target     string
	Confidence float64 // OpPromote, OpKeep
}

// MemoryFile is a MEMORY.md engram writes.
type MemoryFile struct {
	Path      string
	Kind      string // global | project
	Root      string // the project's git root; "" for the global file
	WrittenAt time.Time
}

// ApplyPromotion records, in one transaction, what was just written to a
// MEMORY.md: the belief changes and the file itself.
func (db *DB) ApplyPromotion(ctx context.Context, file MemoryFile, changes []PromotionChange, at time.Time) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		st := newStmts(ctx, tx)
		defer st.close()
		now := at.UnixMilli()
		for _, c := range changes {
			var err error
			switch c.Op {
			case OpPromote:
				_, err = st.exec(`UPDATE beliefs SET promoted_at = ?, demoted_at = NULL, promoted_to = ?, promoted_confidence = ?
					WHERE id = ?`, now, c.Target, c.Confidence, c.ID)
			case OpKeep:
				_, err = st.exec(`UPDATE beliefs SET promoted_confidence = ? WHERE id = ? AND promoted_to = ?`, c.Confidence, c.ID, c.From)
			case OpDemote:
				_, err = st.exec(`UPDATE beliefs SET demoted_at = ? WHERE id = ? AND promoted_to = ?`, now, c.ID, c.From)
			case OpRemove:
				_, err = st.exec(`UPDATE beliefs SET promoted_at = NULL, demoted_at = NULL, promoted_to = '', promoted_confidence = NULL
					WHERE id = ? AND promoted_to = ?`, c.ID, c.From)
			default:
				err = fmt.Errorf("unknown operation %d", c.Op)
			}
			if err != nil {
				return fmt.Errorf("belief %s: %w", c.ID, err)
			}
		}
		if file.Path == "" {
			return nil
		}
		_, err := st.exec(`INSERT INTO memory_files(path, kind, root, written_at) VALUES (?, ?, ?, ?)
			ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, root = excluded.root, written_at = excluded.written_at`,
			file.Path, file.Kind, file.Root, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: record promotion in %s: %w", file.Path, err)
	}
	return nil
}

// MemoryFiles lists the MEMORY.md files engram has written, by path.
func (db *DB) MemoryFiles(ctx context.Context) ([]MemoryFile, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT path, kind, root, written_at FROM memory_files ORDER BY path")
	if err != nil {
		return nil, fmt.Errorf("store: memory files: %w", err)
	}
	defer rows.Close()
	var out []MemoryFile
	for rows.Next() {
		var f MemoryFile
		var at int64
		if err := rows.Scan(&f.Path, &f.Kind, &f.Root, &at); err != nil {
			return nil, err
		}
		f.WrittenAt = fromMS(at)
		out = append(out, f)
	}
	return out, rows.Err()
}

// GraduationCandidates returns global episodes at least minImportance
// important that have not graduated yet: the most important first, then
// the oldest, at most limit.
func (db *DB) GraduationCandidates(ctx context.Context, minImportance float64, limit int) ([]episode.Episode, error) {
	return db.queryEpisodes(ctx, "graduation candidates", "SELECT "+episodeCols+` FROM episodes
		WHERE scope = 'global' AND graduated_at IS NULL AND lifecycle = '' AND importance >= ?
		ORDER BY importance DESC, occurred_at, seq LIMIT ?`, minImportance, limit)
}

// MarkGraduated records that episodes were written to the global MEMORY.md.
func (db *DB) MarkGraduated(ctx context.Context, ids []string, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		st := newStmts(ctx, tx)
		defer st.close()
		for _, id := range ids {
			if _, err := st.exec("UPDATE episodes SET graduated_at = ? WHERE id = ? AND graduated_at IS NULL", at.UnixMilli(), id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: mark graduated: %w", err)
	}
	return nil
}

// StaleEpisode is an episode compression may shorten.
type StaleEpisode struct {
	ID      string
	Summary string
}

// StaleEpisodes returns up to limit episodes never accessed, not
// compressed, unchanged since before, and less important than
// maxImportance: the oldest first.
func (db *DB) StaleEpisodes(ctx context.Context, before time.Time, maxImportance float64, limit int) ([]StaleEpisode, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT id, summary FROM episodes
		WHERE compressed = 0 AND access_count = 0 AND last_accessed_at IS NULL AND updated_at < ? AND importance < ?
		ORDER BY updated_at LIMIT ?`, before.UnixMilli(), maxImportance, limit)
	if err != nil {
		return nil, fmt.Errorf("store: stale episodes: %w", err)
	}
	defer rows.Close()
	var out []StaleEpisode
	for rows.Next() {
		var e StaleEpisode
		if err := rows.Scan(&e.ID, &e.Summary); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// CompressEpisodes replaces each episode's summary by the shorter one given,
// drops its full context and marks it compressed, in one transaction. The
// full-text index follows (the summary and entities stay searchable) and
// the vector is kept. An episode accessed since it was listed is left
// alone. It returns how many episodes were compressed.
func (db *DB) CompressEpisodes(ctx context.Context, eps []StaleEpisode) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		st := newStmts(ctx, tx)
		defer st.close()
		for _, e := range eps {
			res, err := st.exec(`UPDATE episodes SET summary = ?, context = '', compressed = 1
				WHERE id = ? AND compressed = 0 AND access_count = 0 AND last_accessed_at IS NULL`, e.Summary, e.ID)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: compress episodes: %w", err)
	}
	return n, nil
}
