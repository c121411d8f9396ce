package consolidate

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func openDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "engram.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// fixture makes episodes with signals, as the local extractor would.
type fixture struct {
	tb  testing.TB
	db  *store.DB
	emb embed.Embedder
	n   int
}

func newFixture(tb testing.TB) *fixture {
	return &fixture{tb: tb, db: openDB(tb), emb: embed.NewLocal()}
}

func pref(subject string) episode.Signal {
	return episode.Signal{Kind: episode.SignalPreference, Subject: subject, Polarity: 1, Global: true,
		Text: "I prefer " + subject}
}

func avoid(subject string) episode.Signal {
	return episode.Signal{Kind: episode.SignalAvoid, Subject: subject, Polarity: -1, Global: true,
		Text: "I don't want " + subject}
}

func avoidFor(subject, purpose string) episode.Signal {
	return episode.Signal{Kind: episode.SignalAvoid, Subject: subject, Object: purpose, Polarity: -1, Global: true,
		Text: "not " + subject + " for " + purpose}
}

func fact(subject, value string) episode.Signal {
	return episode.Signal{Kind: episode.SignalFact, Subject: subject, Object: value, Polarity: 1,
		Text: "the " + subject + " is " + value}
}

// add stores one global episode at time at with the given summary and
// signals and returns its id.
func (f *fixture) add(at time.Time, summary string, sigs ...episode.Signal) string {
	return f.addIn(at, episode.ScopeGlobal, "", summary, sigs...)
}

func (f *fixture) addIn(at time.Time, scope, projectPath, summary string, sigs ...episode.Signal) string {
	f.tb.Helper()
	f.n++
	id := fmt.Sprintf("ep_%012x", f.n)
	vs, err := f.emb.Embed(context.Background(), []string{summary})
	if err != nil {
		f.tb.Fatal(err)
	}
	e := episode.Episode{ID: id, Summary: summary, Context: "User: " + summary, Signals: sigs, Importance: 0.6,
		Type: episode.TypePreference, Scope: scope, ProjectPath: projectPath, Project: filepath.Base(projectPath),
		SessionID: fmt.Sprintf("s%d", f.n), ContentHash: id, Embedding: vs[0], Embedder: f.emb.Name(),
		Extractor: "local", OccurredAt: at, CreatedAt: at, UpdatedAt: at}
	if err := f.db.ImportEpisodes(context.Background(), []episode.Episode{e}); err != nil {
		f.tb.Fatal(err)
	}
	return id
}

func (f *fixture) run(at time.Time, mod ...func(*Consolidator)) Stats {
	f.tb.Helper()
	c := &Consolidator{DB: f.db, Embedder: f.emb, Options: Options{Force: true}}
	for _, m := range mod {
		m(c)
	}
	st, err := c.Run(context.Background(), at)
	if err != nil {
		f.tb.Fatal(err)
	}
	return st
}

func (f *fixture) beliefs(status string) []belief.Belief {
	f.tb.Helper()
	bs, err := f.db.ListBeliefs(context.Background(), store.BeliefFilter{Status: status})
	if err != nil {
		f.tb.Fatal(err)
	}
	return bs
}

func (f *fixture) only(status string) belief.Belief {
	f.tb.Helper()
	bs := f.beliefs(status)
	if len(bs) != 1 {
		f.tb.Fatalf("%d %s beliefs, want 1: %+v", len(bs), status, statements(bs))
	}
	return bs[0]
}

func statements(bs []belief.Belief) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%s %q α=%v β=%v ev=%d %s", b.ID, b.Statement, b.Alpha, b.Beta, b.EvidenceCount, b.Status))
	}
	return out
}

func (f *fixture) ftsHas(statement string) bool {
	f.tb.Helper()
	n, err := f.db.CountBeliefFTS(context.Background(), statement)
	if err != nil {
		f.tb.Fatal(err)
	}
	return n > 0
}

func hours(h int) time.Duration { return time.Duration(h) * time.Hour }

func TestEmptyStoreFirstCycle(t *testing.T) {
	f := newFixture(t)
	st := f.run(t0, func(c *Consolidator) { c.Options.Force = false })
	if st.Skipped != "" || st.Episodes != 0 || st.Created != 0 {
		t.Fatalf("first cycle on an empty store: %+v", st)
	}
	cp, err := LoadCheckpoint(context.Background(), f.db)
	if err != nil || cp.Seq != 0 || !cp.At.Equal(t0) {
		t.Fatalf("checkpoint after the first cycle: %+v %v", cp, err)
	}
	// Not due again: no episodes, and the interval has not passed.
	st = f.run(t0.Add(time.Hour), func(c *Consolidator) { c.Options.Force = false })
	if st.Skipped == "" {
		t.Fatalf("second cycle ran: %+v", st)
	}
}

