package consolidate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

// TestLifecycleScenario: sessions captured and worked offline (local
// extractor, local judge), over simulated weeks. Three related preferences
// form and link; a prompt naming one subject recalls the linked neighbour
// as the prompt hook would (recollection files and the links file written
// by the worker); a hedged remark expires after 30 days unconfirmed; a
// commitment decays after its date; the history of one belief tells its
// whole story.
func TestLifecycleScenario(t *testing.T) {
	w := newStatedWorld(t)
	ctx := context.Background()
	// Day 1 (a Tuesday): three related preferences, a hedged remark and a
	// promise with a date.
	w.day(1, "I prefer pytest fixtures, always use them",
		"I prefer pytest markers in every suite",
		"I prefer pytest plugins for every project",
		"maybe the flaky test comes from the cache, not sure yet",
		"I'll send the migration plan on Friday.")
	fixtures := w.expect("User prefers pytest fixture.", belief.StatusActive, 4, 1)
	markers := w.expect("User prefers pytest marker.", belief.StatusActive, 4, 1)
	plugins := w.expect("User prefers pytest plugin.", belief.StatusActive, 4, 1)
	for _, b := range []*belief.Belief{fixtures, markers, plugins} {
		if b.Kind != episode.KindPreference {
			t.Errorf("%s: kind %q, want preference", b.Statement, b.Kind)
		}
	}
	links, err := w.db.Links(ctx, fixtures.ID)
	if err != nil {
		t.Fatal(err)
	}
	linkedTo := map[string]bool{}
	for _, l := range links {
		linkedTo[l.To] = true
	}
	if !linkedTo[markers.ID] || !linkedTo[plugins.ID] {
		w.dump()
		t.Fatalf("links of %s: %+v; want %s and %s", fixtures.ID, links, markers.ID, plugins.ID)
	}
	eps := map[string]episode.Episode{}
	if err := w.db.EachEpisode(ctx, func(e episode.Episode) error { eps[e.Summary] = e; return nil }); err != nil {
		t.Fatal(err)
	}
	var spec, promise episode.Episode
	for s, e := range eps {
		switch {
		case strings.Contains(s, "flaky test"):
			spec = e
		case strings.Contains(s, "migration plan"):
			promise = e
		}
	}
	if !spec.Speculative || promise.Kind != episode.KindCommitment || promise.DueAt.Format("2006-01-02") != "2026-05-08" {
		t.Fatalf("hedged remark speculative %v; promise kind %q due %v", spec.Speculative, promise.Kind, promise.DueAt)
	}

	// Day 2: the prompt hook, asked about fixtures, brings the linked
	// markers preference along at 0.8 of the fixtures belief's score.
	home := t.TempDir()
	now := day0.Add(2 * 24 * time.Hour)
	if _, err := recollect.Build(ctx, w.db, home, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	r := recall.New(home, nil)
	res := r.Recall(ctx, recall.Query{Text: "where should the shared fixtures for the new tests live?", ProjectPath: "/src/tools", Now: now})
	g := recall.LoadGraph(home)
	recall.DefaultSettings.BoostSubjects(&res, g, "where should the shared fixtures for the new tests live?")
	recall.DefaultSettings.ExpandLinks(&res, g, "/src/tools")
	var parent, neighbour *recall.Candidate
	for i := range res.Beliefs {
		switch res.Beliefs[i].ID {
		case fixtures.ID:
			parent = &res.Beliefs[i]
		case markers.ID, plugins.ID:
			if res.Beliefs[i].Linked == fixtures.ID && neighbour == nil {
				neighbour = &res.Beliefs[i]
			}
		}
	}
	if parent == nil || neighbour == nil || neighbour.Score != recall.DefaultSettings.LinkDiscount*parent.Score {
		t.Fatalf("recall: %+v", res.Beliefs)
	}
	text, _ := recall.Format(res, recall.DefaultSettings.Limits, now)
	if !strings.Contains(text, fixtures.Statement[:20]) || !strings.Contains(text, neighbour.Text) {
		t.Fatalf("injected context holds the fixtures belief and not its neighbour %q:\n%s", neighbour.Text, text)
	}

	// A prompt naming a subject raises the memories about it (bounded).
	q := "do pytest plugins slow the suite down?"
	res = r.Recall(ctx, recall.Query{Text: q, ProjectPath: "/src/tools", Now: now})
	before := map[string]float64{}
	for _, c := range res.Beliefs {
		before[c.ID] = c.Score
	}
	recall.DefaultSettings.BoostSubjects(&res, g, q)
	if len(res.Beliefs) == 0 || res.Beliefs[0].ID != plugins.ID || res.Beliefs[0].Score <= before[plugins.ID] ||
		res.Beliefs[0].Score > before[plugins.ID]*(1+recall.DefaultSettings.SubjectBoost)+1e-9 {
		t.Fatalf("subject boost: %v → %+v", before, res.Beliefs)
	}
	for _, c := range res.Beliefs[1:] {
		if c.Score != before[c.ID] {
			t.Fatalf("%s, not about pytest plugins, changed score: %v → %v", c.ID, before[c.ID], c.Score)
		}
	}

	// Day 3: fixtures restated; day 10, the user turns away from them.
	w.day(3, "I prefer pytest fixtures over setUp methods in every file I write")
	w.day(5, "a note about the release")
	st := w.day(10, "Stop using pytest fixtures, they hide the setup; switch to plain helpers")
	if st.Revised < 1 {
		w.dump()
		t.Fatalf("day 10: %+v", st)
	}
	// The promise's date (Friday, day 4) has passed: it decayed at the
	// first cycle after it.
	e, err := w.db.GetEpisode(ctx, promise.ID)
	if err != nil || e.Lifecycle != episode.LifecycleExpired {
		t.Fatalf("commitment after its date: %q %v", e.Lifecycle, err)
	}
	if e, _ := w.db.GetEpisode(ctx, spec.ID); e.Lifecycle != "" {
		t.Fatalf("the hedged remark ended before 30 days: %q", e.Lifecycle)
	}
	// Day 32: thirty days unconfirmed, the hedged remark expires.
	w.day(32, "another note about the release")
	if e, _ := w.db.GetEpisode(ctx, spec.ID); e.Lifecycle != episode.LifecycleExpired {
		t.Fatalf("the hedged remark after 31 days: %q", e.Lifecycle)
	}

	// The history of the fixtures belief, as `engram-worker history` prints it.
	evs, err := w.db.History(ctx, fixtures.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	memory.WriteHistory(&out, fixtures.ID, evs)
	t.Logf("history:\n%s", out.String())
	var actions []string
	for _, ev := range evs {
		actions = append(actions, ev.Action)
	}
	want := []string{store.ActionFormed, store.ActionReinforced, store.ActionContradicted, store.ActionRevised}
	if strings.Join(actions, " ") != strings.Join(want, " ") {
		t.Fatalf("history %v, want %v:\n%s", actions, want, out.String())
	}
	for _, s := range []string{"formed", "stated by the user", `statement: "I prefer pytest fixtures, always use them."`,
		"reinforced", "confidence: 0.8 → 0.875", "contradicted", "revised", "corrected by the user", `status: "active" → "revised"`} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("history lacks %q:\n%s", s, out.String())
		}
	}
	// The revised belief left the graph; its successor stands on its own.
	if probs, err := w.db.LinkProblems(ctx); err != nil || len(probs) > 0 {
		t.Fatalf("graph: %v %v", probs, err)
	}
	if ls, _ := w.db.Links(ctx, fixtures.ID); len(ls) != 0 {
		t.Fatalf("the revised belief keeps links: %+v", ls)
	}
}

