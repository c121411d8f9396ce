// Package review moves beliefs through levels on their way to core memory:
//
//	pending ──(gates + approval)──▶ long_term ──(gates + approval)──▶ core
//
// plus two levels only a decision reaches: denied (never promoted, and not
// formed again) and pinned (kept shown forever, never demoted, archived or
// merged away).
//
// The gates: pending → long_term at evidence ≥ LongTermEvidence and
// confidence ≥ Confidence (one explicit statement counts as three
// observations, see belief.StatedWeight); long_term → core at evidence ≥
// CoreEvidence, CoreDays days in long_term, and confidence ≥ Confidence.
// Approval depends on the mode (ENGRAM_REVIEW): off (the gates alone),
// uncertain (explicit statements and beliefs of confidence ≥
// AutoConfidence pass to long_term by themselves, the rest wait; core
// always waits), or all (everything waits). What waits blocks nothing
// else.
package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/redact"
	"github.com/engram-memory/engram/internal/store"
)

// Modes of ENGRAM_REVIEW.
const (
	ModeOff       = "off"
	ModeUncertain = "uncertain"
	ModeAll       = "all"
)

// Levels (the store's names).
const (
	Pending  = store.LevelPending
	LongTerm = store.LevelLongTerm
	Core     = store.LevelCore
	Denied   = store.LevelDenied
	Pinned   = store.LevelPinned
)

// The gates.
const (
	LongTermEvidence = 3
	CoreEvidence     = 5
	CoreDays         = 7
	Confidence       = 0.7
	// AutoConfidence: in uncertain mode a belief this sure passes to
	// long_term without review.
	AutoConfidence = 0.85
)

// Core targets.
const (
	TargetClaude = "claude"
	TargetAgents = "agents"
	TargetBoth   = "both"
)

// Who made a decision.
const (
	ByUser  = "user"
	ByModel = "model"
	ByGates = "gates"
)

// normMode is the mode in use: ModeUncertain, the default, for "".
func normMode(m string) string {
	if m == "" {
		return ModeUncertain
	}
	return m
}

// ValidMode reports whether m is a value of ENGRAM_REVIEW.
func ValidMode(m string) bool { return m == ModeOff || m == ModeUncertain || m == ModeAll }

// ValidTarget reports whether t names a core target ("" is the setting's).
func ValidTarget(t string) bool {
	return t == "" || t == TargetClaude || t == TargetAgents || t == TargetBoth
}

// LevelName is a level as people read it ("long-term").
func LevelName(level string) string { return strings.ReplaceAll(level, "_", "-") }

func confidence(b store.ReviewBelief) float64 { return belief.Confidence(b.Alpha, b.Beta) }

// longTermGate reports whether a belief has the evidence of long-term memory.
func longTermGate(b store.ReviewBelief) bool {
	return b.Status == belief.StatusActive && b.EvidenceCount >= LongTermEvidence && confidence(b) >= Confidence
}

// coreGate reports whether a long-term belief has the evidence and age of
// core memory.
func coreGate(b store.ReviewBelief, now time.Time) bool {
	return b.Status == belief.StatusActive && b.EvidenceCount >= CoreEvidence && confidence(b) >= Confidence &&
		!b.LevelSince.IsZero() && now.Sub(b.LevelSince) >= CoreDays*24*time.Hour
}

// autoPass reports whether a belief passes to long_term without review in
// uncertain mode.
func autoPass(b store.ReviewBelief) bool { return b.Stated || confidence(b) >= AutoConfidence }

// Item is a belief waiting for review: the level approval gives it.
type Item struct {
	store.ReviewBelief
	Proposed string `json:"proposed"`
	Why      string `json:"why"`
}

// Score ranks waiting beliefs: confidence × ln(1 + evidence).
func (it Item) Score() float64 {
	return confidence(it.ReviewBelief) * math.Log(1+float64(max(it.EvidenceCount, 0)))
}