func TestTriggers(t *testing.T) {
	f := newFixture(t)
	f.run(t0)
	noForce := func(c *Consolidator) { c.Options.Force = false; c.Options.EpisodeThreshold = 3 }
	f.add(t0, "I prefer bun", pref("bun"))
	f.add(t0, "I prefer bun again", pref("bun"))
	if st := f.run(t0.Add(time.Hour), noForce); st.Skipped == "" {
		t.Fatalf("2 of 3 episodes ran a cycle: %+v", st)
	}
	f.add(t0, "bun please", pref("bun"))
	if st := f.run(t0.Add(time.Hour), noForce); st.Skipped != "" || st.Created != 1 {
		t.Fatalf("threshold reached: %+v", st)
	}
	// The interval alone triggers a cycle (decay and gates run with no
	// new episode).
	if st := f.run(t0.Add(2*time.Hour), noForce); st.Skipped == "" {
		t.Fatalf("ran before the interval: %+v", st)
	}
	if st := f.run(t0.Add(6*time.Hour), noForce); st.Skipped != "" {
		t.Fatalf("interval passed, not run: %+v", st)
	}
}

// A correction the user states runs a cycle at once, even one that
// states no new value of its own ("beanstalkd is gone"): the old value
// must stop being current now, not after the episode threshold.
func TestCorrectionTriggers(t *testing.T) {
	f := newFixture(t)
	f.run(t0)
	noForce := func(c *Consolidator) { c.Options.Force = false; c.Options.EpisodeThreshold = 20 }
	f.add(t0, "fixed the flaky login test")
	if st := f.run(t0.Add(time.Hour), noForce); st.Skipped == "" {
		t.Fatalf("an episode that states nothing ran a cycle: %+v", st)
	}
	f.add(t0, "beanstalkd is gone", episode.Signal{Kind: episode.SignalCorrection, Subject: "beanstalkd", Polarity: -1,
		Stated: true, Text: "beanstalkd is gone"})
	if st := f.run(t0.Add(time.Hour), noForce); st.Skipped != "" {
		t.Fatalf("a stated correction waited for the threshold: %+v", st)
	}
}

func TestSingletonsNeverBecomeBeliefs(t *testing.T) {
	f := newFixture(t)
	f.add(t0, "I prefer bun for scripts", pref("bun"))
	f.add(t0, "Never use testify", avoid("testify"))
	f.add(t0, "fixed the flaky login test")
	st := f.run(t0.Add(time.Hour))
	if st.Created != 0 || len(f.beliefs("")) != 0 {
		t.Fatalf("singletons made beliefs: %+v %v", st, statements(f.beliefs("")))
	}
	// Two more mentions of bun in later cycles: the earlier one is still in
	// the pool, and the third mention forms the belief.
	f.add(t0.Add(24*time.Hour), "bun is what I like to use", pref("bun"))
	if st := f.run(t0.Add(25 * time.Hour)); st.Created != 0 {
		t.Fatalf("two mentions made a belief: %+v", st)
	}
	f.add(t0.Add(48*time.Hour), "use bun, as always", pref("bun"))
	st = f.run(t0.Add(49 * time.Hour))
	if st.Created != 1 {
		t.Fatalf("third mention across cycles: %+v %v", st, statements(f.beliefs("")))
	}
	b := f.only(belief.StatusActive)
	if b.Statement != "User prefers bun." || b.Alpha != 4 || b.Beta != 1 || b.EvidenceCount != 3 || b.Scope != episode.ScopeGlobal {
		t.Fatalf("belief: %v", statements([]belief.Belief{b}))
	}
	if b.PeakConfidence != 0.8 || b.Subject != "bun" || b.Predicate != PredPrefers || !strings.HasPrefix(b.ID, "bl_") || len(b.ID) != 15 {
		t.Fatalf("belief fields: %+v", b)
	}
}

