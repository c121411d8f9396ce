package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestTraceCommand: two sessions on two days about the same piece of work
// (the redis cache layer), another topic between them; after the worker's
// runs, `trace` lists the threads, shows the cache thread across both
// sessions by topic and by id, and refuses an unknown id with a clear
// error.
func TestTraceCommand(t *testing.T) {
	h := newHome(t)
	cwd := h.home + "/src/shop"
	day1 := time.Now().Add(-72 * time.Hour).Truncate(time.Minute)
	h.session(t, "11111111-1111-4111-8111-111111111111", cwd, day1,
		"let's redesign the redis cache layer for the product catalog: cache keys per product id, ttl of ten minutes",
		"for the redis cache layer of the product catalog, invalidate the cache keys when a product id is updated")
	h.session(t, "22222222-2222-4222-8222-222222222222", cwd, day1.Add(3*time.Hour),
		"the flaky parser test in the csv importer fails on quoted commas, look at the tokenizer")
	h.session(t, "33333333-3333-4333-8333-333333333333", cwd, day1.Add(48*time.Hour),
		"back to the redis cache layer of the product catalog: the cache keys per product id need a version prefix")
	if _, errOut, code := h.run(t, "", "backfill"); code != 0 {
		t.Fatalf("backfill: %d %s", code, errOut)
	}
	out, errOut, code := h.run(t, "", "trace", "--json")
	if code != 0 {
		t.Fatalf("trace --json: %d %s", code, errOut)
	}
	var list []struct {
		ID     string `json:"id"`
		Label  string `json:"label"`
		Boxes  []any  `json:"boxes"`
		Memory int    `json:"memories"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) < 2 {
		st, _, _ := h.run(t, "", "status")
		t.Log(st)
		t.Fatalf("trace --json: %v %s", err, out)
	}
	out, errOut, code = h.run(t, "", "trace", "redis", "cache", "keys")
	if code != 0 || !strings.Contains(out, "2 sessions") || strings.Contains(out, "tokenizer") {
		t.Fatalf("trace by topic: want the cache thread over 2 sessions, not the parser: %d %s %s", code, out, errOut)
	}
	id := strings.Fields(strings.TrimPrefix(out, "trace "))[0]
	id = strings.TrimSuffix(id, ":")
	byID, _, code := h.run(t, "", "trace", id)
	if code != 0 || byID != out {
		t.Fatalf("trace by id %s: %d\n%s\nwant\n%s", id, code, byID, out)
	}
	_, errOut, code = h.run(t, "", "trace", "tr_000000000000")
	if code == 0 || !strings.Contains(errOut, "tr_000000000000") {
		t.Fatalf("unknown trace: want an error naming it, got %d %q", code, errOut)
	}
	_, errOut, code = h.run(t, "", "trace", "--project", h.home+"/nowhere", "redis")
	if code == 0 || !strings.Contains(errOut, "nowhere") {
		t.Fatalf("a --project that is not a directory: %d %q", code, errOut)
	}
}
