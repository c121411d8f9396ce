package claudellm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/llm"
)

// claudeBin is the pinned client (node_modules) or ENGRAM_CLAUDE_BIN.
func claudeBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("ENGRAM_CLAUDE_BIN"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "..", "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("Claude Code client not found at %s (npm install in the repository root, or set ENGRAM_CLAUDE_BIN)", p)
	}
	return p
}

// front sits before the stand-in API and answers with status (429, 401)
// instead while fail is set; it counts every /v1/messages request.
type front struct {
	srv  *httptest.Server
	stub *anthropicstub.Server
	fail atomic.Int32
	n    atomic.Int32
}

func newFront(t *testing.T, responder anthropicstub.Responder) *front {
	t.Helper()
	stub, err := anthropicstub.New(anthropicstub.Options{Responder: responder, Logf: t.Logf,
		// Every request of a structured call is the call itself.
		IsAux: func(*anthropicstub.Request) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stub.Close)
	u, _ := url.Parse(stub.URL)
	px := httputil.NewSingleHostReverseProxy(u)
	f := &front{stub: stub}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" {
			f.n.Add(1)
		}
		switch f.fail.Load() {
		case 429:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			w.Write([]byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`))
			return
		case 401:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			w.Write([]byte(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`))
			return
		}
		px.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

type env struct {
	home   string // HOME of the client
	engram string // ENGRAM_HOME
	now    time.Time
}

func newEnv(t *testing.T) *env {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".claude"), 0o700)
	// What the user's configuration would put into a session: none of it
	// may reach engram's calls.
	os.WriteFile(filepath.Join(home, ".claude", "CLAUDE.md"), []byte("USER-CLAUDE-MD-MARKER\n"), 0o600)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"touch `+
		filepath.Join(home, "stop-hook-ran")+`"}]}],"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo USER-HOOK-CONTEXT"}]}]}}`), 0o600)
	return &env{home: home, engram: filepath.Join(t.TempDir(), "engram"), now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.Local)}
}

func (e *env) client(t *testing.T, f *front, mod func(*claudellm.Config)) *claudellm.Client {
	cfg := claudellm.Config{Bin: claudeBin(t), Home: e.engram, Timeout: 60 * time.Second, Now: func() time.Time { return e.now },
		Env: []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + f.srv.URL,
			"ANTHROPIC_API_KEY=sk-ant-test", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}}
	if mod != nil {
		mod(&cfg)
	}
	return claudellm.New(cfg)
}

type answer struct {
	Verdict string   `json:"verdict" enum:"yes,no"`
	Tags    []string `json:"tags"`
	Note    *string  `json:"note,omitempty"`
}

// structured answers every call as a model does: with the StructuredOutput
// tool the client offers.
func structured(v any) anthropicstub.Responder {
	return func(*anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Call("StructuredOutput", v) }
}

func call(c *claudellm.Client) (answer, error) {
	var a answer
	err := c.JSON(context.Background(), "You judge things. SYSTEM-MARKER", "Judge this: USER-MARKER", "answer", &a)
	return a, err
}

