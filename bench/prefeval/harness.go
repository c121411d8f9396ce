package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/internal/promote"
)

// options configure one run.
type options struct {
	Data string // PrefEval-format file
	Out  string // JSON report; "" for none
	Keep string // keep each user's HOME under this directory; "" for a temp dir removed at the end
	// Reuse asks the questions again of the users' homes an earlier -keep
	// run left under this directory: no capture, one worker cycle rewrites
	// the recollection files with the engram under test.
	Reuse string
	// Users is how many simulated users (0 with Unrelated: only the
	// unrelated-store run).
	Users int
	// Fillers bounds the filler conversations each user's store holds
	// (-1: all of them).
	Fillers int
	// Unrelated is a directory of HOMEs holding stores of unrelated
	// conversations (a `bench/locomo -keep DIR` run): every question is
	// also sent there, and the share that gets no injection is reported.
	Unrelated string
	// PromptDeadline sets ENGRAM_PROMPT_HOOK_DEADLINE; "" keeps engram's default.
	PromptDeadline string
	Jobs           int       // users run at once
	Log            io.Writer // progress; nil for none
}

// Protocol constants (../shared/eval/README.md).
const (
	ackReply       = "Got it, I'll keep that in mind."
	sessionStep    = 9 * time.Hour
	messageStep    = 30 * time.Second
	memoryLineLoad = promote.LineLimit // lines of the auto-memory MEMORY.md the client loads
)

// firstSession is the date of every user's first session.
var firstSession = time.Date(2025, 3, 3, 8, 0, 0, 0, time.UTC)

// pref is one preference a user stated, and its question.
type pref struct {
	Topic      string
	Item       int
	Preference string
	Question   string
}

// user is the state of one simulated user's run.
type user struct {
	opt     options
	bins    benchkit.Bins
	data    *Data
	u       int
	home    string
	project string
	claude  string
	engram  string
	env     []string
	prefs   []pref
	// docs are the user's turns (the prompts of every session, fillers'
	// and preferences', as written): the documents of the plain BM25
	// baseline.
	docs []string

	capture captureStats
	memory  memoryFiles
	results []questionResult
}

// captureStats describe one user's capture and worker runs.
type captureStats struct {
	Sessions     int       `json:"sessions"`
	Messages     int       `json:"messages"`
	StopRuns     int       `json:"stop_hook_runs"`
	StopProblems int       `json:"stop_hook_contract_violations"`
	StopMs       []float64 `json:"-"`
	Worker       []string  `json:"worker_summaries"`
	WorkerMs     float64   `json:"worker_ms"`
}

// memoryFiles are the MEMORY.md files Claude Code loads for the user's
// project: what the model sees besides the injected context.
type memoryFiles struct {
	// Loaded is their text as the client loads it: the global file whole
	// (through the CLAUDE.md import), the project's auto-memory file's
	// first 200 lines.
	Loaded string
	// EngramTokens is engram's part of that (the lines of its blocks,
	// markers excluded), chars / 4.
	EngramTokens float64
	GlobalLines  int
	ProjectLines int
}

// questionResult is the outcome of one question. It holds ids and figures,
// no text of the data set.
type questionResult struct {
	User  int    `json:"user"`
	Topic string `json:"topic"`
	Item  int    `json:"item"`
	// SharesWord: the question shares a content word with the preference.
	SharesWord    bool    `json:"shares_content_word"`
	Bytes         int     `json:"injected_bytes"`
	Tokens        float64 `json:"injected_tokens"`
	Hit           bool    `json:"hit_injected"`
	HitWithMemory bool    `json:"hit_injected_plus_memory_md"`
	// HitBitesOnly: the preference reaches the bites alone, without
	// engram's framing (its header line, which says "prefer", and nothing
	// else), a check that a hit is not the framing's words.
	HitBitesOnly   bool    `json:"hit_bites_only"`
	Bites          int     `json:"bites"`
	BitesAsked     int     `json:"bites_asked_preference"`
	BitesOtherPref int     `json:"bites_other_preference"`
	HookMs         float64 `json:"hook_ms"`
	DeadlineMiss   bool    `json:"deadline_miss,omitempty"`
	HookProblem    string  `json:"hook_problem,omitempty"`

	bm25 bm25Ranking
}

