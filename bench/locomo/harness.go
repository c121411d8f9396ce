package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// options configure one run of the harness.
type options struct {
	Data string // LoCoMo-format file
	Out  string // JSON report; "" for none
	Keep string // keep each conversation's HOME under this directory; "" for a temp dir removed at the end
	// Reuse asks the questions again on the conversations kept under this
	// directory by an earlier run with Keep: no capture, no ingest; one
	// worker cycle rewrites the recollection files with the engram under
	// test. For comparing ranking changes on the same store.
	Reuse string
	Limit int // conversations to run; 0 for all
	// MaxQuestions bounds the questions asked per conversation; 0 for all.
	MaxQuestions int
	// Captions appends the caption of a shared photo to the turn's text.
	Captions bool
	// NoSpeakerPrefix writes turns without their "Speaker: " prefix (a
	// sensitivity check: the prefix is part of the text the extractor sees).
	NoSpeakerPrefix bool
	// PromptDeadline sets ENGRAM_PROMPT_HOOK_DEADLINE; "" keeps engram's default.
	PromptDeadline string
	// Diagnose classifies each missed evidence turn (export of the store,
	// and `engram-worker recall` for the ranking of those that were in a
	// summary).
	Diagnose bool
	// ShowMisses prints up to this many missed evidence turns per miss
	// class, with their text, to Examples (a terminal: never to a file in
	// the repository, the data's licence forbids copying it there).
	ShowMisses int
	Log        io.Writer // progress; nil for none
	Examples   io.Writer // -show-misses output; nil for Log
}

// bins are the three programs under test.
type bins struct{ stop, prompt, worker string }

// buildBinaries builds the hooks and the worker into dir. Packages are named
// by import path, so this works from any directory inside the module.
func buildBinaries(ctx context.Context, dir string) (bins, error) {
	b := bins{
		stop:   filepath.Join(dir, "engram-hook-stop"),
		prompt: filepath.Join(dir, "engram-hook-userprompt"),
		worker: filepath.Join(dir, "engram-worker"),
	}
	for out, pkg := range map[string]string{b.stop: "hook-stop", b.prompt: "hook-userprompt", b.worker: "worker"} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/engram-memory/engram/cmd/"+pkg)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return b, fmt.Errorf("go build ./cmd/%s: %v\n%s", pkg, err, msg)
		}
	}
	return b, nil
}

