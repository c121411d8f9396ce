package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/inject"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The world of the tests: two projects, and memories of each scope.
const (
	projAlpha = "/w/alpha"
	projBeta  = "/w/beta"

	epAlpha    = "ep_0000000000a1" // project alpha
	epBeta     = "ep_0000000000b1" // project beta, same subject
	epGlobal   = "ep_0000000000c1" // global
	blGlobal   = "bl_0000000000d1" // global, active
	blArchived = "bl_0000000000d2" // global, archived
	blBeta     = "bl_0000000000d3" // project beta, active
)

// testNow is the tests' clock: memories are dated relative to it.
var testNow = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

// fixture is a data directory with a seeded store and its recollection
// files, and a client session connected to a Server over it.
type fixture struct {
	cfg  config.Config
	db   *store.DB // the test's own handle
	srv  *Server
	cs   *mcp.ClientSession
	user string // the user configuration file status reads
}

func newConfig(t *testing.T) config.Config {
	t.Helper()
	dir := t.TempDir()
	return config.Config{Home: filepath.Join(dir, "engram"), ClaudeConfigDir: filepath.Join(dir, "claude"), LogLevel: "info"}
}

// seed stores the test world and writes the recollection files, as the
// worker does after ingest.
func seed(t *testing.T, db *store.DB, home string) {
	t.Helper()
	local := embed.NewLocal()
	ep := func(id, scope, project, summary string) episode.Episode {
		name := filepath.Base(project)
		if project == "" {
			name = ""
		}
		return episode.Episode{ID: id, Summary: summary, Context: "User: " + summary, Type: episode.TypeDecision, Scope: scope,
			Project: name, ProjectPath: project, ContentHash: id, Importance: 0.6, Embedding: local.EmbedText(summary),
			Embedder: local.Name(), Extractor: "local", SessionIDs: []string{"s1"}, OccurredAt: testNow.AddDate(0, 0, -20),
			CreatedAt: testNow.AddDate(0, 0, -20), UpdatedAt: testNow.AddDate(0, 0, -20), Stability: 2,
			LastAccessedAt: testNow.Add(-48 * time.Hour)}
	}
	bl := func(id, scope, project, status, statement string) belief.Belief {
		name := filepath.Base(project)
		if project == "" {
			name = ""
		}
		return belief.Belief{ID: id, Statement: statement, Subject: "billing data", Predicate: "prefers", Timeframe: belief.TimeCurrent,
			Alpha: 6, Beta: 1, Scope: scope, Project: name, ProjectPath: project, Status: status, EvidenceCount: 5, Stability: 1,
			Supporting: []string{epAlpha}, Embedding: local.EmbedText(statement), Embedder: local.Name(),
			CreatedAt: testNow.AddDate(0, -2, 0), UpdatedAt: testNow.AddDate(0, 0, -14), LastReinforcedAt: time.Date(2026, 2, 24, 9, 0, 0, 0, time.UTC)}
	}
	err := db.Import(context.Background(), []episode.Episode{
		ep(epAlpha, episode.ScopeProject, projAlpha, "We decided to keep invoices in Postgres with one schema per tenant"),
		ep(epBeta, episode.ScopeProject, projBeta, "We decided to keep invoices in DynamoDB with one table per tenant"),
		ep(epGlobal, episode.ScopeGlobal, projBeta, "The user wants table-driven tests for every invoices parser"),
	}, []belief.Belief{
		bl(blGlobal, episode.ScopeGlobal, "", belief.StatusActive, "The user prefers Postgres for billing data"),
		bl(blArchived, episode.ScopeGlobal, "", belief.StatusArchived, "The user prefers MySQL for billing invoices"),
		bl(blBeta, episode.ScopeProject, projBeta, belief.StatusActive, "Beta keeps invoices and billing data in DynamoDB"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := recollect.Build(context.Background(), db, home, recollect.BuildOptions{}, testNow); err != nil {
		t.Fatal(err)
	}
}

// start connects a client to a server over cfg through the SDK's
// in-memory transport.
func start(t *testing.T, cfg config.Config, opts Options) (*Server, *mcp.ClientSession) {
	t.Helper()
	opts.Config = cfg
	if opts.UserConfig == "" {
		opts.UserConfig = filepath.Join(filepath.Dir(cfg.Home), ".claude.json")
	}
	srv := New(opts)
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		srv.Close()
	})
	return srv, cs
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	cfg := newConfig(t)
	db, err := store.Open(context.Background(), cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	seed(t, db, cfg.Home)
	if opts.Project == "" {
		opts.Project = projAlpha
	}
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	srv, cs := start(t, cfg, opts)
	return &fixture{cfg: cfg, db: db, srv: srv, cs: cs, user: srv.opts.UserConfig}
}

// call calls a tool and returns its text and whether it is a tool error.
// A protocol error fails the test: tools report failures as tool errors.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: tool error %s", name, args, text)
	}
	return text
}

