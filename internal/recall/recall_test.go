package recall

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/inject"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestFileRoundTrip(t *testing.T) {
	local := embed.NewLocal()
	v := local.EmbedText("deploy the billing service with flyctl")
	f := &File{Embedder: local.Name(), CreatedAt: now, Scope: "project", ProjectPath: "/p",
		Docs: 500, StopDocs: 25, Common: []TermDocs{{Term: "test", Docs: 300}, {Term: "go", Docs: 200}},
		Items: []Item{
			{Kind: KindEpisode, ID: "ep_000000000001", Text: "Deployed billing", Detail: "we deploy billing with flyctl",
				Project: "p", ProjectPath: "/p", At: now.Add(-time.Hour), Importance: 0.7, AccessCount: 2, LastAccess: now,
				Stability: 1.5, Vec: v},
			{Kind: KindBelief, ID: "bl_000000000001", Text: "User prefers Fly for billing", Confidence: 0.85, Evidence: 7},
		}}
	data := f.Encode()
	g, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if g.Embedder != f.Embedder || !g.CreatedAt.Equal(now) || g.Docs != 500 || g.StopDocs != 25 || len(g.Common) != 2 || len(g.Items) != 2 {
		t.Fatalf("decoded %+v", g)
	}
	a, b := g.Items[0], g.Items[1]
	if a.ID != "ep_000000000001" || a.Detail != f.Items[0].Detail || a.Importance != 0.7 || a.AccessCount != 2 ||
		!a.LastAccess.Equal(now) || a.Stability != 1.5 {
		t.Errorf("episode item %+v", a)
	}
	if b.Confidence != 0.85 || b.Evidence != 7 || b.HasVec() {
		t.Errorf("belief item %+v", b)
	}
	// The int8 vector keeps the cosine within a hair of the float one.
	if c := a.Cos(v); c < 0.999 {
		t.Errorf("self cosine after quantisation=%v", c)
	}
	other := local.EmbedText("table driven tests in go")
	if d := a.Cos(other) - embed.Cosine(v, other); d > 0.01 || d < -0.01 {
		t.Errorf("quantised cosine off by %v", d)
	}

	// The view answers the same without decoding the file.
	view, err := DecodeView(data)
	if err != nil {
		t.Fatal(err)
	}
	if view.Len() != 2 || view.TermDocs("test") != 300 || view.TermDocs("go") != 200 || view.TermDocs("deploi") != 0 || view.MinCommonDocs != 200 {
		t.Errorf("view counts: len %d, test %d, go %d", view.Len(), view.TermDocs("test"), view.TermDocs("go"))
	}
	if c := view.Cos(0, v); c < 0.999 || view.Cos(1, v) != 0 {
		t.Errorf("view cosines %v %v", c, view.Cos(1, v))
	}
	postings := func(word string) []int {
		var out []int
		view.Postings(stemHash([]byte(Stem(word))), func(i int) { out = append(out, i) })
		return out
	}
	// "Deployed" and "deploy" share the stem "deploi"; billing is in both
	// items; the detail is indexed; a word in neither has no postings.
	for word, want := range map[string][]int{"deploying": {0}, "billing": {0, 1}, "flyctl": {0}, "fly": {1}, "kubernetes": nil} {
		if got := postings(word); !slices.Equal(got, want) {
			t.Errorf("postings(%q)=%v want %v", word, got, want)
		}
	}

	for _, bad := range [][]byte{nil, []byte("ENGRAMRC"), []byte("nope"), data[:40], data[:len(data)-1]} {
		if _, err := Decode(bad); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
	// Damage anywhere is refused or decoded without a panic.
	for i := len(magic) + 1; i < len(data); i++ {
		bad := slices.Clone(data)
		bad[i] ^= 0xa5
		if v, err := DecodeView(bad); err == nil {
			for j := range v.Len() {
				v.Item(j)
				v.Cos(j, other)
			}
			v.Postings(stemHash([]byte("billing")), func(int) {})
		}
	}
}

