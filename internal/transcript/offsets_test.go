package transcript

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/inject"
)

// groupedTranscript exercises what the fixtures lack: an assistant message
// written as several lines (with thinking, a repeated block, and unrelated
// lines in between), sidechains, meta lines and a CRLF line.
func groupedTranscript() string {
	return strings.Join([]string{
		jsonLine(obj{"type": "queue-operation", "operation": "enqueue", "content": "fix the build"}),
		userLine("fix the build"),
		jsonLine(obj{"type": "attachment", "attachment": obj{"type": "hook_additional_context", "content": []string{inject.Wrap("[Memory] x")}}}),
		assistantLine("msg_1", blocks(obj{"type": "thinking", "thinking": "hmm", "signature": "s"})),
		assistantLine("msg_1", blocks(text("Let me look."))),
		jsonLine(obj{"type": "api-request", "id": "r1"}),
		assistantLine("msg_1", blocks(toolUse("toolu_1", "Bash", obj{"command": "go build ./..."}))),
		assistantLine("msg_1", blocks(text("Let me look."), toolUse("toolu_1", "Bash", obj{"command": "go build ./..."}))),
		assistantLine("msg_1", blocks(toolUse("toolu_2", "Read", obj{"file_path": "/p/main.go"}))),
		userLine(blocks(toolResult("toolu_1", "main.go:3: undefined: x", true)), obj{"uuid": "r1"}),
		userLine(blocks(toolResult("toolu_2", []obj{text("package main"), {"type": "image", "source": obj{}}}, false)), obj{"uuid": "r2"}),
		assistantLine("sub_1", blocks(text("sidechain work")), obj{"isSidechain": true}),
		userLine("Caveat: meta", obj{"isMeta": true}),
		strings.TrimSuffix(assistantLine("msg_2", blocks(text("Fixed: x was undeclared."))), "\n") + "\r\n",
		userLine("<command-name>/clear</command-name>"),
		userLine("thanks, and now the tests", obj{"uuid": "p2"}),
		assistantLine("msg_3", "A reply given as a string."),
		assistantLine("msg_3", blocks(text("And a second block."))),
		jsonLine(obj{"type": "last-prompt", "lastPrompt": "thanks"}),
	}, "")
}

type transcriptCase struct {
	name string
	data []byte
}

