package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/notice"
)

// The Stop hook leaves the prompt hook a notice while a capture has waited
// for the worker longer than a day, and takes it away once none has.
func TestNoticeOfLaggingWorker(t *testing.T) {
	f := newFixture(t)
	f.makeStore(t)
	f.runHook(t, f.input(t, nil), "ENGRAM_SELF_SCHEDULE=false")
	if _, ok := notice.Read(f.home); ok {
		t.Fatal("notice written for captures of a moment ago")
	}
	sqldb, err := sql.Open("sqlite", filepath.Join(f.home, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	twoDays := (48 * time.Hour).Milliseconds()
	if _, err := sqldb.Exec("UPDATE captures SET created_at = created_at - ?", twoDays); err != nil {
		t.Fatal(err)
	}
	f.runHook(t, f.input(t, map[string]any{"stop_hook_active": true}), "ENGRAM_SELF_SCHEDULE=false")
	n, ok := notice.Read(f.home)
	if !ok || !n.LastRun.IsZero() {
		t.Fatalf("notice %+v, %v; log:\n%s", n, ok, f.logText())
	}
	if age := time.Since(n.Oldest); age < 47*time.Hour || age > 49*time.Hour {
		t.Errorf("oldest capture %v ago, want two days", age)
	}
	if st, err := os.Stat(filepath.Join(f.home, notice.Name)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("notice file: %v", err)
	}
	// The worker took the captures: the next Stop removes the notice.
	if _, err := sqldb.Exec("UPDATE captures SET status = 'done'"); err != nil {
		t.Fatal(err)
	}
	f.runHook(t, f.input(t, map[string]any{"stop_hook_active": true}), "ENGRAM_SELF_SCHEDULE=false")
	if _, err := os.Stat(filepath.Join(f.home, notice.Name)); !os.IsNotExist(err) {
		t.Errorf("notice still there: %v", err)
	}
}
