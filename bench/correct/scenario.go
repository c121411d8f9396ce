package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Kinds of scenario.
const (
	KindCorrection = "correction" // the change session corrects the slot: the new value must replace the old
	KindNearMiss   = "near-miss"  // the change session mentions the old value without correcting it: nothing may be retired
)

// Tool is a tool call the assistant makes before its reply: an assistant
// tool_use line and the user line with its result.
type Tool struct {
	Name   string         `json:"name"`
	Input  map[string]any `json:"input"`
	Result string         `json:"result"`
}

// Turn is one prompt of the user, the tool calls it led to, and the reply.
type Turn struct {
	User  string `json:"user"`
	Tools []Tool `json:"tools,omitempty"`
	Reply string `json:"reply"`
}

// Session is one Claude Code session: its turns, in order.
type Session []Turn

// Other is a second slot of the same project, stated in the earlier
// sessions and never corrected: what a correction must leave alone.
type Other struct {
	Slot     string   `json:"slot"`
	Question string   `json:"question"`
	Value    []string `json:"value"` // spellings of the value, any of which counts
}

// Scope is another project that states the same old value and is never
// corrected: a correction in the scenario's project must not reach it.
type Scope struct {
	Project  string    `json:"project"`
	Earlier  []Session `json:"earlier"`
	Question string    `json:"question"`
}

// Scenario is one slot stated, then corrected (or only mentioned), then
// asked about.
type Scenario struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Family  string `json:"family"` // the wording family of the change
	Project string `json:"project"`
	Slot    string `json:"slot"`
	// Earlier sessions state the old value (one to three times) and the
	// other slot, one session a week apart.
	Earlier []Session `json:"earlier"`
	// Change is the session that corrects the slot (or, for a near-miss,
	// mentions the old value without correcting it), days after the last
	// earlier session.
	Change   Session `json:"change"`
	Question string  `json:"question"`
	// New and Old are the spellings of the new and old values
	// (case-insensitive, matched as whole words). A near-miss names the old
	// value, and may name the value it mentions (New) without adopting it.
	New   []string `json:"new,omitempty"`
	Old   []string `json:"old"`
	Other Other    `json:"other"`
	Scope *Scope   `json:"scope,omitempty"`
	Note  string   `json:"note,omitempty"`
}

// File is the scenario file.
type File struct {
	About     string     `json:"about"`
	Scenarios []Scenario `json:"scenarios"`
}

// Families of correction wordings, in report order. A near-miss's family
// says what kind of mention it is.
var correctionFamilies = []string{
	"moved off",          // "we moved off X", "we migrated away from X"
	"gone, now Y",        // "X is gone, it's Y now"
	"ignore what I said", // "ignore what I said about X", "scratch that", "disregard"
	"not anymore",        // "not X anymore", "no longer X"
	"upgraded",           // "we upgraded to Y", "bumped to Y"
	"switched",           // "we switched from X to Y", "replaced X with Y"
	"actually",           // "actually it's Y, not X", "correction: Y"
	"new value only",     // "the deploy target is Y now", no word about X
	"in passing",         // the correction inside a message about a task
	"I was wrong",        // "I had that wrong", "I misspoke"
}

var nearMissFamilies = []string{
	"someday",      // "we might move off X someday"
	"question",     // "is X slower than Y?"
	"other sense",  // the word in another sense: "the old Jenkins box moved to another rack"
	"hypothetical", // "if we ever dropped X…"
	"quote",        // someone else's words: "Dana thinks we should leave X"
	"reaffirm",     // the old value said again, with a word of change nearby
}

var idRe = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// ParseFile reads a scenario file strictly (unknown fields are errors) and
// checks every scenario.
func ParseFile(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("scenario file: %w", err)
	}
	seen := map[string]bool{}
	var errs []error
	for i := range f.Scenarios {
		s := &f.Scenarios[i]
		if seen[s.ID] {
			errs = append(errs, fmt.Errorf("scenario %d: id %q given twice", i, s.ID))
		}
		seen[s.ID] = true
		if err := s.Check(); err != nil {
			errs = append(errs, fmt.Errorf("scenario %q: %w", s.ID, err))
		}
	}
	if len(f.Scenarios) == 0 {
		errs = append(errs, errors.New("no scenarios"))
	}
	return &f, errors.Join(errs...)
}

