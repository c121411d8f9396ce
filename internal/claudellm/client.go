// Package claudellm is engram's third model backend (ENGRAM_LLM=claude): it
// runs the user's own `claude` binary in print mode for one structured
// reply per call, so that extraction and belief judging work with the
// Claude Code login the user already has. Each call runs
//
//	claude -p --output-format json --json-schema SCHEMA --no-session-persistence
//	       --tools "" --setting-sources "" --strict-mcp-config --disable-slash-commands
//	       --model MODEL --effort low --system-prompt SYSTEM   (the prompt on stdin)
//
// in a private working directory, with engram's marker in its environment
// (hookio.InternalCallEnv) so that engram's hooks ignore it. With no
// setting sources the user's settings.json is not read: no hooks of any
// tool run in that process, and no CLAUDE.md or MCP server is loaded. No
// session is saved, so no transcript is written.
//
// The client is frugal by construction: a daily budget of calls and of
// estimated input tokens (kept in $ENGRAM_HOME/llm-usage.json across
// cycles), a cooldown after a rate limit or an authentication error instead
// of retries, and the client's own retries turned off. Past a budget or in
// a cooldown, calls return llm.ErrBudget without running anything, and the
// callers use the local path.
package claudellm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/llm"
)

// Defaults of Config's zero values.
const (
	DefaultModel   = "haiku"
	DefaultTimeout = 120 * time.Second
)

// Measured with Claude Code 2.1.330 against the stand-in API: a call with an
// empty prompt and a one-field schema sends about 2.4 KB besides the prompt
// (the client's own system text, its environment section, the
// StructuredOutput tool), about 600 tokens at 4 bytes a token.
const overheadTokens = 600

// Cooldowns: no call is made for this long after the API said so.
const (
	RateLimitCooldown = 15 * time.Minute
	AuthCooldown      = 6 * time.Hour
)

// ErrCooldown means a recent rate limit or authentication failure holds
// calls back. It wraps llm.ErrBudget: nothing was run.
var ErrCooldown = fmt.Errorf("%w: cooling down after a rate limit or an authentication error", llm.ErrBudget)

// Config configures a Client.
type Config struct {
	// Bin is the claude binary; empty looks it up on PATH.
	Bin   string
	Model string
	// Timeout bounds one call (the process is killed past it).
	Timeout time.Duration
	// DailyCalls and DailyTokens bound a day's calls and estimated input
	// tokens; 0 means no bound.
	DailyCalls  int
	DailyTokens int64
	// Home is engram's data directory: the usage record, and the child's
	// working directory Home/claude.
	Home string
	// Env is the child's base environment; nil means the worker's own.
	Env []string
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Client runs one claude process at a time. It implements llm.JSONer.
type Client struct {
	cfg Config
	mu  sync.Mutex // one call at a time; guards the usage record
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Client{cfg: cfg}
}

// Model implements llm.JSONer.
func (c *Client) Model() string { return "claude:" + c.cfg.Model }

// Usage returns today's record.
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ReadUsage(c.cfg.Home, c.cfg.Now())
}

// FindBinary returns the claude binary: bin when set (it must be an
// executable file), else claude on PATH.
func FindBinary(bin string) (string, error) {
	if bin == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			return "", errors.New("claude not found on PATH (set ENGRAM_CLAUDE_BIN)")
		}
		return p, nil
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", fmt.Errorf("ENGRAM_CLAUDE_BIN=%s: %w", bin, err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("ENGRAM_CLAUDE_BIN=%s: not an executable file", bin)
	}
	// The child runs in its own directory: a relative name would not hold.
	return filepath.Abs(bin)
}

// Error is a call that ran and failed.
type Error struct {
	// Status is the API's HTTP status as the client reported it, 0 when
	// unknown.
	Status int
	// Kind: "rate_limit", "auth", "timeout", "failed".
	Kind string
	Msg  string
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("claude: %s (status %d): %s", e.Kind, e.Status, e.Msg)
	}
	return fmt.Sprintf("claude: %s: %s", e.Kind, e.Msg)
}