// recallIDs returns the ids of a recall's lines, in order, by kind.
func recallIDs(text string) (ids []string) {
	for _, m := range regexp.MustCompile(`(?m)^\[[EB]\] \(.*\) .* — ID: ((?:ep|bl)_\w+)$`).FindAllStringSubmatch(text, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestListTools(t *testing.T) {
	f := newFixture(t, Options{})
	res, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // tool -> its required arguments
		ToolRecall: {"query"}, ToolExpand: {"id"}, ToolForget: nil, ToolSave: {"text"}, ToolStatus: nil, ToolReview: {"action"}, ToolTrace: nil,
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools, want %d", len(res.Tools), len(want))
	}
	for _, tl := range res.Tools {
		req, ok := want[tl.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tl.Name)
			continue
		}
		// A description tells the model when to use the tool.
		if len(tl.Description) < 200 || !strings.Contains(strings.ToLower(tl.Description), "use it") {
			t.Errorf("%s: description does not say when to use it: %q", tl.Name, tl.Description)
		}
		schema, _ := tl.InputSchema.(map[string]any)
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: input schema %v", tl.Name, schema)
		}
		got, _ := schema["required"].([]any)
		if len(got) != len(req) || len(req) > 0 && got[0] != req[0] {
			t.Errorf("%s: required %v, want %v", tl.Name, got, req)
		}
	}
}

