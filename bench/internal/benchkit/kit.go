// Package benchkit is what engram's retrieval benchmarks (bench/locomo,
// bench/prefeval, bench/quality) share: building the binaries under test,
// a HOME per simulated user, Claude Code transcripts in the real format, the
// Stop hook run after each turn, a prompt sent to the prompt hook, and the
// scoring rules (content words, the 60% hit rule, tokens, plain BM25 and
// packing into a character budget).
package benchkit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Bins are the three programs under test.
type Bins struct{ Stop, Prompt, Worker string }

// Build builds the hooks and the worker into dir. Packages are named by
// import path, so this works from any directory inside the module.
func Build(ctx context.Context, dir string) (Bins, error) {
	b := Bins{
		Stop:   filepath.Join(dir, "engram-hook-stop"),
		Prompt: filepath.Join(dir, "engram-hook-userprompt"),
		Worker: filepath.Join(dir, "engram-worker"),
	}
	for out, pkg := range map[string]string{b.Stop: "hook-stop", b.Prompt: "hook-userprompt", b.Worker: "worker"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/engram-memory/engram/cmd/"+pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build ./cmd/%s: %v\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// BuildInstalled builds the hooks and the worker into dir as
// scripts/install.sh does: static (CGO_ENABLED=0: a hook starts faster),
// -trimpath -ldflags "-s -w". The benches that measure engram as a
// user runs it (bench/replay, bench/correct) build with it.
func BuildInstalled(ctx context.Context, dir string) (Bins, error) {
	b := Bins{
		Stop:   filepath.Join(dir, "engram-hook-stop"),
		Prompt: filepath.Join(dir, "engram-hook-userprompt"),
		Worker: filepath.Join(dir, "engram-worker"),
	}
	env := append(os.Environ(), "CGO_ENABLED=0")
	for out, pkg := range map[string]string{b.Stop: "hook-stop", b.Prompt: "hook-userprompt", b.Worker: "worker"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out,
			"github.com/engram-memory/engram/cmd/"+pkg)
		cmd.Env = env
		if msg, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build ./cmd/%s: %v\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// ModuleRoot is the directory of the main module's go.mod ("" when unknown).
func ModuleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return ""
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return ""
	}
	return filepath.Dir(gomod)
}

// OutsideRepo refuses a directory inside the repository: what the
// benchmarks keep holds the data sets' text, whose licence forbids copying
// it into the repository.
func OutsideRepo(flagName, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if root := ModuleRoot(); root != "" && (abs == root || strings.HasPrefix(abs, root+string(filepath.Separator))) {
		return "", fmt.Errorf("%s %s is inside the repository (%s): the kept transcripts hold the data set's text, "+
			"which must not be copied into the repository; choose a directory outside it", flagName, dir, root)
	}
	return abs, nil
}

// FreshDir is OutsideRepo for a directory a run writes its homes into: it
// must not exist yet or be empty. Homes left by an earlier run would mix
// that run's stores into this one's figures, and writing over a model file
// that an earlier home links to faults every process mapping it.
func FreshDir(flagName, dir string) (string, error) {
	abs, err := OutsideRepo(flagName, dir)
	if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return abs, nil
	case err != nil:
		return "", fmt.Errorf("%s %s: %w", flagName, dir, err)
	case len(ents) > 0:
		return "", fmt.Errorf("%s %s is not empty (it holds %s, from an earlier run?): choose a new directory", flagName, dir, ents[0].Name())
	}
	return abs, nil
}

// NewUUID returns a random version 4 UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// Sanitize is Claude Code's folder name for a directory under projects/.
func Sanitize(dir string) string { return nonAlnum.ReplaceAllString(dir, "-") }

// PassedPrefix names the variables of the harness's own environment that
// reach engram: the embedder's configuration (ENGRAM_EMBED_MODEL,
// ENGRAM_EMBED_MODEL_DIR, ...), so that one command measures engram with and
// without a model. Every other ENGRAM_* variable, and OPENAI_API_KEY, is
// removed: the LLM stays off (offline mode) and the settings are engram's
// defaults.
const PassedPrefix = "ENGRAM_EMBED_"

// PolicyVar is the other variable that reaches engram: a recall policy
// file (the fitted gates and the recall settings), so that a sweep of the
// gate or the ranking is a file and no change of code.
const PolicyVar = "ENGRAM_RECALL_POLICY"

// passed reports whether the variable k reaches engram.
func passed(k string) bool { return strings.HasPrefix(k, PassedPrefix) || k == PolicyVar }

