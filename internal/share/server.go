// Package share is engram's meeting point between machines: a PostgreSQL
// database that every member's worker pushes its shared memories to and
// pulls the others' from. It owns every statement run there, its schema
// (embedded migrations, applied only by `engram-worker share init`), the
// project key (the normalised git remote URL), and the merge rules that
// make every machine converge on the same state. The hooks never link it.
package share

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrNotInitialised means the database has no engram schema yet.
var ErrNotInitialised = errors.New("the shared database has no engram schema: run engram-worker share init")

// ConnectTimeout bounds the connection to the server.
const ConnectTimeout = 5 * time.Second

// lockID is the advisory lock that orders revisions (and migrations).
const lockID = 0x656e6772616d // "engram"

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("share: migration file %q is not named NNNN_name.sql", e.Name())
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("share: migrations are not numbered 1..n: %q", m.name)
		}
	}
	return ms, nil
}

// LatestVersion is the shared schema this engram knows.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err)
	}
	return len(ms)
}

// Connect opens a connection to the shared database. Errors never carry
// the URL's password.
func Connect(ctx context.Context, rawURL string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("ENGRAM_SHARE_URL: %s", scrub(err.Error(), rawURL))
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > ConnectTimeout {
		cfg.ConnectTimeout = ConnectTimeout
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = "engram"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %s", MaskURL(rawURL), scrub(err.Error(), rawURL))
	}
	return conn, nil
}

// scrub removes the URL's password from a message.
func scrub(msg, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		if pw := u.Query().Get("password"); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// Init creates or migrates the shared schema and returns the versions
// before and after. It is what `share init` runs; nothing else migrates.
func Init(ctx context.Context, conn *pgx.Conn) (from, to int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(lockID)); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS engram_schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return 0, 0, fmt.Errorf("share init: %w", err)
	}
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM engram_schema_migrations").Scan(&from); err != nil {
		return 0, 0, err
	}
	if from > len(ms) {
		return from, from, fmt.Errorf("the shared database has schema %d and this engram knows schemas up to %d: install the newer engram", from, len(ms))
	}
	for _, m := range ms[from:] {
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return from, from, fmt.Errorf("share init: apply %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO engram_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return from, from, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return from, from, err
	}
	return from, len(ms), nil
}

// server is what a sync learns of the database first.
type server struct {
	id   string // engram_meta server_id: a replaced database is pulled anew
	role string // current_user: the personal space's name
}

// check verifies the schema and returns the server's identity.
func check(ctx context.Context, conn *pgx.Conn) (server, error) {
	var s server
	var reg *string
	if err := conn.QueryRow(ctx, "SELECT to_regclass('engram_schema_migrations')::text, current_user").Scan(&reg, &s.role); err != nil {
		return s, err
	}
	if reg == nil {
		return s, ErrNotInitialised
	}
	var v int
	if err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM engram_schema_migrations").Scan(&v); err != nil {
		return s, err
	}
	switch {
	case v == 0:
		return s, ErrNotInitialised
	case v > LatestVersion():
		return s, fmt.Errorf("the shared database has schema %d and this engram knows schemas up to %d: install the newer engram", v, LatestVersion())
	case v < LatestVersion():
		return s, fmt.Errorf("the shared database has schema %d and this engram needs %d: run engram-worker share init", v, LatestVersion())
	}
	err := conn.QueryRow(ctx, "SELECT value FROM engram_meta WHERE key = 'server_id'").Scan(&s.id)
	return s, err
}
