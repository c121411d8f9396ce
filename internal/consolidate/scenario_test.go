package consolidate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/openaistub"
	"github.com/engram-memory/engram/internal/store"
)

var day0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// A scripted sequence of sessions: each turn is captured as the Stop hook
// stores it, ingested, and then consolidated at the time of its day.
type turn struct {
	day  int
	user string
}

// want is the state of a belief after a day's cycle: its statement, α, β,
// status. Empty statement: no such belief yet.
type want struct {
	statement   string
	alpha, beta float64
	status      string
}

type step struct {
	turns []turn
	day   int
	bun   want // the bun preference
	tabs  want
	after want // what the bun belief was revised into
}

// scenario is what the user says over a few weeks: a preference for bun
// stated three times (a belief forms), once more (it gains confidence),
// then seven times the opposite (contradicted, then revised); and a
// preference for tabs stated three times and then never again (archived
// after 90 days without reinforcement, with less than 5 evidence).
func scenario(revised, tabs, bun string) []step {
	return []step{
		{day: 1, turns: []turn{{1, "I prefer bun for my scripts, please use it to run this one"},
			{1, "I prefer tabs for indentation in my own code"}}},
		{day: 2, turns: []turn{{2, "I always prefer bun over node for small scripts like this migration helper"},
			{2, "Please indent with tabs, I prefer tabs everywhere"}}},
		{day: 3, turns: []turn{{3, "I prefer bun when running the seed script as well"},
			{3, "I prefer tabs over spaces in every file I write"}},
			bun: want{bun, 4, 1, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusActive}},
		{day: 4, turns: []turn{{4, "Use bun for the seed script too, I prefer it"}},
			bun: want{bun, 5, 1, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusActive}},
		{day: 5, turns: []turn{{5, "Stop using bun, it keeps crashing on this machine; switch to node"},
			{5, "I don't want bun anymore, node only from now on"}},
			bun: want{bun, 5, 3, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusActive}},
		{day: 6, turns: []turn{{6, "Never use bun again, it broke the deploy pipeline yesterday"},
			{6, "Drop it from the CI image, never use bun in the workflow"}},
			bun: want{bun, 5, 5, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusActive}},
		{day: 7, turns: []turn{{7, "I don't like bun, it is too unstable for this"},
			{7, "Stop using bun, the installs keep failing here"},
			{7, "Stop using bun in the dockerfile as well"}},
			bun:   want{bun, 5, 8, belief.StatusRevised},
			after: want{revised, 8, 1, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusActive}},
		{day: 100, bun: want{bun, 5, 8, belief.StatusRevised},
			after: want{revised, 8, 1, belief.StatusActive}, tabs: want{tabs, 4, 1, belief.StatusArchived}},
	}
}