func TestStructuredOutputThroughTheRealClient(t *testing.T) {
	f := newFront(t, structured(map[string]any{"verdict": "yes", "tags": []string{"a", "b"}, "note": nil}))
	e := newEnv(t)
	c := e.client(t, f, nil)
	a, err := call(c)
	if err != nil {
		t.Fatalf("%v\n%s", err, f.stub.Summary())
	}
	if a.Verdict != "yes" || strings.Join(a.Tags, ",") != "a,b" || a.Note != nil {
		t.Fatalf("decoded %+v", a)
	}
	reqs := f.stub.MessageRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1:\n%s", len(reqs), f.stub.Summary())
	}
	r := reqs[0]
	// What the client sends: our system prompt, our prompt (given on
	// stdin), the schema as the StructuredOutput tool's input schema, and
	// no other tool it could run.
	if !strings.Contains(r.System, "SYSTEM-MARKER") || !r.Contains("Judge this: USER-MARKER") {
		t.Errorf("system or prompt missing:\n%s", r.Body)
	}
	var body struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	json.Unmarshal(r.Body, &body)
	sch, _ := llm.SchemaOf(&answer{})
	found := false
	for _, tl := range body.Tools {
		switch tl.Name {
		case "StructuredOutput":
			found = true
			var got, want any
			json.Unmarshal(tl.InputSchema, &got)
			json.Unmarshal([]byte(sch.Text()), &want)
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Errorf("input schema %s, want %s", gb, wb)
			}
		case "DeferredToolPlaceholder":
		default:
			t.Errorf("tool %s offered", tl.Name)
		}
	}
	if !found {
		t.Errorf("no StructuredOutput tool:\n%s", r.Body)
	}
	if r.Model != "claude-haiku-5-5" && !strings.Contains(r.Model, "haiku") {
		t.Errorf("model %q, want a haiku model by default", r.Model)
	}
	// Nothing of the user's configuration: no CLAUDE.md, no hook output,
	// no hook run; no session saved.
	if f.stub.ContainsInAnyRequest("USER-CLAUDE-MD-MARKER") || f.stub.ContainsInAnyRequest("USER-HOOK-CONTEXT") {
		t.Error("the user's CLAUDE.md or hooks reached engram's call")
	}
	if _, err := os.Stat(filepath.Join(e.home, "stop-hook-ran")); err == nil {
		t.Error("the user's Stop hook ran in engram's call")
	}
	assertNoTranscript(t, e.home)
	u := c.Usage()
	if u.Calls != 1 || u.EstTokens <= 0 || u.FellBack() != 0 || u.CostUSD <= 0 {
		t.Errorf("usage %+v", u)
	}
	if fi, err := os.Stat(filepath.Join(e.engram, claudellm.UsageFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("usage file: %v %v", fi, err)
	}
}

func assertNoTranscript(t *testing.T, home string) {
	t.Helper()
	filepath.Walk(filepath.Join(home, ".claude"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			t.Errorf("a transcript was written: %s", p)
		}
		return nil
	})
}

func TestDailyCallBudget(t *testing.T) {
	f := newFront(t, structured(map[string]any{"verdict": "no", "tags": []string{}, "note": nil}))
	e := newEnv(t)
	c := e.client(t, f, func(c *claudellm.Config) { c.DailyCalls = 2 })
	for i := range 2 {
		if _, err := call(c); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := call(c); !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("third call err=%v, want ErrBudget", err)
	}
	if n := f.n.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// A new client (the next cycle) reads the same day's record.
	c2 := e.client(t, f, func(c *claudellm.Config) { c.DailyCalls = 2 })
	if _, err := call(c2); !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("next cycle err=%v, want ErrBudget", err)
	}
	if u := c2.Usage(); u.Calls != 2 || u.Budget != 2 {
		t.Errorf("usage %+v", u)
	}
	// The next day the budget is whole again.
	e.now = e.now.Add(24 * time.Hour)
	if _, err := call(c2); err != nil {
		t.Fatalf("next day: %v", err)
	}
	if u := c2.Usage(); u.Calls != 1 || u.Budget != 0 {
		t.Errorf("next day usage %+v", u)
	}
}

func TestDailyTokenBudget(t *testing.T) {
	f := newFront(t, structured(map[string]any{"verdict": "no", "tags": []string{}, "note": nil}))
	e := newEnv(t)
	c := e.client(t, f, func(c *claudellm.Config) { c.DailyTokens = 100 })
	if _, err := call(c); !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("err=%v, want ErrBudget: one call's estimate is more than 100 tokens", err)
	}
	if f.n.Load() != 0 {
		t.Errorf("a request was sent past the token budget")
	}
}

