package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/health"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/stophook"
	"github.com/engram-memory/engram/internal/worker"
)

// version and commit are set at build time with
// -ldflags "-X main.version=… -X main.commit=…" (scripts/install.sh,
// scripts/release.sh).
var (
	version = "dev"
	commit  = ""
)

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags("version", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, versionLine())
	return nil
}

// versionLine is "engram VERSION (commit C, GOVERSION OS/ARCH)"; the
// commit is left out when the build did not stamp one.
func versionLine() string {
	c := ""
	if commit != "" {
		c = "commit " + commit + ", "
	}
	return fmt.Sprintf("engram %s (%s%s %s/%s)", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// statusReport is what `status --json` prints.
type statusReport struct {
	Home string `json:"home"`
	// Problems are what the checks doctor and memory_status share
	// (package health) find wrong: the hooks' storage and whether Claude
	// Code runs them.
	Problems      []health.Finding `json:"problems"`
	Database      string           `json:"database"`
	DatabaseBytes int64            `json:"database_bytes"`
	Captures      map[string]int   `json:"captures"`
	Pending       int              `json:"pending_captures"`
	Episodes      int              `json:"episodes"`
	Beliefs       map[string]int   `json:"beliefs"`
	// Kinds counts the recalled episodes and the active beliefs by kind;
	// Lifecycle, the episodes live, archived and expired.
	Kinds         kindCounts     `json:"kinds"`
	Lifecycle     map[string]int `json:"episode_lifecycle"`
	Review        reviewCounts   `json:"review"`
	Consolidation consolidation  `json:"consolidation"`
	SpoolFiles    int            `json:"spool_files"`
	// Quarantine counts, by stage, the items a stage failed on and holds
	// out (engram-worker quarantine list).
	Quarantine map[string]int `json:"quarantine"`
	LastRun    *runReport     `json:"last_run"`
	Extractor  string         `json:"extractor"`
	Embedder   string         `json:"embedder"`
	// Model is the sentence embedder's state, and Vectors how many
	// episodes and beliefs have vectors of which embedder ("" for none):
	// the progress of re-embedding after the model arrived.
	Model        worker.ModelState `json:"model"`
	Vectors      vectorCounts      `json:"vectors"`
	LastRunStats json.RawMessage   `json:"last_run_stats,omitempty"`
	// MemoryFiles are the MEMORY.md files engram writes, measured against
	// the client's limit.
	MemoryFiles []promote.FileReport `json:"memory_files"`
	// SearchIndex is the prompt hook's search index.
	SearchIndex searchIndex `json:"search_index"`
	// LLMToday is the claude backend's use today (ENGRAM_LLM=claude).
	LLMToday *llmToday `json:"llm_today,omitempty"`
	// Share is the state of sharing, when it is set up.
	Share *share.Report `json:"share,omitempty"`
	// Schedulers are what runs the worker; SelfSchedule, whether the Stop
	// hook starts it where nothing does; WorkerStale, whether it has not
	// run for longer than twice its interval; OldestPending, since when
	// the oldest capture waits for it.
	Schedulers    []setup.SchedulerState `json:"schedulers"`
	SelfSchedule  bool                   `json:"self_schedule"`
	WorkerStale   bool                   `json:"worker_stale"`
	OldestPending time.Time              `json:"oldest_pending_at,omitzero"`
}

// reviewCounts is the review mode, how many beliefs wait for review, and
// how many beliefs are at each level other than pending.
type reviewCounts struct {
	Mode    string         `json:"mode"`
	Waiting int            `json:"waiting"`
	Levels  map[string]int `json:"levels"`
	// CoreFiles are the CLAUDE.md and AGENTS.md files holding engram's
	// core-memory block.
	CoreFiles []string `json:"core_files"`
}

// llmToday is today's use of the claude backend against its budget.
type llmToday struct {
	claudellm.Usage
	DailyCalls  int   `json:"daily_calls"`
	DailyTokens int64 `json:"daily_tokens"`
}

// line describes today's use on one line.
func (u llmToday) line(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model today: %d calls", u.Calls)
	if u.DailyCalls > 0 {
		fmt.Fprintf(&b, " of %d", u.DailyCalls)
	}
	fmt.Fprintf(&b, ", about %d input tokens", u.EstTokens)
	if u.DailyTokens > 0 {
		fmt.Fprintf(&b, " of %d", u.DailyTokens)
	}
	if u.CostUSD > 0 {
		fmt.Fprintf(&b, ", $%.4f at list price as the client reports it", u.CostUSD)
	}
	fmt.Fprintf(&b, "; fell back to the local path: %d", u.FellBack())
	var why []string
	for _, r := range []struct {
		n    int
		name string
	}{{u.Budget, "budget"}, {u.Cooldown, "cooldown"}, {u.RateLimit, "rate limit"}, {u.Auth, "authentication"},
		{u.Malformed, "malformed reply"}, {u.Failed, "failed"}} {
		if r.n > 0 {
			why = append(why, fmt.Sprintf("%s %d", r.name, r.n))
		}
	}
	if len(why) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(why, ", "))
	}
	if now.Before(u.CooldownUntil) {
		fmt.Fprintf(&b, "; no calls until %s", u.CooldownUntil.Format(time.RFC3339))
	}
	if u.LastError != "" {
		fmt.Fprintf(&b, "; last error: %s", u.LastError)
	}
	return b.String()
}