// bm25Ranking is one question's plain BM25 ranking of its user's turns.
type bm25Ranking struct {
	docs  []string
	order []int
	pref  string
}

// hit reports whether the preference reaches the turns packed into
// budget characters.
func (r bm25Ranking) hit(budget int) bool {
	return benchkit.NewWordSet(benchkit.Pack(r.docs, r.order, budget)).Hit(r.pref)
}

func run(ctx context.Context, opt options) (*Report, error) {
	var logMu sync.Mutex // users log from their own goroutines
	logf := func(format string, a ...any) {
		if opt.Log != nil {
			logMu.Lock()
			defer logMu.Unlock()
			fmt.Fprintf(opt.Log, format+"\n", a...)
		}
	}
	data, err := loadData(opt.Data)
	if err != nil {
		return nil, err
	}
	if opt.Users <= 0 && opt.Unrelated == "" {
		return nil, errors.New("nothing to do: -users 0 and no -unrelated")
	}
	tmp, err := os.MkdirTemp("", "engram-prefeval-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if opt.Reuse != "" && opt.Keep != "" {
		return nil, errors.New("-reuse and -keep exclude each other")
	}
	if opt.Keep != "" {
		if work, err = benchkit.FreshDir("-keep", opt.Keep); err != nil {
			return nil, err
		}
	}
	if opt.Reuse != "" {
		if work, err = filepath.Abs(opt.Reuse); err != nil {
			return nil, err
		}
	}
	logf("building engram-hook-stop, engram-hook-userprompt and engram-worker ...")
	bins, err := benchkit.Build(ctx, filepath.Join(tmp, "bin"))
	if err != nil {
		return nil, err
	}
	rep := newReport(opt, data)
	start := time.Now()
	users := make([]*user, opt.Users)
	errs := make([]error, opt.Users)
	jobs := max(1, opt.Jobs)
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for u := range opt.Users {
		users[u] = &user{opt: opt, bins: bins, data: data, u: u, home: filepath.Join(work, fmt.Sprintf("user-%02d", u))}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				errs[u] = err
				return
			}
			errs[u] = users[u].run(ctx)
			if errs[u] == nil {
				logf("user %02d: %d sessions, %d Stop runs, worker %.1f s, %d of %d hits, MEMORY.md %d+%d lines",
					u, users[u].capture.Sessions, users[u].capture.StopRuns, users[u].capture.WorkerMs/1000,
					countHits(users[u].results), len(users[u].results), users[u].memory.GlobalLines, users[u].memory.ProjectLines)
			}
		}()
	}
	wg.Wait()
	for u, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("user %d: %w", u, err)
		}
	}
	for _, us := range users {
		rep.add(us)
	}
	if opt.Unrelated != "" {
		un, err := runUnrelated(ctx, opt, bins, data, logf)
		if err != nil {
			return nil, err
		}
		rep.Unrelated = un
	}
	rep.finish(time.Since(start))
	if opt.Keep != "" {
		logf("kept the users' homes under %s", work)
	}
	return rep, nil
}

func countHits(rs []questionResult) int {
	n := 0
	for _, r := range rs {
		if r.Hit {
			n++
		}
	}
	return n
}

// sessionPlan is the order of a user's sessions: the filler conversations
// (index >= 0) with the preference sessions (index < 0: preference -1-i)
// spread evenly among them, the last preference after the last filler.
func sessionPlan(fillers, prefs int) []int {
	var plan []int
	slot := func(k int) int { return (k+1)*fillers/prefs - 1 }
	k := 0
	for k < prefs && slot(k) < 0 {
		plan = append(plan, -1-k)
		k++
	}
	for j := range fillers {
		plan = append(plan, j)
		for k < prefs && slot(k) == j {
			plan = append(plan, -1-k)
			k++
		}
	}
	for ; k < prefs; k++ {
		plan = append(plan, -1-k)
	}
	return plan
}

