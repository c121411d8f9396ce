package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/notice"
)

// The Stop hook's notice of a lagging worker reaches the user's session
// once a day, with or without memories to recall.
func TestTellsOfLaggingWorkerOnceADay(t *testing.T) {
	h := newHome(t, true)
	sub := filepath.Join(h.project, "internal", "api")
	lastRun := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	if _, err := notice.Write(h.engram, notice.Notice{LastRun: lastRun, Oldest: lastRun.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	want := "engram: the memory worker has not run since 2026-03-01T09:30:00Z; run `engram-worker doctor`"

	got := h.run(t, h.input("how do we deploy the billing app to fly?", sub))
	if !strings.Contains(got, "flyctl deploy") || !strings.HasSuffix(got, "\n\n"+want) {
		t.Fatalf("context:\n%s", got)
	}
	// Told: not again within the day, not even alone.
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != "" {
		t.Errorf("told again within the day:\n%s", got)
	}
	// A day later: again, alone when nothing is recalled.
	old := time.Now().Add(-notice.Every - time.Minute)
	if err := os.Chtimes(filepath.Join(h.engram, "worker-stale.told"), old, old); err != nil {
		t.Fatal(err)
	}
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != want {
		t.Errorf("a day later: %q, want %q", got, want)
	}
	// The notice gone (the worker caught up): nothing.
	if err := notice.Remove(h.engram); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(h.engram, "worker-stale.told"), old, old)
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != "" {
		t.Errorf("without a notice: %q", got)
	}
}

// The prompt hook never starts the worker: it does not link the Stop
// hook's package, nor anything that starts processes.
func TestPromptHookStartsNoWorker(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/engram-memory/engram/internal/stophook" || dep == "os/exec" {
			t.Errorf("engram-hook-userprompt links %s", dep)
		}
	}
}

// The worker's count of beliefs waiting for review reaches the session
// once a day, in one line, beside the recalled memories.
func TestTellsOfBeliefsWaitingOnceADay(t *testing.T) {
	h := newHome(t, true)
	sub := filepath.Join(h.project, "internal", "api")
	if err := notice.WriteReview(h.engram, 3); err != nil {
		t.Fatal(err)
	}
	want := notice.ReviewLine(3)
	if !strings.HasPrefix(want, "engram: 3 beliefs wait for the user's review") || strings.Contains(want, "\n") {
		t.Fatalf("line %q", want)
	}
	got := h.run(t, h.input("how do we deploy the billing app to fly?", sub))
	if !strings.Contains(got, "flyctl deploy") || !strings.HasSuffix(got, "\n\n"+want) {
		t.Fatalf("context:\n%s", got)
	}
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != "" {
		t.Errorf("told again within the day:\n%s", got)
	}
	old := time.Now().Add(-notice.Every - time.Minute)
	if err := os.Chtimes(filepath.Join(h.engram, "review-waiting.told"), old, old); err != nil {
		t.Fatal(err)
	}
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != want {
		t.Errorf("a day later: %q, want %q", got, want)
	}
	// Nothing waits any more: nothing to tell.
	if err := notice.WriteReview(h.engram, 0); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(h.engram, "review-waiting.told"), old, old)
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != "" {
		t.Errorf("nothing waiting: %q", got)
	}
}