func TestRateLimitCoolsDownWithoutRetries(t *testing.T) {
	f := newFront(t, structured(map[string]any{"verdict": "yes", "tags": []string{}, "note": nil}))
	f.fail.Store(429)
	e := newEnv(t)
	c := e.client(t, f, nil)
	_, err := call(c)
	var ce *claudellm.Error
	if !errors.As(err, &ce) || ce.Kind != "rate_limit" || ce.Status != 429 {
		t.Fatalf("err=%v, want a rate limit", err)
	}
	if n := f.n.Load(); n != 1 {
		t.Errorf("%d requests after a 429, want 1 (no retries)", n)
	}
	f.fail.Store(0)
	if _, err := call(c); !errors.Is(err, claudellm.ErrCooldown) || !errors.Is(err, llm.ErrBudget) {
		t.Fatalf("err=%v during the cooldown, want ErrCooldown", err)
	}
	if n := f.n.Load(); n != 1 {
		t.Errorf("%d requests, want none during the cooldown", n)
	}
	e.now = e.now.Add(claudellm.RateLimitCooldown + time.Second)
	if _, err := call(c); err != nil {
		t.Fatalf("after the cooldown: %v", err)
	}
	if u := c.Usage(); u.RateLimit != 1 || u.Cooldown != 1 || u.Calls != 2 || !strings.Contains(u.LastError, "429") {
		t.Errorf("usage %+v", u)
	}
}

func TestAuthErrorCoolsDown(t *testing.T) {
	f := newFront(t, structured(map[string]any{"verdict": "yes", "tags": []string{}, "note": nil}))
	f.fail.Store(401)
	e := newEnv(t)
	c := e.client(t, f, nil)
	_, err := call(c)
	var ce *claudellm.Error
	if !errors.As(err, &ce) || ce.Kind != "auth" {
		t.Fatalf("err=%v, want an authentication failure", err)
	}
	if u := c.Usage(); u.Auth != 1 || !u.CooldownUntil.Equal(e.now.Add(claudellm.AuthCooldown)) {
		t.Errorf("usage %+v", u)
	}
}

func TestMalformedReplies(t *testing.T) {
	for name, r := range map[string]anthropicstub.Responder{
		// The model never calls the tool: the client asks again once, then
		// gives up with text only.
		"text only": func(*anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text(`{"verdict":"yes"}`) },
		// The tool's input lacks a required field.
		"wrong shape": structured(map[string]any{"verdict": 3}),
	} {
		t.Run(name, func(t *testing.T) {
			f := newFront(t, r)
			e := newEnv(t)
			c := e.client(t, f, nil)
			_, err := call(c)
			if !errors.Is(err, llm.ErrMalformed) {
				t.Fatalf("err=%v, want ErrMalformed\n%s", err, f.stub.Summary())
			}
			if u := c.Usage(); u.Malformed != 1 {
				t.Errorf("usage %+v", u)
			}
			// Not the client's five attempts: one, and for a reply without
			// the tool call the client's one reminder.
			if n := f.n.Load(); n > 2 {
				t.Errorf("%d requests, want at most 2\n%s", n, f.stub.Summary())
			}
		})
	}
}

func TestTimeoutKillsTheClient(t *testing.T) {
	f := newFront(t, func(*anthropicstub.Request) anthropicstub.Reply {
		time.Sleep(20 * time.Second)
		return anthropicstub.Call("StructuredOutput", map[string]any{"verdict": "yes", "tags": []string{}, "note": nil})
	})
	e := newEnv(t)
	c := e.client(t, f, func(c *claudellm.Config) { c.Timeout = 3 * time.Second })
	start := time.Now()
	_, err := call(c)
	var ce *claudellm.Error
	if !errors.As(err, &ce) || ce.Kind != "timeout" {
		t.Fatalf("err=%v, want a timeout", err)
	}
	if d := time.Since(start); d > 12*time.Second {
		t.Errorf("returned after %v, want soon after the 3s timeout", d)
	}
	if u := c.Usage(); u.Failed != 1 || u.Calls != 1 {
		t.Errorf("usage %+v", u)
	}
}

func TestMissingBinary(t *testing.T) {
	e := newEnv(t)
	c := claudellm.New(claudellm.Config{Bin: filepath.Join(e.home, "nope"), Home: e.engram})
	if _, err := call(c); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err=%v, want one naming the binary", err)
	}
}
