package share

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/safe"
	"github.com/engram-memory/engram/internal/store"
)

// Options are what a sync needs besides the store.
type Options struct {
	URL string
	// Personal shares the global memory too, in the role's personal space.
	Personal bool
	// Embedder gives pulled memories their local vectors (nil: none, the
	// re-embedding of a later cycle or the lexical fallback covers them).
	Embedder embed.Embedder
	Log      *slog.Logger
	// Budget bounds one sync; what is left is done by the next (0: 2 minutes).
	Budget time.Duration
	// PageSize is how many items one server transaction carries (0: 500).
	PageSize int
}

// Stats is what one sync did.
type Stats struct {
	Pushed     int   `json:"pushed"`
	Tombstones int   `json:"tombstones"`
	Pulled     int   `json:"pulled"`
	Inserted   int   `json:"inserted"`
	Updated    int   `json:"updated"`
	Deleted    int   `json:"deleted"`
	Conflicts  int   `json:"conflicts,omitempty"`
	Pending    int   `json:"pending"`
	Millis     int64 `json:"ms"`
}

// Meta keys of the local store.
const (
	MetaLastOK      = "share_last_ok"      // ms of the last sync that finished
	MetaLastError   = "share_last_error"   // the last failure ("" after a success)
	MetaLastAttempt = "share_last_attempt" // ms of the last sync started
	metaServerID    = "share_server_id"
)

// Space names.
const (
	projectSpace  = "project:"
	personalSpace = "personal:"
)

// ProjectSpace is the space of a project key.
func ProjectSpace(key string) string { return projectSpace + key }

