package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/health"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/stophook"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// check is one finding of doctor.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
}

func cmdDoctor(ctx context.Context, e *env, args []string) error {
	fs := newFlags("doctor", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var checks []check
	add := func(name, status, format string, a ...any) {
		checks = append(checks, check{name, status, fmt.Sprintf(format, a...)})
	}
	cfg, err := config.Load()
	if err != nil {
		add("configuration", "fail", "%v", err)
		return report(e, checks, *asJSON)
	}
	add("configuration", "ok", "ENGRAM_HOME=%s CLAUDE_CONFIG_DIR=%s", cfg.Home, cfg.ClaudeConfigDir)

	// Binaries on PATH and the hooks Claude Code will run.
	for _, b := range []string{setup.WorkerBinary, setup.StopBinary, setup.UserPromptBinary} {
		if p, err := exec.LookPath(b); err == nil {
			add("binary "+b, "ok", "%s", p)
		} else {
			add("binary "+b, "warn", "not on PATH (the hooks use absolute paths, so this only matters for you)")
		}
	}
	// What the hooks write, and whether Claude Code runs them: the checks
	// status and memory_status share (package health).
	addFindings := func(fs []health.Finding) {
		for _, f := range fs {
			checks = append(checks, check{f.Name, f.Status, f.Detail})
		}
	}
	addFindings(health.Storage(cfg))
	addFindings(health.Hooks(cfg))
	if os.Getenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY") != "" {
		add("auto-memory", "warn", "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set: Claude Code will not load project MEMORY.md files")
	}
	checkMCP(add, setup.UserConfigFor(cfg))

	// Scheduler.
	checkSchedulers(ctx, add, cfg)

	// Store.
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{MustExist: true})
	if err != nil {
		add("database", "fail", "%s: %v (engram-worker run creates it)", cfg.DBPath(), err)
	} else {
		defer db.Close()
		if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
			add("database", "fail", "quick_check: %s %v", res, err)
		} else {
			v, _ := db.UserVersion(ctx)
			add("database", "ok", "%s, schema %d, quick_check ok", cfg.DBPath(), v)
		}
		checkLastRun(ctx, add, db)
		checkSearchIndex(ctx, add, cfg, db)
		if counts, err := db.CaptureCounts(ctx); err == nil && counts[store.CaptureFailed] > 0 {
			add("captures", "warn", "%d captures failed to ingest (see %s)", counts[store.CaptureFailed], filepath.Join(cfg.LogDir(), "worker.log"))
		}
		checkMemoryFiles(ctx, add, cfg, db)
		checkCoreFiles(ctx, add, cfg, db)
		checkShare(ctx, add, cfg, db)
	}
	if files, err := spool.List(cfg.SpoolDir()); err == nil && len(files) > 0 {
		add("spool", "warn", "%d captures wait in %s (the next run stores them)", len(files), cfg.SpoolDir())
	} else {
		add("spool", "ok", "empty")
	}

	// The sentence embedder: recall by meaning needs it; engram works without.
	switch st := worker.Model(cfg); {
	case st.Problem != "":
		add("sentence embedder", "fail", "%s", modelLine(st))
	case st.Installed && st.Enabled:
		if m, err := minilm.Open(st.Dir); err != nil {
			add("sentence embedder", "fail", "%s does not open: %v (reinstall: engram-worker model install DIR)", st.Dir, err)
		} else {
			m.Close()
			add("sentence embedder", "ok", "%s", modelLine(st))
		}
	default:
		add("sentence embedder", "warn", "%s", modelLine(st))
	}

	// The claude backend: the binary, and today's use (no call is made:
	// a check must not spend the user's quota).
	if cfg.ClaudeEnabled() {
		if bin, err := claudellm.FindBinary(cfg.ClaudeBin); err != nil {
			add("llm", "fail", "ENGRAM_LLM=claude: %v (the local extractor is used instead)", err)
		} else {
			u := llmToday{Usage: claudellm.ReadUsage(cfg.Home, time.Now()), DailyCalls: cfg.LLMDailyCalls, DailyTokens: cfg.LLMDailyTokens}
			status := "ok"
			if u.Auth > 0 || u.Failed > 0 || time.Now().Before(u.CooldownUntil) {
				status = "warn"
			}
			add("llm", status, "claude %s (model %s); %s", bin, cfg.ClaudeModel, u.line(time.Now()))
		}
	}
	// LLM endpoint.
	if cfg.LLMEnabled() && cfg.LLMBaseURL != "" {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, _ := http.NewRequestWithContext(cctx, http.MethodGet, strings.TrimRight(cfg.LLMBaseURL, "/")+"/models", nil)
		if cfg.LLMAPIKey != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.LLMAPIKey)
		}
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err != nil {
			add("llm", "fail", "%s unreachable: %v (the local extractor is used instead)", cfg.LLMBaseURL, err)
		} else {
			resp.Body.Close()
			status := "ok"
			if resp.StatusCode >= 400 {
				status = "warn"
			}
			add("llm", status, "%s answered %s", cfg.LLMBaseURL, resp.Status)
		}
	}
	return report(e, checks, *asJSON)
}

