// Package memory owns what the command line and the MCP server do to one
// stored memory, an episode (ep_…) or a belief (bl_…): check its id, load
// it, render it in full (its card), record the access that reading it in
// full is, and forget it.
package memory

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/thread"
)

// Id prefixes.
const (
	EpisodePrefix = "ep_"
	BeliefPrefix  = "bl_"
)

// maxIDLen bounds an id: store ids are 15 bytes; imported ones may differ,
// but never by this much.
const maxIDLen = 64

// ErrBadID is wrapped by CheckID's error.
var ErrBadID = errors.New("want ep_… (an episode) or bl_… (a belief)")

// CheckID accepts an episode or belief id: the prefix, then letters,
// digits, '_' or '-'.
func CheckID(id string) error {
	if !strings.HasPrefix(id, EpisodePrefix) && !strings.HasPrefix(id, BeliefPrefix) || len(id) <= len(EpisodePrefix) || len(id) > maxIDLen {
		return fmt.Errorf("id %q: %w", id, ErrBadID)
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("id %q: %w", id, ErrBadID)
		}
	}
	return nil
}

// IsBelief reports whether id names a belief.
func IsBelief(id string) bool { return strings.HasPrefix(id, BeliefPrefix) }

// NotFoundError is the error for an id the store does not hold. It matches
// store.ErrNotFound.
type NotFoundError struct {
	Kind string // "episode" or "belief"
	ID   string
}

func (e *NotFoundError) Error() string { return "no " + e.Kind + " " + e.ID }

// Is makes errors.Is(err, store.ErrNotFound) hold.
func (e *NotFoundError) Is(target error) bool { return target == store.ErrNotFound }

// Card is one memory in full: exactly one of the fields is set.
type Card struct {
	Episode *episode.Episode
	Belief  *belief.Belief
	// Links are a belief's links to related beliefs, with each one's
	// statement.
	Links []LinkedBelief
	// Level and Decisions are a belief's review level and the decisions
	// made about it (see internal/review).
	Level      string
	LevelSince time.Time
	Decisions  []store.Decision
}

// LinkedBelief is a belief linked to the card's.
type LinkedBelief struct {
	ID         string  `json:"id"`
	Statement  string  `json:"statement"`
	Similarity float64 `json:"similarity"`
}

// ID is the card's memory id.
func (c Card) ID() string {
	if c.Belief != nil {
		return c.Belief.ID
	}
	if c.Episode != nil {
		return c.Episode.ID
	}
	return ""
}

// Load reads the memory id names. An unknown id is a *NotFoundError.
func Load(ctx context.Context, db *store.DB, id string) (Card, error) {
	if IsBelief(id) {
		b, err := db.GetBelief(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return Card{}, &NotFoundError{"belief", id}
		}
		if err != nil {
			return Card{}, err
		}
		c := Card{Belief: &b}
		links, err := db.Links(ctx, id)
		if err != nil {
			return Card{}, err
		}
		for _, l := range links {
			if o, err := db.GetBelief(ctx, l.To); err == nil {
				c.Links = append(c.Links, LinkedBelief{ID: o.ID, Statement: o.Statement, Similarity: l.Similarity})
			}
		}
		rb, err := db.ReviewBelief(ctx, id)
		if err != nil {
			return Card{}, err
		}
		c.Level, c.LevelSince = rb.Level, rb.LevelSince
		if c.Decisions, err = db.Decisions(ctx, id); err != nil {
			return Card{}, err
		}
		return c, nil
	}
	ep, err := db.GetEpisode(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Card{}, &NotFoundError{"episode", id}
	}
	if err != nil {
		return Card{}, err
	}
	return Card{Episode: &ep}, nil
}

// Write renders a card as text. It is the card of an expansion: the access
// count shown includes the access the expansion records.
func Write(w io.Writer, c Card) {
	switch {
	case c.Belief != nil:
		writeBelief(w, *c.Belief)
		for _, l := range c.Links {
			fmt.Fprintf(w, "linked:     %s (similarity %.2f) %s\n", l.ID, l.Similarity, l.Statement)
		}
		writeLevel(w, c)
	case c.Episode != nil:
		writeEpisode(w, *c.Episode)
	}
}

