// Package episode holds engram's domain types for episodes: what one
// captured exchange became once extracted. It has no dependencies so that
// every layer (extractors, store, recall) can share it.
package episode

import (
	"slices"
	"time"
)

// Types of an episode.
const (
	TypePreference = "preference"
	TypeDecision   = "decision"
	TypeCorrection = "correction"
	TypeFact       = "fact"
	TypeProcedure  = "procedure"
	TypeEvent      = "event"
	TypeQuestion   = "question"
)

// Scopes of an episode or belief.
const (
	ScopeProject = "project"
	ScopeGlobal  = "global"
)

// Kinds of a Signal.
const (
	SignalPreference = "preference" // "I prefer X", "always X", "we use X for Y"
	SignalAvoid      = "avoid"      // "never X", "don't use X"
	SignalSwitch     = "switch"     // "switch from X to Y", "stop using X"
	SignalCorrection = "correction" // "no, …", "that's wrong", "actually …"
	SignalDecision   = "decision"   // "let's go with X", "we decided to X"
	SignalFact       = "fact"       // "our API runs on port 8080"
)

// Signal is one structured statement found in an exchange. Offline belief
// consolidation works from signals: the same preference stated in three
// episodes becomes a belief; its opposite contradicts it.
type Signal struct {
	Kind string `json:"kind"`
	// Text is the sentence the signal was found in (redacted, trimmed).
	Text string `json:"text"`
	// Subject is what the signal is about, normalised (lower case, e.g.
	// "table-driven tests", "testify", "bun"); Object is the other side of
	// a switch (the thing switched to) or the purpose in "X for Y".
	Subject string `json:"subject,omitempty"`
	Object  string `json:"object,omitempty"`
	// Polarity is +1 for "do / prefer", -1 for "don't / avoid".
	Polarity int `json:"polarity"`
	// Global is true when the statement is about the user in general
	// ("I always …", "in all my projects") rather than this project.
	Global bool `json:"global,omitempty"`
	// Stated is true when the user said it in so many words (the local
	// extractor's scan of the user's own text), as opposed to a signal
	// inferred from the assistant's side or by a model. A stated signal
	// becomes a belief at once (see package consolidate).
	Stated bool `json:"stated,omitempty"`
	// Tentative marks a correction (and the switch away it implies) that
	// the reading of the sentence alone is not sure of: it stands only
	// where the project's memory holds what it would retire (see package
	// consolidate); until then it counts for nothing (no kind, no
	// importance, no belief).
	Tentative bool `json:"tentative,omitempty"`
}

// Sure returns sigs without the tentative ones (Signal.Tentative).
func Sure(sigs []Signal) []Signal {
	tentative := func(s Signal) bool { return s.Tentative }
	if !slices.ContainsFunc(sigs, tentative) {
		return sigs
	}
	return slices.DeleteFunc(slices.Clone(sigs), tentative)
}

// Episode is one remembered exchange.
type Episode struct {
	ID             string    `json:"id"` // "ep_" + 12 hex
	Summary        string    `json:"summary"`
	Context        string    `json:"context"` // bounded full context
	Entities       []string  `json:"entities"`
	Signals        []Signal  `json:"signals"`
	Importance     float64   `json:"importance"` // 0..1
	Type           string    `json:"type"`
	Scope          string    `json:"scope"`
	Project        string    `json:"project"`
	ProjectPath    string    `json:"project_path"`
	SessionID      string    `json:"session_id"`
	SessionIDs     []string  `json:"session_ids"`
	ContentHash    string    `json:"content_hash"`
	Embedding      []float32 `json:"embedding,omitempty"`
	Embedder       string    `json:"embedder"`
	Extractor      string    `json:"extractor"`
	OccurredAt     time.Time `json:"occurred_at"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	AccessCount    int       `json:"access_count"`
	LastAccessedAt time.Time `json:"last_accessed_at,omitzero"`
	Stability      float64   `json:"stability"`
	Compressed     bool      `json:"compressed"`
	GraduatedAt    time.Time `json:"graduated_at,omitzero"`
	// Kind is what kind of memory it is (one of Kinds; "" before kinds
	// were kept). Speculative: the user hedged; it expires unless
	// confirmed. DueAt: the date a commitment names.
	Kind        string    `json:"memory_kind,omitempty"`
	Speculative bool      `json:"speculative,omitempty"`
	DueAt       time.Time `json:"due_at,omitzero"`
	// Lifecycle is "" for a live episode, LifecycleArchived or
	// LifecycleExpired for one kept out of recall and MEMORY.md (still
	// exported).
	Lifecycle string `json:"lifecycle,omitempty"`
}

// Lifecycle states of an episode out of recall.
const (
	LifecycleArchived = "archived"
	LifecycleExpired  = "expired"
	// LifecycleSuperseded: the user corrected what it said (another value
	// of the same fact or habit); kept for history, never recalled as
	// current.
	LifecycleSuperseded = "superseded"
)