// Sync pushes the local changes not yet acknowledged, then pulls the
// changes of every shared space since its cursor. A failure leaves the
// store as it was after the last committed page and is recorded for
// status and doctor; the caller logs it and goes on.
func Sync(ctx context.Context, db *store.DB, o Options) (st Stats, err error) {
	start := time.Now()
	_ = db.SetMeta(ctx, MetaLastAttempt, strconv.FormatInt(start.UnixMilli(), 10))
	outer := context.WithoutCancel(ctx)
	defer func() {
		st.Millis = time.Since(start).Milliseconds()
		st.Pending, _ = db.PendingShareChanges(outer)
		if err != nil {
			_ = db.SetMeta(outer, MetaLastError, err.Error())
			return
		}
		_ = db.SetMeta(outer, MetaLastOK, strconv.FormatInt(time.Now().UnixMilli(), 10))
		_ = db.SetMeta(outer, MetaLastError, "")
	}()
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Budget <= 0 {
		o.Budget = 2 * time.Minute
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if !o.Personal {
		// Nothing enabled and nothing queued: no connection at all.
		projects, err := db.ShareProjects(ctx)
		if err != nil {
			return st, err
		}
		if n, err := db.PendingShareChanges(ctx); err != nil {
			return st, err
		} else if len(projects) == 0 && n == 0 {
			return st, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	conn, err := Connect(ctx, o.URL)
	if err != nil {
		return st, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	srv, err := check(ctx, conn)
	if err != nil {
		return st, err
	}
	if prev, err := db.Meta(ctx, metaServerID); err != nil {
		return st, err
	} else if prev != srv.id {
		if prev != "" {
			o.Log.Warn("share: the shared database was replaced; pulling everything again and pushing everything shared", "was", prev, "now", srv.id)
			if err := db.ResetShare(ctx); err != nil {
				return st, err
			}
		}
		if err := db.SetMeta(ctx, metaServerID, srv.id); err != nil {
			return st, err
		}
	}
	if o.Personal {
		if _, err := db.SeedSharePersonal(ctx); err != nil {
			return st, err
		}
	}
	projects, err := db.ShareProjects(ctx)
	if err != nil {
		return st, err
	}
	origin, err := db.StoreID(ctx)
	if err != nil {
		return st, err
	}
	sc := &syncer{db: db, conn: conn, o: o, srv: srv, origin: origin, st: &st,
		keyOf: map[string]string{}, pathOf: map[string]string{}, remoteKey: map[string]string{}}
	for _, p := range projects {
		sc.keyOf[p.Path] = p.Key
		if _, ok := sc.pathOf[p.Key]; !ok {
			sc.pathOf[p.Key] = p.Path
		}
	}
	if err := sc.push(ctx); err != nil {
		return st, fmt.Errorf("push: %w", err)
	}
	if err := sc.pull(ctx); err != nil {
		return st, fmt.Errorf("pull: %w", err)
	}
	return st, nil
}

type syncer struct {
	db     *store.DB
	conn   *pgx.Conn
	o      Options
	srv    server
	origin string
	st     *Stats
	keyOf  map[string]string // local project path -> key, of the enabled projects
	pathOf map[string]string // key -> local project path, of the enabled projects
	// remoteKey caches the key of any local project path ("" without a
	// remote); known maps keys to the local projects personal sync can
	// file pulled memory under (nil until needed).
	remoteKey map[string]string
	known     map[string]string
}

// keyFor resolves a local project path: its key, and whether the project
// is enabled for its team.
func (s *syncer) keyFor(path string) (string, bool) {
	if k := s.keyOf[path]; k != "" {
		return k, true
	}
	if k, ok := s.remoteKey[path]; ok {
		return k, false
	}
	k := ""
	if remote, err := RemoteOf(path); err == nil {
		k, _ = ProjectKey(remote)
	}
	s.remoteKey[path] = k
	return k, false
}

// localPath is where memory of the project key goes on this machine: the
// enabled checkout, else any checkout the store's memory names ("" when
// there is none).
func (s *syncer) localPath(ctx context.Context, key string) (string, error) {
	if p := s.pathOf[key]; p != "" {
		return p, nil
	}
	if s.known == nil {
		s.known = map[string]string{}
		paths, err := s.db.ProjectPaths(ctx)
		if err != nil {
			return "", err
		}
		for _, p := range paths {
			if k, _ := s.keyFor(p); k != "" {
				if _, dup := s.known[k]; !dup {
					s.known[k] = p
				}
			}
		}
	}
	return s.known[key], nil
}

// Outgoing is one item a push sends.
type Outgoing struct {
	Kind    string
	ID      string
	Space   string // "" for a tombstone: the server knows the item's space
	Deleted bool
	Episode *sharedEpisode
	Belief  *sharedBelief
	local   *belief.Belief
}

// Text is the item's text, for a dry run.
func (o Outgoing) Text() string {
	switch {
	case o.Deleted:
		return "(forgotten here: the server drops its text)"
	case o.Episode != nil:
		return o.Episode.Summary
	case o.Belief != nil:
		return o.Belief.Statement
	}
	return ""
}

// JSON is exactly what the item's row on the server holds.
func (o Outgoing) JSON() []byte {
	switch {
	case o.Episode != nil:
		return mustJSON(o.Episode)
	case o.Belief != nil:
		return mustJSON(o.Belief)
	}
	return []byte("null")
}

// Evidence is what a belief's push adds to the evidence rows (those the
// server does not hold yet; a dry run, which does not ask it, lists all).
func (o Outgoing) Evidence() []Evidence {
	if o.local == nil {
		return nil
	}
	return localEvidence(o.local, nil)
}

// outgoing keeps the changes that leave the machine: project memory of a
// shared project; with personal sync, global memory and the project
// memory of the other projects that have a remote.
func outgoing(chs []store.ShareChange, keyFor func(string) (string, bool), personal bool, role string) []Outgoing {
	var out []Outgoing
	for _, c := range chs {
		if c.Deleted {
			out = append(out, Outgoing{Kind: c.Kind, ID: c.ID, Deleted: true})
			continue
		}
		scope, path := "", ""
		switch {
		case c.Episode != nil:
			scope, path = c.Episode.Scope, c.Episode.ProjectPath
		case c.Belief != nil:
			scope, path = c.Belief.Scope, c.Belief.ProjectPath
		}
		space, key := "", ""
		switch {
		case scope == episode.ScopeProject && path != "":
			k, enabled := keyFor(path)
			switch {
			case enabled:
				space, key = ProjectSpace(k), k
			case personal && k != "":
				space, key = personalSpace+role, k
			default:
				continue
			}
		case scope == episode.ScopeGlobal && personal:
			space = personalSpace + role
		default:
			continue
		}
		o := Outgoing{Kind: c.Kind, ID: c.ID, Space: space}
		if c.Episode != nil {
			se := toSharedEpisode(c.Episode)
			se.ProjectKey = key
			o.Episode = &se
		} else {
			sb := toSharedBelief(c.Belief)
			sb.ProjectKey = key
			o.Belief, o.local = &sb, c.Belief
		}
		out = append(out, o)
	}
	return out
}

// Pending lists what the next push would send, without connecting: the
// dry run. role names the personal space ("" when unknown).
func Pending(ctx context.Context, db *store.DB, personal bool, role string, limit int) ([]Outgoing, int, error) {
	projects, err := db.ShareProjects(ctx)
	if err != nil {
		return nil, 0, err
	}
	sc := &syncer{keyOf: map[string]string{}, remoteKey: map[string]string{}}
	for _, p := range projects {
		sc.keyOf[p.Path] = p.Key
	}
	if role == "" {
		role = "<your database role>"
	}
	_, chs, err := db.ShareChanges(ctx, limit)
	if err != nil {
		return nil, 0, err
	}
	out := outgoing(chs, sc.keyFor, personal, role)
	n, err := db.PendingShareChanges(ctx)
	return out, n, err
}

func (s *syncer) push(ctx context.Context) error {
	for {
		upto, chs, err := s.db.ShareChanges(ctx, s.o.PageSize)
		if err != nil {
			return err
		}
		if upto == 0 {
			return nil
		}
		outs := outgoing(chs, s.keyFor, s.o.Personal, s.srv.role)
		if len(outs) > 0 {
			if err := s.pushPage(ctx, outs); err != nil {
				return err
			}
		}
		// Acknowledged only now: the server has committed the page. A
		// process killed in between pushes it again, which changes nothing.
		if err := s.db.AckShareChanges(ctx, upto); err != nil {
			return err
		}
	}
}

type serverRow struct {
	kind, space string
	body        []byte
	deleted     bool
}

func (s *syncer) pushPage(ctx context.Context, outs []Outgoing) error {
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(lockID)); err != nil {
		return err
	}
	ids := make([]string, len(outs))
	var beliefIDs []string
	for i, o := range outs {
		ids[i] = o.ID
		if o.Kind == "belief" {
			beliefIDs = append(beliefIDs, o.ID)
		}
	}
	rows, err := tx.Query(ctx, "SELECT id, kind, space, body, deleted FROM engram_items WHERE id = ANY($1) FOR UPDATE", ids)
	if err != nil {
		return err
	}
	existing := map[string]serverRow{}
	for rows.Next() {
		var id string
		var r serverRow
		if err := rows.Scan(&id, &r.kind, &r.space, &r.body, &r.deleted); err != nil {
			rows.Close()
			return err
		}
		existing[id] = r
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	known, err := evidenceOf(ctx, tx, beliefIDs)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	for _, o := range outs {
		ex, has := existing[o.ID]
		if o.Deleted {
			if has && !ex.deleted {
				b.Queue(`UPDATE engram_items SET body = NULL, deleted = true, rev = nextval('engram_rev'), origin = $2,
					pushed_by = current_user, changed_at = now() WHERE id = $1`, o.ID, s.origin)
				b.Queue("DELETE FROM engram_evidence WHERE belief_id = $1", o.ID)
				s.st.Tombstones++
			}
			continue
		}
		if has && (ex.deleted || ex.kind != o.Kind) {
			continue // forgotten elsewhere: never written again
		}
		// An item moves from a personal space to its project's space when
		// the project is shared with the team, never back.
		space := o.Space
		if has && (strings.HasPrefix(ex.space, projectSpace) || ex.space == space) {
			space = ex.space
		}
		moved := has && space != ex.space
		var body []byte
		switch {
		case o.Episode != nil:
			m := *o.Episode
			if has {
				var cur sharedEpisode
				if err := json.Unmarshal(ex.body, &cur); err != nil {
					return fmt.Errorf("episode %s on the server: %w", o.ID, err)
				}
				m = joinEpisodes(cur, m)
				if bytes.Equal(mustJSON(m), mustJSON(cur)) && !moved {
					continue
				}
			}
			body = mustJSON(m)
		case o.Belief != nil:
			m := *o.Belief
			changed := true
			if has {
				var cur sharedBelief
				if err := json.Unmarshal(ex.body, &cur); err != nil {
					return fmt.Errorf("belief %s on the server: %w", o.ID, err)
				}
				cur.Children, cur.Revisions = sortedSet(cur.Children), sortRevisions(cur.Revisions)
				m = joinBeliefs(cur, m)
				changed = !bytes.Equal(mustJSON(m), mustJSON(cur)) || moved
			}
			ev := localEvidence(o.local, known[o.ID])
			if !changed && len(ev) == 0 {
				continue
			}
			body = mustJSON(m)
			if !has {
				b.Queue(`INSERT INTO engram_items (id, kind, space, body, rev, origin) VALUES ($1, $2, $3, $4, nextval('engram_rev'), $5)`,
					o.ID, o.Kind, space, body, s.origin)
			} else {
				b.Queue(`UPDATE engram_items SET body = $2, space = $4, rev = nextval('engram_rev'), origin = $3, pushed_by = current_user,
					changed_at = now() WHERE id = $1`, o.ID, body, s.origin, space)
			}
			for _, e := range ev {
				b.Queue(`INSERT INTO engram_evidence (belief_id, episode_id, polarity, weight, origin) VALUES ($1, $2, $3, $4, $5)
					ON CONFLICT DO NOTHING`, o.ID, e.Episode, e.Polarity, e.Weight, s.origin)
			}
			s.st.Pushed++
			continue
		}
		if !has {
			b.Queue(`INSERT INTO engram_items (id, kind, space, body, rev, origin) VALUES ($1, $2, $3, $4, nextval('engram_rev'), $5)`,
				o.ID, o.Kind, space, body, s.origin)
		} else {
			b.Queue(`UPDATE engram_items SET body = $2, space = $4, rev = nextval('engram_rev'), origin = $3, pushed_by = current_user,
				changed_at = now() WHERE id = $1`, o.ID, body, s.origin, space)
		}
		s.st.Pushed++
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// evidenceOf reads the evidence rows of beliefs.
func evidenceOf(ctx context.Context, tx pgx.Tx, ids []string) (map[string]map[string]Evidence, error) {
	out := map[string]map[string]Evidence{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, "SELECT belief_id, episode_id, polarity, weight FROM engram_evidence WHERE belief_id = ANY($1)", ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var bid string
		var e Evidence
		var pol int16
		if err := rows.Scan(&bid, &e.Episode, &pol, &e.Weight); err != nil {
			return nil, err
		}
		e.Polarity = int(pol)
		if out[bid] == nil {
			out[bid] = map[string]Evidence{}
		}
		out[bid][e.Episode] = e
	}
	return out, rows.Err()
}

// spaces are the spaces this machine reads.
func (s *syncer) spaces() []string {
	var out []string
	seen := map[string]bool{}
	for key := range s.pathOf {
		if !seen[key] {
			seen[key] = true
			out = append(out, ProjectSpace(key))
		}
	}
	if s.o.Personal {
		out = append(out, personalSpace+s.srv.role)
	}
	return out
}

type pulledRow struct {
	id, kind, space string
	body            []byte
	deleted         bool
	rev             int64
}

func (s *syncer) pull(ctx context.Context) error {
	if err := s.unpark(ctx); err != nil {
		return err
	}
	cursors, err := s.db.ShareCursors(ctx)
	if err != nil {
		return err
	}
	for _, space := range s.spaces() {
		cur := cursors[space]
		for {
			rows, ev, err := s.readPage(ctx, space, cur)
			if err != nil {
				return err
			}
			if len(rows) == 0 {
				break
			}
			if err := s.applyPage(ctx, map[string]int64{space: rows[len(rows)-1].rev}, rows, ev); err != nil {
				return err
			}
			cur = rows[len(rows)-1].rev
			if len(rows) < s.o.PageSize {
				break
			}
		}
	}
	return nil
}

func (s *syncer) readPage(ctx context.Context, space string, after int64) ([]pulledRow, map[string]map[string]Evidence, error) {
	tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	rows, ev, err := readRows(ctx, tx, "SELECT id, kind, space, body, deleted, rev FROM engram_items WHERE space = $1 AND rev > $2 ORDER BY rev LIMIT $3",
		space, after, s.o.PageSize)
	if err != nil {
		return nil, nil, err
	}
	return rows, ev, tx.Commit(ctx)
}

// readRows reads item rows and the evidence of their beliefs in tx.
func readRows(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]pulledRow, map[string]map[string]Evidence, error) {
	rs, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	var out []pulledRow
	var beliefs []string
	for rs.Next() {
		var r pulledRow
		if err := rs.Scan(&r.id, &r.kind, &r.space, &r.body, &r.deleted, &r.rev); err != nil {
			rs.Close()
			return nil, nil, err
		}
		out = append(out, r)
		if r.kind == "belief" && !r.deleted {
			beliefs = append(beliefs, r.id)
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	ev, err := evidenceOf(ctx, tx, beliefs)
	return out, ev, err
}

// readRow decodes a pulled row's body into v and checks it; an unreadable
// or malformed row is logged and not taken.
func (s *syncer) readRow(r pulledRow, v interface{ sane(id string) bool }) bool {
	if err := json.Unmarshal(r.body, v); err != nil {
		s.o.Log.Warn("share: unreadable "+r.kind+" on the server", "id", r.id, "err", err)
		return false
	}
	if !v.sane(r.id) {
		s.o.Log.Warn("share: malformed "+r.kind+" on the server, not taken", "id", r.id)
		return false
	}
	return true
}

// placeRow finds where a pulled row's memory lives on this machine (see
// place); a project memory of a remote with no checkout here is parked in
// a, and ok is false.
func (s *syncer) placeRow(ctx context.Context, r pulledRow, a *store.ShareApply, scope, key string) (project, path string, ok bool, err error) {
	project, path, park, ok, err := s.place(ctx, r.space, scope, key)
	if err != nil {
		return "", "", false, err
	}
	if park != "" {
		a.Park = append(a.Park, store.Parked{ID: r.id, Space: r.space, Key: park})
	}
	return project, path, ok, nil
}

func (s *syncer) applyPage(ctx context.Context, cursor map[string]int64, rows []pulledRow, ev map[string]map[string]Evidence) error {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.id
	}
	local, err := s.db.SharedLocalItems(ctx, ids)
	if err != nil {
		return err
	}
	a := store.ShareApply{Cursors: cursor}
	var embedEps []int
	var embedBls []int
	// One row is taken at a time: a row whose merge fails (a panic) is
	// logged and left, so that it cannot hold every later pull back.
	take := func(r pulledRow) error {
		if local.Tombstones[r.id] {
			return nil
		}
		if r.deleted {
			switch r.kind {
			case "episode":
				if _, ok := local.Episodes[r.id]; ok {
					a.DeleteEpisodes = append(a.DeleteEpisodes, r.id)
				}
			case "belief":
				if _, ok := local.Beliefs[r.id]; ok {
					a.DeleteBeliefs = append(a.DeleteBeliefs, r.id)
				}
			}
			return nil
		}
		switch r.kind {
		case "episode":
			var srv sharedEpisode
			if !s.readRow(r, &srv) {
				return nil
			}
			project, path, ok, err := s.placeRow(ctx, r, &a, srv.Scope, srv.ProjectKey)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			var e episode.Episode
			l, had := local.Episodes[r.id]
			m := srv
			if had {
				ls := toSharedEpisode(&l)
				ls.ProjectKey = srv.ProjectKey
				m = joinEpisodes(ls, srv)
				if bytes.Equal(mustJSON(m), mustJSON(ls)) && l.ProjectPath == path {
					return nil
				}
				e = l
			} else {
				e.Stability = 1
			}
			m.into(&e)
			e.Project, e.ProjectPath = project, path
			if !had || l.Summary != e.Summary || l.Context != e.Context || len(l.Embedding) == 0 {
				e.Embedding, e.Embedder = nil, ""
				embedEps = append(embedEps, len(a.Episodes))
			}
			a.Episodes = append(a.Episodes, e)
		case "belief":
			var srv sharedBelief
			if !s.readRow(r, &srv) {
				return nil
			}
			project, path, ok, err := s.placeRow(ctx, r, &a, srv.Scope, srv.ProjectKey)
			if err != nil {
				return err
			}
			if !ok {
				return nil
			}
			srv.Children, srv.Revisions = sortedSet(srv.Children), sortRevisions(srv.Revisions)
			var records []Evidence
			for _, e := range ev[r.id] {
				records = append(records, e)
			}
			records = saneEvidence(records)
			sortEvidence(records)
			var lp *belief.Belief
			m := srv
			if l, ok := local.Beliefs[r.id]; ok {
				lp = &l
				ls := toSharedBelief(&l)
				ls.ProjectKey = srv.ProjectKey
				m = joinBeliefs(ls, srv)
				mine := localEvidence(&l, ev[r.id])
				sortEvidence(mine)
				records = append(records, mine...)
			}
			nb := beliefFrom(m, records, lp, project, path)
			if lp != nil && sameBelief(lp, &nb) {
				return nil
			}
			if lp == nil || lp.Statement != nb.Statement || len(nb.Embedding) == 0 {
				nb.Embedding, nb.Embedder = nil, ""
				embedBls = append(embedBls, len(a.Beliefs))
			}
			a.Beliefs = append(a.Beliefs, nb)
		}
		return nil
	}
	for _, r := range rows {
		s.st.Pulled++
		err := safe.Run(func() error { return take(r) })
		if safe.IsPanic(err) {
			s.o.Log.Error("share: a pulled "+r.kind+" could not be merged; left", "id", r.id, "err", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	parked := map[string]bool{}
	for _, p := range a.Park {
		parked[p.ID] = true
	}
	for _, id := range ids {
		if !parked[id] {
			a.Unpark = append(a.Unpark, id)
		}
	}
	s.embed(ctx, &a, embedEps, embedBls)
	res, err := s.db.ApplyShared(ctx, a)
	if err != nil {
		return err
	}
	s.st.Inserted += res.Inserted
	s.st.Updated += res.Updated
	s.st.Deleted += res.Deleted
	s.st.Conflicts += res.Conflicts
	return nil
}

// place says where a pulled item goes: the project name and path here
// (both "" for global memory), or the key to park it under (a personal
// sync item of a project this machine has no checkout of); ok is false
// for an item not to store now.
func (s *syncer) place(ctx context.Context, space, scope, key string) (project, path, park string, ok bool, err error) {
	if k, isProject := strings.CutPrefix(space, projectSpace); isProject {
		if scope != episode.ScopeProject {
			return "", "", "", false, nil
		}
		key = k
	} else if scope == episode.ScopeGlobal {
		return "", "", "", true, nil
	} else if scope != episode.ScopeProject || key == "" {
		return "", "", "", false, nil
	}
	path, err = s.localPath(ctx, key)
	if err != nil || path == "" {
		return "", "", key, false, err
	}
	return gitroot.Name(path), path, "", true, nil
}

// unpark takes the parked items whose project this machine now knows from
// the server again (their current version, wherever it is now).
func (s *syncer) unpark(ctx context.Context) error {
	parked, err := s.db.ParkedShared(ctx)
	if err != nil || len(parked) == 0 {
		return err
	}
	var ids []string
	for _, p := range parked {
		if path, err := s.localPath(ctx, p.Key); err != nil {
			return err
		} else if path != "" {
			ids = append(ids, p.ID)
		}
	}
	for len(ids) > 0 {
		n := min(len(ids), s.o.PageSize)
		page := ids[:n]
		ids = ids[n:]
		tx, err := s.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		rows, ev, err := readRows(ctx, tx, "SELECT id, kind, space, body, deleted, rev FROM engram_items WHERE id = ANY($1) ORDER BY rev", page)
		tx.Rollback(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		found := map[string]bool{}
		for _, r := range rows {
			found[r.id] = true
		}
		var gone []string
		for _, id := range page {
			if !found[id] {
				gone = append(gone, id)
			}
		}
		if len(gone) > 0 {
			if _, err := s.db.ApplyShared(ctx, store.ShareApply{Unpark: gone}); err != nil {
				return err
			}
		}
		if len(rows) > 0 {
			if err := s.applyPage(ctx, nil, rows, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

func sameBelief(a, b *belief.Belief) bool {
	return bytes.Equal(mustJSON(toSharedBelief(a)), mustJSON(toSharedBelief(b))) && a.Alpha == b.Alpha && a.Beta == b.Beta &&
		a.EvidenceCount == b.EvidenceCount && a.ProjectPath == b.ProjectPath &&
		strings.Join(a.Supporting, ",") == strings.Join(b.Supporting, ",") &&
		strings.Join(a.Contradicting, ",") == strings.Join(b.Contradicting, ",") &&
		strings.Join(a.Partial, ",") == strings.Join(b.Partial, ",")
}

// embed gives pulled memories this machine's vectors. A failure leaves
// them without: the next re-embedding or recall's lexical path covers them.
func (s *syncer) embed(ctx context.Context, a *store.ShareApply, eps, bls []int) {
	if s.o.Embedder == nil || len(eps)+len(bls) == 0 {
		return
	}
	name := s.o.Embedder.Name()
	texts := make([]string, 0, len(eps)+len(bls))
	for _, i := range eps {
		e := a.Episodes[i]
		texts = append(texts, ingest.TextFor(name, extract.Draft{Summary: e.Summary, Entities: e.Entities, Context: e.Context}))
	}
	for _, i := range bls {
		texts = append(texts, a.Beliefs[i].Statement)
	}
	vs, err := s.o.Embedder.Embed(ctx, texts)
	if err != nil || len(vs) != len(texts) {
		if !errors.Is(err, context.Canceled) {
			s.o.Log.Warn("share: embed pulled memories", "err", err)
		}
		return
	}
	for k, i := range eps {
		a.Episodes[i].Embedding, a.Episodes[i].Embedder = vs[k], name
	}
	for k, i := range bls {
		a.Beliefs[i].Embedding, a.Beliefs[i].Embedder = vs[len(eps)+k], name
	}
}
