package thread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/store"
)

// Trace is one thread of work: its boxes in time order.
type Trace struct {
	ID          string    `json:"id"`
	Label       string    `json:"label"`
	Project     string    `json:"project"`
	ProjectPath string    `json:"project_path"`
	First       time.Time `json:"first"`
	Last        time.Time `json:"last"`
	Sessions    int       `json:"sessions"`
	Boxes       []BoxView `json:"boxes"`
	Terms       []string  `json:"terms"`
	Memories    int       `json:"memories"`
}

// BoxView is a box of a trace with its key memories.
type BoxView struct {
	ID       string     `json:"id"`
	Opened   time.Time  `json:"opened"`
	Last     time.Time  `json:"last"`
	Sealed   string     `json:"sealed,omitempty"` // its seal reason; "" while open
	Terms    []string   `json:"terms"`
	Members  int        `json:"memories"`
	Sessions []string   `json:"sessions"`
	Key      []KeyEntry `json:"key_memories"`
}

// KeyEntry is one key memory of a box.
type KeyEntry struct {
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Summary string    `json:"summary"`
}

// ErrNoTrace: nothing matched.
var ErrNoTrace = errors.New("no thread of work matches")

// Traces lists every trace (of one project, its path, when projectPath is
// not ""), threads of several boxes first, then the latest active first.
func Traces(ctx context.Context, db *store.DB, projectPath string) ([]Trace, error) {
	boxes, err := db.AllBoxes(ctx)
	if err != nil {
		return nil, err
	}
	by := map[string]*Trace{}
	var order []string
	for _, b := range boxes {
		if b.TraceID == "" || projectPath != "" && b.ProjectPath != projectPath {
			continue
		}
		t := by[b.TraceID]
		if t == nil {
			t = &Trace{ID: b.TraceID, Project: b.Project, ProjectPath: b.ProjectPath, First: b.OpenedAt}
			by[b.TraceID] = t
			order = append(order, b.TraceID)
		}
		t.Boxes = append(t.Boxes, BoxView{ID: b.ID, Opened: b.OpenedAt, Last: b.LastAt, Sealed: b.SealReason, Terms: b.Terms, Members: b.Members})
		t.Memories += b.Members
		t.First = minTime(t.First, b.OpenedAt)
		if b.LastAt.After(t.Last) {
			t.Last = b.LastAt
		}
	}
	out := make([]Trace, 0, len(order))
	for _, id := range order {
		t := by[id]
		t.Terms = traceTerms(t.Boxes)
		t.Label = Label(t.Terms)
		out = append(out, *t)
	}
	single := func(t Trace) bool { return len(t.Boxes) == 1 }
	slices.SortStableFunc(out, func(a, b Trace) int {
		// threads of several boxes first, then the latest active first
		return cmp.Or(compareBool(single(a), single(b)), b.Last.Compare(a.Last))
	})
	return out, nil
}

// Find returns the trace a query names: a trace id (tr_…), a box id
// (bx_…) or an episode id (ep_…) gives the trace it is in; other words
// are a topic: the trace whose memories match its words best (full-text
// search over the episodes, each hit voting for its trace, the better
// hits more). With projectPath not "", only that project's threads are
// found.
func Find(ctx context.Context, db *store.DB, query, projectPath string) (Trace, error) {
	t, err := find(ctx, db, query, projectPath)
	if err == nil && projectPath != "" && t.ProjectPath != projectPath {
		return Trace{}, fmt.Errorf("%q is a thread of another project (%s): %w", query, t.Project, ErrNoTrace)
	}
	return t, err
}

