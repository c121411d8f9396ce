package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

// Phases, in the order a scenario goes through them.
const (
	PhaseBefore        = "before"         // the earlier sessions captured, before the change session
	PhaseAfter         = "after"          // the change session captured and a worker cycle run
	PhaseConsolidate   = "consolidate"    // engram-worker run --consolidate
	PhaseRebackfill    = "rebackfill"     // engram-worker run --backfill in the same home
	PhaseFreshBackfill = "fresh-backfill" // the transcripts backfilled into a new home (engram-worker run --backfill)
	PhaseImport        = "import"         // export, import into a new home, engram-worker run
)

// LaterPhases are the phases after the correction's own, where the old
// value must not come back.
var LaterPhases = []string{PhaseConsolidate, PhaseRebackfill, PhaseFreshBackfill, PhaseImport}

// Options of a run.
type Options struct {
	Bins benchkit.Bins
	// ModelFile is the sentence embedder's installed runtime file, linked
	// into every new home's models/minilm ("" to run without it).
	ModelFile      string
	PromptDeadline string // ENGRAM_PROMPT_HOOK_DEADLINE ("" for engram's own)
}

// BeliefRow is a belief as `engram-worker beliefs --json` prints it.
type BeliefRow struct {
	ID         string  `json:"id"`
	Statement  string  `json:"statement"`
	Confidence float64 `json:"confidence"`
	Evidence   int     `json:"evidence_count"`
	Status     string  `json:"status"`
	Kind       string  `json:"memory_kind"`
	Scope      string  `json:"scope"`
	Project    string  `json:"project,omitempty"` // its project's path
}

// EpisodeRow is what the bench keeps of an exported episode.
type EpisodeRow struct {
	ID        string `json:"id"`
	Project   string `json:"project_path,omitempty"`
	Lifecycle string `json:"lifecycle,omitempty"`
	Summary   string `json:"summary"`
	Context   string `json:"-"`
}

// Observation is what one phase showed: the answers of the prompt hook to
// the questions, the MEMORY.md files the client would load, the beliefs,
// and the superseded episodes; and the judge's reading of it.
type Observation struct {
	Phase          string       `json:"phase"`
	Injected       string       `json:"injected"`
	OtherInjected  string       `json:"other_injected"`
	ScopeInjected  string       `json:"scope_injected,omitempty"`
	Memory         []Unit       `json:"memory,omitempty"`       // current units of the global and the project's MEMORY.md
	Former         []Unit       `json:"former,omitempty"`       // their former beliefs ([NO LONGER TRUE])
	ScopeMemory    []Unit       `json:"scope_memory,omitempty"` // current units of the global and the scope project's MEMORY.md
	Beliefs        []BeliefRow  `json:"beliefs"`
	Superseded     []EpisodeRow `json:"superseded,omitempty"`
	Episodes       int          `json:"episodes"`
	DeadlineMisses int          `json:"deadline_misses,omitempty"`
	Problems       []string     `json:"problems,omitempty"`

	Reading
}

// Result is one scenario's run.
type Result struct {
	ID           string         `json:"id"`
	Kind         string         `json:"kind"`
	Family       string         `json:"family"`
	Slot         string         `json:"slot"`
	Scope        bool           `json:"scope,omitempty"`
	Question     string         `json:"question"`
	New          []string       `json:"new,omitempty"`
	Old          []string       `json:"old"`
	Statements   int            `json:"old_statements"`
	Phases       []*Observation `json:"phases"`
	Verdict      Verdict        `json:"verdict"`
	Errors       []string       `json:"errors,omitempty"` // a process that failed or broke its contract
	Seconds      float64        `json:"seconds"`
	Home         string         `json:"home,omitempty"` // kept with -keep
	WorkerStdout []string       `json:"worker_runs,omitempty"`
}

// Phase returns the observation of a phase (nil when it did not run).
func (r *Result) Phase(name string) *Observation {
	for _, o := range r.Phases {
		if o.Phase == name {
			return o
		}
	}
	return nil
}

// home is one simulated user's HOME: transcripts in .claude, engram's data
// in .claude-memory.
type home struct {
	dir, claude, engram string
	env                 []string
}

