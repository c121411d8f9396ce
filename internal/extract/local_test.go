package extract

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/transcript"
)

var _ Extractor = (*Local)(nil)

// fixtureTurns reads a real transcript from the capture package's testdata
// and returns one Input per turn, as the worker would build them.
func fixtureTurns(t testing.TB, name string) []Input {
	t.Helper()
	res, err := transcript.ReadFile("../capture/testdata/"+name, 0, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for i, turn := range transcript.Turns(res.Messages) {
		in := Input{CaptureID: int64(i + 1), SessionID: name, Project: "proj", ProjectPath: "/home/dev/proj",
			Content: transcript.Render(turn)}
		for _, m := range turn {
			for _, b := range m.Blocks {
				in.Blocks = append(in.Blocks, Block{Role: m.Role, Kind: b.Kind, Text: b.Text, Tool: b.Tool,
					ToolUseID: b.ToolUseID, IsError: b.IsError})
			}
		}
		ins = append(ins, in)
	}
	return ins
}

func mustExtract(t testing.TB, in Input) Draft {
	t.Helper()
	d, err := NewLocal().Extract(context.Background(), in)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return d
}

func TestName(t *testing.T) {
	if got := NewLocal().Name(); got != "local" {
		t.Errorf("Name()=%q, want %q", got, "local")
	}
}

// TestFixtureSession1 runs the real transcript: a stated preference, then
// a small piece of tool work.
func TestFixtureSession1(t *testing.T) {
	turns := fixtureTurns(t, "session-1.jsonl")
	if len(turns) != 2 {
		t.Fatalf("session-1 has %d turns, want 2", len(turns))
	}

	d := mustExtract(t, turns[0])
	want := []string{"preference:table-driven test:+G", "avoid:testify:-G"}
	if got := sigs(d.Signals); !slices.Equal(got, want) {
		t.Errorf("Extract(%q).Signals=%v, want %v", turns[0].Content, got, want)
	}
	if d.Type != episode.TypePreference || d.Scope != episode.ScopeGlobal || d.Skip {
		t.Errorf("turn 0: Type=%q Scope=%q Skip=%v, want preference, global, false", d.Type, d.Scope, d.Skip)
	}
	for _, w := range []string{"I prefer table-driven tests and never testify", "Noted: table-driven tests"} {
		if !strings.Contains(d.Summary, w) {
			t.Errorf("turn 0: Summary=%q, want it to contain %q", d.Summary, w)
		}
	}
	if d.Importance < 0.5 {
		t.Errorf("turn 0: Importance=%v, want ≥ 0.5 for a stated preference", d.Importance)
	}

	d = mustExtract(t, turns[1])
	for _, w := range []string{"/home/dev/proj/health.go", "Bash", "Write", "ls"} {
		if !slices.Contains(d.Entities, w) {
			t.Errorf("turn 1: Entities=%q, want %q among them", d.Entities, w)
		}
	}
	if d.Type != episode.TypeProcedure || d.Scope != episode.ScopeProject || d.Skip {
		t.Errorf("turn 1: Type=%q Scope=%q Skip=%v, want procedure, project, false", d.Type, d.Scope, d.Skip)
	}
	wantSummary := "please add a health endpoint — I added health.go with a health() function returning ok. — used Bash, Write"
	if d.Summary != wantSummary {
		t.Errorf("turn 1: Summary=%q, want %q", d.Summary, wantSummary)
	}
	if len(d.Signals) != 0 {
		t.Errorf("turn 1: Signals=%v, want none (the assistant's \"as you prefer\" is not a signal)", sigs(d.Signals))
	}
	if d.Context != turns[1].Content {
		t.Errorf("turn 1: Context differs from Content although it fits")
	}
}

func TestFixtureSession2(t *testing.T) {
	turns := fixtureTurns(t, "session-2.jsonl")
	if len(turns) == 0 {
		t.Fatal("session-2 has no turns")
	}
	d := mustExtract(t, turns[0])
	wantEnts := []string{"Bash", "ls", "Write", "/home/dev/proj/health.go", "health"}
	if !slices.Equal(d.Entities, wantEnts) {
		t.Errorf("Entities=%q, want %q (the bare health.go of the listing folds into the path)", d.Entities, wantEnts)
	}
}

// TestContentOnly: an Input with Content but no Blocks gives the same
// draft as one with both.
func TestContentOnly(t *testing.T) {
	for _, name := range []string{"session-1.jsonl", "session-2.jsonl"} {
		for i, in := range fixtureTurns(t, name) {
			full := mustExtract(t, in)
			in.Blocks = nil
			bare := mustExtract(t, in)
			if !reflect.DeepEqual(full, bare) {
				t.Errorf("%s turn %d: from Content only\n%+v\nwant\n%+v", name, i, bare, full)
			}
		}
	}
	// And Blocks without Content: Context is rendered from them.
	in := fixtureTurns(t, "session-1.jsonl")[1]
	want := in.Content
	in.Content = ""
	if d := mustExtract(t, in); d.Context != want {
		t.Errorf("Context from Blocks=%q, want %q", d.Context, want)
	}
}

func TestSkip(t *testing.T) {
	toolTurn := func(user string) Input {
		return Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: user},
			{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go test ./..."},
			{Role: "user", Kind: "tool_result", Text: "ok"},
			{Role: "assistant", Kind: "text", Text: "All tests pass."},
		}}
	}
	tests := []struct {
		name string
		in   Input
		skip bool
	}{
		{"yes", userInput("yes"), true},
		{"ok thanks", userInput("ok, thanks!"), true},
		{"lgtm", userInput("LGTM 👍"), true},
		{"go on", userInput("go on"), true},
		{"continue", userInput("continue"), true},
		{"yes go ahead", userInput("Yes, go ahead."), true},
		{"empty", Input{}, true},
		{"only a read", Input{Blocks: []Block{
			{Role: "assistant", Kind: "tool_use", Tool: "Read", Text: "main.go"},
			{Role: "user", Kind: "tool_result", Text: "package main"},
		}}, true},
		{"ack with tool work", toolTurn("continue"), false},
		{"ack with a signal", userInput("ok, but use pnpm from now on"), false},
		{"no", userInput("no"), false}, // a correction
		{"a request", userInput("add a health endpoint"), false},
		{"a question", userInput("why does it fail?"), false},
		{"only a write", Input{Blocks: []Block{
			{Role: "assistant", Kind: "tool_use", Tool: "Write", Text: "/p/a.go (3 bytes)"},
		}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := mustExtract(t, tt.in); d.Skip != tt.skip {
				t.Errorf("Extract(%s).Skip=%v, want %v (Signals=%v)", tt.name, d.Skip, tt.skip, sigs(d.Signals))
			}
		})
	}
}