// Passed lists the variables of this process's environment that ChildEnv
// passes on (ENGRAM_EMBED_*, ENGRAM_RECALL_POLICY), as NAME=value, sorted.
func Passed() []string {
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); passed(k) {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// ChildEnv is the environment of every engram process of one simulated
// user: the harness's own, minus anything that configures engram or an LLM
// (but the embedder's ENGRAM_EMBED_* variables and ENGRAM_RECALL_POLICY),
// plus a HOME of its own
// (ENGRAM_HOME=$HOME/.claude-memory, CLAUDE_CONFIG_DIR=$HOME/.claude).
// promptDeadline sets ENGRAM_PROMPT_HOOK_DEADLINE unless empty.
func ChildEnv(home, promptDeadline string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if passed(k) {
			env = append(env, kv)
			continue
		}
		if strings.HasPrefix(k, "ENGRAM_") || k == "OPENAI_API_KEY" || k == "HOME" || k == "CLAUDE_CONFIG_DIR" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "ENGRAM_HOME="+filepath.Join(home, ".claude-memory"),
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"))
	if promptDeadline != "" {
		env = append(env, "ENGRAM_PROMPT_HOOK_DEADLINE="+promptDeadline)
	}
	return env
}

// Proc is the outcome of running one process.
type Proc struct {
	Stdout, Stderr []byte
	Wall           time.Duration
	Err            error
}

// Run runs bin with args in dir, with env and stdin (nil for none), for at
// most ten minutes.
func Run(ctx context.Context, env []string, dir string, stdin []byte, bin string, args ...string) Proc {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	return Proc{Stdout: out.Bytes(), Stderr: errb.Bytes(), Wall: time.Since(start), Err: err}
}

// Ms is a duration in milliseconds.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Transcript appends Claude Code transcript lines (the format of Claude
// Code 2.1.330) to one session's file.
type Transcript struct {
	Path, SessionID, Cwd string
	parent               string
	prompt               string // the promptId of the latest Prompt
	msgs                 int
}

// NewTranscript starts the transcript of a new session in project (its
// cwd) under claudeDir/projects/<sanitized project>/<session>.jsonl.
func NewTranscript(claudeDir, project string) (*Transcript, error) {
	dir := filepath.Join(claudeDir, "projects", Sanitize(project))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	sid := NewUUID()
	return &Transcript{Path: filepath.Join(dir, sid+".jsonl"), SessionID: sid, Cwd: project}, nil
}

func (t *Transcript) append(line map[string]any) error {
	line["parentUuid"] = nil
	if t.parent != "" {
		line["parentUuid"] = t.parent
	}
	id := NewUUID()
	line["uuid"] = id
	line["isSidechain"] = false
	line["userType"] = "external"
	line["entrypoint"] = "cli"
	line["cwd"] = t.Cwd
	line["sessionId"] = t.SessionID
	line["version"] = "2.1.330"
	line["gitBranch"] = "main"
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(t.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	t.parent = id
	return err
}

// User appends the user's prompt.
func (t *Transcript) User(text string, at time.Time) error {
	return t.append(map[string]any{
		"type": "user", "promptId": NewUUID(), "message": map[string]any{"role": "user", "content": text},
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"), "permissionMode": "default",
	})
}

// Assistant appends the assistant's text reply.
func (t *Transcript) Assistant(text string, at time.Time) error {
	t.msgs++
	return t.append(map[string]any{
		"type": "assistant",
		"message": map[string]any{
			"id": fmt.Sprintf("msg_%024d", t.msgs), "type": "message", "role": "assistant", "model": "claude-opus-5-5",
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		},
		"requestId": "req_" + strings.ReplaceAll(NewUUID(), "-", ""),
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
}

// Prompt appends the user's prompt and returns its promptId, which the
// turn's tool results carry too and the Stop input names (StopPrompt).
func (t *Transcript) Prompt(text string, at time.Time) (string, error) {
	id := NewUUID()
	t.prompt = id
	return id, t.append(map[string]any{
		"type": "user", "promptId": id, "message": map[string]any{"role": "user", "content": text},
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"), "permissionMode": "default",
	})
}

// ToolCall appends an assistant line calling tool name with input, and the
// user line with its result, as Claude Code 2.1.330 writes them (the
// result line carries the prompt's promptId, toolUseResult and
// sourceToolAssistantUUID).
func (t *Transcript) ToolCall(name string, input map[string]any, result string, at time.Time) error {
	t.msgs++
	id := fmt.Sprintf("toolu_%020d", t.msgs)
	err := t.append(map[string]any{
		"type": "assistant",
		"message": map[string]any{
			"id": fmt.Sprintf("msg_%024d", t.msgs), "type": "message", "role": "assistant", "model": "claude-opus-5-5",
			"content":     []any{map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}},
			"stop_reason": "tool_use", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		},
		"requestId": "req_" + strings.ReplaceAll(NewUUID(), "-", ""),
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
	if err != nil {
		return err
	}
	line := map[string]any{
		"type": "user",
		"message": map[string]any{"role": "user", "content": []any{map[string]any{
			"tool_use_id": id, "type": "tool_result", "content": result, "is_error": false}}},
		"timestamp":               at.Add(100 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z"),
		"toolUseResult":           map[string]any{"stdout": result, "stderr": "", "interrupted": false, "isImage": false},
		"sourceToolAssistantUUID": t.parent,
	}
	if t.prompt != "" {
		line["promptId"] = t.prompt
	}
	return t.append(line)
}

// StopPrompt runs the Stop hook for the turn of the prompt promptID (as
// returned by Prompt), as Claude Code does; ok as for Stop.
func (t *Transcript) StopPrompt(ctx context.Context, env []string, stopBin, promptID, reply string) (p Proc, ok bool) {
	in, _ := json.Marshal(map[string]any{
		"session_id": t.SessionID, "transcript_path": t.Path, "cwd": t.Cwd, "prompt_id": promptID,
		"permission_mode": "default", "effort": map[string]any{"level": "medium"},
		"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": reply,
		"background_tasks": []any{}, "session_crons": []any{},
	})
	p = Run(ctx, env, t.Cwd, in, stopBin)
	return p, p.Err == nil && len(p.Stdout) == 0 && len(p.Stderr) == 0
}

// Stop runs the Stop hook for the turn just written (reply is the
// assistant's last message). ok is false when the hook broke its contract:
// a non-zero exit or any output.
func (t *Transcript) Stop(ctx context.Context, env []string, stopBin, reply string) (p Proc, ok bool) {
	in, _ := json.Marshal(map[string]any{
		"session_id": t.SessionID, "transcript_path": t.Path, "cwd": t.Cwd, "prompt_id": NewUUID(),
		"permission_mode": "default", "effort": map[string]any{"level": "medium"},
		"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": reply,
		"background_tasks": []any{}, "session_crons": []any{},
	})
	p = Run(ctx, env, t.Cwd, in, stopBin)
	return p, p.Err == nil && len(p.Stdout) == 0 && len(p.Stderr) == 0
}

// Answer is what the prompt hook did with one prompt.
type Answer struct {
	Context      string // the additionalContext ("" for none)
	SessionID    string
	Wall         time.Duration
	DeadlineMiss bool   // the hook logged that it gave up at its deadline
	Problem      string // a broken contract ("" for none)
}

// Ask sends prompt to the prompt hook as the first prompt of a fresh
// session in project (so nothing is held back as already injected).
func Ask(ctx context.Context, env []string, promptBin, claudeDir, engramHome, project, prompt string) Answer {
	sid := NewUUID()
	in, _ := json.Marshal(map[string]any{
		"session_id": sid, "transcript_path": filepath.Join(claudeDir, "projects", Sanitize(project), sid+".jsonl"),
		"cwd": project, "prompt_id": NewUUID(), "permission_mode": "default",
		"hook_event_name": "UserPromptSubmit", "prompt": prompt,
	})
	logPath := filepath.Join(engramHome, "logs", "hook-userprompt.log")
	logBefore := FileSize(logPath)
	r := Run(ctx, env, project, in, promptBin)
	a := Answer{SessionID: sid, Wall: r.Wall, DeadlineMiss: LogHas(logPath, logBefore, "deadline of")}
	switch {
	case r.Err != nil:
		a.Problem = "exit: " + r.Err.Error()
	case len(r.Stderr) != 0:
		a.Problem = "stderr output"
	}
	if len(bytes.TrimSpace(r.Stdout)) > 0 {
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(r.Stdout, &o); err != nil {
			a.Problem = "stdout is not one JSON answer"
		} else {
			a.Context = o.HookSpecificOutput.AdditionalContext
		}
	}
	return a
}

// Bites splits an injected context into its bites: the lines that start
// with "[Memory " or "[Belief " (the exchanges shown next to a memory are
// part of its line).
func Bites(context string) []string {
	var out []string
	for _, line := range strings.Split(context, "\n") {
		if strings.HasPrefix(line, "[Memory ") || strings.HasPrefix(line, "[Belief ") {
			out = append(out, line)
		}
	}
	return out
}

// FileSize is the size of the file at p (0 when it cannot be read).
func FileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// LogHas reports whether what was appended to the log at p since it held
// from bytes holds needle (a hook's "deadline of" warning).
func LogHas(p string, from int64, needle string) bool {
	to := FileSize(p)
	if to <= from {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, to-from)
	if _, err := f.ReadAt(b, from); err != nil {
		return false
	}
	return bytes.Contains(b, []byte(needle))
}

// ReadJSONL reads the JSON lines of path (blank lines skipped); a line
// that does not parse is an error naming the file and the line.
func ReadJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var it T
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, it)
	}
	return out, sc.Err()
}

// WriteJSONL writes items as JSON lines to path (0600, replaced).
func WriteJSONL[T any](path string, items []T) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
