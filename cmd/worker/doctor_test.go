package main

import (
	"bytes"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestSetupDoctorUninstall(t *testing.T) {
	h := newHome(t)
	bin := t.TempDir()
	for _, b := range []string{"engram-hook-stop", "engram-hook-userprompt", "engram-worker"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(h.claude, 0o700)
	orig := []byte("{\n  \"theme\": \"dark\",\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"/opt/other\"}]}]}\n}\n")
	os.WriteFile(filepath.Join(h.claude, "settings.json"), orig, 0o644)

	out, _, code := h.run(t, "", "doctor")
	if code != 1 || !strings.Contains(out, "fail hook Stop") || !strings.Contains(out, "run engram-worker setup") {
		t.Fatalf("doctor before setup: %d\n%s", code, out)
	}
	if out, errOut, code := h.run(t, "", "setup", "--bin-dir", bin); code != 0 {
		t.Fatalf("setup: %d %s %s", code, out, errOut)
	}
	h.run(t, "", "run")
	out, _, code = h.run(t, "", "doctor", "--json")
	if code != 0 || !strings.Contains(out, `"name": "hook Stop"`) || strings.Contains(out, `"status": "fail"`) {
		t.Fatalf("doctor after setup: %d\n%s", code, out)
	}
	// Invalid JSON is refused and left as it was.
	bad := []byte("{ not json")
	os.WriteFile(filepath.Join(h.claude, "settings.json"), bad, 0o644)
	if _, errOut, code := h.run(t, "", "setup", "--bin-dir", bin); code == 0 || !strings.Contains(errOut, "settings.json") {
		t.Errorf("setup on invalid JSON: %d %q", code, errOut)
	}
	if got, _ := os.ReadFile(filepath.Join(h.claude, "settings.json")); string(got) != string(bad) {
		t.Errorf("invalid settings were changed: %q", got)
	}
	out, _, _ = h.run(t, "", "doctor")
	if !strings.Contains(out, "not valid JSON") {
		t.Errorf("doctor on invalid JSON:\n%s", out)
	}
}

// TestDoctorLinesEndClean: no line of doctor's ends in a blank, the last
// run's without an error included.
func TestDoctorLinesEndClean(t *testing.T) {
	h := newHome(t)
	if out, errOut, code := h.run(t, "", "run"); code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	out, _, _ := h.run(t, "", "doctor") // fails: no hooks
	found := false
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.TrimRight(l, " \t") != l {
			t.Errorf("line %d ends in a blank: %q", i+1, l)
		}
		if strings.HasPrefix(l, "ok   last run ") {
			found = true
			if !strings.HasSuffix(l, "s ago") {
				t.Errorf("last run line %q", l)
			}
		}
	}
	if !found {
		t.Errorf("no last run line:\n%s", out)
	}
}

// TestDoctorStatusStaleWorker: a worker that has not run for longer than
// twice its interval is a warning in doctor and said in status.
func TestDoctorStatusStaleWorker(t *testing.T) {
	h := newHome(t)
	if out, errOut, code := h.run(t, "", "run"); code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	out, _, _ := h.run(t, "", "status")
	if strings.Contains(out, "it should run every") {
		t.Fatalf("a fresh run said stale:\n%s", out)
	}
	db, err := sql.Open("sqlite", filepath.Join(h.engram, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	ms := (3 * time.Hour).Milliseconds()
	if _, err := db.Exec("UPDATE runs SET started_at = started_at - ?, finished_at = finished_at - ?", ms, ms); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, _ = h.run(t, "", "doctor")
	found := false
	for _, l := range strings.Split(out, "\n") {
		if regexp.MustCompile(`^warn last run +\S+, 3h0m\d+s ago; it should run every 15m0s: is its scheduler installed and running\?$`).MatchString(l) {
			found = true
		}
	}
	if !found {
		t.Errorf("doctor does not warn of the stale worker:\n%s", out)
	}
	if !strings.Contains(out, " scheduler ") {
		t.Errorf("doctor says nothing of the scheduler:\n%s", out)
	}
	out, _, _ = h.run(t, "", "status")
	if !regexp.MustCompile(`(?m)^last run: +\S+ \(3h0m\d+s ago\); it should run every 15m0s: engram-worker doctor says why not$`).MatchString(out) {
		t.Errorf("status:\n%s", out)
	}
	out, _, _ = h.run(t, "", "status", "--json")
	if !strings.Contains(out, `"worker_stale": true`) {
		t.Errorf("status --json:\n%s", out)
	}
}

// TestDoctorColumns: every finding's detail starts in the same column,
// whatever the length of the names before it (a project's memory file, a
// core file, the prompt hook's binary).
func TestDoctorColumns(t *testing.T) {
	checks := []check{
		{"configuration", "ok", "ENGRAM_HOME=/h"},
		{"binary engram-hook-userprompt", "warn", "not on PATH"},
		{"memory project /home/dev/work/billing-service", "ok", "/p/MEMORY.md: 3 lines"},
		{"spool", "fail", "empty"},
	}
	var out bytes.Buffer
	if err := report(&env{stdout: &out, stderr: io.Discard}, checks, false); err == nil {
		t.Fatal("a failed check did not fail doctor")
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(checks) {
		t.Fatalf("%d lines for %d checks:\n%s", len(lines), len(checks), out.String())
	}
	col := -1
	for i, l := range lines {
		at := strings.Index(l, " "+checks[i].Detail) + 1
		if !strings.HasPrefix(l, checks[i].Status+" ") || at <= 0 {
			t.Fatalf("line %q lacks its status or detail", l)
		}
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("the detail of %q starts in column %d, the first line's in %d:\n%s", checks[i].Name, at, col, out.String())
		}
	}
}
