package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

// Report is what one replay found; -json writes it whole.
type Report struct {
	Input       Input             `json:"input"`
	Home        string            `json:"home"`     // the simulated HOME (kept)
	Projects    map[string]string `json:"projects"` // original cwd -> the git repository standing in for it
	Sessions    int               `json:"sessions"`
	Prompts     int               `json:"prompts"` // real user prompts replayed
	From        time.Time         `json:"from"`    // the first and last prompt's time
	To          time.Time         `json:"to"`
	WallSeconds float64           `json:"wall_seconds"`
	Hooks       Hooks             `json:"hooks"`
	Worker      Worker            `json:"worker"`
	Store       Store             `json:"store"`
	Quarantine  Quarantine        `json:"quarantine"`
	Injection   InjectionStats    `json:"injection"`
	Beliefs     Beliefs           `json:"beliefs"`
	MemoryFiles []MemoryFile      `json:"memory_files"`
	Logs        []LogProblem      `json:"log_problems"`
	Outputs     map[string]string `json:"outputs"`
}

// Input is what was read.
type Input struct {
	Transcripts   string         `json:"transcripts,omitempty"`
	EntireContext string         `json:"entirecontext,omitempty"`
	Converted     *ConvertStats  `json:"converted,omitempty"`
	Files         int            `json:"files"`
	Skipped       map[string]int `json:"skipped_files,omitempty"`
	Snapshots     int            `json:"snapshot_files"` // earlier copies of a session's transcript, dropped
	Merged        int            `json:"merged_files"`
	Sessions      int            `json:"sessions"`
	Turns         int            `json:"turns"`
	Lines         int            `json:"lines"`
}

// Hooks is how the hooks behaved.
type Hooks struct {
	Stops                int            `json:"stop_runs"`
	StopMs               []float64      `json:"-"`
	PromptMs             []float64      `json:"-"`
	Stop                 benchkit.Dist  `json:"stop_ms"`
	Prompt               benchkit.Dist  `json:"prompt_ms"`
	PromptDeadlineMisses int            `json:"prompt_deadline_misses"`
	Problems             map[string]int `json:"problems,omitempty"` // broken contracts (exit, output) by hook
	Examples             []string       `json:"problem_examples,omitempty"`
}

func (h *Hooks) problem(kind, example string) {
	if h.Problems == nil {
		h.Problems = map[string]int{}
	}
	h.Problems[kind]++
	if len(h.Examples) < 20 {
		h.Examples = append(h.Examples, kind+": "+example)
	}
}

// Worker is every engram-worker run.
type Worker struct {
	Runs     []WorkerRun `json:"runs"`
	Failures int         `json:"failures"` // runs that exited non-zero
	// SelfScheduled is when a Stop hook last started a worker run of its
	// own (zero: none did).
	SelfScheduled time.Time `json:"self_scheduled,omitzero"`
}

// Store is what `engram-worker status --json` said at the end.
type Store struct {
	Captures     map[string]int  `json:"captures"` // by status: done, pending, failed, ...
	Pending      int             `json:"pending_captures"`
	Episodes     int             `json:"episodes"`
	Beliefs      map[string]int  `json:"beliefs"`
	SpoolFiles   int             `json:"spool_files"`
	LastRunError string          `json:"last_run_error,omitempty"`
	Extractor    string          `json:"extractor"`
	Embedder     string          `json:"embedder"`
	Review       json.RawMessage `json:"review,omitempty"`
	Status       json.RawMessage `json:"status"` // the whole answer
	Error        string          `json:"error,omitempty"`
	quarantine   json.RawMessage // a status field naming quarantine, if any
}

