// Package llm is engram's client for OpenAI-compatible chat endpoints
// (OpenAI, Ollama, llama.cpp, vLLM), shared by every LLM feature: episode
// extraction, belief synthesis and classification. It adds what go-openai
// leaves out: a timeout per attempt, retries of 429/5xx/timeouts with
// backoff that honours Retry-After, bounded concurrency, a per-cycle call
// budget, structured JSON output (strict json_schema, falling back to
// json_object on servers without it), and counters for `status`.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Defaults of Config's zero values.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxRetries  = 3
	DefaultBackoffBase = 500 * time.Millisecond
	DefaultConcurrency = 4

	// maxBackoff caps one computed backoff; maxRetryAfter is the longest
	// Retry-After honoured: a server asking for more is treated as a
	// failure now rather than a reason to stall the worker.
	maxBackoff    = 30 * time.Second
	maxRetryAfter = 60 * time.Second
	// maxResponse bounds the bytes read from one response.
	maxResponse = 4 << 20
)

// Config configures a Client.
type Config struct {
	// BaseURL of the OpenAI-compatible API, including /v1 (e.g.
	// http://127.0.0.1:11434/v1 for Ollama). Empty means OpenAI.
	BaseURL string
	// APIKey; empty sends no Authorization header (local servers).
	APIKey string
	Model  string
	// Timeout bounds each attempt (request and reply). 0 means 30s.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is repeated. 0 means 3;
	// negative means none.
	MaxRetries int
	// BackoffBase is the first backoff; each retry doubles it, with jitter.
	// 0 means 500ms.
	BackoffBase time.Duration
	// Concurrency bounds requests in flight. 0 means 4.
	Concurrency int
	// MaxCalls is the budget of requests for the client's life (one worker
	// cycle), retries and fallbacks included. 0 means unlimited.
	MaxCalls int
	// MaxTokens, when positive, is sent as max_tokens to bound each reply.
	MaxTokens int
	// HTTPClient is used instead of a default client with a timeout.
	HTTPClient *http.Client
}

// Stats counts a client's activity since New.
type Stats struct {
	// Calls is the number of requests sent, retries and fallbacks
	// included: what MaxCalls bounds.
	Calls int
	// Retries is the number of requests that repeated a failed one.
	Retries int
	// Failures is the number of JSON calls that returned an error other
	// than ErrBudget (Malformed ones included).
	Failures int
	// Malformed is the number of JSON calls whose reply was unusable.
	Malformed int
	// BudgetDenied is the number of JSON calls refused by the budget.
	BudgetDenied int
	// Tokens as reported by the server (0 when it reports no usage).
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	// JSONObjectMode is true once the server rejected json_schema and the
	// client switched to json_object.
	JSONObjectMode bool
}

// Client is safe for concurrent use.
type Client struct {
	oa          *openai.Client
	model       string
	timeout     time.Duration
	maxRetries  int
	backoffBase time.Duration
	maxCalls    int
	maxTokens   int
	sem         chan struct{}

	mu    sync.Mutex
	stats Stats
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	hc := cfg.HTTPClient
	if hc == nil {
		// The per-attempt context is the real bound; this is a backstop.
		hc = &http.Client{Timeout: 2 * cfg.Timeout}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = doer{hc}
	return &Client{
		oa:          openai.NewClientWithConfig(oc),
		model:       cfg.Model,
		timeout:     cfg.Timeout,
		maxRetries:  cfg.MaxRetries,
		backoffBase: cfg.BackoffBase,
		maxCalls:    cfg.MaxCalls,
		maxTokens:   cfg.MaxTokens,
		sem:         make(chan struct{}, cfg.Concurrency),
	}
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.model }

// Calls returns the number of requests sent so far.
func (c *Client) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.Calls
}

// Stats returns a snapshot of the counters.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// JSON runs one chat completion whose reply must be a JSON object of out's
// type (a pointer to a struct) and decodes it into out.
//
// The schema is derived from out's type and sent as a strict json_schema
// named schemaName; fields tagged omitempty or nullable:"true" become
// required-but-nullable, as strict mode demands. When the server answers
// 400 about response_format, the client switches to json_object mode for
// the rest of its life and puts the schema in the system prompt instead.
//
// The reply is checked against the schema's shape (types, the fields that
// are not optional), not its enums: values are the caller's to validate. Errors:
// ErrBudget (nothing sent), ErrMalformed (unusable reply), *Error (HTTP or
// network failure after retries), or the context's error.
func (c *Client) JSON(ctx context.Context, system, user, schemaName string, out any) error {
	sch, err := schemaFor(out)
	if err != nil {
		return err
	}
	err = c.do(ctx, system, user, schemaName, sch, out)
	c.mu.Lock()
	switch {
	case err == nil:
	case errors.Is(err, ErrBudget):
		c.stats.BudgetDenied++
	default:
		c.stats.Failures++
		if errors.Is(err, ErrMalformed) {
			c.stats.Malformed++
		}
	}
	c.mu.Unlock()
	return err
}