func writeEpisode(w io.Writer, ep episode.Episode) {
	fmt.Fprintf(w, "%s  %s · %s · importance %.2f · %s scope", ep.ID, ep.Type, ep.OccurredAt.Format("2006-01-02 15:04"), ep.Importance, ep.Scope)
	if ep.Project != "" {
		fmt.Fprintf(w, " · project %s (%s)", ep.Project, ep.ProjectPath)
	}
	fmt.Fprintf(w, "\nkind:      %s%s\n", cmp.Or(ep.Kind, "-"), lifetimeNote(ep.Speculative, ep.DueAt, ep.Lifecycle))
	fmt.Fprintf(w, "summary:   %s\n", ep.Summary)
	if len(ep.Entities) > 0 {
		fmt.Fprintf(w, "entities:  %s\n", strings.Join(ep.Entities, ", "))
	}
	for _, sig := range ep.Signals {
		tentative := ""
		if sig.Tentative {
			tentative = " tentative"
		}
		fmt.Fprintf(w, "signal:    %s%s %q (polarity %+d) %s\n", sig.Kind, tentative, sig.Subject, sig.Polarity, sig.Text)
	}
	fmt.Fprintf(w, "sessions:  %s\naccess:    %d times, stability %.2f days\nextractor: %s · embedder %s\n\n%s\n",
		strings.Join(ep.SessionIDs, ", "), ep.AccessCount+1, ep.Stability, ep.Extractor, ep.Embedder, ep.Context)
}

func writeBelief(w io.Writer, b belief.Belief) {
	fmt.Fprintf(w, "%s  %s · %s scope", b.ID, b.Status, b.Scope)
	if b.Project != "" {
		fmt.Fprintf(w, " · project %s (%s)", b.Project, b.ProjectPath)
	}
	fmt.Fprintf(w, "\nstatement:  %s\n", b.Statement)
	fmt.Fprintf(w, "kind:       %s%s\n", cmp.Or(b.Kind, "-"), lifetimeNote(b.Speculative, b.DueAt, ""))
	fmt.Fprintf(w, "structured: subject %q · predicate %q · context %q · timeframe %s\n", b.Subject, b.Predicate, b.Context, b.Timeframe)
	fmt.Fprintf(w, "confidence: %.2f (α %.0f, β %.0f) · evidence %d · stability %.2f days\n", b.Confidence(), b.Alpha, b.Beta, b.EvidenceCount, b.Stability)
	fmt.Fprintf(w, "supporting:    %s\n", listOrNone(b.Supporting))
	fmt.Fprintf(w, "contradicting: %s\n", listOrNone(b.Contradicting))
	if len(b.Partial) > 0 {
		fmt.Fprintf(w, "partial:       %s\n", listOrNone(b.Partial))
	}
	if b.ParentID != "" {
		fmt.Fprintf(w, "parent:        %s\n", b.ParentID)
	}
	if len(b.Children) > 0 {
		fmt.Fprintf(w, "children:      %s\n", listOrNone(b.Children))
	}
	for _, r := range b.Revisions {
		fmt.Fprintf(w, "revised %s: %q (was %.2f): %s\n", r.Timestamp.Format("2006-01-02"), r.OldStatement, r.OldConfidence, r.Reason)
	}
	fmt.Fprintf(w, "created %s · updated %s", b.CreatedAt.Format("2006-01-02 15:04"), b.UpdatedAt.Format("2006-01-02 15:04"))
	if !b.PromotedAt.IsZero() {
		fmt.Fprintf(w, " · promoted %s", b.PromotedAt.Format("2006-01-02"))
	}
	fmt.Fprintln(w)
}

