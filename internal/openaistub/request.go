package openaistub

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Request is one request the stub received, decoded as far as the stub
// understands it. Body always holds the raw bytes.
type Request struct {
	Seq    int // 1-based order of arrival
	Method string
	Path   string
	Header http.Header
	Body   []byte

	// Authorization is the Authorization header ("" when the client sent
	// none, as go-openai does with an empty key).
	Authorization string
	Model         string

	// Chat completions.
	Messages       []Message
	ResponseFormat *ResponseFormat
	// Temperature is nil when the client did not send one.
	Temperature *float64
	// MaxTokens is max_tokens, MaxCompletionTokens max_completion_tokens
	// (0 when absent).
	MaxTokens           int
	MaxCompletionTokens int

	// Embeddings.
	Input          []string
	Dimensions     int
	EncodingFormat string
}

// Message is one chat message. Content is the text of a plain string
// content or the concatenated text parts of a multi-part content.
type Message struct {
	Role    string
	Content string
}

// ResponseFormat is the request's response_format.
type ResponseFormat struct {
	Type string // json_schema | json_object | text
	// For json_schema:
	Name   string
	Strict bool
	Schema json.RawMessage
}

// System returns the concatenated content of the system (and developer)
// messages.
func (r *Request) System() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// User returns the concatenated content of the user messages.
func (r *Request) User() string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "user" {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// Contains reports whether the raw body contains s, or any message does
// (message text is compared decoded, so quotes and newlines need no
// escaping).
func (r *Request) Contains(s string) bool {
	if strings.Contains(string(r.Body), s) {
		return true
	}
	for _, m := range r.Messages {
		if strings.Contains(m.Content, s) {
			return true
		}
	}
	for _, in := range r.Input {
		if strings.Contains(in, s) {
			return true
		}
	}
	return false
}

type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Input               json.RawMessage `json:"input"`
	Dimensions          int             `json:"dimensions"`
	EncodingFormat      string          `json:"encoding_format"`
}

// decode fills the decoded fields from Body.
func (r *Request) decode() error {
	r.Authorization = r.Header.Get("Authorization")
	var w wireRequest
	if err := json.Unmarshal(r.Body, &w); err != nil {
		return fmt.Errorf("request body is not JSON: %w", err)
	}
	r.Model = w.Model
	r.Temperature = w.Temperature
	r.MaxTokens = w.MaxTokens
	r.MaxCompletionTokens = w.MaxCompletionTokens
	r.Dimensions = w.Dimensions
	r.EncodingFormat = w.EncodingFormat
	for _, m := range w.Messages {
		text, err := contentText(m.Content)
		if err != nil {
			return fmt.Errorf("message %q: %w", m.Role, err)
		}
		r.Messages = append(r.Messages, Message{Role: m.Role, Content: text})
	}
	if rf := w.ResponseFormat; rf != nil {
		r.ResponseFormat = &ResponseFormat{Type: rf.Type}
		if js := rf.JSONSchema; js != nil {
			r.ResponseFormat.Name = js.Name
			r.ResponseFormat.Strict = js.Strict
			r.ResponseFormat.Schema = js.Schema
		}
	}
	if len(w.Input) > 0 {
		in, err := inputTexts(w.Input)
		if err != nil {
			return err
		}
		r.Input = in
	}
	return nil
}

// contentText reads a message content: a string, an array of parts, or null.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// inputTexts reads an embeddings input: a string or an array of strings.
// Token arrays are not supported.
func inputTexts(raw json.RawMessage) ([]string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, fmt.Errorf("input is neither a string nor an array of strings: %w", err)
	}
	return ss, nil
}
