package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// Actions of the history of a memory.
const (
	ActionFormed       = "formed"
	ActionReinforced   = "reinforced"
	ActionContradicted = "contradicted"
	ActionPartial      = "partial"
	ActionRevised      = "revised"
	ActionSplit        = "split"
	ActionMerged       = "merged"
	ActionArchived     = "archived"
	ActionExpired      = "expired"
	ActionPinned       = "pinned"
	ActionDenied       = "denied"
	ActionForgotten    = "forgotten"
	ActionSuperseded   = "superseded"
	ActionEdited       = "edited"
	// ActionApproved and ActionPromoted: a belief's review level raised by
	// a person's (or the model's) approval, or by the gates alone.
	ActionApproved = "approved"
	ActionPromoted = "promoted"
)

// Actions lists every action a history event may record.
var Actions = []string{ActionFormed, ActionReinforced, ActionContradicted, ActionPartial, ActionRevised, ActionSplit,
	ActionMerged, ActionArchived, ActionExpired, ActionSuperseded, ActionPinned, ActionDenied, ActionForgotten, ActionEdited,
	ActionApproved, ActionPromoted}

// ValidAction reports whether a is one of Actions.
func ValidAction(a string) bool {
	for _, x := range Actions {
		if x == a {
			return true
		}
	}
	return false
}

// MemoryIDRe matches an episode or a belief id as engram makes them (what
// the command line and an import accept).
var MemoryIDRe = regexp.MustCompile(`^(ep|bl)_[0-9a-f]{12}$`)

// storedIDRe is what an event's memory id must look like to be written:
// the id of a row of the store, whatever made it.
var storedIDRe = regexp.MustCompile(`^(ep|bl)_[0-9A-Za-z_-]{1,64}$`)

// Event is one change of one memory. Before and After hold values of that
// memory only (its statement, status, confidence, evidence, kind…), never
// another memory's text; Cause names what made the change (an episode or
// belief id, or a command); Detail says why, in words of engram's own.
type Event struct {
	Seq      int64          `json:"-"`
	At       time.Time      `json:"at"`
	MemoryID string         `json:"memory_id"`
	Action   string         `json:"action"`
	Cause    string         `json:"cause,omitempty"`
	Detail   string         `json:"detail,omitempty"`
	Before   map[string]any `json:"before,omitempty"`
	After    map[string]any `json:"after,omitempty"`
}

func (ev *Event) check() error {
	switch {
	case !storedIDRe.MatchString(ev.MemoryID):
		return fmt.Errorf("history event: memory id %q: want ep_… or bl_…", ev.MemoryID)
	case !ValidAction(ev.Action):
		return fmt.Errorf("history event of %s: unknown action %q", ev.MemoryID, ev.Action)
	case ev.At.IsZero():
		return fmt.Errorf("history event of %s: no time", ev.MemoryID)
	}
	return nil
}

