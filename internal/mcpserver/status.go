package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/health"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/spool"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/worker"
)

// status is memory_status: the store's counts, the last run, the
// extractor and embedder, and the problems `engram-worker doctor` would
// find that can be seen from here without running anything (doctor also
// checks the scheduler, the database's integrity and the LLM endpoint).
func (s *Server) status(ctx context.Context, _ StatusInput) (string, error) {
	now := s.opts.Now()
	var b strings.Builder
	var problems []string
	problem := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }

	fmt.Fprintf(&b, "engram status\nhome:       %s\n", s.cfg.Home)
	if s.opts.Project != "" {
		fmt.Fprintf(&b, "project:    %s\n", s.opts.Project)
	}
	db, err := s.store(ctx)
	switch {
	case errors.Is(err, errNoStore):
		problem("%v", err)
	case err != nil:
		problem("the database %s cannot be opened: %v", s.cfg.DBPath(), err)
	default:
		if err := s.storeStatus(ctx, db, &b, problem, now); err != nil {
			return "", err
		}
	}
	extractor, embedder := worker.Describe(s.cfg)
	fmt.Fprintf(&b, "extractor:  %s\nembedder:   %s\n", extractor, embedder)

	if files, err := spool.List(s.cfg.SpoolDir()); err == nil && len(files) > 0 {
		problem("%d capture file(s) wait in %s: the hooks could not reach the store; the worker's next run stores them", len(files), s.cfg.SpoolDir())
	}
	if f, err := recall.ReadIndexFailure(s.cfg.Home); err != nil || f != nil {
		if err != nil {
			f = &recall.IndexFailure{Error: err.Error()}
		}
		problem("the search index's last update failed at %s: %s; the prompt hook searches the index as it was before until an update succeeds (every worker cycle tries)",
			f.At.In(now.Location()).Format(time.RFC3339), f.Error)
	}
	s.installProblems(problem)

	if len(problems) == 0 {
		b.WriteString("problems:   none found (engram-worker doctor also checks the scheduler, the database's integrity and the LLM endpoint)\n")
	} else {
		b.WriteString("problems:\n")
		for _, p := range problems {
			fmt.Fprintf(&b, "- %s\n", p)
		}
		b.WriteString("(engram-worker doctor checks the whole installation)\n")
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func (s *Server) storeStatus(ctx context.Context, db *store.DB, b *strings.Builder, problem func(string, ...any), now time.Time) error {
	eps, err := db.EpisodeCount(ctx)
	if err != nil {
		return err
	}
	beliefs, err := db.BeliefCounts(ctx)
	if err != nil {
		return err
	}
	caps, err := db.CaptureCounts(ctx)
	if err != nil {
		return err
	}
	run, ran, err := db.LastRun(ctx, "")
	if err != nil {
		return err
	}
	size := int64(0)
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.cfg.DBPath() + suffix); err == nil {
			size += fi.Size()
		}
	}
	fmt.Fprintf(b, "database:   %s (%.1f MB)\n", s.cfg.DBPath(), float64(size)/1e6)
	fmt.Fprintf(b, "episodes:   %d\n", eps)
	fmt.Fprintf(b, "beliefs:    %s\n", counts(beliefs))
	fmt.Fprintf(b, "captures:   %s\n", counts(caps))
	if !ran {
		b.WriteString("last run:   never\n")
	} else {
		age := now.Sub(run.FinishedAt)
		fmt.Fprintf(b, "last run:   %s (%s ago)", run.FinishedAt.In(now.Location()).Format(time.RFC3339), age.Round(time.Second))
		if run.Error != "" {
			fmt.Fprintf(b, ", failed: %s", run.Error)
		}
		b.WriteString("\n")
	}
	// The worker's problems as doctor finds them (package health).
	for _, f := range health.Problems(health.Worker(ctx, s.cfg, db, now)) {
		problem("%s: %s", f.Name, f.Detail)
	}
	return nil
}

// installProblems checks what the hooks write and whether Claude Code
// runs them (package health, as doctor does: settings.json's hooks or the
// plugin), the MCP registration, and whether Claude Code loads MEMORY.md
// files.
func (s *Server) installProblems(problem func(string, ...any)) {
	for _, f := range health.Problems(health.Install(s.cfg)) {
		problem("%s: %s", f.Name, f.Detail)
	}
	if health.Plugin(s.cfg) != "" {
		return // the plugin registers the MCP server itself
	}
	path := s.opts.UserConfig
	reg, err := setup.RegisteredMCP(path)
	switch {
	case err != nil:
		problem("%s cannot be read: %v", path, err)
	case !reg.Ours:
		problem("engram's MCP server is not registered in %s (this session started it from another configuration): engram-worker setup registers it for every session", path)
	}
}

// counts renders a map of counts as "total (k n, …)".
func counts(m map[string]int) string { return health.Counts(m) }
