package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/setup"
)

// What people actually say: the same preference in four wordings, four
// sessions; a correction in a fifth.
var statedPrompts = []string{
	"in Go projects I prefer table-driven tests and I never use testify",
	"please use table-driven tests for everything in Go, I prefer them",
	"reminder: table-driven tests are what I prefer, no testify",
	"in Go projects I prefer table-driven tests, as always",
}

const (
	statedQuestion   = "Add tests for the new parser: table-driven tests or something else?"
	statedCorrection = "we dropped table-driven tests, use plain subtests now"
	statedBelief     = "In Go projects I prefer table-driven tests."
	statedTestify    = "I never use testify."
)

// statedEnv is a real-client environment with both hooks and the import
// line setup puts into CLAUDE.md, so that engram's global MEMORY.md is
// loaded into every session.
func statedEnv(t *testing.T, respond anthropicstub.Responder) (*Env, Binaries) {
	t.Helper()
	claudeBin(t)
	bins := buildBinaries(t)
	e := NewEnv(t, respond, Hooks{})
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	if _, err := setup.AddImport(filepath.Join(e.ClaudeDir, "CLAUDE.md"), setup.ImportLine(e.EngramHome, e.Home)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	})
	return e, bins
}

// activeBeliefs returns the active beliefs by statement.
func activeBeliefs(t *testing.T, e *Env) map[string]belief.Belief {
	out := map[string]belief.Belief{}
	for _, b := range readBeliefs(t, e) {
		if b.Status == belief.StatusActive {
			out[b.Statement] = b
		}
	}
	return out
}

func readFileOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// TestStatedPreferenceWithRealClient: four sessions of the real client
// state one preference in four wordings; after each, one plain
// `engram-worker run` (the timer's cycle). The first statement forms the
// belief at once, the others reinforce it: one active belief about
// table-driven tests and one about testify. The preference is the user's
// own habit, so it is global: it reaches the MEMORY.md every session
// loads (engram's, through the CLAUDE.md import line) and, as a belief
// bite, the model's request for a related prompt. A fifth session's "we
// dropped table-driven tests, use plain subtests now" retires it in the
// next cycle: shown once as [NO LONGER TRUE], then removed, while the new
// project belief takes its place in the project's MEMORY.md.
func TestStatedPreferenceWithRealClient(t *testing.T) {
	respond := func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Will do.") }
	e, bins := statedEnv(t, respond)
	globalFile := filepath.Join(e.EngramHome, "MEMORY.md")
	projectFile := filepath.Join(e.ClaudeDir, "projects", sanitizePath(e.Project), "memory", "MEMORY.md")

	for i, p := range statedPrompts {
		if res, _ := e.runSession(e.Project, p); !strings.Contains(res.Result, "Will do.") {
			t.Fatalf("session %d: client result %q", i+1, res.Result)
		}
		t.Logf("after session %d: engram-worker run:\n%s", i+1, strings.TrimSpace(e.Worker(bins.Worker, "run")))
		act := activeBeliefs(t, e)
		if _, ok := act[statedBelief]; !ok {
			t.Fatalf("after session %d no active %q: %s\nepisodes:\n%s", i+1, statedBelief,
				describeBeliefs(readBeliefs(t, e)), describeEpisodes(readEpisodes(t, e)))
		}
	}
	bs := readBeliefs(t, e)
	act := activeBeliefs(t, e)
	tdt, testify := act[statedBelief], act[statedTestify]
	if len(bs) != 2 || tdt.Supporting == nil || len(tdt.Supporting) != 4 || len(testify.Supporting) != 2 {
		t.Fatalf("after four sessions: %s\nwant one belief about table-driven tests (4 episodes) and one about testify (2)",
			describeBeliefs(bs))
	}
	t.Logf("beliefs: %s", describeBeliefs(bs))
	if g := readFileOr(globalFile); !strings.Contains(g, "- "+statedBelief) || !strings.Contains(g, "- "+statedTestify) {
		t.Fatalf("global MEMORY.md:\n%s", g)
	}

	// A related prompt: the belief is in the MEMORY.md the request loads,
	// and comes as a belief bite.
	_, reqs := e.runSession(e.Project, statedQuestion)
	turn := promptRequest(reqs, statedQuestion)
	if turn == nil {
		t.Fatalf("no request carries the question:\n%s", e.Stub.Summary())
	}
	files := loadedFiles(reqs[0])
	if g, ok := files[globalFile]; !ok || !strings.Contains(g.Body, statedBelief) {
		t.Errorf("the first request does not load %s with the belief; it loads:\n%s", globalFile, describeLoaded(files))
	}
	bite := "[Belief (0.93): " + statedBelief + "]"
	if !turn.Contains(bite) {
		var got []string
		for _, s := range recallSpans(*turn) {
			got = append(got, s.Where+": "+s.Text)
		}
		t.Errorf("the bite %q did not reach the model; engram's context:\n%s", bite, strings.Join(got, "\n"))
	}

	// The correction, and the next cycle.
	e.runSession(e.Project, statedCorrection)
	t.Logf("after the correction: engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	act = activeBeliefs(t, e)
	if _, ok := act[statedBelief]; ok {
		t.Fatalf("the corrected belief is still active: %s", describeBeliefs(readBeliefs(t, e)))
	}
	// Its child is the new convention.
	var child, subtests *belief.Belief
	for _, b := range readBeliefs(t, e) { // two beliefs of one clause read the same
		if b.Status != belief.StatusActive {
			continue
		}
		// A change said as what happened ("we dropped table-driven tests,
		// use plain subtests now") is one belief, the new convention's,
		// and it is the corrected belief's child.
		if b.ParentID == tdt.ID {
			child = &b
		}
		if b.Subject == "plain subtest" && b.Predicate == "prefers" {
			subtests = &b
		}
	}
	if child == nil || subtests == nil {
		t.Fatalf("no belief replacing %s, or none about plain subtests: %s", tdt.ID, describeBeliefs(readBeliefs(t, e)))
	}
	g := readFileOr(globalFile)
	if !strings.Contains(g, "[NO LONGER TRUE] "+statedBelief) {
		t.Errorf("the global MEMORY.md does not show the corrected belief as no longer true:\n%s", g)
	}
	if p := readFileOr(projectFile); !strings.Contains(p, "- "+subtests.Statement) || !strings.Contains(p, "- "+child.Statement) {
		t.Errorf("the project MEMORY.md lacks %q or %q:\n%s", subtests.Statement, child.Statement, p)
	}
	// One more cycle: the former belief is gone from the file, and no
	// older episode brings it back.
	e.Worker(bins.Worker, "run", "--consolidate")
	if g := readFileOr(globalFile); strings.Contains(g, statedBelief) {
		t.Errorf("the corrected belief is still in the global MEMORY.md a cycle later:\n%s", g)
	}
	if _, ok := activeBeliefs(t, e)[statedBelief]; ok {
		t.Errorf("the corrected belief came back after a further consolidation")
	}
}

// TestStatedFactWithRealClient: a project fact stated once becomes a
// project belief at the next cycle; "How do we deploy?" then gets it as
// the first bite, ahead of the exchange that stated it.
func TestStatedFactWithRealClient(t *testing.T) {
	const question = "How do we deploy?"
	respond := func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Noted.") }
	e, bins := statedEnv(t, respond)
	e.runSession(e.Project, "For the record: this service deploys to Fly.io")
	t.Logf("engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	var fact *belief.Belief
	for _, b := range activeBeliefs(t, e) {
		if b.Subject == "deploy target" && b.Context == "fly.io" {
			fact = &b
		}
	}
	if fact == nil || fact.Scope != "project" || fact.ProjectPath != e.Project {
		t.Fatalf("no project belief about the deploy target: %s", describeBeliefs(readBeliefs(t, e)))
	}
	_, reqs := e.runSession(e.Project, question)
	turn := promptRequest(reqs, question)
	if turn == nil {
		t.Fatalf("no request carries the question:\n%s", e.Stub.Summary())
	}
	spans := recallSpans(*turn)
	if len(spans) == 0 {
		t.Fatalf("no engram context in the request for %q", question)
	}
	text := spans[0].Text
	first := strings.Index(text, "[")
	if first < 0 || !strings.HasPrefix(text[first:], "[Belief (0.80): "+fact.Statement+"]") {
		t.Errorf("the first bite is not the deploy belief %q:\n%s", fact.Statement, text)
	}
}

// TestStatedGlobalWithRealClient: "never add emoji to commit messages",
// said once, is in the global MEMORY.md after one worker cycle; the
// question "should we add emoji to commit messages?" puts nothing there.
func TestStatedGlobalWithRealClient(t *testing.T) {
	respond := func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Understood.") }
	e, bins := statedEnv(t, respond)
	globalFile := filepath.Join(e.EngramHome, "MEMORY.md")

	e.runSession(e.Project, "should we add emoji to commit messages?")
	t.Logf("engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if bs := readBeliefs(t, e); len(bs) != 0 {
		t.Fatalf("a question formed beliefs: %s", describeBeliefs(bs))
	}
	if g := readFileOr(globalFile); strings.Contains(strings.ToLower(g), "emoji") {
		t.Fatalf("the question reached the global MEMORY.md:\n%s", g)
	}

	e.runSession(e.Project, "never add emoji to commit messages")
	t.Logf("engram-worker run:\n%s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	g := readFileOr(globalFile)
	if !strings.Contains(g, "- Never add emoji to commit messages.") {
		t.Fatalf("the global MEMORY.md after one cycle lacks the statement's belief:\n%s\nbeliefs: %s", g,
			describeBeliefs(readBeliefs(t, e)))
	}
	// The next session loads it.
	_, reqs := e.runSession(e.Project, "write the commit message for this change")
	if f, ok := loadedFiles(reqs[0])[globalFile]; !ok || !strings.Contains(f.Body, "Never add emoji to commit messages.") {
		t.Errorf("the next session's first request does not load the belief; it loads:\n%s", describeLoaded(loadedFiles(reqs[0])))
	}
}