func TestType(t *testing.T) {
	steps := Input{Blocks: []Block{
		{Role: "user", Kind: "text", Text: "How do I release a new version?"},
		{Role: "assistant", Kind: "text", Text: "Steps:\n1. Bump the version.\n2. Tag it.\n3. Push the tag."},
	}}
	failing := Input{Blocks: []Block{
		{Role: "user", Kind: "text", Text: "run the tests"},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go test ./..."},
		{Role: "user", Kind: "tool_result", Text: "ok"},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go vet ./..."},
		{Role: "user", Kind: "tool_result", IsError: true, Text: "vet: x.go:1: bad"},
	}}
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"correction beats preference", userInput("No, I prefer tabs"), episode.TypeCorrection},
		{"preference", userInput("I prefer tabs"), episode.TypePreference},
		{"avoid", userInput("never use mocks"), episode.TypePreference},
		{"switch", userInput("we switched from npm to pnpm"), episode.TypePreference},
		{"decision", userInput("let's go with Postgres"), episode.TypeDecision},
		{"procedure from tools", fixtureTurns(t, "session-1.jsonl")[1], episode.TypeProcedure},
		{"procedure from steps", steps, episode.TypeProcedure},
		{"fact", userInput("our API runs on port 8080"), episode.TypeFact},
		{"question", userInput("What does the worker do?"), episode.TypeQuestion},
		{"question without mark", userInput("how does the spool work"), episode.TypeQuestion},
		{"event", userInput("add a health endpoint"), episode.TypeEvent},
		{"failing tool work", failing, episode.TypeEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := mustExtract(t, tt.in); d.Type != tt.want {
				t.Errorf("Extract(%s).Type=%q, want %q (Signals=%v)", tt.name, d.Type, tt.want, sigs(d.Signals))
			}
		})
	}
}

