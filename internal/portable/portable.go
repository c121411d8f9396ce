// Package portable owns engram's export format: JSON Lines, one record per
// line, each an object with a "kind" ("episode", "belief", "event": one
// change in a memory's history, "link": one belief's link to a related one,
// "level": a belief's review level) and the record's fields. Export then import round-trips exactly, except for what
// records which MEMORY.md files show a memory (an episode's graduated_at, a
// belief's promoted_at and demoted_at): that is a fact about one machine's
// files, not about the memory, so export leaves it out and import drops it,
// and the first cycle after an import writes every MEMORY.md the imported
// memories call for. Import validates every record first and stores
// nothing from a file with a bad line; then it merges the file into the
// store (see merge.go): what is new is added, what the store already has
// is skipped, a record that differs is merged by the rules sharing uses.
package portable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Record kinds.
const (
	KindEpisode = "episode"
	KindBelief  = "belief"
	KindEvent   = "event"
	KindLink    = "link"
	// KindLevel is a belief's review level (see internal/review): a denied
	// belief stays denied, a pinned one pinned, on the machine an export
	// goes to.
	KindLevel = "level"
)

type levelRecord struct {
	Kind string `json:"kind"`
	store.LevelRecord
}

// linkRecord is a link with its place in the edge lifecycle (package
// edge): its confidence, and its last reinforcement. A file written before
// links had them has none of the three: such a link has full confidence,
// reinforced when it was made, as the store's migration gave its own.
type linkRecord struct {
	Kind                 string     `json:"kind"`
	From                 string     `json:"from"`
	To                   string     `json:"to"`
	Similarity           float64    `json:"similarity"`
	At                   time.Time  `json:"at"`
	Confidence           *float64   `json:"confidence,omitempty"`
	ReinforcedConfidence *float64   `json:"reinforced_confidence,omitempty"`
	ReinforcedAt         *time.Time `json:"reinforced_at,omitempty"`
}

func toLinkRecord(l store.Link) linkRecord {
	r := linkRecord{Kind: KindLink, From: l.From, To: l.To, Similarity: l.Similarity, At: l.At,
		Confidence: &l.Confidence, ReinforcedConfidence: &l.ReinforcedConfidence}
	if !l.ReinforcedAt.IsZero() {
		r.ReinforcedAt = &l.ReinforcedAt
	}
	return r
}

// link is the record's link, what it lacks filled in as for a legacy link.
func (r linkRecord) link() store.Link {
	l := store.NewLink(r.From, r.To, r.Similarity, r.At)
	l.Confidence = 1
	if r.Confidence != nil {
		l.Confidence = *r.Confidence
	}
	l.ReinforcedConfidence = l.Confidence
	if r.ReinforcedConfidence != nil {
		l.ReinforcedConfidence = *r.ReinforcedConfidence
	}
	if r.ReinforcedAt != nil {
		l.ReinforcedAt = *r.ReinforcedAt
	}
	return l
}

// confidenceOK: absent, or a number in [0, 1].
func confidenceOK(c *float64) bool { return c == nil || (!math.IsNaN(*c) && *c >= 0 && *c <= 1) }

type eventRecord struct {
	Kind string `json:"kind"`
	store.Event
}

type episodeRecord struct {
	Kind string `json:"kind"`
	episode.Episode
}

type beliefRecord struct {
	Kind string `json:"kind"`
	belief.Belief
}

// Data is the content of an export.
type Data struct {
	Episodes []episode.Episode
	Beliefs  []belief.Belief
	Events   []store.Event
	Links    []store.Link
	Levels   []store.LevelRecord
}

