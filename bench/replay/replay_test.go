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
)

// The transcripts under testdata/claude are made up for these tests:
// session one (with an earlier snapshot of its file), session two, and a
// file of another agent's format.
const (
	sessOne = "11111111-1111-4111-8111-111111111111"
	sessTwo = "22222222-2222-4222-8222-222222222222"
)

func loadTestdata(t *testing.T) *Corpus {
	t.Helper()
	c, err := LoadDir(filepath.Join("testdata", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadDir(t *testing.T) {
	c := loadTestdata(t)
	if c.Files != 4 || c.Snapshots != 1 || c.Merged != 0 || c.Skipped["not a Claude Code transcript"] != 1 {
		t.Errorf("files %d, snapshots %d, merged %d, skipped %v; want 4, 1, 0, one not a transcript",
			c.Files, c.Snapshots, c.Merged, c.Skipped)
	}
	if len(c.Sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(c.Sessions))
	}
	one, two := c.Sessions[0], c.Sessions[1]
	if one.ID != sessOne || two.ID != sessTwo || one.Cwd != "/home/ann/proj" {
		t.Errorf("sessions %s (%s), %s", one.ID, one.Cwd, two.ID)
	}
	if len(one.Lines) != 11 || len(one.Files) != 2 {
		t.Errorf("session one: %d lines from %d files; want the longer file's 11 lines, from 2 files", len(one.Lines), len(one.Files))
	}
	type turn struct {
		from, to, prompt int
		text, id, reply  string
	}
	check := func(s *Session, want []turn) {
		t.Helper()
		var got []turn
		for _, tr := range s.Turns {
			got = append(got, turn{tr.From, tr.To, tr.PromptLine, tr.Prompt, tr.PromptID, tr.Reply})
		}
		if !slices.Equal(got, want) {
			t.Errorf("session %s turns:\n got %+v\nwant %+v", s.ID, got, want)
		}
	}
	// The queue-operation before a prompt opens its turn; a tool result is
	// no prompt; a prompt of text blocks is one.
	check(one, []turn{
		{0, 4, 1, "I prefer table-driven tests in Go", "p1", "Noted: table-driven tests."},
		{4, 9, 5, "Run the tests", "p2", "All tests pass."},
		{9, 11, 9, "Thanks. Never use testify here.", "p3", "Understood, no testify."},
	})
	// A meta line and a sidechain line are no prompts; the
	// file-history-snapshot before a prompt opens its turn.
	check(two, []turn{
		{0, 4, 1, "What does the deploy script do?", "q1", "It builds and uploads the binary."},
		{4, 7, 5, "Deploy to staging", "q2", "Deployed."},
	})
}

func TestOrder(t *testing.T) {
	c := loadTestdata(t)
	var got []string
	for _, tr := range Order(c.Sessions) {
		got = append(got, tr.Session.ID[:1]+":"+tr.Prompt[:min(8, len(tr.Prompt))]+"@"+tr.At.Format("02T15:04"))
	}
	// The third prompt of session one says 09:59, before the turn it
	// follows: it keeps its place in the file, at its predecessor's time.
	want := []string{
		"1:I prefer@01T10:00",
		"2:What doe@01T10:02",
		"1:Run the @01T10:05",
		"1:Thanks. @01T10:05",
		"2:Deploy t@02T08:00",
	}
	if !slices.Equal(got, want) {
		t.Errorf("order:\n got %q\nwant %q", got, want)
	}
}

func TestConvertEntireContext(t *testing.T) {
	out := t.TempDir()
	st, err := ConvertEntireContext(filepath.Join("testdata", "entirecontext"), out, "/home/dev/ec", []string{"claude"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 2 || st.Turns != 3 || st.Replies != 1 || st.SkippedTurns != 1 || st.SkippedTypes["codex"] != 1 {
		t.Errorf("stats %+v", st)
	}
	// The main project (most sessions, of any type) gets the cwd given;
	// another project a sibling directory.
	if st.Projects["9f0e1d2c-main-project"] != "/home/dev/ec" || st.Projects["4a5b6c7d-other-project"] != "/home/dev/project-4a5b6c7d" {
		t.Errorf("projects %v", st.Projects)
	}
	c, err := LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sessions) != 2 || len(c.Skipped) != 0 {
		t.Fatalf("converted: %d sessions, skipped %v", len(c.Sessions), c.Skipped)
	}
	var got []string
	for _, tr := range Order(c.Sessions) {
		got = append(got, tr.At.Format(time.RFC3339Nano)+" "+tr.Session.Cwd+" "+tr.Prompt+" -> "+tr.Reply)
	}
	// Turns in turn_number order; the reply one second after its prompt.
	want := []string{
		"2026-02-01T09:00:00.5Z /home/dev/ec Please use pnpm, not npm -> Switched the scripts to pnpm.",
		"2026-02-01T09:10:00Z /home/dev/ec Now add a test for it -> ",
		"2026-02-02T09:00:00Z /home/dev/project-4a5b6c7d Hello other project -> ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("converted turns:\n got %q\nwant %q", got, want)
	}
	b, err := os.ReadFile(filepath.Join(out, "aaaaaaaa-0000-4000-8000-000000000001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var reply map[string]any
	if len(lines) != 3 || json.Unmarshal([]byte(lines[1]), &reply) != nil || reply["type"] != "assistant" ||
		reply["timestamp"] != "2026-02-01T09:00:01.500Z" || reply["parentUuid"] == nil {
		t.Errorf("converted file:\n%s", b)
	}
	// A conversion is reproducible.
	out2 := t.TempDir()
	if _, err := ConvertEntireContext(filepath.Join("testdata", "entirecontext"), out2, "/home/dev/ec", []string{"claude"}); err != nil {
		t.Fatal(err)
	}
	if b2, _ := os.ReadFile(filepath.Join(out2, "aaaaaaaa-0000-4000-8000-000000000001.jsonl")); !bytes.Equal(b, b2) {
		t.Error("two conversions differ")
	}
}

func TestInjectionStats(t *testing.T) {
	var s InjectionStats
	s.Injected = 2
	s.summarise([]float64{0, 100, 0, 300})
	if s.Prompts != 4 || s.Rate != 0.5 || s.PerPrompt.Mean != 100 || s.PerPrompt.P50 != 0 || s.PerInjection.Mean != 200 {
		t.Errorf("%+v", s)
	}
}

func TestLabels(t *testing.T) {
	injections := []Injection{
		{N: 3, Session: "s", Prompt: "p3", Context: "x", Bites: []string{"[Memory a]", "[Belief b]"}},
		{N: 7, Session: "s", Prompt: "p7", Context: "<engram-recall>\nplain\n</engram-recall>"},
	}
	all := SampleBites(injections, 0, 1)
	var ids []string
	for _, it := range all {
		ids = append(ids, it.ID)
	}
	if !slices.Equal(ids, []string{"3.1", "3.2", "7.1"}) || all[2].Bite != injections[1].Context {
		t.Errorf("sample ids %q, last bite %q", ids, all[2].Bite)
	}
	a, b := SampleBites(injections, 2, 9), SampleBites(injections, 2, 9)
	if len(a) != 2 || !slices.Equal(a, b) {
		t.Errorf("sample of 2 with one seed: %v, %v", a, b)
	}
	var buf bytes.Buffer
	for _, l := range []string{"useful", "noise", "Stale", "", "noise", "meh"} {
		it := all[0]
		it.Label = l
		if l == "useful" || l == "" {
			it.ID = "9.1"
		}
		b, _ := json.Marshal(it)
		buf.Write(append(b, '\n'))
	}
	s, err := SummariseLabels(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if s.Bites != 6 || s.Labelled != 5 || s.ShareNoise != 0.4 || s.ShareStale != 0.2 || s.ShareUseful != 0.2 ||
		s.ShareOther != 0.2 || s.Prompts != 2 || s.PromptsUseful != 1 {
		t.Errorf("%+v", s)
	}
}

func TestCountItems(t *testing.T) {
	for in, want := range map[string]int{`[]`: 0, `[{"a":1},{"b":2}]`: 2, `{"items":[1,2,3]}`: 3, `{"count":4}`: 4, `{"x":1}`: -1, `nope`: -1} {
		if got := countItems([]byte(in)); got != want {
			t.Errorf("countItems(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestReportPrint(t *testing.T) {
	r := &Report{Prompts: 4, Sessions: 2}
	r.Worker = Worker{Failures: 1, Runs: []WorkerRun{{Reason: "end", ExitCode: 2, Stderr: "panic: runtime error"}}}
	r.Store.fromStatus([]byte(`{"captures":{"done":3,"failed":1},"pending_captures":0,"quarantine":[{"id":1}],"last_run":{"error":"boom"}}`))
	r.Quarantine = Quarantine{Status: r.Store.quarantine, Count: countItems(r.Store.quarantine), Error: "no command"}
	r.Injection.Injected = 1
	r.Injection.summarise([]float64{0, 0, 0, 40})
	var b bytes.Buffer
	r.Print(&b)
	for _, want := range []string{"failed (exit != 0): 1", "FAILED run (end", "panic: runtime error", "captures: done 3, failed 1",
		"last run error: boom", "quarantined: 1 (status --json", "injection rate: 1 of 4 prompts (25.0%)", "mean 10.0, median 0.0"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestReplay runs the real binaries through the test transcripts.
func TestReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs them")
	}
	ctx := context.Background()
	work := t.TempDir()
	bins, err := build(ctx, filepath.Join(work, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	c := loadTestdata(t)
	var inj bytes.Buffer
	r, err := NewReplayer(work, bins, c.Sessions, &inj, Options{WorkerEvery: 24 * time.Hour, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(ctx, Order(c.Sessions))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Prompts != 5 || rep.Hooks.Stops != 5 || len(rep.Hooks.Problems) != 0 {
		t.Errorf("prompts %d, stops %d, hook problems %v %q", rep.Prompts, rep.Hooks.Stops, rep.Hooks.Problems, rep.Hooks.Examples)
	}
	// The first cycle, the day boundary before the last prompt, the end.
	if len(rep.Worker.Runs) != 3 || rep.Worker.Failures != 0 {
		t.Errorf("worker runs %+v", rep.Worker.Runs)
	}
	if rep.Store.Captures["done"] != 5 || rep.Store.Pending != 0 || rep.Store.Error != "" {
		t.Errorf("captures %v, pending %d, status error %q", rep.Store.Captures, rep.Store.Pending, rep.Store.Error)
	}
	if rep.Beliefs.Error != "" || rep.Injection.Prompts != 5 {
		t.Errorf("beliefs error %q, injection %+v", rep.Beliefs.Error, rep.Injection)
	}
	// Each transcript holds its session's lines, with the cwd mapped, and
	// a hook_additional_context attachment after each prompt that got
	// context.
	mapped := r.cwdMap["/home/ann/proj"]
	if _, err := os.Stat(filepath.Join(mapped, ".git")); err != nil {
		t.Errorf("the project is no git repository: %v", err)
	}
	injected, _ := ReadInjections(&inj)
	if len(injected) != rep.Injection.Injected {
		t.Errorf("%d injections written, %d counted", len(injected), rep.Injection.Injected)
	}
	for _, s := range c.Sessions {
		b, err := os.ReadFile(r.paths[s])
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		var kept []string
		for _, l := range lines {
			if strings.Contains(l, `"hook_additional_context"`) && strings.Contains(l, "engram-recall") {
				continue
			}
			kept = append(kept, l)
		}
		if len(kept) != len(s.Lines) || strings.Contains(string(b), `"cwd":"/home/ann/proj"`) || !strings.Contains(string(b), jsonString(mapped)) {
			t.Errorf("session %s: %d lines of %d kept, cwd mapped: %v", s.ID, len(kept), len(s.Lines), !strings.Contains(string(b), `"cwd":"/home/ann/proj"`))
		}
	}
}