// result is the part of `--output-format json` engram reads.
type result struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	Result           string          `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	APIErrorStatus   *int            `json:"api_error_status"`
	APIErrorType     string          `json:"api_error_type"`
	Errors           []string        `json:"errors"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	// ModelUsage sums every request of the call (usage holds the last
	// turn's only when the client asked again).
	ModelUsage map[string]struct {
		InputTokens              int64 `json:"inputTokens"`
		OutputTokens             int64 `json:"outputTokens"`
		CacheReadInputTokens     int64 `json:"cacheReadInputTokens"`
		CacheCreationInputTokens int64 `json:"cacheCreationInputTokens"`
	} `json:"modelUsage"`
}

// tokens sums the input and output tokens the client reported.
func (r *result) tokens() (in, out int64) {
	for _, m := range r.ModelUsage {
		in += m.InputTokens + m.CacheReadInputTokens + m.CacheCreationInputTokens
		out += m.OutputTokens
	}
	return in, out
}

// EstimateTokens is the input-token estimate of one call before it runs.
func EstimateTokens(system, user, schema string) int64 {
	return int64(len(system)+len(user)+len(schema))/4 + overheadTokens
}

// JSON implements llm.JSONer: one run of the claude binary whose
// structured output must be a JSON object of out's type. Errors:
// llm.ErrBudget (nothing run: a daily budget or a cooldown), llm.ErrMalformed
// (no structured output, or not of the schema's shape), *Error, or the
// context's error.
func (c *Client) JSON(ctx context.Context, system, user, schemaName string, out any) error {
	sch, err := llm.SchemaOf(out)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.cfg.Now()
	u := ReadUsage(c.cfg.Home, now)
	est := EstimateTokens(system, user, sch.Text())
	switch {
	case now.Before(u.CooldownUntil):
		u.Cooldown++
		c.save(u)
		return fmt.Errorf("%w (until %s)", ErrCooldown, u.CooldownUntil.Format(time.DateTime))
	case c.cfg.DailyCalls > 0 && u.Calls >= c.cfg.DailyCalls:
		u.Budget++
		c.save(u)
		return fmt.Errorf("%w: %d calls today (ENGRAM_LLM_DAILY_CALLS=%d)", llm.ErrBudget, u.Calls, c.cfg.DailyCalls)
	case c.cfg.DailyTokens > 0 && u.EstTokens+est > c.cfg.DailyTokens:
		u.Budget++
		c.save(u)
		return fmt.Errorf("%w: about %d input tokens today, %d more asked (ENGRAM_LLM_DAILY_TOKENS=%d)",
			llm.ErrBudget, u.EstTokens, est, c.cfg.DailyTokens)
	}
	// Counted before it runs: a worker killed mid-call still spent it.
	u.Calls++
	u.EstTokens += est
	if err := c.save(u); err != nil {
		return err
	}
	res, runErr := c.run(ctx, system, user, sch.Text())
	u = ReadUsage(c.cfg.Home, now)
	if res != nil {
		in, outTok := res.tokens()
		if in > 0 {
			u.EstTokens += in - est
		}
		u.OutputTokens += outTok
		u.CostUSD += res.TotalCostUSD
	}
	err = runErr
	if err == nil {
		err = c.check(res, sch, out)
	}
	var ce *Error
	switch {
	case err == nil:
	case errors.As(err, &ce) && ce.Kind == "rate_limit":
		u.RateLimit++
		u.CooldownUntil = c.cfg.Now().Add(RateLimitCooldown)
	case errors.As(err, &ce) && ce.Kind == "auth":
		u.Auth++
		u.CooldownUntil = c.cfg.Now().Add(AuthCooldown)
	case errors.Is(err, llm.ErrMalformed):
		u.Malformed++
	default:
		u.Failed++
	}
	if err != nil {
		u.LastError = clip(oneLine(err.Error()), 300)
	}
	if serr := c.save(u); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", schemaName, err)
	}
	return nil
}

func (c *Client) save(u Usage) error {
	if err := writeUsage(c.cfg.Home, u); err != nil {
		return fmt.Errorf("claude: usage record: %w", err)
	}
	return nil
}

// Args are the flags of one call (the prompt goes on stdin).
func (c *Client) Args(system, schema string) []string {
	return []string{"-p", "--output-format", "json", "--json-schema", schema,
		"--no-session-persistence", "--tools", "", "--setting-sources", "",
		"--strict-mcp-config", "--disable-slash-commands",
		"--model", c.cfg.Model, "--effort", "low", "--system-prompt", system}
}

