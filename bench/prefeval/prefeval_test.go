package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/internal/promote"
)

// synthetic is a tiny file in the PrefEval format, made up for the test:
// three topics of two preferences each, whose questions share rare words
// with their preference (so that even lexical recall finds them), and two
// filler conversations.
func synthetic() map[string]any {
	item := func(p, q string) map[string]any {
		return map[string]any{"preference": p, "question": q, "explanation": "x"}
	}
	msg := func(role, content string) map[string]any { return map[string]any{"role": role, "content": content} }
	return map[string]any{
		"topics": map[string]any{
			"food": []any{
				item("I follow a strict gluten-free diet because of celiac disease.", "Which gluten-free bakeries in Lisbon suit my celiac diet?"),
				item("I never eat mushrooms; truffle and porcini included.", "Is there a risotto without mushrooms or porcini you would suggest?"),
			},
			"music": []any{
				item("I only listen to baroque harpsichord recordings.", "Recommend harpsichord albums of baroque composers for me."),
				item("I dislike loud trumpets and brass ensembles.", "Which orchestral pieces avoid trumpets and brass?"),
			},
			"travel": []any{
				item("I refuse overnight ferries since I get seasick.", "How do I reach Corsica without a ferry, given I get seasick?"),
				item("I prefer hostels with private dormitory lockers.", "Suggest hostels in Prague with private lockers in the dormitory."),
			},
		},
		"filler": []any{
			map[string]any{"conversation": []any{
				msg("user", "How do I convert a CSV file to JSON in Python?"),
				msg("assistant", "Use the csv module to read rows and json.dump to write them out."),
				msg("user", "And pretty-printed?"),
				msg("assistant", "Pass indent=2 to json.dump."),
			}},
			map[string]any{"conversation": []any{
				msg("user", "Summarise the plot of a heist film in two lines."),
				msg("assistant", "A crew plans a vault robbery; betrayal splits them at the last moment."),
			}},
		},
	}
}

func writeSynthetic(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "tiny-prefeval.json")
	b, _ := json.Marshal(synthetic())
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSyntheticUsers runs the whole pipeline on the made-up file: real
// binaries, real transcripts, real stores. It checks the harness's
// bookkeeping, not engram's figures.
func TestSyntheticUsers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs engram's binaries")
	}
	dir := t.TempDir()
	data := writeSynthetic(t, dir)
	keep := filepath.Join(dir, "homes")
	var log bytes.Buffer
	opt := options{Data: data, Users: 2, Fillers: -1, Keep: keep, Jobs: 2, Log: &log, PromptDeadline: "10s"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := run(ctx, opt)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	rep.print(&table)
	t.Logf("\n%s", table.String())

	// Capture: per user 2 fillers + 3 preference sessions; 2 + 1 Stop
	// runs for the fillers, 1 per preference.
	if len(rep.Users) != 2 || rep.Capture.Sessions != 10 || rep.Capture.StopRuns != 12 || rep.Capture.StopProblems != 0 {
		t.Errorf("capture: %+v", rep.Capture)
	}
	for _, u := range rep.Users {
		if len(u.Capture.Worker) != 3 || !strings.Contains(u.Capture.Worker[0], "ingest: 6 captures") {
			t.Errorf("user %d worker: %q", u.User, u.Capture.Worker)
		}
	}
	// Each user asks one question per topic, of item u mod 2.
	if rep.Overall.Questions != 6 || len(rep.Topics) != 3 {
		t.Fatalf("questions: %d, topics %d", rep.Overall.Questions, len(rep.Topics))
	}
	for _, q := range rep.Questions {
		if q.Item != q.User%2 {
			t.Errorf("user %d asked item %d", q.User, q.Item)
		}
		if !q.SharesWord {
			t.Errorf("user %d %s: the made-up questions share a word with their preference", q.User, q.Topic)
		}
		if q.HookProblem != "" {
			t.Errorf("hook: %s", q.HookProblem)
		}
		if q.Hit && !q.HitWithMemory {
			t.Error("a hit in the injected context alone is not one with MEMORY.md added")
		}
		if q.BitesAsked+q.BitesOtherPref > q.Bites {
			t.Errorf("bites: %+v", q)
		}
	}
	// The made-up questions carry their preference's rare words: the
	// lexical recall finds most of them, and so does BM25 with room.
	if rep.Overall.HitRate < 0.5 || rep.Overall.BM25HitRate600 < 0.5 {
		t.Errorf("hit rate %.2f, BM25 %.2f: the pipeline lost the preferences", rep.Overall.HitRate, rep.Overall.BM25HitRate600)
	}
	// Topics add up to the whole.
	var q, h int
	for _, s := range rep.Topics {
		q += s.Questions
		h += s.Hits
	}
	if q != rep.Overall.Questions || h != rep.Overall.Hits {
		t.Errorf("topics add up to %d questions %d hits; overall %d %d", q, h, rep.Overall.Questions, rep.Overall.Hits)
	}

	// The kept homes, asked as unrelated stores: every question is sent
	// (30 users when -users is 0, one per topic) and counted.
	un, err := runUnrelated(ctx, options{Unrelated: keep, PromptDeadline: "10s"}, mustBins(t, ctx, dir), mustData(t, data), func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if un.Questions != 90 || len(un.Homes) != 2 || un.Empty > un.Questions || un.Problems != 0 {
		t.Errorf("unrelated: %+v", un)
	}
	if un.NoInjection != float64(un.Empty)/90 {
		t.Errorf("no injection share %v of %d", un.NoInjection, un.Empty)
	}

	// The JSON report holds no text of the data.
	out := filepath.Join(dir, "r.json")
	if err := rep.writeJSON(out); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	for _, s := range []string{"gluten", "harpsichord", "seasick", "heist"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("report JSON holds %q", s)
		}
	}
}