// captureIn is capture in another project.
func captureIn(t *testing.T, db *store.DB, project, session string, at time.Time, user string, offset map[string]int64) {
	t.Helper()
	reply := "Understood."
	content := "User: " + user + "\n\nAssistant: " + reply
	msgs, _ := json.Marshal([]extract.Block{{Role: "user", Kind: "text", Text: user}, {Role: "assistant", Kind: "text", Text: reply}})
	start := offset[session]
	offset[session] = start + 1000
	path := "/home/u/.claude/projects/-src-" + project + "/" + session + ".jsonl"
	_, err := db.CommitCaptures(context.Background(), store.CaptureCommit{
		Session: store.Session{ID: session, TranscriptPath: path, Offset: start + 1000},
		Captures: []store.Capture{{ByteStart: start, ByteEnd: start + 1000, TurnAt: at, Content: content, Messages: string(msgs),
			ContentHash: content, TranscriptPath: path, ProjectPath: "/src/" + project, Project: project, CWD: "/src/" + project, Source: "stop"}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMetaBeliefScenario: the same preference stated in three projects
// forms three project beliefs and, from them, a principle of the user's,
// linked to them; a prompt in a fourth project recalls the principle; when
// one project turns away, the principle is re-checked and archived, and
// its history says so.
func TestMetaBeliefScenario(t *testing.T) {
	w := newStatedWorld(t)
	ctx := context.Background()
	run := func(d int, turns map[string]string) consolidate.Stats {
		t.Helper()
		now := day0.Add(time.Duration(d) * 24 * time.Hour)
		i := 0
		for _, project := range slices.Sorted(maps.Keys(turns)) {
			w.n++
			captureIn(t, w.db, project, fmt.Sprintf("d%d-%s-%d", d, project, w.n), now.Add(time.Duration(i)*time.Minute), turns[project], w.offset)
			i++
		}
		emb := embed.NewLocal()
		p := &ingest.Pipeline{DB: w.db, Extractor: extract.NewLocal(), Embedder: emb, Log: logx.Discard(), Concurrency: 1,
			Now: func() time.Time { return now }}
		if _, err := p.Run(ctx); err != nil {
			t.Fatal(err)
		}
		c := &consolidate.Consolidator{DB: w.db, Judge: consolidate.Local{}, Embedder: emb, Options: consolidate.Options{Force: true}}
		st, err := c.Run(ctx, now.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := run(1, map[string]string{"api": "Never use testify in this repo", "web": "Never use testify in this repo",
		"cli": "Never use testify in this repo"})
	if st.Metas != 1 {
		w.dump()
		t.Fatalf("day 1: %+v", st)
	}
	m := w.expect("User avoids testify.", belief.StatusActive, 10, 1)
	if m.Kind != episode.KindPrinciple || len(m.Sources) != 3 || m.Scope != episode.ScopeGlobal {
		t.Fatalf("meta-belief: kind %q sources %v scope %s", m.Kind, m.Sources, m.Scope)
	}
	links, _ := w.db.Links(ctx, m.ID)
	if len(links) != 3 {
		t.Fatalf("links of the meta-belief: %+v", links)
	}
	// A prompt in a fourth project finds the principle.
	home := t.TempDir()
	now := day0.Add(2 * 24 * time.Hour)
	if _, err := recollect.Build(ctx, w.db, home, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	res := recall.New(home, nil).Recall(ctx, recall.Query{Text: "should the new tests use testify assertions?", ProjectPath: "/src/jobs", Now: now})
	if len(res.Beliefs) == 0 || res.Beliefs[0].ID != m.ID {
		t.Fatalf("recall in another project: %+v", res.Beliefs)
	}
	// The cli project turns to testify. A correction bears on the global
	// beliefs of its claim too: the principle is retired with the cli
	// belief at once (it never outranks its sources' contradictions), and
	// its history tells so.
	run(3, map[string]string{"cli": "Actually we now use testify in this repo, I prefer it"})
	got, _ := w.db.GetBelief(ctx, m.ID)
	if got.Status == belief.StatusActive {
		w.dump()
		t.Fatalf("principle after a source turned: %s", got.Status)
	}
	evs, _ := w.db.History(ctx, m.ID)
	var out bytes.Buffer
	memory.WriteHistory(&out, m.ID, evs)
	t.Logf("history:\n%s", out.String())
	var acts []string
	for _, ev := range evs {
		acts = append(acts, ev.Action)
	}
	if strings.Join(acts, " ") != "formed contradicted revised" || !strings.Contains(evs[0].Detail, "the principle of 3 beliefs in 3 projects") {
		t.Fatalf("history:\n%s", out.String())
	}
	if ls, _ := w.db.Links(ctx, m.ID); len(ls) != 0 {
		t.Fatalf("the retired principle keeps links: %+v", ls)
	}
}
