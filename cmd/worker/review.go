package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	xterm "github.com/charmbracelet/x/term"

	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// reviewItem is one belief of `review --list --json`.
type reviewItem struct {
	ID         string  `json:"id"`
	Statement  string  `json:"statement"`
	Confidence float64 `json:"confidence"`
	Evidence   int     `json:"evidence_count"`
	Scope      string  `json:"scope"`
	Project    string  `json:"project,omitempty"`
	Level      string  `json:"level"`
	Proposed   string  `json:"proposed,omitempty"`
	Why        string  `json:"why,omitempty"`
	Stated     bool    `json:"stated"`
}

func itemOf(b store.ReviewBelief, proposed, why string) reviewItem {
	it := review.Item{ReviewBelief: b}
	return reviewItem{ID: b.ID, Statement: b.Statement, Confidence: it.Confidence(), Evidence: b.EvidenceCount,
		Scope: b.Scope, Project: b.ProjectPath, Level: b.Level, Proposed: proposed, Why: why, Stated: b.Stated}
}

func cmdReview(ctx context.Context, e *env, args []string) error {
	fs := newFlags("review", e.stderr)
	list := fs.Bool("list", false, "list the beliefs waiting for review, best first")
	level := fs.String("level", "", "with --list: the beliefs at this level instead (pending, long-term, core, denied, pinned)")
	asJSON := fs.Bool("json", false, "with --list: print JSON")
	target := fs.String("target", "", "with approve or pin: the core memory file (claude, agents or both; a global belief, having no AGENTS.md, goes to the global CLAUDE.md)")
	// Flags may come before, between or after the words.
	var words []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return flagError(err)
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if *list {
		if len(words) > 0 {
			return usagef("--list takes no arguments, got %q", words[0])
		}
		lv := strings.ReplaceAll(*level, "-", "_")
		switch lv {
		case "", review.Pending, review.LongTerm, review.Core, review.Denied, review.Pinned:
		default:
			return usagef("--level %q: want pending, long-term, core, denied or pinned", *level)
		}
		return reviewList(ctx, e, lv, *asJSON)
	}
	if *level != "" || *asJSON {
		return usagef("--level and --json go with --list")
	}
	if len(words) == 0 {
		if !xterm.IsTerminal(os.Stdin.Fd()) || !xterm.IsTerminal(os.Stdout.Fd()) {
			return usagef("want --list, or approve, deny, pin or edit with belief ids (without them, review is a screen for a terminal)")
		}
		if *target != "" {
			return usagef("--target goes with approve or pin (on the screen, t chooses it)")
		}
		s, err := open(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		co := review.CoreOptions{Locations: promote.LocationsFrom(s.cfg), Target: s.cfg.CoreTarget, Write: s.cfg.Promote}
		emb, done := worker.StatementEmbedder(s.cfg) // the screen's edits
		defer done()
		co.Embedder = emb
		return runReviewTUI(ctx, s, co, os.Stdin, os.Stdout)
	}
	action, ids := words[0], words[1:]
	switch action {
	case review.Approve, review.Deny, review.Pin, review.Edit:
	default:
		return usagef("%q: want approve, deny, pin or edit", action)
	}
	if !review.ValidTarget(*target) {
		return usagef("--target %q: want claude, agents or both", *target)
	}
	if *target != "" && action != review.Approve && action != review.Pin {
		return usagef("--target goes with approve or pin")
	}
	var reqs []review.Request
	if action == review.Edit {
		if len(ids) != 2 {
			return usagef("edit wants a belief id and the new statement, got %d arguments", len(ids))
		}
		reqs = []review.Request{{ID: ids[0], Action: review.Edit, Statement: ids[1]}}
		ids = ids[:1]
	} else {
		if len(ids) == 0 {
			return usagef("%s wants one or more belief ids (bl_…)", action)
		}
		for _, id := range ids {
			reqs = append(reqs, review.Request{ID: id, Action: action, Target: *target})
		}
	}
	for _, id := range ids {
		if err := memory.CheckID(id); err != nil || !memory.IsBelief(id) {
			return usagef("id %q: want a belief id (bl_…); nothing was decided", id)
		}
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	co := review.CoreOptions{Locations: promote.LocationsFrom(s.cfg), Target: s.cfg.CoreTarget, Write: s.cfg.Promote}
	if action == review.Edit {
		emb, done := worker.StatementEmbedder(s.cfg)
		defer done()
		co.Embedder = emb
	}
	ds, err := review.DecideAndWrite(ctx, s.db, co, review.ByUser, reqs, time.Now())
	if err != nil {
		if errors.Is(err, store.ErrLevelChanged) {
			return fmt.Errorf("%w; nothing was decided, look again with review --list", err)
		}
		return fmt.Errorf("%w; nothing was decided", err)
	}
	for _, d := range ds {
		note, err := review.CoreNote(ctx, s.db, co, d)
		if err != nil {
			return err
		}
		writeDecision(e.stdout, d, note)
	}
	// The prompt hook's count of what waits follows at once.
	if q, err := review.Queue(ctx, s.db, s.cfg.Review, time.Now()); err == nil {
		if err := notice.WriteReview(s.cfg.Home, len(q)); err != nil {
			s.log.Warn("review notice", "err", err)
		}
	}
	return nil
}

// writeDecision prints "bl_… approve: pending -> long-term", with the
// note of review.CoreNote in parentheses when there is one.
func writeDecision(w io.Writer, d store.Decision, note string) {
	if note != "" {
		note = " (" + note + ")"
	}
	if d.Decision == review.Edit {
		fmt.Fprintf(w, "%s edited (%s)%s\n", d.BeliefID, review.LevelName(d.After), note)
		return
	}
	fmt.Fprintf(w, "%s %s: %s -> %s%s\n", d.BeliefID, d.Decision, review.LevelName(d.Before), review.LevelName(d.After), note)
}

func reviewList(ctx context.Context, e *env, level string, asJSON bool) error {
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	var items []reviewItem
	if level == "" {
		q, err := review.Queue(ctx, s.db, s.cfg.Review, time.Now())
		if err != nil {
			return err
		}
		for _, it := range q {
			items = append(items, itemOf(it.ReviewBelief, it.Proposed, it.Why))
		}
	} else {
		bs, err := s.db.ReviewBeliefs(ctx)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if b.Level == level {
				items = append(items, itemOf(b, "", ""))
			}
		}
	}
	if asJSON {
		if items == nil {
			items = []reviewItem{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
	}
	if len(items) == 0 {
		if level == "" {
			fmt.Fprintf(e.stdout, "nothing waits for review (ENGRAM_REVIEW=%s)\n", s.cfg.Review)
		} else {
			fmt.Fprintf(e.stdout, "no %s beliefs\n", review.LevelName(level))
		}
		return nil
	}
	for _, it := range items {
		where := it.Scope
		if it.Project != "" {
			where = "project " + it.Project
		}
		what := review.LevelName(it.Level)
		if it.Proposed != "" {
			what += " -> " + review.LevelName(it.Proposed)
		}
		fmt.Fprintf(e.stdout, "%s  %.2f  ev %-3d %-20s %s  %s\n", it.ID, it.Confidence, it.Evidence, what, where, it.Statement)
	}
	return nil
}
