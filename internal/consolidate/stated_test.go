package consolidate_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/portable"
	"github.com/engram-memory/engram/internal/store"
)

// statedWorld captures turns, ingests them with the local extractor and
// consolidates with the local judge, at the time of their day.
type statedWorld struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	offset map[string]int64
	n      int
	// x reads the turns; nil: extract.NewLocal().
	x extract.Extractor
}

func newStatedWorld(t *testing.T) *statedWorld {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "engram.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &statedWorld{t: t, ctx: ctx, db: db, offset: map[string]int64{}}
}

// day says the turns (one session each) on day d and runs a cycle.
func (w *statedWorld) day(d int, turns ...string) consolidate.Stats {
	w.t.Helper()
	now := day0.Add(time.Duration(d) * 24 * time.Hour)
	for i, u := range turns {
		w.n++
		capture(w.t, w.db, fmt.Sprintf("d%d-s%d-%d", d, i, w.n), now.Add(time.Duration(i)*time.Minute), u, w.offset)
	}
	emb := embed.NewLocal()
	var x extract.Extractor = extract.NewLocal()
	if w.x != nil {
		x = w.x
	}
	p := &ingest.Pipeline{DB: w.db, Extractor: x, Embedder: emb, Log: logx.Discard(), Concurrency: 1,
		Now: func() time.Time { return now }}
	if _, err := p.Run(w.ctx); err != nil {
		w.t.Fatal(err)
	}
	c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: emb, Options: consolidate.Options{Force: true}}
	st, err := c.Run(w.ctx, now.Add(time.Hour))
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// find returns the belief with this statement (the newest when several),
// or nil. A stated belief reads in the user's words; the statement the
// local judge renders of its subject, predicate and context ("User
// prefers bun.", "In project tools, database is postgres.") names it too.
func (w *statedWorld) find(statement string) *belief.Belief {
	w.t.Helper()
	all, err := w.db.ListBeliefs(w.ctx, store.BeliefFilter{})
	if err != nil {
		w.t.Fatal(err)
	}
	var out *belief.Belief
	for i := range all {
		b := &all[i]
		if b.Statement == statement || consolidate.Render(b.Scope, b.Project, b.Subject, b.Predicate, b.Context) == statement {
			out = b
		}
	}
	return out
}

func (w *statedWorld) dump() {
	all, _ := w.db.ListBeliefs(w.ctx, store.BeliefFilter{})
	for _, b := range all {
		w.t.Logf("   %s %-8s %-7s α=%-2v β=%-2v evidence=%-2d %q", b.ID, b.Status, b.Scope, b.Alpha, b.Beta, b.EvidenceCount, b.Statement)
	}
}

// expect checks a belief's state.
func (w *statedWorld) expect(statement, status string, alpha, beta float64) *belief.Belief {
	w.t.Helper()
	b := w.find(statement)
	switch {
	case b == nil:
		w.dump()
		w.t.Fatalf("no belief %q", statement)
	case b.Status != status || b.Alpha != alpha || b.Beta != beta:
		w.dump()
		w.t.Fatalf("%q: %s α=%v β=%v, want %s α=%v β=%v", statement, b.Status, b.Alpha, b.Beta, status, alpha, beta)
	}
	return b
}

