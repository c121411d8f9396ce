package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
