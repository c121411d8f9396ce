package share

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/redact"
)

// sharedEpisode is what leaves the machine of an episode: no vector (each
// machine embeds with its own embedder), no path (the space names the
// project), nothing of this machine's use of it (accesses, stability,
// MEMORY.md graduation).
type sharedEpisode struct {
	ID          string           `json:"id"`
	Summary     string           `json:"summary"`
	Context     string           `json:"context"`
	Entities    []string         `json:"entities"`
	Signals     []episode.Signal `json:"signals"`
	Importance  float64          `json:"importance"`
	Type        string           `json:"type"`
	Scope       string           `json:"scope"`
	SessionID   string           `json:"session_id"`
	SessionIDs  []string         `json:"session_ids"`
	ContentHash string           `json:"content_hash"`
	Extractor   string           `json:"extractor"`
	OccurredAt  int64            `json:"occurred_at"`
	CreatedAt   int64            `json:"created_at"`
	UpdatedAt   int64            `json:"updated_at"`
	Compressed  bool             `json:"compressed"`
	// Kind, Speculative and DueAt: what kind of memory it is and its
	// lifetime (absent in what older engrams pushed).
	Kind        string `json:"memory_kind,omitempty"`
	Speculative bool   `json:"speculative,omitempty"`
	DueAt       int64  `json:"due_at,omitempty"`
	// ProjectKey names a project episode's project (its space says it too,
	// except in a personal space).
	ProjectKey string `json:"project_key,omitempty"`
}

func toSharedEpisode(e *episode.Episode) sharedEpisode {
	return sharedEpisode{ID: e.ID, Summary: e.Summary, Context: e.Context, Entities: nonNil(e.Entities), Signals: nonNilSignals(e.Signals),
		Importance: e.Importance, Type: e.Type, Scope: e.Scope, SessionID: e.SessionID, SessionIDs: nonNil(e.SessionIDs),
		ContentHash: e.ContentHash, Extractor: e.Extractor, OccurredAt: msOf(e.OccurredAt), CreatedAt: msOf(e.CreatedAt),
		UpdatedAt: msOf(e.UpdatedAt), Compressed: e.Compressed, Kind: e.Kind, Speculative: e.Speculative, DueAt: msOf(e.DueAt)}
}

// episodeInto writes s's shared fields over e (a local copy or a new one),
// redacting the text again: nothing unredacted enters the store, whatever
// another machine sent.
func (s sharedEpisode) into(e *episode.Episode) {
	e.ID, e.Summary, e.Context = s.ID, red(s.Summary), red(s.Context)
	e.Entities = make([]string, len(s.Entities))
	for i, x := range s.Entities {
		e.Entities[i] = red(x)
	}
	e.Signals = make([]episode.Signal, len(s.Signals))
	for i, x := range s.Signals {
		x.Text, x.Subject, x.Object = red(x.Text), red(x.Subject), red(x.Object)
		e.Signals[i] = x
	}
	e.Importance, e.Type, e.Scope, e.SessionID, e.SessionIDs = s.Importance, s.Type, s.Scope, s.SessionID, nonNil(s.SessionIDs)
	e.ContentHash, e.Extractor, e.Compressed = s.ContentHash, s.Extractor, s.Compressed
	e.OccurredAt, e.CreatedAt, e.UpdatedAt = fromMS(s.OccurredAt), fromMS(s.CreatedAt), fromMS(s.UpdatedAt)
	if s.Kind != "" {
		e.Kind, e.Speculative, e.DueAt = s.Kind, s.Speculative, fromMS(s.DueAt)
	}
}

// joinEpisodes is the merge rule for episodes: the later version (by
// updated_at, then by content, so that two versions written in the same
// millisecond still pick one) wins whole. It is a maximum under a total
// order: every order of pushes and pulls ends on the same version.
func joinEpisodes(a, b sharedEpisode) sharedEpisode {
	if a.UpdatedAt != b.UpdatedAt {
		if a.UpdatedAt > b.UpdatedAt {
			return a
		}
		return b
	}
	ja, jb := mustJSON(a), mustJSON(b)
	if bytes.Compare(ja, jb) >= 0 {
		return a
	}
	return b
}

