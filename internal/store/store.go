// Package store owns engram's SQLite database: opening it with the right
// pragmas, migrating it forward, and every SQL statement engram runs. No
// other package imports database/sql.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// ErrNotReady means the database does not exist yet or has not been migrated
// to the schema this binary expects. Hooks treat it as "spool instead".
var ErrNotReady = errors.New("store: database missing or not migrated")

// ErrNewerSchema is returned by Open for a database whose schema is newer
// than this binary's (an older engram installed over a newer one): it is
// neither migrated nor written.
var ErrNewerSchema = errors.New("store: the database was written by a newer engram")

// DB is an open engram database.
type DB struct {
	sql  *sql.DB
	path string
}

// Options tune how the database is opened.
type Options struct {
	// BusyTimeout is how long a statement waits for another writer's lock.
	BusyTimeout time.Duration
	// ReadOnly opens the file with mode=ro (the prompt hook).
	ReadOnly bool
	// MustExist refuses to create or migrate the database: the hooks use it
	// so that they never run migrations on the user's critical path.
	MustExist bool
}

// Open opens (creating if needed) the database at path and migrates it to
// the latest schema. The directory is created 0700 and the file 0600.
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("store: database path %q is not absolute", path)
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = 5 * time.Second
	}
	if opt.MustExist || opt.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, ErrNotReady
			}
			return nil, fmt.Errorf("store: %w", err)
		}
	} else if err := prepareFile(path); err != nil {
		return nil, err
	}
	sdb, err := sql.Open("sqlite", dsn(path, opt))
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db := &DB{sql: sdb, path: path}
	v, err := db.UserVersion(ctx)
	if err != nil {
		sdb.Close()
		return nil, err
	}
	if v > LatestVersion() {
		sdb.Close()
		return nil, fmt.Errorf("%w: %s has schema %d and this engram knows schemas up to %d; "+
			"it was left as it is: install the newer engram again", ErrNewerSchema, path, v, LatestVersion())
	}
	if opt.MustExist || opt.ReadOnly {
		if v < LatestVersion() {
			sdb.Close()
			return nil, fmt.Errorf("%w (schema %d, want %d)", ErrNotReady, v, LatestVersion())
		}
		return db, nil
	}
	if err := db.migrate(ctx); err != nil {
		sdb.Close()
		return nil, err
	}
	return db, nil
}

// prepareFile creates the data directory 0700 and the database file 0600
// before SQLite opens it, so that SQLite's WAL and SHM files inherit 0600.
func prepareFile(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("store: create %s: %w", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	st, err := f.Stat()
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	f.Close()
	if err != nil {
		return fmt.Errorf("store: %s: %w", path, err)
	}
	return nil
}

// dsn puts every pragma in the DSN so each pooled connection gets them.
func dsn(path string, opt Options) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opt.BusyTimeout.Milliseconds()))
	if opt.ReadOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_txlock", "immediate")
	}
	q.Add("_pragma", "foreign_keys(ON)")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// Close closes the database.
func (db *DB) Close() error { return db.sql.Close() }

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// UserVersion returns the schema version recorded in the file header.
func (db *DB) UserVersion(ctx context.Context) (int, error) {
	var v int
	if err := db.sql.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("store: read schema version: %w", err)
	}
	return v, nil
}

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
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("store: migration file %q is not named NNNN_name.sql", name)
		}
		body, err := migrationFS.ReadFile("migrations/" + name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migrations are not numbered 1..n: %q", m.name)
		}
	}
	return ms, nil
}

// LatestVersion is the schema version this binary migrates to.
func LatestVersion() int {
	ms, err := migrations()
	if err != nil {
		panic(err) // embedded files: a broken name is a build defect
	}
	return len(ms)
}

// migrate applies every migration newer than the database, each in its own
// immediate transaction, and records it in schema_migrations.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if _, err := db.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("store: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := db.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return fmt.Errorf("apply %s: %w", m.name, err)
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, time.Now().UnixMilli()); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version))
			return err
		})
		if err != nil {
			return fmt.Errorf("store: migrate %s: %w", db.path, err)
		}
	}
	return nil
}

// write runs fn in an immediate (write-locking) transaction.
func (db *DB) write(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// read runs fn in a read-only transaction (a consistent snapshot).
func (db *DB) read(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// QuickCheck runs PRAGMA quick_check and returns its findings ("ok" when sound).
func (db *DB) QuickCheck(ctx context.Context) (string, error) {
	rows, err := db.sql.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return "", err
		}
		out = append(out, s)
	}
	return strings.Join(out, "; "), rows.Err()
}

// Meta reads a value of the meta table ("" when absent).
func (db *DB) Meta(ctx context.Context, key string) (string, error) {
	var v string
	err := db.sql.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

// SetMeta writes a value of the meta table.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
		return err
	})
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

// DeleteMeta removes a key of the meta table.
func (db *DB) DeleteMeta(ctx context.Context, key string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = ?", key)
		return err
	})
}

// HoldWriteLock takes the database's write lock and keeps it until release is
// called. Tests use it to play a writer that never lets go.
func (db *DB) HoldWriteLock(ctx context.Context) (release func(), err error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES ('lock-probe', '') ON CONFLICT(key) DO NOTHING"); err != nil {
		tx.Rollback()
		return nil, err
	}
	return func() { tx.Rollback() }, nil
}