func TestReinforceAndNegation(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(4)))
	b := f.only(belief.StatusActive)
	f.add(t0.Add(hours(5)), "bun again please", pref("bun"))
	st := f.run(t0.Add(hours(6)))
	got := f.only(belief.StatusActive)
	if got.ID != b.ID || got.Alpha != 5 || got.Beta != 1 || got.EvidenceCount != 4 || st.Supported != 1 {
		t.Fatalf("reinforce: %+v %v", st, statements([]belief.Belief{got}))
	}
	// "I don't like bun" embeds close to "I like bun" but is a contradiction.
	f.add(t0.Add(hours(7)), "I don't like bun", avoid("bun"))
	st = f.run(t0.Add(hours(8)))
	got = f.only(belief.StatusActive)
	if got.Alpha != 5 || got.Beta != 2 || got.EvidenceCount != 5 || st.Contradicted != 1 || len(got.Contradicting) != 1 {
		t.Fatalf("negation: %+v %v", st, statements([]belief.Belief{got}))
	}
	// Running again counts nothing twice.
	st = f.run(t0.Add(hours(9)))
	if again := f.only(belief.StatusActive); again.Alpha != 5 || again.Beta != 2 || again.EvidenceCount != 5 {
		t.Fatalf("second run changed evidence: %+v %v", st, statements([]belief.Belief{again}))
	}
}

func TestBeliefAboutItself(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(4)))
	b := f.only(belief.StatusActive)
	// The model quotes the belief back; the summary carries its statement
	// and even a matching signal. That is the belief echoing itself.
	f.add(t0.Add(hours(5)), "Recalled: "+b.Statement+" So the assistant used it.", pref("bun"))
	f.run(t0.Add(hours(6)))
	if got := f.only(belief.StatusActive); got.Alpha != b.Alpha || got.EvidenceCount != b.EvidenceCount {
		t.Fatalf("a belief supported itself: %v", statements([]belief.Belief{got}))
	}
}

func TestContradictionStormRevisesOnce(t *testing.T) {
	f := newFixture(t)
	for i := range 4 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(5)))
	old := f.only(belief.StatusActive)
	if old.Alpha != 5 || old.PeakConfidence != 5.0/6 {
		t.Fatalf("before the storm: %v", statements([]belief.Belief{old}))
	}
	// Ten contradictions in a row, in one cycle.
	for i := range 10 {
		f.add(t0.Add(hours(10+i)), fmt.Sprintf("stop using bun, it broke again (%d)", i), avoid("bun"))
	}
	st := f.run(t0.Add(hours(30)))
	if st.Revised != 1 || st.Contradicted != 10 {
		t.Fatalf("storm: %+v", st)
	}
	revised := f.only(belief.StatusRevised)
	cur := f.only(belief.StatusActive)
	if revised.ID != old.ID || revised.Beta != 11 || revised.Timeframe != belief.TimePast || !slices.Equal(revised.Children, []string{cur.ID}) {
		t.Fatalf("old belief: %v children=%v timeframe=%s", statements([]belief.Belief{revised}), revised.Children, revised.Timeframe)
	}
	if cur.ID == old.ID || cur.ParentID != old.ID || cur.Statement != "User avoids bun." || cur.Alpha != 11 || cur.Beta != 1 ||
		cur.EvidenceCount != 10 || len(cur.Revisions) != 1 || cur.Revisions[0].OldStatement != old.Statement {
		t.Fatalf("new belief: %v parent=%s revisions=%+v", statements([]belief.Belief{cur}), cur.ParentID, cur.Revisions)
	}
	if !f.ftsHas("avoids") {
		t.Fatal("the revised belief is not in the FTS index")
	}
	// Another cycle with nothing new: no second revision.
	if st := f.run(t0.Add(hours(31))); st.Revised != 0 || st.Created != 0 {
		t.Fatalf("second cycle: %+v", st)
	}
}