func (s *Store) fromStatus(b []byte) {
	s.Status = json.RawMessage(b)
	var st struct {
		Captures   map[string]int  `json:"captures"`
		Pending    int             `json:"pending_captures"`
		Episodes   int             `json:"episodes"`
		Beliefs    map[string]int  `json:"beliefs"`
		SpoolFiles int             `json:"spool_files"`
		Extractor  string          `json:"extractor"`
		Embedder   string          `json:"embedder"`
		Review     json.RawMessage `json:"review"`
		LastRun    *struct {
			Error string `json:"error"`
		} `json:"last_run"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		s.Error = "status --json: " + err.Error()
		return
	}
	s.Captures, s.Pending, s.Episodes, s.Beliefs, s.SpoolFiles = st.Captures, st.Pending, st.Episodes, st.Beliefs, st.SpoolFiles
	s.Extractor, s.Embedder, s.Review = st.Extractor, st.Embedder, st.Review
	if st.LastRun != nil {
		s.LastRunError = st.LastRun.Error
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(b, &all) == nil {
		for k, v := range all {
			if strings.Contains(strings.ToLower(k), "quarantin") && s.quarantine == nil {
				s.quarantine = v
			}
		}
	}
}

// Quarantine is what engram set aside as unprocessable.
type Quarantine struct {
	Available bool            `json:"command_available"` // engram-worker quarantine list exists
	Count     int             `json:"count"`             // items (-1: the answer could not be counted)
	List      json.RawMessage `json:"list,omitempty"`    // quarantine list --json
	Status    json.RawMessage `json:"status_field,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// InjectionStats is what the prompt hook gave the real prompts.
type InjectionStats struct {
	Prompts  int     `json:"prompts"`
	Injected int     `json:"injected"` // prompts that got any context
	Rate     float64 `json:"rate"`     // Injected / Prompts
	Bites    int     `json:"bites"`
	// Tokens per real prompt (characters / 4, benchkit.Tokens), prompts
	// that got nothing counted as 0; PerInjection over those that got some.
	PerPrompt    benchkit.Dist `json:"tokens_per_prompt"`
	PerInjection benchkit.Dist `json:"tokens_per_injection"`
}

func (s *InjectionStats) summarise(tokens []float64) {
	s.Prompts = len(tokens)
	s.Rate = benchkit.Share(s.Injected, s.Prompts)
	s.PerPrompt = benchkit.NewDist(tokens)
	var some []float64
	for _, t := range tokens {
		if t > 0 {
			some = append(some, t)
		}
	}
	s.PerInjection = benchkit.NewDist(some)
}

// Beliefs is `engram-worker beliefs --status all --json` at the end.
type Beliefs struct {
	All []struct {
		ID         string  `json:"id"`
		Statement  string  `json:"statement"`
		Confidence float64 `json:"confidence"`
		Evidence   int     `json:"evidence_count"`
		Status     string  `json:"status"`
		Kind       string  `json:"memory_kind"`
		Scope      string  `json:"scope"`
		Project    string  `json:"project,omitempty"`
	} `json:"all"`
	ByStatus map[string]int `json:"by_status"`
	Error    string         `json:"error,omitempty"`
}

// MemoryFile is one file Claude Code loads that the replay ended with.
type MemoryFile struct {
	Path    string `json:"path"` // ~/ for the simulated HOME, fs/ for the stand-in projects
	Lines   int    `json:"lines"`
	Bytes   int    `json:"bytes"`
	Content string `json:"content"`
}

// LogProblem is a warning or error message of engram's logs, counted.
type LogProblem struct {
	File    string `json:"file"`
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	Count   int    `json:"count"`
	Example string `json:"example"`
}

// Print writes the report for a person.
func (r *Report) Print(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	in := r.Input
	p("== engram replay")
	if in.Transcripts != "" {
		p("input: %s: %d .jsonl files, %d skipped %v, %d earlier snapshots dropped, %d merged", in.Transcripts, in.Files,
			sum(in.Skipped), in.Skipped, in.Snapshots, in.Merged)
	}
	if c := in.Converted; c != nil {
		p("input: %s: %d sessions converted (%d turns, %d with a reply), skipped types %v, %d turns and %d sessions empty",
			in.EntireContext, c.Sessions, c.Turns, c.Replies, c.SkippedTypes, c.SkippedTurns, c.EmptySessions)
	}
	p("sessions %d, turns %d (%d lines); replayed %d prompts of %d sessions, %s to %s, in %.0f s",
		in.Sessions, in.Turns, in.Lines, r.Prompts, r.Sessions, day(r.From), day(r.To), r.WallSeconds)
	p("")
	p("-- robustness")
	p("worker runs: %d, failed (exit != 0): %d", len(r.Worker.Runs), r.Worker.Failures)
	for _, run := range r.Worker.Runs {
		if run.ExitCode != 0 || run.Error != "" {
			p("  FAILED run (%s, clock %s): exit %d, last_run.error %q\n    %s", run.Reason, day(run.Clock), run.ExitCode, run.Error,
				strings.ReplaceAll(clip(run.Stderr, 4000), "\n", "\n    "))
		}
	}
	if !r.Worker.SelfScheduled.IsZero() {
		p("a Stop hook started a worker run of its own (last at %s, real clock)", r.Worker.SelfScheduled.UTC().Format(time.RFC3339))
	}
	st := r.Store
	if st.Error != "" {
		p("status: %s", st.Error)
	}
	p("captures: %s; pending %d; spool files %d; episodes %d; extractor %s, embedder %s", counts(st.Captures), st.Pending,
		st.SpoolFiles, st.Episodes, st.Extractor, st.Embedder)
	if st.LastRunError != "" {
		p("last run error: %s", st.LastRunError)
	}
	q := r.Quarantine
	switch {
	case q.Available && q.Error == "":
		p("quarantined: %d", q.Count)
	case q.Available:
		p("quarantined: ? (%s)", q.Error)
	case len(q.Status) > 0:
		p("quarantined: %d (status --json; %s)", q.Count, q.Error)
	default:
		p("quarantined: n/a (%s; status --json has no quarantine field)", q.Error)
	}
	h := r.Hooks
	p("hooks: %d Stop runs, Stop ms p50 %.0f p95 %.0f; prompt ms p50 %.0f p95 %.0f max %.0f, %d past the deadline",
		h.Stops, h.Stop.P50, h.Stop.P95, h.Prompt.P50, h.Prompt.P95, h.Prompt.Max, h.PromptDeadlineMisses)
	for k, n := range h.Problems {
		p("  broken contract: %s x%d", k, n)
	}
	for _, e := range h.Examples {
		p("    %s", clip(e, 600))
	}
	if len(r.Logs) > 0 {
		p("log warnings and errors:")
		for _, l := range r.Logs {
			p("  %s %s x%d: %s", l.File, l.Level, l.Count, clip(l.Msg, 200))
		}
	}
	p("")
	p("-- relevance")
	in2 := r.Injection
	p("injection rate: %d of %d prompts (%.1f%%), %d bites", in2.Injected, in2.Prompts, 100*in2.Rate, in2.Bites)
	p("tokens per real prompt: mean %.1f, median %.1f, p95 %.1f, max %.0f (per injecting prompt: mean %.1f, median %.1f)",
		in2.PerPrompt.Mean, in2.PerPrompt.P50, in2.PerPrompt.P95, in2.PerPrompt.Max, in2.PerInjection.Mean, in2.PerInjection.P50)
	p("")
	p("-- beliefs at the end: %s", counts(r.Beliefs.ByStatus))
	if r.Beliefs.Error != "" {
		p("  %s", r.Beliefs.Error)
	}
	for _, b := range r.Beliefs.All {
		where := b.Scope
		if b.Project != "" {
			where = "project"
		}
		p("  %s %.2f ev %d %-8s %-10s %-7s %s", b.ID, b.Confidence, b.Evidence, b.Status, b.Kind, where, b.Statement)
	}
	p("")
	p("-- files Claude Code loads that engram wrote: %d", len(r.MemoryFiles))
	for _, f := range r.MemoryFiles {
		p("%s (%d lines, %d bytes):", f.Path, f.Lines, f.Bytes)
		p("  %s", strings.ReplaceAll(strings.TrimRight(clip(f.Content, 6000), "\n"), "\n", "\n  "))
	}
	if len(r.Outputs) > 0 {
		p("")
		keys := make([]string, 0, len(r.Outputs))
		for k := range r.Outputs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p("%s: %s", k, r.Outputs[k])
		}
	}
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// counts renders a map of counts as "a 1, b 2" in key order.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