// checkMemoryFiles reports whether Claude Code loads engram's global
// MEMORY.md (the CLAUDE.md import line), and how each MEMORY.md engram
// writes stands against the 200 lines the client loads.
func checkMemoryFiles(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config, db *store.DB) {
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	line := setup.ImportLine(cfg.Home, home)
	claudeMD := filepath.Join(cfg.ClaudeConfigDir, "CLAUDE.md")
	data, err := os.ReadFile(claudeMD)
	imported := false
	for l := range strings.SplitSeq(string(data), "\n") {
		imported = imported || strings.TrimRight(l, " \t\r") == line
	}
	switch {
	case imported:
		add("memory import", "ok", "%s imports %s", claudeMD, filepath.Join(cfg.Home, "MEMORY.md"))
	case err != nil && !errors.Is(err, os.ErrNotExist):
		add("memory import", "warn", "%s: %v", claudeMD, err)
	default:
		add("memory import", "warn", "%s lacks the line %s: Claude Code does not load engram's global MEMORY.md (run engram-worker setup)", claudeMD, line)
	}
	loc := promote.LocationsFrom(cfg)
	if loc.SettingsProblem != "" {
		add("auto-memory directory", "warn", "%s", loc.SettingsProblem)
	}
	reports, err := promote.Inspect(ctx, loc, db)
	if err != nil {
		add("memory files", "fail", "%v", err)
		return
	}
	for _, r := range reports {
		status := "ok"
		if !r.UnderReminder || r.Problem != "" {
			status = "warn"
		}
		name := "memory " + r.Kind
		if r.Project != "" {
			name += " " + r.Project
		}
		add(name, status, "%s: %s", r.Path, r.Describe())
	}
}

// checkCoreFiles reports on each CLAUDE.md and AGENTS.md engram keeps a
// core-memory block in, or should: whether the block is there with its
// markers intact, and what keeps engram from writing it (a missing file,
// damaged markers, invalid UTF-8, a symlink out of its directory, a
// read-only file or directory).
func checkCoreFiles(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config, db *store.DB) {
	reports, err := promote.InspectCore(ctx, db, promote.LocationsFrom(cfg), cfg.CoreTarget)
	if err != nil {
		add("core memory", "fail", "%v", err)
		return
	}
	if len(reports) == 0 {
		add("core memory", "ok", "no belief is in core memory (engram-worker review approves beliefs for it)")
		return
	}
	for _, r := range reports {
		status := "ok"
		if r.Problem != "" {
			status = "warn"
		}
		name := "core " + filepath.Base(r.Path)
		if r.Project != "" {
			name += " " + r.Project
		} else {
			name += " global"
		}
		add(name, status, "%s: %s", r.Path, r.Describe())
	}
}

