package main

import (
	"context"
	"encoding/json"
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
	"github.com/engram-memory/engram/internal/health"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/store"
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
	checkMCP(add, setup.UserConfigFor(cfg))

	// Scheduler.
	dir, _ := binDir()
	addFindings(health.Scheduler(ctx, cfg, dir))

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
		addFindings(health.Worker(ctx, cfg, db, time.Now()))
		checkSearchIndex(ctx, add, cfg, db)
		addFindings([]health.Finding{health.Import(cfg)})
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
	addFindings([]health.Finding{health.Model(cfg)})

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

// checkMemoryFiles reports how each MEMORY.md engram writes stands against
// the client's thresholds.
func checkMemoryFiles(ctx context.Context, add func(name, status, format string, a ...any), cfg config.Config, db *store.DB) {
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