// Confidence is the belief's confidence.
func (it Item) Confidence() float64 { return confidence(it.ReviewBelief) }

// waits reports what level approval would give b in mode, and why it
// waits ("" when it does not wait).
func waits(b store.ReviewBelief, mode string, now time.Time) (proposed, why string) {
	switch b.Level {
	case Pending:
		if !longTermGate(b) || mode == ModeOff || (mode == ModeUncertain && autoPass(b)) {
			return "", ""
		}
		if mode == ModeAll {
			return LongTerm, "every belief is reviewed (ENGRAM_REVIEW=all)"
		}
		return LongTerm, fmt.Sprintf("inferred, confidence %.2f below %.2f", confidence(b), AutoConfidence)
	case LongTerm:
		if mode == ModeOff || !coreGate(b, now) {
			return "", ""
		}
		return Core, fmt.Sprintf("evidence %d, %d days in long-term", b.EvidenceCount, int(now.Sub(b.LevelSince).Hours()/24))
	}
	return "", ""
}

// Queue returns the beliefs waiting for review, best first.
func Queue(ctx context.Context, db *store.DB, mode string, now time.Time) ([]Item, error) {
	mode = normMode(mode)
	bs, err := db.ReviewBeliefs(ctx)
	if err != nil {
		return nil, err
	}
	var out []Item
	for _, b := range bs {
		if p, why := waits(b, mode, now); p != "" {
			out = append(out, Item{ReviewBelief: b, Proposed: p, Why: why})
		}
	}
	slices.SortStableFunc(out, func(a, b Item) int {
		return cmp.Or(cmp.Compare(b.Score(), a.Score()), cmp.Compare(b.Confidence(), a.Confidence()), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Stats is what one Advance did.
type Stats struct {
	LongTerm int `json:"long_term"`
	Core     int `json:"core"`
	Waiting  int `json:"waiting"`
}

// Advance moves every belief the gates (and the mode) let through to its
// next level, and counts what waits. It runs in each worker cycle, before
// promotion.
func Advance(ctx context.Context, db *store.DB, mode string, now time.Time) (Stats, error) {
	var st Stats
	mode = normMode(mode)
	bs, err := db.ReviewBeliefs(ctx)
	if err != nil {
		return st, err
	}
	var ds []store.Decision
	for _, b := range bs {
		switch {
		case b.Level == Pending && longTermGate(b) && (mode == ModeOff || mode == ModeUncertain && autoPass(b)):
			why := "gates"
			if mode == ModeUncertain {
				why = fmt.Sprintf("confidence %.2f", confidence(b))
				if b.Stated {
					why = "stated by the user"
				}
			}
			ds = append(ds, store.Decision{BeliefID: b.ID, Decision: LongTerm, Who: ByGates, At: now, Before: Pending,
				After: LongTerm, Note: why})
			st.LongTerm++
		case b.Level == LongTerm && mode == ModeOff && coreGate(b, now):
			ds = append(ds, store.Decision{BeliefID: b.ID, Decision: Core, Who: ByGates, At: now, Before: LongTerm,
				After: Core, Note: "gates", CoreTarget: b.CoreTarget})
			st.Core++
		default:
			if p, _ := waits(b, mode, now); p != "" {
				st.Waiting++
			}
		}
	}
	if len(ds) == 0 {
		return st, nil
	}
	if err := db.Decide(ctx, ds); err != nil {
		if errors.Is(err, store.ErrLevelChanged) || errors.Is(err, store.ErrNotFound) {
			// A person decided (or forgot) meanwhile: the next cycle
			// sees their decision.
			return Stats{}, nil
		}
		return st, err
	}
	return st, nil
}

// Actions a person or the model takes.
const (
	Approve = "approve"
	Deny    = "deny"
	Pin     = "pin"
	Edit    = "edit"
)

// Request is one decision asked for.
type Request struct {
	ID     string
	Action string
	// Target is a core target, for an approval to core ("" for the setting's).
	Target string
	// Statement is the new statement of an edit.
	Statement string
}

// Plan checks requests against the beliefs' levels and returns the
// decisions they make, or an error naming the first bad one (nothing is
// decided then).
func Plan(ctx context.Context, db *store.DB, who string, reqs []Request, now time.Time) ([]store.Decision, error) {
	var ds []store.Decision
	seen := map[string]bool{}
	for _, r := range reqs {
		if !ValidTarget(r.Target) {
			return nil, fmt.Errorf("core target %q: want claude, agents or both", r.Target)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("belief %s: named twice", r.ID)
		}
		seen[r.ID] = true
		b, err := db.ReviewBelief(ctx, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("belief %q: no such belief", r.ID)
		}
		if err != nil {
			return nil, err
		}
		d := store.Decision{BeliefID: b.ID, Decision: r.Action, Who: who, At: now, Before: b.Level, CoreTarget: b.CoreTarget}
		switch r.Action {
		case Approve:
			switch b.Level {
			case Pending:
				if !longTermGate(b) {
					return nil, fmt.Errorf("belief %s: not ready for long-term memory (evidence %d of %d, confidence %.2f of %.2f)",
						b.ID, b.EvidenceCount, LongTermEvidence, confidence(b), Confidence)
				}
				d.After = LongTerm
			case LongTerm:
				if !coreGate(b, now) {
					days := 0
					if !b.LevelSince.IsZero() {
						days = int(now.Sub(b.LevelSince).Hours() / 24)
					}
					return nil, fmt.Errorf("belief %s: already long-term, not ready for core memory (evidence %d of %d, %d of %d days)",
						b.ID, b.EvidenceCount, CoreEvidence, days, CoreDays)
				}
				d.After = Core
				d.CoreTarget = r.Target
			case Denied:
				d.After = LongTerm // approving a denied belief takes the denial back
			default:
				return nil, fmt.Errorf("belief %s: already %s", b.ID, LevelName(b.Level))
			}
		case Deny:
			if b.Level == Denied {
				return nil, fmt.Errorf("belief %s: already denied", b.ID)
			}
			d.After = Denied
		case Pin:
			if b.Level == Pinned {
				return nil, fmt.Errorf("belief %s: already pinned", b.ID)
			}
			d.After = Pinned
			if r.Target != "" {
				d.CoreTarget = r.Target
			}
		case Edit:
			st, _ := redact.String(strings.Join(strings.Fields(r.Statement), " "))
			if st == "" {
				return nil, fmt.Errorf("belief %s: an empty statement", b.ID)
			}
			if st == b.Statement {
				return nil, fmt.Errorf("belief %s: the statement is already %q", b.ID, st)
			}
			d.After, d.Statement, d.Note = b.Level, st, "was: "+b.Statement
		default:
			return nil, fmt.Errorf("action %q: want approve, deny, pin or edit", r.Action)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// Decide plans and records requests: all or nothing. Core-memory files
// are not written (see Commit).
func Decide(ctx context.Context, db *store.DB, who string, reqs []Request, now time.Time) ([]store.Decision, error) {
	return DecideAndWrite(ctx, db, CoreOptions{}, who, reqs, now)
}

// DecideAndWrite plans requests, then commits them with the core-memory
// files they change: all or nothing.
func DecideAndWrite(ctx context.Context, db *store.DB, co CoreOptions, who string, reqs []Request, now time.Time) ([]store.Decision, error) {
	ds, err := Plan(ctx, db, who, reqs, now)
	if err != nil {
		return nil, err
	}
	if err := Commit(ctx, db, co, ds, now); err != nil {
		return nil, err
	}
	return ds, nil
}

// CoreOptions say where core memory is written (see promote/core.go).
type CoreOptions struct {
	Locations promote.Locations
	// Target is ENGRAM_CORE_TARGET.
	Target string
	// Write is ENGRAM_PROMOTE: off, no file is written.
	Write bool
	// Embedder, when set, embeds an edited statement at once, so that
	// matching (a denied belief's paraphrases, duplicates, links) compares
	// with the new statement; without it, or when it fails, the belief is
	// left without a vector and the worker's next cycle embeds it.
	Embedder embed.Embedder
}

// Commit records decisions, writing first the core-memory files they
// change (a belief approved for core memory, or taken out of it): when one
// of those files cannot be written, nothing is written or decided.
func Commit(ctx context.Context, db *store.DB, co CoreOptions, ds []store.Decision, now time.Time) error {
	embedEdits(ctx, co.Embedder, ds)
	if co.Write {
		var affected []string
		for _, d := range ds {
			b, err := db.ReviewBelief(ctx, d.BeliefID)
			if err != nil {
				return err
			}
			affected = append(affected, promote.FilesOf(co.Locations, b, co.Target)...)
			b.Level, b.CoreTarget = d.After, d.CoreTarget
			affected = append(affected, promote.FilesOf(co.Locations, b, co.Target)...)
		}
		slices.Sort(affected)
		affected = slices.Compact(affected)
		if len(affected) > 0 {
			plan, err := promote.PlanCore(ctx, db, co.Locations, co.Target, ds)
			if err != nil {
				return err
			}
			if err := plan.Check(affected); err != nil {
				return err
			}
			res, err := plan.Write(ctx, db, affected, now)
			if err != nil {
				return err
			}
			if len(res.Problems) > 0 {
				return res.Problems[0]
			}
		}
	}
	return db.Decide(ctx, ds)
}

// embedEdits gives each edit in ds the vector of its new statement (none
// when emb is nil or fails: the next cycle embeds the belief).
func embedEdits(ctx context.Context, emb embed.Embedder, ds []store.Decision) {
	var idx []int
	var texts []string
	for i, d := range ds {
		if d.Statement != "" {
			ds[i].Vector, ds[i].Embedder = nil, ""
			idx = append(idx, i)
			texts = append(texts, d.Statement)
		}
	}
	if emb == nil || len(texts) == 0 {
		return
	}
	vs, err := ingest.EmbedStatements(ctx, emb, texts)
	if err != nil {
		return
	}
	for j, i := range idx {
		ds[i].Vector, ds[i].Embedder = vs[j], emb.Name()
	}
}

// CoreNote says where a decision puts a belief when that is not the file
// its core target names ("" otherwise): there is no global AGENTS.md, so
// a global belief with the target agents (or both) goes to the global
// CLAUDE.md, $CLAUDE_CONFIG_DIR/CLAUDE.md.
func CoreNote(ctx context.Context, db *store.DB, co CoreOptions, d store.Decision) (string, error) {
	b, err := db.ReviewBelief(ctx, d.BeliefID)
	if err != nil {
		return "", err
	}
	b.Level, b.CoreTarget = d.After, d.CoreTarget
	return coreNote(co, b), nil
}

func coreNote(co CoreOptions, b store.ReviewBelief) string {
	target := cmp.Or(b.CoreTarget, co.Target)
	if b.Scope == episode.ScopeProject || target != promote.CoreAgents && target != promote.CoreBoth {
		return ""
	}
	files := promote.FilesOf(co.Locations, b, co.Target)
	if len(files) == 0 {
		return ""
	}
	return GlobalAgentsNote(target, files[0])
}

// GlobalAgentsNote is the note for a global belief whose target is agents
// or both: it goes to the global CLAUDE.md at path.
func GlobalAgentsNote(target, path string) string {
	if target == promote.CoreBoth {
		return "a global belief has no AGENTS.md to go to: it goes to " + path + " only"
	}
	return "a global belief has no AGENTS.md to go to: it goes to " + path + " instead"
}