func TestLoadRefusesSymlinkAndGarbage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "g.rec")
	if err := Save(good, &File{Scope: "global"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(good); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	link := filepath.Join(dir, "l.rec")
	os.Symlink(good, link)
	if _, err := Load(link); err == nil {
		t.Error("followed a symlink")
	}
	garbage := filepath.Join(dir, "x.rec")
	os.WriteFile(garbage, []byte("ENGRAMRC\x01garbage"), 0o600)
	if _, err := Load(garbage); err == nil {
		t.Error("garbage accepted")
	}
}

func TestTrivialAndTerms(t *testing.T) {
	for _, p := range []string{"yes", "  OK. ", "go on", "thanks!", "", "/clear", "lgtm", "it"} {
		if !Trivial(p) {
			t.Errorf("Trivial(%q)=false", p)
		}
	}
	for _, p := range []string{"what did we decide about billing?", "fix the flaky test", "yes, use postgres"} {
		if Trivial(p) {
			t.Errorf("Trivial(%q)=true", p)
		}
	}
	got := Terms("What did we decide about the Billing schema? billing!")
	if strings.Join(got, ",") != "decide,billing,schema" {
		t.Errorf("Terms=%v", got)
	}
	// Rarest first, stop terms and words under three letters left out,
	// every word quoted.
	terms := queryTerms("decide billing schemas go invoices")
	for i := range terms {
		switch terms[i].word {
		case "decide":
			terms[i].stop = true
		case "schemas":
			terms[i].weight = 3
		case "invoices":
			terms[i].weight = 2
		}
	}
	if m := matchQuery(terms, 5); m != `"schemas" OR "invoices" OR "billing"` {
		t.Errorf("matchQuery=%s", m)
	}
	if m := matchQuery(terms, 2); m != `"schemas" OR "invoices"` {
		t.Errorf("matchQuery with 2 terms=%s", m)
	}
}

func TestAgo(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "just now", 5 * time.Minute: "5 minutes ago", 3 * time.Hour: "3 hours ago",
		30 * time.Hour: "yesterday", 3 * 24 * time.Hour: "3 days ago", 20 * 24 * time.Hour: "2 weeks ago",
		90 * 24 * time.Hour: "3 months ago", 800 * 24 * time.Hour: "2 years ago",
	} {
		if got := Ago(now.Add(-d), now); got != want {
			t.Errorf("Ago(%v)=%q want %q", d, got, want)
		}
	}
}

func TestFormat(t *testing.T) {
	res := Result{
		Beliefs: []Candidate{{Item: Item{Kind: KindBelief, ID: "bl_1", Text: "User prefers Bun", Confidence: 0.853}}},
		Episodes: []Candidate{
			{Item: Item{Kind: KindEpisode, ID: "ep_1", Text: "deployed\nbilling", Project: "billing", At: now.Add(-72 * time.Hour)}},
			{Item: Item{Kind: KindEpisode, ID: "ep_2", Text: strings.Repeat("long ", 1000), At: now}},
			{Item: Item{Kind: KindEpisode, ID: "ep_3", Text: "third"}},
			{Item: Item{Kind: KindEpisode, ID: "ep_4", Text: "fourth is over the cap"}},
		},
	}
	// At most three memory bites here, whatever the defaults.
	lim := Limits{Memories: 3, Beliefs: 2, Budget: 6000, BiteMax: 1200, NeighbourMax: 500}
	text, used := Format(res, lim, now)
	want := []string{"[Belief (0.85): User prefers Bun]", "[Memory · 19 Nov 2026 · project billing] deployed billing", "[Memory · just now] long long"}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in:\n%s", w, text)
		}
	}
	if strings.Join(used, ",") != "bl_1,ep_1,ep_2,ep_3" || strings.Contains(text, "fourth") {
		t.Errorf("ids=%v", used)
	}
	if !strings.HasPrefix(text, inject.Open) || len(text) > lim.Budget {
		t.Errorf("framing or budget: %d bytes", len(text))
	}
	if tiny, _ := Format(res, Limits{Memories: 3, Beliefs: 2, Budget: 300, BiteMax: 100}, now); len(tiny) > 300 {
		t.Errorf("budget exceeded: %d", len(tiny))
	}
	if empty, ids := Format(Result{}, DefaultSettings.Limits, now); empty != "" || ids != nil {
		t.Error("empty result formatted")
	}
	// The defaults' budget holds too: the long bite is clipped, the rest
	// fits or is left out.
	if def, _ := Format(res, DefaultSettings.Limits, now); len(def) > DefaultSettings.Limits.Budget || !strings.Contains(def, "fourth") {
		t.Errorf("default limits: %d bytes (budget %d), fourth memory shown: %v", len(def), DefaultSettings.Limits.Budget, strings.Contains(def, "fourth"))
	}
}

