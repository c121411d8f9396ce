package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
)

// Forget deletes episodes, with every capture they were made from, and
// beliefs, in one transaction: all or nothing. An id the store does not
// hold fails it with ErrNotFound. Each memory's history is replaced by one
// 'forgotten' event that holds none of its values. The deleted text can still be read from
// the database files until Scrub has run.
func (db *DB) Forget(ctx context.Context, episodeIDs, beliefIDs []string) error {
	now := time.Now()
	return db.write(ctx, func(tx *sql.Tx) error {
		// The beliefs first: an episode's forgetting may forget a belief
		// that reads in its words.
		for _, id := range beliefIDs {
			if err := forgetBelief(ctx, tx, id, now); err != nil {
				return err
			}
		}
		for _, id := range episodeIDs {
			if err := forgetEpisode(ctx, tx, id, now); err != nil {
				return err
			}
		}
		return nil
	})
}

// forgetEpisode is Forget of one episode inside tx (an import that brings
// its tombstone forgets it the same way).
func forgetEpisode(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	// Its words, for the beliefs that read in them (forgetEvidence).
	var said string
	if err := tx.QueryRowContext(ctx, "SELECT summary || char(10) || context FROM episodes WHERE id = ?", id).Scan(&said); err != nil &&
		err != sql.ErrNoRows {
		return fmt.Errorf("store: forget %s: %w", id, err)
	}
	// The captures first: they name the episode.
	if _, err := tx.ExecContext(ctx, "DELETE FROM captures WHERE episode_id = ?", id); err != nil {
		return fmt.Errorf("store: forget the captures of %s: %w", id, err)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM episodes WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("store: forget %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("episode %s: %w", id, ErrNotFound)
	}
	// The episodes it superseded are shown with its words (Supersessions):
	// the search index writes them anew, without.
	if _, err := tx.ExecContext(ctx, `INSERT INTO episode_changes(seq) SELECT seq FROM episodes WHERE id IN
		(SELECT memory_id FROM history WHERE action = 'superseded' AND cause = ?)`, id); err != nil {
		return fmt.Errorf("store: forget %s: the episodes it superseded: %w", id, err)
	}
	if err := forgetHistory(ctx, tx, id, now); err != nil {
		return err
	}
	if err := forgetQuarantine(ctx, tx, QuarantineEpisode, id); err != nil {
		return err
	}
	if err := forgetMembership(ctx, tx, id); err != nil {
		return err
	}
	return forgetEvidence(ctx, tx, id, said, now)
}

// forgetBelief is Forget of one belief inside tx.
func forgetBelief(ctx context.Context, tx *sql.Tx, id string, now time.Time) error {
	res, err := tx.ExecContext(ctx, "DELETE FROM beliefs WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("store: forget %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("belief %s: %w", id, ErrNotFound)
	}
	if err := unlink(ctx, tx, id); err != nil {
		return err
	}
	if err := forgetReview(ctx, tx, id); err != nil {
		return err
	}
	if err := forgetQuarantine(ctx, tx, QuarantineBelief, id); err != nil {
		return err
	}
	return forgetHistory(ctx, tx, id, now)
}

// Scrub makes deleted text leave the database's files. A delete only marks
// space free: the bytes stay in the page, in FTS5's index segments (a
// deleted row's terms stay in older segments beside a tombstone until the
// segments merge), and in the WAL. So: both full-text indexes are merged
// into one segment each ('optimize' drops deleted entries), VACUUM rebuilds
// the file from live rows only, and a TRUNCATE checkpoint copies the WAL
// into the file and empties it. It costs time in proportion to the store,
// which is why only forget runs it.
func (db *DB) Scrub(ctx context.Context) error {
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: scrub: %w", err)
	}
	defer conn.Close()
	for _, q := range []string{
		"INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')",
		"INSERT INTO beliefs_fts(beliefs_fts) VALUES ('optimize')",
		"VACUUM",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("store: scrub: %s: %w", q, err)
		}
	}
	var busy, logPages, done int
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return fmt.Errorf("store: scrub: checkpoint: %w", err)
	}
	if busy != 0 {
		return fmt.Errorf("store: scrub: checkpoint: another connection is reading; the WAL (%d pages) is not emptied yet", logPages)
	}
	return nil
}