// run runs the binary once and decodes its result; a result is returned
// whenever the client printed one, with an error too when it reports one.
func (c *Client) run(ctx context.Context, system, user, schema string) (*result, error) {
	bin, err := FindBinary(c.cfg.Bin)
	if err != nil {
		return nil, &Error{Kind: "failed", Msg: err.Error()}
	}
	dir := filepath.Join(c.cfg.Home, "claude")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Error{Kind: "failed", Msg: err.Error()}
	}
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, c.Args(system, schema)...)
	cmd.Dir = dir
	cmd.Env = c.environ()
	cmd.Stdin = strings.NewReader(user)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &limited{b: &stdout, n: 4 << 20}, &limited{b: &stderr, n: 64 << 10}
	// The client may start helpers: kill the whole group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if cctx.Err() != nil {
		return nil, &Error{Kind: "timeout", Msg: fmt.Sprintf("no reply within %v", c.cfg.Timeout)}
	}
	var res result
	line := lastJSONLine(stdout.String())
	if line == "" || json.Unmarshal([]byte(line), &res) != nil || res.Type != "result" {
		msg := strings.TrimSpace(stderr.String() + " " + stdout.String())
		if runErr != nil {
			msg = runErr.Error() + ": " + msg
		}
		return nil, classify(0, msg)
	}
	if res.IsError && strings.Contains(res.Subtype, "structured_output") {
		// The model did not give output of the schema's shape in the
		// attempts the client allows (MAX_STRUCTURED_OUTPUT_RETRIES).
		return &res, fmt.Errorf("%w: %s: %s", llm.ErrMalformed, res.Subtype, clip(oneLine(strings.Join(res.Errors, "; ")), 300))
	}
	if res.IsError {
		st := 0
		if res.APIErrorStatus != nil {
			st = *res.APIErrorStatus
		}
		return &res, classify(st, res.APIErrorType+" "+res.Result)
	}
	if runErr != nil {
		return &res, &Error{Kind: "failed", Msg: runErr.Error()}
	}
	return &res, nil
}

// classify turns a reported failure into an *Error.
func classify(status int, msg string) *Error {
	msg = clip(oneLine(msg), 300)
	low := strings.ToLower(msg)
	switch {
	case status == 429 || status == 529 || strings.Contains(low, "rate_limit") || strings.Contains(low, "overloaded") ||
		strings.Contains(low, "usage limit"):
		return &Error{Status: status, Kind: "rate_limit", Msg: msg}
	case status == 401 || status == 403 || strings.Contains(low, "authentication") || strings.Contains(low, "/login") ||
		strings.Contains(low, "not logged in") || strings.Contains(low, "invalid api key"):
		return &Error{Status: status, Kind: "auth", Msg: msg}
	}
	return &Error{Status: status, Kind: "failed", Msg: msg}
}

// check decodes the structured output into out.
func (c *Client) check(res *result, sch llm.Schema, out any) error {
	raw := bytes.TrimSpace(res.StructuredOutput)
	if len(raw) == 0 || string(raw) == "null" {
		return fmt.Errorf("%w: no structured output (reply %q)", llm.ErrMalformed, clip(oneLine(res.Result), 200))
	}
	return sch.Decode(raw, out)
}

// environ is the child's environment: the base one with engram's marker,
// the client's own retries off (a rate limit means a cooldown here, never a
// retry storm) and no nonessential traffic (title generation and the like
// would be calls too).
func (c *Client) environ() []string {
	base := c.cfg.Env
	if base == nil {
		base = os.Environ()
	}
	set := map[string]string{
		hookio.InternalCallEnv:                     "1",
		"CLAUDE_CODE_MAX_RETRIES":                  "0",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		// A reply not of the schema's shape is not asked for again (the
		// client's default is five attempts, each a request): it falls
		// back to the local path. Measured with 2.1.330: 1 means one
		// attempt.
		"MAX_STRUCTURED_OUTPUT_RETRIES": "1",
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

func lastJSONLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

// limited keeps the first n bytes written and drops the rest.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s[:n])
	return string(r[:max(len(r)-1, 0)]) + "…"
}
