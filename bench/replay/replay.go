package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/internal/stophook"
)

// Options of one replay.
type Options struct {
	WorkerEvery    time.Duration // run the worker when the replay's clock crosses a multiple of this (0: only at the start and the end)
	PromptDeadline string        // ENGRAM_PROMPT_HOOK_DEADLINE ("" for engram's default)
	Limit          int           // replay only the first N prompts (0: all)
	Quiet          bool
	Log            io.Writer
}

// Replayer drives the real binaries through a corpus.
type Replayer struct {
	opt     Options
	bins    benchkit.Bins
	home    string // the simulated user's HOME
	claude  string // $HOME/.claude
	engram  string // $HOME/.claude-memory
	fsRoot  string // the original cwds are recreated under it
	env     []string
	cwdMap  map[string]string
	paths   map[*Session]string // transcript path of each session
	written map[*Session]bool

	injections *json.Encoder
	rep        *Report
}

// NewReplayer prepares a HOME under work and maps every session's cwd to a
// directory under work/fs (a git repository at the top-most of them).
func NewReplayer(work string, bins benchkit.Bins, sessions []*Session, injections io.Writer, opt Options) (*Replayer, error) {
	r := &Replayer{opt: opt, bins: bins, home: filepath.Join(work, "home"), fsRoot: filepath.Join(work, "fs"),
		cwdMap: map[string]string{}, paths: map[*Session]string{}, written: map[*Session]bool{}, rep: &Report{}}
	if opt.Log == nil {
		r.opt.Log = io.Discard
	}
	r.claude = filepath.Join(r.home, ".claude")
	r.engram = filepath.Join(r.home, ".claude-memory")
	for _, d := range []string{r.claude, r.fsRoot} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	r.env = benchkit.ChildEnv(r.home, opt.PromptDeadline)
	if injections != nil {
		r.injections = json.NewEncoder(injections)
		r.injections.SetEscapeHTML(false)
	}
	var cwds []string
	for _, s := range sessions {
		s.Cwd = cmp.Or(s.Cwd, "/unknown-project")
		if !slices.Contains(cwds, s.Cwd) {
			cwds = append(cwds, s.Cwd)
		}
	}
	roots, err := r.mapCwds(cwds)
	if err != nil {
		return nil, err
	}
	r.rep.Projects = roots
	for _, s := range sessions {
		cwd := r.cwdMap[s.Cwd]
		dir := filepath.Join(r.claude, "projects", benchkit.Sanitize(cwd))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		r.paths[s] = filepath.Join(dir, s.ID+".jsonl")
	}
	return r, nil
}

// mapCwds recreates each original cwd under fsRoot; the top-most ones (no
// other cwd above them) become git repositories, which is all engram needs
// to name the project (gitroot: the nearest directory holding .git).
func (r *Replayer) mapCwds(cwds []string) (map[string]string, error) {
	roots := map[string]string{}
	for _, c := range cwds {
		mapped := filepath.Join(r.fsRoot, filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(c), "/")))
		if vol := filepath.VolumeName(c); vol != "" { // a Windows path
			mapped = filepath.Join(r.fsRoot, strings.Trim(strings.ReplaceAll(c, ":", ""), `\/`))
		}
		r.cwdMap[c] = mapped
		if err := os.MkdirAll(mapped, 0o755); err != nil {
			return nil, err
		}
	}
	for _, c := range cwds {
		top := true
		for _, o := range cwds {
			if o != c && strings.HasPrefix(c, strings.TrimSuffix(o, "/")+"/") {
				top = false
			}
		}
		if !top {
			continue
		}
		m := r.cwdMap[c]
		roots[c] = m
		if _, err := exec.LookPath("git"); err == nil {
			if out, err := exec.Command("git", "init", "-q", m).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("git init %s: %v: %s", m, err, out)
			}
		} else if err := os.MkdirAll(filepath.Join(m, ".git"), 0o755); err != nil {
			return nil, err
		}
	}
	return roots, nil
}

func (r *Replayer) logf(format string, args ...any) {
	if !r.opt.Quiet {
		fmt.Fprintf(r.opt.Log, format+"\n", args...)
	}
}

