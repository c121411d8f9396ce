package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/bench/internal/locomodata"
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

// conversation is the state of one sample's run.
type conversation struct {
	opt     options
	bins    benchkit.Bins
	sample  locomodata.Sample
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
	// docs are the conversation's turns as written (speaker prefix
	// included), the documents of the plain BM25 baseline; bm25 indexes
	// them.
	docs []string
	bm25 *benchkit.BM25

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
	// Content lists the evidence turns that reached the context by the
	// content-word rule (benchkit.RuleDoc): >= 60% of their distinct
	// content words are in it.
	Content []string `json:"reached_content60"`
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
	bm25      bm25Ranking
	sessionID string // the question's session (its injected ids are recorded under it)
}

// run executes the whole benchmark.
func run(ctx context.Context, opt options) (*Report, error) {
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			fmt.Fprintf(opt.Log, format+"\n", a...)
		}
	}
	samples, err := locomodata.Load(opt.Data)
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
		abs, err := benchkit.FreshDir("-keep", opt.Keep)
		if err != nil {
			return nil, err
		}
		work = abs
	}
	logf("building engram-hook-stop, engram-hook-userprompt and engram-worker ...")
	b, err := benchkit.Build(ctx, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	rep := newReport(opt)
	start := time.Now()
	for _, s := range samples {
		c := &conversation{opt: opt, bins: b, sample: s, home: filepath.Join(work, benchkit.Sanitize(s.ID))}
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
	c.project = filepath.Join(c.home, "src", benchkit.Sanitize(c.sample.ID))
	if err := os.MkdirAll(filepath.Join(c.project, ".git"), 0o755); err != nil {
		return err
	}
	c.claude = filepath.Join(c.home, ".claude")
	c.engram = filepath.Join(c.home, ".claude-memory")
	c.env = benchkit.ChildEnv(c.home, c.opt.PromptDeadline)
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
		if r := benchkit.Run(ctx, c.env, c.project, nil, c.bins.Worker, "run", "--quiet"); r.Err != nil {
			return fmt.Errorf("engram-worker run (first cycle): %v: %s", r.Err, r.Stderr)
		}
		if err := c.writeSessions(ctx); err != nil {
			return err
		}
	}
	spooled, _ := filepath.Glob(filepath.Join(c.engram, "spool", "*.json"))
	c.capture.SpoolFiles = len(spooled)
	r := benchkit.Run(ctx, c.env, c.project, nil, c.bins.Worker, "run")
	if r.Err != nil {
		return fmt.Errorf("engram-worker run: %v: %s", r.Err, r.Stderr)
	}
	c.capture.WorkerMs = ms(r.Wall)
	c.capture.WorkerSummary = strings.TrimSpace(string(r.Stdout))
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

// turnStep separates the timestamps of consecutive turns of a session.
const turnStep = 30 * time.Second

// writeSessions writes each LoCoMo session as one Claude Code session, turn by
// turn, and runs the Stop hook after each turn.
func (c *conversation) writeSessions(ctx context.Context) error {
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
		tr, err := benchkit.NewTranscript(c.claude, c.project)
		if err != nil {
			return err
		}
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
			if err := tr.User(c.prefix(u)+uText, base.Add(time.Duration(i)*turnStep)); err != nil {
				return err
			}
			reply := ""
			if i+1 < len(ses.Turns) {
				a := ses.Turns[i+1]
				aText := c.record(a)
				reply = c.prefix(a) + aText
				if err := tr.Assistant(reply, base.Add(time.Duration(i+1)*turnStep)); err != nil {
					return err
				}
			}
			r, ok := tr.Stop(ctx, c.env, c.bins.Stop, reply)
			c.capture.StopRuns++
			c.capture.StopMs = append(c.capture.StopMs, ms(r.Wall))
			if !ok {
				c.capture.StopProblems++
			}
		}
	}
	return nil
}

// prefix is what precedes a turn's text in the transcript: its speaker's
// name, unless -speaker-prefix=false.
func (c *conversation) prefix(t locomodata.Turn) string {
	if c.opt.NoSpeakerPrefix || t.Speaker == "" {
		return ""
	}
	return t.Speaker + ": "
}

// record remembers a turn's text (without the speaker prefix) under its
// dia_id and returns it.
func (c *conversation) record(t locomodata.Turn) string {
	text := strings.TrimSpace(t.Text)
	if c.opt.Captions && strings.TrimSpace(t.Caption) != "" {
		text += " [shares a photo: " + strings.TrimSpace(t.Caption) + "]"
	}
	c.capture.Turns++
	if p := locomodata.ParseEvidence([]string{t.DiaID}); len(p.IDs) == 1 {
		c.turnText[p.IDs[0]] = text
		c.photo[p.IDs[0]] = strings.TrimSpace(t.Caption) != ""
	}
	if text != "" {
		c.docs = append(c.docs, c.prefix(t)+text)
	}
	return text
}

// ask sends one question to the prompt hook and scores its answer.
func (c *conversation) ask(ctx context.Context, idx int, q locomodata.QA) questionResult {
	res := questionResult{Conversation: c.sample.ID, Index: idx, Category: q.Category, Strict: []string{}, Lenient: []string{}, Content: []string{}}
	ev := locomodata.ParseEvidence(q.Evidence)
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
	a := benchkit.Ask(ctx, c.env, c.bins.Prompt, c.claude, c.engram, c.project, q.Question)
	res.HookMs = ms(a.Wall)
	res.DeadlineMiss = a.DeadlineMiss
	res.HookProblem = a.Problem
	res.injected = a.Context
	sid := a.SessionID
	res.Bytes = len(res.injected)
	res.Words = len(strings.Fields(res.injected))
	res.sessionID = sid
	res.Bites = strings.Count(res.injected, "\n[Memory ") + strings.Count(res.injected, "\n[Belief ")
	norm := normalize(res.injected)
	words := benchkit.NewWordSet(res.injected)
	// The baseline: plain BM25 over the conversation's turns, packed later
	// (report.go) into the budgets the report compares at.
	if c.bm25 == nil {
		c.bm25 = benchkit.NewBM25(c.docs)
	}
	res.bm25 = bm25Ranking{docs: c.docs, order: c.bm25.Rank(q.Question)}
	for _, id := range res.Evidence {
		res.bm25.evidence = append(res.bm25.evidence, c.turnText[id])
	}
	for _, id := range res.Evidence {
		if c.photo[id] {
			res.Photo = append(res.Photo, id)
		}
		if words.Hit(c.turnText[id]) {
			res.Content = append(res.Content, id)
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

func ms(d time.Duration) float64 { return benchkit.Ms(d) }
