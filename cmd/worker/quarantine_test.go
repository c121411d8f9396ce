package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/store"
)

// TestQuarantineCommand: list shows what a step holds out and why, status
// and doctor count it, retry and drop decide on it; a bad or unknown id is
// refused with the value and changes nothing.
func TestQuarantineCommand(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	db := h.db(t)
	ctx := context.Background()
	for _, id := range []string{"ep_0000000000a1", "ep_0000000000a2"} {
		if err := db.Quarantine(ctx, store.QuarantineEpisode, id, "consolidate", "panic: runtime error: slice bounds out of range\ngoroutine 1", "old-build"); err != nil {
			t.Fatal(err)
		}
	}

	out, errOut, code := h.run(t, "", "quarantine", "list")
	if code != 0 || !strings.Contains(out, "ep_0000000000a1  consolidate, held, 1 attempts") ||
		!strings.Contains(out, "panic: runtime error: slice bounds out of range") || !strings.Contains(out, "invoices in Postgres") {
		t.Fatalf("list: %d %q %q", code, out, errOut)
	}
	out, _, code = h.run(t, "", "status")
	if code != 0 || !strings.Contains(out, "quarantine: 2 (consolidate 2) held out of their step") {
		t.Fatalf("status: %d %s", code, out)
	}
	out, _, _ = h.run(t, "", "doctor")
	if !strings.Contains(out, "quarantine") || !strings.Contains(out, "consolidate 2") {
		t.Fatalf("doctor: %s", out)
	}

	// Refused, nothing changed: a malformed id, an unknown one among good ones.
	_, errOut, code = h.run(t, "", "quarantine", "retry", "cap_7")
	if code != exitUsage || !strings.Contains(errOut, `"cap_7"`) {
		t.Fatalf("retry cap_7: %d %q", code, errOut)
	}
	_, errOut, code = h.run(t, "", "quarantine", "drop", "ep_0000000000a1", "capture:99")
	if code != 1 || !strings.Contains(errOut, "capture:99") || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("drop with an unknown id: %d %q", code, errOut)
	}
	if items, _ := db.ListQuarantine(ctx, false); len(items) != 2 {
		t.Fatalf("a refused drop changed the quarantine: %+v", items)
	}

	out, _, code = h.run(t, "", "quarantine", "drop", "ep_0000000000a1")
	if code != 0 || !strings.Contains(out, "ep_0000000000a1 dropped") {
		t.Fatalf("drop: %d %s", code, out)
	}
	out, _, code = h.run(t, "", "quarantine", "retry", "ep_0000000000a2")
	if code != 0 || !strings.Contains(out, "ep_0000000000a2 will be tried again") {
		t.Fatalf("retry: %d %s", code, out)
	}
	out, _, code = h.run(t, "", "quarantine", "list", "--json", "--all")
	var items []store.Quarantined
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) != 2 {
		t.Fatalf("list --json --all: %d %s", code, out)
	}
	states := map[string]string{}
	for _, q := range items {
		states[q.ID] = q.State
	}
	if states["ep_0000000000a1"] != store.QuarantineDropped || states["ep_0000000000a2"] != store.QuarantineRetry {
		t.Fatalf("states %v", states)
	}
	// The next run works the retried episode and lifts its quarantine; the
	// dropped one stays out for good.
	if _, errOut, code := h.run(t, "", "run", "--consolidate"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	out, _, _ = h.run(t, "", "quarantine", "list", "--json", "--all")
	if strings.Contains(out, "ep_0000000000a2") || !strings.Contains(out, "ep_0000000000a1") {
		t.Fatalf("after the run: %s", out)
	}
	out, _, _ = h.run(t, "", "quarantine")
	if !strings.Contains(out, "quarantine: empty") {
		t.Fatalf("list without the dropped: %s", out)
	}
}