// forgetEvidence takes a forgotten episode out of every belief that names
// it: its id leaves the evidence lists, a revision whose reason quotes it
// keeps the change but not the words, and an active belief whose only
// support it was is retired (archived, and out of the link graph), with a
// history row that holds no text: nothing the user said is left to hold
// it up. A belief that reads in the episode's words (said: its summary and
// context; a stated belief reads as the user's clause) loses them:
// forgotten with the episode when nothing else supports it, else it reads
// as its fields say (belief.Plain), and so do its revisions' old
// statements.
func forgetEvidence(ctx context.Context, tx *sql.Tx, episodeID, said string, at time.Time) error {
	pattern := "%" + episodeID + "%"
	rows, err := tx.QueryContext(ctx, `SELECT id, status, statement, subject, predicate, context,
		supporting_episodes, contradicting_episodes, partial_episodes, revision_history
		FROM beliefs WHERE supporting_episodes LIKE ? OR contradicting_episodes LIKE ? OR partial_episodes LIKE ? OR revision_history LIKE ?`,
		pattern, pattern, pattern, pattern)
	if err != nil {
		return fmt.Errorf("store: beliefs that name %s: %w", episodeID, err)
	}
	type row struct {
		id, status                  string
		statement, subj, pred, bctx string
		sup, con, par, revs         string
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.status, &r.statement, &r.subj, &r.pred, &r.bctx, &r.sup, &r.con, &r.par, &r.revs); err != nil {
			rows.Close()
			return err
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range found {
		var sup, con, par []string
		var revs []map[string]any
		for _, l := range []struct {
			raw string
			to  any
		}{{r.sup, &sup}, {r.con, &con}, {r.par, &par}, {r.revs, &revs}} {
			if err := json.Unmarshal([]byte(l.raw), l.to); err != nil {
				return fmt.Errorf("store: belief %s: %w", r.id, err)
			}
		}
		had := len(sup)
		sup, con, par = without(sup, episodeID), without(con, episodeID), without(par, episodeID)
		plain := belief.Plain(r.subj, r.pred, r.bctx)
		for _, rev := range revs {
			if reason, _ := rev["reason"].(string); strings.Contains(reason, episodeID) {
				rev["reason"] = "corrected by the user (that exchange was forgotten)"
			}
			if old, _ := rev["old_statement"].(string); quotes(said, old) {
				rev["old_statement"] = plain
			}
		}
		worded := quotes(said, r.statement)
		var decided int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM review_decisions WHERE belief_id = ?", r.id).Scan(&decided); err != nil {
			return fmt.Errorf("store: belief %s: %w", r.id, err)
		}
		if worded && had > 0 && len(sup) == 0 && decided == 0 {
			// Its words and its only support were the user's: nothing of
			// it is left to keep (a belief the user reviewed, a denied
			// one above all, stays, reworded, to keep their decision).
			if err := forgetBelief(ctx, tx, r.id, at); err != nil {
				return err
			}
			continue
		}
		retire := r.status == "active" && had > 0 && len(sup) == 0
		enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		q := `UPDATE beliefs SET supporting_episodes = ?, contradicting_episodes = ?, partial_episodes = ?, revision_history = ?`
		args := []any{enc(nonNil(sup)), enc(nonNil(con)), enc(nonNil(par)), enc(revs)}
		if worded {
			q += ", statement = ?"
			args = append(args, plain)
		}
		if retire {
			q += ", status = 'archived'"
		}
		if retire || worded {
			q += ", updated_at = ?"
			args = append(args, ms(at))
		}
		if _, err := tx.ExecContext(ctx, q+" WHERE id = ?", append(args, r.id)...); err != nil {
			return fmt.Errorf("store: belief %s: %w", r.id, err)
		}
		if worded {
			if err := rewordHistory(ctx, tx, r.id, said, plain); err != nil {
				return err
			}
		}
		if retire {
			// Out of recall, out of the link graph, as any archive (the
			// links join active beliefs only, see followStatus).
			if err := unlink(ctx, tx, r.id); err != nil {
				return err
			}
			if err := insertEvent(ctx, tx, Event{At: at, MemoryID: r.id, Action: ActionArchived, Cause: "forget",
				Detail: "its only supporting episode was forgotten"}); err != nil {
				return err
			}
		}
	}
	return nil
}

func without(ids []string, id string) []string {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// quotes reports whether statement is words of text: the clause a stated
// belief reads as, found in the exchange it was said in (case and spacing
// aside, its closing stop too).
func quotes(text, statement string) bool {
	st := strings.Join(strings.Fields(strings.ToLower(strings.TrimRight(statement, ".!? "))), " ")
	if len(strings.Fields(st)) < 2 || text == "" {
		return false
	}
	return strings.Contains(strings.Join(strings.Fields(strings.ToLower(text)), " "), st)
}

// rewordHistory replaces, in the history of belief id, every value that is
// words of the forgotten text said with plain.
func rewordHistory(ctx context.Context, tx *sql.Tx, id, said, plain string) error {
	rows, err := tx.QueryContext(ctx, "SELECT seq, before, after FROM history WHERE memory_id = ?", id)
	if err != nil {
		return fmt.Errorf("store: the history of %s: %w", id, err)
	}
	type row struct {
		seq           int64
		before, after string
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.before, &r.after); err != nil {
			rows.Close()
			return err
		}
		found = append(found, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, r := range found {
		changed := false
		vals := [2]map[string]any{}
		for i, raw := range []string{r.before, r.after} {
			if err := json.Unmarshal([]byte(raw), &vals[i]); err != nil {
				return fmt.Errorf("store: the history of %s: %w", id, err)
			}
			for k, v := range vals[i] {
				if t, ok := v.(string); ok && quotes(said, t) {
					vals[i][k], changed = plain, true
				}
			}
		}
		if !changed {
			continue
		}
		b, _ := json.Marshal(vals[0])
		a, _ := json.Marshal(vals[1])
		if _, err := tx.ExecContext(ctx, "UPDATE history SET before = ?, after = ? WHERE seq = ?", string(b), string(a), r.seq); err != nil {
			return fmt.Errorf("store: the history of %s: %w", id, err)
		}
	}
	return nil
}