// lifetimeNote says what bears on a memory's lifetime: speculation, a
// commitment's date, an end.
func lifetimeNote(speculative bool, due time.Time, lifecycle string) string {
	var parts []string
	if speculative {
		parts = append(parts, "speculative (expires unless confirmed)")
	}
	if !due.IsZero() {
		parts = append(parts, "due "+due.Format("2006-01-02"))
	}
	switch lifecycle {
	case "":
	case episode.LifecycleSuperseded:
		parts = append(parts, "superseded by a later correction (history names it; recalled labelled, below what is current)")
	default:
		parts = append(parts, lifecycle+" (out of recall)")
	}
	if len(parts) == 0 {
		return ""
	}
	return " · " + strings.Join(parts, " · ")
}

// writeLevel renders a belief's level and the decisions made about it.
func writeLevel(w io.Writer, c Card) {
	if c.Level == "" {
		return
	}
	level := strings.ReplaceAll(c.Level, "_", "-")
	if c.LevelSince.IsZero() {
		fmt.Fprintf(w, "level:      %s\n", level)
	} else {
		fmt.Fprintf(w, "level:      %s since %s\n", level, c.LevelSince.Format("2006-01-02 15:04"))
	}
	for _, d := range c.Decisions {
		fmt.Fprintf(w, "decided %s by %s: %s, %s -> %s", d.At.Format("2006-01-02 15:04"), d.Who, d.Decision,
			strings.ReplaceAll(d.Before, "_", "-"), strings.ReplaceAll(d.After, "_", "-"))
		if d.Note != "" {
			fmt.Fprintf(w, " (%s)", d.Note)
		}
		fmt.Fprintln(w)
	}
}

func listOrNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

// RecordAccess counts one expansion of id: access count, last access and
// stability (the spaced-repetition rule), in the store. When the store
// cannot take the write (the worker holds it past the busy timeout), the
// access goes to the access log instead, which the worker folds in at its
// next run, the way the prompt hook's accesses do; logged is then true.
func RecordAccess(ctx context.Context, db *store.DB, home, id string, now time.Time) (logged bool, err error) {
	_, dbErr := db.RecordAccesses(ctx, []store.Access{{ID: id, At: now}})
	if dbErr == nil {
		return false, nil
	}
	if err := recall.RecordInjected(home, "", []string{id}, now); err != nil {
		return false, errors.Join(dbErr, err)
	}
	return true, nil
}

// Matching loads the memories that hold text (see
// store.MatchingMemories): the episodes, then the beliefs, newest first
// each. It is what forget by search shows, then forgets.
func Matching(ctx context.Context, db *store.DB, text string) ([]Card, error) {
	eps, bls, err := db.MatchingMemories(ctx, text)
	if err != nil {
		return nil, err
	}
	cards := make([]Card, 0, len(eps)+len(bls))
	for _, id := range append(eps, bls...) {
		c, err := Load(ctx, db, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // forgotten meanwhile
		}
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
	}
	return cards, nil
}

// Line is a memory in one line, as a list of them shows it: its id, then
// a belief's statement, or an episode's date and summary.
func (c Card) Line(width int) string {
	switch {
	case c.Belief != nil:
		return c.Belief.ID + "  " + clipLine(c.Belief.Statement, width)
	case c.Episode != nil:
		return c.Episode.ID + "  " + c.Episode.OccurredAt.Format(time.DateOnly) + "  " + clipLine(c.Episode.Summary, width)
	}
	return ""
}

// clipLine puts s on one line of at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n && n > 1 {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ErrNotRewritten is wrapped by Forget's error when the memories are gone
// from the store but some file engram keeps may still hold their text (the
// next worker run rewrites it).
var ErrNotRewritten = errors.New("forgotten, but not yet from every file (the next run finishes it)")