func newHome(dir string, opt Options) (*home, error) {
	h := &home{dir: dir, claude: filepath.Join(dir, ".claude"), engram: filepath.Join(dir, ".claude-memory")}
	if err := os.MkdirAll(h.claude, 0o700); err != nil {
		return nil, err
	}
	if opt.ModelFile != "" {
		md := filepath.Join(h.engram, "models", "minilm")
		if err := os.MkdirAll(md, 0o700); err != nil {
			return nil, err
		}
		if err := linkOrCopy(opt.ModelFile, filepath.Join(md, filepath.Base(opt.ModelFile))); err != nil {
			return nil, err
		}
	}
	for _, kv := range benchkit.ChildEnv(dir, opt.PromptDeadline) {
		// The model is linked in installed; nothing is to install anew.
		if strings.HasPrefix(kv, "ENGRAM_EMBED_MODEL_DIR=") {
			continue
		}
		h.env = append(h.env, kv)
	}
	return h, nil
}

// linkOrCopy hard-links src to dst (the installed model is 87 MB, and a
// run makes three homes per scenario), copying when a link cannot be made.
// A dst left by an earlier run in the same -keep directory is removed
// first, never written over: it may be a link to the file other homes
// map, and truncating a mapped file faults every process that reads it.
func linkOrCopy(src, dst string) error {
	if err := os.Remove(dst); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(out.Name())
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(out.Name())
		return err
	}
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if err := os.Chtimes(out.Name(), fi.ModTime(), fi.ModTime()); err != nil {
		return err
	}
	return os.Rename(out.Name(), dst)
}

// scenarioRun drives one scenario.
type scenarioRun struct {
	s      *Scenario
	opt    Options
	dir    string
	fs     string // the projects' directories are under it
	a      *home  // the user's home
	res    *Result
	clock  time.Time
	logf   func(string, ...any)
	trPath []string // transcripts written, for the fresh backfill
}

// Clock of a scenario, counted back from now: one earlier session a week
// (the first 30 days ago), the scope project's sessions 12 days ago, the
// change 3 days ago; the questions are asked now.
const (
	firstEarlier = 30 * 24 * time.Hour
	earlierGap   = 7 * 24 * time.Hour
	scopeAgo     = 12 * 24 * time.Hour
	changeAgo    = 3 * 24 * time.Hour
	turnGap      = 2 * time.Minute
)

// RunScenario runs a scenario in dir (which must not exist yet or be
// empty): its sessions through the hooks and the worker, the questions at
// each phase, and the verdict.
func RunScenario(ctx context.Context, s *Scenario, dir string, opt Options, logf func(string, ...any)) *Result {
	start := time.Now()
	r := &scenarioRun{s: s, opt: opt, dir: dir, fs: filepath.Join(dir, "fs"), logf: logf,
		res: &Result{ID: s.ID, Kind: s.Kind, Family: s.Family, Slot: s.Slot, Scope: s.Scope != nil, Question: s.Question,
			New: s.New, Old: s.Old, Statements: s.OldStatements()}}
	if err := r.run(ctx); err != nil {
		r.res.Errors = append(r.res.Errors, err.Error())
	}
	r.res.Verdict = Judge(s, r.res.Phases)
	r.res.Seconds = time.Since(start).Seconds()
	return r.res
}

func (r *scenarioRun) project(name string) string { return filepath.Join(r.fs, name) }

func (r *scenarioRun) run(ctx context.Context) error {
	s := r.s
	a, err := newHome(filepath.Join(r.dir, "home"), r.opt)
	if err != nil {
		return err
	}
	r.a = a
	projects := []string{s.Project}
	if s.Scope != nil {
		projects = append(projects, s.Scope.Project)
	}
	for _, p := range projects {
		if err := gitInit(r.project(p)); err != nil {
			return err
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	// The installer's first cycle creates the store; hooks never do.
	if err := r.worker(ctx, a, "first cycle", "run"); err != nil {
		return err
	}
	for i, sess := range s.Earlier {
		if err := r.session(ctx, s.Project, sess, now.Add(-firstEarlier+time.Duration(i)*earlierGap)); err != nil {
			return err
		}
		if err := r.worker(ctx, a, fmt.Sprintf("after earlier session %d", i+1), "run"); err != nil {
			return err
		}
	}
	if sc := s.Scope; sc != nil {
		for i, sess := range sc.Earlier {
			if err := r.session(ctx, sc.Project, sess, now.Add(-scopeAgo+time.Duration(i)*24*time.Hour)); err != nil {
				return err
			}
			if err := r.worker(ctx, a, fmt.Sprintf("after scope session %d", i+1), "run"); err != nil {
				return err
			}
		}
	}
	r.observe(ctx, a, PhaseBefore, true)
	if err := r.session(ctx, s.Project, s.Change, now.Add(-changeAgo)); err != nil {
		return err
	}
	if err := r.worker(ctx, a, "after the change", "run"); err != nil {
		return err
	}
	r.observe(ctx, a, PhaseAfter, true)
	if err := r.worker(ctx, a, "consolidate", "run", "--consolidate"); err != nil {
		return err
	}
	r.observe(ctx, a, PhaseConsolidate, true)
	if err := r.worker(ctx, a, "re-backfill", "run", "--backfill"); err != nil {
		return err
	}
	r.observe(ctx, a, PhaseRebackfill, true)

	// The same transcripts backfilled into a new home: a user who lost
	// the store, or installs anew, over the transcripts Claude Code kept.
	c, err := newHome(filepath.Join(r.dir, "fresh"), r.opt)
	if err != nil {
		return err
	}
	for _, p := range r.trPath {
		rel, _ := filepath.Rel(a.claude, p)
		dst := filepath.Join(c.claude, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return err
		}
	}
	if err := r.worker(ctx, c, "fresh home: backfill", "run", "--backfill"); err != nil {
		return err
	}
	r.observe(ctx, c, PhaseFreshBackfill, false)

	// Export from the user's home, import into a new one (another machine).
	export := filepath.Join(r.dir, "export.jsonl")
	if err := r.worker(ctx, a, "export", "export", "--out", export); err != nil {
		return err
	}
	b, err := newHome(filepath.Join(r.dir, "imported"), r.opt)
	if err != nil {
		return err
	}
	if err := r.worker(ctx, b, "new home: first cycle", "run"); err != nil {
		return err
	}
	if err := r.worker(ctx, b, "import", "import", export); err != nil {
		return err
	}
	if err := r.worker(ctx, b, "new home: after the import", "run"); err != nil {
		return err
	}
	r.observe(ctx, b, PhaseImport, false)
	return nil
}

func gitInit(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			return fmt.Errorf("git init %s: %v: %s", dir, err, out)
		}
		return nil
	}
	return os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
}