func find(ctx context.Context, db *store.DB, query, projectPath string) (Trace, error) {
	q := strings.TrimSpace(query)
	switch {
	case strings.HasPrefix(q, "tr_") && !strings.ContainsAny(q, " \t"):
		return Load(ctx, db, q)
	case strings.HasPrefix(q, "bx_") && !strings.ContainsAny(q, " \t"):
		b, err := db.GetBox(ctx, q)
		if err != nil {
			return Trace{}, err
		}
		return traceOfBox(ctx, db, b)
	case strings.HasPrefix(q, "ep_") && !strings.ContainsAny(q, " \t"):
		if _, err := db.GetEpisode(ctx, q); err != nil {
			return Trace{}, err
		}
		id, err := db.BoxOf(ctx, q)
		if err != nil {
			return Trace{}, err
		}
		if id == "" {
			return Trace{}, fmt.Errorf("episode %s is in no box yet (the worker's next run boxes it): %w", q, ErrNoTrace)
		}
		b, err := db.GetBox(ctx, id)
		if err != nil {
			return Trace{}, err
		}
		return traceOfBox(ctx, db, b)
	}
	match := topicQuery(q)
	if match == "" {
		return Trace{}, fmt.Errorf("topic %q: no word to search for: %w", query, ErrNoTrace)
	}
	hits, err := db.SearchEpisodes(ctx, match, projectPath, 60)
	if err != nil {
		return Trace{}, err
	}
	votes := map[string]float64{}
	var order []string
	for i, h := range hits {
		box, err := db.BoxOf(ctx, h.ID)
		if err != nil {
			return Trace{}, err
		}
		if box == "" {
			continue
		}
		b, err := db.GetBox(ctx, box)
		if err != nil {
			return Trace{}, err
		}
		if projectPath != "" && b.ProjectPath != projectPath {
			continue // a global memory said in another project
		}
		key := b.TraceID
		if key == "" {
			key = b.ID // an open box: its trace is not woven yet
		}
		if _, ok := votes[key]; !ok {
			order = append(order, key)
		}
		votes[key] += 1 / float64(i+1)
	}
	if len(order) == 0 {
		return Trace{}, fmt.Errorf("topic %q: %w", query, ErrNoTrace)
	}
	best := order[0]
	for _, k := range order[1:] {
		if votes[k] > votes[best] {
			best = k
		}
	}
	if strings.HasPrefix(best, "bx_") {
		b, err := db.GetBox(ctx, best)
		if err != nil {
			return Trace{}, err
		}
		return traceOfBox(ctx, db, b)
	}
	return Load(ctx, db, best)
}

// topicQuery is an FTS5 query for a topic's words: each content word
// quoted, joined by OR.
func topicQuery(q string) string {
	var words []string
	for _, w := range lexicon.Words(strings.ToLower(q)) {
		if len(w) < 2 || lexicon.IsFunctionWord(w) {
			continue
		}
		words = append(words, `"`+strings.ReplaceAll(w, `"`, `""`)+`"`)
	}
	return strings.Join(words, " OR ")
}

// traceOfBox is the trace of box b, or b alone while it is open.
func traceOfBox(ctx context.Context, db *store.DB, b store.Box) (Trace, error) {
	if b.TraceID != "" {
		return Load(ctx, db, b.TraceID)
	}
	t := Trace{ID: "", Project: b.Project, ProjectPath: b.ProjectPath}
	if err := addBoxes(ctx, db, &t, []store.Box{b}); err != nil {
		return Trace{}, err
	}
	return t, nil
}

// Load returns one trace with its boxes and their key memories.
func Load(ctx context.Context, db *store.DB, traceID string) (Trace, error) {
	boxes, err := db.TraceBoxes(ctx, traceID)
	if err != nil {
		return Trace{}, err
	}
	if len(boxes) == 0 {
		return Trace{}, fmt.Errorf("trace %s: %w", traceID, store.ErrNotFound)
	}
	t := Trace{ID: traceID, Project: boxes[0].Project, ProjectPath: boxes[0].ProjectPath}
	if err := addBoxes(ctx, db, &t, boxes); err != nil {
		return Trace{}, err
	}
	return t, nil
}

