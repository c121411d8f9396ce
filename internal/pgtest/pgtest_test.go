package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStartStopRestart(t *testing.T) {
	s := Start(t)
	url := s.NewDB(t)
	ask := func() int {
		conn, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	s.Exec(t, "engram_1", "CREATE TABLE t (x int); INSERT INTO t VALUES (1), (2)")
	if n := ask(); n != 2 {
		t.Fatalf("rows: %d", n)
	}
	s.Stop(t)
	if _, err := pgx.Connect(context.Background(), url); err == nil {
		t.Fatal("connected to a stopped server")
	}
	s.Restart(t)
	if n := ask(); n != 2 {
		t.Fatalf("rows after a restart: %d", n)
	}
}
