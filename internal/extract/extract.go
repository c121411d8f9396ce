// Package extract turns a captured exchange into the draft of an episode:
// summary, entities, type, importance, scope and structured signals. Two
// extractors share the Extractor interface: Local (deterministic heuristics,
// the default, no network) and the LLM one (any OpenAI-compatible model).
package extract

import (
	"context"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// Block is one piece of a captured exchange, as stored in a capture's
// messages JSON.
type Block struct {
	Role      string `json:"role"` // user | assistant
	Kind      string `json:"kind"` // text | tool_use | tool_result
	Text      string `json:"text,omitempty"`
	Tool      string `json:"tool,omitempty"`
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
	// Origin is set on a user block the client wrote in the user's name
	// (transcript.Message.Origin): input, but not the user's own words.
	Origin string `json:"origin,omitempty"`
}

// Input is one capture to extract.
type Input struct {
	CaptureID   int64
	SessionID   string
	Project     string
	ProjectPath string
	TurnAt      time.Time
	Content     string  // the rendered, redacted exchange
	Blocks      []Block // the same, structured
}

// Draft is what an extractor found. Skip means the exchange holds nothing
// worth remembering ("yes", "thanks", an empty tool round-trip).
type Draft struct {
	Skip       bool
	Summary    string
	Context    string
	Entities   []string
	Signals    []episode.Signal
	Importance float64
	Type       string
	Scope      string // episode.ScopeProject or episode.ScopeGlobal
	// Kind (episode.Kinds), Speculative and DueAt: see episode.Classify.
	// An extractor that leaves Kind empty has it set by Classify.
	Kind        string
	Speculative bool
	DueAt       time.Time
}

// Classify sets d's kind, speculation and due date from its type, its
// signals and the user's words in in (episode.Classify), unless the
// extractor set a kind already.
func Classify(in Input, d *Draft) {
	if d.Kind != "" || d.Skip {
		return
	}
	blocks := in.Blocks
	if len(blocks) == 0 {
		blocks = parseContent(in.Content)
	}
	var user []string
	tools := false
	for _, b := range blocks {
		switch {
		case b.Role == "user" && b.Kind == "text":
			user = append(user, b.Text)
		case b.Kind == "tool_use":
			tools = true
		}
	}
	d.Kind, d.Speculative, d.DueAt = episode.Classify(d.Type, d.Signals, user, in.TurnAt, tools)
}

// Extractor turns an Input into a Draft.
type Extractor interface {
	// Name identifies the extractor in stored episodes and status ("local",
	// "llm:<model>").
	Name() string
	Extract(ctx context.Context, in Input) (Draft, error)
}

// MaxContext bounds an episode's full context.
const MaxContext = 4000
