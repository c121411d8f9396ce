package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/store"
)

// engramModel answers engram's own calls (ENGRAM_LLM=claude) the way a
// model answers the real client's structured-output request: with one call
// of the StructuredOutput tool whose input is the reply.
type engramModel struct {
	mode atomic.Value // "ok" or "malformed"

	mu    sync.Mutex
	calls []anthropicstub.Request
}

var exchangeNum = regexp.MustCompile(`Exchange (\d+)`)

func (m *engramModel) respond(r *anthropicstub.Request) anthropicstub.Reply {
	if !r.HasTool("StructuredOutput") {
		return anthropicstub.Text("Stub reply")
	}
	m.mu.Lock()
	m.calls = append(m.calls, *r)
	m.mu.Unlock()
	if m.mode.Load() == "malformed" {
		return anthropicstub.Call("StructuredOutput", map[string]any{"records": "none"})
	}
	prompt := r.Prompt()
	switch {
	case strings.Contains(r.System, "each of several exchanges"):
		var recs []any
		for _, mm := range exchangeNum.FindAllStringSubmatch(prompt, -1) {
			var n int
			fmt.Sscan(mm[1], &n)
			recs = append(recs, map[string]any{"exchange": n, "skip": false,
				"summary": fmt.Sprintf("CLAUDE-EXTRACTED %d: the billing service deploys with flyctl deploy.", n),
				"type":    "fact", "importance": 0.6, "scope": "project", "entities": []string{"flyctl"},
				"signals": []any{}})
		}
		return anthropicstub.Call("StructuredOutput", map[string]any{"records": recs})
	case strings.Contains(r.System, "extract one generalized belief"):
		return anthropicstub.Call("StructuredOutput", map[string]any{"skip": false,
			"statement": "Project billing deploys with flyctl.", "subject": "billing deploys", "predicate": "deploys with",
			"context": "general", "timeframe": "current"})
	case strings.Contains(r.System, "how one new memory episode bears"):
		return anthropicstub.Call("StructuredOutput", map[string]any{"classification": "SUPPORTS", "reasoning": "same"})
	}
	return anthropicstub.Text("unexpected")
}

