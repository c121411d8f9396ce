package anthropicstub

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Request is one HTTP request the stub received, with the Messages API body
// decoded where there is one. Body is kept verbatim so that a test can
// assert exactly what reached the model.
type Request struct {
	Seq    int // 1-based order of arrival
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte

	// Decoded fields of a /v1/messages or /v1/messages/count_tokens body.
	Model     string
	MaxTokens int
	Stream    bool
	System    string // every system text block, joined by "\n"
	Messages  []Message
	Tools     []Tool

	// Aux is true for a /v1/messages request that is not part of the main
	// conversation (title generation, quota probes, …): it is answered by
	// the auxiliary responder and never reaches the script.
	Aux bool
}

// Message is one message of a request's conversation.
type Message struct {
	Role    string
	Content []Block
}

// Block is one content block of a message. Content of a tool_result is
// flattened to its text.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"-"`
	IsError   bool            `json:"is_error,omitempty"`
	// ToolName is a tool_reference block's tool: what ToolSearch loads.
	ToolName string `json:"tool_name,omitempty"`
	// References lists the tools a tool_result refers to (its
	// tool_reference blocks): a ToolSearch result names the deferred tools
	// it loaded this way.
	References []string `json:"-"`
}

// Tool is one tool offered to the model.
type Tool struct {
	Name string `json:"name"`
	Type string `json:"type,omitempty"`
}

// HasTool reports whether the request offers a tool of that name.
func (r *Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// Contains reports whether s occurs in the raw body, either verbatim or as
// it would appear inside a JSON string (quotes, newlines and non-ASCII
// characters escaped).
func (r *Request) Contains(s string) bool {
	if s == "" {
		return true
	}
	if strings.Contains(string(r.Body), s) {
		return true
	}
	q, err := json.Marshal(s)
	if err != nil {
		return false
	}
	esc := string(q[1 : len(q)-1])
	return esc != s && strings.Contains(string(r.Body), esc)
}

// promptIndex is the index of the message that opened the current turn:
// the last user message that carries no tool_result. It is -1 when there
// is none.
func (r *Request) promptIndex() int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "user" && !m.hasToolResult() {
			return i
		}
	}
	return -1
}

// Prompt returns the text of the message that opened the current turn
// (the user's prompt plus whatever the client attached to it, such as
// system reminders and hook context), or "" if there is none.
func (r *Request) Prompt() string {
	i := r.promptIndex()
	if i < 0 {
		return ""
	}
	return r.Messages[i].Text()
}

// ToolRounds counts the tool_result messages since the current turn's
// prompt: how many tool steps of this turn the client has completed.
func (r *Request) ToolRounds() int {
	i := r.promptIndex()
	if i < 0 {
		return 0
	}
	n := 0
	for _, m := range r.Messages[i+1:] {
		if m.Role == "user" && m.hasToolResult() {
			n++
		}
	}
	return n
}

// LastToolResults returns the tool_result blocks of the last message, if it
// is a tool_result message.
func (r *Request) LastToolResults() []Block {
	if len(r.Messages) == 0 {
		return nil
	}
	var out []Block
	for _, b := range r.Messages[len(r.Messages)-1].Content {
		if b.Type == "tool_result" {
			out = append(out, b)
		}
	}
	return out
}

// LoadedTools lists the tools that tool_result blocks of the conversation
// refer to: the deferred tools (MCP tools, in Claude Code 2.1.330) that
// ToolSearch has loaded so far, in order.
func (r *Request) LoadedTools() []string {
	var out []string
	for _, m := range r.Messages {
		for _, b := range m.Content {
			out = append(out, b.References...)
		}
	}
	return out
}

// Text joins the text blocks of a message.
func (m Message) Text() string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (m Message) hasToolResult() bool {
	for _, b := range m.Content {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

// wireRequest is the subset of a Messages API body the stub decodes.
type wireRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []Tool `json:"tools"`
}

type wireBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	ToolName  string          `json:"tool_name"`
}

// decode fills the decoded fields from r.Body. Bodies that are not a
// Messages API request leave them empty.
func (r *Request) decode() error {
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return err
	}
	r.Model, r.MaxTokens, r.Stream, r.Tools = w.Model, w.MaxTokens, w.Stream, w.Tools
	sys, err := decodeContent(w.System)
	if err != nil {
		return err
	}
	var texts []string
	for _, b := range sys {
		texts = append(texts, b.Text)
	}
	r.System = strings.Join(texts, "\n")
	for _, m := range w.Messages {
		blocks, err := decodeContent(m.Content)
		if err != nil {
			return err
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: blocks})
	}
	return nil
}

// decodeContent accepts the two shapes of content: a plain string, or an
// array of blocks.
func decodeContent(raw json.RawMessage) ([]Block, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []Block{{Type: "text", Text: s}}, nil
	}
	var ws []wireBlock
	if err := json.Unmarshal(raw, &ws); err != nil {
		return nil, err
	}
	out := make([]Block, 0, len(ws))
	for _, w := range ws {
		b := Block{Type: w.Type, Text: w.Text, ID: w.ID, Name: w.Name, Input: w.Input,
			ToolUseID: w.ToolUseID, IsError: w.IsError, ToolName: w.ToolName}
		if w.Type == "tool_result" {
			inner, err := decodeContent(w.Content)
			if err != nil {
				return nil, err
			}
			var texts []string
			for _, ib := range inner {
				switch ib.Type {
				case "text":
					texts = append(texts, ib.Text)
				case "tool_reference":
					b.References = append(b.References, ib.ToolName)
				}
			}
			b.Content = strings.Join(texts, "\n")
		}
		out = append(out, b)
	}
	return out, nil
}
