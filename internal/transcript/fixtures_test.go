package transcript

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The fixtures were recorded from Claude Code 2.1.330: session-1 is two
// turns (a preference, then a task with Bash and Write), session-2 a resumed
// session whose first line is a SessionStart hook's output.
var fixtureWant = map[string][]Message{
	"session-1.jsonl": {
		{Role: "user", Prompt: true, PromptID: "55d02849-43dd-4e7f-99ee-fa73a235a7c1", UUID: "55ea0f81-a573-4754-aed5-4b2595919870", Timestamp: ts("2026-11-22T00:54:28.668Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "I prefer table-driven tests and never testify"}}},
		{Role: "assistant", MessageID: "msg_0001", UUID: "a6061cc3-9a89-4031-a9a5-d07ed2aa92bd", Timestamp: ts("2026-11-22T00:54:28.832Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "Noted: table-driven tests with the standard testing package, no testify."}}},
		{Role: "user", Prompt: true, PromptID: "3202f1aa-c705-44f2-9e35-38eb32de878d", UUID: "7cc59fdb-4fb5-4390-aa03-6e77a7bff551", Timestamp: ts("2026-11-22T00:54:29.634Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "please add a health endpoint"}}},
		{Role: "assistant", MessageID: "msg_0003", UUID: "40f939d7-158a-4587-a28a-3e15ea3ba9ad", Timestamp: ts("2026-11-22T00:54:29.777Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolUse, Tool: "Bash", ToolUseID: "toolu_0002", Text: "ls -la — List files"}}},
		{Role: "user", UUID: "8ae90f58-48a7-4757-b2ec-b717c2c5f340", Timestamp: ts("2026-11-22T00:54:29.855Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_0002",
				Text: "total 12\ndrwxr-xr-x 3 root root 4096 Nov 22 00:54 .\ndrwxr-xr-x 4 root root 4096 Nov 22 00:54 ..\ndrwxr-xr-x 7 root root 4096 Nov 22 00:54 .git"}}},
		{Role: "assistant", MessageID: "msg_0005", UUID: "27f83036-9561-4729-8258-a79c179fd78b", Timestamp: ts("2026-11-22T00:54:29.883Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolUse, Tool: "Write", ToolUseID: "toolu_0004", Text: "/home/dev/proj/health.go (51 bytes)"}}},
		{Role: "user", UUID: "9a443f30-e67e-4a6a-af3e-a5bd8aa84d0e", Timestamp: ts("2026-11-22T00:54:29.942Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_0004",
				Text: "File created successfully at: /home/dev/proj/health.go (file state is current in your context — no need to Read it back)"}}},
		{Role: "assistant", MessageID: "msg_0006", UUID: "ce218877-26ab-4c6a-a989-6495a6e7c5bd", Timestamp: ts("2026-11-22T00:54:29.968Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer."}}},
	},
	"session-2.jsonl": {
		{Role: "user", Prompt: true, PromptID: "c11ea480-bfe0-423c-9c3d-4a782d88fab9", UUID: "0b36bfc0-4b70-4155-835d-496752f8fa65", Timestamp: ts("2026-11-22T00:54:39.533Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "please add a health endpoint"}}},
		{Role: "assistant", MessageID: "msg_0008", UUID: "e294cd7a-d1e7-4df9-ab08-36e27cf97ed5", Timestamp: ts("2026-11-22T00:54:39.688Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolUse, Tool: "Bash", ToolUseID: "toolu_0007", Text: "ls -la — List files"}}},
		{Role: "user", UUID: "b208d073-36f1-4d74-bd92-f96b537d188a", Timestamp: ts("2026-11-22T00:54:39.776Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_0007",
				Text: "total 16\ndrwxr-xr-x 3 root root 4096 Nov 22 00:54 .\ndrwxr-xr-x 4 root root 4096 Nov 22 00:54 ..\ndrwxr-xr-x 7 root root 4096 Nov 22 00:54 .git\n-rw-r--r-- 1 root root   51 Nov 22 00:54 health.go"}}},
		{Role: "assistant", MessageID: "msg_0010", UUID: "b9219bc5-8b2e-47a1-8222-b20ca1d43382", Timestamp: ts("2026-11-22T00:54:39.820Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolUse, Tool: "Write", ToolUseID: "toolu_0009", Text: "/home/dev/proj/health.go (51 bytes)"}}},
		{Role: "user", UUID: "ec79de92-cdeb-466d-ac4a-d0925177bc7d", Timestamp: ts("2026-11-22T00:54:39.935Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_0009",
				Text: "The file /home/dev/proj/health.go has been updated successfully. (file state is current in your context — no need to Read it back)"}}},
		{Role: "assistant", MessageID: "msg_0011", UUID: "0417c954-2098-450e-8fab-5b20bf1e7184", Timestamp: ts("2026-11-22T00:54:40.040Z"), CWD: "/home/dev/proj",
			Blocks: []Block{{Kind: KindText, Text: "I added health.go with a health() function returning ok. Tests use the standard library testing package, as you prefer."}}},
	},
}

// Text that reached the transcript but is not conversation: hook output
// (attachments), the system prompt and CLAUDE.md (api-request-blob,
// prompt_snapshot), bookkeeping lines.
var notConversation = []string{
	"JSON-MARKER", "SESSIONSTART-MARKER", "system-reminder", "You are an agent working with the user",
	"claude-opus", "gitStatus", "Current branch", "enqueue", "lastPrompt", "dataviz", "Today's date",
	"Co-Authored-By", "stop_hook_summary",
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestFixtures(t *testing.T) {
	for _, name := range []string{"session-1.jsonl", "session-2.jsonl"} {
		t.Run(name, func(t *testing.T) {
			data := readFixture(t, name)
			res, err := ReadFile(filepath.Join("testdata", name), 0, Options{})
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			checkResult(t, data, 0, Options{}, res)
			if res.End != int64(len(data)) || res.Skipped != 0 {
				t.Errorf("End=%d Skipped=%d, want %d, 0", res.End, res.Skipped, len(data))
			}
			want := fixtureWant[name]
			if len(res.Messages) != len(want) {
				t.Fatalf("got %d messages, want %d:\n%s", len(res.Messages), len(want), dump(res.Messages))
			}
			for i, m := range res.Messages {
				// Each message of the fixtures is exactly one line: the
				// line with its uuid.
				l := data[m.Offset:m.End]
				if bytes.Count(l, []byte("\n")) != 1 || !bytes.Contains(l, []byte(`"uuid":"`+want[i].UUID+`"`)) {
					t.Errorf("message %d: bytes [%d:%d] are not the one line of uuid %s", i, m.Offset, m.End, want[i].UUID)
				}
				m.Offset, m.End = 0, 0
				if !reflect.DeepEqual(m, want[i]) {
					t.Errorf("message %d:\n got %s\nwant %s", i, dump(m), dump(want[i]))
				}
			}
			rendered := Render(res.Messages)
			for _, s := range notConversation {
				if strings.Contains(rendered, s) {
					t.Errorf("Render contains %q, which is not conversation:\n%s", s, rendered)
				}
			}
		})
	}
}

func TestFixtureTurns(t *testing.T) {
	for _, tt := range []struct {
		name    string
		prompts []string
	}{
		{"session-1.jsonl", []string{"I prefer table-driven tests and never testify", "please add a health endpoint"}},
		{"session-2.jsonl", []string{"please add a health endpoint"}},
	} {
		res, err := ReadFile(filepath.Join("testdata", tt.name), 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		turns := Turns(res.Messages)
		if len(turns) != len(tt.prompts) {
			t.Fatalf("%s: %d turns, want %d", tt.name, len(turns), len(tt.prompts))
		}
		for i, turn := range turns {
			if !turn[0].Prompt || turn[0].Blocks[0].Text != tt.prompts[i] {
				t.Errorf("%s: turn %d starts with %s, want prompt %q", tt.name, i, dump(turn[0]), tt.prompts[i])
			}
		}
	}
}

// TestRenderGolden pins the rendered text of each fixture's turns; run with
// -update to rewrite testdata/*.golden after an intended change.
func TestRenderGolden(t *testing.T) {
	for _, name := range []string{"session-1", "session-2"} {
		res, err := ReadFile(filepath.Join("testdata", name+".jsonl"), 0, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, turn := range Turns(res.Messages) {
			if i > 0 {
				b.WriteString("\n=== next turn ===\n\n")
			}
			b.WriteString(Render(turn))
			b.WriteString("\n")
		}
		golden := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if got := b.String(); got != string(want) {
			t.Errorf("%s: Render differs from %s:\n got:\n%s\nwant:\n%s", name, golden, got, want)
		}
	}
}