// session writes one session's turns to a new transcript in project, in
// Claude Code's format, from at on (a turn every two minutes), running
// the Stop hook after each turn as the client does.
func (r *scenarioRun) session(ctx context.Context, project string, sess Session, at time.Time) error {
	tr, err := benchkit.NewTranscript(r.a.claude, r.project(project))
	if err != nil {
		return err
	}
	r.trPath = append(r.trPath, tr.Path)
	for i, t := range sess {
		ts := at.Add(time.Duration(i) * turnGap)
		pid, err := tr.Prompt(t.User, ts)
		if err != nil {
			return err
		}
		for j, tl := range t.Tools {
			if err := tr.ToolCall(tl.Name, tl.Input, tl.Result, ts.Add(time.Duration(3+4*j)*time.Second)); err != nil {
				return err
			}
		}
		if err := tr.Assistant(t.Reply, ts.Add(time.Duration(10+4*len(t.Tools))*time.Second)); err != nil {
			return err
		}
		if p, ok := tr.StopPrompt(ctx, r.a.env, r.opt.Bins.Stop, pid, t.Reply); !ok {
			r.res.Errors = append(r.res.Errors, fmt.Sprintf("stop hook broke its contract (%v): %s%s", p.Err, p.Stdout, p.Stderr))
		}
	}
	return nil
}

// worker runs engram-worker with args in h; a failure is an error of the
// scenario (the steps after it would measure nothing).
func (r *scenarioRun) worker(ctx context.Context, h *home, why string, args ...string) error {
	p := benchkit.Run(ctx, h.env, h.dir, nil, r.opt.Bins.Worker, args...)
	out := strings.TrimSpace(string(p.Stdout))
	if args[0] == "run" {
		r.res.WorkerStdout = append(r.res.WorkerStdout, why+": "+out)
	}
	if p.Err != nil {
		return fmt.Errorf("engram-worker %s (%s): %v: %s", strings.Join(args, " "), why, p.Err, clip(string(p.Stderr)+out, 2000))
	}
	return nil
}

