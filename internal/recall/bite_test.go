package recall

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBiteDropsToolBoilerplate(t *testing.T) {
	ctx := strings.Join([]string{
		"User: add a health check endpoint to the express server",
		"Assistant used Write: src/health.ts (412 bytes)",
		"Tool result (Write): File created successfully at: /home/u/src/app/src/health.ts",
		"Assistant used Bash: npm test -- --runInBand",
		"Tool result (Bash): PASS src/health.test.ts\n  ✓ responds 200 (12 ms)\nTests: 1 passed",
		"Assistant used Bash: npm test -- --runInBand",
		"Tool error (Bash): exit 1",
		"Assistant: Added GET /healthz returning 200 with the build sha; the test passes.",
	}, "\n\n")
	got := body(Item{Kind: KindEpisode, Detail: ctx, Text: "summary"})
	want := "User: add a health check endpoint to the express server (Assistant used Write: src/health.ts (412 bytes); " +
		"Bash: npm test -- --runInBand) Assistant: Added GET /healthz returning 200 with the build sha; the test passes."
	if got != want {
		t.Errorf("bite\n got %q\nwant %q", got, want)
	}
	for _, noise := range []string{"File created successfully", "PASS src", "exit 1"} {
		if strings.Contains(got, noise) {
			t.Errorf("bite keeps tool output %q", noise)
		}
	}
	// Many calls: a few are named.
	var many []string
	for _, f := range []string{"a.go", "b.go", "c.go", "d.go", "e.go", "f.go"} {
		many = append(many, "Assistant used Edit: "+f)
	}
	got = body(Item{Kind: KindEpisode, Detail: "User: rename Foo\n\n" + strings.Join(many, "\n\n") + "\n\nAssistant: Renamed."})
	if !strings.Contains(got, "Edit: d.go; …)") || strings.Contains(got, "e.go") {
		t.Errorf("many calls: %q", got)
	}
	// A multi-line user paragraph stays whole.
	got = body(Item{Kind: KindEpisode, Detail: "User: first line\nsecond line\n\nAssistant: ok then"})
	if got != "User: first line second line Assistant: ok then" {
		t.Errorf("multi-line: %q", got)
	}
}

func TestUnanswered(t *testing.T) {
	for _, c := range []struct {
		ctx  string
		want bool
	}{
		{"User: Which package manager should we use here?\n\nAssistant: Understood.", true},
		{"User: How do we deploy?\n\nAssistant: Let me check the repository first…", true},
		{"User: how do we deploy?", true},
		{"User: What's the test command?\n\nAssistant: I'm not sure.", true},
		// Answered, or not a question.
		{"User: How do we deploy?\n\nAssistant: With flyctl deploy; the app is storefront-prod on Fly.io.", false},
		{"User: Which package manager?\n\nAssistant: Sure, pnpm: the lock file is pnpm-lock.yaml and CI runs pnpm install.", false},
		{"User: I avoid gluten.\n\nAssistant: Got it, I'll keep that in mind.", false},
		{"User: can you run the tests?\n\nAssistant used Bash: go test ./...\n\nAssistant: Ok.", false},
		{"a note saved by hand?", false},
	} {
		if got := Unanswered(Item{Kind: KindEpisode, Detail: c.ctx}); got != c.want {
			t.Errorf("%q: unanswered=%v, want %v", c.ctx, got, c.want)
		}
	}
	if Unanswered(Item{Kind: KindBelief, Detail: "User: what?"}) {
		t.Error("a belief is never an unanswered exchange")
	}
}

func TestNeighbourAdds(t *testing.T) {
	res := Result{cov: NewCoverer([]string{"deploy", "fly"})}
	answered := Candidate{Item: Item{Kind: KindEpisode, Detail: "User: deploy to fly\n\nAssistant: Deployed with flyctl; it took two minutes."}}
	question := Candidate{Item: Item{Kind: KindEpisode, Detail: "User: how do we deploy?\n\nAssistant: Hmm."}}
	related := Item{Kind: KindEpisode, Detail: "User: the fly app is storefront-prod\n\nAssistant: Noted, storefront-prod."}
	unrelated := Item{Kind: KindEpisode, Detail: "User: rename the helper\n\nAssistant: Renamed it to parseDate."}
	asking := Item{Kind: KindEpisode, Detail: "Ada: where do we host the billing app?"}
	unanswered := Item{Kind: KindEpisode, Detail: "User: and on fly?\n\nAssistant: Understood."}
	for _, before := range []bool{true, false} {
		if !res.adds(answered, related, before) {
			t.Error("a neighbour that shares a term with the prompt adds")
		}
		if res.adds(answered, unrelated, before) {
			t.Error("an unrelated neighbour of an answered exchange adds nothing")
		}
		if res.adds(question, unanswered, before) {
			t.Error("an unanswered neighbour is never shown")
		}
	}
	if !res.adds(question, unrelated, false) || res.adds(question, unrelated, true) {
		t.Error("the turn after a question left open may hold its answer; the turn before does not")
	}
	if !res.adds(answered, asking, true) || res.adds(answered, asking, false) {
		t.Error("the question just before an exchange is what it answers; a question after it is not")
	}
}