func TestRecall(t *testing.T) {
	f := newFixture(t, Options{})
	text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices postgres billing schema"})
	t.Logf("recall:\n%s", text)
	if !strings.HasPrefix(text, inject.Open) || !strings.HasSuffix(text, inject.Close) {
		t.Errorf("recall output is not framed as engram's injected context: capture would re-learn it")
	}
	ids := recallIDs(text)
	has := func(id string) bool {
		for _, x := range ids {
			if x == id {
				return true
			}
		}
		return false
	}
	for _, id := range []string{epAlpha, blGlobal} {
		if !has(id) {
			t.Errorf("recall from %s lacks %s", projAlpha, id)
		}
	}
	for _, id := range []string{epBeta, blBeta} {
		if strings.Contains(text, id) {
			t.Errorf("recall from %s shows %s, a memory of project %s", projAlpha, id, projBeta)
		}
	}
	if strings.Contains(text, blArchived) {
		t.Errorf("recall shows the archived belief %s", blArchived)
	}
	wantB := "[B] (Feb 24, confidence: 0.86) The user prefers Postgres for billing data — ID: " + blGlobal
	wantE := "[E] (Feb 18, project alpha) We decided to keep invoices in Postgres with one schema per tenant — ID: " + epAlpha
	for _, want := range []string{wantB, wantE} {
		if !strings.Contains(text, "\n"+want+"\n") {
			t.Errorf("recall lacks the line %q", want)
		}
	}

	t.Run("global memories everywhere", func(t *testing.T) {
		// epGlobal was stated in project beta; it holds in every project.
		if ids := recallIDs(mustCall(t, f.cs, ToolRecall, map[string]any{"query": "table-driven tests invoices parser"})); len(ids) == 0 || ids[0] != epGlobal {
			t.Errorf("recall from %s: %v, want %s first", projAlpha, ids, epGlobal)
		}
	})
	t.Run("another project", func(t *testing.T) {
		text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices billing tenant dynamodb", "project": projBeta})
		ids := strings.Join(recallIDs(text), " ")
		if !strings.Contains(ids, epBeta) || !strings.Contains(ids, blBeta) || strings.Contains(text, epAlpha) {
			t.Errorf("recall for %s: %s", projBeta, text)
		}
	})
	t.Run("a directory inside a repository is its git root's project", func(t *testing.T) {
		repo := t.TempDir()
		sub := filepath.Join(repo, "services", "api")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		s := "We decided the gateway answers on port 8443"
		err := f.db.ImportEpisodes(context.Background(), []episode.Episode{{ID: "ep_0000000000e1", Summary: s, Context: s,
			Type: episode.TypeDecision, Scope: episode.ScopeProject, Project: filepath.Base(repo), ProjectPath: repo,
			ContentHash: "e1", Importance: 0.5, OccurredAt: testNow}})
		if err != nil {
			t.Fatal(err)
		}
		if text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "gateway port", "project": sub}); !strings.Contains(text, "ep_0000000000e1") {
			t.Errorf("recall from %s misses a memory of its repository %s:\n%s", sub, repo, text)
		}
		if text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "gateway port"}); strings.Contains(text, "ep_0000000000e1") {
			t.Errorf("recall from %s shows a memory of %s:\n%s", projAlpha, repo, text)
		}
	})
	t.Run("scope", func(t *testing.T) {
		global := recallIDs(mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices postgres billing", "scope": "global"}))
		for _, id := range global {
			if id == epAlpha {
				t.Errorf("scope global shows the project memory %s", id)
			}
		}
		project := recallIDs(mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices postgres billing", "scope": "project"}))
		if len(project) != 1 || project[0] != epAlpha {
			t.Errorf("scope project: %v, want only %s", project, epAlpha)
		}
		if len(global) == 0 {
			t.Errorf("scope global: nothing")
		}
	})
	t.Run("limit", func(t *testing.T) {
		if ids := recallIDs(mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices postgres billing", "limit": 1})); len(ids) != 1 {
			t.Errorf("limit 1: %v", ids)
		}
	})
	t.Run("nothing matches", func(t *testing.T) {
		text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "kubernetes helm chart"})
		if len(recallIDs(text)) != 0 || !strings.Contains(text, "no memory matching") {
			t.Errorf("unrelated query: %s", text)
		}
	})
	t.Run("a memory gone from the store is not shown from stale files", func(t *testing.T) {
		// Deleted behind the recollection files' back (they still list it).
		if err := f.db.DeleteEpisode(context.Background(), epGlobal); err != nil {
			t.Fatal(err)
		}
		if text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "table-driven tests invoices parser"}); strings.Contains(text, epGlobal) {
			t.Errorf("recall shows the deleted %s:\n%s", epGlobal, text)
		}
	})
}