func (m *engramModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// TestClaudeBackendWithRealClient: engram-worker with ENGRAM_LLM=claude runs
// the real pinned client, which asks the stand-in API for structured
// output. Three captured turns take one extraction call; the cluster they
// form takes one synthesis call, and a belief comes of it. The daily budget
// then stops the calls: the next turns are extracted locally. A malformed
// reply and a 429 fall back too, and the 429 starts a cooldown that sends
// nothing. No transcript and no capture of engram's own calls exists.
func TestClaudeBackendWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	model := &engramModel{}
	model.mode.Store("ok")
	conv := func(*anthropicstub.Request) anthropicstub.Reply {
		return anthropicstub.Text("We deploy the billing service with flyctl deploy from the repository root.")
	}
	e := NewEnv(t, conv, Hooks{})
	stub, err := anthropicstub.New(anthropicstub.Options{Responder: conv, Aux: model.respond, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stub.Close)
	// A front that can answer 429 for everything.
	var fail atomic.Bool
	var frontHits atomic.Int32
	target, _ := url.Parse(stub.URL)
	px := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() && r.URL.Path == "/v1/messages" {
			frontHits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"rate limited"}}`))
			return
		}
		px.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	stub.URL = front.URL
	e.Stub = stub
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", stub.Summary())
			logEngramLogs(t, e)
		}
	})
	envFile := func(dailyCalls, batch int) {
		if err := os.MkdirAll(e.EngramHome, 0o700); err != nil {
			t.Fatal(err)
		}
		e.writeFile(filepath.Join(e.EngramHome, "env"), fmt.Sprintf(
			"ENGRAM_LLM=claude\nENGRAM_CLAUDE_BIN=%s\nENGRAM_LLM_DAILY_CALLS=%d\nENGRAM_CLAUDE_BATCH=%d\nENGRAM_BELIEF_EPISODE_THRESHOLD=3\n"+
				"ENGRAM_BELIEF_CLUSTER_SIMILARITY=0.2\nENGRAM_CLAUDE_TIMEOUT=60s\nENGRAM_DEDUP_SIMILARITY=0.995\n", e.Claude, dailyCalls, batch), 0o600)
	}
	envFile(2, 8)

	sessions := map[string]bool{}
	ask := func(prompts ...string) {
		for _, p := range prompts {
			res := e.Prompt("", p)
			sessions[res.SessionID] = true
		}
	}
	ask("how do we deploy the billing service to production?",
		"remind me how the billing service gets deployed to production",
		"what is the command to deploy the billing service to production again?")
	out := e.Worker(bins.Worker, "run")
	t.Logf("run:\n%s", out)

	// One extraction call for the three turns, one synthesis call.
	if n := model.count(); n != 2 {
		t.Fatalf("%d calls of engram's, want 2 (one batch, one synthesis)", n)
	}
	first := model.calls[0]
	for _, want := range []string{"Exchange 1", "Exchange 2", "Exchange 3", "deploy the billing service to production"} {
		if !strings.Contains(first.Prompt(), want) {
			t.Errorf("the extraction request lacks %q:\n%s", want, first.Prompt())
		}
	}
	if !strings.Contains(first.System, extract.LLMBatchSystemPrompt[:80]) || !strings.Contains(first.Model, "haiku") {
		t.Errorf("extraction request: model %q system:\n%s", first.Model, first.System)
	}
	var body struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	json.Unmarshal(first.Body, &body)
	for _, tl := range body.Tools {
		if tl.Name != "StructuredOutput" && tl.Name != "DeferredToolPlaceholder" {
			t.Errorf("engram's call offers the tool %s", tl.Name)
		}
		if tl.Name == "StructuredOutput" && !strings.Contains(string(tl.InputSchema), `"records"`) {
			t.Errorf("StructuredOutput schema %s", tl.InputSchema)
		}
	}
	if strings.Contains(string(first.Body), markerClaudeMD) {
		t.Error("the user's CLAUDE.md reached engram's call")
	}
	eps := readEpisodes(t, e)
	byExtractor := map[string]int{}
	for _, ep := range eps {
		byExtractor[ep.Extractor]++
	}
	if byExtractor["llm:claude:haiku"] != 3 {
		t.Fatalf("episodes by extractor %v, want 3 by the claude backend:\n%s", byExtractor, describeEpisodes(eps))
	}
	var judged bool
	for _, b := range readBeliefs(t, e) {
		if b.Statement == "Project billing deploys with flyctl." && b.EvidenceCount >= 3 {
			judged = true
		}
	}
	if !judged {
		t.Fatalf("no belief from the synthesis: %s\nepisodes:\n%s", describeBeliefs(readBeliefs(t, e)), describeEpisodes(eps))
	}

	// The budget (2 calls a day) is spent: the next turns go local, and no
	// call reaches the API.
	ask("deploy the billing service to production now please")
	t.Logf("run:\n%s", e.Worker(bins.Worker, "run"))
	if n := model.count(); n != 2 {
		t.Fatalf("%d calls past the daily budget of 2", n)
	}
	st := e.Worker(bins.Worker, "status")
	if !regexp.MustCompile(`model today: 2 calls of 100|model today: 2 calls of 2, about \d+ input tokens of 500000, \$[0-9.]+ at list price as the client reports it; fell back to the local path: [1-9]\d* \(budget [1-9]`).MatchString(st) {
		t.Errorf("status:\n%s", st)
	}

	// A malformed reply: the batch falls back to the local extractor.
	envFile(10, 8)
	model.mode.Store("malformed")
	ask("one more question about the billing service deploy: staging too?")
	t.Logf("run:\n%s", e.Worker(bins.Worker, "run"))
	if n := model.count(); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
	u := claudellm.ReadUsage(e.EngramHome, time.Now())
	if u.Malformed != 1 {
		t.Errorf("usage %+v, want one malformed reply", u)
	}

	// A 429: one request, no retries, then a cooldown that sends nothing.
	// One capture per call, so that the second capture's call meets the
	// cooldown.
	model.mode.Store("ok")
	ask("and how do we roll back a billing deploy?", "last billing question: who approves deploys?")
	envFile(10, 1)
	fail.Store(true)
	t.Logf("run:\n%s", e.Worker(bins.Worker, "run"))
	fail.Store(false)
	if n := frontHits.Load(); n != 1 {
		t.Errorf("%d requests answered 429, want 1 (no retries, then a cooldown)", n)
	}
	u = claudellm.ReadUsage(e.EngramHome, time.Now())
	if u.RateLimit != 1 || u.Cooldown < 1 || !u.CooldownUntil.After(time.Now()) {
		t.Errorf("usage %+v, want a rate limit and a cooldown", u)
	}
	st = e.Worker(bins.Worker, "status")
	t.Logf("status:\n%s", st)
	if !strings.Contains(st, "rate limit 1") || !strings.Contains(st, "malformed reply 1") || !strings.Contains(st, "no calls until") {
		t.Errorf("status:\n%s", st)
	}

	// Every turn became an episode; nothing of engram's own calls was
	// captured or written as a transcript.
	caps, err := readCaptures(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if !sessions[c.SessionID] {
			t.Errorf("a capture of session %s, which the user never ran: %.200q", c.SessionID, c.Content)
		}
		if c.Status != store.CaptureDone {
			t.Errorf("capture %d is %s", c.ID, c.Status)
		}
	}
	if len(caps) != 7 {
		t.Errorf("%d captures, want 7", len(caps))
	}
	transcripts, _ := filepath.Glob(filepath.Join(e.ClaudeDir, "projects", "*", "*.jsonl"))
	for _, p := range transcripts {
		if !sessions[strings.TrimSuffix(filepath.Base(p), ".jsonl")] {
			t.Errorf("a transcript the user never made: %s", p)
		}
	}
	if len(transcripts) != len(sessions) {
		t.Errorf("%d transcripts for %d sessions", len(transcripts), len(sessions))
	}
}