func TestRevisionChain(t *testing.T) {
	f := newFixture(t)
	at := t0
	step := func() time.Time { at = at.Add(time.Hour); return at }
	for range 3 {
		f.add(step(), "I prefer bun", pref("bun"))
	}
	f.run(step())
	for range 6 {
		f.add(step(), "stop using bun", avoid("bun"))
	}
	f.run(step())
	mid := f.only(belief.StatusActive)
	if mid.Statement != "User avoids bun." {
		t.Fatalf("first revision: %v", statements(f.beliefs("")))
	}
	for range 13 {
		f.add(step(), "bun is great now, use it", pref("bun"))
	}
	st := f.run(step())
	if st.Revised != 1 {
		t.Fatalf("second revision: %+v %v", st, statements(f.beliefs("")))
	}
	last := f.only(belief.StatusActive)
	if last.Statement != "User prefers bun." || last.ParentID != mid.ID || len(last.Revisions) != 2 ||
		last.Revisions[0].OldStatement != "User prefers bun." || last.Revisions[1].OldStatement != "User avoids bun." {
		t.Fatalf("chain: %v revisions=%+v", statements([]belief.Belief{last}), last.Revisions)
	}
	if n := len(f.beliefs(belief.StatusRevised)); n != 2 {
		t.Fatalf("%d revised beliefs, want 2", n)
	}
}

func TestDestabilizationThresholdProtectsOldBeliefs(t *testing.T) {
	f := newFixture(t)
	created := t0.Add(-365 * 24 * time.Hour)
	var sup, con []string
	for i := range 10 {
		sup = append(sup, f.add(created.Add(hours(i)), "I prefer bun", pref("bun")))
	}
	for i := range 17 {
		con = append(con, f.add(created.Add(hours(100+i)), "no bun", avoid("bun")))
	}
	// Support after most contradictions: the streak is the 3 after it.
	sup = append(sup, f.add(created.Add(hours(200)), "bun is fine", pref("bun")))
	for i := range 3 {
		con = append(con, f.add(created.Add(hours(300+i)), "no bun", avoid("bun")))
	}
	b := belief.Belief{ID: "bl_000000000001", Statement: "User prefers bun.", Subject: "bun", Predicate: PredPrefers,
		Scope: episode.ScopeGlobal, Alpha: 12, Beta: 21, Supporting: sup, Contradicting: con, Status: belief.StatusActive,
		EvidenceCount: 31, Stability: 1, PeakConfidence: 0.9, CreatedAt: created, UpdatedAt: created,
		LastReinforcedAt: t0.Add(-hours(24))}
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	thr := belief.DestabilizationThreshold(b.EvidenceCount, b.CreatedAt, t0)
	if !ReviseGate(&b) || thr < 3 {
		t.Fatalf("set-up: gate %v threshold %v", ReviseGate(&b), thr)
	}
	st := f.run(t0)
	if st.Revised != 0 {
		t.Fatalf("a streak of 3 revised a belief with threshold %.2f: %+v", thr, st)
	}
	// A longer streak passes the threshold.
	for i := range int(thr) + 1 {
		f.add(t0.Add(hours(1+i)), "no bun, really", avoid("bun"))
	}
	if st := f.run(t0.Add(hours(48))); st.Revised != 1 {
		t.Fatalf("a streak of %d did not revise (threshold %.2f): %+v %v", 3+int(thr)+1, thr, st, statements(f.beliefs("")))
	}
}

func TestSplit(t *testing.T) {
	f := newFixture(t)
	var sup, con, par []string
	for i := range 4 {
		sup = append(sup, f.add(t0.Add(hours(i)), "use bun for scripts", pref("bun")))
	}
	for i := range 3 {
		con = append(con, f.add(t0.Add(hours(10+i)), "bun is not for production", avoidFor("bun", "production")))
	}
	for i := range 2 {
		par = append(par, f.add(t0.Add(hours(20+i)), "no bun for production deploys", avoidFor("bun", "production")))
	}
	b := belief.Belief{ID: "bl_00000000000a", Statement: "User prefers bun.", Subject: "bun", Predicate: PredPrefers,
		Scope: episode.ScopeGlobal, Alpha: 5, Beta: 4, Supporting: sup, Contradicting: con, Partial: par,
		Status: belief.StatusActive, EvidenceCount: 9, Stability: 1, PeakConfidence: 0.8, CreatedAt: t0, UpdatedAt: t0,
		LastReinforcedAt: t0}
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{b}); err != nil {
		t.Fatal(err)
	}
	st := f.run(t0.Add(hours(30)))
	if st.Split != 1 {
		t.Fatalf("no split: %+v %v", st, statements(f.beliefs("")))
	}
	parent := f.only(belief.StatusSplit)
	kids := f.beliefs(belief.StatusActive)
	if len(kids) != 2 || len(parent.Children) != 2 {
		t.Fatalf("children: %v parent.children=%v", statements(kids), parent.Children)
	}
	byStatement := map[string]belief.Belief{}
	for _, k := range kids {
		if k.ParentID != parent.ID || !slices.Contains(parent.Children, k.ID) || k.ID == parent.ID {
			t.Fatalf("lineage: %+v", k)
		}
		byStatement[k.Statement] = k
	}
	a, okA := byStatement["User prefers bun."]
	c, okC := byStatement["User avoids bun for production."]
	if !okA || !okC {
		t.Fatalf("child statements: %v", statements(kids))
	}
	if !slices.Equal(a.Supporting, sup) || a.EvidenceCount != 4 || a.Alpha != 5 {
		t.Fatalf("evidence of the first child: %v %v", statements([]belief.Belief{a}), a.Supporting)
	}
	if !slices.Equal(c.Supporting, slices.Concat(con, par)) || c.EvidenceCount != 5 || c.Alpha != 6 {
		t.Fatalf("evidence of the second child: %v %v", statements([]belief.Belief{c}), c.Supporting)
	}
	if !f.ftsHas("production") {
		t.Fatal("the split child is not in the FTS index")
	}
}

