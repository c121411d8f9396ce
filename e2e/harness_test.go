package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
)

// claudeVersion is the client version the tests were written against.
const claudeVersion = "2.1.330"

// Markers planted where engram must not look. Each one reaching a capture
// is a leak of something that is not the conversation.
const (
	markerClaudeMD     = "CLAUDEMD-MARKER-7f3a"
	markerSessionStart = "SESSIONSTART-MARKER-91c2"
	markerOtherHook    = "OTHERHOOK-MARKER-5d1e"
)

// clientTimeout bounds one run of the client.
const clientTimeout = 120 * time.Second

var (
	repoRootOnce sync.Once
	repoRootDir  string
	repoRootErr  error

	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	if os.Getenv(lagHookEnv) != "" {
		os.Exit(runLagHook()) // this binary is a Stop hook (see resume_test.go)
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	if releaseDir != "" {
		os.RemoveAll(filepath.Dir(releaseDir))
	}
	os.Exit(code)
}

// repoRoot is the directory holding go.mod.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	repoRootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			repoRootErr = err
			return
		}
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				repoRootDir = d
				return
			}
			if filepath.Dir(d) == d {
				repoRootErr = fmt.Errorf("no go.mod above %s", dir)
				return
			}
		}
	})
	if repoRootErr != nil {
		tb.Fatalf("find repository root: %v", repoRootErr)
	}
	return repoRootDir
}

// claudeBin finds the real client, or skips the test.
func claudeBin(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("ENGRAM_CLAUDE_BIN"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("ENGRAM_CLAUDE_BIN=%s: %v", p, err)
		}
		return p
	}
	p := filepath.Join(repoRoot(tb), "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("Claude Code client not found at %s and ENGRAM_CLAUDE_BIN is not set; install it with "+
			"`npm install @anthropic-ai/claude-code@%s` in the repository root, or point ENGRAM_CLAUDE_BIN "+
			"at the claude binary of @anthropic-ai/claude-code-linux-x64", p, claudeVersion)
	}
	return p
}

// Binaries are the engram programs built for this test run.
type Binaries struct {
	HookStop       string
	HookUserPrompt string
	Worker         string
}

// buildBinaries builds the engram programs once per test binary run.
func buildBinaries(tb testing.TB) Binaries {
	tb.Helper()
	root := repoRoot(tb)
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "engram-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildDir = dir
		// One go build for the three: they share most packages, and
		// with -o DIR/ each lands under its package's name.
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator),
			"./cmd/hook-stop", "./cmd/hook-userprompt", "./cmd/worker")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/hook-stop ./cmd/hook-userprompt ./cmd/worker: %v\n%s", err, out)
			return
		}
		for _, name := range []string{"hook-stop", "hook-userprompt", "worker"} {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, "engram-"+name)); err != nil {
				buildErr = err
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatalf("build engram binaries: %v", buildErr)
	}
	return Binaries{
		HookStop:       filepath.Join(buildDir, "engram-hook-stop"),
		HookUserPrompt: filepath.Join(buildDir, "engram-hook-userprompt"),
		Worker:         filepath.Join(buildDir, "engram-worker"),
	}
}

// Hooks are the hook commands installed in ~/.claude/settings.json, each
// an absolute path. Empty ones are not installed.
type Hooks struct {
	SessionStart     []string
	UserPromptSubmit []string
	Stop             []string
}

// Env is one throw-away installation: a HOME with Claude Code settings
// and engram's data directory, a git project used as the session's cwd,
// and the stub the client talks to.
type Env struct {
	t          testing.TB
	Claude     string
	Base       string // the test's temporary directory, symlinks resolved
	Home       string
	ClaudeDir  string // Home/.claude
	EngramHome string
	Project    string // Base/work/proj, a git repository
	Stub       *anthropicstub.Server
	Hooks      Hooks
	// Extra are more variables of the environment (ENGRAM_* settings).
	Extra []string
	// ExecForm writes the hooks in exec form: "command" the program
	// alone and "args" its arguments (none), which the client runs
	// without a shell.
	ExecForm bool

	mu          sync.Mutex
	sessionDirs map[string]string // session id -> the cwd it was started in
}