// kindCounts counts memories by kind.
type kindCounts struct {
	Episodes map[string]int `json:"episodes"`
	Beliefs  map[string]int `json:"beliefs"`
}

// vectorCounts counts memories by the embedder of their vectors.
type vectorCounts struct {
	Episodes map[string]int `json:"episodes"`
	Beliefs  map[string]int `json:"beliefs"`
}

// searchIndex is where the prompt hook's search index stands.
type searchIndex struct {
	Built    bool      `json:"built"`
	Error    string    `json:"error,omitempty"`
	Segments int       `json:"segments"`
	Records  int       `json:"records"` // episode records, replaced ones included
	Bytes    int64     `json:"bytes"`
	SyncedAt time.Time `json:"synced_at,omitzero"`
	// Behind is how many episodes changed since the last sync (the next
	// worker cycle applies them).
	Behind int `json:"changes_pending"`
	// Failure is the last update that failed, when no update has
	// succeeded since: the index is still the one synced at SyncedAt.
	Failure *recall.IndexFailure `json:"last_failure,omitempty"`
}

// failureLine says why the index is behind, or "" when its last update
// did not fail.
func (x searchIndex) failureLine() string {
	f := x.Failure
	if f == nil {
		return ""
	}
	s := fmt.Sprintf("the last update failed at %s (%d changed episodes to apply): %s", f.At.Format(time.RFC3339), f.Changes, f.Error)
	if x.Built {
		s += fmt.Sprintf("; the prompt hook searches the index as synced at %s until an update succeeds (every worker cycle tries)",
			x.SyncedAt.Format(time.RFC3339))
	}
	return s
}

// inspectIndex reads the search index's manifest and the store's change log.
func inspectIndex(ctx context.Context, s *session) (searchIndex, error) {
	var x searchIndex
	m, err := recall.ReadManifest(s.cfg.Home)
	after := int64(0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		x.Error = err.Error()
	default:
		x.Built, x.SyncedAt, after = true, m.BuiltAt, m.LastChange
		x.Segments = len(m.Segments)
		for _, seg := range m.Segments {
			x.Records += seg.Items
			if fi, err := os.Stat(filepath.Join(recall.IndexDir(s.cfg.Home), seg.Name)); err == nil {
				x.Bytes += fi.Size()
			}
		}
	}
	if x.Failure, err = recall.ReadIndexFailure(s.cfg.Home); err != nil {
		x.Failure = &recall.IndexFailure{Error: "unreadable record of the last failure: " + err.Error()}
	}
	_, _, seqs, err := s.db.EpisodeChanges(ctx, after)
	x.Behind = len(seqs)
	return x, err
}

// consolidation is where belief consolidation stands.
type consolidation struct {
	LastAt    time.Time `json:"last_at,omitzero"`
	Pending   int       `json:"pending_episodes"`
	Threshold int       `json:"episode_threshold"`
	DueBy     time.Time `json:"due_by,omitzero"`
}

type runReport struct {
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Error      string    `json:"error,omitempty"`
}

func cmdStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags("status", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	r := statusReport{Home: s.cfg.Home, Database: s.cfg.DBPath()}
	if r.Captures, err = s.db.CaptureCounts(ctx); err != nil {
		return err
	}
	r.Pending = r.Captures["pending"]
	if r.Episodes, err = s.db.EpisodeCount(ctx); err != nil {
		return err
	}
	if r.Kinds.Episodes, r.Kinds.Beliefs, r.Lifecycle, err = s.db.KindCounts(ctx); err != nil {
		return err
	}
	if r.Beliefs, err = s.db.BeliefCounts(ctx); err != nil {
		return err
	}
	r.Review = reviewCounts{Mode: s.cfg.Review, Levels: map[string]int{}}
	q, err := review.Queue(ctx, s.db, s.cfg.Review, time.Now())
	if err != nil {
		return err
	}
	r.Review.Waiting = len(q)
	levels, err := s.db.BeliefLevels(ctx)
	if err != nil {
		return err
	}
	for _, l := range levels {
		r.Review.Levels[review.LevelName(l)]++
	}
	cores, err := s.db.CoreFiles(ctx)
	if err != nil {
		return err
	}
	r.Review.CoreFiles = []string{}
	for _, f := range cores {
		r.Review.CoreFiles = append(r.Review.CoreFiles, f.Path)
	}
	cp, err := consolidate.LoadCheckpoint(ctx, s.db)
	if err != nil {
		return err
	}
	r.Consolidation = consolidation{LastAt: cp.At, Threshold: s.cfg.BeliefEpisodeThreshold}
	if !cp.At.IsZero() {
		r.Consolidation.DueBy = cp.At.Add(s.cfg.BeliefInterval)
	}
	if r.Consolidation.Pending, err = s.db.CountEpisodesAfter(ctx, cp.Seq); err != nil {
		return err
	}
	files, _ := spool.List(s.cfg.SpoolDir())
	r.SpoolFiles = len(files)
	if r.Quarantine, err = s.db.QuarantineCounts(ctx); err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.cfg.DBPath() + suffix); err == nil {
			r.DatabaseBytes += fi.Size()
		}
	}
	if run, ok, err := s.db.LastRun(ctx, ""); err != nil {
		return err
	} else if ok {
		r.LastRun = &runReport{StartedAt: run.StartedAt, FinishedAt: run.FinishedAt, Error: run.Error}
		r.LastRunStats = run.Stats
	}
	if r.WorkerStale, _, err = stophook.WorkerStale(ctx, s.db, time.Now()); err != nil {
		return err
	}
	if at, ok, err := s.db.OldestPending(ctx); err != nil {
		return err
	} else if ok {
		r.OldestPending = at
	}
	dir, _ := binDir()
	r.Schedulers = setup.Schedulers(ctx, setup.DefaultOptions(s.cfg, dir))
	if r.Schedulers == nil {
		r.Schedulers = []setup.SchedulerState{}
	}
	r.SelfSchedule = s.cfg.SelfSchedule
	r.Extractor, r.Embedder = worker.Describe(s.cfg)
	if s.cfg.ClaudeEnabled() {
		r.LLMToday = &llmToday{Usage: claudellm.ReadUsage(s.cfg.Home, time.Now()), DailyCalls: s.cfg.LLMDailyCalls,
			DailyTokens: s.cfg.LLMDailyTokens}
	}
	r.Model = worker.Model(s.cfg)
	if r.Vectors.Episodes, r.Vectors.Beliefs, err = s.db.EmbedderCounts(ctx); err != nil {
		return err
	}
	if r.MemoryFiles, err = promote.Inspect(ctx, promote.LocationsFrom(s.cfg), s.db); err != nil {
		return err
	}
	if r.SearchIndex, err = inspectIndex(ctx, s); err != nil {
		return err
	}
	if sr, err := share.Inspect(ctx, s.db, s.cfg.ShareURL, s.cfg.SharePersonal, s.cfg.ShareURL != ""); err != nil {
		return err
	} else if sr.Configured || len(sr.Projects) > 0 {
		r.Share = &sr
	}
	r.Problems = health.Problems(append(health.Install(s.cfg), health.Worker(ctx, s.cfg, s.db, time.Now())...))
	if r.Problems == nil {
		r.Problems = []health.Finding{}
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	total := 0
	for _, n := range r.Captures {
		total += n
	}
	last := "never"
	if r.LastRun != nil {
		last = fmt.Sprintf("%s (%s ago)", r.LastRun.FinishedAt.Format(time.RFC3339), time.Since(r.LastRun.FinishedAt).Round(time.Second))
		if r.LastRun.Error != "" {
			last += ", failed: " + r.LastRun.Error
		}
	}
	fmt.Fprintf(e.stdout, "home:       %s\n", r.Home)
	fmt.Fprintf(e.stdout, "database:   %s (%.1f MB)\n", r.Database, float64(r.DatabaseBytes)/1e6)
	fmt.Fprintf(e.stdout, "captures:   %d (%d pending)\n", total, r.Pending)
	fmt.Fprintf(e.stdout, "episodes:   %d\n", r.Episodes)
	fmt.Fprintf(e.stdout, "beliefs:    %s\n", counts(r.Beliefs))
	fmt.Fprintf(e.stdout, "kinds:      episodes %s; active beliefs %s\n", counts(r.Kinds.Episodes), counts(r.Kinds.Beliefs))
	if n := r.Lifecycle["archived"] + r.Lifecycle["expired"]; n > 0 {
		fmt.Fprintf(e.stdout, "lifetimes:  %d episodes out of recall (archived %d, expired %d)\n", n, r.Lifecycle["archived"], r.Lifecycle["expired"])
	}
	fmt.Fprintf(e.stdout, "review:     %d waiting (ENGRAM_REVIEW=%s)", r.Review.Waiting, r.Review.Mode)
	for _, l := range []string{review.LongTerm, review.Core, review.Pinned, review.Denied} {
		if n := r.Review.Levels[review.LevelName(l)]; n > 0 {
			fmt.Fprintf(e.stdout, "; %s %d", review.LevelName(l), n)
		}
	}
	fmt.Fprintln(e.stdout)
	if c := r.Consolidation; c.LastAt.IsZero() {
		fmt.Fprintf(e.stdout, "consolidation: never run; %d episodes waiting (it runs at the next worker cycle)\n", c.Pending)
	} else {
		fmt.Fprintf(e.stdout, "consolidation: last %s; %d of %d new episodes; due by %s at the latest\n",
			c.LastAt.Format(time.RFC3339), c.Pending, c.Threshold, c.DueBy.Format(time.RFC3339))
	}
	fmt.Fprintf(e.stdout, "spool:      %d files\n", r.SpoolFiles)
	if len(r.Quarantine) > 0 {
		fmt.Fprintf(e.stdout, "quarantine: %s held out of their step (engram-worker quarantine list)\n", counts(r.Quarantine))
	}
	switch x := r.SearchIndex; {
	case x.Error != "":
		fmt.Fprintf(e.stdout, "search index: unreadable (%s); the next worker cycle rebuilds it\n", x.Error)
	case !x.Built:
		fmt.Fprintf(e.stdout, "search index: not built yet (the next worker cycle builds it)\n")
	default:
		fmt.Fprintf(e.stdout, "search index: %d segments, %d records, %.1f MB, synced %s; %d episodes changed since\n",
			x.Segments, x.Records, float64(x.Bytes)/1e6, x.SyncedAt.Format(time.RFC3339), x.Behind)
	}
	if l := r.SearchIndex.failureLine(); l != "" {
		fmt.Fprintf(e.stdout, "              %s\n", l)
	}
	if r.WorkerStale {
		last += fmt.Sprintf("; it should run every %s: engram-worker doctor says why not", config.WorkerInterval)
	}
	fmt.Fprintf(e.stdout, "last run:   %s\n", last)
	if !r.OldestPending.IsZero() {
		fmt.Fprintf(e.stdout, "waiting:    the oldest pending capture since %s\n", r.OldestPending.UTC().Format(time.RFC3339))
	}
	active := false
	for i, sc := range r.Schedulers {
		label := "scheduler: "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(e.stdout, "%s %s\n", label, sc.Detail)
		active = active || sc.Active
	}
	switch {
	case active:
	case r.SelfSchedule:
		fmt.Fprintf(e.stdout, "scheduler:  nothing active; the Stop hook starts the worker when it has not run for %s\n", stophook.StaleAfter)
	default:
		fmt.Fprintf(e.stdout, "scheduler:  nothing active, and ENGRAM_SELF_SCHEDULE=false: run engram-worker run, or engram-worker setup to install a scheduler\n")
	}
	fmt.Fprintf(e.stdout, "extractor:  %s\nembedder:   %s\n", r.Extractor, r.Embedder)
	if r.LLMToday != nil {
		fmt.Fprintln(e.stdout, r.LLMToday.line(time.Now()))
	}
	if r.Share != nil {
		for _, l := range shareLines(*r.Share) {
			fmt.Fprintln(e.stdout, l)
		}
	}
	fmt.Fprintln(e.stdout, modelLine(r.Model))
	if r.Model.Installed && r.Model.Enabled && r.Embedder == minilm.Name && r.Episodes > 0 {
		done := r.Vectors.Episodes[minilm.Name]
		if done < r.Episodes {
			fmt.Fprintf(e.stdout, "vectors:    %d of %d episodes embedded by %s (%.0f%%); the worker cycles embed the rest, newest first\n",
				done, r.Episodes, minilm.Name, 100*float64(done)/float64(r.Episodes))
		} else {
			fmt.Fprintf(e.stdout, "vectors:    all %d episodes embedded by %s\n", r.Episodes, minilm.Name)
		}
	}
	for i, m := range r.MemoryFiles {
		label := "memory:    "
		if i > 0 {
			label = "           "
		}
		what := m.Kind
		if m.Project != "" {
			what += " " + m.Project
		}
		fmt.Fprintf(e.stdout, "%s %s (%s): %s\n", label, m.Path, what, m.Describe())
	}
	for i, p := range r.Review.CoreFiles {
		label := "core:      "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(e.stdout, "%s %s (engram's core-memory block)\n", label, p)
	}
	if len(r.Problems) == 0 {
		fmt.Fprintln(e.stdout, "problems:   none found by the checks doctor shares (engram-worker doctor checks the rest)")
	}
	for i, f := range r.Problems {
		label := "problems:  "
		if i > 0 {
			label = "           "
		}
		fmt.Fprintf(e.stdout, "%s %s %s: %s\n", label, f.Status, f.Name, f.Detail)
	}
	return nil
}

func counts(m map[string]int) string { return health.Counts(m) }