func TestMerge(t *testing.T) {
	f := newFixture(t)
	vs, _ := f.emb.Embed(context.Background(), []string{"User prefers table-driven tests in Go"})
	old := t0.Add(-30 * 24 * time.Hour)
	e1, e2, e3, e4 := f.add(old, "a"), f.add(old, "b"), f.add(old, "c"), f.add(old, "d")
	mk := func(id, statement string, sup []string, created time.Time) belief.Belief {
		return belief.Belief{ID: id, Statement: statement, Subject: "table-driven tests", Predicate: "likes writing",
			Scope: episode.ScopeGlobal, Alpha: 1 + float64(len(sup)), Beta: 1, Supporting: sup, Status: belief.StatusActive,
			EvidenceCount: len(sup), Stability: 1, PeakConfidence: 0.8, Embedding: vs[0], Embedder: f.emb.Name(),
			CreatedAt: created, UpdatedAt: created, LastReinforcedAt: created}
	}
	a := mk("bl_00000000000a", "User prefers table-driven tests in Go", []string{e1, e2, e3}, old)
	b := mk("bl_00000000000b", "User likes table driven tests for Go code", []string{e3, e4}, old.Add(time.Hour))
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{a, b}); err != nil {
		t.Fatal(err)
	}
	// Not while one of them was updated within 7 days.
	if st := f.run(old.Add(3 * 24 * time.Hour)); st.Merged != 0 {
		t.Fatalf("merged a recently updated belief: %+v", st)
	}
	st := f.run(t0)
	if st.Merged != 1 {
		t.Fatalf("no merge: %+v %v", st, statements(f.beliefs("")))
	}
	kept := f.only(belief.StatusActive)
	gone := f.only(belief.StatusMerged)
	if kept.ID != a.ID || gone.ID != b.ID || !slices.Equal(gone.Children, []string{a.ID}) {
		t.Fatalf("merge bookkeeping: kept %v gone %v", statements([]belief.Belief{kept}), statements([]belief.Belief{gone}))
	}
	if !slices.Equal(kept.Supporting, []string{e1, e2, e3, e4}) || kept.Alpha != 5 || kept.EvidenceCount != 4 ||
		len(kept.Revisions) != 1 || kept.Revisions[0].Reason != "merged "+b.ID {
		t.Fatalf("evidence moved: %v %v %+v", statements([]belief.Belief{kept}), kept.Supporting, kept.Revisions)
	}
}

