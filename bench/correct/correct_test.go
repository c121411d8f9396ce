package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

func TestScenarioFile(t *testing.T) {
	f, err := ParseFile(builtinScenarios)
	if err != nil {
		t.Fatal(err)
	}
	kinds, fams, scope := map[string]int{}, map[string]int{}, 0
	statements := map[int]int{}
	for _, s := range f.Scenarios {
		kinds[s.Kind]++
		fams[s.Family]++
		if s.Scope != nil {
			scope++
		}
		statements[s.OldStatements()]++
	}
	if kinds[KindCorrection] < 60 {
		t.Errorf("%d corrections, want at least 60", kinds[KindCorrection])
	}
	if kinds[KindNearMiss] < 15 {
		t.Errorf("%d near-misses, want at least 15", kinds[KindNearMiss])
	}
	if scope < 3 {
		t.Errorf("%d scenarios with a scope project, want a few", scope)
	}
	for _, fam := range append(append([]string{}, correctionFamilies...), nearMissFamilies...) {
		if fams[fam] < 3 {
			t.Errorf("family %q has %d scenarios, want at least 3", fam, fams[fam])
		}
	}
	for n := 1; n <= 3; n++ {
		if statements[n] == 0 {
			t.Errorf("no scenario states the old value %d time(s)", n)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	ok := func() Scenario {
		return Scenario{ID: "x", Kind: KindCorrection, Family: "moved off", Project: "api", Slot: "deploy target",
			Earlier:  []Session{{{User: "we deploy to Fly.io; tests are pytest", Reply: "ok"}}},
			Change:   Session{{User: "we moved off Fly.io, it's Render now", Reply: "ok"}},
			Question: "where do we ship?", New: []string{"render"}, Old: []string{"fly.io"},
			Other: Other{Slot: "tests", Question: "what runs tests?", Value: []string{"pytest"}}}
	}
	s := ok()
	if err := s.Check(); err != nil {
		t.Fatalf("a good scenario: %v", err)
	}
	for name, mod := range map[string]func(*Scenario){
		"unknown family":     func(s *Scenario) { s.Family = "whatever" },
		"near-miss family":   func(s *Scenario) { s.Family = "someday" },
		"old never stated":   func(s *Scenario) { s.Old = []string{"heroku"} },
		"new never said":     func(s *Scenario) { s.New = []string{"railway"} },
		"new said before":    func(s *Scenario) { s.Earlier[0][0].Reply = "ok, Render it is" },
		"other never stated": func(s *Scenario) { s.Other.Value = []string{"jest"} },
		"old names new":      func(s *Scenario) { s.Old = []string{"fly.io", "render"} },
		"no earlier session": func(s *Scenario) { s.Earlier = nil },
		"bad id":             func(s *Scenario) { s.ID = "Has Spaces" },
		"scope without old": func(s *Scenario) {
			s.Scope = &Scope{Project: "web", Earlier: []Session{{{User: "hi", Reply: "hi"}}}, Question: "q"}
		},
		"scope in same project": func(s *Scenario) {
			s.Scope = &Scope{Project: "api", Earlier: []Session{{{User: "fly.io", Reply: "ok"}}}, Question: "q"}
		},
	} {
		s := ok()
		mod(&s)
		if err := s.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ParseFile([]byte(`{"scenarios":[{"id":"x","surprise":1}]}`)); err == nil {
		t.Error("an unknown field was accepted")
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		text   string
		values []string
		want   bool
	}{
		{"we deploy to Fly.io.", []string{"fly.io"}, true},
		{"FLY.IO rocks", []string{"fly.io"}, true},
		{"butterfly.io", []string{"fly.io"}, false},
		{"a good day", []string{"go"}, false},
		{"we run on node18 now", []string{"node 18"}, true},
		{"we run on Node-18 now", []string{"node 18"}, true},
		{"we run on node 180", []string{"node 18"}, false},
		{"the port is 30000", []string{"3000"}, false},
		{"localhost:3000/health", []string{"3000"}, true},
		{"eu-west-1a", []string{"eu-west-1"}, false},
		{"eu-west-1, Ireland", []string{"eu-west-1"}, true},
		{"run it at 05:00 UTC", []string{"05:00"}, true},
		{"uv.lock is checked in", []string{"uv"}, true},
		{"", []string{"x"}, false},
		{"anything", nil, false},
	} {
		if got := Names(c.text, c.values); got != c.want {
			t.Errorf("Names(%q, %q) = %v, want %v", c.text, c.values, got, c.want)
		}
	}
}

func TestPresents(t *testing.T) {
	old, nw := []string{"fly.io", "fly"}, []string{"render"}
	for _, c := range []struct {
		name string
		u    Unit
		want bool // old presented as current
	}{
		{"old belief", Unit{Kind: UnitBelief, Text: "In project api, deploy target is fly.io."}, true},
		{"old avoided", Unit{Kind: UnitBelief, Text: "Project api avoids fly.io."}, false},
		{"both named: the change", Unit{Kind: UnitMemory, Text: "user: we moved off Fly.io, it's Render now"}, false},
		{"labelled", Unit{Kind: UnitBelief, Text: "[NO LONGER TRUE] In project api, deploy target is fly.io."}, false},
		{"superseded label", Unit{Kind: UnitMemory, Text: "(superseded) we deploy to fly"}, false},
		{"old exchange", Unit{Kind: UnitMemory, Text: "user: this service deploys to Fly.io"}, true},
		{"avoid in an exchange is no belief", Unit{Kind: UnitMemory, Text: "user: avoid restarts; we deploy to fly"}, true},
		{"unrelated", Unit{Kind: UnitBelief, Text: "Project api prefers pytest."}, false},
		{"replacement quoted", Unit{Kind: UnitMemory, Text: "user: we deploy to fly, CI is GitHub Actions", Replaced: "we moved off Fly.io"}, false},
		{"replacement quoted with the new value", Unit{Kind: UnitMemory, Text: "user: we deploy to fly", Replaced: "it's Render now"}, false},
		{"replacement about another value", Unit{Kind: UnitMemory, Text: "user: we deploy to fly", Replaced: "CI runs on Buildkite now"}, true},
	} {
		if got := Presents(c.u, old, nw); got != c.want {
			t.Errorf("%s: Presents = %v, want %v", c.name, got, c.want)
		}
	}
	if !Reaches(Unit{Kind: UnitMemory, Text: "user: we moved off Fly.io, it's Render now"}, nw) {
		t.Error("the correction's own words do not bring the new value")
	}
	if Reaches(Unit{Kind: UnitBelief, Text: "Project api avoids render."}, nw) {
		t.Error("a belief avoiding the new value brings it")
	}
	// A superseded memory whose label says what replaced it still brings
	// what the replacement does not name; one labelled without saying
	// brings nothing.
	other := []string{"github actions"}
	if !Reaches(Unit{Kind: UnitMemory, Text: "user: we deploy to fly, CI is GitHub Actions", Replaced: "we moved off Fly.io"}, other) {
		t.Error("a superseded memory's other value does not reach past a label that quotes its replacement")
	}
	if Reaches(Unit{Kind: UnitMemory, Text: "(superseded) user: we deploy to fly, CI is GitHub Actions"}, other) {
		t.Error("a memory labelled superseded without its replacement brings a value")
	}
}

const injected = `<engram-recall>
Notes recalled from earlier sessions by engram (long-term memory). They may be outdated or wrong: prefer what the user says now and what the code shows.
[Belief (0.80): In project billing-api, deploy target is fly.io.]
[Memory · 2 Nov 2026 · project billing-api] user: heads up: we moved off Fly.io, everything runs on Render now / assistant: Noted. (just before: user: add a pytest case / assistant: done) (just after: user: thanks / assistant: (ok))
[Memory · 1 Nov 2026 · project billing-api · superseded by a later correction] user: we ship with Fly.io / assistant: Noted.
[Memory · 1 Nov 2026 · project billing-api · superseded 2 Nov 2026 by "heads up: we moved off Fly.io"] user: Fly.io runs it, logs go to Papertrail / assistant: Noted.
</engram-recall>`

func TestInjectedUnits(t *testing.T) {
	us := InjectedUnits(injected)
	want := []Unit{
		{From: FromInjected, Kind: UnitBelief, Text: "In project billing-api, deploy target is fly.io."},
		{From: FromInjected, Kind: UnitMemory, Text: "user: heads up: we moved off Fly.io, everything runs on Render now / assistant: Noted."},
		{From: FromInjected, Kind: UnitMemory, Text: "user: add a pytest case / assistant: done"},
		{From: FromInjected, Kind: UnitMemory, Text: "user: thanks / assistant: (ok)"},
		{From: FromInjected, Kind: UnitMemory, Text: "(superseded) user: we ship with Fly.io / assistant: Noted."},
		{From: FromInjected, Kind: UnitMemory, Text: "user: Fly.io runs it, logs go to Papertrail / assistant: Noted.", Replaced: "heads up: we moved off Fly.io"},
	}
	if len(us) != len(want) {
		t.Fatalf("got %d units %q, want %d", len(us), us, len(want))
	}
	for i := range want {
		if us[i] != want[i] {
			t.Errorf("unit %d = %+v, want %+v", i, us[i], want[i])
		}
	}
}

const memoryFile = `<!-- ENGRAM:BELIEFS:BEGIN -->
## Beliefs

- In project billing-api, deploy target is render. ("we moved off Fly.io, it's Render now") (confidence: 0.80, evidence: 3)
- Project billing-api prefers pytest. (confidence: 0.80, evidence: 3)

## Former Beliefs

- [NO LONGER TRUE] In project billing-api, deploy target is fly.io. (was: 0.80, now: 0.45, demoted: 2026-11-20)
<!-- ENGRAM:BELIEFS:END -->
<!-- ENGRAM:EPISODES:BEGIN -->
## 2026-11-20
- we deploy to fly
<!-- ENGRAM:EPISODES:END -->
- a user's own line naming fly.io
`

func TestMemoryUnits(t *testing.T) {
	cur, former := MemoryUnits("p", memoryFile)
	want := []Unit{
		{From: FromMemory, File: "p", Kind: UnitBelief, Text: "In project billing-api, deploy target is render."},
		{From: FromMemory, File: "p", Kind: UnitSaid, Text: "we moved off Fly.io, it's Render now"},
		{From: FromMemory, File: "p", Kind: UnitBelief, Text: "Project billing-api prefers pytest."},
		{From: FromMemory, File: "p", Kind: UnitEpisode, Text: "we deploy to fly"},
	}
	if len(cur) != len(want) {
		t.Fatalf("current = %q, want %d units", cur, len(want))
	}
	for i := range want {
		if cur[i] != want[i] {
			t.Errorf("current %d = %+v, want %+v", i, cur[i], want[i])
		}
	}
	if len(former) != 1 || !strings.Contains(former[0].Text, "[NO LONGER TRUE]") {
		t.Errorf("former = %q", former)
	}
}

func testScenario() *Scenario {
	return &Scenario{ID: "x", Kind: KindCorrection, Family: "moved off", Project: "api", Slot: "deploy",
		Question: "q", New: []string{"render"}, Old: []string{"fly.io"},
		Other: Other{Slot: "tests", Question: "q2", Value: []string{"pytest"}}}
}

func obs(s *Scenario, phase, injected, other string, beliefs ...BeliefRow) *Observation {
	o := &Observation{Phase: phase, Injected: injected, OtherInjected: other, Beliefs: beliefs}
	o.Reading = Read(s, o)
	return o
}

func TestJudgeCorrection(t *testing.T) {
	s := testScenario()
	oldB := "[Belief (0.80): In project api, deploy target is fly.io.]"
	newB := "[Belief (0.80): In project api, deploy target is render.]"
	otherB := "[Belief (0.80): Project api prefers pytest.]"
	phases := []*Observation{
		obs(s, PhaseBefore, oldB, otherB, BeliefRow{Statement: "Project api prefers pytest.", Status: "active"}),
		obs(s, PhaseAfter, newB, otherB, BeliefRow{Statement: "Project api prefers pytest.", Status: "active"}),
		obs(s, PhaseConsolidate, newB, otherB),
		obs(s, PhaseRebackfill, newB+"\n"+oldB, otherB),
		obs(s, PhaseFreshBackfill, newB, ""),
		obs(s, PhaseImport, newB, otherB, BeliefRow{Statement: "Project api prefers pytest.", Status: "revised"}),
	}
	v := Judge(s, phases)
	if !v.OldBefore || !v.Uptake || v.Stale {
		t.Errorf("before/uptake/stale = %v %v %v", v.OldBefore, v.Uptake, v.Stale)
	}
	if len(v.Resurrected) != 1 || v.Resurrected[0] != PhaseRebackfill {
		t.Errorf("resurrected = %q, want [rebackfill]", v.Resurrected)
	}
	if len(v.Collateral) != 2 {
		t.Errorf("collateral = %q, want the lost other slot (fresh-backfill) and the retired belief (import)", v.Collateral)
	}
	// A retired belief that named the other value is no collateral while
	// an active one still holds that value without the old one.
	kept := Judge(s, []*Observation{phases[0], obs(s, PhaseAfter, newB, otherB,
		BeliefRow{Statement: "In project api, deploy target is fly.io, tests run with pytest.", Status: "revised"},
		BeliefRow{Statement: "Tests run with pytest.", Status: "active"})})
	if len(kept.Collateral) != 0 {
		t.Errorf("collateral with the other value kept = %q, want none", kept.Collateral)
	}
	lost := Judge(s, []*Observation{phases[0], obs(s, PhaseAfter, newB, otherB,
		BeliefRow{Statement: "In project api, deploy target is fly.io, tests run with pytest.", Status: "revised"},
		BeliefRow{Statement: "Tests of fly.io run with pytest.", Status: "active"})})
	if len(lost.Collateral) != 1 {
		t.Errorf("collateral with the other value held only beside the old one = %q, want the retired belief", lost.Collateral)
	}
	var sum Summary
	sum.add(&Result{Kind: KindCorrection, Verdict: v})
	if sum.Uptake != 1 || sum.NonResBase != 1 || sum.NonRes[PhaseConsolidate] != 1 || sum.NonRes[PhaseRebackfill] != 0 ||
		sum.Collateral != 1 {
		t.Errorf("summary = %+v", sum)
	}
}

func TestJudgeNearMiss(t *testing.T) {
	s := testScenario()
	s.Kind, s.Family, s.New = KindNearMiss, "someday", nil
	oldB := "[Belief (0.80): In project api, deploy target is fly.io.]"
	before := obs(s, PhaseBefore, oldB, "", BeliefRow{Statement: "In project api, deploy target is fly.io.", Status: "active"})
	kept := Judge(s, []*Observation{before, obs(s, PhaseAfter, oldB, "", BeliefRow{Statement: "In project api, deploy target is fly.io.", Status: "active"})})
	if len(kept.FalseApply) != 0 || len(kept.Failures) != 0 {
		t.Errorf("a near-miss that changed nothing: %q", kept.Failures)
	}
	avoid := Judge(s, []*Observation{before, obs(s, PhaseAfter, oldB+"\n[Belief (0.80): User avoids fly.io.]", "")})
	if len(avoid.FalseApply) != 1 || !strings.Contains(avoid.FalseApply[0], "turning away") {
		t.Errorf("a near-miss that made an avoidance: false apply = %q", avoid.FalseApply)
	}
	after := obs(s, PhaseAfter, "", "", BeliefRow{Statement: "In project api, deploy target is fly.io.", Status: "revised"})
	after.Superseded = []EpisodeRow{{Summary: "we deploy to fly.io"}}
	v := Judge(s, []*Observation{before, after})
	if len(v.FalseApply) != 3 {
		t.Errorf("false apply = %q, want the lost value, the retired belief and the superseded episode", v.FalseApply)
	}
}

func TestJudgeScope(t *testing.T) {
	s := testScenario()
	s.Scope = &Scope{Project: "web", Question: "q3"}
	mk := func(phase, scopeInj string, beliefs ...BeliefRow) *Observation {
		o := &Observation{Phase: phase, Injected: "[Belief (0.80): render]", ScopeInjected: scopeInj, Beliefs: beliefs}
		o.Reading = Read(s, o)
		return o
	}
	webOld := "[Belief (0.80): In project web, deploy target is fly.io.]"
	v := Judge(s, []*Observation{mk(PhaseBefore, webOld), mk(PhaseAfter, webOld)})
	if !v.ScopeMeasured || len(v.ScopeLeak) != 0 {
		t.Errorf("kept scope: measured %v, leak %q", v.ScopeMeasured, v.ScopeLeak)
	}
	v = Judge(s, []*Observation{mk(PhaseBefore, webOld),
		mk(PhaseAfter, "", BeliefRow{Statement: "In project web, deploy target is fly.io.", Status: "revised", Project: "/x/fs/web"})})
	if len(v.ScopeLeak) != 2 {
		t.Errorf("leak = %q, want the lost value and the retired belief", v.ScopeLeak)
	}
}

// TestEndToEnd runs one correction and one near-miss through the real
// binaries (built from this tree), without the sentence embedder.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs two scenarios as processes")
	}
	f, err := ParseFile(builtinScenarios)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bins, err := benchkit.BuildInstalled(ctx, filepath.Join(dir, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	var picked []*Scenario
	for i := range f.Scenarios {
		if id := f.Scenarios[i].ID; id == "deploy-fly-render" || id == "near-fly-someday" {
			picked = append(picked, &f.Scenarios[i])
		}
	}
	if len(picked) != 2 {
		t.Fatalf("found %d of the two scenarios", len(picked))
	}
	for _, s := range picked {
		res := RunScenario(ctx, s, filepath.Join(dir, s.ID), Options{Bins: bins}, t.Logf)
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %q", s.ID, res.Errors)
		}
		want := append([]string{PhaseBefore, PhaseAfter}, LaterPhases...)
		if len(res.Phases) != len(want) {
			t.Fatalf("%s: %d phases, want %d", s.ID, len(res.Phases), len(want))
		}
		for i, o := range res.Phases {
			if o.Phase != want[i] || len(o.Problems) > 0 {
				t.Errorf("%s: phase %d = %s, problems %q", s.ID, i, o.Phase, o.Problems)
			}
		}
		// The earlier sessions were captured: the old value is remembered
		// before the change.
		if b := res.Phase(PhaseBefore); b.Episodes == 0 || !b.OldCurrent {
			t.Errorf("%s: before the change: %d episodes, old value current %v", s.ID, b.Episodes, b.OldCurrent)
		}
		if _, err := os.Stat(filepath.Join(dir, s.ID, "imported", ".claude-memory", "memory.db")); err != nil {
			t.Errorf("%s: the import's home has no store: %v", s.ID, err)
		}
	}
}