// Check says what is wrong with a scenario: a missing part, a family not
// of its kind, an old value the earlier sessions never state, a new value
// the correction never names, an other slot never stated.
func (s *Scenario) Check() error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !idRe.MatchString(s.ID) {
		fail("id %q: want lower-case letters, digits and hyphens", s.ID)
	}
	if !idRe.MatchString(s.Project) {
		fail("project %q: want lower-case letters, digits and hyphens (it names a directory)", s.Project)
	}
	switch s.Kind {
	case KindCorrection:
		if !slices.Contains(correctionFamilies, s.Family) {
			fail("family %q is not a correction family (%s)", s.Family, strings.Join(correctionFamilies, ", "))
		}
		if len(s.New) == 0 {
			fail("a correction names its new value")
		}
	case KindNearMiss:
		if !slices.Contains(nearMissFamilies, s.Family) {
			fail("family %q is not a near-miss family (%s)", s.Family, strings.Join(nearMissFamilies, ", "))
		}
		if s.Scope != nil {
			fail("a near-miss has no scope part")
		}
	default:
		fail("kind %q: want %s or %s", s.Kind, KindCorrection, KindNearMiss)
	}
	if s.Slot == "" || s.Question == "" {
		fail("slot and question are required")
	}
	if len(s.Earlier) == 0 || len(s.Earlier) > 3 {
		fail("want 1 to 3 earlier sessions, got %d", len(s.Earlier))
	}
	if len(s.Change) == 0 {
		fail("no change session")
	}
	if len(s.Old) == 0 {
		fail("no old value")
	}
	for _, sess := range append(append([]Session{}, s.Earlier...), s.Change) {
		if len(sess) == 0 {
			fail("an empty session")
		}
		for _, t := range sess {
			if strings.TrimSpace(t.User) == "" || strings.TrimSpace(t.Reply) == "" {
				fail("a turn without user text or reply")
			}
			for _, tl := range t.Tools {
				if tl.Name == "" || tl.Input == nil {
					fail("a tool call without name or input")
				}
			}
		}
	}
	earlier := userText(s.Earlier)
	if n := countNames(earlier, s.Old); n == 0 {
		fail("the earlier sessions never state the old value %q", s.Old)
	}
	if s.Kind == KindCorrection && !Names(userText([]Session{s.Change}), s.New) {
		fail("the correction never names the new value %q", s.New)
	}
	if s.Kind == KindCorrection && Names(allText(s.Earlier), s.New) {
		fail("the earlier sessions already name the new value %q (a prompt, a reply or a tool's output)", s.New)
	}
	if s.Other.Question == "" || len(s.Other.Value) == 0 || s.Other.Slot == "" {
		fail("the other slot needs slot, question and value")
	} else if !Names(earlier, s.Other.Value) {
		fail("the earlier sessions never state the other slot's value %q", s.Other.Value)
	}
	if s.Other.Slot == s.Slot {
		fail("the other slot is the slot itself")
	}
	if sc := s.Scope; sc != nil {
		if !idRe.MatchString(sc.Project) || sc.Project == s.Project {
			fail("scope project %q: want another project's name", sc.Project)
		}
		if len(sc.Earlier) == 0 || sc.Question == "" {
			fail("the scope part needs earlier sessions and a question")
		}
		if !Names(userText(sc.Earlier), s.Old) {
			fail("the scope project never states the old value %q", s.Old)
		}
		if Names(allText(sc.Earlier), s.New) {
			fail("the scope project names the new value %q", s.New)
		}
	}
	for _, v := range slices.Concat(s.New, s.Old, s.Other.Value) {
		if strings.TrimSpace(v) == "" {
			fail("an empty value spelling")
		}
	}
	for _, o := range s.Old {
		if Names(o, s.New) {
			fail("old spelling %q names the new value: the two could not be told apart", o)
		}
	}
	for _, n := range s.New {
		if Names(n, s.Old) {
			fail("new spelling %q names the old value: the two could not be told apart", n)
		}
	}
	return errors.Join(errs...)
}

// userText is every user prompt of the sessions, one per line.
func userText(sessions []Session) string {
	var b strings.Builder
	for _, s := range sessions {
		for _, t := range s {
			b.WriteString(t.User)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// allText is every text of the sessions: prompts, tool inputs and
// outputs, replies.
func allText(sessions []Session) string {
	var b strings.Builder
	for _, s := range sessions {
		for _, t := range s {
			b.WriteString(t.User + "\n")
			for _, tl := range t.Tools {
				in, _ := json.Marshal(tl.Input)
				b.WriteString(string(in) + "\n" + tl.Result + "\n")
			}
			b.WriteString(t.Reply + "\n")
		}
	}
	return b.String()
}

// OldStatements counts the prompts of a scenario's earlier sessions that state the
// old value.
func (s *Scenario) OldStatements() int {
	n := 0
	for _, sess := range s.Earlier {
		for _, t := range sess {
			if Names(t.User, s.Old) {
				n++
			}
		}
	}
	return n
}

func countNames(text string, values []string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if Names(line, values) {
			n++
		}
	}
	return n
}