// TestStatedScenario: the sessions of the LLM scenario, offline. One
// statement forms a belief (Beta(1+3, 1)); each restatement weighs three;
// a switch away retires it at once and the old preference never comes
// back, not even when the history is consolidated again.
func TestStatedScenario(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "I prefer bun for my scripts, please use it to run this one", "I prefer tabs for indentation in my own code")
	w.expect("User prefers bun.", belief.StatusActive, 4, 1)
	w.expect("User prefers tab.", belief.StatusActive, 4, 1)
	if b := w.find("User prefers bun."); b.EvidenceCount != belief.StatedWeight || len(b.Supporting) != 1 {
		t.Fatalf("one statement: evidence %d, supporting %v; want %d and one episode", b.EvidenceCount, b.Supporting, belief.StatedWeight)
	}
	w.day(2, "I always prefer bun over node for small scripts like this migration helper", "Please indent with tabs, I prefer tabs everywhere")
	w.day(3, "I prefer bun when running the seed script as well", "I prefer tabs over spaces in every file I write")
	w.day(4, "Use bun for the seed script too, I prefer it")
	bun := w.expect("User prefers bun.", belief.StatusActive, 13, 1)
	w.expect("User prefers tab.", belief.StatusActive, 10, 1)
	if b := w.find("User avoids node."); b != nil {
		// "bun over node" says which to pick, not that node is avoided.
		t.Errorf("a comparative made an avoidance: %q", b.Statement)
	}

	// One switch away is enough.
	st := w.day(5, "Stop using bun, it keeps crashing on this machine; switch to node")
	if st.Revised < 1 {
		t.Errorf("day 5: %d revised, want the bun preference revised at once", st.Revised)
	}
	old := w.expect("User prefers bun.", belief.StatusRevised, 13, 4)
	if len(old.Revisions) != 1 || old.Revisions[0].OldStatement != "I prefer bun for my scripts." {
		t.Errorf("revision history %+v, want the correction recorded", old.Revisions)
	}
	nb := w.expect("Project tools avoids bun.", belief.StatusActive, 4, 1)
	if nb.ParentID != bun.ID || len(old.Children) != 1 || old.Children[0] != nb.ID {
		t.Errorf("lineage: new parent %q, old children %v; want %s → %s", nb.ParentID, old.Children, bun.ID, nb.ID)
	}
	w.expect("Project tools prefers node.", belief.StatusActive, 4, 1)

	// Saying it again reinforces the new belief; the old one stays gone.
	w.day(6, "Never use bun in this repo, it broke the deploy pipeline yesterday")
	w.expect("Project tools avoids bun.", belief.StatusActive, 7, 1)

	// The whole history consolidated again: the episodes that stated the
	// old preference predate its correction.
	if err := w.db.SetMeta(w.ctx, consolidate.CheckpointKey, `{"seq":0}`); err != nil {
		t.Fatal(err)
	}
	w.day(7)
	for _, b := range mustList(t, w.db) {
		if b.Status == belief.StatusActive && b.Subject == "bun" && b.Predicate == consolidate.PredPrefers {
			w.dump()
			t.Fatalf("the corrected preference came back: %q", b.Statement)
		}
	}
	w.expect("Project tools avoids bun.", belief.StatusActive, 7, 1)
}

// TestStatedFactCorrected: "our database is Postgres", then "actually we
// moved from Postgres to SQLite": the fact is replaced in the same cycle.
func TestStatedFactCorrected(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "our database is Postgres")
	old := w.expect("In project tools, database is postgres.", belief.StatusActive, 4, 1)
	w.day(2, "Actually we moved from Postgres to SQLite last week")
	w.expect("In project tools, database is postgres.", belief.StatusRevised, 4, 4)
	nb := w.expect("In project tools, database is sqlite.", belief.StatusActive, 4, 1)
	if nb.ParentID != old.ID {
		t.Errorf("new fact's parent %q, want %s", nb.ParentID, old.ID)
	}
	// An old session mentioning Postgres, captured late (a backfill), does
	// not bring it back.
	w.n++
	capture(t, w.db, "late-session", day0.Add(12*time.Hour), "our database is Postgres", w.offset)
	w.day(3)
	for _, b := range mustList(t, w.db) {
		if b.Status == belief.StatusActive && b.Context == "postgres" {
			w.dump()
			t.Fatalf("the corrected fact came back: %q", b.Statement)
		}
	}
}

// TestStatedScopeAndParaphrases: four wordings of one preference in four
// sessions make one belief; the scope is the statement's; a question or a
// hedge makes none.
func TestStatedScopeAndParaphrases(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "in Go projects I prefer table-driven tests and I never use testify")
	w.day(2, "please use table-driven tests for everything in Go, I prefer them")
	w.day(3, "reminder: table-driven tests are what I prefer, no testify")
	w.day(4, "in Go projects I prefer table-driven tests, as always")
	w.expect("User prefers table-driven test.", belief.StatusActive, 13, 1)
	w.expect("User avoids testify.", belief.StatusActive, 7, 1)
	w.day(5, "should we add emoji to commit messages?", "maybe we should try pnpm?", "this service deploys to Fly.io")
	w.expect("In project tools, deploy target is fly.io.", belief.StatusActive, 4, 1)
	for _, b := range mustList(t, w.db) {
		if b.Subject == "emoji" || b.Subject == "pnpm" {
			t.Errorf("a question or a hedge made a belief: %q", b.Statement)
		}
	}
	n := len(mustList(t, w.db))
	if n != 3 {
		w.dump()
		t.Errorf("%d beliefs, want 3", n)
	}
	// The correction of the sixth session retires the preference.
	w.day(6, "we dropped table-driven tests, use plain subtests now")
	w.expect("User prefers table-driven test.", belief.StatusRevised, 13, 4)
}

