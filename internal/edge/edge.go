// Package edge is the confidence lifecycle of the edges of the belief
// graph: what a new edge starts at, how observing it again reinforces it,
// how it decays while nothing does, and which edges recall still follows.
// It is arithmetic only: every time comes from the caller, so that the
// store, the worker's maintenance and the tests see the same numbers.
package edge

import (
	"math"
	"time"
)

// The lifecycle's values. Remnic's graph edge lifecycle (issue #681 of its
// repository) is where they come from; none is fitted on engram's data yet.
const (
	// Initial is a new edge's confidence. Remnic reads an edge without one
	// as 1.0, and engram's LinkDiscount (0.8) was set with every edge at
	// full weight, so a new link weighs what it weighed before edges had a
	// confidence; it only loses weight by decay.
	Initial = 1.0
	// ReinforceDelta is what one more observation of an edge adds to its
	// (decayed) confidence, capped at Ceiling: Remnic's
	// DEFAULT_REINFORCE_DELTA.
	ReinforceDelta = 0.05
	// Ceiling caps a confidence.
	Ceiling = 1.0
	// Grace is how long after its last reinforcement an edge keeps its
	// confidence: one Window, as Remnic's decay waits one window before the
	// first step.
	Grace = 90 * 24 * time.Hour
	// Window is the length of one decay step, and PerWindow what it takes
	// off: Remnic's DEFAULT_DECAY_WINDOW_MS (90 days) and
	// DEFAULT_DECAY_PER_WINDOW (0.1).
	Window    = 90 * 24 * time.Hour
	PerWindow = 0.1
	// Floor is the least confidence decay leaves an edge: Remnic's
	// DEFAULT_DECAY_FLOOR. It lies under PruneFloor, so an edge nothing
	// observed again for more than Grace + 8 windows (810 days) is no longer
	// followed, but it is kept, and observing it again raises it
	// (two observations bring a floored edge back to PruneFloor).
	Floor = 0.1
	// PruneFloor: recall does not follow an edge of less confidence than
	// this (Remnic's graphTraversalConfidenceFloor, 0.2).
	PruneFloor = 0.2
	// PageRankIterations and Damping are the refinement of recall's order
	// over the found beliefs and their neighbours: Remnic's
	// graphTraversalPageRankIterations (8) and the usual damping of
	// PageRank (0.85). On recall's subgraph (a few tens of nodes) 8
	// iterations cost about 7 µs (BenchmarkPageRank, 29 candidates), too
	// little beside the graph file's scans to be worth fewer.
	PageRankIterations = 8
	Damping            = 0.85
)

// State is an edge's place in the lifecycle: its confidence as the last
// decay left it, and its last reinforcement (the confidence it was given
// then, and when).
type State struct {
	Confidence           float64
	ReinforcedConfidence float64
	ReinforcedAt         time.Time
}

// New is the state of an edge first observed at at.
func New(at time.Time) State {
	return State{Confidence: Initial, ReinforcedConfidence: Initial, ReinforcedAt: at}
}

// Decayed is the confidence at now of an edge that had confidence base at
// its last reinforcement, at: base until Grace has passed (at the very
// end of it too), then PerWindow less for each Window begun since, never
// below Floor (nor above base: an edge already under Floor stays where it
// is). Remnic counts the same way: its first step comes just after the
// grace, its second just after one more window. It depends on base and at
// only, so applying it again at the same now changes nothing.
func Decayed(base float64, at, now time.Time) float64 {
	base = clamp(base)
	past := now.Sub(at) - Grace
	if past <= 0 {
		return base
	}
	windows := float64((past + Window - 1) / Window)
	return round(max(min(base, Floor), base-PerWindow*windows))
}

// Decay is s at now: its confidence decayed from its last reinforcement.
func (s State) Decay(now time.Time) State {
	s.Confidence = Decayed(s.ReinforcedConfidence, s.ReinforcedAt, now)
	return s
}

// Reinforce is s observed again at now: its confidence decayed to now
// plus ReinforceDelta, capped at Ceiling, and stamped now (or kept at a
// later reinforcement, for an observation that arrives late).
func (s State) Reinforce(now time.Time) State {
	c := round(min(Ceiling, Decayed(s.ReinforcedConfidence, s.ReinforcedAt, now)+ReinforceDelta))
	at := now
	if s.ReinforcedAt.After(now) {
		at = s.ReinforcedAt
	}
	return State{Confidence: c, ReinforcedConfidence: c, ReinforcedAt: at}
}

// Merge is the state of the one edge that two edges between the same
// beliefs become (a merged belief's edge handed to its survivor, an
// imported edge over a local one): the one of greater confidence, of a
// tie the later reinforced. Nothing is observed again: no reinforcement.
func Merge(a, b State) State {
	a, b = a.Clamped(), b.Clamped()
	if b.Confidence > a.Confidence || (b.Confidence == a.Confidence && b.ReinforcedAt.After(a.ReinforcedAt)) {
		return b
	}
	return a
}

// Clamped is s with its confidences in [0, Ceiling] (what a store may
// hold, whatever a file it imports says).
func (s State) Clamped() State {
	s.Confidence, s.ReinforcedConfidence = clamp(s.Confidence), clamp(s.ReinforcedConfidence)
	return s
}

// Followed reports whether recall follows an edge of confidence c.
func Followed(c float64) bool { return c >= PruneFloor }

// clamp keeps a confidence in [0, Ceiling]; NaN, which no edge should
// hold, reads as Initial.
func clamp(c float64) float64 {
	if math.IsNaN(c) {
		return Initial
	}
	return min(Ceiling, max(0, c))
}

// round keeps six decimals, so that 1 - 8×0.1 is 0.2 and not 0.19999…,
// which would fall under PruneFloor a window early.
func round(c float64) float64 { return math.Round(c*1e6) / 1e6 }