func addBoxes(ctx context.Context, db *store.DB, t *Trace, boxes []store.Box) error {
	sessions := map[string]bool{}
	for i, b := range boxes {
		eps, err := db.BoxEpisodes(ctx, b.ID)
		if err != nil {
			return err
		}
		v := BoxView{ID: b.ID, Opened: b.OpenedAt, Last: b.LastAt, Sealed: b.SealReason, Terms: b.Terms, Members: b.Members}
		seen := map[string]bool{}
		for _, e := range eps {
			if e.SessionID != "" && !seen[e.SessionID] {
				seen[e.SessionID] = true
				v.Sessions = append(v.Sessions, e.SessionID)
				sessions[e.SessionID] = true
			}
		}
		for _, e := range Key(eps, keyMemories) {
			v.Key = append(v.Key, KeyEntry{ID: e.ID, At: e.OccurredAt, Summary: oneLine(e.Summary, 200)})
		}
		t.Boxes = append(t.Boxes, v)
		t.Memories += b.Members
		if i == 0 || b.OpenedAt.Before(t.First) {
			t.First = b.OpenedAt
		}
		if b.LastAt.After(t.Last) {
			t.Last = b.LastAt
		}
	}
	t.Sessions = len(sessions)
	t.Terms = traceTerms(t.Boxes)
	t.Label = Label(t.Terms)
	return nil
}

// traceTerms are a trace's key terms: its boxes' terms, by how many
// boxes hold each, then by rank within them.
func traceTerms(boxes []BoxView) []string {
	score := map[string]float64{}
	var order []string
	for _, b := range boxes {
		for i, t := range b.Terms {
			if _, ok := score[t]; !ok {
				order = append(order, t)
			}
			score[t] += 1 + 1/float64(i+2)
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(score[b], score[a]) })
	return order[:min(maxTerms, len(order))]
}

// WriteList writes traces one a line.
func WriteList(w io.Writer, ts []Trace) {
	if len(ts) == 0 {
		fmt.Fprintln(w, "no threads of work yet (the worker boxes episodes as they come; a box seals after a topic shift or 30 minutes without activity)")
		return
	}
	for _, t := range ts {
		fmt.Fprintf(w, "%s  %s … %s  %d boxes, %d memories  %s  %s\n", t.ID, t.First.Local().Format("2006-01-02"), t.Last.Local().Format("2006-01-02"),
			len(t.Boxes), t.Memories, cmp.Or(t.Project, "-"), t.Label)
	}
}

// WriteTimeline writes one trace as a timeline: each box with its dates,
// sessions, key terms and key memories.
func WriteTimeline(w io.Writer, t Trace) {
	id := t.ID
	if id == "" {
		id = "(not woven yet: its box is still open)"
	}
	fmt.Fprintf(w, "trace %s: %s\n", id, t.Label)
	if t.Project != "" || t.ProjectPath != "" {
		fmt.Fprintf(w, "project %s (%s)\n", t.Project, t.ProjectPath)
	}
	fmt.Fprintf(w, "%s … %s, %d boxes, %d sessions, %d memories\n\n", t.First.Local().Format("2006-01-02 15:04"), t.Last.Local().Format("2006-01-02 15:04"),
		len(t.Boxes), t.Sessions, t.Memories)
	for _, b := range t.Boxes {
		state := "sealed (" + b.Sealed + ")"
		if b.Sealed == "" {
			state = "open"
		}
		fmt.Fprintf(w, "%s  %s … %s  %s, %d memories, %d sessions\n", b.ID, b.Opened.Local().Format("2006-01-02 15:04"), b.Last.Local().Format("15:04"),
			state, b.Members, len(b.Sessions))
		if len(b.Terms) > 0 {
			fmt.Fprintf(w, "    about: %s\n", strings.Join(b.Terms, ", "))
		}
		for _, k := range b.Key {
			fmt.Fprintf(w, "    %s %s  %s\n", k.At.Local().Format("01-02 15:04"), k.ID, k.Summary)
		}
	}
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