func (us *user) run(ctx context.Context) error {
	_, err := os.Lstat(us.home)
	switch {
	case us.opt.Reuse == "" && err == nil:
		return fmt.Errorf("%s already exists (a kept earlier run?): every user needs a fresh HOME", us.home)
	case us.opt.Reuse != "" && err != nil:
		return fmt.Errorf("-reuse: %w", err)
	}
	us.project = filepath.Join(us.home, "src", "app")
	if err := os.MkdirAll(filepath.Join(us.project, ".git"), 0o755); err != nil {
		return err
	}
	us.claude = filepath.Join(us.home, ".claude")
	us.engram = filepath.Join(us.home, ".claude-memory")
	us.env = benchkit.ChildEnv(us.home, us.opt.PromptDeadline)

	// The preferences: topic order rotated by the user, so that each topic
	// takes each place in the session order across users.
	n := len(us.data.names)
	for t := range n {
		topic := us.data.names[(t+us.u)%n]
		it, idx := us.data.item(topic, us.u)
		us.prefs = append(us.prefs, pref{Topic: topic, Item: idx, Preference: it.Preference, Question: it.Question})
	}
	fillers := us.data.Filler
	if us.opt.Fillers >= 0 && len(fillers) > us.opt.Fillers {
		fillers = fillers[:us.opt.Fillers]
	}

	// The installer's first cycle creates the store.
	if us.opt.Reuse == "" {
		if r := benchkit.Run(ctx, us.env, us.project, nil, us.bins.Worker, "run", "--quiet"); r.Err != nil {
			return fmt.Errorf("engram-worker run (first cycle): %v: %s", r.Err, r.Stderr)
		}
	}
	for i, s := range sessionPlan(len(fillers), len(us.prefs)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		at := firstSession.Add(time.Duration(i) * sessionStep)
		var msgs []Message
		if s >= 0 {
			msgs = fillers[s].Conversation
		} else {
			msgs = []Message{{Role: "user", Content: us.prefs[-1-s].Preference}, {Role: "assistant", Content: ackReply}}
		}
		if err := us.session(ctx, msgs, at); err != nil {
			return err
		}
	}
	// As the scheduled worker would: ingest, consolidate, and a cycle more
	// (reusing a store: one cycle, which rewrites the recollection files).
	cycles := [][]string{{"run"}, {"run", "--consolidate"}, {"run"}}
	if us.opt.Reuse != "" {
		cycles = cycles[:1]
	}
	for _, args := range cycles {
		r := benchkit.Run(ctx, us.env, us.project, nil, us.bins.Worker, args...)
		if r.Err != nil {
			return fmt.Errorf("engram-worker %s: %v: %s", strings.Join(args, " "), r.Err, r.Stderr)
		}
		us.capture.WorkerMs += benchkit.Ms(r.Wall)
		us.capture.Worker = append(us.capture.Worker, strings.Join(strings.Fields(string(r.Stdout)), " "))
	}
	if us.memory, err = readMemoryFiles(us.claude, us.engram, us.project); err != nil {
		return err
	}
	bm := benchkit.NewBM25(us.docs)
	for _, p := range us.prefs {
		if err := ctx.Err(); err != nil {
			return err
		}
		a := benchkit.Ask(ctx, us.env, us.bins.Prompt, us.claude, us.engram, us.project, p.Question)
		us.results = append(us.results, us.score(p, a, bm.Rank(p.Question)))
	}
	return nil
}

// session writes one Claude Code session, message by message, running the
// Stop hook after each assistant reply (and after a last prompt left
// without one).
func (us *user) session(ctx context.Context, msgs []Message, at time.Time) error {
	us.capture.Sessions++
	if us.opt.Reuse != "" {
		// The turns as they were written, without writing them again.
		for _, m := range msgs {
			if text := strings.TrimSpace(m.Content); text != "" && m.Role != "assistant" {
				us.docs = append(us.docs, text)
			}
		}
		return nil
	}
	tr, err := benchkit.NewTranscript(us.claude, us.project)
	if err != nil {
		return err
	}
	pending := false
	stop := func(reply string) {
		r, ok := tr.Stop(ctx, us.env, us.bins.Stop, reply)
		us.capture.StopRuns++
		us.capture.StopMs = append(us.capture.StopMs, benchkit.Ms(r.Wall))
		if !ok {
			us.capture.StopProblems++
		}
		pending = false
	}
	for i, m := range msgs {
		text := strings.TrimSpace(m.Content)
		if text == "" {
			continue
		}
		t := at.Add(time.Duration(i) * messageStep)
		us.capture.Messages++
		if m.Role != "assistant" {
			us.docs = append(us.docs, text)
		}
		if m.Role == "assistant" {
			if err := tr.Assistant(text, t); err != nil {
				return err
			}
			stop(text)
			continue
		}
		if pending {
			// Two prompts in a row: the first turn ends unanswered.
			stop("")
		}
		if err := tr.User(text, t); err != nil {
			return err
		}
		pending = true
	}
	if pending {
		stop("")
	}
	return nil
}

