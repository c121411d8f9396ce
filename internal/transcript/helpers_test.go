package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// obj is a JSON object under construction; json.Marshal sorts its keys, so
// the lines the tests build are deterministic.
type obj = map[string]any

// jsonLine renders v as one transcript line, newline included.
func jsonLine(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b) + "\n"
}

// userLine builds a main-chain user line; extra fields are merged in last.
func userLine(content any, extra ...obj) string {
	l := obj{
		"type": "user", "isSidechain": false, "uuid": "u-1",
		"timestamp": "2026-11-22T00:54:28.668Z", "cwd": "/home/dev/proj",
		"message": obj{"role": "user", "content": content},
	}
	for _, e := range extra {
		for k, v := range e {
			l[k] = v
		}
	}
	return jsonLine(l)
}

// assistantLine builds an assistant line of message id.
func assistantLine(id string, content any, extra ...obj) string {
	l := obj{
		"type": "assistant", "isSidechain": false, "uuid": "a-" + id,
		"timestamp": "2026-11-22T00:54:29.000Z", "cwd": "/home/dev/proj",
		"message": obj{"id": id, "role": "assistant", "type": "message", "content": content,
			"usage": obj{"input_tokens": 10}},
	}
	for _, e := range extra {
		for k, v := range e {
			l[k] = v
		}
	}
	return jsonLine(l)
}

func text(s string) obj { return obj{"type": "text", "text": s} }

func toolUse(id, name string, input any) obj {
	return obj{"type": "tool_use", "id": id, "name": name, "input": input}
}

func toolResult(id string, content any, isError bool) obj {
	return obj{"type": "tool_result", "tool_use_id": id, "content": content, "is_error": isError}
}

func blocks(b ...obj) []obj { return b }

func readString(t testing.TB, data string, start int64, opt Options) Result {
	t.Helper()
	res, err := Read(strings.NewReader(data), start, opt)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	checkResult(t, []byte(data), start, opt, res)
	return res
}

// checkResult asserts what must hold of any Result read from data at start.
func checkResult(t testing.TB, data []byte, start int64, opt Options, res Result) {
	t.Helper()
	opt = opt.withDefaults()
	n := res.End - start
	if n < 0 || n > int64(len(data)) {
		t.Fatalf("End=%d, want within [%d, %d]", res.End, start, start+int64(len(data)))
	}
	if n > 0 && data[n-1] != '\n' {
		t.Fatalf("End=%d is not just after a newline", res.End)
	}
	if i := bytes.IndexByte(data[n:], '\n'); i >= 0 {
		t.Fatalf("End=%d leaves a complete line unread (newline at %d)", res.End, start+n+int64(i))
	}
	prevEnd := start
	for i, m := range res.Messages {
		if m.Offset < prevEnd || m.Offset >= m.End || m.End > res.End {
			t.Fatalf("message %d: Offset=%d End=%d, previous End=%d, Result.End=%d", i, m.Offset, m.End, prevEnd, res.End)
		}
		if o := m.Offset - start; o > 0 && data[o-1] != '\n' {
			t.Fatalf("message %d: Offset=%d is not at a line start", i, m.Offset)
		}
		if data[m.End-start-1] != '\n' {
			t.Fatalf("message %d: End=%d is not just after a newline", i, m.End)
		}
		prevEnd = m.End
		if m.Role != "user" && m.Role != "assistant" {
			t.Fatalf("message %d: Role=%q", i, m.Role)
		}
		if len(m.Blocks) == 0 {
			t.Fatalf("message %d has no blocks", i)
		}
		for j, b := range m.Blocks {
			for _, s := range []string{b.Text, b.Tool, b.ToolUseID} {
				if !utf8.ValidString(s) {
					t.Fatalf("message %d block %d: invalid UTF-8 %q", i, j, s)
				}
			}
			switch b.Kind {
			case KindToolResult:
				if max := opt.MaxToolResult + len(truncMarker(len(data))); len(b.Text) > max {
					t.Fatalf("message %d block %d: tool result of %d bytes, want at most %d", i, j, len(b.Text), max)
				}
			case KindToolUse:
				if len(b.Text) > opt.MaxToolInput {
					t.Fatalf("message %d block %d: tool input of %d bytes, want at most %d", i, j, len(b.Text), opt.MaxToolInput)
				}
			case KindText:
				if b.Text == "" {
					t.Fatalf("message %d block %d: empty text", i, j)
				}
			default:
				t.Fatalf("message %d block %d: Kind=%q", i, j, b.Kind)
			}
		}
	}
}

// mergeMessages concatenates the messages of consecutive reads the way one
// read would have produced them.
func mergeMessages(parts ...[]Message) []Message {
	var out []Message
	for _, p := range parts {
		for _, m := range p {
			m.Blocks = append([]Block(nil), m.Blocks...)
			out = appendMessage(out, m)
		}
	}
	return out
}

// brief is a Message without the fields most tests do not care about.
type brief struct {
	Role      string
	Prompt    bool
	MessageID string
	Blocks    []Block
}

func briefs(msgs []Message) []brief {
	var out []brief
	for _, m := range msgs {
		out = append(out, brief{m.Role, m.Prompt, m.MessageID, m.Blocks})
	}
	return out
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
