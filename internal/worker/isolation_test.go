package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// poison is the word that makes the test's extractor and judge panic.
const poison = "zebracorn"

// panickyExtractor is the local extractor, but for a capture holding the
// poison word, on which it panics as a slice bound gone wrong would.
type panickyExtractor struct{ extract.Extractor }

func (p panickyExtractor) Extract(ctx context.Context, in extract.Input) (extract.Draft, error) {
	if strings.Contains(in.Content, poison) {
		var s []int
		_ = s[len(in.Content)] // index out of range
	}
	return p.Extractor.Extract(ctx, in)
}

// panickyJudge is the local judge, but it panics when asked to classify an
// episode or synthesise a group holding the poison word.
type panickyJudge struct{ consolidate.Local }

func (j panickyJudge) Synthesize(ctx context.Context, g consolidate.Group) ([]consolidate.Candidate, error) {
	for _, e := range g.Episodes {
		if strings.Contains(e.Context, poison) {
			panic("judge: " + poison)
		}
	}
	return j.Local.Synthesize(ctx, g)
}

func (j panickyJudge) Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (consolidate.Relation, error) {
	if strings.Contains(e.Context, poison) {
		panic("judge: " + poison)
	}
	return j.Local.Classify(ctx, b, e)
}

var captureSeq int

// addCaptures stores one capture per text, in one session of a project,
// as the Stop hook does.
func addCaptures(t *testing.T, db *store.DB, session string, texts ...string) {
	t.Helper()
	var caps []store.Capture
	for _, text := range texts {
		captureSeq++
		start := int64(captureSeq * 1000)
		content := "User: " + text + "\n\nAssistant: Done."
		msgs := fmt.Sprintf(`[{"role":"user","kind":"text","text":%q},{"role":"assistant","kind":"text","text":"Done."}]`, text)
		caps = append(caps, store.Capture{ByteStart: start, ByteEnd: start + 1000, TurnAt: time.Now(), Content: content,
			Messages: msgs, ContentHash: content, TranscriptPath: "/t/" + session + ".jsonl", ProjectPath: "/src/api",
			Project: "api", Source: "stop"})
	}
	if _, err := db.CommitCaptures(context.Background(), store.CaptureCommit{
		Session:  store.Session{ID: session, TranscriptPath: "/t/" + session + ".jsonl", Offset: int64(captureSeq*1000 + 1000)},
		Captures: caps}); err != nil {
		t.Fatal(err)
	}
}