// sharedBelief is what leaves the machine of a belief besides its
// evidence: its statement and lifecycle. α, β, the evidence lists and the
// evidence count are not sent: every machine computes them from the
// evidence rows (see beliefFrom).
type sharedBelief struct {
	ID             string            `json:"id"`
	Statement      string            `json:"statement"`
	Subject        string            `json:"subject"`
	Predicate      string            `json:"predicate"`
	Context        string            `json:"context"`
	Timeframe      string            `json:"timeframe"`
	Scope          string            `json:"scope"`
	Status         string            `json:"status"`
	ParentID       string            `json:"parent_belief_id"`
	Children       []string          `json:"child_belief_ids"`
	Revisions      []belief.Revision `json:"revision_history"`
	CreatedAt      int64             `json:"created_at"`
	UpdatedAt      int64             `json:"updated_at"`
	LastReinforced int64             `json:"last_reinforced_at"`
	Kind           string            `json:"memory_kind,omitempty"`
	Speculative    bool              `json:"speculative,omitempty"`
	DueAt          int64             `json:"due_at,omitempty"`
	ProjectKey     string            `json:"project_key,omitempty"`
}

func toSharedBelief(b *belief.Belief) sharedBelief {
	revs := make([]belief.Revision, len(b.Revisions))
	for i, r := range b.Revisions {
		r.Timestamp = fromMS(msOf(r.Timestamp))
		revs[i] = r
	}
	return sharedBelief{ID: b.ID, Statement: b.Statement, Subject: b.Subject, Predicate: b.Predicate, Context: b.Context,
		Timeframe: b.Timeframe, Scope: b.Scope, Status: b.Status, ParentID: b.ParentID, Children: sortedSet(b.Children),
		Revisions: sortRevisions(revs), CreatedAt: msOf(b.CreatedAt), UpdatedAt: msOf(b.UpdatedAt), LastReinforced: msOf(b.LastReinforcedAt),
		Kind: b.Kind, Speculative: b.Speculative, DueAt: msOf(b.DueAt)}
}

// statusRank orders statuses: a belief retired anywhere (revised, split,
// merged) stays retired everywhere; archived comes before them.
func statusRank(s string) int {
	switch s {
	case belief.StatusActive:
		return 0
	case belief.StatusArchived, belief.StatusExpired:
		return 1
	}
	return 2
}

// core is the part of a belief whose version is chosen whole.
type beliefCore struct {
	Statement, Subject, Predicate, Context, Timeframe, Scope, Status, ParentID string
	UpdatedAt                                                                  int64
}

func (s sharedBelief) core() beliefCore {
	return beliefCore{s.Statement, s.Subject, s.Predicate, s.Context, s.Timeframe, s.Scope, s.Status, s.ParentID, s.UpdatedAt}
}

// coreLess orders cores: status rank, then updated_at, then content.
func coreLess(a, b beliefCore) bool {
	if ra, rb := statusRank(a.Status), statusRank(b.Status); ra != rb {
		return ra < rb
	}
	if a.UpdatedAt != b.UpdatedAt {
		return a.UpdatedAt < b.UpdatedAt
	}
	return bytes.Compare(mustJSON(a), mustJSON(b)) < 0
}

// joinBeliefs is the merge rule for a belief's statement and lifecycle:
// the core (statement, fields, status, timeframe, parent) of the greater
// version by (status rank, updated_at, content); children and revision
// entries are the union of both; created_at the earlier, last reinforced
// the later. Each part is a maximum or a union, so the join is
// commutative, associative and idempotent: any order converges.
func joinBeliefs(a, b sharedBelief) sharedBelief {
	out := a
	if coreLess(a.core(), b.core()) {
		out = b
	}
	out.Children = sortedSet(append(slices.Clone(a.Children), b.Children...))
	out.Revisions = sortRevisions(append(slices.Clone(a.Revisions), b.Revisions...))
	out.CreatedAt = minNonZero(a.CreatedAt, b.CreatedAt)
	out.LastReinforced = max(a.LastReinforced, b.LastReinforced)
	return out
}

// Evidence is one record of a shared belief's evidence: an episode that
// supports (+1), contradicts (-1) or partly fits (0) it, with the weight
// it counts for (belief.StatedWeight for an explicit statement, else 1).
type Evidence struct {
	Episode  string
	Polarity int
	Weight   float64
}