func mustList(t *testing.T, db *store.DB) []belief.Belief {
	t.Helper()
	all, err := db.ListBeliefs(context.Background(), store.BeliefFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestLocalJudgeWorksEverything: with the local judge one cycle works
// through every pending episode, batch by batch, and says how far it got.
func TestLocalJudgeWorksEverything(t *testing.T) {
	w := newStatedWorld(t)
	now := day0.Add(24 * time.Hour)
	for i := range 35 {
		capture(t, w.db, fmt.Sprintf("s%d", i), now.Add(time.Duration(i)*time.Minute),
			fmt.Sprintf("please look at file number %d and tell me what it does", i), w.offset)
	}
	capture(t, w.db, "s-last", now.Add(time.Hour), "never add emoji to commit messages", w.offset)
	emb := embed.NewLocal()
	var x extract.Extractor = extract.NewLocal()
	if w.x != nil {
		x = w.x
	}
	p := &ingest.Pipeline{DB: w.db, Extractor: x, Embedder: emb, Log: logx.Discard(), Concurrency: 1,
		Now: func() time.Time { return now }}
	if _, err := p.Run(w.ctx); err != nil {
		t.Fatal(err)
	}
	total, err := w.db.CountEpisodesAfter(w.ctx, 0)
	if err != nil || total < 21 {
		t.Fatalf("%d episodes (%v), want more than two batches", total, err)
	}
	var calls [][2]int
	c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: emb, Options: consolidate.Options{
		Force: true, MaxEpisodes: 10, Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }}}
	st, err := c.Run(w.ctx, now.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st.Deferred || st.Episodes != total {
		t.Errorf("stats %+v: want all %d episodes worked in one cycle, not deferred", st, total)
	}
	if len(calls) != (total+9)/10 || calls[len(calls)-1] != [2]int{total, total} {
		t.Errorf("progress calls %v, want %d batches ending at %d/%d", calls, (total+9)/10, total, total)
	}
	w.expect("User avoids emoji.", belief.StatusActive, 4, 1)
	cp, err := consolidate.LoadCheckpoint(w.ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := w.db.CountEpisodesAfter(w.ctx, cp.Seq); n != 0 {
		t.Errorf("%d episodes left after the checkpoint, want 0", n)
	}
}

// TestStatedTriggersCycle: one explicit statement makes the next cycle
// consolidate, though the episode and time triggers are far off; chatter
// does not.
func TestStatedTriggersCycle(t *testing.T) {
	w := newStatedWorld(t)
	now := day0
	run := func(text string) consolidate.Stats {
		now = now.Add(time.Hour)
		w.n++
		capture(t, w.db, fmt.Sprintf("s%d", w.n), now, text, w.offset)
		var x extract.Extractor = extract.NewLocal()
		if w.x != nil {
			x = w.x
		}
		p := &ingest.Pipeline{DB: w.db, Extractor: x, Embedder: embed.NewLocal(), Log: logx.Discard(),
			Concurrency: 1, Now: func() time.Time { return now }}
		if _, err := p.Run(w.ctx); err != nil {
			t.Fatal(err)
		}
		c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: embed.NewLocal()}
		st, err := c.Run(w.ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := run("fix the failing test in auth.go"); st.Skipped != "" {
		t.Fatalf("first cycle skipped: %s", st.Skipped) // never consolidated before: due
	}
	if st := run("run the linter on the parser package"); st.Skipped == "" {
		t.Errorf("a cycle ran for chatter alone: %+v", st)
	}
	if st := run("never add emoji to commit messages"); st.Skipped != "" || st.Created != 1 {
		t.Errorf("stats %+v: want the statement to form its belief at once", st)
	}
	w.expect("User avoids emoji.", belief.StatusActive, 4, 1)
}

// TestCorrectionSurvivesExportImport: the corrected fact does not come back
// in a store rebuilt from an export and consolidated from scratch.
func TestCorrectionSurvivesExportImport(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "our database is Postgres")
	w.day(2, "Actually we moved from Postgres to SQLite last week")
	var buf bytes.Buffer
	if _, err := portable.Export(w.ctx, w.db, &buf); err != nil {
		t.Fatal(err)
	}
	w2 := newStatedWorld(t)
	if _, err := portable.Import(w2.ctx, w2.db, &buf); err != nil {
		t.Fatal(err)
	}
	if err := w2.db.SetMeta(w2.ctx, consolidate.CheckpointKey, `{"seq":0}`); err != nil {
		t.Fatal(err)
	}
	w2.day(3)
	for _, b := range mustList(t, w2.db) {
		if b.Status == belief.StatusActive && b.Context == "postgres" {
			w2.dump()
			t.Fatalf("the corrected fact came back after export and import: %q", b.Statement)
		}
	}
	w2.expect("In project tools, database is sqlite.", belief.StatusActive, 4, 1)
}

// TestStatedUserFact: what the user says of themself is a global fact
// phrased with its verb.
func TestStatedUserFact(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "I have a severe peanut allergy", "I'm on macOS")
	w.expect("User has a severe peanut allergy.", belief.StatusActive, 4, 1)
	w.expect("User is on macos.", belief.StatusActive, 4, 1)
}

// flatEmbedder puts every text at the same point: the worst case of a
// sentence embedder, for which every preference sentence is close to
// every other.
type flatEmbedder struct{}

func (flatEmbedder) Name() string { return "flat-test" }
func (flatEmbedder) Dim() int     { return 4 }
func (flatEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{0.5, 0.5, 0.5, 0.5}
	}
	return out, nil
}