func transcripts(t *testing.T) []transcriptCase {
	return []transcriptCase{
		{"session-1", readFixture(t, "session-1.jsonl")},
		{"session-2", readFixture(t, "session-2.jsonl")},
		{"grouped", []byte(groupedTranscript())},
	}
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

func TestGroupedTranscript(t *testing.T) {
	data := groupedTranscript()
	res := readString(t, data, 0, Options{})
	want := []brief{
		{Role: "user", Prompt: true, Blocks: []Block{{Kind: KindText, Text: "fix the build"}}},
		{Role: "assistant", MessageID: "msg_1", Blocks: []Block{
			{Kind: KindText, Text: "Let me look."},
			{Kind: KindToolUse, Tool: "Bash", ToolUseID: "toolu_1", Text: "go build ./..."},
			{Kind: KindToolUse, Tool: "Read", ToolUseID: "toolu_2", Text: "/p/main.go"},
		}},
		{Role: "user", Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_1", Text: "main.go:3: undefined: x", IsError: true}}},
		{Role: "user", Blocks: []Block{{Kind: KindToolResult, ToolUseID: "toolu_2", Text: "package main\n[image]"}}},
		{Role: "assistant", MessageID: "msg_2", Blocks: []Block{{Kind: KindText, Text: "Fixed: x was undeclared."}}},
		{Role: "user", Prompt: true, Blocks: []Block{{Kind: KindText, Text: "thanks, and now the tests"}}},
		{Role: "assistant", MessageID: "msg_3", Blocks: []Block{{Kind: KindText, Text: "A reply given as a string."}, {Kind: KindText, Text: "And a second block."}}},
	}
	if got := briefs(res.Messages); !reflect.DeepEqual(got, want) {
		t.Fatalf("messages:\n got %s\nwant %s", dump(got), dump(want))
	}
	// The group starts at its first line with something kept (the
	// thinking-only line before it contributes nothing) and ends after its
	// last line.
	lines := strings.SplitAfter(data, "\n")
	first := int64(len(strings.Join(lines[:4], "")))
	last := int64(len(strings.Join(lines[:9], "")))
	if g := res.Messages[1]; g.Offset != first || g.End != last {
		t.Errorf("msg_1: Offset=%d End=%d, want %d, %d", g.Offset, g.End, first, last)
	}
	if got := len(Turns(res.Messages)); got != 2 {
		t.Errorf("Turns: %d, want 2", got)
	}
}

// Reading from any line boundary gives the suffix of the whole read, except
// for the part of an assistant message whose first lines fall before it.
func TestReadFromEveryLineBoundary(t *testing.T) {
	for _, tc := range transcripts(t) {
		t.Run(tc.name, func(t *testing.T) {
			full, err := Read(bytes.NewReader(tc.data), 0, Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range lineStarts(tc.data) {
				res, err := Read(bytes.NewReader(tc.data[b:]), int64(b), Options{})
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, tc.data[b:], int64(b), Options{}, res)
				if res.End != full.End {
					t.Fatalf("from %d: End=%d, want %d", b, res.End, full.End)
				}
				var want []Message
				var cut *Message // the message the boundary falls inside, if any
				for i, m := range full.Messages {
					if m.Offset >= int64(b) {
						want = append(want, m)
					} else if m.End > int64(b) {
						cut = &full.Messages[i]
					}
				}
				got := res.Messages
				if cut != nil && len(got) > 0 && got[0].MessageID == cut.MessageID && got[0].End <= cut.End {
					got = got[1:]
				}
				if len(got) == 0 {
					got = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("from %d:\n got %s\nwant %s", b, dump(got), dump(want))
				}
			}
		})
	}
}

// Reading in two passes, the first stopping anywhere (as when Claude Code is
// still writing a line), loses and duplicates nothing.
func TestReadInTwoPasses(t *testing.T) {
	for _, tc := range transcripts(t) {
		t.Run(tc.name, func(t *testing.T) {
			full, err := Read(bytes.NewReader(tc.data), 0, Options{})
			if err != nil {
				t.Fatal(err)
			}
			// Every cut inside a line stops the first pass at the same
			// place: one cut at each line start and one just after it
			// cover all the cases.
			var cuts []int
			for _, b := range lineStarts(tc.data) {
				cuts = append(cuts, b, b+1)
			}
			for _, k := range cuts {
				if k < 0 || k > len(tc.data) {
					continue
				}
				r1 := readString(t, string(tc.data[:k]), 0, Options{})
				r2 := readString(t, string(tc.data[r1.End:]), r1.End, Options{})
				if r2.End != full.End || r1.Skipped+r2.Skipped != full.Skipped {
					t.Fatalf("split at %d: End=%d Skipped=%d+%d, want %d, %d", k, r2.End, r1.Skipped, r2.Skipped, full.End, full.Skipped)
				}
				if got := mergeMessages(r1.Messages, r2.Messages); !reflect.DeepEqual(got, full.Messages) {
					t.Fatalf("split at %d (first pass ended at %d):\n got %s\nwant %s", k, r1.End, dump(got), dump(full.Messages))
				}
				var n1, n2, nf int
				for _, m := range r1.Messages {
					n1 += len(m.Blocks)
				}
				for _, m := range r2.Messages {
					n2 += len(m.Blocks)
				}
				for _, m := range full.Messages {
					nf += len(m.Blocks)
				}
				if tc.name != "grouped" && n1+n2 != nf {
					t.Fatalf("split at %d: %d+%d blocks, want %d", k, n1, n2, nf)
				}
			}
		})
	}
}