func TestRecallValidation(t *testing.T) {
	f := newFixture(t, Options{})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"no query", map[string]any{}, "query"},
		{"blank query", map[string]any{"query": "   "}, "query is empty"},
		{"limit too small", map[string]any{"query": "x", "limit": 0}, "limit"},
		{"limit too large", map[string]any{"query": "x", "limit": 51}, "limit"},
		{"bad scope", map[string]any{"query": "x", "scope": "everywhere"}, "scope"},
		{"relative project", map[string]any{"query": "x", "project": "alpha"}, "absolute path"},
		{"unknown argument", map[string]any{"query": "x", "since": "2025"}, "since"},
		{"query too long", map[string]any{"query": strings.Repeat("a", 2001)}, "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := call(t, f.cs, ToolRecall, tt.args)
			if !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("%v: %q (error %v), want a tool error about %q", tt.args, text, isErr, tt.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	before, err := f.db.GetEpisode(ctx, epAlpha)
	if err != nil {
		t.Fatal(err)
	}
	text := mustCall(t, f.cs, ToolExpand, map[string]any{"id": epAlpha})
	t.Logf("expand:\n%s", text)
	for _, want := range []string{inject.Open, epAlpha + "  decision", "summary:   We decided to keep invoices in Postgres",
		"project alpha (" + projAlpha + ")", "access:    1 times", "User: We decided"} {
		if !strings.Contains(text, want) {
			t.Errorf("episode card lacks %q", want)
		}
	}
	after, err := f.db.GetEpisode(ctx, epAlpha)
	if err != nil {
		t.Fatal(err)
	}
	wantStab := belief.NextStability(before.Stability, before.LastAccessedAt, testNow)
	if after.AccessCount != before.AccessCount+1 || !after.LastAccessedAt.Equal(testNow) || after.Stability != wantStab || wantStab <= before.Stability {
		t.Errorf("after expand: access %d at %v stability %v; want %d at %v stability %v (> %v)", after.AccessCount, after.LastAccessedAt,
			after.Stability, before.AccessCount+1, testNow, wantStab, before.Stability)
	}

	text = mustCall(t, f.cs, ToolExpand, map[string]any{"id": blGlobal})
	for _, want := range []string{"statement:  The user prefers Postgres for billing data", "confidence: 0.86 (α 6, β 1) · evidence 5",
		"supporting:    " + epAlpha, "contradicting: none", `subject "billing data"`} {
		if !strings.Contains(text, want) {
			t.Errorf("belief card lacks %q:\n%s", want, text)
		}
	}
	if b, _ := f.db.GetBelief(ctx, blGlobal); b.AccessCount != 1 || !b.LastAccessedAt.Equal(testNow) {
		t.Errorf("belief access not recorded: %d at %v", b.AccessCount, b.LastAccessedAt)
	}

	for _, tt := range []struct{ id, want string }{
		{"ep_ffffffffffff", "no episode ep_ffffffffffff"},
		{"bl_ffffffffffff", "no belief bl_ffffffffffff"},
		{"x_1", "id"},
		{"ep_../../etc", "id"},
	} {
		if text, isErr := call(t, f.cs, ToolExpand, map[string]any{"id": tt.id}); !isErr || !strings.Contains(text, tt.want) {
			t.Errorf("expand %s: %q (error %v), want a tool error with %q", tt.id, text, isErr, tt.want)
		}
	}
}

func TestExpandWhileTheWorkerWrites(t *testing.T) {
	// The worker holds the write lock: expand answers at once, and the
	// access goes to the log the worker folds in.
	f := newFixture(t, Options{BusyTimeout: 50 * time.Millisecond})
	release, err := f.db.HoldWriteLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	text := mustCall(t, f.cs, ToolExpand, map[string]any{"id": epAlpha})
	release()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("expand took %v under a held lock", d)
	}
	if !strings.Contains(text, "summary:") {
		t.Errorf("expand: %s", text)
	}
	log, err := os.ReadFile(recall.AccessLogPath(f.cfg.Home))
	if err != nil {
		t.Fatalf("access log: %v", err)
	}
	acc := recall.ParseAccessLog(log)
	if len(acc) != 1 || acc[0].ID != epAlpha || !acc[0].At.Equal(testNow) {
		t.Errorf("access log %q", log)
	}
	if ep, _ := f.db.GetEpisode(context.Background(), epAlpha); ep.AccessCount != 0 {
		t.Errorf("access counted in the store too: %d", ep.AccessCount)
	}

	// A write that must happen (forget) says the store is busy.
	release, err = f.db.HoldWriteLock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if text, isErr := call(t, f.cs, ToolForget, map[string]any{"id": epAlpha}); !isErr || !strings.Contains(text, "busy") {
		t.Errorf("forget under a held lock: %q (error %v)", text, isErr)
	}
}