// NewEnv prepares a HOME, a project and hook settings, and starts a stub
// answering with responder.
func NewEnv(t testing.TB, responder anthropicstub.Responder, hooks Hooks) *Env {
	t.Helper()
	claude := claudeBin(t)
	base := t.TempDir()
	// Resolve symlinks so that paths compare equal to what the client and
	// the hooks see through getcwd.
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r
	}
	e := &Env{
		t:          t,
		Claude:     claude,
		Base:       base,
		Home:       filepath.Join(base, "home"),
		EngramHome: filepath.Join(base, "home", ".claude-memory"),
		Project:    filepath.Join(base, "work", "proj"),
		Hooks:      hooks,
	}
	e.ClaudeDir = filepath.Join(e.Home, ".claude")
	for _, d := range []string{e.ClaudeDir, e.Project, filepath.Join(e.Home, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.writeFile(filepath.Join(e.ClaudeDir, "CLAUDE.md"),
		"# Personal notes\n\nThe build marker for this machine is "+markerClaudeMD+".\n", 0o644)
	e.writeSettings()
	e.gitInit(e.Project)
	e.Stub = anthropicstub.Start(t, responder)
	return e
}

func (e *Env) writeFile(path, content string, mode os.FileMode) {
	e.t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		e.t.Fatal(err)
	}
}

// WriteScript writes an executable shell script into HOME/bin and returns
// its path.
func (e *Env) WriteScript(name, body string) string {
	e.t.Helper()
	dir := filepath.Join(e.Home, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	e.writeFile(p, "#!/bin/sh\n"+body, 0o755)
	return p
}

// SetHooks replaces the hooks installed in ~/.claude/settings.json.
func (e *Env) SetHooks(h Hooks) {
	e.t.Helper()
	e.Hooks = h
	e.writeSettings()
}

func (e *Env) writeSettings() {
	e.t.Helper()
	type hook struct {
		Type    string    `json:"type"`
		Command string    `json:"command"`
		Args    *[]string `json:"args,omitempty"`
		Timeout int       `json:"timeout,omitempty"`
	}
	type matcher struct {
		Hooks []hook `json:"hooks"`
	}
	hooks := map[string][]matcher{}
	add := func(event string, cmds []string) {
		var hs []hook
		for _, c := range cmds {
			if c == "" {
				continue
			}
			if !filepath.IsAbs(c) {
				e.t.Fatalf("hook command %q is not an absolute path", c)
			}
			h := hook{Type: "command", Command: c, Timeout: 30}
			if e.ExecForm {
				h.Args = &[]string{}
			}
			hs = append(hs, h)
		}
		if len(hs) > 0 {
			hooks[event] = []matcher{{Hooks: hs}}
		}
	}
	add("SessionStart", e.Hooks.SessionStart)
	add("UserPromptSubmit", e.Hooks.UserPromptSubmit)
	add("Stop", e.Hooks.Stop)
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		e.t.Fatal(err)
	}
	e.writeFile(filepath.Join(e.ClaudeDir, "settings.json"), string(b)+"\n", 0o644)
}

// NewProject makes another git repository, Base/work/<name>, and returns
// its path.
func (e *Env) NewProject(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.Base, "work", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.gitInit(dir)
	return dir
}