// inferred is the local extractor with nothing stated: its signals take
// the clustering path, as a model's would.
type inferred struct{ *extract.Local }

func (x inferred) Extract(ctx context.Context, in extract.Input) (extract.Draft, error) {
	d, err := x.Local.Extract(ctx, in)
	for i := range d.Signals {
		d.Signals[i].Stated = false
	}
	return d, err
}

// TestCosineAloneDoesNotMatch: with an embedder for which every sentence
// is close to every other, a belief about npm is not taken for one about
// bun: when both sides say what they are about, the subjects decide.
func TestCosineAloneDoesNotMatch(t *testing.T) {
	w := newStatedWorld(t)
	run := func(d int, texts ...string) {
		now := day0.Add(time.Duration(d) * 24 * time.Hour)
		for i, u := range texts {
			w.n++
			capture(t, w.db, fmt.Sprintf("f%d", w.n), now.Add(time.Duration(i)*time.Minute), u, w.offset)
		}
		p := &ingest.Pipeline{DB: w.db, Extractor: inferred{extract.NewLocal()}, Embedder: flatEmbedder{}, Log: logx.Discard(), Concurrency: 1,
			Now: func() time.Time { return now }, DedupSimilarity: 1.1}
		if _, err := p.Run(w.ctx); err != nil {
			t.Fatal(err)
		}
		c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: flatEmbedder{}, Options: consolidate.Options{Force: true}}
		if _, err := c.Run(w.ctx, now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	run(1, "I prefer bun for scripts", "I always prefer bun", "I prefer bun when running the seed script")
	w.expect("User prefers bun.", belief.StatusActive, 4, 1)
	run(2, "I prefer npm for installs", "I always prefer npm", "I prefer npm for the CI image")
	w.expect("User prefers bun.", belief.StatusActive, 4, 1)
	w.expect("User prefers npm.", belief.StatusActive, 4, 1)
}

// TestDecisionNotStated: a decision about the task at hand forms no belief
// at once.
func TestDecisionNotStated(t *testing.T) {
	w := newStatedWorld(t)
	w.day(1, "let's go with the retry loop for this one")
	if bs := mustList(t, w.db); len(bs) != 0 {
		w.dump()
		t.Fatalf("a decision formed a belief at once")
	}
}

// TestNoBeliefOfNoThing: what the user says of no thing a lasting belief
// can be about — a one-off choice among the assistant's options, an issue
// number, a bare verb, a function word — forms no belief, however often it
// is said; a name that is also a verb ("Go") still does.
func TestNoBeliefOfNoThing(t *testing.T) {
	w := newStatedWorld(t)
	for d := range 3 {
		w.day(d, "use option 2", "let's go with the second approach", "fix #91 first", "always prefer #91",
			"I prefer fixing it", "I prefer that one", "I prefer Go over Python for CLIs")
	}
	all, err := w.db.ListBeliefs(w.ctx, store.BeliefFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range all {
		if b.Subject != "go" && b.Subject != "python" {
			w.dump()
			t.Fatalf("belief %q formed", b.Statement)
		}
	}
	w.expect("User prefers go.", belief.StatusActive, 4, 1)
}

// corrected says on day 0 what forms the belief whole, then on day 1 the
// correction, and returns that belief as it was formed, once the
// correction has revised it.
func (w *statedWorld) corrected(say, whole, correction string) *belief.Belief {
	w.t.Helper()
	w.day(0, say)
	old := w.find(whole)
	if old == nil {
		w.dump()
		w.t.Fatal("no belief of the sentence: the check shows nothing")
	}
	w.day(1, correction)
	if b := w.find(whole); b == nil || b.Status != "revised" {
		w.dump()
		w.t.Fatalf("the corrected belief: %+v", b)
	}
	return old
}
