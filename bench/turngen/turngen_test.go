package turngen

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func template(t *testing.T) (*Template, []byte) {
	t.Helper()
	data, err := os.ReadFile("../../internal/capture/testdata/session-1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return tm, data
}

func lines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("generated line is not JSON: %v: %.200s", err, l)
		}
		out = append(out, m)
	}
	return out
}

func TestTurnsAreUniqueAndWellFormed(t *testing.T) {
	tm, data := template(t)
	if !bytes.HasSuffix(data, data[len(tm.Head()):]) || len(tm.Head())+tm.Size() != len(data) {
		t.Fatal("head and turn do not make up the transcript")
	}
	if tm.Prompt(0) != "please add a health endpoint (turn 0)" {
		t.Errorf("prompt %q", tm.Prompt(0))
	}
	a, b := tm.Turn(1, Options{SessionID: "sess-x"}), tm.Turn(2, Options{SessionID: "sess-x"})
	la, lb := lines(t, a), lines(t, b)
	if len(la) != len(lb) || len(la) != bytes.Count(data[len(tm.Head()):], []byte("\n")) {
		t.Fatalf("line counts %d %d", len(la), len(lb))
	}
	for i := range la {
		if la[i]["uuid"] != nil && la[i]["uuid"] == lb[i]["uuid"] {
			t.Errorf("line %d: uuid repeated across turns", i)
		}
		if s, ok := la[i]["sessionId"]; ok && s != "sess-x" {
			t.Errorf("line %d: sessionId %v", i, s)
		}
	}
	if !bytes.Contains(a, []byte(tm.Reply(1))) || bytes.Contains(a, []byte(tm.Reply(2))) {
		t.Error("reply of turn 1 missing or wrong")
	}
	if bytes.Contains(a, []byte(tm.SessionID())) {
		t.Error("recorded session id left in the turn")
	}
	if !bytes.Contains(a, []byte("toolu_0002_1")) || !bytes.Contains(a, []byte("msg_0006_1")) {
		t.Error("tool or message ids not renumbered")
	}
}

func TestBigToolOutput(t *testing.T) {
	tm, _ := template(t)
	out := ToolOutput(1 << 20)
	turn := tm.Turn(7, Options{ToolOutput: Escape(out)})
	found := 0
	for _, l := range lines(t, turn) {
		if l["type"] != "user" {
			continue
		}
		msg := l["message"].(map[string]any)
		blocks, ok := msg["content"].([]any)
		if !ok {
			continue
		}
		for _, b := range blocks {
			if c, _ := b.(map[string]any)["content"].(string); c == string(out) {
				found++
			}
		}
		if r, ok := l["toolUseResult"].(map[string]any); ok && r["stdout"] == string(out) {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("tool output found %d times, want 2 (content and toolUseResult.stdout)", found)
	}
	if len(turn) < 2<<20 {
		t.Errorf("turn is %d bytes", len(turn))
	}
}

func TestWriteTurns(t *testing.T) {
	tm, _ := template(t)
	var b bytes.Buffer
	next, n, err := tm.WriteTurns(&b, 1<<20, 0, Options{})
	if err != nil || n != int64(b.Len()) || n < 1<<20 || next < 10 {
		t.Fatalf("next=%d n=%d len=%d err=%v", next, n, b.Len(), err)
	}
	if !bytes.HasPrefix(b.Bytes(), tm.Head()) || !strings.HasSuffix(b.String(), "\n") {
		t.Error("not head + turns")
	}
	lines(t, b.Bytes())
}
