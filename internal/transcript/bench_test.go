package transcript

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// typicalTurn builds one turn the way Claude Code 2.1.330 writes it: the
// prompt, hook and environment attachments, the request blob carrying the
// system prompt, and a few tool calls with results of a few kilobytes.
func typicalTurn() []byte {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; \"quoted\" and\ttabbed.\n", 16)
	var b strings.Builder
	b.WriteString(jsonLine(obj{"type": "queue-operation", "operation": "enqueue", "content": "add a health endpoint"}))
	b.WriteString(userLine("please add a health endpoint and a test for it", obj{"promptId": "p", "permissionMode": "default", "version": "2.1.330", "gitBranch": "master"}))
	for i := 0; i < 6; i++ {
		b.WriteString(jsonLine(obj{"type": "attachment", "attachment": obj{"type": "skill_listing", "content": prose}, "rendered": []obj{{"content": prose}}}))
	}
	b.WriteString(jsonLine(obj{"type": "api-request-blob", "message": obj{"role": "system", "content": []obj{text(strings.Repeat(prose, 30))}}}))
	for i := 0; i < 4; i++ {
		id := fmt.Sprint("toolu_", i)
		b.WriteString(jsonLine(obj{"type": "api-request", "params": obj{"model": "m", "max_tokens": 128000}}))
		b.WriteString(assistantLine(fmt.Sprint("msg_", i), blocks(obj{"type": "thinking", "thinking": prose}, text("Let me check."),
			toolUse(id, "Bash", obj{"command": "go test ./...", "description": "Run the tests"}))))
		b.WriteString(userLine(blocks(toolResult(id, strings.Repeat(prose, 3), false)),
			obj{"toolUseResult": obj{"stdout": strings.Repeat(prose, 3), "stderr": ""}}))
	}
	b.WriteString(assistantLine("msg_end", blocks(text("Added /health with a table-driven test."))))
	b.WriteString(jsonLine(obj{"type": "cost-state", "totalCostUSD": 0.01}))
	return []byte(b.String())
}

// bigResultTurn is a turn whose one tool result is 5 MB, as when a command
// dumps a log.
func bigResultTurn() []byte {
	var b strings.Builder
	b.WriteString(userLine("show me the log"))
	b.WriteString(assistantLine("msg_1", blocks(toolUse("toolu_1", "Bash", obj{"command": "cat app.log"}))))
	log := strings.Repeat("2026-11-22T00:54:28Z INFO request served path=/health status=200 dur=1ms\n", 5<<20/72)
	b.WriteString(userLine(blocks(toolResult("toolu_1", log, false)), obj{"toolUseResult": obj{"stdout": "(elided)"}}))
	b.WriteString(assistantLine("msg_2", blocks(text("The log shows only healthy requests."))))
	return []byte(b.String())
}

func BenchmarkRead(b *testing.B) {
	for _, bc := range []struct {
		name string
		data func() []byte
	}{
		{"typical-turn", typicalTurn},
		{"fixture-session-1", func() []byte { return readFixture(b, "session-1.jsonl") }},
		{"tool-result-5MB", bigResultTurn},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := bc.data()
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				res, err := Read(bytes.NewReader(data), 0, Options{})
				if err != nil || len(res.Messages) == 0 {
					b.Fatalf("Read: %d messages, %v", len(res.Messages), err)
				}
			}
		})
	}
}
