package review

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

type fixture struct {
	t   *testing.T
	ctx context.Context
	db  *store.DB
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &fixture{t: t, ctx: ctx, db: db, now: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}
}

// belief stores a global belief; stated makes its supporting episode one
// the user said in so many words.
func (f *fixture) belief(statement string, confidence float64, evidence int, stated bool) string {
	f.t.Helper()
	ep := episode.Episode{ID: store.NewID("ep_"), Summary: statement, Context: "User: " + statement, Type: episode.TypePreference,
		Scope: episode.ScopeGlobal, Importance: 0.5, ContentHash: store.NewID("h"), OccurredAt: f.now, CreatedAt: f.now,
		Signals: []episode.Signal{{Kind: episode.SignalPreference, Text: statement, Subject: "x", Polarity: 1, Stated: stated}}}
	b := belief.Belief{ID: store.NewID("bl_"), Statement: statement, Timeframe: belief.TimeCurrent,
		Alpha: confidence * 10, Beta: (1 - confidence) * 10, Scope: episode.ScopeGlobal, Status: belief.StatusActive,
		EvidenceCount: evidence, Supporting: []string{ep.ID}, CreatedAt: f.now.Add(-48 * time.Hour)}
	if err := f.db.Import(f.ctx, []episode.Episode{ep}, []belief.Belief{b}); err != nil {
		f.t.Fatal(err)
	}
	return b.ID
}

func (f *fixture) level(id string) string {
	f.t.Helper()
	b, err := f.db.ReviewBelief(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return b.Level
}

func (f *fixture) advance(mode string, at time.Time) Stats {
	f.t.Helper()
	st, err := Advance(f.ctx, f.db, mode, at)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func TestAdvanceByMode(t *testing.T) {
	for _, tc := range []struct {
		mode                   string
		stated, sure, inferred string // level each reaches
		waiting                int
	}{
		{ModeOff, LongTerm, LongTerm, LongTerm, 0},
		{ModeUncertain, LongTerm, LongTerm, Pending, 1},
		{ModeAll, Pending, Pending, Pending, 3},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFixture(t)
			stated := f.belief("Never add emoji to commit messages.", 0.8, 3, true)
			sure := f.belief("User writes Go.", 0.9, 9, false)
			inferred := f.belief("User prefers short replies.", 0.75, 4, false)
			weak := f.belief("User likes tea.", 0.6, 2, false)
			st := f.advance(tc.mode, f.now)
			for id, want := range map[string]string{stated: tc.stated, sure: tc.sure, inferred: tc.inferred, weak: Pending} {
				if got := f.level(id); got != want {
					t.Errorf("%s: level %s, want %s", id, got, want)
				}
			}
			q, err := Queue(f.ctx, f.db, tc.mode, f.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(q) != tc.waiting || st.Waiting != tc.waiting {
				t.Errorf("queue %d, stats waiting %d, want %d", len(q), st.Waiting, tc.waiting)
			}
			for i := 1; i < len(q); i++ {
				if q[i].Score() > q[i-1].Score() {
					t.Errorf("queue not best first: %v", q)
				}
			}
		})
	}
}

func TestCoreGateAndApproval(t *testing.T) {
	f := newFixture(t)
	id := f.belief("User writes Go.", 0.9, 9, false)
	f.advance(ModeUncertain, f.now)
	if got := f.level(id); got != LongTerm {
		t.Fatalf("level %s, want long_term", got)
	}
	// Six days in long-term: not yet ready for core, and an approval says so.
	_, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Approve}}, f.now.Add(6*24*time.Hour))
	if err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "6 of 7 days") {
		t.Fatalf("early approval: %v", err)
	}
	later := f.now.Add(8 * 24 * time.Hour)
	f.advance(ModeUncertain, later) // uncertain: core waits for approval
	if got := f.level(id); got != LongTerm {
		t.Fatalf("level %s after a week in uncertain mode, want long_term", got)
	}
	q, _ := Queue(f.ctx, f.db, ModeUncertain, later)
	if len(q) != 1 || q[0].Proposed != Core {
		t.Fatalf("queue %+v, want the belief proposed for core", q)
	}
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Approve, Target: TargetAgents}}, later); err != nil {
		t.Fatal(err)
	}
	b, _ := f.db.ReviewBelief(f.ctx, id)
	if b.Level != Core || b.CoreTarget != TargetAgents {
		t.Fatalf("level %s target %q, want core agents", b.Level, b.CoreTarget)
	}
	ds, err := f.db.Decisions(f.ctx, id)
	if err != nil || len(ds) != 2 {
		t.Fatalf("decisions %+v %v, want the gates' and the user's", ds, err)
	}
	if d := ds[1]; d.Who != ByUser || d.Decision != Approve || d.Before != LongTerm || d.After != Core || !d.At.Equal(later) {
		t.Errorf("decision %+v", d)
	}
	// Off mode: the gates alone take a long-term belief to core.
	g := newFixture(t)
	id2 := g.belief("User writes Go.", 0.9, 9, false)
	g.advance(ModeOff, g.now)
	g.advance(ModeOff, g.now.Add(8*24*time.Hour))
	if got := g.level(id2); got != Core {
		t.Errorf("off mode after a week: %s, want core", got)
	}
}