// localEvidence turns a local belief's lists into evidence records. The
// weights already on the server are kept (a record never changes once
// written); the new records of a list share what the belief's α (β) holds
// beyond the known ones: one each, and StatedWeight for the first ones as
// far as the remainder allows, so that a record pushed from here counts
// exactly what it counted here.
func localEvidence(b *belief.Belief, known map[string]Evidence) []Evidence {
	var out []Evidence
	add := func(list []string, pol int, param float64) {
		var fresh []string
		rest := param - 1
		for _, id := range list {
			if k, ok := known[id]; ok {
				if k.Polarity == pol {
					rest -= k.Weight
				}
				continue
			}
			if !slices.Contains(fresh, id) {
				fresh = append(fresh, id)
			}
		}
		if len(fresh) == 0 {
			return
		}
		ws := make([]float64, len(fresh))
		for i := range ws {
			ws[i] = 1
		}
		extra := rest - float64(len(fresh))
		for i := 0; i < len(ws) && extra >= belief.StatedWeight-1; i++ {
			ws[i] += belief.StatedWeight - 1
			extra -= belief.StatedWeight - 1
		}
		if extra > 0 && pol != 0 {
			ws[0] += extra
		}
		for i, id := range fresh {
			out = append(out, Evidence{Episode: id, Polarity: pol, Weight: ws[i]})
		}
	}
	add(b.Supporting, 1, b.Alpha)
	add(b.Contradicting, -1, b.Beta)
	add(b.Partial, 0, 1+float64(len(b.Partial)))
	return out
}

// beliefFrom builds the local belief from the shared version, the
// evidence (the server's rows, then this machine's records the server
// does not hold yet) and the local copy, if any, whose machine-local
// fields (vector, accesses, stability, promotion) it keeps.
//
// The merge rule for confidence: α = 1 + Σ weight of the supporting
// records, β = 1 + Σ weight of the contradicting ones, evidence count = Σ
// weight of both + the partial ones. The records are a set keyed by
// episode, each written once, so every machine that holds the same set
// computes the same α and β, whatever order the records arrived in.
func beliefFrom(s sharedBelief, ev []Evidence, local *belief.Belief, project, path string) belief.Belief {
	var b belief.Belief
	if local != nil {
		b = *local
	}
	b.ID, b.Statement, b.Subject, b.Predicate, b.Context = s.ID, red(s.Statement), red(s.Subject), red(s.Predicate), red(s.Context)
	b.Timeframe, b.Scope, b.Status, b.ParentID = s.Timeframe, s.Scope, s.Status, s.ParentID
	if s.Kind != "" {
		b.Kind, b.Speculative, b.DueAt = s.Kind, s.Speculative, fromMS(s.DueAt)
	} else if b.Kind == "" {
		// An older engram's push names no kind: as the store's migration
		// kinds the beliefs it finds.
		b.Kind = episode.KindFact
		if s.Predicate == "prefers" || s.Predicate == "avoids" {
			b.Kind = episode.KindPreference
		}
	}
	b.Children, b.Revisions = nonNil(s.Children), s.Revisions
	for i := range b.Revisions {
		b.Revisions[i].OldStatement = red(b.Revisions[i].OldStatement)
		b.Revisions[i].Reason = red(b.Revisions[i].Reason)
	}
	b.Project, b.ProjectPath = project, path
	b.CreatedAt, b.UpdatedAt = fromMS(s.CreatedAt), fromMS(s.UpdatedAt)
	if lr := fromMS(s.LastReinforced); lr.After(b.LastReinforcedAt) {
		b.LastReinforcedAt = lr
	}
	seen := map[string]bool{}
	b.Alpha, b.Beta, b.EvidenceCount = 1, 1, 0
	b.Supporting, b.Contradicting, b.Partial = []string{}, []string{}, []string{}
	sum := 0.0
	for _, e := range ev {
		if seen[e.Episode] {
			continue
		}
		seen[e.Episode] = true
		switch e.Polarity {
		case 1:
			b.Alpha += e.Weight
			b.Supporting = append(b.Supporting, e.Episode)
			sum += e.Weight
		case -1:
			b.Beta += e.Weight
			b.Contradicting = append(b.Contradicting, e.Episode)
			sum += e.Weight
		default:
			b.Partial = append(b.Partial, e.Episode)
			sum++
		}
	}
	b.EvidenceCount = int(math.Round(sum))
	if b.Stability <= 0 {
		b.Stability = 1
	}
	b.PeakConfidence = max(b.PeakConfidence, b.Confidence())
	return b
}

// sortEvidence puts records in a canonical order (the episode id).
func sortEvidence(ev []Evidence) {
	sort.Slice(ev, func(i, j int) bool { return ev[i].Episode < ev[j].Episode })
}