func TestArchiveGate(t *testing.T) {
	f := newFixture(t)
	weak := belief.Belief{ID: "bl_0000000000a1", Statement: "User prefers tabs.", Subject: "tabs", Predicate: PredPrefers,
		Scope: episode.ScopeGlobal, Alpha: 1, Beta: 4, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1,
		PeakConfidence: 0.5, CreatedAt: t0, UpdatedAt: t0, LastReinforcedAt: t0}
	stale := belief.Belief{ID: "bl_0000000000a2", Statement: "User prefers vim.", Subject: "vim", Predicate: PredPrefers,
		Scope: episode.ScopeGlobal, Alpha: 4, Beta: 1, Status: belief.StatusActive, EvidenceCount: 3, Stability: 1,
		PeakConfidence: 0.8, CreatedAt: t0.Add(-100 * 24 * time.Hour), UpdatedAt: t0.Add(-91 * 24 * time.Hour),
		LastReinforcedAt: t0.Add(-91 * 24 * time.Hour)}
	staleStrong := stale
	staleStrong.ID, staleStrong.Statement, staleStrong.Subject, staleStrong.EvidenceCount, staleStrong.Alpha =
		"bl_0000000000a3", "User prefers go.", "go", 5, 6
	fresh := stale
	fresh.ID, fresh.Statement, fresh.Subject, fresh.LastReinforcedAt = "bl_0000000000a4", "User prefers zsh.", "zsh", t0.Add(-89*24*time.Hour)
	if err := f.db.ImportBeliefs(context.Background(), []belief.Belief{weak, stale, staleStrong, fresh}); err != nil {
		t.Fatal(err)
	}
	st := f.run(t0)
	if st.Archived != 2 {
		t.Fatalf("archived %d: %v", st.Archived, statements(f.beliefs("")))
	}
	var archived []string
	for _, b := range f.beliefs(belief.StatusArchived) {
		archived = append(archived, b.ID)
	}
	slices.Sort(archived)
	if !slices.Equal(archived, []string{weak.ID, stale.ID}) {
		t.Fatalf("archived %v", archived)
	}
}

func TestGates(t *testing.T) {
	now := t0
	ids := func(n int) []string { return make([]string, n) }
	base := func() belief.Belief {
		return belief.Belief{Alpha: 4, Beta: 4, Supporting: ids(3), Contradicting: ids(3), Partial: ids(2), EvidenceCount: 8,
			PeakConfidence: 0.8, Status: belief.StatusActive, Scope: "global", CreatedAt: now}
	}
	b := base()
	if !SplitGate(&b) {
		t.Error("split gate closed at its minimums")
	}
	for name, mod := range map[string]func(*belief.Belief){
		"2 contradictions": func(b *belief.Belief) { b.Contradicting = ids(2) },
		"2 supports":       func(b *belief.Belief) { b.Supporting = ids(2) },
		"1 partial":        func(b *belief.Belief) { b.Partial = ids(1) },
		"evidence 4":       func(b *belief.Belief) { b.EvidenceCount = 4 },
	} {
		b := base()
		mod(&b)
		if SplitGate(&b) {
			t.Errorf("split gate open with %s", name)
		}
	}
	r := belief.Belief{Alpha: 2, Beta: 4, Contradicting: ids(3), EvidenceCount: 5, PeakConfidence: 0.51}
	if !ReviseGate(&r) {
		t.Error("revise gate closed at its minimums")
	}
	for name, mod := range map[string]func(*belief.Belief){
		"confidence 0.4": func(b *belief.Belief) { b.Alpha, b.Beta = 2, 3 },
		"peak 0.5":       func(b *belief.Belief) { b.PeakConfidence = 0.5 },
		"2 contradicted": func(b *belief.Belief) { b.Contradicting = ids(2) },
		"evidence 4":     func(b *belief.Belief) { b.EvidenceCount = 4 },
	} {
		b := r
		mod(&b)
		if ReviseGate(&b) {
			t.Errorf("revise gate open with %s", name)
		}
	}
	a := belief.Belief{Alpha: 3, Beta: 7, EvidenceCount: 10, CreatedAt: now, LastReinforcedAt: now}
	if ArchiveGate(&a, now) {
		t.Error("archived at confidence 0.3")
	}
	a.Beta = 7.1
	if !ArchiveGate(&a, now) {
		t.Error("not archived below 0.3")
	}
	m1 := belief.Belief{Alpha: 7, Beta: 3, Status: belief.StatusActive, Scope: "project", ProjectPath: "/p", UpdatedAt: now.Add(-MergeQuiet)}
	m2 := m1
	if !MergeGate(&m1, &m2, 0.93, now) {
		t.Error("merge gate closed at its minimums")
	}
	for name, mod := range map[string]func(*belief.Belief){
		"other project":  func(b *belief.Belief) { b.ProjectPath = "/q" },
		"confidence 0.6": func(b *belief.Belief) { b.Alpha, b.Beta = 6, 4 },
		"updated 6 days": func(b *belief.Belief) { b.UpdatedAt = now.Add(-6 * 24 * time.Hour) },
		"archived":       func(b *belief.Belief) { b.Status = belief.StatusArchived },
	} {
		b := m2
		mod(&b)
		if MergeGate(&m1, &b, 0.93, now) {
			t.Errorf("merge gate open with %s", name)
		}
	}
	if MergeGate(&m1, &m2, 0.92, now) {
		t.Error("merge gate open at similarity 0.92")
	}
}

