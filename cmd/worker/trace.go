package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/engram-memory/engram/internal/gitroot"

	"github.com/engram-memory/engram/internal/thread"
)

// cmdTrace lists the threads of work, or shows one as a timeline: by id
// (tr_…, or the bx_… or ep_… of one of its boxes) or by topic words.
func cmdTrace(ctx context.Context, e *env, args []string) error {
	fs := newFlags("trace", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	project := fs.String("project", "", "only the threads of this project (a directory in it); default: every project's")
	flagArgs, words := splitQuery(args)
	if err := fs.Parse(flagArgs); err != nil {
		return flagError(err)
	}
	words = append(words, fs.Args()...)
	query := strings.TrimSpace(strings.Join(words, " "))
	projectPath := ""
	if *project != "" {
		abs, err := filepath.Abs(*project)
		if err != nil {
			return usagef("--project %q: %v", *project, err)
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			return usagef("--project %q: not a directory", *project)
		}
		projectPath, _ = gitroot.Find(abs)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	if query == "" {
		ts, err := thread.Traces(ctx, s.db, projectPath)
		if err != nil {
			return err
		}
		if *asJSON {
			if ts == nil {
				ts = []thread.Trace{}
			}
			return enc.Encode(ts)
		}
		thread.WriteList(e.stdout, ts)
		return nil
	}
	t, err := thread.Find(ctx, s.db, query, projectPath)
	if err != nil {
		return err
	}
	if *asJSON {
		return enc.Encode(t)
	}
	thread.WriteTimeline(e.stdout, t)
	return nil
}