func mustBins(t *testing.T, ctx context.Context, dir string) benchkit.Bins {
	b, err := benchkit.Build(ctx, filepath.Join(dir, "bin2"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustData(t *testing.T, path string) *Data {
	d, err := loadData(path)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSessionPlan(t *testing.T) {
	got := sessionPlan(24, 10)
	if len(got) != 34 {
		t.Fatalf("plan has %d sessions", len(got))
	}
	// Every filler once, in order; every preference once, in order; the
	// preferences spread: never two in a row, the last one last.
	var fill, prefs []int
	for i, s := range got {
		if s >= 0 {
			fill = append(fill, s)
			continue
		}
		prefs = append(prefs, -1-s)
		if i > 0 && got[i-1] < 0 {
			t.Errorf("two preference sessions in a row at %d: %v", i, got)
		}
	}
	for i := range fill {
		if fill[i] != i {
			t.Fatalf("fillers out of order: %v", fill)
		}
	}
	if len(fill) != 24 || !slices.Equal(prefs, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) || got[33] != -10 {
		t.Errorf("plan %v", got)
	}
	if p := sessionPlan(0, 3); !slices.Equal(p, []int{-1, -2, -3}) {
		t.Errorf("no fillers: %v", p)
	}
	if p := sessionPlan(2, 3); !slices.Equal(p, []int{-1, 0, -2, 1, -3}) {
		t.Errorf("more preferences than fillers: %v", p)
	}
}

func TestClassifyBites(t *testing.T) {
	asked := "I follow a strict gluten-free diet because of celiac disease."
	others := []string{"I never eat mushrooms; truffle and porcini included.", "I only listen to baroque harpsichord recordings."}
	ctx := strings.Join([]string{
		"<engram-recall>",
		"Notes recalled from earlier sessions by engram (long-term memory).",
		"[Memory · 1 year ago] I follow a strict gluten-free diet because of celiac disease. — Got it, I'll keep that in mind.", // asked
		"[Memory · 1 year ago] user: I only listen to baroque harpsichord recordings. — Got it.",                                // other
		"[Belief (0.70): the user eats no mushrooms, porcini or truffle]",                                                       // filler: see below
		"[Memory · 1 year ago] How do I convert a CSV file to JSON in Python? — Use the csv module.",                            // filler
		"[Memory · 1 year ago] celiac friends visited (just after: strict rules)",                                               // filler: 2 of 6 words
		"</engram-recall>",
	}, "\n")
	bites, a, o := classifyBites(ctx, asked, others)
	// The belief bite: "never eat mushrooms truffle porcini included" has 6
	// content words, of which mushrooms, porcini, truffle = 3/6 < 60%:
	// filler by the rule.
	if bites != 5 || a != 1 || o != 1 {
		t.Errorf("classifyBites = %d bites, %d asked, %d other; want 5, 1, 1", bites, a, o)
	}
	// A bite carrying both counts once, as the asked one.
	both := "[Memory · now] strict gluten-free diet, celiac disease; baroque harpsichord recordings only"
	if b, a, o := classifyBites(both, asked, others); b != 1 || a != 1 || o != 0 {
		t.Errorf("both: %d %d %d", b, a, o)
	}
	if b, a, o := classifyBites("", asked, others); b+a+o != 0 {
		t.Error("bites in nothing")
	}
}

func TestMemoryFiles(t *testing.T) {
	dir := t.TempDir()
	claude, engram, project := filepath.Join(dir, ".claude"), filepath.Join(dir, ".claude-memory"), filepath.Join(dir, "src", "app")
	loc := promote.Locations{ClaudeConfigDir: claude, EngramHome: engram}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Global: engram's block between the user's own lines.
	write(loc.GlobalFile(), "# mine\nkeep notes short\n"+promote.BeliefsBegin+"\n## Beliefs\n- uses pnpm\n"+promote.BeliefsEnd+"\n")
	// Project: 250 lines; only the first 200 are loaded, so "lastword"
	// (line 250) is not.
	var p strings.Builder
	p.WriteString(promote.EpisodesBegin + "\n")
	for i := 1; i < 249; i++ {
		p.WriteString("- episode line\n")
	}
	p.WriteString(promote.EpisodesEnd + "\n")
	p.WriteString("lastword\n")
	write(loc.ProjectFile(project), p.String())
	m, err := readMemoryFiles(claude, engram, project)
	if err != nil {
		t.Fatal(err)
	}
	if m.GlobalLines != 6 || m.ProjectLines != 200 {
		t.Errorf("lines: %d %d", m.GlobalLines, m.ProjectLines)
	}
	set := benchkit.NewWordSet(m.Loaded)
	if !set["pnpm"] || !set["mine"] || set["lastword"] {
		t.Errorf("loaded text: pnpm %v mine %v lastword %v", set["pnpm"], set["mine"], set["lastword"])
	}
	// engram's part: "## Beliefs\n- uses pnpm\n" (23 chars) + 199 episode
	// lines of 15 chars (line 1 is the marker), markers and the user's
	// lines excluded.
	want := float64(len("## Beliefs\n- uses pnpm\n")+199*len("- episode line\n")) / 4
	if m.EngramTokens != want {
		t.Errorf("engram tokens %v; want %v", m.EngramTokens, want)
	}
	// No files: nothing loaded.
	if m, err := readMemoryFiles(filepath.Join(dir, "x"), filepath.Join(dir, "y"), project); err != nil || m.Loaded != "" || m.EngramTokens != 0 {
		t.Errorf("no files: %+v %v", m, err)
	}
}

// TestPrefEvalDev runs the real dev split. Opt in: it takes minutes.
//
//	ENGRAM_PREFEVAL=1 go test -run TestPrefEvalDev -timeout 60m -v ./bench/prefeval
func TestPrefEvalDev(t *testing.T) {
	if os.Getenv("ENGRAM_PREFEVAL") != "1" {
		t.Skip("the PrefEval run takes minutes: set ENGRAM_PREFEVAL=1 to run it")
	}
	data := os.Getenv("ENGRAM_PREFEVAL_DATA")
	if data == "" {
		data = filepath.Join("..", "..", "..", "shared", "eval", "prefeval-dev.json")
	}
	if _, err := os.Stat(data); err != nil {
		t.Skipf("PrefEval data not found at %s (not part of the repository; set ENGRAM_PREFEVAL_DATA): %v", data, err)
	}
	var log bytes.Buffer
	rep, err := run(context.Background(), options{Data: data, Users: defaultUsers, Fillers: -1, Jobs: 2, Log: &log})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	var table bytes.Buffer
	rep.print(&table)
	t.Logf("\n%s\n%s", log.String(), table.String())
}