// TestNeighbourOfAnotherProject: a global bite said in another project is
// shown, but its neighbours of that project are not; a neighbour of the
// prompt's project, or a global one, is.
func TestNeighbourOfAnotherProject(t *testing.T) {
	res := Result{cov: NewCoverer([]string{"lint", "commit"}), project: "/src/web"}
	bite := Candidate{Item: Item{Kind: KindEpisode, Scope: "global", ProjectPath: "/src/api",
		Detail: "User: always lint before a commit\n\nAssistant: I will lint before every commit."}}
	mk := func(scope, path string) Item {
		return Item{Kind: KindEpisode, Scope: scope, ProjectPath: path,
			Detail: "User: in this repo we run golangci-lint before every commit\n\nAssistant: Noted."}
	}
	for _, c := range []struct {
		nb   Item
		want bool
	}{
		{mk("project", "/src/api"), false},
		{mk("project", "/src/web"), true},
		{mk("global", "/src/api"), true},
	} {
		if got := res.adds(bite, c.nb, true); got != c.want {
			t.Errorf("neighbour %s %s: adds=%v, want %v", c.nb.Scope, c.nb.ProjectPath, got, c.want)
		}
	}
	res.project = "" // every project (the CLI's --all-projects)
	if !res.adds(bite, mk("project", "/src/api"), true) {
		t.Error("asked for every project, a neighbour of any project is shown")
	}
}

// TestSupersededShownAsSuch: an episode a correction replaced ranks below
// an equal current one and, when shown, says it was superseded; the flag
// survives the recollection file.
func TestSupersededShownAsSuch(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	mk := func(id, text string, superseded bool) Candidate {
		return Candidate{Item: Item{Kind: KindEpisode, ID: id, Text: text, Detail: "User: " + text + "\n\nAssistant: Noted.",
			At: now.Add(-time.Hour), Importance: 0.5, Stability: 1, Superseded: superseded}, Coverage: 0.8}
	}
	cands := []Candidate{mk("ep_000000000001", "the nightly report runs at 02:00 and writes to S3", true),
		mk("ep_000000000002", "the nightly report runs at 05:00 and writes to S3", false)}
	Rank(cands, DefaultSettings.Weights, now)
	if cands[0].ID != "ep_000000000002" || cands[1].Score > 0.6*cands[0].Score {
		t.Fatalf("ranked %s (%.3f) over %s (%.3f)", cands[0].ID, cands[0].Score, cands[1].ID, cands[1].Score)
	}
	text, _ := Format(Result{Episodes: cands}, DefaultSettings.Limits, now)
	lines := strings.Split(text, "\n")
	var old, cur string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "02:00"):
			old = l
		case strings.Contains(l, "05:00"):
			cur = l
		}
	}
	if !strings.Contains(old, "superseded") || strings.Contains(cur, "superseded") {
		t.Fatalf("bites:\n%s", text)
	}
	f := &File{Scope: "project", CreatedAt: now, Items: []Item{cands[0].Item, cands[1].Item}}
	back, err := Decode(f.Encode())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range back.Items {
		if it.Superseded != (it.ID == "ep_000000000001") {
			t.Fatalf("%s: superseded %v after a round trip", it.ID, it.Superseded)
		}
	}
}

// TestTwinsShownOnce: a memory whose text a better one already shows (an
// automated prompt sent again) is not shown a second time, does not take a
// bite's place, and counts as injected.
func TestTwinsShownOnce(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	mk := func(id, text string) Candidate {
		return Candidate{Item: Item{Kind: KindEpisode, ID: id, Text: text, At: now.Add(-time.Hour), Importance: 0.5, Stability: 1}}
	}
	res := Result{Episodes: []Candidate{
		mk("ep_000000000001", "You are a futures analyst grounded in Tidy First."),
		mk("ep_000000000002", "You are a futures analyst grounded in Tidy First."),
		mk("ep_000000000003", "You are a futures analyst   grounded in Tidy First."),
		mk("ep_000000000004", "the release checklist lives in docs/RELEASE.md"),
	}}
	lim := DefaultSettings.Limits
	lim.Memories = 2
	text, ids := Format(res, lim, now)
	if n := strings.Count(text, "futures analyst"); n != 1 {
		t.Errorf("the text shown %d times:\n%s", n, text)
	}
	if !strings.Contains(text, "RELEASE.md") {
		t.Errorf("a twin took the place of another memory:\n%s", text)
	}
	want := []string{"ep_000000000001", "ep_000000000004", "ep_000000000002", "ep_000000000003"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
}