func TestBadDecisionsChangeNothing(t *testing.T) {
	f := newFixture(t)
	a := f.belief("User prefers short replies.", 0.75, 4, false)
	weak := f.belief("User likes tea.", 0.6, 2, false)
	for _, tc := range []struct {
		reqs []Request
		want string
	}{
		{[]Request{{ID: a, Action: Deny}, {ID: "bl_nope", Action: Deny}}, `"bl_nope": no such belief`},
		{[]Request{{ID: weak, Action: Approve}}, weak + ": not ready for long-term memory (evidence 2 of 3"},
		{[]Request{{ID: a, Action: Approve, Target: "wiki"}}, `core target "wiki"`},
		{[]Request{{ID: a, Action: "frob"}}, `action "frob"`},
		{[]Request{{ID: a, Action: Deny}, {ID: a, Action: Pin}}, a + ": named twice"},
	} {
		_, err := Decide(f.ctx, f.db, ByUser, tc.reqs, f.now)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.reqs, err, tc.want)
		}
	}
	if f.level(a) != Pending || f.level(weak) != Pending {
		t.Fatal("a refused request changed a level")
	}
	if ds, _ := f.db.Decisions(f.ctx, a); len(ds) != 0 {
		t.Fatalf("decisions recorded: %+v", ds)
	}
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: a, Action: Deny}}, f.now); err != nil {
		t.Fatal(err)
	}
	_, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: a, Action: Deny}}, f.now)
	if err == nil || !strings.Contains(err.Error(), a+": already denied") {
		t.Fatalf("deny twice: %v", err)
	}
	// A stale decision (made against a level that changed) is refused by the store.
	err = f.db.Decide(f.ctx, []store.Decision{{BeliefID: a, Decision: Pin, Who: ByUser, At: f.now, Before: Pending, After: Pinned}})
	if !errors.Is(err, store.ErrLevelChanged) {
		t.Fatalf("stale decision: %v", err)
	}
	// A denied belief is never advanced, whatever the mode.
	f.advance(ModeOff, f.now.Add(30*24*time.Hour))
	if f.level(a) != Denied {
		t.Fatalf("denied belief advanced to %s", f.level(a))
	}
}

func TestEditKeepsLevelAndRecordsOldStatement(t *testing.T) {
	f := newFixture(t)
	id := f.belief("User prefers short replies.", 0.75, 4, false)
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Edit, Statement: "Keep replies under five lines."}}, f.now); err != nil {
		t.Fatal(err)
	}
	b, err := f.db.GetBelief(f.ctx, id)
	if err != nil || b.Statement != "Keep replies under five lines." {
		t.Fatalf("statement %q %v", b.Statement, err)
	}
	ds, _ := f.db.Decisions(f.ctx, id)
	if len(ds) != 1 || ds[0].Decision != Edit || ds[0].Note != "was: User prefers short replies." || ds[0].After != Pending {
		t.Fatalf("decisions %+v", ds)
	}
	// The user's own statement: it passes to long-term by itself.
	f.advance(ModeUncertain, f.now)
	if got := f.level(id); got != LongTerm {
		t.Fatalf("an edited belief is %s after a cycle, want long_term", got)
	}
}

func TestDeniedNotSurfaced(t *testing.T) {
	f := newFixture(t)
	a := f.belief("User prefers short replies.", 0.75, 4, false)
	b := f.belief("User writes Go.", 0.9, 9, false)
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: a, Action: Deny}}, f.now); err != nil {
		t.Fatal(err)
	}
	cards, err := f.db.SurfaceableBeliefs(f.ctx, 0.4)
	if err != nil {
		t.Fatal(err)
	}
	if len(cards) != 1 || cards[0].ID != b {
		t.Fatalf("surfaceable %+v, want only %s", cards, b)
	}
}

// TestForgetTakesTheDecisions: forgetting a belief forgets its level and
// the decisions about it (an edit's note quotes the old statement).
func TestForgetTakesTheDecisions(t *testing.T) {
	f := newFixture(t)
	id := f.belief("User prefers short replies.", 0.75, 4, false)
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Edit, Statement: "Keep replies short."}}, f.now); err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Pin}}, f.now); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Forget(f.ctx, nil, []string{id}); err != nil {
		t.Fatal(err)
	}
	if ds, err := f.db.Decisions(f.ctx, id); err != nil || len(ds) != 0 {
		t.Fatalf("decisions after forget: %+v %v", ds, err)
	}
	if ls, err := f.db.LevelRecords(f.ctx); err != nil || len(ls) != 0 {
		t.Fatalf("levels after forget: %+v %v", ls, err)
	}
}

// An edit is redacted before it is stored.
func TestEditRedacted(t *testing.T) {
	f := newFixture(t)
	id := f.belief("Deploys use a token.", 0.75, 4, false)
	secret := "ghp_" + strings.Repeat("a1B2c3D4e5", 4)
	if _, err := Decide(f.ctx, f.db, ByUser, []Request{{ID: id, Action: Edit, Statement: "Deploy with token " + secret}}, f.now); err != nil {
		t.Fatal(err)
	}
	b, err := f.db.GetBelief(f.ctx, id)
	if err != nil || strings.Contains(b.Statement, secret) || !strings.Contains(b.Statement, "[REDACTED") {
		t.Fatalf("statement %q %v", b.Statement, err)
	}
}
