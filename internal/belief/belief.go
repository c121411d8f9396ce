// Package belief holds engram's belief model: what one belief is, its
// Beta-Bernoulli confidence, and the formulas of its lifecycle (retrieval
// strength, spaced-repetition stability, destabilization threshold). It has
// no dependencies so that the store, recall and consolidation share it.
package belief

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Statuses of a belief.
const (
	StatusActive   = "active"
	StatusRevised  = "revised"
	StatusMerged   = "merged"
	StatusSplit    = "split"
	StatusArchived = "archived"
	// StatusExpired: a speculative belief never confirmed, or a
	// commitment past its date.
	StatusExpired = "expired"
)

// Timeframes of a belief.
const (
	TimeCurrent = "current"
	TimePast    = "past"
	TimeAlways  = "always"
)

// Revision is one entry of a belief's revision history.
type Revision struct {
	Timestamp     time.Time `json:"timestamp"`
	OldStatement  string    `json:"old_statement"`
	OldConfidence float64   `json:"old_confidence"`
	Reason        string    `json:"reason"`
}

// Belief is a generalisation over episodes with a confidence.
type Belief struct {
	ID        string `json:"id"` // "bl_" + 12 hex; revised or split beliefs get new ids
	Statement string `json:"statement"`
	Subject   string `json:"subject"`
	Predicate string `json:"predicate"`
	Context   string `json:"context"`
	Timeframe string `json:"timeframe"`
	// Alpha and Beta are the Beta-Bernoulli parameters (prior 1, 1).
	Alpha         float64    `json:"confidence_alpha"`
	Beta          float64    `json:"confidence_beta"`
	Scope         string     `json:"scope"`
	Project       string     `json:"project"`
	ProjectPath   string     `json:"project_path"`
	Supporting    []string   `json:"supporting_episodes"`
	Contradicting []string   `json:"contradicting_episodes"`
	Partial       []string   `json:"partial_episodes"`
	Revisions     []Revision `json:"revision_history"`
	ParentID      string     `json:"parent_belief_id"`
	Children      []string   `json:"child_belief_ids"`
	Embedding     []float32  `json:"embedding,omitempty"`
	Embedder      string     `json:"embedder"`
	Status        string     `json:"status"`
	// EvidenceCount is the storage strength: it only grows.
	EvidenceCount int     `json:"evidence_count"`
	Stability     float64 `json:"stability"`
	// PeakConfidence is the highest confidence reached, for the revision gate.
	PeakConfidence   float64   `json:"peak_confidence"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	LastReinforcedAt time.Time `json:"last_reinforced_at,omitzero"`
	LastAccessedAt   time.Time `json:"last_accessed_at,omitzero"`
	AccessCount      int       `json:"access_count"`
	PromotedAt       time.Time `json:"promoted_at,omitzero"`
	DemotedAt        time.Time `json:"demoted_at,omitzero"`
	// Kind is what kind of memory it is (episode.Kinds). Speculative: made
	// only from hedged episodes and not confirmed since. DueAt: the date
	// of a commitment.
	Kind        string    `json:"memory_kind,omitempty"`
	Speculative bool      `json:"speculative,omitempty"`
	DueAt       time.Time `json:"due_at,omitzero"`
	// Sources are the beliefs a meta-belief generalises (empty for any
	// other belief).
	Sources []string `json:"source_belief_ids,omitempty"`
}

// StatedWeight is the evidence one explicit statement counts as. A belief
// the user states in so many words ("never add emoji to commit
// messages", "this service deploys to Fly.io") is not a guess from
// behaviour: its episode counts as StatedWeight observations — α += 3 (β
// += 3 when it contradicts) and EvidenceCount += 3 — so that one statement
// gives Beta(4, 1), confidence 0.8, evidence 3: exactly what three
// inferred mentions give, the bar a belief formed by clustering must clear
// and the one promotion into MEMORY.md asks for. A later statement of the
// opposite brings it to 0.5 at once.
const StatedWeight = 3

// Confidence is the mean of Beta(α, β): α/(α+β).
func (b *Belief) Confidence() float64 { return Confidence(b.Alpha, b.Beta) }

// Confidence is α/(α+β), 0.5 for a degenerate prior.
func Confidence(alpha, beta float64) float64 {
	if alpha+beta <= 0 {
		return 0.5
	}
	return alpha / (alpha + beta)
}

// RetrievalStrength is exp(−hours since last access / (stability × 24)),
// 0.5 when never accessed (Bjork's retrieval strength).
func RetrievalStrength(lastAccess time.Time, stability float64, now time.Time) float64 {
	if lastAccess.IsZero() {
		return 0.5
	}
	if stability <= 0 {
		stability = 1
	}
	hours := math.Max(0, now.Sub(lastAccess).Hours())
	return math.Exp(-hours / (stability * 24))
}

// NextStability applies the spaced-repetition rule on a retrieval:
// min(stability × (1 + 0.1 × ln(1 + hours since last access / 24)), 365).
func NextStability(stability float64, lastAccess, now time.Time) float64 {
	if stability <= 0 {
		stability = 1
	}
	hours := 0.0
	if !lastAccess.IsZero() {
		hours = math.Max(0, now.Sub(lastAccess).Hours())
	}
	return math.Min(stability*(1+0.1*math.Log(1+hours/24)), 365)
}

// DestabilizationThreshold is 0.3 × ln(1 + evidence) × ln(1 + age in days):
// old, well-evidenced beliefs need a stronger prediction error to change.
func DestabilizationThreshold(evidence int, created, now time.Time) float64 {
	age := math.Max(0, now.Sub(created).Hours()/24)
	return 0.3 * math.Log(1+float64(max(evidence, 0))) * math.Log(1+age)
}

// Plain is what a belief reads as from its structured fields alone ("User
// prefers pnpm.", "Database is postgres.", "User is on macOS."): its
// statement once the words it was stated in are forgotten.
func Plain(subject, predicate, context string) string {
	var s string
	switch {
	case predicate == "is" && subject == "user":
		s = "user " + context
	case predicate == "is":
		s = subject + " is " + context
	case subject == "":
		s = "user " + predicate
	default:
		s = "user " + predicate + " " + subject
	}
	s = strings.Join(strings.Fields(s), " ")
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:] + "."
}
