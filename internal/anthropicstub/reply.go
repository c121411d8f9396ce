package anthropicstub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Reply is what the stand-in model answers to one request: optional text
// followed by optional tool calls. A reply with tool calls stops with
// "tool_use", so the client runs the tools and sends their results in the
// next request; otherwise it stops with "end_turn".
type Reply struct {
	Text     string
	ToolUses []ToolUse
}

// ToolUse is one tool call of a reply. Input is marshalled to JSON; a
// json.RawMessage is sent as is.
type ToolUse struct {
	Name  string
	Input any
}

// Text is a reply made of text only.
func Text(s string) Reply { return Reply{Text: s} }

// Call is a reply that calls one tool.
func Call(name string, input any) Reply {
	return Reply{ToolUses: []ToolUse{{Name: name, Input: input}}}
}

// LoadTools is a reply that calls ToolSearch to load deferred tools by
// name ("select:a,b"), as a model must before it calls an MCP tool in
// Claude Code 2.1.330; the client answers with tool_reference blocks (see
// Block.References).
func LoadTools(names ...string) Reply {
	return Call("ToolSearch", map[string]string{"query": "select:" + strings.Join(names, ",")})
}

// Bash is a reply that calls the Bash tool.
func Bash(command, description string) Reply {
	return Call("Bash", map[string]string{"command": command, "description": description})
}

// Write is a reply that calls the Write tool.
func Write(path, content string) Reply {
	return Call("Write", map[string]string{"file_path": path, "content": content})
}

// StopReason is "tool_use" when the reply calls tools, else "end_turn".
func (r Reply) StopReason() string {
	if len(r.ToolUses) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// block is a content block of a response, as the API returns it.
type block struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text,omitempty"`
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

type message struct {
	ID           string  `json:"id"`
	Type         string  `json:"type"`
	Role         string  `json:"role"`
	Model        string  `json:"model"`
	Content      []block `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        usage   `json:"usage"`
}

// blocks turns a reply into response content blocks, numbering tool calls
// with ids from nextID.
func (r Reply) blocks(nextID func(prefix string) string) ([]block, error) {
	var out []block
	if r.Text != "" || len(r.ToolUses) == 0 {
		t := r.Text
		out = append(out, block{Type: "text", Text: &t})
	}
	for _, tu := range r.ToolUses {
		var in json.RawMessage
		switch v := tu.Input.(type) {
		case json.RawMessage:
			in = v
		case nil:
			in = json.RawMessage("{}")
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("anthropicstub: marshal input of %s: %w", tu.Name, err)
			}
			in = b
		}
		out = append(out, block{Type: "tool_use", ID: nextID("toolu_"), Name: tu.Name, Input: in})
	}
	return out, nil
}

// outputTokens is a plausible token count: the API's usage numbers are
// only displayed and summed by the client.
func outputTokens(bs []block) int {
	n := 1
	for _, b := range bs {
		if b.Text != nil {
			n += len(*b.Text) / 4
		}
		n += len(b.Input) / 4
	}
	return n
}

// writeJSONMessage answers a non-streaming request.
func writeJSONMessage(w http.ResponseWriter, id, model string, bs []block, stop string, inTokens int) {
	m := message{ID: id, Type: "message", Role: "assistant", Model: model, Content: bs, StopReason: &stop,
		Usage: usage{InputTokens: inTokens, OutputTokens: outputTokens(bs)}}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(m)
}

// sseWriter writes server-sent events the way the Messages API frames
// them: "event: NAME\ndata: JSON\n\n", flushed after each event.
type sseWriter struct {
	w   http.ResponseWriter
	f   http.Flusher
	err error
}

func (s *sseWriter) event(name string, data any) {
	if s.err != nil {
		return
	}
	b, err := json.Marshal(data)
	if err != nil {
		s.err = err
		return
	}
	if _, err := fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		s.err = err
		return
	}
	if s.f != nil {
		s.f.Flush()
	}
}

// chunks splits s into up to n pieces of roughly equal size on rune
// boundaries, so that the client has to reassemble deltas.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	rs := []rune(s)
	if n > len(rs) {
		n = len(rs)
	}
	size := (len(rs) + n - 1) / n
	var out []string
	for i := 0; i < len(rs); i += size {
		j := min(i+size, len(rs))
		out = append(out, string(rs[i:j]))
	}
	return out
}

// writeStream answers a streaming request with the full event sequence:
// message_start, then per block content_block_start, deltas and
// content_block_stop, then message_delta and message_stop.
func writeStream(w http.ResponseWriter, id, model string, bs []block, stop string, inTokens int) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &sseWriter{w: w, f: f}

	start := message{ID: id, Type: "message", Role: "assistant", Model: model, Content: []block{},
		Usage: usage{InputTokens: inTokens, OutputTokens: 1}}
	s.event("message_start", map[string]any{"type": "message_start", "message": start})
	s.event("ping", map[string]any{"type": "ping"})
	for i, b := range bs {
		switch b.Type {
		case "text":
			empty := ""
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": block{Type: "text", Text: &empty}})
			for _, c := range chunks(*b.Text, 3) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "text_delta", "text": c}})
			}
		case "tool_use":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": block{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")}})
			for _, c := range chunks(string(b.Input), 3) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]string{"type": "input_json_delta", "partial_json": c}})
			}
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": outputTokens(bs)}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	return s.err
}

// estimateTokens is a rough input token count for usage and count_tokens.
func estimateTokens(body []byte) int {
	return len(body)/4 + 1
}

// errorBody is the API's error envelope.
func errorBody(kind, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": msg}}
}

func trimForLog(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