func report(e *env, checks []check, asJSON bool) error {
	failed := 0
	for _, c := range checks {
		if c.Status == "fail" {
			failed++
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return err
		}
	} else {
		// The names are padded to the longest, so that every detail
		// starts in the same column.
		width := 0
		for _, c := range checks {
			width = max(width, utf8.RuneCountInString(c.Name))
		}
		for _, c := range checks {
			fmt.Fprintln(e.stdout, strings.TrimRight(fmt.Sprintf("%-4s %-*s %s", c.Status, width, c.Name, c.Detail), " "))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d problem(s) found", failed)
	}
	return nil
}

// checkMCP finds engram's MCP server in Claude Code's user configuration
// file. Without it the hooks still work; the model only lacks the
// memory_* tools.
func checkMCP(add func(name, status, format string, a ...any), path string) {
	reg, err := setup.RegisteredMCP(path)
	switch {
	case err != nil:
		add("mcp server", "fail", "%s: %v (Claude Code reads its user settings and MCP servers from it)", path, err)
	case reg.Command == "":
		add("mcp server", "warn", "not registered in %s: run engram-worker setup to give Claude the memory_* tools", path)
	case !reg.Ours:
		add("mcp server", "warn", "the MCP server named %s in %s runs %s, not %s", setup.MCPServerName, path, reg.Command, setup.WorkerBinary)
	case len(reg.Args) != 1 || reg.Args[0] != setup.MCPCommand:
		add("mcp server", "fail", "%s runs %s %s, want the argument %q: run engram-worker setup", path, reg.Command, strings.Join(reg.Args, " "), setup.MCPCommand)
	default:
		if st, err := os.Stat(reg.Command); err != nil || st.Mode()&0o111 == 0 {
			add("mcp server", "fail", "%s registers %s, which is not an executable file: run engram-worker setup", path, reg.Command)
		} else {
			add("mcp server", "ok", "%s %s (in %s)", reg.Command, setup.MCPCommand, path)
		}
	}
}

// checkSchedulers says what schedules the worker: a warning when nothing
// active does, the Stop hook's fallback then being all that runs it.
func checkSchedulers(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config) {
	dir, _ := binDir()
	scheds := setup.Schedulers(ctx, setup.DefaultOptions(cfg, dir))
	active := false
	for _, sc := range scheds {
		active = active || sc.Active
	}
	for _, sc := range scheds {
		status := "ok"
		if !active {
			status = "warn"
		}
		add("scheduler", status, "%s", sc.Detail)
	}
	if active {
		return
	}
	// What would schedule it: what setup installs, or, where it can
	// install nothing (as setup said), what is missing.
	remedy := "engram-worker setup installs a scheduler"
	if len(scheds) > 0 {
		remedy = "until the scheduler above runs"
	} else if ok, why := setup.Schedulable(ctx, setup.DefaultOptions(cfg, dir)); !ok {
		remedy = why + ": nothing can schedule it here; install cron and run engram-worker setup again to have it run every " +
			config.WorkerInterval.String()
	}
	if cfg.SelfSchedule {
		add("scheduler", "warn", "nothing schedules the worker: the Stop hook starts it when it has not run for %s, so it runs only while Claude Code is in use (%s)", stophook.StaleAfter, remedy)
	} else {
		add("scheduler", "warn", "nothing schedules the worker and ENGRAM_SELF_SCHEDULE=false: captures wait until engram-worker run (%s)", remedy)
	}
}

// checkLastRun says when the worker last ran, warning when it has not for
// longer than twice its interval or failed, and since when captures wait.
func checkLastRun(ctx context.Context, add func(name, status, format string, a ...any), db *store.DB) {
	now := time.Now()
	stale, _, err := stophook.WorkerStale(ctx, db, now)
	if err != nil {
		add("last run", "fail", "%v", err)
		return
	}
	run, ok, err := db.LastRun(ctx, "")
	switch {
	case err != nil:
		add("last run", "fail", "%v", err)
	case !ok:
		add("last run", "warn", "the worker has never run: engram-worker run")
	default:
		status, detail := "ok", fmt.Sprintf("%s, %s ago", run.FinishedAt.UTC().Format(time.RFC3339), now.Sub(run.FinishedAt).Round(time.Second))
		if run.Error != "" {
			status, detail = "warn", detail+": "+run.Error
		}
		if stale {
			status = "warn"
			detail += fmt.Sprintf(" (it should run every %s)", config.WorkerInterval)
		}
		add("last run", status, "%s", detail)
	}
	if at, ok, err := db.OldestPending(ctx); err == nil && ok && now.Sub(at) > stophook.StaleAfter {
		add("pending captures", "warn", "captures have waited for the worker since %s (%s)", at.UTC().Format(time.RFC3339), now.Sub(at).Round(time.Minute))
	}
	checkQuarantine(ctx, add, db)
}

// checkQuarantine warns when a step of the cycle holds items it failed on,
// with how many and the latest reason.
func checkQuarantine(ctx context.Context, add func(name, status, format string, a ...any), db *store.DB) {
	items, err := db.ListQuarantine(ctx, false)
	switch {
	case err != nil:
		add("quarantine", "fail", "%v", err)
	case len(items) == 0:
		add("quarantine", "ok", "no item held out of the worker's steps")
	default:
		byStage := map[string]int{}
		for _, q := range items {
			byStage[q.Stage]++
		}
		reason, _, _ := strings.Cut(items[0].Reason, "\n")
		add("quarantine", "warn", "%s held out of their step; the latest, %s: %s (engram-worker quarantine list; a new build tries them again)",
			counts(byStage), items[0].ID, reason)
	}
}

// checkSearchIndex says how far the prompt hook's search index is behind
// the store, and why when its last update failed.
func checkSearchIndex(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config, db *store.DB) {
	x, err := inspectIndex(ctx, &session{cfg: cfg, db: db})
	switch {
	case err != nil:
		add("search index", "fail", "%v", err)
	case x.Failure != nil:
		add("search index", "warn", "%s", x.failureLine())
	case x.Error != "":
		add("search index", "warn", "unreadable (%s); the next worker cycle rebuilds it", x.Error)
	case !x.Built:
		add("search index", "warn", "not built yet: the next worker cycle builds it (until then the prompt hook finds memories by its recollection files only)")
	case x.Behind > 0:
		add("search index", "ok", "%d segments, %d records, synced %s; %d episodes changed since (the next worker cycle applies them)",
			x.Segments, x.Records, x.SyncedAt.UTC().Format(time.RFC3339), x.Behind)
	default:
		add("search index", "ok", "%d segments, %d records, synced %s, up to date", x.Segments, x.Records, x.SyncedAt.UTC().Format(time.RFC3339))
	}
}

// checkShare reports on sharing: whether the server answers, and how far
// behind this machine is in each direction.
func checkShare(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config, db *store.DB) {
	r, err := share.Inspect(ctx, db, cfg.ShareURL, cfg.SharePersonal, cfg.ShareURL != "")
	switch {
	case err != nil:
		add("sharing", "fail", "%v", err)
		return
	case !r.Configured && len(r.Projects) == 0:
		return // not used
	case !r.Configured:
		add("sharing", "warn", "%d projects enabled but ENGRAM_SHARE_URL is not set: %d changes wait on this machine", len(r.Projects), r.Pending)
		return
	}
	last := "never synced"
	if !r.LastOK.IsZero() {
		last = fmt.Sprintf("last synced %s ago", time.Since(r.LastOK).Round(time.Second))
	}
	behind := int64(0)
	for _, n := range r.Behind {
		behind += n
	}
	switch {
	case r.CheckError != "":
		add("sharing", "warn", "%s: %s; %s, %d local changes wait to be pushed (memory keeps working locally)", r.URL, r.CheckError, last, r.Pending)
	case r.LastError != "":
		add("sharing", "warn", "%s: the last sync failed: %s; %s; %d changes to push, %d to pull", r.URL, r.LastError, last, r.Pending, behind)
	case len(r.Projects) == 0 && !r.Personal:
		add("sharing", "warn", "%s: no project is enabled (engram-worker share enable, inside a repository) and personal sync is off: nothing is shared", r.URL)
	default:
		add("sharing", "ok", "%s as %s: %d projects, personal sync %v; %s; %d changes to push, %d to pull", r.URL, r.Role,
			len(r.Projects), r.Personal, last, r.Pending, behind)
	}
}