func TestImportance(t *testing.T) {
	fixture := fixtureTurns(t, "session-1.jsonl")
	imp := func(in Input) float64 { return mustExtract(t, in).Importance }
	pref := imp(userInput("I prefer table-driven tests"))
	event := imp(userInput("add a health endpoint"))
	ack := imp(userInput("thanks"))
	work := imp(fixture[1])
	fixed := imp(Input{Blocks: []Block{
		{Role: "user", Kind: "text", Text: "fix the build"},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go build ./..."},
		{Role: "user", Kind: "tool_result", IsError: true, Text: "x.go:1: undefined: y"},
		{Role: "assistant", Kind: "tool_use", Tool: "Edit", Text: "/p/x.go"},
		{Role: "user", Kind: "tool_result", Text: "ok"},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go build ./..."},
		{Role: "user", Kind: "tool_result", Text: ""},
		{Role: "assistant", Kind: "text", Text: "Fixed: y was renamed."},
	}})
	order := []struct {
		name string
		v    float64
	}{{"ack", ack}, {"event", event}, {"tool work", work}, {"error fixed", fixed}, {"preference", pref}}
	for i, o := range order {
		if o.v < 0 || o.v > 1 {
			t.Errorf("Importance(%s)=%v, want in [0,1]", o.name, o.v)
		}
		if i > 0 && o.v <= order[i-1].v {
			t.Errorf("Importance(%s)=%v, want > Importance(%s)=%v", o.name, o.v, order[i-1].name, order[i-1].v)
		}
	}
	// Length raises importance, saturating.
	short := imp(userInput("add a health endpoint"))
	long := imp(userInput("add a health endpoint " + strings.Repeat("with details ", 1000)))
	if long <= short || long > short+impLength {
		t.Errorf("Importance(long)=%v, want in (%v, %v]", long, short, short+impLength)
	}
}