// moduleRoot is the directory of the main module's go.mod ("" when unknown).
func moduleRoot() string {
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

// newUUID returns a random version 4 UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// sanitize is Claude Code's folder name for a directory under projects/.
func sanitize(dir string) string { return nonAlnum.ReplaceAllString(dir, "-") }

// childEnv is the environment of every engram process of one conversation:
// the harness's own, minus anything that configures engram or an LLM
// (offline mode), plus a HOME of its own.
func childEnv(home, promptDeadline string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
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

// procResult is the outcome of running one process.
type procResult struct {
	stdout, stderr []byte
	wall           time.Duration
	err            error
}

func runProc(ctx context.Context, env []string, dir string, stdin []byte, bin string, args ...string) procResult {
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
	return procResult{stdout: out.Bytes(), stderr: errb.Bytes(), wall: time.Since(start), err: err}
}

// conversation is the state of one sample's run.
type conversation struct {
	opt     options
	bins    bins
	sample  Sample
	home    string // HOME
	project string // the session's cwd, a git repository
	claude  string // CLAUDE_CONFIG_DIR
	engram  string // ENGRAM_HOME
	env     []string
	// turnText maps a dia_id to the turn's text as written, without the
	// speaker prefix (what the match rules compare).
	turnText map[string]string
	// photo marks turns that share a photo (LoCoMo gives a caption): what
	// they say may be in the picture, which a transcript does not carry.
	photo map[string]bool

	capture  captureStats
	episodes []exportedEpisode
	turnDiag map[string]turnDiag
	results  []questionResult
}

// captureStats describe the capture side of a conversation.
type captureStats struct {
	Sessions      int       `json:"sessions"`
	Turns         int       `json:"dialog_turns"`
	StopRuns      int       `json:"stop_hook_runs"`
	StopMs        []float64 `json:"-"`
	StopProblems  int       `json:"stop_hook_contract_violations"` // non-zero exit or any output
	UndatedSess   int       `json:"sessions_without_date"`
	SpoolFiles    int       `json:"spool_files_before_worker"`
	WorkerMs      float64   `json:"worker_run_ms"`
	WorkerSummary string    `json:"worker_summary"`
	Ingest        struct {
		Captures int `json:"captures"`
		Episodes int `json:"episodes"`
		Merged   int `json:"merged"`
		Skipped  int `json:"skipped"`
		Failed   int `json:"failed"`
	} `json:"ingest"`
	Episodes int `json:"episodes_exported"`
}

// questionResult is the outcome of one question; it carries no text of
// the data set, only ids and figures.
type questionResult struct {
	Conversation string   `json:"conversation"`
	Index        int      `json:"index"`
	Category     int      `json:"category"`
	Evidence     []string `json:"evidence"`
	// Skipped counts evidence entries that name no turn of the conversation.
	Skipped  int      `json:"evidence_skipped,omitempty"`
	Repaired int      `json:"evidence_repaired,omitempty"`
	Strict   []string `json:"reached_strict"`
	Lenient  []string `json:"reached_lenient"`
	// Episode lists the evidence turns whose episode (the capture of the
	// turn's exchange) was injected, as a bite or shown next to one,
	// whatever the bite held (-diagnose).
	Episode []string `json:"reached_episode,omitempty"`
	// Photo lists the evidence turns that share a photo.
	Photo        []string          `json:"evidence_with_photo,omitempty"`
	Bytes        int               `json:"injected_bytes"`
	Words        int               `json:"injected_words"`
	Bites        int               `json:"bites"`
	HookMs       float64           `json:"hook_ms"`
	DeadlineMiss bool              `json:"deadline_miss,omitempty"`
	HookProblem  string            `json:"hook_problem,omitempty"`
	Misses       map[string]string `json:"misses,omitempty"` // dia_id -> miss class (with -diagnose)

	injected  string // the additionalContext, for -show-misses only
	sessionID string // the question's session (its injected ids are recorded under it)
}

// run executes the whole benchmark.
func run(ctx context.Context, opt options) (*Report, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", a...)
		}
	}
	samples, err := loadData(opt.Data)
	if err != nil {
		return nil, err
	}
	if opt.Limit > 0 && len(samples) > opt.Limit {
		samples = samples[:opt.Limit]
	}
	if len(samples) == 0 {
		return nil, errors.New("no conversation in " + opt.Data)
	}
	tmp, err := os.MkdirTemp("", "engram-locomo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if opt.Reuse != "" && opt.Keep != "" {
		return nil, errors.New("-reuse and -keep exclude each other")
	}
	if opt.Reuse != "" {
		abs, err := filepath.Abs(opt.Reuse)
		if err != nil {
			return nil, err
		}
		work = abs
	}
	if opt.Keep != "" {
		abs, err := filepath.Abs(opt.Keep)
		if err != nil {
			return nil, err
		}
		if root := moduleRoot(); root != "" && (abs == root || strings.HasPrefix(abs, root+string(filepath.Separator))) {
			return nil, fmt.Errorf("-keep %s is inside the repository (%s): the kept transcripts hold the data set's text, "+
				"which must not be copied into the repository; choose a directory outside it", opt.Keep, root)
		}
		work = abs
	}
	logf("building engram-hook-stop, engram-hook-userprompt and engram-worker ...")
	b, err := buildBinaries(ctx, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	rep := newReport(opt)
	start := time.Now()
	for _, s := range samples {
		c := &conversation{opt: opt, bins: b, sample: s, home: filepath.Join(work, sanitize(s.ID))}
		if err := c.run(ctx, logf); err != nil {
			return nil, fmt.Errorf("%s: %w", s.ID, err)
		}
		rep.add(c)
		if opt.ShowMisses > 0 {
			w := opt.Examples
			if w == nil {
				w = opt.Log
			}
			if w != nil {
				c.showMisses(w, opt.ShowMisses)
			}
		}
	}
	rep.finish(time.Since(start))
	if opt.Keep != "" {
		logf("kept the conversations' homes under %s", work)
	}
	return rep, nil
}

func (c *conversation) run(ctx context.Context, logf func(string, ...any)) error {
	_, err := os.Lstat(c.home)
	switch {
	case c.opt.Reuse == "" && err == nil:
		return fmt.Errorf("%s already exists (a kept earlier run?): every conversation needs a fresh HOME", c.home)
	case c.opt.Reuse != "" && err != nil:
		return fmt.Errorf("-reuse: %w", err)
	}
	if err := os.MkdirAll(c.home, 0o700); err != nil {
		return err
	}
	// The project: a git repository (a .git directory is what engram's
	// git-root lookup needs).
	c.project = filepath.Join(c.home, "src", sanitize(c.sample.ID))
	if err := os.MkdirAll(filepath.Join(c.project, ".git"), 0o755); err != nil {
		return err
	}
	c.claude = filepath.Join(c.home, ".claude")
	c.engram = filepath.Join(c.home, ".claude-memory")
	c.env = childEnv(c.home, c.opt.PromptDeadline)
	c.turnText = map[string]string{}
	c.photo = map[string]bool{}

	if c.opt.Reuse != "" {
		// The turns as they were written, without writing them again.
		for _, ses := range c.sample.Sessions {
			if len(ses.Turns) > 0 {
				c.capture.Sessions++
			}
			for _, t := range ses.Turns {
				c.record(t)
			}
		}
		// Injected-ids files of the earlier run's questions: their sessions
		// are never asked again, but keep the directory small.
		old, _ := filepath.Glob(filepath.Join(c.engram, "recall", "injected-*.txt"))
		for _, f := range old {
			os.Remove(f)
		}
	} else {
		// The installer's first cycle: it creates the store, so that the
		// Stop hook stores its captures instead of spooling them.
		if r := runProc(ctx, c.env, c.project, nil, c.bins.worker, "run", "--quiet"); r.err != nil {
			return fmt.Errorf("engram-worker run (first cycle): %v: %s", r.err, r.stderr)
		}
		if err := c.writeSessions(ctx); err != nil {
			return err
		}
	}
	spooled, _ := filepath.Glob(filepath.Join(c.engram, "spool", "*.json"))
	c.capture.SpoolFiles = len(spooled)
	r := runProc(ctx, c.env, c.project, nil, c.bins.worker, "run")
	if r.err != nil {
		return fmt.Errorf("engram-worker run: %v: %s", r.err, r.stderr)
	}
	c.capture.WorkerMs = ms(r.wall)
	c.capture.WorkerSummary = strings.TrimSpace(string(r.stdout))
	parseWorkerSummary(c.capture.WorkerSummary, &c.capture)
	if c.opt.Diagnose {
		if err := c.export(ctx); err != nil {
			return err
		}
		c.diagnoseTurns()
	}
	logf("%s: %d sessions, %d turns, %d Stop runs (mean %.0f ms), worker %.1f s: %s",
		c.sample.ID, c.capture.Sessions, c.capture.Turns, c.capture.StopRuns, mean(c.capture.StopMs),
		c.capture.WorkerMs/1000, c.capture.WorkerSummary)
	qs := c.sample.QA
	if c.opt.MaxQuestions > 0 && len(qs) > c.opt.MaxQuestions {
		qs = qs[:c.opt.MaxQuestions]
	}
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return err
		}
		c.results = append(c.results, c.ask(ctx, i, q))
	}
	logf("%s: %d questions asked", c.sample.ID, len(qs))
	return nil
}