// Run replays the turns in order: the worker's first cycle (as the
// installer runs it), then per prompt the prompt hook, the turn's lines
// and the Stop hook, with a worker cycle whenever the prompts' clock
// crosses a multiple of WorkerEvery, and a last cycle at the end.
func (r *Replayer) Run(ctx context.Context, turns []*Turn) (*Report, error) {
	rep := r.rep
	start := time.Now()
	if r.opt.Limit > 0 && len(turns) > r.opt.Limit {
		turns = turns[:r.opt.Limit]
	}
	sessions := map[*Session]bool{}
	for _, t := range turns {
		sessions[t.Session] = true
	}
	rep.Sessions, rep.Prompts = len(sessions), len(turns)
	if len(turns) > 0 {
		rep.From, rep.To = turns[0].At, turns[len(turns)-1].At
	}
	var clock time.Time
	if len(turns) > 0 {
		clock = turns[0].At
	}
	r.worker(ctx, "first cycle (installer)", clock)
	var tokens []float64
	for i, t := range turns {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if r.opt.WorkerEvery > 0 && !t.At.IsZero() && !clock.IsZero() &&
			t.At.Truncate(r.opt.WorkerEvery).After(clock.Truncate(r.opt.WorkerEvery)) {
			r.worker(ctx, "clock crossed "+t.At.Truncate(r.opt.WorkerEvery).UTC().Format(time.RFC3339), t.At)
		}
		if !t.At.IsZero() {
			clock = t.At
		}
		inj := r.prompt(ctx, i, t)
		tokens = append(tokens, inj.Tokens)
		if err := r.write(t, inj.Context); err != nil {
			return rep, err
		}
		r.stop(ctx, t)
		if (i+1)%100 == 0 {
			r.logf("%d/%d prompts (%s), %d injected", i+1, len(turns), t.At.UTC().Format("2006-01-02"), rep.Injection.Injected)
		}
	}
	r.worker(ctx, "end", clock)
	rep.Injection.summarise(tokens)
	r.collect(ctx)
	rep.WallSeconds = time.Since(start).Seconds()
	return rep, nil
}

// Injection is one prompt the hook answered with context.
type Injection struct {
	N            int       `json:"n"` // the prompt's place in the replay (1-based)
	Time         time.Time `json:"time"`
	Session      string    `json:"session"`
	Turn         int       `json:"turn"` // within the session (0-based)
	Cwd          string    `json:"cwd"`  // the original cwd
	Prompt       string    `json:"prompt"`
	Context      string    `json:"injected"`
	Bites        []string  `json:"bites"`
	Bytes        int       `json:"bytes"`
	Tokens       float64   `json:"tokens"`
	HookMs       float64   `json:"hook_ms"`
	DeadlineMiss bool      `json:"deadline_miss,omitempty"`
}

// prompt runs the UserPromptSubmit hook as Claude Code does, before the
// turn is in the transcript.
func (r *Replayer) prompt(ctx context.Context, n int, t *Turn) Injection {
	s := t.Session
	cwd := r.cwdMap[s.Cwd]
	in, _ := json.Marshal(map[string]any{
		"session_id": s.ID, "transcript_path": r.paths[s], "cwd": cwd,
		"prompt_id": cmp.Or(t.PromptID, benchkit.NewUUID()), "permission_mode": "default",
		"hook_event_name": "UserPromptSubmit", "prompt": t.Prompt,
	})
	logPath := filepath.Join(r.engram, "logs", "hook-userprompt.log")
	before := benchkit.FileSize(logPath)
	p := benchkit.Run(ctx, r.env, cwd, in, r.bins.Prompt)
	inj := Injection{N: n + 1, Time: t.At, Session: s.ID, Turn: t.Index, Cwd: s.Cwd, Prompt: t.Prompt, HookMs: benchkit.Ms(p.Wall)}
	r.rep.Hooks.PromptMs = append(r.rep.Hooks.PromptMs, inj.HookMs)
	if benchkit.LogHas(logPath, before, "deadline of") {
		inj.DeadlineMiss = true
		r.rep.Hooks.PromptDeadlineMisses++
	}
	switch {
	case p.Err != nil:
		r.rep.Hooks.problem("prompt hook", fmt.Sprintf("%s turn %d: %v: %s", s.ID, t.Index, p.Err, clip(string(p.Stderr), 2000)))
	case len(p.Stderr) > 0:
		r.rep.Hooks.problem("prompt hook", fmt.Sprintf("%s turn %d: stderr: %s", s.ID, t.Index, clip(string(p.Stderr), 2000)))
	}
	if out := bytes.TrimSpace(p.Stdout); len(out) > 0 {
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &o); err != nil {
			r.rep.Hooks.problem("prompt hook", fmt.Sprintf("%s turn %d: stdout is not one JSON answer: %s", s.ID, t.Index, clip(string(out), 300)))
		} else {
			inj.Context = o.HookSpecificOutput.AdditionalContext
		}
	}
	if inj.Context == "" {
		return inj
	}
	inj.Bites = benchkit.Bites(inj.Context)
	inj.Bytes, inj.Tokens = len(inj.Context), benchkit.Tokens(inj.Context)
	r.rep.Injection.Injected++
	r.rep.Injection.Bites += len(inj.Bites)
	if r.injections != nil {
		if err := r.injections.Encode(inj); err != nil {
			r.rep.Hooks.problem("injections file", err.Error())
		}
	}
	return inj
}