// Export writes every episode, then every belief, then every history
// event, then every link (each direction a record), to w and returns how
// many records it wrote.
func Export(ctx context.Context, db *store.DB, w io.Writer) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := db.EachEpisode(ctx, func(e episode.Episode) error {
		n++
		return enc.Encode(episodeRecord{Kind: KindEpisode, Episode: machineFree(e)})
	})
	if err != nil {
		return n, err
	}
	err = db.EachBelief(ctx, func(b belief.Belief) error {
		n++
		return enc.Encode(beliefRecord{Kind: KindBelief, Belief: machineFreeBelief(b)})
	})
	if err != nil {
		return n, err
	}
	err = db.EachEvent(ctx, func(ev store.Event) error {
		n++
		return enc.Encode(eventRecord{Kind: KindEvent, Event: ev})
	})
	if err != nil {
		return n, err
	}
	links, err := db.AllLinks(ctx)
	if err != nil {
		return n, err
	}
	for _, l := range links {
		n++
		if err := enc.Encode(toLinkRecord(l)); err != nil {
			return n, err
		}
	}
	levels, err := db.LevelRecords(ctx)
	if err != nil {
		return n, err
	}
	for _, l := range levels {
		n++
		if err := enc.Encode(levelRecord{Kind: KindLevel, LevelRecord: l}); err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

// machineFree drops from an episode when it was written to this machine's
// global MEMORY.md: on another machine, or in a new home, it was not.
func machineFree(e episode.Episode) episode.Episode {
	e.GraduatedAt = time.Time{}
	return e
}

// machineFreeBelief drops from a belief when it was shown in, or demoted
// from, a MEMORY.md of this machine.
func machineFreeBelief(b belief.Belief) belief.Belief {
	b.PromotedAt, b.DemotedAt = time.Time{}, time.Time{}
	return b
}

// LineError is a bad record, with its 1-based line number.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// MaxLine bounds one record.
const MaxLine = 64 << 20

var episodeIDRe = regexp.MustCompile(`^ep_[0-9a-f]{12}$`)

// Read parses and validates a whole export. It returns the first bad line
// as a *LineError; nothing is returned for a file with any bad line.
func Read(r io.Reader) (Data, error) {
	d, _, err := read(r)
	return d, err
}

// read also returns the line of each record: episodes first, then beliefs.
func read(r io.Reader) (Data, []int, error) {
	var d Data
	var epLines, blLines, evLines, lkLines, lvLines []int
	br := bufio.NewReaderSize(r, 1<<16)
	seenID := map[string]int{}
	done := func() (Data, []int, error) {
		for i, l := range d.Levels {
			if _, ok := seenID[l.BeliefID]; !ok || !strings.HasPrefix(l.BeliefID, "bl_") {
				return Data{}, nil, &LineError{lvLines[i], fmt.Errorf("level of belief %s: no such belief in the file", l.BeliefID)}
			}
		}
		return d, slices.Concat(epLines, blLines, evLines, lkLines, lvLines), nil
	}
	seenLevel := map[string]int{}
	seenHash := map[string]int{}
	dims := map[string]int{}
	for line := 1; ; line++ {
		data, rerr := readLine(br)
		if errors.Is(rerr, io.EOF) && len(data) == 0 {
			break
		}
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return Data{}, nil, &LineError{line, rerr}
		}
		if strings.TrimSpace(string(data)) == "" {
			continue
		}
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(data, &head); err != nil {
			return Data{}, nil, &LineError{line, fmt.Errorf("not a JSON object: %v", err)}
		}
		switch head.Kind {
		case KindLink:
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			var rec linkRecord
			if err := dec.Decode(&rec); err != nil {
				return Data{}, nil, &LineError{line, err}
			}
			if !beliefIDRe.MatchString(rec.From) || !beliefIDRe.MatchString(rec.To) {
				return Data{}, nil, &LineError{line, fmt.Errorf("link %q → %q: want two belief ids (bl_ and 12 hex digits)", rec.From, rec.To)}
			}
			if math.IsNaN(rec.Similarity) || rec.Similarity < -1 || rec.Similarity > 1 {
				return Data{}, nil, &LineError{line, fmt.Errorf("link %s → %s: similarity %v: want -1..1", rec.From, rec.To, rec.Similarity)}
			}
			if !confidenceOK(rec.Confidence) || !confidenceOK(rec.ReinforcedConfidence) {
				return Data{}, nil, &LineError{line, fmt.Errorf("link %s → %s: confidence: want 0..1", rec.From, rec.To)}
			}
			d.Links = append(d.Links, rec.link())
			lkLines = append(lkLines, line)
			if errors.Is(rerr, io.EOF) {
				return done()
			}
			continue
		case KindLevel:
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			var rec levelRecord
			err := dec.Decode(&rec)
			if err == nil {
				err = validateLevel(rec.LevelRecord)
			}
			if prev, ok := seenLevel[rec.BeliefID]; ok && err == nil {
				err = fmt.Errorf("level of belief %s repeats line %d", rec.BeliefID, prev)
			}
			if err != nil {
				return Data{}, nil, &LineError{line, err}
			}
			seenLevel[rec.BeliefID] = line
			d.Levels = append(d.Levels, rec.LevelRecord)
			lvLines = append(lvLines, line)
			if errors.Is(rerr, io.EOF) {
				return done()
			}
			continue
		case KindEvent:
			dec := json.NewDecoder(strings.NewReader(string(data)))
			dec.DisallowUnknownFields()
			var rec eventRecord
			if err := dec.Decode(&rec); err != nil {
				return Data{}, nil, &LineError{line, err}
			}
			if err := validateEvent(rec.Event); err != nil {
				return Data{}, nil, &LineError{line, err}
			}
			d.Events = append(d.Events, rec.Event)
			evLines = append(evLines, line)
			if errors.Is(rerr, io.EOF) {
				return done()
			}
			continue
		case KindEpisode:
		case KindBelief:
			b, err := decodeBelief(data)
			if err == nil {
				err = validateBelief(b)
			}
			if err == nil {
				if prev, ok := seenID[b.ID]; ok {
					err = fmt.Errorf("id %s repeats line %d", b.ID, prev)
				}
			}
			if err != nil {
				return Data{}, nil, &LineError{line, err}
			}
			seenID[b.ID] = line
			d.Beliefs = append(d.Beliefs, machineFreeBelief(b))
			blLines = append(blLines, line)
			if errors.Is(rerr, io.EOF) {
				return done()
			}
			continue
		default:
			return Data{}, nil, &LineError{line, fmt.Errorf("unknown kind %q", head.Kind)}
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		var rec episodeRecord
		if err := dec.Decode(&rec); err != nil {
			return Data{}, nil, &LineError{line, err}
		}
		e := rec.Episode
		if err := validate(e); err != nil {
			return Data{}, nil, &LineError{line, err}
		}
		if prev, ok := seenID[e.ID]; ok {
			return Data{}, nil, &LineError{line, fmt.Errorf("id %s repeats line %d", e.ID, prev)}
		}
		if prev, ok := seenHash[e.ContentHash]; ok {
			return Data{}, nil, &LineError{line, fmt.Errorf("content_hash %s repeats line %d", e.ContentHash, prev)}
		}
		if len(e.Embedding) > 0 {
			if d, ok := dims[e.Embedder]; ok && d != len(e.Embedding) {
				return Data{}, nil, &LineError{line, fmt.Errorf("embedding of %d dimensions, earlier %s vectors have %d", len(e.Embedding), e.Embedder, d)}
			}
			dims[e.Embedder] = len(e.Embedding)
		}
		seenID[e.ID], seenHash[e.ContentHash] = line, line
		d.Episodes = append(d.Episodes, machineFree(e))
		epLines = append(epLines, line)
		if errors.Is(rerr, io.EOF) {
			break
		}
	}
	return done()
}

var validLevel = map[string]bool{store.LevelPending: true, store.LevelLongTerm: true, store.LevelCore: true,
	store.LevelDenied: true, store.LevelPinned: true}

var validTarget = map[string]bool{"": true, "claude": true, "agents": true, "both": true}

func validateLevel(l store.LevelRecord) error {
	switch {
	case !beliefIDRe.MatchString(l.BeliefID):
		return fmt.Errorf("belief_id %q: want bl_ and 12 hex digits", l.BeliefID)
	case !validLevel[l.Level]:
		return fmt.Errorf("level of belief %s: %q is not one of pending, long_term, core, denied, pinned", l.BeliefID, l.Level)
	case !validTarget[l.CoreTarget]:
		return fmt.Errorf("level of belief %s: core_target %q: want claude, agents or both", l.BeliefID, l.CoreTarget)
	}
	return nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return nil, fmt.Errorf("longer than %d bytes", MaxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, err
	}
}

var validTypes = map[string]bool{
	episode.TypePreference: true, episode.TypeDecision: true, episode.TypeCorrection: true, episode.TypeFact: true,
	episode.TypeProcedure: true, episode.TypeEvent: true, episode.TypeQuestion: true,
}

func validate(e episode.Episode) error {
	switch {
	case !episodeIDRe.MatchString(e.ID):
		return fmt.Errorf("id %q: want ep_ and 12 hex digits", e.ID)
	case strings.TrimSpace(e.Summary) == "":
		return fmt.Errorf("episode %s: empty summary", e.ID)
	case !validTypes[e.Type]:
		return fmt.Errorf("episode %s: type %q is not one of preference, decision, correction, fact, procedure, event, question", e.ID, e.Type)
	case e.Scope != episode.ScopeProject && e.Scope != episode.ScopeGlobal:
		return fmt.Errorf("episode %s: scope %q: want project or global", e.ID, e.Scope)
	case math.IsNaN(e.Importance) || e.Importance < 0 || e.Importance > 1:
		return fmt.Errorf("episode %s: importance %v: want 0..1", e.ID, e.Importance)
	case e.Kind != "" && !episode.ValidKind(e.Kind):
		return fmt.Errorf("episode %s: kind %q is not one of %s", e.ID, e.Kind, strings.Join(episode.Kinds, ", "))
	case e.Lifecycle != "" && e.Lifecycle != episode.LifecycleArchived && e.Lifecycle != episode.LifecycleExpired &&
		e.Lifecycle != episode.LifecycleSuperseded:
		return fmt.Errorf("episode %s: lifecycle %q: want archived, expired or none", e.ID, e.Lifecycle)
	case e.ContentHash == "":
		return fmt.Errorf("episode %s: empty content_hash", e.ID)
	case e.CreatedAt.IsZero():
		return fmt.Errorf("episode %s: missing created_at", e.ID)
	case len(e.Embedding) > 0 && e.Embedder == "":
		return fmt.Errorf("episode %s: embedding without embedder", e.ID)
	case e.AccessCount < 0 || e.Stability < 0:
		return fmt.Errorf("episode %s: negative access_count or stability", e.ID)
	}
	for _, f := range e.Embedding {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return fmt.Errorf("episode %s: embedding holds %v", e.ID, f)
		}
	}
	return nil
}