// gitInit makes dir a git repository with one commit.
func (e *Env) gitInit(dir string) {
	e.t.Helper()
	e.writeFile(filepath.Join(dir, "README.md"), "# "+filepath.Base(dir)+"\n", 0o644)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"add", "README.md"},
		{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = e.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			e.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// environ is the whole environment of the client and the engram programs:
// nothing of the developer's own HOME, credentials or ENGRAM_* settings.
func (e *Env) environ() []string {
	env := []string{
		"HOME=" + e.Home,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + filepath.Join(e.Home, "tmp"),
		"LANG=C.UTF-8",
		"SHELL=/bin/bash",
		"ENGRAM_HOME=" + e.EngramHome,
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"GIT_CONFIG_NOSYSTEM=1",
	}
	if e.Stub != nil {
		env = append(env, "ANTHROPIC_BASE_URL="+e.Stub.URL, "ANTHROPIC_API_KEY=sk-ant-e2e-stub-key")
	}
	return append(env, e.Extra...)
}

// RunResult is the outcome of one client run.
type RunResult struct {
	Dir       string // the client's working directory
	Args      []string
	Stdout    string
	Stderr    string
	Duration  time.Duration
	SessionID string
	Result    string // the final reply, from --output-format json
}

func (r RunResult) String() string {
	return fmt.Sprintf("claude %s (%v)\n--- stdout ---\n%s\n--- stderr ---\n%s",
		strings.Join(r.Args, " "), r.Duration.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// Prompt runs `claude -p` with prompt in the project directory; resume, if
// not empty, continues that session. It fails the test if the client fails.
func (e *Env) Prompt(resume, prompt string) RunResult {
	e.t.Helper()
	return e.PromptIn(e.Project, resume, prompt)
}

// PromptIn is Prompt with dir as the client's working directory. The
// session's transcript is then looked up under dir (see TranscriptPath).
func (e *Env) PromptIn(dir, resume, prompt string) RunResult {
	e.t.Helper()
	return e.PromptWith(dir, resume, nil, prompt)
}

// PromptWith is PromptIn with more client flags before the prompt (such as
// --fork-session).
func (e *Env) PromptWith(dir, resume string, flags []string, prompt string) RunResult {
	e.t.Helper()
	args := []string{"-p", "--output-format", "json", "--allowedTools", "Bash,Write,Edit,Read"}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	args = append(args, flags...)
	args = append(args, "--", prompt)
	res, err := e.runClient(dir, args)
	if err != nil {
		e.t.Fatalf("%v\n%s\nstub requests:\n%s", err, res, e.Stub.Summary())
	}
	var out struct {
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(lastJSONLine(res.Stdout)), &out); err != nil {
		e.t.Fatalf("parse client output: %v\n%s", err, res)
	}
	if out.IsError || out.SessionID == "" {
		e.t.Fatalf("client reported an error or no session id\n%s\nstub requests:\n%s", res, e.Stub.Summary())
	}
	res.SessionID, res.Result = out.SessionID, out.Result
	e.mu.Lock()
	if e.sessionDirs == nil {
		e.sessionDirs = map[string]string{}
	}
	if _, ok := e.sessionDirs[res.SessionID]; !ok {
		e.sessionDirs[res.SessionID] = dir
	}
	e.mu.Unlock()
	where := ""
	if dir != e.Project {
		where = " in " + dir
	}
	e.t.Logf("claude %s %q%s: session %s in %v", strings.Join(args[:len(args)-1], " "), prompt, where, res.SessionID, res.Duration.Round(time.Millisecond))
	return res
}

func (e *Env) runClient(dir string, args []string) (RunResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Claude, args...)
	cmd.Dir = dir
	cmd.Env = e.environ()
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	res := RunResult{Dir: dir, Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	if ctx.Err() != nil {
		return res, fmt.Errorf("claude timed out after %v", clientTimeout)
	}
	if err != nil {
		return res, fmt.Errorf("claude: %w", err)
	}
	return res, nil
}

// lastJSONLine returns the last line of s that looks like a JSON object.
func lastJSONLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return s
}

// Worker runs engram-worker with args in the env and returns its combined
// output.
func (e *Env) Worker(bin string, args ...string) string {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = e.Project
	cmd.Env = e.environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("engram-worker %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TranscriptPath is where the client keeps a session's transcript: under
// the folder of the directory the session was started in (which, unlike
// the auto-memory folder, is not the git root).
func (e *Env) TranscriptPath(sessionID string) string {
	e.mu.Lock()
	dir, ok := e.sessionDirs[sessionID]
	e.mu.Unlock()
	if !ok {
		dir = e.Project
	}
	return filepath.Join(e.ClaudeDir, "projects", sanitizePath(dir), sessionID+".jsonl")
}

// sanitizePath names a project folder the way Claude Code does: every
// character that is not an ASCII letter or digit becomes '-'.
func sanitizePath(p string) string {
	b := []byte(p)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// TranscriptLine is the part of a transcript line the tests look at.
type TranscriptLine struct {
	Type          string          `json:"type"`
	Subtype       string          `json:"subtype"`
	HookErrors    json.RawMessage `json:"hookErrors"`
	HasOutput     *bool           `json:"hasOutput"`
	HookInfos     json.RawMessage `json:"hookInfos"`
	PreventedCont bool            `json:"preventedContinuation"`
	Level         string          `json:"level"`
	Attachment    json.RawMessage `json:"attachment"`
	Raw           string          `json:"-"`
}

// ReadTranscript parses every line of a session's transcript.
func (e *Env) ReadTranscript(sessionID string) []TranscriptLine {
	e.t.Helper()
	f, err := os.Open(e.TranscriptPath(sessionID))
	if err != nil {
		e.t.Fatalf("open transcript: %v", err)
	}
	defer f.Close()
	var out []TranscriptLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var l TranscriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			e.t.Fatalf("transcript %s: bad line: %v", sessionID, err)
		}
		l.Raw = sc.Text()
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		e.t.Fatalf("read transcript: %v", err)
	}
	return out
}