// newCycleEnv opens a store and the offline components in a fresh home.
func newCycleEnv(t *testing.T) (context.Context, config.Config, *store.DB, Components) {
	t.Helper()
	cfg := testConfig(t)
	cfg.SentenceEmbedder = false
	ctx := context.Background()
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	comp, err := NewComponents(ctx, cfg, logx.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(comp.Close)
	comp.ForceConsolidation = true
	return ctx, cfg, db, comp
}

func isolationSetup(t *testing.T) (context.Context, *store.DB, Components, func(Components) Stats) {
	t.Helper()
	ctx, cfg, db, comp := newCycleEnv(t)
	comp.Build = "build-1"
	cycle := func(c Components) Stats {
		t.Helper()
		st, err := Cycle(ctx, cfg, db, c, logx.Discard())
		if err != nil {
			t.Fatalf("cycle: %v (failures %+v)", err, st.Failures)
		}
		return st
	}
	return ctx, db, comp, cycle
}

func captureStatus(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	c, err := db.CaptureCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPanickingExtractorIsQuarantined: a capture the extractor panics on is
// quarantined with its reason at the first run, every other capture of that
// run and of later runs becomes an episode, the same build leaves the
// quarantined one alone, and a new build tries it again.
func TestPanickingExtractorIsQuarantined(t *testing.T) {
	ctx, db, comp, cycle := isolationSetup(t)
	comp.Extractor = panickyExtractor{extract.NewLocal()}
	comp.Fallback = nil
	addCaptures(t, db, "s1", "we deploy the api with flyctl", "the "+poison+" broke the parser", "add a health endpoint")

	st := cycle(comp)
	if st.Ingest.Episodes != 2 || st.Ingest.Failed != 1 || st.Quarantined != 1 {
		t.Fatalf("first run: ingest %+v, quarantined %d; want 2 episodes, 1 failed and quarantined", st.Ingest, st.Quarantined)
	}
	items, err := db.ListQuarantine(ctx, false)
	if err != nil || len(items) != 1 {
		t.Fatalf("quarantine: %+v %v", items, err)
	}
	q := items[0]
	if q.Kind != store.QuarantineCapture || q.Stage != "ingest" || q.Build != "build-1" || q.Attempts != 1 ||
		!strings.Contains(q.Reason, "index out of range") || !strings.Contains(q.Reason, "panickyExtractor") || !strings.Contains(q.Text, poison) {
		t.Fatalf("quarantined %+v", q)
	}

	// Later runs: new captures go through; the quarantined one is not
	// tried again by the same build.
	addCaptures(t, db, "s2", "the release checklist lives in docs/release.md", "another "+poison+" sighting")
	st = cycle(comp)
	if st.Ingest.Episodes != 1 || st.Ingest.Failed != 1 || st.Released != 0 || st.Quarantined != 2 {
		t.Fatalf("second run: ingest %+v, released %d, quarantined %d", st.Ingest, st.Released, st.Quarantined)
	}
	if c := captureStatus(t, db); c[store.CapturePending] != 0 || c[store.CaptureFailed] != 2 || c[store.CaptureDone] != 3 {
		t.Fatalf("captures %v", c)
	}

	// A new build with the extractor fixed: both are tried again and
	// become episodes; the quarantine is empty.
	fixed := comp
	fixed.Build = "build-2"
	fixed.Extractor = extract.NewLocal()
	st = cycle(fixed)
	if st.Released != 2 || st.Ingest.Episodes != 2 || st.Quarantined != 0 {
		t.Fatalf("new build: released %d, ingest %+v, quarantined %d", st.Released, st.Ingest, st.Quarantined)
	}
	if c := captureStatus(t, db); c[store.CaptureFailed] != 0 || c[store.CaptureDone] != 5 {
		t.Fatalf("captures after the new build %v", c)
	}
}

// TestPanickingConsolidationIsQuarantined: an episode consolidation panics
// on is quarantined and the batch is worked again without it, so the other
// episodes' statements still become beliefs, in the same cycle and later.
func TestPanickingConsolidationIsQuarantined(t *testing.T) {
	ctx, db, comp, cycle := isolationSetup(t)
	comp.Judge = panickyJudge{}
	// Three exchanges about one thing cluster, and the judge is asked to
	// synthesise them.
	addCaptures(t, db, "s1", "I always use pnpm, never npm", "the "+poison+" deploy failed on Monday",
		"the "+poison+" deploy failed again on Monday night", "why does the "+poison+" deploy fail every Monday")
	st := cycle(comp)
	if st.Ingest.Episodes != 4 {
		t.Fatalf("ingest %+v", st.Ingest)
	}
	if st.Beliefs.Quarantined == 0 || st.Quarantined == 0 {
		t.Fatalf("consolidation quarantined nothing: %+v", st.Beliefs)
	}
	items, err := db.ListQuarantine(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range items {
		if q.Kind != store.QuarantineEpisode || q.Stage != "consolidate" || !strings.Contains(q.Reason, "judge: "+poison) ||
			!strings.Contains(q.Text, poison) {
			t.Errorf("quarantined %+v", q)
		}
	}
	if !hasBelief(t, db, "pnpm") {
		t.Fatal("the stated preference for pnpm formed no belief")
	}
	// Later cycles: new statements become beliefs; the held episodes stay
	// out.
	addCaptures(t, db, "s2", "this service deploys to Fly.io")
	st = cycle(comp)
	if st.Beliefs.Quarantined != 0 {
		t.Errorf("second cycle quarantined %d more", st.Beliefs.Quarantined)
	}
	if !hasBelief(t, db, "fly.io") {
		t.Fatal("the second cycle formed no belief about Fly.io")
	}

	// A new build whose judge no longer panics works the held episodes and
	// lifts their quarantine.
	fixed := comp
	fixed.Build = "build-2"
	fixed.Judge = consolidate.Local{}
	st = cycle(fixed)
	if st.Released == 0 || st.Quarantined != 0 {
		t.Fatalf("new build: released %d, quarantined %d", st.Released, st.Quarantined)
	}
}

func hasBelief(t *testing.T, db *store.DB, word string) bool {
	t.Helper()
	found := false
	err := db.EachBelief(context.Background(), func(b belief.Belief) error {
		if b.Status == belief.StatusActive && strings.Contains(strings.ToLower(b.Statement), word) {
			found = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestFailedStepDoesNotStopTheOthers: when a whole step fails (here the
// recollections, whose directory is a file), the steps after it still run
// (consolidation, MEMORY.md), the cycle reports the failure, and the next
// cycle, with the cause gone, succeeds.
func TestFailedStepDoesNotStopTheOthers(t *testing.T) {
	ctx, cfg, db, comp := newCycleEnv(t)
	addCaptures(t, db, "s1", "never put emoji in commit messages", "I prefer table-driven tests in Go")
	// recall/ as a file: no recollection file can be written.
	if err := os.WriteFile(recall.Dir(cfg.Home), []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := Cycle(ctx, cfg, db, comp, logx.Discard())
	if err == nil || !strings.Contains(err.Error(), "recollections") {
		t.Fatalf("cycle error %v, want the recollections step's", err)
	}
	failed := map[string]bool{}
	for _, f := range st.Failures {
		failed[f.Step] = true
	}
	if !failed["recollections"] || failed["consolidate beliefs"] || failed["promotion"] {
		t.Fatalf("failures %+v", st.Failures)
	}
	if st.Ingest.Episodes != 2 || st.Beliefs.Created == 0 {
		t.Fatalf("the steps before it: ingest %+v, beliefs %+v", st.Ingest, st.Beliefs)
	}
	if st.Promotion.Files == 0 {
		t.Fatalf("promotion after the failed step did not run: %+v", st.Promotion)
	}
	if _, err := os.Stat(filepath.Join(cfg.Home, "MEMORY.md")); err != nil {
		t.Fatalf("global MEMORY.md: %v", err)
	}

	// The cause gone, the next cycle succeeds.
	if err := os.Remove(recall.Dir(cfg.Home)); err != nil {
		t.Fatal(err)
	}
	if st, err := Cycle(ctx, cfg, db, comp, logx.Discard()); err != nil || len(st.Failures) > 0 {
		t.Fatalf("next cycle: %v %+v", err, st.Failures)
	}

}

// TestLogHoldsNoText: what the user said never reaches the worker's log,
// which forget cannot scrub: beliefs are logged by id.
func TestLogHoldsNoText(t *testing.T) {
	ctx, cfg, db, comp := newCycleEnv(t)
	log := logx.New(cfg.LogDir(), "worker.log", "debug")
	addCaptures(t, db, "s1", "I always use Quokkasync for builds", "actually we switched from Quokkasync to Wombatbuild")
	addCaptures(t, db, "s2", "never put emoji in Quokkamail messages")
	if _, err := Cycle(ctx, cfg, db, comp, log); err != nil {
		t.Fatal(err)
	}
	if !hasBelief(t, db, "wombatbuild") {
		t.Fatal("no belief formed: the check shows nothing")
	}
	data, err := os.ReadFile(filepath.Join(cfg.LogDir(), "worker.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Quokka", "Wombat"} {
		if strings.Contains(string(data), w) {
			t.Errorf("worker.log holds %q:\n%s", w, data)
		}
	}
}