// write appends the turn's lines to the session's transcript, each line's
// cwd field pointing at the mapped directory; when the prompt hook
// injected, the client's record of it (an attachment of type
// hook_additional_context, as 2.1.330 writes it) follows the prompt line.
func (r *Replayer) write(t *Turn, injected string) error {
	s := t.Session
	from, to := []byte(`"cwd":`+jsonString(s.Cwd)), []byte(`"cwd":`+jsonString(r.cwdMap[s.Cwd]))
	var buf bytes.Buffer
	for i := t.From; i < t.To; i++ {
		buf.Write(bytes.ReplaceAll(s.Lines[i], from, to))
		buf.WriteByte('\n')
		if i == t.PromptLine && injected != "" {
			b, _ := json.Marshal(map[string]any{
				"parentUuid": nil, "isSidechain": false, "type": "attachment",
				"attachment": map[string]any{"type": "hook_additional_context", "content": []string{injected},
					"hookName": "UserPromptSubmit", "toolUseID": "hook-" + benchkit.NewUUID(), "hookEvent": "UserPromptSubmit"},
				"uuid": benchkit.NewUUID(), "timestamp": t.At.UTC().Format("2006-01-02T15:04:05.000Z"),
				"rendered": []any{map[string]any{"content": "<system-reminder>\nUserPromptSubmit hook additional context: " +
					injected + "\n</system-reminder>"}},
				"renderedRole": "system", "userType": "external", "entrypoint": "cli", "cwd": r.cwdMap[s.Cwd], "sessionId": s.ID,
			})
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	f, err := os.OpenFile(r.paths[s], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	r.written[s] = true
	return err
}

// stop runs the Stop hook for the turn just written, with the Stop input of
// 2.1.330.
func (r *Replayer) stop(ctx context.Context, t *Turn) {
	s := t.Session
	in, _ := json.Marshal(map[string]any{
		"session_id": s.ID, "transcript_path": r.paths[s], "cwd": r.cwdMap[s.Cwd],
		"prompt_id": cmp.Or(t.PromptID, benchkit.NewUUID()), "permission_mode": "default",
		"effort": map[string]any{"level": "medium"}, "hook_event_name": "Stop", "stop_hook_active": false,
		"last_assistant_message": t.Reply, "background_tasks": []any{}, "session_crons": []any{},
	})
	p := benchkit.Run(ctx, r.env, r.cwdMap[s.Cwd], in, r.bins.Stop)
	r.rep.Hooks.Stops++
	r.rep.Hooks.StopMs = append(r.rep.Hooks.StopMs, benchkit.Ms(p.Wall))
	switch {
	case p.Err != nil:
		r.rep.Hooks.problem("stop hook", fmt.Sprintf("%s turn %d: %v: %s", s.ID, t.Index, p.Err, clip(string(p.Stderr), 2000)))
	case len(p.Stdout)+len(p.Stderr) > 0:
		r.rep.Hooks.problem("stop hook", fmt.Sprintf("%s turn %d: output: %s", s.ID, t.Index, clip(string(p.Stdout)+string(p.Stderr), 2000)))
	}
}

// WorkerRun is one engram-worker run.
type WorkerRun struct {
	Reason   string    `json:"reason"`
	Clock    time.Time `json:"clock"` // the replay's clock when it ran
	ExitCode int       `json:"exit_code"`
	Ms       float64   `json:"ms"`
	Summary  string    `json:"summary,omitempty"` // its stdout
	Stderr   string    `json:"stderr,omitempty"`
	Error    string    `json:"error,omitempty"` // last_run.error of status --json after it
}

func (r *Replayer) worker(ctx context.Context, reason string, clock time.Time) {
	p := benchkit.Run(ctx, r.env, r.home, nil, r.bins.Worker, "run")
	w := WorkerRun{Reason: reason, Clock: clock, Ms: benchkit.Ms(p.Wall), Summary: strings.TrimSpace(string(p.Stdout)),
		Stderr: clip(strings.TrimSpace(string(p.Stderr)), 20000)}
	var ee *exec.ExitError
	if errors.As(p.Err, &ee) {
		w.ExitCode = ee.ExitCode()
	} else if p.Err != nil {
		w.ExitCode = -1
		w.Stderr = strings.TrimSpace(p.Err.Error() + "\n" + w.Stderr)
	}
	if st, err := r.status(ctx); err == nil {
		var s struct {
			LastRun *struct {
				Error string `json:"error"`
			} `json:"last_run"`
		}
		if json.Unmarshal(st, &s) == nil && s.LastRun != nil {
			w.Error = s.LastRun.Error
		}
	}
	r.rep.Worker.Runs = append(r.rep.Worker.Runs, w)
	if w.ExitCode != 0 {
		r.rep.Worker.Failures++
	}
	r.logf("worker run (%s, clock %s): exit %d, %.1f s%s", reason, clock.UTC().Format(time.RFC3339), w.ExitCode, w.Ms/1000,
		strings.ReplaceAll("\n"+cmp.Or(w.Summary, w.Stderr), "\n", "\n    "))
}

func (r *Replayer) status(ctx context.Context) ([]byte, error) {
	p := benchkit.Run(ctx, r.env, r.home, nil, r.bins.Worker, "status", "--json")
	if p.Err != nil {
		return nil, fmt.Errorf("engram-worker status --json: %v: %s", p.Err, p.Stderr)
	}
	return p.Stdout, nil
}

// collect reads what the replay ended with: status, quarantine, beliefs,
// MEMORY.md files, and the problems the logs recorded.
func (r *Replayer) collect(ctx context.Context) {
	rep := r.rep
	if st, err := r.status(ctx); err != nil {
		rep.Store.Error = err.Error()
	} else {
		rep.Store.fromStatus(st)
	}
	rep.Quarantine = r.quarantine(ctx, rep.Store.quarantine)
	p := benchkit.Run(ctx, r.env, r.home, nil, r.bins.Worker, "beliefs", "--status", "all", "--json")
	if p.Err != nil {
		rep.Beliefs.Error = fmt.Sprintf("engram-worker beliefs --json: %v: %s", p.Err, clip(string(p.Stderr), 2000))
	} else if err := json.Unmarshal(p.Stdout, &rep.Beliefs.All); err != nil {
		rep.Beliefs.Error = "engram-worker beliefs --json: " + err.Error()
	}
	rep.Beliefs.ByStatus = map[string]int{}
	for _, b := range rep.Beliefs.All {
		rep.Beliefs.ByStatus[b.Status]++
	}
	// The Stop hook starts a worker run itself when the worker looks
	// stale; its stamp says whether one did during the replay.
	if fi, err := os.Stat(filepath.Join(r.engram, stophook.StampName)); err == nil {
		rep.Worker.SelfScheduled = fi.ModTime()
	}
	rep.MemoryFiles = r.memoryFiles()
	rep.Logs = scanLogs(filepath.Join(r.engram, "logs"))
	rep.Home = r.home
}

// quarantine asks `engram-worker quarantine list --json`, which older
// engrams lack (then Available is false and the status field, if any, is
// used).
func (r *Replayer) quarantine(ctx context.Context, fromStatus json.RawMessage) Quarantine {
	q := Quarantine{Status: fromStatus}
	p := benchkit.Run(ctx, r.env, r.home, nil, r.bins.Worker, "quarantine", "list", "--json")
	var ee *exec.ExitError
	switch {
	case p.Err == nil:
		q.Available = true
		out := bytes.TrimSpace(p.Stdout)
		q.List = json.RawMessage(out)
		if !json.Valid(out) {
			q.List = nil
			q.Error = "quarantine list --json: not JSON: " + clip(string(out), 500)
		}
		q.Count = countItems(out)
	case errors.As(p.Err, &ee) && ee.ExitCode() == 2:
		first, _, _ := strings.Cut(strings.TrimSpace(string(p.Stderr)), "\n")
		q.Error = "engram-worker has no quarantine list command (" + clip(first, 300) + ")"
	default:
		q.Available = true
		q.Error = fmt.Sprintf("quarantine list --json: %v: %s", p.Err, clip(string(p.Stderr), 2000))
	}
	if !q.Available && len(fromStatus) > 0 {
		q.Count = countItems(fromStatus)
	}
	return q
}

// countItems counts a JSON list, or the list under the first of "items",
// "quarantine", "quarantined", "entries" in an object, or a "count"
// number; -1 when it cannot tell.
func countItems(b []byte) int {
	var list []json.RawMessage
	if json.Unmarshal(b, &list) == nil {
		return len(list)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return -1
	}
	for _, k := range []string{"items", "quarantine", "quarantined", "entries", "captures"} {
		if v, ok := obj[k]; ok && json.Unmarshal(v, &list) == nil {
			return len(list)
		}
	}
	for _, k := range []string{"count", "total"} {
		var n int
		if v, ok := obj[k]; ok && json.Unmarshal(v, &n) == nil {
			return n
		}
	}
	return -1
}

// memoryFiles reads every MEMORY.md the replay's engram may have written
// (the global one, each project's auto-memory file) and the CLAUDE.md and
// AGENTS.md files of the core-memory blocks.
func (r *Replayer) memoryFiles() []MemoryFile {
	var paths []string
	paths = append(paths, filepath.Join(r.engram, "MEMORY.md"), filepath.Join(r.claude, "CLAUDE.md"))
	if m, _ := filepath.Glob(filepath.Join(r.claude, "projects", "*", "memory", "MEMORY.md")); m != nil {
		paths = append(paths, m...)
	}
	roots := make([]string, 0, len(r.rep.Projects))
	for _, m := range r.rep.Projects {
		roots = append(roots, m)
	}
	slices.Sort(roots)
	for _, m := range roots {
		paths = append(paths, filepath.Join(m, "CLAUDE.md"), filepath.Join(m, "AGENTS.md"))
	}
	if m, _ := filepath.Glob(filepath.Join(r.engram, "archive", "*.md")); m != nil {
		paths = append(paths, m...)
	}
	var out []MemoryFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		rel, _ := filepath.Rel(r.home, p)
		if strings.HasPrefix(rel, "..") {
			rel, _ = filepath.Rel(r.fsRoot, p)
			rel = "fs/" + rel
		} else {
			rel = "~/" + rel
		}
		out = append(out, MemoryFile{Path: rel, Lines: bytes.Count(b, []byte("\n")), Bytes: len(b), Content: string(b)})
	}
	return out
}

// scanLogs counts the warnings and errors of engram's logs (JSON lines with
// "level" and "msg"), by file, level and message, with the first example.
func scanLogs(dir string) []LogProblem {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	slices.Sort(files)
	idx := map[string]int{}
	var out []LogProblem
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			var l struct {
				Level string `json:"level"`
				Msg   string `json:"msg"`
			}
			line := sc.Bytes()
			if json.Unmarshal(line, &l) != nil {
				if bytes.Contains(line, []byte("panic")) || bytes.Contains(line, []byte("goroutine ")) {
					l.Level, l.Msg = "RAW", "panic or stack text"
				} else {
					continue
				}
			}
			if l.Level != "WARN" && l.Level != "ERROR" && l.Level != "RAW" {
				continue
			}
			k := filepath.Base(f) + "\x00" + l.Level + "\x00" + l.Msg
			if i, ok := idx[k]; ok {
				out[i].Count++
				continue
			}
			idx[k] = len(out)
			out = append(out, LogProblem{File: filepath.Base(f), Level: l.Level, Msg: l.Msg, Count: 1, Example: clip(string(line), 2000)})
		}
		fh.Close()
	}
	return out
}

// jsonString is s as a JSON string the way Claude Code writes it (no
// escaping of <, > and &).
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// clip keeps the first n bytes of s (backing off to a rune's start).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [%d bytes more]", len(s)-n)
}
