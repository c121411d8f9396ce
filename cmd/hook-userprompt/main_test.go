package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

var hookBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "engram-hook-userprompt-test")
	if err != nil {
		panic(err)
	}
	hookBin = filepath.Join(dir, "engram-hook-userprompt")
	if out, err := exec.Command("go", "build", "-o", hookBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type home struct{ dir, engram, project string }

// newHome makes a store with a few memories of one project (a git repo).
func newHome(t *testing.T, withStore bool) home {
	t.Helper()
	h := home{dir: t.TempDir()}
	h.engram = filepath.Join(h.dir, ".claude-memory")
	h.project = filepath.Join(h.dir, "src", "billing")
	os.MkdirAll(filepath.Join(h.project, ".git"), 0o755)
	os.MkdirAll(filepath.Join(h.project, "internal", "api"), 0o755)
	if !withStore {
		return h
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(h.engram, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	local := embed.NewLocal()
	now := time.Now()
	var eps []episode.Episode
	for i, s := range []string{
		"The billing service deploys to Fly with flyctl deploy; the app is billing-prod",
		"Invoices are numbered per customer; the sequence lives in the invoice_seq table",
		"Refactored the HTTP router in internal/api to use chi",
	} {
		eps = append(eps, episode.Episode{ID: "ep_00000000000" + string(rune('1'+i)), Summary: s, Context: s, Type: "event",
			Scope: "project", Project: "billing", ProjectPath: h.project, ContentHash: s, Importance: 0.5,
			Embedding: local.EmbedText(s), Embedder: local.Name(), OccurredAt: now.Add(-50 * time.Hour), CreatedAt: now, UpdatedAt: now})
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}
	if _, err := recollect.Build(ctx, db, h.engram, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h home) input(prompt string, cwd string) []byte {
	b, _ := json.Marshal(map[string]any{"session_id": "391c10cf-5281-4939-ba64-ee611dca86d4", "transcript_path": "/x/y.jsonl",
		"cwd": cwd, "prompt_id": "p", "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt})
	return b
}

// run runs the hook; it must exit 0 and print nothing or one valid answer.
func (h home) run(t *testing.T, stdin []byte, env ...string) string {
	t.Helper()
	cmd := exec.Command(hookBin)
	// A generous deadline: these tests check behaviour, not speed (the
	// benchmarks do), and the machine may be busy.
	cmd.Env = append([]string{"HOME=" + h.dir, "ENGRAM_HOME=" + h.engram, "ENGRAM_PROMPT_HOOK_DEADLINE=5s"}, env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook failed: %v (stderr %q)", err, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %q", errb.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("hook took %v", took)
	}
	if out.Len() == 0 {
		return ""
	}
	var o struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&o); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON answer: %v %q", err, out.String())
	}
	if o.HookSpecificOutput.HookEventName != "UserPromptSubmit" || o.HookSpecificOutput.AdditionalContext == "" {
		t.Fatalf("answer: %+v", o)
	}
	return o.HookSpecificOutput.AdditionalContext
}

func TestRecallsRelatedMemoryOnce(t *testing.T) {
	h := newHome(t, true)
	sub := filepath.Join(h.project, "internal", "api")
	got := h.run(t, h.input("how do we deploy the billing app to fly?", sub))
	// From a day on, the bite's label gives the date (the episode occurred
	// 50 hours ago; the date in the local time zone).
	label := "[Memory · " + time.Now().Add(-50*time.Hour).Format("2 Jan 2006") + " · project billing]"
	if !strings.Contains(got, "flyctl deploy") || !strings.Contains(got, label) {
		t.Fatalf("context:\n%s", got)
	}
	// Same session, same question: nothing new to inject.
	if again := h.run(t, h.input("how do we deploy the billing app to fly?", sub)); strings.Contains(again, "flyctl") {
		t.Errorf("repeated in the same session:\n%s", again)
	}
	if got := h.run(t, h.input("write a haiku about autumn leaves", sub)); got != "" {
		t.Errorf("unrelated prompt got:\n%s", got)
	}
	if got := h.run(t, h.input("go on", sub)); got != "" {
		t.Errorf("trivial prompt got:\n%s", got)
	}
}

func TestBadInputNeverHurts(t *testing.T) {
	h := newHome(t, true)
	big := strings.Repeat("deploy billing fly ", 1<<20/19)
	for name, in := range map[string][]byte{
		"not json":     []byte("{{{"),
		"empty":        nil,
		"empty prompt": h.input("", h.project),
		"1 MB prompt":  h.input(big, h.project),
		"unknown cwd":  h.input("how do we deploy billing?", "/no/such/dir"),
		"relative cwd": h.input("how do we deploy billing?", "src"),
		"bad session":  []byte(`{"session_id":"../../x","prompt":"deploy billing to fly","cwd":"/"}`),
	} {
		t.Run(name, func(t *testing.T) { h.run(t, in) })
	}
	t.Run("missing store", func(t *testing.T) {
		e := newHome(t, false)
		if got := e.run(t, e.input("how do we deploy billing?", e.project)); got != "" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("corrupt recollection files", func(t *testing.T) {
		c := newHome(t, true)
		os.WriteFile(recall.ProjectPath(c.engram, c.project), []byte("ENGRAMRC\x01\x05junk"), 0o600)
		os.WriteFile(recall.GlobalPath(c.engram), []byte{0xff, 0}, 0o600)
		got := c.run(t, c.input("how do we deploy the billing app to fly?", c.project))
		if !strings.Contains(got, "flyctl") {
			t.Errorf("the search index did not stand in for the files: %q", got)
		}
	})
	t.Run("corrupt or missing search index", func(t *testing.T) {
		c := newHome(t, true)
		m, err := recall.ReadManifest(c.engram)
		if err != nil || len(m.Segments) == 0 {
			t.Fatalf("manifest %+v %v", m, err)
		}
		seg := filepath.Join(recall.IndexDir(c.engram), m.Segments[0].Name)
		data, _ := os.ReadFile(seg)
		// A segment cut short: the files still answer (the project's file
		// holds the memory), and nothing breaks.
		os.WriteFile(seg, data[:len(data)/2], 0o600)
		if got := c.run(t, c.input("how do we deploy the billing app to fly?", c.project)); !strings.Contains(got, "flyctl") {
			t.Errorf("damaged segment: %q", got)
		}
		// A new session each time: nothing is held back as already shown.
		forget := func() {
			files, _ := filepath.Glob(filepath.Join(recall.Dir(c.engram), "injected-*.txt"))
			for _, f := range files {
				os.Remove(f)
			}
		}
		forget()
		os.WriteFile(recall.ManifestPath(c.engram), []byte("ENGRAMIX\x01\xff\xff"), 0o600)
		c.run(t, c.input("how do we deploy the billing app to fly?", c.project))
		forget()
		os.RemoveAll(recall.IndexDir(c.engram))
		if got := c.run(t, c.input("how do we deploy the billing app to fly?", c.project)); !strings.Contains(got, "flyctl") {
			t.Errorf("no index: %q", got)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		got := h.run(t, h.input("how do we deploy the billing app to fly?", h.project), "ENGRAM_PROMPT_HOOK_DEADLINE=1ns")
		if got != "" {
			t.Errorf("printed past the deadline: %q", got)
		}
	})
}

// The hooks must stay small and quick to start: no LLM client linked, and
// no PostgreSQL driver.
func TestHooksDoNotLinkLLMClients(t *testing.T) {
	for _, pkg := range []string{".", "../hook-stop"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, forbidden := range []string{"github.com/sashabaranov/go-openai", "github.com/engram-memory/engram/internal/llm",
			"github.com/engram-memory/engram/internal/embed/remote", "github.com/modelcontextprotocol/go-sdk",
			"github.com/engram-memory/engram/internal/claudellm",
			// Sharing is the worker's: the hooks never touch the network.
			"github.com/jackc/pgx/v5", "github.com/engram-memory/engram/internal/share"} {
			for _, dep := range strings.Fields(string(out)) {
				if dep == forbidden || strings.HasPrefix(dep, forbidden+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
}

// The prompt hook reads the worker's files only: it does not link SQLite
// (or the store), whose start-up alone would cost more than its budget.
func TestPromptHookDoesNotLinkSQLite(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, forbidden := range []string{"modernc.org/sqlite", "modernc.org/libc", "database/sql", "github.com/engram-memory/engram/internal/store"} {
			if dep == forbidden || strings.HasPrefix(dep, forbidden+"/") {
				t.Errorf("engram-hook-userprompt links %s", dep)
			}
		}
	}
}

// Inside one of engram's own model calls the hook recalls nothing.
func TestInternalCallRecallsNothing(t *testing.T) {
	h := newHome(t, true)
	sub := filepath.Join(h.project, "internal", "api")
	if got := h.run(t, h.input("how do we deploy the billing app to fly?", sub), hookio.InternalCallEnv+"=1"); got != "" {
		t.Fatalf("printed inside an internal call:\n%s", got)
	}
	if got := h.run(t, h.input("how do we deploy the billing app to fly?", sub)); !strings.Contains(got, "flyctl deploy") {
		t.Fatalf("without the marker:\n%s", got)
	}
}