// While a worker cycle holds its lock, memory_forget waits a moment, then
// forgets nothing and says why; once the cycle is over it forgets.
func TestForgetWaitsForTheWorker(t *testing.T) {
	f := newFixture(t, Options{})
	lk, err := worker.Lock(f.cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := call(t, f.cs, ToolForget, map[string]any{"id": epAlpha})
	if !isErr || !strings.Contains(text, "worker is running") {
		t.Errorf("forget during a cycle: %q (error %v)", text, isErr)
	}
	if _, err := f.db.GetEpisode(context.Background(), epAlpha); err != nil {
		t.Errorf("forgotten during a cycle: %v", err)
	}
	time.AfterFunc(300*time.Millisecond, func() { lk.Unlock() })
	if text := mustCall(t, f.cs, ToolForget, map[string]any{"id": epAlpha}); !strings.Contains(text, "Forgot episode") {
		t.Errorf("forget after the cycle: %s", text)
	}
}

func TestForget(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	text := mustCall(t, f.cs, ToolForget, map[string]any{"id": epAlpha})
	if !strings.Contains(text, "Forgot episode "+epAlpha) || !strings.HasPrefix(text, inject.Open) {
		t.Errorf("forget: %s", text)
	}
	if _, err := f.db.GetEpisode(ctx, epAlpha); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("episode still stored: %v", err)
	}
	// The prompt hook's files no longer hold it.
	res := recall.New(f.cfg.Home, nil).Recall(ctx, recall.Query{Text: "invoices postgres schema tenant", ProjectPath: projAlpha, Now: testNow})
	for _, c := range res.Episodes {
		if c.ID == epAlpha {
			t.Errorf("the recollection files still hold %s", epAlpha)
		}
	}
	if text := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "invoices postgres schema tenant"}); strings.Contains(text, epAlpha) {
		t.Errorf("recall after forget:\n%s", text)
	}

	text = mustCall(t, f.cs, ToolForget, map[string]any{"id": blGlobal})
	if !strings.Contains(text, "Forgot belief "+blGlobal) || !strings.Contains(text, "MEMORY.md") {
		t.Errorf("forget belief: %s", text)
	}
	if _, err := f.db.GetBelief(ctx, blGlobal); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("belief still stored: %v", err)
	}

	n, _ := f.db.EpisodeCount(ctx)
	if text, isErr := call(t, f.cs, ToolForget, map[string]any{"id": "ep_ffffffffffff"}); !isErr || !strings.Contains(text, "no memory with id ep_ffffffffffff; nothing was forgotten") {
		t.Errorf("forget unknown: %q (error %v)", text, isErr)
	}
	if text, isErr := call(t, f.cs, ToolForget, map[string]any{"id": "bl_"}); !isErr || !strings.Contains(text, "id") {
		t.Errorf("forget bad id: %q (error %v)", text, isErr)
	}
	if m, _ := f.db.EpisodeCount(ctx); m != n {
		t.Errorf("a refused forget changed the store: %d episodes, was %d", m, n)
	}
}