// observe asks the questions in h (each as the first prompt of a new
// session), reads the MEMORY.md files the client would load, the beliefs
// and the episodes, and reads what reached the model.
func (r *scenarioRun) observe(ctx context.Context, h *home, phase string, sameHome bool) {
	s := r.s
	o := &Observation{Phase: phase}
	// A prompt hook that gave up at its deadline (a busy machine) is asked
	// again, up to twice, as a new session: the bench measures what recall
	// selects, and counts the misses.
	ask := func(project, q string) string {
		for try := 0; ; try++ {
			a := benchkit.Ask(ctx, h.env, r.opt.Bins.Prompt, h.claude, h.engram, r.project(project), q)
			if a.Problem != "" {
				o.Problems = append(o.Problems, "prompt hook: "+a.Problem)
			}
			if !a.DeadlineMiss {
				return a.Context
			}
			o.DeadlineMisses++
			if try == 2 {
				o.Problems = append(o.Problems, "prompt hook: gave up at its deadline three times for "+strconv.Quote(q))
				return a.Context
			}
		}
	}
	o.Injected = ask(s.Project, s.Question)
	o.OtherInjected = ask(s.Project, s.Other.Question)
	global := filepath.Join(h.engram, "MEMORY.md")
	cur, former := readMemory(global, "global")
	o.Memory, o.Former = cur, former
	cur, former = readMemory(projectMemory(h, r.project(s.Project)), s.Project)
	o.Memory, o.Former = append(o.Memory, cur...), append(o.Former, former...)
	if sc := s.Scope; sc != nil {
		o.ScopeInjected = ask(sc.Project, sc.Question)
		g, _ := readMemory(global, "global")
		p, _ := readMemory(projectMemory(h, r.project(sc.Project)), sc.Project)
		o.ScopeMemory = append(g, p...)
	}
	if bs, err := r.beliefs(ctx, h); err != nil {
		o.Problems = append(o.Problems, err.Error())
	} else {
		o.Beliefs = bs
	}
	if eps, err := r.episodes(ctx, h, phase); err != nil {
		o.Problems = append(o.Problems, err.Error())
	} else {
		o.Episodes = len(eps)
		for _, e := range eps {
			if e.Lifecycle == "superseded" {
				o.Superseded = append(o.Superseded, e)
			}
		}
	}
	o.Reading = Read(s, o)
	r.res.Phases = append(r.res.Phases, o)
	r.logf("  %s %-14s new reaches %-5v old current %-5v other %-5v", s.ID, phase, o.NewReaches, o.OldCurrent, o.OtherReaches)
}

// projectMemory is the auto-memory file Claude Code loads in a project:
// ~/.claude/projects/<sanitized git root>/memory/MEMORY.md.
func projectMemory(h *home, root string) string {
	return filepath.Join(h.claude, "projects", benchkit.Sanitize(root), "memory", "MEMORY.md")
}

func readMemory(path, name string) (current, former []Unit) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	return MemoryUnits(name, string(b))
}

func (r *scenarioRun) beliefs(ctx context.Context, h *home) ([]BeliefRow, error) {
	p := benchkit.Run(ctx, h.env, h.dir, nil, r.opt.Bins.Worker, "beliefs", "--status", "all", "--json")
	if p.Err != nil {
		return nil, fmt.Errorf("engram-worker beliefs --json: %v: %s", p.Err, clip(string(p.Stderr), 500))
	}
	var rows []BeliefRow
	if err := json.Unmarshal(p.Stdout, &rows); err != nil {
		return nil, fmt.Errorf("engram-worker beliefs --json: %w", err)
	}
	return rows, nil
}

// episodes reads every episode with its lifecycle from an export (the
// command line shows no lifecycle; the export carries it).
func (r *scenarioRun) episodes(ctx context.Context, h *home, phase string) ([]EpisodeRow, error) {
	path := filepath.Join(r.dir, "observe-"+phase+".jsonl")
	p := benchkit.Run(ctx, h.env, h.dir, nil, r.opt.Bins.Worker, "export", "--out", path)
	if p.Err != nil {
		return nil, fmt.Errorf("engram-worker export: %v: %s", p.Err, clip(string(p.Stderr), 500))
	}
	defer os.Remove(path)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseEpisodes(b)
}

func parseEpisodes(b []byte) ([]EpisodeRow, error) {
	var out []EpisodeRow
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var rec struct {
			Kind string `json:"kind"`
			EpisodeRow
			Context string `json:"context"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		if rec.Kind != "episode" {
			continue
		}
		rec.EpisodeRow.Context = rec.Context
		out = append(out, rec.EpisodeRow)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		out = []EpisodeRow{}
	}
	return out, nil
}

// installModel installs the sentence embedder from src once, into dir,
// and returns its runtime file.
func installModel(ctx context.Context, bins benchkit.Bins, src, dir string) (string, error) {
	h := &home{dir: dir, engram: filepath.Join(dir, ".claude-memory")}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	env := benchkit.ChildEnv(dir, "")
	p := benchkit.Run(ctx, env, dir, nil, bins.Worker, "model", "install", src)
	if p.Err != nil {
		return "", fmt.Errorf("engram-worker model install %s: %v: %s", src, p.Err, clip(string(p.Stderr), 1000))
	}
	files, _ := filepath.Glob(filepath.Join(h.engram, "models", "minilm", "*"))
	if len(files) != 1 {
		return "", errors.New("engram-worker model install left no single runtime file in models/minilm")
	}
	return files[0], nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… [%d bytes more]", len(s)-n)
}
