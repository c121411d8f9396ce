package health

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/stophook"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// collector gathers findings with a printf-style add.
type collector []Finding

func (c *collector) add(name, status, format string, a ...any) {
	*c = append(*c, finding(name, status, format, a...))
}

// Worker checks the worker's runs in the store: when it last ran (a
// warning when never, when that run failed, or when it is overdue:
// stophook.WorkerStale, the rule the Stop hook's self-scheduling uses),
// captures waiting longer than that, captures that failed to become
// episodes, and items held out of a step (quarantine).
func Worker(ctx context.Context, cfg config.Config, db *store.DB, now time.Time) []Finding {
	var c collector
	stale, _, err := stophook.WorkerStale(ctx, db, now)
	if err != nil {
		c.add("last run", Fail, "%v", err)
		return c
	}
	run, ok, err := db.LastRun(ctx, "")
	switch {
	case err != nil:
		c.add("last run", Fail, "%v", err)
	case !ok:
		c.add("last run", Warn, "the worker has never run: nothing captured is turned into memories until it does (engram-worker run)")
	default:
		status, detail := OK, fmt.Sprintf("%s, %s ago", run.FinishedAt.UTC().Format(time.RFC3339), now.Sub(run.FinishedAt).Round(time.Second))
		if run.Error != "" {
			status, detail = Warn, detail+"; the last worker run failed: "+run.Error
		}
		if stale {
			status = Warn
			detail += fmt.Sprintf("; it should run every %s: is its scheduler installed and running?", config.WorkerInterval)
		}
		c.add("last run", status, "%s", detail)
	}
	if at, ok, err := db.OldestPending(ctx); err == nil && ok && now.Sub(at) > stophook.StaleAfter {
		c.add("pending captures", Warn, "captures have waited for the worker since %s (%s)", at.UTC().Format(time.RFC3339), now.Sub(at).Round(time.Minute))
	}
	if counts, err := db.CaptureCounts(ctx); err == nil && counts[store.CaptureFailed] > 0 {
		c.add("captures", Warn, "%d captures failed to become episodes (see %s)", counts[store.CaptureFailed], filepath.Join(cfg.LogDir(), "worker.log"))
	}
	items, err := db.ListQuarantine(ctx, false)
	switch {
	case err != nil:
		c.add("quarantine", Fail, "%v", err)
	case len(items) == 0:
		c.add("quarantine", OK, "no item held out of the worker's steps")
	default:
		byStage := map[string]int{}
		for _, q := range items {
			byStage[q.Stage]++
		}
		reason, _, _ := strings.Cut(items[0].Reason, "\n")
		c.add("quarantine", Warn, "%s held out of their step; the latest, %s: %s (engram-worker quarantine list; a new build tries them again)",
			Counts(byStage), items[0].ID, reason)
	}
	return c
}

// Counts renders counts as "total (k n, …)", keys in order; "0" when
// they sum to nothing.
func Counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	total := 0
	for k, n := range m {
		keys = append(keys, k)
		total += n
	}
	if total == 0 {
		return "0"
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// Import checks that Claude Code loads engram's global MEMORY.md: the
// import line in CLAUDE.md.
func Import(cfg config.Config) Finding {
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
		return finding("memory import", OK, "%s imports %s", claudeMD, filepath.Join(cfg.Home, "MEMORY.md"))
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return finding("memory import", Warn, "%s: %v", claudeMD, err)
	case Plugin(cfg) != "":
		return finding("memory import", Warn, "%s lacks the line %s: Claude Code does not load engram's global MEMORY.md; "+
			"add the line yourself (the plugin does not, and setup should not run beside the plugin)", claudeMD, line)
	default:
		return finding("memory import", Warn, "%s lacks the line %s: Claude Code does not load engram's global MEMORY.md (run engram-worker setup)", claudeMD, line)
	}
}

// Model checks the sentence embedder: installed, opening, of the format
// this machine reads fastest. Without it engram works by words alone (a
// warning); an installed model that does not open is a failure.
func Model(cfg config.Config) Finding {
	st := worker.Model(cfg)
	switch {
	case st.Problem != "":
		return finding("sentence embedder", Fail, "%s", st.Describe())
	case st.Installed && st.Enabled:
		m, err := minilm.Open(st.Dir)
		if err != nil {
			return finding("sentence embedder", Fail, "%s does not open: %v (reinstall: engram-worker model install DIR)", st.Dir, err)
		}
		m.Close()
		if st.Outdated {
			return finding("sentence embedder", Warn, "%s", st.Describe())
		}
		return finding("sentence embedder", OK, "%s", st.Describe())
	default:
		return finding("sentence embedder", Warn, "%s", st.Describe())
	}
}

// Scheduler says what schedules the worker (setup.Schedulers, with the
// binaries in binDir): a warning when nothing active does, the Stop
// hook's fallback then being all that runs it.
func Scheduler(ctx context.Context, cfg config.Config, binDir string) []Finding {
	var c collector
	scheds := setup.Schedulers(ctx, setup.DefaultOptions(cfg, binDir))
	active := false
	for _, sc := range scheds {
		active = active || sc.Active
	}
	for _, sc := range scheds {
		status := OK
		if !active {
			status = Warn
		}
		c.add("scheduler", status, "%s", sc.Detail)
	}
	if active {
		return c
	}
	// What would schedule it: what setup installs, or, where it can
	// install nothing (as setup said), what is missing.
	remedy := "engram-worker setup installs a scheduler"
	if len(scheds) > 0 {
		remedy = "until the scheduler above runs"
	} else if ok, why := setup.Schedulable(ctx, setup.DefaultOptions(cfg, binDir)); !ok {
		remedy = why + ": nothing can schedule it here; install cron and run engram-worker setup again to have it run every " +
			config.WorkerInterval.String()
	}
	if cfg.SelfSchedule {
		c.add("scheduler", Warn, "nothing schedules the worker: the Stop hook starts it when it has not run for %s, so it runs only while Claude Code is in use (%s)", stophook.StaleAfter, remedy)
	} else {
		c.add("scheduler", Warn, "nothing schedules the worker and ENGRAM_SELF_SCHEDULE=false: captures wait until engram-worker run (%s)", remedy)
	}
	return c
}
