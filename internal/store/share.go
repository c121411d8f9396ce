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

// Sharing's local state (schema v6, package share owns the server side).

// ShareProject is a project shared from this machine: its git root here and
// the key every machine knows it by.
type ShareProject struct {
	Path      string
	Key       string
	EnabledAt time.Time
}

// metaShareTrack turns on the change log and the local tombstones.
const metaShareTrack = "share_track"

// ShareProjects lists the shared projects, by path.
func (db *DB) ShareProjects(ctx context.Context) ([]ShareProject, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT project_path, key, enabled_at FROM share_projects ORDER BY project_path")
	if err != nil {
		return nil, fmt.Errorf("store: shared projects: %w", err)
	}
	defer rows.Close()
	var out []ShareProject
	for rows.Next() {
		var p ShareProject
		var at int64
		if err := rows.Scan(&p.Path, &p.Key, &at); err != nil {
			return nil, err
		}
		p.EnabledAt = fromMS(at)
		out = append(out, p)
	}
	return out, rows.Err()
}

// EnableShareProject shares the project at path under key: it turns the
// change log on and queues every episode and belief of the project, so
// that the next push sends what the project already holds. It returns how
// many items it queued (0 when the project was shared already).
func (db *DB) EnableShareProject(ctx context.Context, path, key string) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, "SELECT key FROM share_projects WHERE project_path = ?", path).Scan(&old)
		if err == nil && old == key {
			return nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO share_projects(project_path, key, enabled_at) VALUES (?, ?, ?)
			ON CONFLICT(project_path) DO UPDATE SET key = excluded.key, enabled_at = excluded.enabled_at`,
			path, key, time.Now().UnixMilli()); err != nil {
			return err
		}
		if err := trackShare(ctx, tx); err != nil {
			return err
		}
		for _, q := range []string{
			"INSERT INTO share_changes(kind, item_id) SELECT 'episode', id FROM episodes WHERE scope = 'project' AND project_path = ? ORDER BY seq",
			"INSERT INTO share_changes(kind, item_id) SELECT 'belief', id FROM beliefs WHERE scope = 'project' AND project_path = ? ORDER BY seq",
		} {
			res, err := tx.ExecContext(ctx, q, path)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: share %s: %w", path, err)
	}
	return n, nil
}

// DisableShareProject stops sharing the project at path; what the server
// holds stays there. It reports whether the project was shared.
func (db *DB) DisableShareProject(ctx context.Context, path string) (bool, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, "DELETE FROM share_projects WHERE project_path = ?", path)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return n > 0, err
}

// SeedSharePersonal queues every episode and belief once (personal sync's
// first push: the push keeps what personal sync shares) and reports how
// many it queued.
func (db *DB) SeedSharePersonal(ctx context.Context) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		var v string
		if err := tx.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'share_personal_seeded'").Scan(&v); err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if err := trackShare(ctx, tx); err != nil {
			return err
		}
		for _, q := range []string{
			"INSERT INTO share_changes(kind, item_id) SELECT 'episode', id FROM episodes ORDER BY seq",
			"INSERT INTO share_changes(kind, item_id) SELECT 'belief', id FROM beliefs ORDER BY seq",
		} {
			res, err := tx.ExecContext(ctx, q)
			if err != nil {
				return err
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('share_personal_seeded', ?)", fmt.Sprint(time.Now().UnixMilli()))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: seed personal sync: %w", err)
	}
	return n, nil
}

func trackShare(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES (?, '1') ON CONFLICT(key) DO NOTHING", metaShareTrack)
	return err
}

// ShareChange is one queued change: the item as it is now, or its deletion.
type ShareChange struct {
	Kind    string // "episode" or "belief"
	ID      string
	Episode *episode.Episode
	Belief  *belief.Belief
	// Deleted: the item is gone from this store.
	Deleted bool
}

// ShareChanges returns up to limit queued items (each once, in the order
// of its latest change) and the last change id they cover: AckShareChanges
// with it once the server has committed them.
func (db *DB) ShareChanges(ctx context.Context, limit int) (upto int64, out []ShareChange, err error) {
	err = db.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT id, kind, item_id FROM share_changes ORDER BY id LIMIT ?", limit)
		if err != nil {
			return err
		}
		type ch struct{ kind, id string }
		var chs []ch
		seen := map[string]int{}
		for rows.Next() {
			var c ch
			if err := rows.Scan(&upto, &c.kind, &c.id); err != nil {
				rows.Close()
				return err
			}
			if i, ok := seen[c.id]; ok {
				chs[i].kind = "" // superseded by this later change
			}
			seen[c.id] = len(chs)
			chs = append(chs, c)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, c := range chs {
			if c.kind == "" {
				continue
			}
			sc := ShareChange{Kind: c.kind, ID: c.id}
			switch c.kind {
			case "episode":
				e, err := scanEpisode(tx.QueryRowContext(ctx, "SELECT "+episodeCols+" FROM episodes WHERE id = ?", c.id))
				switch {
				case errors.Is(err, sql.ErrNoRows):
					sc.Deleted = true
				case err != nil:
					return err
				default:
					sc.Episode = &e
				}
			case "belief":
				b, err := scanBelief(tx.QueryRowContext(ctx, "SELECT "+beliefCols+" FROM beliefs WHERE id = ?", c.id))
				switch {
				case errors.Is(err, sql.ErrNoRows):
					sc.Deleted = true
				case err != nil:
					return err
				default:
					sc.Belief = &b
				}
			default:
				continue
			}
			out = append(out, sc)
		}
		return nil
	})
	if err != nil {
		return 0, nil, fmt.Errorf("store: share changes: %w", err)
	}
	return upto, out, nil
}

// AckShareChanges drops the queued changes up to id upto: the server has
// committed them.
func (db *DB) AckShareChanges(ctx context.Context, upto int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM share_changes WHERE id <= ?", upto)
		return err
	})
}

// PendingShareChanges counts the queued changes.
func (db *DB) PendingShareChanges(ctx context.Context) (int, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, "SELECT count(*) FROM share_changes").Scan(&n)
	return n, err
}

// ShareCursors returns how far each shared space has been pulled.
func (db *DB) ShareCursors(ctx context.Context) (map[string]int64, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT space, rev FROM share_cursors")
	if err != nil {
		return nil, fmt.Errorf("store: share cursors: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var s string
		var r int64
		if err := rows.Scan(&s, &r); err != nil {
			return nil, err
		}
		out[s] = r
	}
	return out, rows.Err()
}

// ResetShare forgets the pull cursors (the server was replaced: everything
// is pulled again) and queues every shareable item again.
func (db *DB) ResetShare(ctx context.Context) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			"DELETE FROM share_cursors",
			"DELETE FROM share_parked",
			"DELETE FROM meta WHERE key = 'share_personal_seeded'",
			`INSERT INTO share_changes(kind, item_id) SELECT 'episode', id FROM episodes
				WHERE scope = 'project' AND project_path IN (SELECT project_path FROM share_projects) ORDER BY seq`,
			`INSERT INTO share_changes(kind, item_id) SELECT 'belief', id FROM beliefs
				WHERE scope = 'project' AND project_path IN (SELECT project_path FROM share_projects) ORDER BY seq`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// SharedLocal is what this store holds of pulled ids: the items and the
// ids forgotten here.
type SharedLocal struct {
	Episodes   map[string]episode.Episode
	Beliefs    map[string]belief.Belief
	Tombstones map[string]bool
}

// SharedLocalItems reads the local copies of the ids a pull brought.
func (db *DB) SharedLocalItems(ctx context.Context, ids []string) (SharedLocal, error) {
	out := SharedLocal{Episodes: map[string]episode.Episode{}, Beliefs: map[string]belief.Belief{}, Tombstones: map[string]bool{}}
	err := db.read(ctx, func(tx *sql.Tx) error {
		return inChunks(ids, func(in string, args []any) error {
			err := eachRow(ctx, tx, "SELECT "+episodeCols+" FROM episodes WHERE id IN ("+in+")", args, func(rows *sql.Rows) error {
				e, err := scanEpisode(rows)
				if err == nil {
					out.Episodes[e.ID] = e
				}
				return err
			})
			if err != nil {
				return err
			}
			err = eachRow(ctx, tx, "SELECT "+beliefCols+" FROM beliefs WHERE id IN ("+in+")", args, func(rows *sql.Rows) error {
				b, err := scanBelief(rows)
				if err == nil {
					out.Beliefs[b.ID] = b
				}
				return err
			})
			if err != nil {
				return err
			}
			return eachRow(ctx, tx, "SELECT item_id FROM share_tombstones WHERE item_id IN ("+in+")", args, func(rows *sql.Rows) error {
				var id string
				err := rows.Scan(&id)
				if err == nil {
					out.Tombstones[id] = true
				}
				return err
			})
		})
	})
	if err != nil {
		return out, fmt.Errorf("store: shared items: %w", err)
	}
	return out, nil
}

// ShareApply is one page of a pull: items to write (whole rows, the
// caller merged them with the local copies), ids to delete, ids to park
// or unpark, and the cursors the page reaches.
type ShareApply struct {
	Episodes       []episode.Episode
	Beliefs        []belief.Belief
	DeleteEpisodes []string
	DeleteBeliefs  []string
	Park           []Parked
	Unpark         []string
	Cursors        map[string]int64
}

// Parked is a pulled item of a project this machine does not know yet.
type Parked struct {
	ID, Space, Key string
}

// ParkedShared lists the parked items.
func (db *DB) ParkedShared(ctx context.Context) ([]Parked, error) {
	rows, err := db.sql.QueryContext(ctx, "SELECT item_id, space, key FROM share_parked ORDER BY key, item_id")
	if err != nil {
		return nil, fmt.Errorf("store: parked items: %w", err)
	}
	defer rows.Close()
	var out []Parked
	for rows.Next() {
		var p Parked
		if err := rows.Scan(&p.ID, &p.Space, &p.Key); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ProjectPaths lists the project paths the store's project memory names.
func (db *DB) ProjectPaths(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT project_path FROM episodes WHERE scope = 'project' AND project_path != ''
		UNION SELECT DISTINCT project_path FROM beliefs WHERE scope = 'project' AND project_path != ''`)
	if err != nil {
		return nil, fmt.Errorf("store: project paths: %w", err)
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

// ShareApplied says what ApplyShared did.
type ShareApplied struct {
	Inserted, Updated, Deleted int
	// Conflicts are pulled episodes whose content this store holds under
	// another id: they are not stored twice.
	Conflicts int
}

// ApplyShared writes a pull page in one transaction with its cursors, so a
// process killed at any point leaves the store either before or after the
// page. Its writes do not queue changes to push. An id forgotten here is
// never written again.
func (db *DB) ApplyShared(ctx context.Context, a ShareApply) (ShareApplied, error) {
	var res ShareApplied
	err := db.write(ctx, func(tx *sql.Tx) error {
		res = ShareApplied{}
		if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('share_applying', '1') ON CONFLICT(key) DO NOTHING"); err != nil {
			return err
		}
		now := time.Now().UnixMilli()
		st := newStmts(ctx, tx)
		defer st.close()
		gone := func(id string) (bool, error) {
			var n int
			err := st.queryRow("SELECT count(*) FROM share_tombstones WHERE item_id = ?", id).Scan(&n)
			return n > 0, err
		}
		for i := range a.Episodes {
			e := &a.Episodes[i]
			if g, err := gone(e.ID); err != nil {
				return err
			} else if g {
				continue
			}
			var seq int64
			err := st.queryRow("SELECT seq FROM episodes WHERE id = ?", e.ID).Scan(&seq)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				if other, err := episodeIDByHash(st, e.ContentHash); err != nil {
					return err
				} else if other != "" {
					res.Conflicts++
					continue
				}
				if err := st.insertEpisode(e, now); err != nil {
					return err
				}
				res.Inserted++
			case err != nil:
				return err
			default:
				if _, err := st.exec(`UPDATE episodes SET summary=?, context=?, entities=?, signals=?, importance=?, type=?, scope=?,
					project=?, project_path=?, session_id=?, session_ids=?, embedding=?, embedder=?, extractor=?, occurred_at=?,
					created_at=?, updated_at=?, compressed=? WHERE seq=?`,
					e.Summary, e.Context, jsonOf(nonNil(e.Entities)), jsonOf(nonNilSignals(e.Signals)), e.Importance, e.Type, e.Scope,
					e.Project, e.ProjectPath, e.SessionID, jsonOf(nonNil(e.SessionIDs)), vectorBlob(e.Embedding), e.Embedder, e.Extractor,
					ms(e.OccurredAt), ms(e.CreatedAt), ms(e.UpdatedAt), boolInt(e.Compressed), seq); err != nil {
					return fmt.Errorf("update episode %s: %w", e.ID, err)
				}
				res.Updated++
			}
		}
		bt := &BeliefTx{ctx: ctx, tx: tx}
		for i := range a.Beliefs {
			b := &a.Beliefs[i]
			if g, err := gone(b.ID); err != nil {
				return err
			} else if g {
				continue
			}
			err := bt.Update(b)
			switch {
			case errors.Is(err, ErrNotFound):
				if err := bt.Insert(b); err != nil {
					return err
				}
				res.Inserted++
			case err != nil:
				return err
			default:
				res.Updated++
			}
		}
		for _, id := range a.DeleteEpisodes {
			if _, err := tx.ExecContext(ctx, "DELETE FROM captures WHERE episode_id = ?", id); err != nil {
				return err
			}
			r, err := tx.ExecContext(ctx, "DELETE FROM episodes WHERE id = ?", id)
			if err != nil {
				return err
			}
			n, _ := r.RowsAffected()
			res.Deleted += int(n)
		}
		for _, id := range a.DeleteBeliefs {
			r, err := tx.ExecContext(ctx, "DELETE FROM beliefs WHERE id = ?", id)
			if err != nil {
				return err
			}
			n, _ := r.RowsAffected()
			res.Deleted += int(n)
		}
		for _, p := range a.Park {
			if _, err := tx.ExecContext(ctx, `INSERT INTO share_parked(item_id, space, key) VALUES (?, ?, ?)
				ON CONFLICT(item_id) DO UPDATE SET space = excluded.space, key = excluded.key`, p.ID, p.Space, p.Key); err != nil {
				return err
			}
		}
		for _, id := range a.Unpark {
			if _, err := tx.ExecContext(ctx, "DELETE FROM share_parked WHERE item_id = ?", id); err != nil {
				return err
			}
		}
		for space, rev := range a.Cursors {
			if _, err := tx.ExecContext(ctx, `INSERT INTO share_cursors(space, rev) VALUES (?, ?)
				ON CONFLICT(space) DO UPDATE SET rev = max(rev, excluded.rev)`, space, rev); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = 'share_applying'")
		return err
	})
	if err != nil {
		return ShareApplied{}, fmt.Errorf("store: apply shared items: %w", err)
	}
	return res, nil
}

// eachRow runs q in tx and calls fn for each row; it closes the rows and
// returns the first error of the query, of fn or of the iteration.
func eachRow(ctx context.Context, tx *sql.Tx, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