func TestScopesStaySeparate(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.addIn(t0.Add(hours(i)), episode.ScopeProject, "/src/api", "use zap for logging", pref("zap"))
	}
	for i := range 2 {
		f.addIn(t0.Add(hours(i)), episode.ScopeProject, "/src/web", "use zap", pref("zap"))
	}
	f.run(t0.Add(hours(5)))
	b := f.only(belief.StatusActive)
	if b.Scope != episode.ScopeProject || b.ProjectPath != "/src/api" || b.Statement != "Project api prefers zap." || b.EvidenceCount != 3 {
		t.Fatalf("project belief: %v %s", statements([]belief.Belief{b}), b.ProjectPath)
	}
}

func TestFacts(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.addIn(t0.Add(hours(i)), episode.ScopeProject, "/src/api", "the api port is 8080", fact("api port", "8080"))
	}
	f.run(t0.Add(hours(4)))
	b := f.only(belief.StatusActive)
	if b.Statement != "In project api, api port is 8080." {
		t.Fatalf("fact belief: %v", statements([]belief.Belief{b}))
	}
	f.addIn(t0.Add(hours(5)), episode.ScopeProject, "/src/api", "moved the api to port 9090", fact("api port", "9090"))
	f.run(t0.Add(hours(6)))
	if got := f.only(belief.StatusActive); got.Beta != 2 || len(got.Contradicting) != 1 {
		t.Fatalf("a new value did not contradict: %v", statements([]belief.Belief{got}))
	}
}

func TestForgottenDuringCycleStaysGone(t *testing.T) {
	f := newFixture(t)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	f.run(t0.Add(hours(4)))
	b := f.only(belief.StatusActive)
	f.add(t0.Add(hours(5)), "bun", pref("bun"))
	// A judge that forgets the belief the moment it is consulted.
	j := &forgetting{db: f.db, id: b.ID}
	st := f.run(t0.Add(hours(6)), func(c *Consolidator) { c.Judge = j })
	if len(f.beliefs("")) != 0 {
		t.Fatalf("a forgotten belief came back: %+v %v", st, statements(f.beliefs("")))
	}
}

type forgetting struct {
	Local
	db   *store.DB
	id   string
	done bool
}

func (j *forgetting) Name() string { return "forgetting" }

func (j *forgetting) Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (Relation, error) {
	if !j.done {
		j.done = true
		if err := j.db.DeleteBelief(ctx, j.id); err != nil {
			return "", err
		}
	}
	return Local{}.Classify(ctx, b, e)
}

// counting is a costly judge (not Local): it counts its syntheses.
type counting struct {
	Local
	syntheses int
}

func (j *counting) Name() string { return "counting" }

func (j *counting) Synthesize(ctx context.Context, g Group) ([]Candidate, error) {
	j.syntheses++
	return Local{}.Synthesize(ctx, g)
}

func TestClusterBudgetDefersAndResumes(t *testing.T) {
	f := newFixture(t)
	subjects := []string{"bun", "zap", "vim", "tmux", "rust", "deno"}
	for i, s := range subjects {
		for k := range 3 {
			f.add(t0.Add(hours(i*3+k)), "I prefer "+s, pref(s))
		}
	}
	j := &counting{}
	st := f.run(t0.Add(hours(30)), func(c *Consolidator) { c.Judge = j; c.Options.MaxClusters = 4 })
	if !st.Deferred || st.Worked != 4 || st.Created != 4 || j.syntheses != 4 {
		t.Fatalf("first cycle: %+v syntheses=%d", st, j.syntheses)
	}
	st = f.run(t0.Add(hours(31)), func(c *Consolidator) { c.Judge = j; c.Options.MaxClusters = 4 })
	if st.Deferred || st.Created != 2 {
		t.Fatalf("second cycle: %+v", st)
	}
	bs := f.beliefs(belief.StatusActive)
	if len(bs) != len(subjects) {
		t.Fatalf("beliefs: %v", statements(bs))
	}
	for _, b := range bs {
		if b.EvidenceCount != 3 || b.Alpha != 4 {
			t.Fatalf("evidence counted twice: %v", statements([]belief.Belief{b}))
		}
	}
}