func TestScope(t *testing.T) {
	edits := func(user string, n int) Input {
		in := Input{ProjectPath: "/home/dev/proj", Blocks: []Block{{Role: "user", Kind: "text", Text: user}}}
		for i := range n {
			in.Blocks = append(in.Blocks, Block{Role: "assistant", Kind: "tool_use", Tool: "Edit",
				Text: fmt.Sprintf("/home/dev/proj/internal/p%d/f.go", i)})
		}
		return in
	}
	tests := []struct {
		name string
		in   Input
		want string
	}{
		{"global preference", userInput("I prefer tabs"), episode.ScopeGlobal},
		{"imperative", userInput("never use mocks"), episode.ScopeGlobal},
		{"imperative about this repo", userInput("never use mocks in this repo"), episode.ScopeProject},
		{"project marker", userInput("I prefer tabs in this repo"), episode.ScopeProject},
		{"no signal", userInput("add a health endpoint"), episode.ScopeProject},
		{"global with a little work", edits("I prefer early returns", 2), episode.ScopeGlobal},
		{"project files dominate", edits("I prefer early returns", 5), episode.ScopeProject},
		{"files outside the project", edits("I prefer early returns", 0), episode.ScopeGlobal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := mustExtract(t, tt.in); d.Scope != tt.want {
				t.Errorf("Extract(%s).Scope=%q, want %q (Signals=%v, Entities=%q)", tt.name, d.Scope, tt.want,
					sigs(d.Signals), d.Entities)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tests := []struct {
		name string
		in   Input
		want []string // substrings
	}{
		{"request and outcome", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "Rename the Store.Open method to Store.Connect. Keep the old one as a deprecated alias."},
			{Role: "assistant", Kind: "tool_use", Tool: "Edit", Text: "/p/store.go"},
			{Role: "assistant", Kind: "text", Text: "Let me look."},
			{Role: "assistant", Kind: "text", Text: "Done. Store.Connect replaces Store.Open, which stays as a deprecated alias."},
		}}, []string{"Rename the Store.Open method to Store.Connect.", "Done. Store.Connect replaces Store.Open", "used Edit"}},
		{"markdown and code dropped", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "## Task\nfix **this**:\n```\npanic: boom\n```"},
			{Role: "assistant", Kind: "text", Text: "- Fixed the `nil` map in `cache.go`."},
		}}, []string{"Task. fix this:", "Fixed the nil map in cache.go."}},
		{"long sides are clipped", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "please " + long},
			{Role: "assistant", Kind: "text", Text: "result " + long},
		}}, []string{"please word", "… — result word", "…"}},
		{"no text", Input{Blocks: []Block{
			{Role: "assistant", Kind: "tool_use", Tool: "Write", Text: "/p/a.go (3 bytes)"},
		}}, []string{"used Write"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustExtract(t, tt.in)
			if n := utf8.RuneCountInString(d.Summary); n > maxSummary {
				t.Errorf("Summary has %d runes, want ≤ %d", n, maxSummary)
			}
			for _, w := range tt.want {
				if !strings.Contains(d.Summary, w) {
					t.Errorf("Extract(%s).Summary=%q, want it to contain %q", tt.name, d.Summary, w)
				}
			}
		})
	}
}

func TestContextClip(t *testing.T) {
	// Multi-byte runes everywhere, so that any cut could split one.
	content := "User: " + strings.Repeat("héllo wörld ✓ ", 800) + "\n\nAssistant: the end ✓"
	d := mustExtract(t, Input{Content: content})
	if len(d.Context) > MaxContext {
		t.Errorf("len(Context)=%d, want ≤ %d", len(d.Context), MaxContext)
	}
	if !utf8.ValidString(d.Context) {
		t.Error("Context is not valid UTF-8")
	}
	if !strings.HasPrefix(d.Context, "User: héllo") || !strings.HasSuffix(d.Context, "Assistant: the end ✓") {
		t.Errorf("Context does not keep the head and the tail: %q … %q", d.Context[:40], d.Context[len(d.Context)-40:])
	}
	if !strings.Contains(d.Context, "bytes omitted") {
		t.Error("Context has no omission marker")
	}
}

// TestDeterminism: the same input gives the same draft, also when
// extracted concurrently.
func TestDeterminism(t *testing.T) {
	ins := append(fixtureTurns(t, "session-1.jsonl"), fixtureTurns(t, "session-2.jsonl")...)
	ins = append(ins, typicalTurn(), userInput("I prefer pytest, black and ruff. Never use mocks or stubs! "+
		"We switched from npm to pnpm; our API runs on port 8080. No, use `zap` for logging."))
	for i, in := range ins {
		a, b := mustExtract(t, in), mustExtract(t, in)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("input %d: two extractions differ:\n%+v\n%+v", i, a, b)
		}
		var wg sync.WaitGroup
		got := make([]Draft, 8)
		for k := range got {
			wg.Go(func() { got[k] = mustExtract(t, in) })
		}
		wg.Wait()
		for k := range got {
			if !reflect.DeepEqual(got[k], a) {
				t.Errorf("input %d: concurrent extraction %d differs", i, k)
			}
		}
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewLocal().Extract(ctx, userInput("I prefer tabs")); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract(canceled)=%v, want context.Canceled", err)
	}
}