var workerLine = regexp.MustCompile(`ingest: (\d+) captures -> (\d+) episodes \((\d+) merged, (\d+) skipped, (\d+) failed\)`)

func parseWorkerSummary(s string, st *captureStats) {
	m := workerLine.FindStringSubmatch(s)
	if m == nil {
		return
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	st.Ingest.Captures, st.Ingest.Episodes, st.Ingest.Merged, st.Ingest.Skipped, st.Ingest.Failed = n(1), n(2), n(3), n(4), n(5)
}

// transcript appends Claude Code transcript lines to one session's file.
type transcript struct {
	path, sessionID, cwd string
	parent               string
	msgs                 int
}

func (t *transcript) append(line map[string]any) error {
	line["parentUuid"] = nil
	if t.parent != "" {
		line["parentUuid"] = t.parent
	}
	id := newUUID()
	line["uuid"] = id
	line["isSidechain"] = false
	line["userType"] = "external"
	line["entrypoint"] = "cli"
	line["cwd"] = t.cwd
	line["sessionId"] = t.sessionID
	line["version"] = "2.1.330"
	line["gitBranch"] = "main"
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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

func (t *transcript) user(text string, at time.Time) error {
	return t.append(map[string]any{
		"type": "user", "promptId": newUUID(), "message": map[string]any{"role": "user", "content": text},
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"), "permissionMode": "default",
	})
}

func (t *transcript) assistant(text string, at time.Time) error {
	t.msgs++
	return t.append(map[string]any{
		"type": "assistant",
		"message": map[string]any{
			"id": fmt.Sprintf("msg_%024d", t.msgs), "type": "message", "role": "assistant", "model": "claude-opus-5-5",
			"content":     []any{map[string]any{"type": "text", "text": text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
		},
		"requestId": "req_" + strings.ReplaceAll(newUUID(), "-", ""),
		"timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z"),
	})
}

// turnStep separates the timestamps of consecutive turns of a session.
const turnStep = 30 * time.Second

// writeSessions writes each LoCoMo session as one Claude Code session, turn by
// turn, and runs the Stop hook after each turn.
func (c *conversation) writeSessions(ctx context.Context) error {
	dir := filepath.Join(c.claude, "projects", sanitize(c.project))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	var lastDate time.Time
	for _, ses := range c.sample.Sessions {
		if len(ses.Turns) == 0 {
			continue
		}
		c.capture.Sessions++
		base := ses.Date
		if base.IsZero() {
			// Undated: a day after the previous session keeps the order.
			c.capture.UndatedSess++
			base = lastDate.Add(24 * time.Hour)
			if lastDate.IsZero() {
				base = time.Date(2023, 1, 1, 12, 0, 0, 0, time.UTC)
			}
		}
		lastDate = base
		sid := newUUID()
		tr := &transcript{path: filepath.Join(dir, sid+".jsonl"), sessionID: sid, cwd: c.project}
		// Consecutive turns pair up into one Claude Code turn: the first is
		// the user's prompt, the second the assistant's reply. LoCoMo's
		// speakers alternate but a session may open with either of them, so
		// roles follow position, and the speaker's name prefixes every text.
		for i := 0; i < len(ses.Turns); i += 2 {
			if err := ctx.Err(); err != nil {
				return err
			}
			u := ses.Turns[i]
			uText := c.record(u)
			if err := tr.user(c.prefix(u)+uText, base.Add(time.Duration(i)*turnStep)); err != nil {
				return err
			}
			reply := ""
			if i+1 < len(ses.Turns) {
				a := ses.Turns[i+1]
				aText := c.record(a)
				reply = c.prefix(a) + aText
				if err := tr.assistant(reply, base.Add(time.Duration(i+1)*turnStep)); err != nil {
					return err
				}
			}
			in, _ := json.Marshal(map[string]any{
				"session_id": sid, "transcript_path": tr.path, "cwd": c.project, "prompt_id": newUUID(),
				"permission_mode": "default", "effort": map[string]any{"level": "medium"},
				"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": reply,
				"background_tasks": []any{}, "session_crons": []any{},
			})
			r := runProc(ctx, c.env, c.project, in, c.bins.stop)
			c.capture.StopRuns++
			c.capture.StopMs = append(c.capture.StopMs, ms(r.wall))
			if r.err != nil || len(r.stdout) != 0 || len(r.stderr) != 0 {
				c.capture.StopProblems++
			}
		}
	}
	return nil
}

// prefix is what precedes a turn's text in the transcript: its speaker's
// name, unless -speaker-prefix=false.
func (c *conversation) prefix(t Turn) string {
	if c.opt.NoSpeakerPrefix || t.Speaker == "" {
		return ""
	}
	return t.Speaker + ": "
}

// record remembers a turn's text (without the speaker prefix) under its
// dia_id and returns it.
func (c *conversation) record(t Turn) string {
	text := strings.TrimSpace(t.Text)
	if c.opt.Captions && strings.TrimSpace(t.Caption) != "" {
		text += " [shares a photo: " + strings.TrimSpace(t.Caption) + "]"
	}
	c.capture.Turns++
	if p := parseEvidence([]string{t.DiaID}); len(p.IDs) == 1 {
		c.turnText[p.IDs[0]] = text
		c.photo[p.IDs[0]] = strings.TrimSpace(t.Caption) != ""
	}
	return text
}

// ask sends one question to the prompt hook and scores its answer.
func (c *conversation) ask(ctx context.Context, idx int, q QA) questionResult {
	res := questionResult{Conversation: c.sample.ID, Index: idx, Category: q.Category, Strict: []string{}, Lenient: []string{}}
	ev := parseEvidence(q.Evidence)
	res.Repaired = ev.Repaired
	res.Skipped = len(ev.Skipped)
	res.Evidence = []string{}
	for _, id := range ev.IDs {
		if _, ok := c.turnText[id]; ok {
			res.Evidence = append(res.Evidence, id)
		} else {
			res.Skipped++
		}
	}
	sid := newUUID()
	in, _ := json.Marshal(map[string]any{
		"session_id": sid, "transcript_path": filepath.Join(c.claude, "projects", sanitize(c.project), sid+".jsonl"),
		"cwd": c.project, "prompt_id": newUUID(), "permission_mode": "default",
		"hook_event_name": "UserPromptSubmit", "prompt": q.Question,
	})
	logPath := filepath.Join(c.engram, "logs", "hook-userprompt.log")
	logBefore := fileSize(logPath)
	r := runProc(ctx, c.env, c.project, in, c.bins.prompt)
	res.HookMs = ms(r.wall)
	if logAfter := fileSize(logPath); logAfter > logBefore {
		if b, err := readRange(logPath, logBefore, logAfter); err == nil && bytes.Contains(b, []byte("deadline of")) {
			res.DeadlineMiss = true
		}
	}
	switch {
	case r.err != nil:
		res.HookProblem = "exit: " + r.err.Error()
	case len(r.stderr) != 0:
		res.HookProblem = "stderr output"
	}
	if len(bytes.TrimSpace(r.stdout)) > 0 {
		var o struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(r.stdout, &o); err != nil {
			res.HookProblem = "stdout is not one JSON answer"
		} else {
			res.injected = o.HookSpecificOutput.AdditionalContext
		}
	}
	res.Bytes = len(res.injected)
	res.Words = len(strings.Fields(res.injected))
	res.sessionID = sid
	res.Bites = strings.Count(res.injected, "\n[Memory ") + strings.Count(res.injected, "\n[Belief ")
	norm := normalize(res.injected)
	for _, id := range res.Evidence {
		if c.photo[id] {
			res.Photo = append(res.Photo, id)
		}
		strict, lenient := reaches(c.turnText[id], norm)
		if strict {
			res.Strict = append(res.Strict, id)
		}
		if lenient {
			res.Lenient = append(res.Lenient, id)
		}
	}
	if c.opt.Diagnose {
		c.classifyMisses(ctx, &res, q)
	}
	return res
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func readRange(p string, from, to int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, to-from)
	_, err = f.ReadAt(b, from)
	return b, err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