func TestRetrievalStrength(t *testing.T) {
	if RetrievalStrength(time.Time{}, 1, now) != 0.5 {
		t.Error("never accessed")
	}
	if s := RetrievalStrength(now.Add(-24*time.Hour), 1, now); s < 0.367 || s > 0.368 {
		t.Errorf("one day at stability 1: %v", s)
	}
	if s := RetrievalStrength(now.Add(-24*time.Hour), 10, now); s < 0.904 || s > 0.905 {
		t.Errorf("one day at stability 10: %v", s)
	}
}

func ids(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// A memory is relevant through the terms it shares with the prompt; its
// cosine can lift that, but never stand in for it.
func TestRelevanceGate(t *testing.T) {
	for _, c := range []struct {
		cov, cos float32
		want     bool
	}{
		{0, 0.6, false},     // no shared term: lexical-vector noise
		{0.05, 0.21, false}, // one minor term, and a cosine from shared letters
		{0.15, 0.35, true},  // a paraphrase: the cosine lifts a partial match
		{0.25, 0, true},
		{0.1, 0.1, false},
	} {
		if got := Relevant(Candidate{Coverage: c.cov, Cos: c.cos}, DefaultSettings.Weights, DefaultSettings.MinRelevance); got != c.want {
			t.Errorf("coverage %v cosine %v: relevant=%v", c.cov, c.cos, got)
		}
	}
}

func TestFormatNeighbours(t *testing.T) {
	prev := Item{Kind: KindEpisode, ID: "ep_0", Text: "summary 0", Detail: "Ada: shall we try fly?"}
	next := Item{Kind: KindEpisode, ID: "ep_2", Text: "summary 2", Detail: "Bo: it deployed in two minutes"}
	res := Result{Episodes: []Candidate{
		{Item: Item{Kind: KindEpisode, ID: "ep_1", Text: "deployed to fly", Detail: "Ada: deploy it with flyctl", At: now}, Before: &prev, After: &next},
		{Item: Item{Kind: KindEpisode, ID: "ep_5", Text: "second memory", At: now}, After: &Item{ID: "ep_6", Text: "after the second"}},
	}}
	text, used := Format(res, DefaultSettings.Limits, now)
	want := "[Memory · just now] Ada: deploy it with flyctl (just before: Ada: shall we try fly?) (just after: Bo: it deployed in two minutes)"
	if !strings.Contains(text, want) || !strings.Contains(text, "[Memory · just now] second memory (just after: after the second)") {
		t.Errorf("context:\n%s", text)
	}
	if strings.Join(used, ",") != "ep_1,ep_0,ep_2,ep_5,ep_6" {
		t.Errorf("ids %v", used)
	}
	// The budget keeps every bite first, then the exchanges after, best
	// memory first, then those before.
	base, _ := Format(Result{Episodes: []Candidate{{Item: res.Episodes[0].Item}, {Item: res.Episodes[1].Item}}}, DefaultSettings.Limits, now)
	lim := DefaultSettings.Limits
	lim.Budget = len(base) + len(" (just after: Bo: it deployed in two minutes)")
	text, used = Format(res, lim, now)
	if strings.Join(used, ",") != "ep_1,ep_2,ep_5" || strings.Contains(text, "before") || len(text) > lim.Budget {
		t.Errorf("tight budget: ids %v\n%s", used, text)
	}
}

// An exchange is shown once: the neighbour of a bite that is a bite
// itself, or already shown next to a better one, is not repeated.
func TestFormatNeighboursOnce(t *testing.T) {
	a := Item{Kind: KindEpisode, ID: "ep_1", Text: "named the dog Tilly", At: now}
	b := Item{Kind: KindEpisode, ID: "ep_2", Text: "Tilly helps me focus", At: now}
	c := Item{Kind: KindEpisode, ID: "ep_3", Text: "the stuffed dog you gave me", At: now}
	res := Result{Episodes: []Candidate{
		{Item: a, After: &b, Before: &c}, // both neighbours shown...
		{Item: b, Before: &a},            // ...its neighbour is the first bite
		{Item: Item{Kind: KindEpisode, ID: "ep_4", Text: "a third memory", At: now}, Before: &c}, // shown before
	}}
	text, used := Format(res, DefaultSettings.Limits, now)
	if strings.Join(used, ",") != "ep_1,ep_3,ep_2,ep_4" {
		t.Errorf("ids %v", used)
	}
	if n := strings.Count(text, "Tilly helps me focus"); n != 1 {
		t.Errorf("the second bite's text shown %d times:\n%s", n, text)
	}
	if n := strings.Count(text, "the stuffed dog"); n != 1 {
		t.Errorf("a shared neighbour shown %d times:\n%s", n, text)
	}
}

func TestTermWindow(t *testing.T) {
	for _, c := range [][3]int{{600, 6, 100}, {600, 4, 150}, {600, 1, 600}, {600, 30, 50}, {0, 3, 0}, {600, 0, 0}} {
		if got := TermWindow(c[0], c[1]); got != c[2] {
			t.Errorf("TermWindow(%d, %d)=%d want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestStatementCoverage(t *testing.T) {
	for _, tt := range []struct {
		prompt, statement, project string
		want                       float32
	}{
		// The prompt names what the belief is about: all of it.
		{"Should the cleanup script use bun?", "User prefers bun.", "", 1},
		{"add a test with testify", "Project api avoids testify.", "api", 1},
		// Half of what it is about is enough; less is left to the prompt's
		// own coverage.
		{"fix indentation in the parser", "User prefers tabs for indentation.", "", 0.5},
		{"fix the go files", "User prefers tabs for indentation in go code.", "", 0},
		// Framing words alone are nothing.
		{"which project does the user prefer?", "User prefers bun.", "", 0},
		{"write a haiku", "User prefers bun.", "", 0},
	} {
		got := statementCoverage(Item{Kind: KindBelief, Text: tt.statement, Project: tt.project}, queryTerms(tt.prompt))
		if got != tt.want {
			t.Errorf("statementCoverage(%q, %q)=%v want %v", tt.prompt, tt.statement, got, tt.want)
		}
	}
}

func TestWhen(t *testing.T) {
	if got := When(now.Add(-3*time.Hour), now); got != "3 hours ago" {
		t.Errorf("within a day: %q", got)
	}
	if got := When(now.Add(-72*time.Hour), now); got != "19 Nov 2026" {
		t.Errorf("3 days: %q", got)
	}
	// The date is the day in now's zone: 23:30 UTC is the next day in Tokyo.
	tokyo := time.FixedZone("JST", 9*3600)
	at := time.Date(2026, 11, 2, 23, 30, 0, 0, time.UTC)
	if got := When(at, now.In(tokyo)); got != "3 Nov 2026" {
		t.Errorf("zone: %q", got)
	}
	if got := When(time.Time{}, now); got != "some time ago" {
		t.Errorf("zero: %q", got)
	}
}