func runScenario(t *testing.T, x extract.Extractor, judge consolidate.Judge, steps []step) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "engram.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	emb := embed.NewLocal()
	offset := map[string]int64{}
	for _, st := range steps {
		now := day0.Add(time.Duration(st.day) * 24 * time.Hour)
		for i, tr := range st.turns {
			session := fmt.Sprintf("d%d-s%d", tr.day, i)
			at := day0.Add(time.Duration(tr.day)*24*time.Hour + time.Duration(i)*time.Minute)
			capture(t, db, session, at, tr.user, offset)
		}
		p := &ingest.Pipeline{DB: db, Extractor: x, Fallback: extract.NewLocal(), Embedder: emb, Log: logx.Discard(),
			Concurrency: 1, Now: func() time.Time { return now }}
		ist, err := p.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := &consolidate.Consolidator{DB: db, Judge: judge, Embedder: emb, Options: consolidate.Options{Force: true}}
		cst, err := c.Run(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		all, err := db.ListBeliefs(ctx, store.BeliefFilter{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("day %d: ingest %d captures -> %d episodes; consolidation %+v", st.day, ist.Captures, ist.Episodes, cst)
		for _, b := range all {
			t.Logf("   %s %-9s α=%-2v β=%-2v confidence=%.3f evidence=%-2d %q", b.ID, b.Status, b.Alpha, b.Beta,
				b.Confidence(), b.EvidenceCount, b.Statement)
		}
		check := func(name string, w want, match func(belief.Belief) bool) *belief.Belief {
			var found *belief.Belief
			for i := range all {
				if match(all[i]) {
					found = &all[i]
				}
			}
			switch {
			case w.statement == "" && found != nil:
				t.Fatalf("day %d: %s: unexpected belief %q", st.day, name, found.Statement)
			case w.statement == "":
			case found == nil:
				t.Fatalf("day %d: %s: no belief %q", st.day, name, w.statement)
			case found.Alpha != w.alpha || found.Beta != w.beta || found.Status != w.status:
				t.Fatalf("day %d: %s: α=%v β=%v %s, want α=%v β=%v %s", st.day, name, found.Alpha, found.Beta, found.Status,
					w.alpha, w.beta, w.status)
			}
			return found
		}
		bun := check("bun", st.bun, func(b belief.Belief) bool { return b.Statement == st.bun.statement && b.ParentID == "" })
		check("tabs", st.tabs, func(b belief.Belief) bool { return b.Statement == st.tabs.statement })
		after := check("revised", st.after, func(b belief.Belief) bool { return b.Statement == st.after.statement && b.ParentID != "" })
		if after != nil && (bun == nil || after.ParentID != bun.ID || len(after.Revisions) != 1 ||
			after.Revisions[0].OldStatement != bun.Statement) {
			t.Fatalf("day %d: lineage of the revision: %+v", st.day, after)
		}
	}
}

// capture stores one turn the way the Stop hook does.
func capture(t *testing.T, db *store.DB, session string, at time.Time, user string, offset map[string]int64) {
	t.Helper()
	reply := "Understood."
	content := "User: " + user + "\n\nAssistant: " + reply
	msgs, _ := json.Marshal([]extract.Block{{Role: "user", Kind: "text", Text: user}, {Role: "assistant", Kind: "text", Text: reply}})
	start := offset[session]
	offset[session] = start + 1000
	path := "/home/u/.claude/projects/-src-tools/" + session + ".jsonl"
	_, err := db.CommitCaptures(context.Background(), store.CaptureCommit{
		Session: store.Session{ID: session, TranscriptPath: path, Offset: start + 1000},
		Captures: []store.Capture{{ByteStart: start, ByteEnd: start + 1000, TurnAt: at, Content: content, Messages: string(msgs),
			ContentHash: content, TranscriptPath: path, ProjectPath: "/src/tools", Project: "tools", CWD: "/src/tools", Source: "stop"}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The same sessions offline are in TestStatedScenario (stated_test.go):
// the local extractor reads them as explicit statements, which bear on
// beliefs at once instead of after three mentions.

// TestScenarioWithLLM runs the same sessions with the LLM extractor and
// judge against the stand-in server: the model extracts the signals,
// phrases the beliefs and classifies the evidence.
func TestScenarioWithLLM(t *testing.T) {
	const (
		bun     = "User prefers bun for running scripts"
		tabs    = "User prefers tabs for indentation"
		revised = "User avoids bun and uses node instead"
	)
	negated := func(s string) bool {
		s = strings.ToLower(s)
		for _, w := range []string{"stop", "never", "don't", "not using", "drop bun"} {
			if strings.Contains(s, w) {
				return true
			}
		}
		return false
	}
	chat := func(r *openaistub.Request) openaistub.Reply {
		sys, user := r.System(), r.User()
		switch {
		case strings.Contains(sys, "long-term memory"): // extraction
			_, text, _ := strings.Cut(user, "User: ")
			text, _, _ = strings.Cut(text, "\n")
			sig := map[string]any{"kind": "preference", "text": text, "subject": "bun", "object": "", "polarity": 1, "global": true}
			switch {
			case strings.Contains(text, "tabs"):
				sig["subject"] = "tabs"
			case negated(text):
				sig["kind"], sig["polarity"] = "avoid", -1
			}
			return openaistub.JSON(map[string]any{"skip": false, "summary": "The user said: " + text, "type": "preference",
				"importance": 0.8, "scope": "global", "entities": []string{}, "signals": []any{sig}})
		case strings.Contains(sys, "generalized belief"): // synthesis
			st, subj, pred := bun, "bun", "prefers"
			switch {
			case strings.Contains(user, "tabs"):
				st, subj = tabs, "tabs"
			case negated(user):
				st, pred = revised, "avoids"
			}
			return openaistub.JSON(map[string]any{"skip": false, "statement": st, "subject": subj, "predicate": pred,
				"context": "general", "timeframe": "current"})
		case strings.Contains(sys, "bears on an existing belief"): // classification
			b, ep, _ := strings.Cut(user, "<episode>")
			rel := "IRRELEVANT"
			switch {
			case strings.Contains(b, "tabs") != strings.Contains(ep, "tabs"):
			case negated(ep) != negated(b):
				rel = "CONTRADICTS"
			default:
				rel = "SUPPORTS"
			}
			return openaistub.JSON(map[string]string{"classification": rel, "reasoning": "scripted"})
		}
		return openaistub.Status(400, "unexpected prompt")
	}
	srv := openaistub.Start(t, openaistub.Options{Chat: chat})
	client := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "gpt-4.1-mini", MaxRetries: -1})
	runScenario(t, extract.NewLLM(client, "gpt-4.1-mini"), consolidate.NewLLM(client, 10*time.Second),
		scenario(revised, tabs, bun))
	if srv.Unscripted() != 0 {
		t.Fatalf("%d unscripted requests", srv.Unscripted())
	}
}