// score rates one answer of the prompt hook.
func (us *user) score(p pref, a benchkit.Answer, order []int) questionResult {
	r := questionResult{User: us.u, Topic: p.Topic, Item: p.Item, SharesWord: benchkit.SharesContentWord(p.Question, p.Preference),
		Bytes: len(a.Context), Tokens: benchkit.Tokens(a.Context), HookMs: benchkit.Ms(a.Wall), DeadlineMiss: a.DeadlineMiss,
		HookProblem: a.Problem, bm25: bm25Ranking{docs: us.docs, order: order, pref: p.Preference}}
	r.Hit = benchkit.NewWordSet(a.Context).Hit(p.Preference)
	r.HitWithMemory = benchkit.NewWordSet(a.Context, us.memory.Loaded).Hit(p.Preference)
	r.HitBitesOnly = benchkit.NewWordSet(benchkit.Bites(a.Context)...).Hit(p.Preference)
	var others []string
	for _, o := range us.prefs {
		if o.Topic != p.Topic {
			others = append(others, o.Preference)
		}
	}
	r.Bites, r.BitesAsked, r.BitesOtherPref = classifyBites(a.Context, p.Preference, others)
	return r
}

// classifyBites counts the bites of an injected context, those that carry
// the asked-about preference, and those that carry another of the user's
// preferences instead (a bite carries a preference when the hit rule holds
// for the bite alone). The rest is filler.
func classifyBites(context, asked string, others []string) (bites, isAsked, isOther int) {
	for _, b := range benchkit.Bites(context) {
		bites++
		set := benchkit.NewWordSet(b)
		if set.Hit(asked) {
			isAsked++
			continue
		}
		for _, o := range others {
			if set.Hit(o) {
				isOther++
				break
			}
		}
	}
	return bites, isAsked, isOther
}

// readMemoryFiles reads the MEMORY.md files the client loads in the
// project: the global one (imported from CLAUDE.md, whole) and the
// project's auto-memory file (its first 200 lines).
func readMemoryFiles(claudeDir, engramHome, project string) (memoryFiles, error) {
	loc := promote.Locations{ClaudeConfigDir: claudeDir, EngramHome: engramHome}
	var m memoryFiles
	var loaded []string
	engram := 0
	for _, f := range []struct {
		path  string
		limit int
		lines *int
	}{{loc.GlobalFile(), 0, &m.GlobalLines}, {loc.ProjectFile(project), memoryLineLoad, &m.ProjectLines}} {
		b, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return m, err
		}
		lines := strings.SplitAfter(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if f.limit > 0 && len(lines) > f.limit {
			lines = lines[:f.limit]
		}
		*f.lines = len(lines)
		text := strings.Join(lines, "")
		loaded = append(loaded, text)
		engram += len(engramPart(text))
	}
	m.Loaded = strings.Join(loaded, "\n")
	m.EngramTokens = float64(engram) / 4
	return m, nil
}

// engramPart is the text of engram's blocks in a MEMORY.md (between its
// BEGIN and END markers, the marker lines excluded: the client strips HTML
// comments).
func engramPart(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.SplitAfter(text, "\n") {
		switch strings.TrimSpace(line) {
		case promote.BeliefsBegin, promote.EpisodesBegin:
			in = true
			continue
		case promote.BeliefsEnd, promote.EpisodesEnd:
			in = false
			continue
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}