// memory_forget with a text lists what holds it and forgets nothing; with
// confirm it forgets all of it, as forget by id does; refusals change
// nothing.
func TestForgetMatching(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	text := mustCall(t, f.cs, ToolForget, map[string]any{"matching": "DynamoDB"})
	if !strings.Contains(text, `2 memories hold "DynamoDB" (nothing was forgotten yet)`) || !strings.Contains(text, epBeta+"  ") ||
		!strings.Contains(text, blBeta+"  Beta keeps invoices") || strings.Contains(text, epAlpha) || !strings.Contains(text, "confirm: true") {
		t.Errorf("the list:\n%s", text)
	}
	if _, err := f.db.GetEpisode(ctx, epBeta); err != nil {
		t.Fatalf("listing forgot: %v", err)
	}
	for _, args := range []map[string]any{
		{"matching": "DynamoDB", "id": epBeta},
		{"matching": "   "},
		{"id": epBeta, "confirm": true},
	} {
		if text, isErr := call(t, f.cs, ToolForget, args); !isErr {
			t.Errorf("%v: not refused: %s", args, text)
		}
	}
	if _, err := f.db.GetEpisode(ctx, epBeta); err != nil {
		t.Fatalf("a refused call forgot: %v", err)
	}
	text = mustCall(t, f.cs, ToolForget, map[string]any{"matching": "DynamoDB", "confirm": true})
	if !strings.Contains(text, `Forgot 2 memories that held "DynamoDB"`) {
		t.Errorf("confirmed: %s", text)
	}
	if _, err := f.db.GetEpisode(ctx, epBeta); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("episode still stored: %v", err)
	}
	if _, err := f.db.GetBelief(ctx, blBeta); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("belief still stored: %v", err)
	}
	if _, err := f.db.GetEpisode(ctx, epAlpha); err != nil {
		t.Errorf("an episode without the text was forgotten: %v", err)
	}
	if text := mustCall(t, f.cs, ToolForget, map[string]any{"matching": "DynamoDB"}); !strings.Contains(text, "No memory holds") {
		t.Errorf("after: %s", text)
	}
}

