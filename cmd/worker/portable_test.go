package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// session writes one Claude Code transcript into the home: a turn per
// prompt, in the project at cwd, timed from at.
func (h testHome) session(t *testing.T, id, cwd string, at time.Time, prompts ...string) {
	t.Helper()
	var b strings.Builder
	line := func(v map[string]any) {
		data, _ := json.Marshal(v)
		b.Write(data)
		b.WriteByte('\n')
	}
	for i, p := range prompts {
		ts := at.Add(time.Duration(i) * time.Minute).UTC().Format(time.RFC3339Nano)
		pid := fmt.Sprintf("%s-p%d", id[:8], i)
		line(map[string]any{"type": "queue-operation", "operation": "enqueue", "timestamp": ts, "sessionId": id, "content": p})
		line(map[string]any{"type": "user", "promptId": pid, "uuid": fmt.Sprintf("%s-u%d", id, i), "timestamp": ts, "cwd": cwd,
			"sessionId": id, "message": map[string]any{"role": "user", "content": p}})
		line(map[string]any{"type": "assistant", "uuid": fmt.Sprintf("%s-a%d", id, i), "timestamp": ts, "cwd": cwd, "sessionId": id,
			"message": map[string]any{"id": fmt.Sprintf("msg_%s%d", id[:8], i), "role": "assistant",
				"content": []map[string]any{{"type": "text", "text": "Noted."}}}})
	}
	path := filepath.Join(h.claude, "projects", "-"+strings.ReplaceAll(strings.Trim(cwd, "/"), "/", "-"), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// memories is a home's export with what each machine keeps for itself left
// out (accesses, stability, vectors, the order of records and of evidence
// lists), and an episode named by its content (the same exchange said on
// two machines has an id and a project on each): two homes with the same memories give
// the same lines. It also counts the episodes and beliefs, and lists the
// beliefs' ids, statuses and statements.
func (h testHome) memories(t *testing.T) (lines []string, episodes, beliefs int, statements []string) {
	t.Helper()
	out, errOut, code := h.run(t, "", "export")
	if code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	var recs []map[string]any
	byContent := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		switch m["kind"] {
		case "episode":
			episodes++
			byContent[m["id"].(string)] = "content:" + m["content_hash"].(string)
			// Where an exchange said on both machines was said is each
			// machine's own.
			delete(m, "id")
			delete(m, "project")
			delete(m, "project_path")
		case "belief":
			beliefs++
			statements = append(statements, fmt.Sprintf("%s %s: %s", m["id"], m["status"], m["statement"]))
		}
		recs = append(recs, m)
	}
	name := func(v any) any {
		if s, ok := v.(string); ok && byContent[s] != "" {
			return byContent[s]
		}
		return v
	}
	for _, m := range recs {
		for _, k := range []string{"access_count", "last_accessed_at", "stability", "peak_confidence", "embedding", "embedder"} {
			delete(m, k)
		}
		for _, k := range []string{"memory_id", "cause"} {
			if v, ok := m[k]; ok {
				m[k] = name(v)
			}
		}
		for _, k := range []string{"supporting_episodes", "contradicting_episodes", "partial_episodes"} {
			if list, ok := m[k].([]any); ok {
				for i := range list {
					list[i] = name(list[i])
				}
				sort.Slice(list, func(i, j int) bool { return list[i].(string) < list[j].(string) })
			}
		}
		b, _ := json.Marshal(m)
		lines = append(lines, string(b))
	}
	sort.Strings(lines)
	sort.Strings(statements)
	return lines, episodes, beliefs, statements
}

var importLine = regexp.MustCompile(`(?m)^imported (\d+) records? from \S+: (\d+) added, (\d+) skipped \(already in the store\), (\d+) merged$`)

// exchange exports each home and imports the file into the other, both
// ways, and returns what each import said.
func exchange(t *testing.T, a, b testHome) (intoB, intoA string) {
	t.Helper()
	dir := t.TempDir()
	move := func(from, to testHome, name string) string {
		file := filepath.Join(dir, name)
		if _, errOut, code := from.run(t, "", "export", "--out", file); code != 0 {
			t.Fatalf("export: %d %s", code, errOut)
		}
		out, errOut, code := to.run(t, "", "import", file)
		if code != 0 || errOut != "" || !importLine.MatchString(out) {
			t.Fatalf("import: %d\n%s%s", code, out, errOut)
		}
		return out
	}
	intoB = move(a, b, "a.jsonl")
	intoA = move(b, a, "b.jsonl")
	return intoB, intoA
}

// sameMemories fails the test unless the two homes hold the same memories.
func sameMemories(t *testing.T, round string, a, b testHome) (episodes, beliefs int) {
	t.Helper()
	la, ea, ba, sa := a.memories(t)
	lb, eb, bb, sb := b.memories(t)
	if ea != eb || ba != bb || strings.Join(sa, "\n") != strings.Join(sb, "\n") {
		t.Fatalf("%s: home A holds %d episodes and %d beliefs, home B %d and %d\nA:\n%s\nB:\n%s", round, ea, ba, eb, bb,
			strings.Join(sa, "\n"), strings.Join(sb, "\n"))
	}
	for i := range la {
		if la[i] != lb[i] {
			t.Fatalf("%s: the homes differ:\nA: %s\nB: %s", round, la[i], lb[i])
		}
	}
	return ea, ba
}

// TestExportImportTwoHomes: two machines without a server between them
// carry memory to each other by export and import, in both directions,
// and end with the same memories; each keeps working (new sessions, a
// denial, a forget) and the next exchange brings them together again; an
// exchange with nothing new changes nothing.
func TestExportImportTwoHomes(t *testing.T) {
	a, b := newHome(t), newHome(t)
	const billing, api = "/home/dev/billing", "/home/dev/api"
	day := time.Now().Add(-72 * time.Hour).UTC().Truncate(time.Hour)
	a.session(t, "a1000000-0000-4000-8000-000000000001", billing, day,
		"I prefer table-driven tests in Go.", "We deploy billing with Fly.", "Never add emoji to commit messages.")
	a.session(t, "a1000000-0000-4000-8000-000000000002", billing, day.Add(time.Hour),
		"Invoices are stored in Postgres, one schema per tenant.", "I always use pnpm, never npm.")
	b.session(t, "b2000000-0000-4000-8000-000000000001", api, day.Add(2*time.Hour),
		"I prefer table-driven tests in Go.", "The api service deploys to Cloud Run.", "I avoid ORMs.")
	b.session(t, "b2000000-0000-4000-8000-000000000002", billing, day.Add(3*time.Hour),
		"We deploy billing with Fly.", "Use tabs in Makefiles.")
	for _, h := range []testHome{a, b} {
		if out, errOut, code := h.run(t, "", "run", "--backfill"); code != 0 {
			t.Fatalf("run: %d\n%s%s", code, out, errOut)
		}
	}
	_, _, beliefsA, _ := a.memories(t)
	_, _, beliefsB, _ := b.memories(t)
	if beliefsA == 0 || beliefsB == 0 {
		t.Fatalf("no beliefs formed: %d in A, %d in B", beliefsA, beliefsB)
	}

	// Round 1.
	intoB, intoA := exchange(t, a, b)
	t.Logf("round 1, into B: %s into A: %s", intoB, intoA)
	eps, bls := sameMemories(t, "after round 1", a, b)
	t.Logf("round 1: both homes hold %d episodes and %d beliefs", eps, bls)

	// Each keeps working: denials and a forget in A, new sessions in both.
	// One denial is of the belief about Cloud Run, whose only support is
	// the episode A then forgets: the forget retires it (archived, kept for
	// the decision), while B, which does not know yet, links it to what it
	// learns meanwhile; the exchange must take those links out in B too.
	// The other is of a belief the forget leaves alone.
	_, _, _, statements := a.memories(t)
	var deny []string
	for _, s := range statements {
		if strings.Contains(s, "Cloud Run") {
			deny = append(deny, strings.Fields(s)[0])
		}
	}
	if len(deny) != 1 {
		t.Fatalf("want one belief about Cloud Run, got %d:\n%s", len(deny), strings.Join(statements, "\n"))
	}
	for _, s := range statements {
		if !strings.Contains(s, "Cloud Run") {
			deny = append(deny, strings.Fields(s)[0])
			break
		}
	}
	if out, errOut, code := a.run(t, "", append([]string{"review", "deny"}, deny...)...); code != 0 {
		t.Fatalf("deny: %d %s %s", code, out, errOut)
	}
	out, _, _ := a.run(t, "", "recall", "--all-projects", "--json", "Cloud Run api service")
	forget := regexp.MustCompile(`"id": "(ep_[0-9a-f]{12})"`).FindStringSubmatch(out)
	if forget == nil {
		t.Fatalf("A holds no episode of B's about Cloud Run:\n%s", out)
	}
	if out, errOut, code := a.run(t, "", "forget", forget[1]); code != 0 {
		t.Fatalf("forget: %d %s %s", code, out, errOut)
	}
	a.session(t, "a1000000-0000-4000-8000-000000000003", billing, day.Add(24*time.Hour),
		"I prefer table-driven tests in Go, always.", "Never add emoji to commit messages, please.")
	b.session(t, "b2000000-0000-4000-8000-000000000003", api, day.Add(25*time.Hour),
		"Use tabs in Makefiles, not spaces.", "We deploy billing with Fly, as before.", "I always use pnpm, never npm.")
	for _, h := range []testHome{a, b} {
		if out, errOut, code := h.run(t, "", "run", "--backfill"); code != 0 {
			t.Fatalf("run: %d\n%s%s", code, out, errOut)
		}
	}
	// B, which does not know of the denial and the forget yet, linked the
	// belief about Cloud Run to one it formed.
	if out, _, _ := b.run(t, "", "export"); !strings.Contains(out, `"kind":"link","from":"`+deny[0]+`"`) {
		t.Fatalf("B holds no link of %s, the belief A denied and retired: the exchange below shows nothing of them", deny[0])
	}

	// Round 2: the denial and the forget reach B.
	intoB, intoA = exchange(t, a, b)
	t.Logf("round 2, into B: %s into A: %s", intoB, intoA)
	if !strings.Contains(intoB, "forgot what the file says was forgotten where it was made: "+forget[1]) {
		t.Errorf("B did not forget what A forgot:\n%s", intoB)
	}
	sameMemories(t, "after round 2", a, b)
	if exitOut, _, code := b.run(t, "", "expand", forget[1]); code == 0 {
		t.Errorf("B still holds the episode A forgot:\n%s", exitOut)
	}
	out, _, _ = b.run(t, "", "review", "--list", "--level", "denied")
	for _, id := range deny {
		if !strings.Contains(out, id) {
			t.Errorf("B does not hold A's denial of %s:\n%s", id, out)
		}
	}

	// Round 3: nothing new; every record is skipped and nothing changes.
	intoB, intoA = exchange(t, a, b)
	for _, out := range []string{intoB, intoA} {
		m := importLine.FindStringSubmatch(out)
		if m[2] != "0" || m[4] != "0" || m[3] != m[1] || strings.Contains(out, "forgot") {
			t.Errorf("an exchange with nothing new: %s", out)
		}
	}
	sameMemories(t, "after round 3", a, b)
}