// Forget removes memories from every place engram keeps them: the episodes
// with the captures they were made from, the beliefs, in one transaction;
// then the recollection files and the search index are rewritten, the
// session neighbour files naming them removed, spool files the store
// already covers removed, the MEMORY.md files and the archive rewritten at
// once (promote.Forget), and the database scrubbed (store.Scrub: its FTS5
// indexes merged, VACUUM, the WAL emptied), so that the text is not left
// in freed space either. Every id is checked first: an unknown one forgets
// nothing. It returns what was forgotten; with an error wrapping
// ErrNotRewritten, that is everything asked for.
func Forget(ctx context.Context, db *store.DB, cfg config.Config, ids []string, now time.Time, log *slog.Logger) ([]Card, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cards := make([]Card, 0, len(ids))
	seen := map[string]bool{}
	var epIDs, blIDs, summaries []string
	for _, id := range ids {
		if seen[id] {
			continue // named twice: forgotten once
		}
		seen[id] = true
		c, err := Load(ctx, db, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("no memory with id %s; nothing was forgotten", id)
		}
		if err != nil {
			return nil, err
		}
		cards = append(cards, c)
		if c.Belief != nil {
			blIDs = append(blIDs, c.Belief.ID)
		} else {
			epIDs = append(epIDs, c.Episode.ID)
			summaries = append(summaries, c.Episode.Summary)
		}
	}
	if err := db.Forget(ctx, epIDs, blIDs); err != nil {
		return nil, err
	}
	if err := ForgetCopies(ctx, db, cfg, epIDs, blIDs, summaries, now, log); err != nil {
		return cards, err
	}
	return cards, nil
}

// ForgetCopies takes memories the store no longer holds (forgotten by
// Forget, or by an import that brought their tombstones) out of every
// other place engram keeps them: the recollection files and the search
// index, the box files of the threads of work (thread.Refresh), the
// session neighbour files, spool files the store covers, the
// MEMORY.md files and the archive (summaries are the forgotten episodes'),
// and the database's free pages, indexes and WAL (store.Scrub). Its error
// wraps ErrNotRewritten.
func ForgetCopies(ctx context.Context, db *store.DB, cfg config.Config, epIDs, blIDs, summaries []string, now time.Time, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	home := cfg.Home
	var errs []error
	if _, err := recollect.Build(ctx, db, home, recollect.BuildOptions{}, now); err != nil {
		errs = append(errs, fmt.Errorf("recollection files: %w", err))
	}
	if _, err := thread.Refresh(ctx, db, home); err != nil {
		errs = append(errs, fmt.Errorf("box files: %w", err))
	}
	if err := removeNeighbours(home, append(slices.Clone(epIDs), blIDs...)); err != nil {
		errs = append(errs, fmt.Errorf("session neighbour files: %w", err))
	}
	if err := pruneSpool(ctx, db, cfg.SpoolDir()); err != nil {
		errs = append(errs, fmt.Errorf("spool: %w", err))
	}
	st, err := promote.Forget(ctx, db, promote.OptionsFrom(cfg, log, now), summaries)
	if err != nil {
		errs = append(errs, fmt.Errorf("MEMORY.md: %w", err))
	}
	for _, p := range st.Problems {
		errs = append(errs, fmt.Errorf("MEMORY.md: %s", p))
	}
	if err := db.Scrub(ctx); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrNotRewritten, errors.Join(errs...))
	}
	return nil
}

// removeNeighbours removes the session neighbour files (recall/session-*.rec)
// that hold any of ids: the worker's next cycle writes them anew. The hook
// reads a missing file as empty.
func removeNeighbours(home string, ids []string) error {
	names, err := filepath.Glob(recall.SessionPath(home, "*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, id := range ids {
			if bytes.Contains(data, []byte(id)) {
				if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				break
			}
		}
	}
	return errors.Join(errs...)
}

// pruneSpool removes the spool files whose every message the store already
// covers (its session's offset is past them): a drain would only drop
// them, and until then they are one more copy of captured text. Files not
// yet drained stay: they are turns not captured yet.
func pruneSpool(ctx context.Context, db *store.DB, dir string) error {
	files, err := spool.List(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		if f.Err != nil {
			continue
		}
		s, ok, err := db.GetSession(ctx, f.Entry.SessionID)
		if err != nil {
			return err
		}
		if ok && f.Entry.End <= s.Offset {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