// typicalTurn is a 4 KB exchange of the usual shape: a prompt with a
// preference, a few tool calls with truncated results, a final reply.
func typicalTurn() Input {
	listing := strings.Repeat("-rw-r--r-- 1 dev dev  2048 Nov 22 00:54 store.go\n", 20)
	testOut := "--- FAIL: TestOpen (0.00s)\n    store_test.go:42: Open(\"/tmp/x\")=nil, want ErrNotFound\n" +
		strings.Repeat("ok  \tgithub.com/engram-memory/engram/internal/capture\t0.412s\n", 10) + "FAIL\n"
	code := strings.Repeat("func (s *Store) Open(ctx context.Context, path string) (*DB, error) {\n\treturn nil, nil\n}\n", 14)
	in := Input{Project: "engram", ProjectPath: "/home/dev/engram", Blocks: []Block{
		{Role: "user", Kind: "text", Text: "The TestOpen test in internal/store fails since yesterday. Can you fix it? " +
			"I prefer table-driven tests, so rewrite it as one, and never use testify. Our CI runs on GitHub Actions."},
		{Role: "assistant", Kind: "text", Text: "Let me look at the store package first."},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "ls -la internal/store \u2014 List the store package"},
		{Role: "user", Kind: "tool_result", Text: listing},
		{Role: "assistant", Kind: "tool_use", Tool: "Read", Text: "/home/dev/engram/internal/store/store.go"},
		{Role: "user", Kind: "tool_result", Text: code},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "cd /home/dev/engram && go test ./internal/store/ -run TestOpen \u2014 Run the failing test"},
		{Role: "user", Kind: "tool_result", IsError: true, Text: testOut},
		{Role: "assistant", Kind: "tool_use", Tool: "Edit", Text: "/home/dev/engram/internal/store/store_test.go"},
		{Role: "user", Kind: "tool_result", Text: "The file /home/dev/engram/internal/store/store_test.go has been updated successfully."},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go test ./internal/store/ \u2014 Run the store tests"},
		{Role: "user", Kind: "tool_result", Text: "ok  \tgithub.com/engram-memory/engram/internal/store\t0.388s"},
		{Role: "assistant", Kind: "text", Text: "Fixed: `Open` now returns `ErrNotFound` for a missing path, and TestOpen is " +
			"table-driven with the standard testing package (no testify). `go test ./internal/store/` passes. " +
			"I also checked that the capture package still builds."},
	}}
	in.Content = renderBlocks(in.Blocks)
	return in
}

