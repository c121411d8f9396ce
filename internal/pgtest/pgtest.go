// Package pgtest starts a throwaway PostgreSQL server for tests: initdb
// into a temporary directory, the server listening on a unix socket there
// only (no TCP port), run as an unprivileged user when the tests run as
// root (PostgreSQL refuses root), stopped and removed at the end. Tests
// skip, saying why, only where the server's programs are not installed
// (Debian's postgresql package puts them in /usr/lib/postgresql/N/bin).
package pgtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is a running test server.
type Server struct {
	bin  string
	dir  string // socket directory and parent of the data directory
	user string // the superuser role
	mu   sync.Mutex
	n    int
}

// nobody runs the server when the tests run as root.
const nobodyUID, nobodyGID = 65534, 65534

// Bin finds the directory of pg_ctl: PG_BIN, else the newest
// /usr/lib/postgresql/N/bin, else PATH.
func Bin() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	if ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl"); len(ms) > 0 {
		sort.Strings(ms)
		return filepath.Dir(ms[len(ms)-1]), nil
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no PostgreSQL server programs (pg_ctl, initdb): install Debian's postgresql package")
}

// Start initialises and starts a server; it is stopped and removed when
// the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := Bin()
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	// A short path: a unix socket's name is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "engram-pg-")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{bin: bin, dir: dir, user: "engram"}
	t.Cleanup(func() {
		s.Stop(t)
		os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		if err := os.Chown(dir, nobodyUID, nobodyGID); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	s.run(t, "initdb", "-D", s.data(), "-U", s.user, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	s.Restart(t)
	return s
}

func (s *Server) data() string { return filepath.Join(s.dir, "data") }

func (s *Server) run(t testing.TB, prog string, args ...string) {
	t.Helper()
	name := filepath.Join(s.bin, prog)
	if os.Geteuid() == 0 {
		args = append([]string{fmt.Sprintf("--reuid=%d", nobodyUID), fmt.Sprintf("--regid=%d", nobodyGID), "--clear-groups", name}, args...)
		name = "setpriv"
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		t.Fatalf("%s %s: %v\n%s\nserver log:\n%s", prog, strings.Join(args, " "), err, out, log)
	}
}

// Restart starts the server (again, after Stop).
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.run(t, "pg_ctl", "-D", s.data(), "-l", filepath.Join(s.dir, "server.log"), "-w", "-t", "60", "-o",
		fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100", s.dir),
		"start")
}

// Stop stops the server (fast shutdown: sessions are cut), if it runs.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(s.data(), "postmaster.pid")); err != nil {
		return
	}
	s.run(t, "pg_ctl", "-D", s.data(), "-m", "fast", "-w", "-t", "60", "stop")
}

// URL is the connection URL of database db as role user ("" for the
// superuser).
func (s *Server) URL(db, user string) string {
	if user == "" {
		user = s.user
	}
	return fmt.Sprintf("postgres://%s@/%s?host=%s&sslmode=disable", user, db, s.dir)
}

// NewDB creates a database and returns its URL.
func (s *Server) NewDB(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("engram_%d", s.n)
	s.mu.Unlock()
	s.Exec(t, "postgres", "CREATE DATABASE "+name)
	return s.URL(name, "")
}

// Exec runs statements as the superuser in database db.
func (s *Server) Exec(t testing.TB, db, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL(db, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
