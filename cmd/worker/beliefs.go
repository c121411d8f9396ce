package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/store"
)

func cmdBeliefs(ctx context.Context, e *env, args []string) error {
	fs := newFlags("beliefs", e.stderr)
	status := fs.String("status", "active", "active, revised, merged, split, archived, expired, or all")
	kind := fs.String("kind", "", "only beliefs of this kind ("+strings.Join(episode.Kinds, ", ")+")")
	scope := fs.String("scope", "", "global or project (default: both)")
	project := fs.String("project", "", "only beliefs of this directory's project (its git root)")
	minConf := fs.Float64("min-confidence", 0, "only beliefs at least this confident (0..1)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	f := store.BeliefFilter{Status: *status, Scope: *scope, MinConf: *minConf, Kind: *kind}
	switch *status {
	case "all":
		f.Status = ""
	case belief.StatusActive, belief.StatusRevised, belief.StatusMerged, belief.StatusSplit, belief.StatusArchived,
		belief.StatusExpired:
	default:
		return usagef("--status %q: want active, revised, merged, split, archived, expired or all", *status)
	}
	if *kind != "" && !episode.ValidKind(*kind) {
		return usagef("--kind %q: want one of %s", *kind, strings.Join(episode.Kinds, ", "))
	}
	if *scope != "" && *scope != "global" && *scope != "project" {
		return usagef("--scope %q: want global or project", *scope)
	}
	if *minConf < 0 || *minConf > 1 {
		return usagef("--min-confidence %v: want a number from 0 to 1", *minConf)
	}
	if *project != "" {
		abs, err := filepath.Abs(*project)
		if err != nil {
			return usagef("--project %q: %v", *project, err)
		}
		f.ProjectPath, _ = gitroot.Find(abs)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	bs, err := s.db.ListBeliefs(ctx, f)
	if err != nil {
		return err
	}
	if *asJSON {
		type row struct {
			ID         string  `json:"id"`
			Statement  string  `json:"statement"`
			Confidence float64 `json:"confidence"`
			Evidence   int     `json:"evidence_count"`
			Status     string  `json:"status"`
			Kind       string  `json:"memory_kind"`
			Scope      string  `json:"scope"`
			Project    string  `json:"project,omitempty"`
		}
		out := []row{}
		for _, b := range bs {
			out = append(out, row{b.ID, b.Statement, b.Confidence(), b.EvidenceCount, b.Status, b.Kind, b.Scope, b.ProjectPath})
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(bs) == 0 {
		fmt.Fprintln(e.stdout, "no beliefs")
		return nil
	}
	for _, b := range bs {
		where := b.Scope
		if b.Project != "" {
			where = "project " + b.Project
		}
		fmt.Fprintf(e.stdout, "%s  %.2f  ev %-3d %-8s %-12s %-16s %s\n", b.ID, b.Confidence(), b.EvidenceCount, b.Status,
			cmp.Or(b.Kind, "-"), where, b.Statement)
	}
	return nil
}

// forgetWorkerWait bounds how long forget waits for a running worker cycle.
const forgetWorkerWait = 30 * time.Second

func cmdForget(ctx context.Context, e *env, args []string) error {
	fs := newFlags("forget", e.stderr)
	matching := fs.String("matching", "", "forget every episode and belief that holds this text (shown first, then asked)")
	yes := fs.Bool("yes", false, "with --matching: forget what matches without asking")
	// Flags may come before, between or after the ids.
	var ids []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return flagError(err)
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	byText := false
	fs.Visit(func(f *flag.Flag) { byText = byText || f.Name == "matching" })
	switch {
	case byText && len(ids) > 0:
		return usagef("give ids or --matching, not both (got %q and --matching %q)", ids[0], *matching)
	case byText && strings.TrimSpace(*matching) == "":
		return usagef("--matching %q: want the text to look for", *matching)
	case *yes && !byText:
		return usagef("--yes goes with --matching (forgetting by id asks nothing)")
	case !byText && len(ids) == 0:
		return usagef("want one or more ids (ep_… or bl_…), or --matching TEXT")
	}
	seen := map[string]bool{}
	uniq := ids[:0] // an id given twice is forgotten once
	for _, id := range ids {
		if !strings.HasPrefix(id, "ep_") && !strings.HasPrefix(id, "bl_") {
			return usagef("id %q: want ep_… (an episode) or bl_… (a belief); nothing was forgotten", id)
		}
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	ids = uniq
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	// A worker cycle running meanwhile could write recollection files or a
	// MEMORY.md from what it read before the forget: wait for it to end.
	lk, err := waitWorkerLock(ctx, s.cfg.Home, forgetWorkerWait)
	if err != nil {
		return fmt.Errorf("a worker run is still going after %v; nothing was forgotten, try again when it ends: %w", forgetWorkerWait, err)
	}
	defer lk.Unlock()
	if byText {
		cards, err := memory.Matching(ctx, s.db, *matching)
		if err != nil {
			return err
		}
		if len(cards) == 0 {
			return fmt.Errorf("no memory holds %q; nothing was forgotten", *matching)
		}
		verb := "hold"
		if len(cards) == 1 {
			verb = "holds"
		}
		fmt.Fprintf(e.stdout, "%s %s %q:\n", countMemories(cards), verb, *matching)
		for _, c := range cards {
			fmt.Fprintf(e.stdout, "  %s\n", c.Line(100))
		}
		if !*yes && !confirm(e, fmt.Sprintf("forget these %s? [y/N] ", countMemories(cards))) {
			return errors.New("not confirmed; nothing was forgotten (--yes forgets without asking)")
		}
		ids = ids[:0]
		for _, c := range cards {
			ids = append(ids, c.ID())
		}
	}
	// Every id is checked first: a bad one leaves the store unchanged. The
	// recollection files are rewritten after, so that a forgotten memory is
	// never injected again.
	done, err := memory.Forget(ctx, s.db, s.cfg, ids, time.Now(), s.log)
	for _, c := range done {
		fmt.Fprintf(e.stdout, "forgot %s\n", c.ID())
	}
	return err
}

// countMemories says how many episodes and beliefs cards hold.
func countMemories(cards []memory.Card) string {
	eps, bls := 0, 0
	for _, c := range cards {
		if c.Belief != nil {
			bls++
		} else {
			eps++
		}
	}
	var parts []string
	if eps > 0 {
		parts = append(parts, plural(eps, "episode"))
	}
	if bls > 0 {
		parts = append(parts, plural(bls, "belief"))
	}
	return strings.Join(parts, " and ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// confirm asks a yes-or-no question on stderr and reads the answer from
// standard input: yes only for "y" or "yes".
func confirm(e *env, question string) bool {
	fmt.Fprint(e.stderr, question)
	line, _ := bufio.NewReader(e.stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func cmdHistory(ctx context.Context, e *env, args []string) error {
	fs := newFlags("history", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	flagArgs, ids := splitQuery(args)
	if err := fs.Parse(flagArgs); err != nil {
		return flagError(err)
	}
	ids = append(ids, fs.Args()...)
	if len(ids) != 1 {
		return usagef("want one id (ep_… or bl_…), got %d", len(ids))
	}
	id := ids[0]
	if !store.MemoryIDRe.MatchString(id) {
		return usagef("id %q: want ep_… (an episode) or bl_… (a belief) and 12 hex digits", id)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	evs, err := s.db.History(ctx, id)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		// No event: a memory made before the history was kept, or none.
		if _, err := memory.Load(ctx, s.db, id); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if evs == nil {
			evs = []store.Event{}
		}
		return enc.Encode(evs)
	}
	memory.WriteHistory(e.stdout, id, evs)
	return nil
}
