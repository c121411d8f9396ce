package main

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// born dates an episode by when it happened and a belief by its first
// evidence (its creation when none of its evidence is in the store).
func TestBorn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE episodes (id TEXT, occurred_at INTEGER)",
		"CREATE TABLE beliefs (id TEXT, supporting_episodes TEXT, created_at INTEGER)",
		"INSERT INTO episodes VALUES ('ep_a', 1000), ('ep_b', 3000)",
		`INSERT INTO beliefs VALUES ('bl_1', '["ep_b","ep_a"]', 9000), ('bl_2', '["ep_gone"]', 7000)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	got, err := born(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]int64{"ep_a": 1000, "ep_b": 3000, "bl_1": 1000, "bl_2": 7000} {
		if got[id] != want {
			t.Errorf("%s: %d, want %d", id, got[id], want)
		}
	}
}

// The own-store prompts keep every prompt (a prompt typed twice is asked
// twice, at its two times), drop trivial ones, split by session, and
// refuse a file without the cwds the replay recreated.
func TestLoadOwnPrompts(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "prompts.jsonl")
	lines := []string{
		`{"session":"s1","at":"2026-02-13T01:56:45Z","prompt":"squash-merge PR 151","cwd":"/home/dev/api"}`,
		`{"session":"s2","at":"2026-02-14T01:56:45Z","prompt":"squash-merge PR 151","cwd":"/home/dev/api"}`,
		`{"session":"s2","at":"2026-02-14T02:00:00Z","prompt":"ok","cwd":"/home/dev/api"}`,
	}
	if err := os.WriteFile(good, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ps, err := loadOwnPrompts(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].at.Equal(ps[1].at) || ps[0].fit != sessionFit("s1") || ps[1].fit != sessionFit("s2") {
		t.Errorf("prompts %+v", ps)
	}
	bad := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(bad, []byte(`{"session":"s1","at":"2026-02-13T01:56:45Z","prompt":"push it"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadOwnPrompts(bad); err == nil || !strings.Contains(err.Error(), "cwd") {
		t.Errorf("a prompt without its cwd: %v", err)
	}
}

// Only bites labelled useful make a memory relevant.
func TestUsefulLabels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "labels.jsonl")
	lines := []string{
		`{"id":"1.0","prompt":"update the roadmap","bite":"[Memory · 23 Feb 2026] User: move the Done section after Later","label":"useful"}`,
		`{"id":"2.0","prompt":"push it","bite":"[Memory · 20 Feb 2026] User: push it","label":"noise"}`,
		`{"id":"3.0","prompt":"push it","bite":"[Memory · 21 Feb 2026] User: push","label":""}`,
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, n, err := usefulLabels(path)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(got["update the roadmap"]) != 1 || len(got["push it"]) != 0 {
		t.Errorf("labels %v (%d)", got, n)
	}
}