func (c *Client) do(ctx context.Context, system, user, name string, sch *schema, out any) error {
	attempts, retries := 0, 0
	fellBack := false
	var last error
	for {
		objectMode := c.objectMode()
		req := c.request(system, user, name, sch, objectMode)
		resp, h, err := c.attempt(ctx, req)
		if errors.Is(err, ErrBudget) {
			if last != nil {
				return fmt.Errorf("%w (after %d attempts; last: %v)", ErrBudget, attempts, clip(oneLine(errorMessage(last)), 200))
			}
			return err
		}
		attempts++
		if err == nil {
			c.addUsage(resp.Usage)
			return decode(resp, sch, out)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("llm: chat completion: %w", ctx.Err())
		}
		last = err
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if StatusOf(err) == 0 && (errors.As(err, &se) || errors.As(err, &te)) {
			// A 2xx whose body is not a chat completion (a proxy's page).
			return fmt.Errorf("%w: response body: %v", ErrMalformed, err)
		}
		if !objectMode && !fellBack && aboutResponseFormat(err) {
			// The server does not do json_schema: use json_object from now
			// on. This is not a retry of a transient failure.
			fellBack = true
			c.setObjectMode()
			continue
		}
		if !retryable(err, h.timedOut) || retries >= c.maxRetries {
			return &Error{Status: StatusOf(err), Attempts: attempts, Err: err}
		}
		wait := c.backoff(retries)
		if h.retryAfter > maxRetryAfter {
			return &Error{Status: StatusOf(err), Attempts: attempts, Err: err}
		}
		wait = max(wait, h.retryAfter)
		if err := sleepCtx(ctx, wait); err != nil {
			return fmt.Errorf("llm: chat completion: %w (last: %v)", err, clip(oneLine(errorMessage(last)), 200))
		}
		retries++
		c.mu.Lock()
		c.stats.Retries++
		c.mu.Unlock()
	}
}

func (c *Client) objectMode() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats.JSONObjectMode
}

func (c *Client) setObjectMode() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.JSONObjectMode = true
}

func (c *Client) addUsage(u openai.Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.PromptTokens += int64(u.PromptTokens)
	c.stats.CompletionTokens += int64(u.CompletionTokens)
	c.stats.TotalTokens += int64(u.TotalTokens)
}

// request builds the chat completion request of one attempt.
func (c *Client) request(system, user, name string, sch *schema, objectMode bool) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{
		Model: c.model,
		// 0 is never sent (omitempty), and servers default to ~1.
		Temperature: math.SmallestNonzeroFloat32,
		MaxTokens:   c.maxTokens,
	}
	if objectMode {
		system += "\n\nReply with one JSON object only, no prose and no code fence, matching this JSON schema:\n" + sch.text
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	} else {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   schemaName(name),
				Schema: sch.strict,
				Strict: true,
			},
		}
	}
	req.Messages = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}
	return req
}

// attempt sends one request within the concurrency bound, the budget and
// the per-attempt timeout.
func (c *Client) attempt(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, *hints, error) {
	h := &hints{}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, h, ctx.Err()
	}
	defer func() { <-c.sem }()
	c.mu.Lock()
	if c.maxCalls > 0 && c.stats.Calls >= c.maxCalls {
		c.mu.Unlock()
		return openai.ChatCompletionResponse{}, h, ErrBudget
	}
	c.stats.Calls++
	c.mu.Unlock()

	actx, cancel := context.WithTimeout(context.WithValue(ctx, hintsKey{}, h), c.timeout)
	defer cancel()
	resp, err := c.oa.CreateChatCompletion(actx, req)
	if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		h.timedOut = true
		err = fmt.Errorf("attempt timed out after %v: %w", c.timeout, err)
	}
	return resp, h, err
}

// backoff is the wait before retry n (0-based): BackoffBase·2ⁿ, capped,
// with "equal jitter" (half fixed, half random) so that concurrent callers
// spread out.
func (c *Client) backoff(n int) time.Duration {
	d := c.backoffBase << min(n, 20)
	if d <= 0 || d > maxBackoff {
		d = maxBackoff
	}
	half := d / 2
	return half + rand.N(half+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// decode checks and decodes the reply into out.
func decode(resp openai.ChatCompletionResponse, sch *schema, out any) error {
	if len(resp.Choices) == 0 {
		return fmt.Errorf("%w: no choices", ErrMalformed)
	}
	ch := resp.Choices[0]
	if ch.Message.Refusal != "" {
		return fmt.Errorf("%w: refused: %s", ErrMalformed, clip(oneLine(ch.Message.Refusal), 200))
	}
	if ch.FinishReason == openai.FinishReasonLength {
		return fmt.Errorf("%w: reply cut short (finish_reason length)", ErrMalformed)
	}
	content := stripFence(ch.Message.Content)
	var data any
	if err := json.Unmarshal([]byte(content), &data); err != nil {
		return fmt.Errorf("%w: not JSON (%v): %q", ErrMalformed, err, clip(content, 200))
	}
	if !sch.validate(data) {
		return fmt.Errorf("%w: JSON does not match the schema: %q", ErrMalformed, clip(content, 200))
	}
	if err := json.Unmarshal([]byte(content), out); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

// stripFence removes a ```json … ``` wrapper that some local models add
// even in JSON mode.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.ContainsAny(s[:i], "{[") {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	return strings.TrimSpace(strings.TrimSuffix(s, "```"))
}

// hints carries what the HTTP layer saw of one attempt, which go-openai's
// errors do not expose.
type hints struct {
	retryAfter time.Duration
	timedOut   bool
}

type hintsKey struct{}

// doer wraps the HTTP client to read Retry-After and bound response sizes.
type doer struct{ hc *http.Client }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if err != nil {
		return resp, err
	}
	if h, ok := req.Context().Value(hintsKey{}).(*hints); ok {
		h.retryAfter = retryAfter(resp.Header, time.Now())
	}
	resp.Body = limitedBody{io.LimitReader(resp.Body, maxResponse), resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date); 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(min(ms, 86400e3) * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		// Anything past a day is as good as "not now".
		return time.Duration(min(s, 86400) * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