var beliefIDRe = regexp.MustCompile(`^bl_[0-9a-f]{12}$`)

func decodeBelief(data []byte) (belief.Belief, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var rec beliefRecord
	err := dec.Decode(&rec)
	return rec.Belief, err
}

var validStatus = map[string]bool{belief.StatusActive: true, belief.StatusRevised: true, belief.StatusMerged: true,
	belief.StatusSplit: true, belief.StatusArchived: true, belief.StatusExpired: true}

var validTimeframe = map[string]bool{belief.TimeCurrent: true, belief.TimePast: true, belief.TimeAlways: true}

func validateBelief(b belief.Belief) error {
	switch {
	case !beliefIDRe.MatchString(b.ID):
		return fmt.Errorf("id %q: want bl_ and 12 hex digits", b.ID)
	case strings.TrimSpace(b.Statement) == "":
		return fmt.Errorf("belief %s: empty statement", b.ID)
	case !validStatus[b.Status]:
		return fmt.Errorf("belief %s: status %q is not one of active, revised, merged, split, archived, expired", b.ID, b.Status)
	case b.Kind != "" && !episode.ValidKind(b.Kind):
		return fmt.Errorf("belief %s: kind %q is not one of %s", b.ID, b.Kind, strings.Join(episode.Kinds, ", "))
	case !validTimeframe[b.Timeframe]:
		return fmt.Errorf("belief %s: timeframe %q is not one of current, past, always", b.ID, b.Timeframe)
	case b.Scope != episode.ScopeProject && b.Scope != episode.ScopeGlobal:
		return fmt.Errorf("belief %s: scope %q: want project or global", b.ID, b.Scope)
	case !(b.Alpha > 0) || !(b.Beta > 0) || math.IsInf(b.Alpha, 0) || math.IsInf(b.Beta, 0):
		return fmt.Errorf("belief %s: confidence_alpha %v and confidence_beta %v must be positive", b.ID, b.Alpha, b.Beta)
	case b.EvidenceCount < 0 || b.AccessCount < 0 || b.Stability < 0:
		return fmt.Errorf("belief %s: negative evidence_count, access_count or stability", b.ID)
	case b.CreatedAt.IsZero():
		return fmt.Errorf("belief %s: missing created_at", b.ID)
	case len(b.Embedding) > 0 && b.Embedder == "":
		return fmt.Errorf("belief %s: embedding without embedder", b.ID)
	}
	return nil
}

func validateEvent(ev store.Event) error {
	switch {
	case !store.MemoryIDRe.MatchString(ev.MemoryID):
		return fmt.Errorf("event: memory_id %q: want ep_… or bl_… and 12 hex digits", ev.MemoryID)
	case !store.ValidAction(ev.Action):
		return fmt.Errorf("event of %s: action %q is not one of %s", ev.MemoryID, ev.Action, strings.Join(store.Actions, ", "))
	case ev.At.IsZero():
		return fmt.Errorf("event of %s: missing at", ev.MemoryID)
	}
	return nil
}