func TestSave(t *testing.T) {
	const session = "c276876f-8150-4bf1-b8f1-dbcba7e16cfa"
	f := newFixture(t, Options{SessionID: session})
	ctx := context.Background()
	stored := func(t *testing.T, text string) episode.Episode {
		t.Helper()
		id := regexp.MustCompile(`Saved as (ep_[0-9a-f]+)`).FindStringSubmatch(text)
		if id == nil {
			t.Fatalf("save: %s", text)
		}
		ep, err := f.db.GetEpisode(ctx, id[1])
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}

	text := mustCall(t, f.cs, ToolSave, map[string]any{"text": "We decided to deploy the ledger service with flyctl deploy --app ledger-eu-4417"})
	ep := stored(t, text)
	if ep.Importance < SaveImportance || ep.Scope != episode.ScopeProject || ep.ProjectPath != projAlpha || ep.Project != "alpha" ||
		!strings.Contains(ep.Context, "ledger-eu-4417") || ep.Embedder != embed.NewLocal().Name() || len(ep.Embedding) == 0 ||
		!ep.OccurredAt.Equal(testNow) || ep.Type == episode.TypeEvent || ep.SessionID != session || len(ep.SessionIDs) != 1 {
		t.Errorf("saved episode %+v", ep)
	}
	if len(ep.Signals) == 0 || ep.Signals[0].Kind != episode.SignalDecision {
		t.Errorf("signals %+v: consolidation would not count it as a decision", ep.Signals)
	}
	if ep.Kind != episode.KindDecision {
		t.Errorf("kind %q, want decision", ep.Kind)
	}
	if evs, err := f.db.History(ctx, ep.ID); err != nil || len(evs) != 1 || evs[0].Action != store.ActionFormed || evs[0].Cause != "save" {
		t.Errorf("history of the saved episode: %+v %v", evs, err)
	}
	// Recallable at once, before any worker run.
	if r := mustCall(t, f.cs, ToolRecall, map[string]any{"query": "ledger deploy flyctl"}); !strings.Contains(r, ep.ID) {
		t.Errorf("the saved memory is not recalled:\n%s", r)
	}
	if text := mustCall(t, f.cs, ToolSave, map[string]any{"text": "We decided to deploy the ledger service with flyctl deploy --app ledger-eu-4417"}); !strings.Contains(text, "Already remembered") {
		t.Errorf("second save: %s", text)
	}

	t.Run("a general preference is global", func(t *testing.T) {
		ep := stored(t, mustCall(t, f.cs, ToolSave, map[string]any{"text": "I always prefer pnpm over npm in all my projects"}))
		if ep.Scope != episode.ScopeGlobal || ep.Type != episode.TypePreference {
			t.Errorf("scope %s type %s", ep.Scope, ep.Type)
		}
	})
	t.Run("scope given", func(t *testing.T) {
		ep := stored(t, mustCall(t, f.cs, ToolSave, map[string]any{"text": "The staging database is called orders_stage", "scope": "global"}))
		if ep.Scope != episode.ScopeGlobal {
			t.Errorf("scope %s", ep.Scope)
		}
	})
	t.Run("secrets are redacted", func(t *testing.T) {
		key := "sk-ant-api03-" + strings.Repeat("Ab3x", 20)
		text := mustCall(t, f.cs, ToolSave, map[string]any{"text": "The staging key for the mailer is " + key + " <private>and the pager PIN is 4411</private>"})
		ep := stored(t, text)
		if strings.Contains(ep.Context+ep.Summary, key) || strings.Contains(ep.Context, "4411") || !strings.Contains(ep.Context, "[REDACTED:") {
			t.Errorf("stored unredacted: %q", ep.Context)
		}
		if !strings.Contains(text, "2 secret(s) or <private> part(s) were replaced") {
			t.Errorf("save does not say it redacted: %s", text)
		}
	})
	for _, tt := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty", map[string]any{"text": " "}, "text is empty"},
		{"only private", map[string]any{"text": "<private>my PIN is 4411</private>"}, "nothing is left"},
		{"acknowledgement", map[string]any{"text": "ok thanks"}, "nothing to remember"},
		{"bad scope", map[string]any{"text": "x y z", "scope": "all"}, "scope"},
		{"too long", map[string]any{"text": strings.Repeat("word ", 900)}, "text"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if text, isErr := call(t, f.cs, ToolSave, tt.args); !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("%q (error %v), want a tool error with %q", text, isErr, tt.want)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	t.Setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "")
	cfg := newConfig(t)
	srv, cs := start(t, cfg, Options{Project: projAlpha})

	// No store yet: a report with the problem, not a failure.
	text := mustCall(t, cs, ToolStatus, nil)
	if !strings.Contains(text, "no memory store yet") {
		t.Errorf("status without a store:\n%s", text)
	}
	if text, isErr := call(t, cs, ToolRecall, map[string]any{"query": "anything"}); !isErr || !strings.Contains(text, "no memory store yet") {
		t.Errorf("recall without a store: %q (error %v)", text, isErr)
	}

	// The worker's first run creates it (the server picks it up).
	db, err := store.Open(context.Background(), cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seed(t, db, cfg.Home)
	text = mustCall(t, cs, ToolStatus, nil)
	t.Logf("status:\n%s", text)
	for _, want := range []string{"episodes:   3", "beliefs:    3 (active 2, archived 1)", "last run:   never",
		"the worker has never run", "settings.json does not exist: Claude Code runs no hook of engram's", "MCP server is not registered",
		"extractor:  local"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q", want)
		}
	}

	// With the Claude Code plugin alone, the plugin runs the hooks and
	// registers the MCP server: neither is a problem, and nothing tells
	// the model to run setup beside it.
	settingsPath := filepath.Join(cfg.ClaudeConfigDir, "settings.json")
	if err := os.MkdirAll(cfg.ClaudeConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settingsPath, []byte(`{"enabledPlugins": {"engram@engram": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	text = mustCall(t, cs, ToolStatus, nil)
	for _, bad := range []string{"hook", "MCP server is not registered", "engram-worker setup"} {
		if strings.Contains(text, bad) {
			t.Errorf("status with the plugin alone says %q:\n%s", bad, text)
		}
	}
	if err := os.Remove(settingsPath); err != nil {
		t.Fatal(err)
	}

	// Installed and run: no problem left.
	bin := t.TempDir()
	for _, b := range []string{setup.UserPromptBinary, setup.StopBinary} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := setup.MergeHooks(filepath.Join(cfg.ClaudeConfigDir, "settings.json"), setup.HooksIn(bin)); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.MergeMCP(srv.opts.UserConfig, filepath.Join(bin, setup.WorkerBinary)); err != nil {
		t.Fatal(err)
	}
	if _, err := setup.AddImport(filepath.Join(cfg.ClaudeConfigDir, "CLAUDE.md"), setup.ImportLine(cfg.Home, os.Getenv("HOME"))); err != nil {
		t.Fatal(err)
	}
	id, err := db.StartRun(context.Background(), "run")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(context.Background(), id, map[string]int{}, nil); err != nil {
		t.Fatal(err)
	}
	srv.opts.Now = time.Now
	text = mustCall(t, cs, ToolStatus, nil)
	if !strings.Contains(text, "problems:   none found") || strings.Contains(text, "last run:   never") {
		t.Errorf("status after setup and a run:\n%s", text)
	}

	// A failed run and a stale one are problems.
	id, _ = db.StartRun(context.Background(), "run")
	if err := db.FinishRun(context.Background(), id, nil, errors.New("embedder unreachable")); err != nil {
		t.Fatal(err)
	}
	srv.opts.Now = func() time.Time { return time.Now().Add(3 * time.Hour) }
	text = mustCall(t, cs, ToolStatus, nil)
	for _, want := range []string{"the last worker run failed: embedder unreachable", "3h0m0s ago", "it should run every 15m0s: is its scheduler installed and running?"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}

	// So is a failed update of the search index, until one succeeds.
	if err := recall.WriteIndexFailure(cfg.Home, &recall.IndexFailure{At: time.Now(), Error: "disk full", Changes: 7}); err != nil {
		t.Fatal(err)
	}
	if text = mustCall(t, cs, ToolStatus, nil); !strings.Contains(text, "the search index's last update failed at") ||
		!strings.Contains(text, "disk full") {
		t.Errorf("status with a failed index update:\n%s", text)
	}
}

// A tool that panics answers with a tool error, and the server goes on.
func TestPanicIsAToolError(t *testing.T) {
	f := newFixture(t, Options{})
	tool(f.srv, &mcp.Tool{Name: "boom", Description: "panics"}, statusSchema, func(context.Context, StatusInput) (string, error) {
		panic("kaboom")
	})
	text, isErr := call(t, f.cs, "boom", nil)
	if !isErr || !strings.Contains(text, "kaboom") {
		t.Errorf("panicking tool: %q (error %v)", text, isErr)
	}
	if text := mustCall(t, f.cs, ToolStatus, nil); !strings.Contains(text, "episodes:") {
		t.Errorf("status after a panic: %s", text)
	}
}

// Tools may be called concurrently (the client does not wait for one
// answer before the next request).
func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t, Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls := []struct {
				name string
				args map[string]any
			}{
				{ToolRecall, map[string]any{"query": "invoices postgres"}},
				{ToolExpand, map[string]any{"id": epAlpha}},
				{ToolSave, map[string]any{"text": fmt.Sprintf("We decided to name queue %d after the billing team", i)}},
				{ToolStatus, nil},
			}
			for _, c := range calls {
				res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.name, Arguments: c.args})
				if err != nil || res.IsError {
					errs <- fmt.Errorf("%s: %v %+v", c.name, err, res)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ep, _ := f.db.GetEpisode(context.Background(), epAlpha); ep.AccessCount != 10 {
		t.Errorf("%d accesses recorded, want 10", ep.AccessCount)
	}
}