func BenchmarkLocal(b *testing.B) {
	in := typicalTurn()
	l := NewLocal()
	ctx := context.Background()
	b.SetBytes(int64(len(in.Content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Extract(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "extractions/s")
}

func TestTypicalTurn(t *testing.T) {
	in := typicalTurn()
	if n := len(in.Content); n < 3500 || n > 4600 {
		t.Fatalf("typical turn is %d bytes, want about 4 KB", n)
	}
	d := mustExtract(t, in)
	want := []string{"preference:table-driven test:+G", "avoid:testify:-G", "fact:ci>GitHub Actions:+"}
	if got := sigs(d.Signals); !slices.Equal(got, want) {
		t.Errorf("Signals=%v, want %v", got, want)
	}
	if d.Type != episode.TypePreference {
		t.Errorf("Type=%q, want preference", d.Type)
	}
	for _, w := range []string{"TestOpen", "GitHub Actions", "./internal/store", "Bash", "go test", "/home/dev/engram/internal/store/store_test.go", "ErrNotFound"} {
		if !slices.Contains(d.Entities, w) {
			t.Errorf("Entities=%q, want %q among them", d.Entities, w)
		}
	}
}

// FuzzLocal: no panic, and the bounds hold, whatever the input.
func FuzzLocal(f *testing.F) {
	for _, in := range fixtureTurns(f, "session-1.jsonl") {
		f.Add(in.Blocks[0].Text, in.Blocks[len(in.Blocks)-1].Text, "ls -la", "total 0", in.Content)
	}
	f.Add("No, not npm but pnpm. From now on, always use `pnpm`!", "I'll use pnpm.", "npm i @a/b@1", "", "")
	f.Add("```\nnever\n```\n> quote\n`x", "", "", "", "User: yes\n\nAssistant used Bash: x\n\nTool error (Bash): y")
	f.Add("I prefer , , and and or not but", "", "", "", "")
	f.Add("switch from to", "", "cd && || ;", "", "\n\n\n")
	f.Fuzz(func(t *testing.T, user, reply, cmd, result, content string) {
		ins := []Input{
			{Content: content, ProjectPath: "/home/dev/proj", Blocks: []Block{
				{Role: "user", Kind: "text", Text: user},
				{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: cmd},
				{Role: "user", Kind: "tool_result", Text: result, IsError: len(result)%2 == 1},
				{Role: "assistant", Kind: "text", Text: reply},
			}},
			{Content: content},
		}
		for _, in := range ins {
			d, err := NewLocal().Extract(context.Background(), in)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			if n := utf8.RuneCountInString(d.Summary); n > maxSummary {
				t.Errorf("Summary has %d runes, want ≤ %d", n, maxSummary)
			}
			if d.Importance < 0 || d.Importance > 1 {
				t.Errorf("Importance=%v, want in [0,1]", d.Importance)
			}
			if len(d.Context) > MaxContext {
				t.Errorf("len(Context)=%d, want ≤ %d", len(d.Context), MaxContext)
			}
			if len(d.Entities) > maxEntities || len(d.Signals) > maxSignals {
				t.Errorf("%d entities, %d signals: over the bounds", len(d.Entities), len(d.Signals))
			}
			for _, s := range d.Signals {
				if s.Polarity != 1 && s.Polarity != -1 {
					t.Errorf("Signal %+v: polarity not ±1", s)
				}
				if len(s.Subject) > maxSubjectBytes || len(s.Object) > 100 {
					t.Errorf("Signal %+v: subject or object too long", s)
				}
			}
			if d.Scope != episode.ScopeGlobal && d.Scope != episode.ScopeProject {
				t.Errorf("Scope=%q", d.Scope)
			}
			valid := utf8.ValidString(user) && utf8.ValidString(reply) && utf8.ValidString(cmd) &&
				utf8.ValidString(result) && utf8.ValidString(content)
			if valid && (!utf8.ValidString(d.Summary) || !utf8.ValidString(d.Context)) {
				t.Errorf("valid input, invalid UTF-8 output: %q / %q", d.Summary, d.Context)
			}
		}
	})
}

// TestLargeInput: pathological sizes stay linear and bounded.
func TestLargeInput(t *testing.T) {
	huge := strings.Repeat("never never use always prefer no, not x but y and ", 40000) // 2 MB, one sentence
	words := strings.Repeat("a/b/c.go HealthHandler https://x.y/z ", 30000)
	in := Input{Content: "User: " + huge, Blocks: []Block{
		{Role: "user", Kind: "text", Text: huge},
		{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: strings.Repeat("go test && ", 50000)},
		{Role: "user", Kind: "tool_result", Text: words},
		{Role: "assistant", Kind: "text", Text: "yes " + huge},
	}}
	d := mustExtract(t, in)
	if len(d.Context) > MaxContext || utf8.RuneCountInString(d.Summary) > maxSummary ||
		len(d.Entities) > maxEntities || len(d.Signals) > maxSignals {
		t.Errorf("bounds exceeded: context %d, summary %d runes, %d entities, %d signals",
			len(d.Context), utf8.RuneCountInString(d.Summary), len(d.Entities), len(d.Signals))
	}
}