func sortRevisions(rs []belief.Revision) []belief.Revision {
	sort.SliceStable(rs, func(i, j int) bool {
		if !rs[i].Timestamp.Equal(rs[j].Timestamp) {
			return rs[i].Timestamp.Before(rs[j].Timestamp)
		}
		if rs[i].OldStatement != rs[j].OldStatement {
			return rs[i].OldStatement < rs[j].OldStatement
		}
		return rs[i].Reason < rs[j].Reason
	})
	out := rs[:0]
	for i, r := range rs {
		if i > 0 && r.Timestamp.Equal(out[len(out)-1].Timestamp) && r.OldStatement == out[len(out)-1].OldStatement &&
			r.Reason == out[len(out)-1].Reason {
			continue
		}
		out = append(out, r)
	}
	if out == nil {
		return []belief.Revision{}
	}
	return out
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		return []string{}
	}
	return out
}

func red(s string) string {
	if s == "" {
		return s
	}
	r, _ := redact.String(s)
	return r
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and numbers
	}
	return b
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func minNonZero(a, b int64) int64 {
	switch {
	case a == 0:
		return b
	case b == 0:
		return a
	}
	return min(a, b)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilSignals(s []episode.Signal) []episode.Signal {
	if s == nil {
		return []episode.Signal{}
	}
	return s
}

// Bounds on what a pull takes from the server: whoever can write the
// shared tables cannot make this machine store a malformed memory.
const (
	maxSummary = 4 << 10
	maxContext = 64 << 10
	maxWeight  = 10
)

var (
	episodeIDRe = regexp.MustCompile(`^ep_[0-9a-f]{12}$`)
	beliefIDRe  = regexp.MustCompile(`^bl_[0-9a-f]{12}$`)
	validTypes  = map[string]bool{episode.TypePreference: true, episode.TypeDecision: true, episode.TypeCorrection: true,
		episode.TypeFact: true, episode.TypeProcedure: true, episode.TypeEvent: true, episode.TypeQuestion: true}
	validStatus = map[string]bool{belief.StatusActive: true, belief.StatusRevised: true, belief.StatusMerged: true,
		belief.StatusSplit: true, belief.StatusArchived: true, belief.StatusExpired: true}
	validTimeframe = map[string]bool{belief.TimeCurrent: true, belief.TimePast: true, belief.TimeAlways: true}
)

// sane checks a pulled episode and brings its fields within bounds; false:
// not taken.
func (s *sharedEpisode) sane(id string) bool {
	if s.ID != id || !episodeIDRe.MatchString(id) || strings.TrimSpace(s.Summary) == "" || s.ContentHash == "" ||
		(s.Scope != episode.ScopeProject && s.Scope != episode.ScopeGlobal) {
		return false
	}
	if !validTypes[s.Type] {
		s.Type = episode.TypeEvent
	}
	if math.IsNaN(s.Importance) || s.Importance < 0 || s.Importance > 1 {
		s.Importance = 0.5
	}
	if !episode.ValidKind(s.Kind) {
		// An older engram's push names no kind: the one its type implies.
		s.Kind, s.Speculative, s.DueAt = episode.KindOfType(s.Type), false, 0
	}
	s.Summary, s.Context = clip(s.Summary, maxSummary), clip(s.Context, maxContext)
	if s.SessionID != "" && hookio.ValidSessionID(s.SessionID) != nil {
		s.SessionID = ""
	}
	ids := s.SessionIDs[:0]
	for _, id := range s.SessionIDs {
		if hookio.ValidSessionID(id) == nil {
			ids = append(ids, id)
		}
	}
	s.SessionIDs = ids
	return true
}

// sane checks a pulled belief the same way.
func (s *sharedBelief) sane(id string) bool {
	if s.ID != id || !beliefIDRe.MatchString(id) || strings.TrimSpace(s.Statement) == "" || !validStatus[s.Status] ||
		(s.Scope != episode.ScopeProject && s.Scope != episode.ScopeGlobal) {
		return false
	}
	if !validTimeframe[s.Timeframe] {
		s.Timeframe = belief.TimeCurrent
	}
	if s.Kind != "" && !episode.ValidKind(s.Kind) {
		s.Kind, s.Speculative, s.DueAt = "", false, 0
	}
	s.Statement = clip(s.Statement, maxSummary)
	return true
}

// saneEvidence drops records that name no episode or carry no usable weight.
func saneEvidence(ev []Evidence) []Evidence {
	out := ev[:0]
	for _, e := range ev {
		if !episodeIDRe.MatchString(e.Episode) || math.IsNaN(e.Weight) || math.IsInf(e.Weight, 0) || e.Weight <= 0 ||
			e.Polarity < -1 || e.Polarity > 1 {
			continue
		}
		e.Weight = min(e.Weight, maxWeight)
		out = append(out, e)
	}
	return out
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
