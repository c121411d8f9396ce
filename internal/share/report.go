package share

import (
	"context"
	"strconv"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// Report is the state of sharing on this machine, for status and doctor.
type Report struct {
	Configured bool                 `json:"configured"`
	URL        string               `json:"url,omitempty"` // password masked
	Personal   bool                 `json:"personal"`
	Projects   []store.ShareProject `json:"projects"`
	// Pending counts local changes not yet acknowledged by the server.
	Pending     int       `json:"pending"`
	LastOK      time.Time `json:"last_ok,omitzero"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// Behind counts, per space, the server's changes not pulled yet (when
	// the server was asked: Checked).
	Checked    bool             `json:"checked"`
	CheckError string           `json:"check_error,omitempty"`
	Behind     map[string]int64 `json:"behind,omitempty"`
	// Parked counts personal sync items of projects not checked out here.
	Parked int    `json:"parked,omitempty"`
	Role   string `json:"role,omitempty"`
}

// Inspect reads the local state of sharing; with ask, it also asks the
// server how many changes each space holds beyond this machine's cursor
// (within ConnectTimeout).
func Inspect(ctx context.Context, db *store.DB, url string, personal, ask bool) (Report, error) {
	r := Report{Configured: url != "", Personal: personal}
	if url != "" {
		r.URL = MaskURL(url)
	}
	var err error
	if r.Projects, err = db.ShareProjects(ctx); err != nil {
		return r, err
	}
	if r.Pending, err = db.PendingShareChanges(ctx); err != nil {
		return r, err
	}
	for key, t := range map[string]*time.Time{MetaLastOK: &r.LastOK, MetaLastAttempt: &r.LastAttempt} {
		v, err := db.Meta(ctx, key)
		if err != nil {
			return r, err
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			*t = time.UnixMilli(n)
		}
	}
	if r.LastError, err = db.Meta(ctx, MetaLastError); err != nil {
		return r, err
	}
	if parked, err := db.ParkedShared(ctx); err != nil {
		return r, err
	} else {
		r.Parked = len(parked)
	}
	if !ask || url == "" {
		return r, nil
	}
	cctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	conn, err := Connect(cctx, url)
	if err != nil {
		r.CheckError = err.Error()
		return r, nil
	}
	defer conn.Close(context.WithoutCancel(ctx))
	srv, err := check(cctx, conn)
	if err != nil {
		r.CheckError = err.Error()
		return r, nil
	}
	r.Role = srv.role
	cursors, err := db.ShareCursors(ctx)
	if err != nil {
		return r, err
	}
	if prev, _ := db.Meta(ctx, metaServerID); prev != "" && prev != srv.id {
		cursors = map[string]int64{} // a new database: everything is to pull
	}
	sc := &syncer{o: Options{Personal: personal}, srv: srv, pathOf: map[string]string{}}
	for _, p := range r.Projects {
		sc.pathOf[p.Key] = p.Path
	}
	r.Behind = map[string]int64{}
	for _, space := range sc.spaces() {
		var n int64
		if err := conn.QueryRow(cctx, "SELECT count(*) FROM engram_items WHERE space = $1 AND rev > $2", space, cursors[space]).Scan(&n); err != nil {
			r.CheckError = err.Error()
			return r, nil
		}
		r.Behind[space] = n
	}
	r.Checked = true
	return r, nil
}