func valuesJSON(v map[string]any) (string, error) {
	if len(v) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// insertEvent writes one event inside tx: the change and its record commit
// together or not at all.
func insertEvent(ctx context.Context, tx *sql.Tx, ev Event) error {
	if err := ev.check(); err != nil {
		return err
	}
	before, err := valuesJSON(ev.Before)
	if err != nil {
		return fmt.Errorf("history event of %s: %w", ev.MemoryID, err)
	}
	after, err := valuesJSON(ev.After)
	if err != nil {
		return fmt.Errorf("history event of %s: %w", ev.MemoryID, err)
	}
	_, err = tx.ExecContext(ctx, "INSERT INTO history(at, memory_id, action, cause, detail, before, after) VALUES (?,?,?,?,?,?,?)",
		ms(ev.At), ev.MemoryID, ev.Action, ev.Cause, ev.Detail, before, after)
	if err != nil {
		return fmt.Errorf("store: history of %s: %w", ev.MemoryID, err)
	}
	return nil
}

// RecordEvent writes an event in the transaction of the change it records.
func (t *BeliefTx) RecordEvent(ev Event) error { return insertEvent(t.ctx, t.tx, ev) }

// RecordEvents writes events in one transaction of their own, for a
// change that is not made through the store (or made before it).
func (db *DB) RecordEvents(ctx context.Context, evs ...Event) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, ev := range evs {
			if err := insertEvent(ctx, tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

const eventCols = "seq, at, memory_id, action, cause, detail, before, after"

func scanEvent(sc interface{ Scan(...any) error }) (Event, error) {
	var ev Event
	var at int64
	var before, after string
	if err := sc.Scan(&ev.Seq, &at, &ev.MemoryID, &ev.Action, &ev.Cause, &ev.Detail, &before, &after); err != nil {
		return ev, err
	}
	ev.At = fromMS(at)
	if before != "{}" {
		_ = json.Unmarshal([]byte(before), &ev.Before)
	}
	if after != "{}" {
		_ = json.Unmarshal([]byte(after), &ev.After)
	}
	return ev, nil
}

// History returns the events of one memory, oldest first.
func (db *DB) History(ctx context.Context, id string) ([]Event, error) {
	return db.events(ctx, "SELECT "+eventCols+" FROM history WHERE memory_id = ? ORDER BY seq", id)
}

// EachEvent calls fn for every event, oldest first.
func (db *DB) EachEvent(ctx context.Context, fn func(Event) error) error {
	rows, err := db.sql.QueryContext(ctx, "SELECT "+eventCols+" FROM history ORDER BY seq")
	if err != nil {
		return fmt.Errorf("store: history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return err
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (db *DB) events(ctx context.Context, q string, args ...any) ([]Event, error) {
	var out []Event
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

// forgetHistory replaces a forgotten memory's history by one 'forgotten'
// event with no values: what it said goes with it.
func forgetHistory(ctx context.Context, tx *sql.Tx, id string, at time.Time) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM history WHERE memory_id = ?", id); err != nil {
		return fmt.Errorf("store: forget the history of %s: %w", id, err)
	}
	return insertEvent(ctx, tx, Event{At: at, MemoryID: id, Action: ActionForgotten, Cause: "forget"})
}

// LifetimeEpisodes returns the live episodes a lifetime may end: the
// speculative ones, the commitments, and the facts less important than
// maxFactImportance.
func (db *DB) LifetimeEpisodes(ctx context.Context, maxFactImportance float64) ([]episode.Episode, error) {
	return db.queryEpisodes(ctx, "lifetime episodes", "SELECT "+episodeCols+` FROM episodes
		WHERE lifecycle = '' AND (speculative = 1 OR kind = 'commitment' OR (kind = 'fact' AND importance < ?)) ORDER BY seq`,
		maxFactImportance)
}

// LifecycleChange takes one episode out of recall.
type LifecycleChange struct {
	ID     string
	State  string // episode.LifecycleArchived, LifecycleExpired or LifecycleSuperseded
	Detail string // why, in engram's words
	// By is the episode that superseded it (LifecycleSuperseded; may be
	// empty when the correction is only known by its time).
	By string
}

// EndEpisodes applies lifecycle changes in one transaction, each with its
// history event ('archived' or 'expired', caused by consolidation). An
// episode gone or already out of recall is left alone. It returns how many
// changed.
func (db *DB) EndEpisodes(ctx context.Context, changes []LifecycleChange, at time.Time) (int, error) {
	n := 0
	err := db.write(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, c := range changes {
			done, err := endEpisode(ctx, tx, c, at)
			if err != nil {
				return err
			}
			if done {
				n++
			}
		}
		return nil
	})
	return n, err
}

// EndEpisode takes one episode out of recall inside a consolidation's
// transaction (a correction's supersedes commit with it); it reports
// whether the episode changed.
func (t *BeliefTx) EndEpisode(c LifecycleChange, at time.Time) (bool, error) {
	return endEpisode(t.ctx, t.tx, c, at)
}

func endEpisode(ctx context.Context, tx *sql.Tx, c LifecycleChange, at time.Time) (bool, error) {
	action := ActionArchived
	switch c.State {
	case episode.LifecycleArchived:
	case episode.LifecycleExpired:
		action = ActionExpired
	case episode.LifecycleSuperseded:
		action = ActionSuperseded
	default:
		return false, fmt.Errorf("store: episode %s: lifecycle %q", c.ID, c.State)
	}
	res, err := tx.ExecContext(ctx, "UPDATE episodes SET lifecycle = ?, updated_at = ? WHERE id = ? AND lifecycle = ''",
		c.State, ms(at), c.ID)
	if err != nil {
		return false, fmt.Errorf("store: end episode %s: %w", c.ID, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return false, nil
	}
	after := map[string]any{"lifecycle": c.State}
	cause := "consolidate"
	if c.By != "" {
		after["by"], cause = c.By, c.By
	}
	return true, insertEvent(ctx, tx, Event{At: at, MemoryID: c.ID, Action: action, Cause: cause, Detail: c.Detail,
		Before: map[string]any{"lifecycle": "live"}, After: after})
}

// Supersession is what the store knows of a correction that superseded an
// episode: when (the correcting episode's time; the supersession's when
// that episode is not known), by which episode (empty when only its time is known), and
// that episode's exchange (empty when it is not known or is forgotten).
type Supersession struct {
	At      time.Time
	By      string
	Context string // the superseding episode's exchange ("User: …")
}

// Supersessions returns the supersession of each superseded episode of
// ids (every superseded episode when ids is nil): the latest, when there
// were several, read from the history. The superseding episode's words are
// read from that episode, so that once it is forgotten nothing of it is
// left here.
func (db *DB) Supersessions(ctx context.Context, ids []string) (map[string]Supersession, error) {
	out := map[string]Supersession{}
	read := func(in string, args []any) error {
		rows, err := db.sql.QueryContext(ctx, `SELECT h.memory_id, coalesce(b.occurred_at, h.at), h.cause, coalesce(b.context, '')
			FROM history h LEFT JOIN episodes b ON b.id = h.cause
			WHERE h.action = 'superseded' AND h.memory_id IN (`+in+`) ORDER BY h.seq`, args...)
		if err != nil {
			return fmt.Errorf("store: supersessions: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, cause, context string
			var at int64
			if err := rows.Scan(&id, &at, &cause, &context); err != nil {
				return err
			}
			s := Supersession{At: fromMS(at)}
			if strings.HasPrefix(cause, "ep_") {
				s.By, s.Context = cause, context
			}
			out[id] = s
		}
		return rows.Err()
	}
	var err error
	if ids == nil {
		err = read("SELECT id FROM episodes WHERE lifecycle = 'superseded'", nil)
	} else {
		err = inChunks(ids, read)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
