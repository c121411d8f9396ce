package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/recall"
)

var (
	hookOnce sync.Once
	hookBin  string
	hookErr  error
)

// hookBinary builds engram-hook-userprompt once, beside the worker's.
func hookBinary(t *testing.T) string {
	t.Helper()
	hookOnce.Do(func() {
		hookBin = filepath.Join(filepath.Dir(workerBin), "engram-hook-userprompt")
		if out, err := exec.Command("go", "build", "-o", hookBin, "../hook-userprompt").CombinedOutput(); err != nil {
			hookErr = fmt.Errorf("go build ../hook-userprompt: %v\n%s", err, out)
		}
	})
	if hookErr != nil {
		t.Fatal(hookErr)
	}
	return hookBin
}

// prompt runs the prompt hook as Claude Code does and returns the context
// it injects ("" for none).
func (h testHome) prompt(t *testing.T, cwd, text string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"session_id": "391c10cf-5281-4939-ba64-ee611dca86d4", "transcript_path": "/x/y.jsonl",
		"cwd": cwd, "prompt_id": "p", "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text})
	cmd := exec.Command(hookBinary(t))
	// A generous deadline: this checks what the hook finds, not how fast.
	cmd.Env = h.env("ENGRAM_PROMPT_HOOK_DEADLINE=20s")
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v (stderr %q)", err, errb.String())
	}
	if out.Len() == 0 {
		return ""
	}
	var o struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatalf("hook output: %v %q", err, out.String())
	}
	return o.HookSpecificOutput.AdditionalContext
}

// statusIndex is `status --json`'s search index.
func (h testHome) statusIndex(t *testing.T) searchIndex {
	t.Helper()
	out, errOut, code := h.run(t, "", "status", "--json")
	if code != 0 {
		t.Fatalf("status: %d %s", code, errOut)
	}
	var r struct {
		SearchIndex searchIndex `json:"search_index"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return r.SearchIndex
}

// A cycle whose search index update fails leaves the previous index in
// use, does the rest of its work before it, fails, and status and doctor
// say why; once the cause is gone, the next cycle brings the index up to
// date.
func TestFailedIndexUpdate(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	ctx := context.Background()
	manifest, err := os.ReadFile(recall.ManifestPath(h.engram))
	if err != nil {
		t.Fatal(err)
	}
	m, err := recall.ReadManifest(h.engram)
	if err != nil {
		t.Fatal(err)
	}
	// The next segment cannot be written: a directory holds its name.
	blocker := filepath.Join(recall.IndexDir(h.engram), recall.SegmentName(m.NextName))
	if err := os.Mkdir(blocker, 0o700); err != nil {
		t.Fatal(err)
	}
	db := h.db(t)
	seedCaptures(t, db, 3)
	start := time.Now().Truncate(time.Millisecond)
	_, errOut, code := h.run(t, "", "run")
	if code == 0 || !strings.Contains(errOut, "search index") || !strings.Contains(errOut, filepath.Base(blocker)) {
		t.Fatalf("run: exit %d, stderr %q", code, errOut)
	}
	// The steps before the index's update are done: the captures are
	// episodes, and the recollection files are new.
	if n, err := db.EpisodeCount(ctx); err != nil || n != 5 {
		t.Errorf("episodes after the run: %d %v", n, err)
	}
	if counts, err := db.CaptureCounts(ctx); err != nil || counts["pending"] != 0 {
		t.Errorf("captures after the run: %v %v", counts, err)
	}
	if v, err := recall.LoadView(recall.GlobalPath(h.engram)); err != nil || v.CreatedAt.Before(start) {
		t.Errorf("global recollection file not rewritten: %v", err)
	} else {
		v.Close()
	}
	// The index is the one before the run.
	if got, _ := os.ReadFile(recall.ManifestPath(h.engram)); !bytes.Equal(got, manifest) {
		t.Error("the failed update changed the manifest")
	}
	if ctx := h.prompt(t, h.home, "which database holds the invoices, postgres? what about the schema per tenant"); !strings.Contains(ctx, "one schema per tenant") {
		t.Errorf("the prompt hook does not find a memory of the previous index:\n%s", ctx)
	}
	x := h.statusIndex(t)
	if x.Failure == nil || x.Failure.Changes != 3 || !strings.Contains(x.Failure.Error, filepath.Base(blocker)) || x.Behind != 3 || !x.Built {
		t.Fatalf("status --json after the failure: %+v (failure %+v)", x, x.Failure)
	}
	out, _, _ := h.run(t, "", "status")
	if !strings.Contains(out, "3 episodes changed since") || !strings.Contains(out, "the last update failed at") ||
		!strings.Contains(out, "the prompt hook searches the index as synced at") {
		t.Errorf("status after the failure:\n%s", out)
	}
	out, _, _ = h.run(t, "", "doctor")
	if !strings.Contains(out, "warn search index") || !strings.Contains(out, "the last update failed at") {
		t.Errorf("doctor after the failure:\n%s", out)
	}

	os.Remove(blocker)
	if out, errOut, code := h.run(t, "", "run"); code != 0 {
		t.Fatalf("next run: %d %s %s", code, out, errOut)
	}
	if x := h.statusIndex(t); x.Failure != nil || x.Behind != 0 || x.Records != 5 {
		t.Errorf("status --json after the next run: %+v (failure %+v)", x, x.Failure)
	}
	out, _, _ = h.run(t, "", "doctor")
	if !strings.Contains(out, "ok   search index") || !strings.Contains(out, "up to date") {
		t.Errorf("doctor after the next run:\n%s", out)
	}
}
