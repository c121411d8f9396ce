package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/engram-memory/engram/internal/spool"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags("version", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "engram", version)
	return nil
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
	counts, err := s.db.CaptureCounts(ctx)
	if err != nil {
		return err
	}
	files, _ := spool.List(s.cfg.SpoolDir())
	var size int64
	if fi, err := os.Stat(s.cfg.DBPath()); err == nil {
		size = fi.Size()
	}
	out := map[string]any{
		"home": s.cfg.Home, "database": s.cfg.DBPath(), "database_bytes": size,
		"captures": counts, "spool_files": len(files),
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	total := 0
	for _, n := range counts {
		total += n
	}
	fmt.Fprintf(e.stdout, "home:      %s\ndatabase:  %s (%d bytes)\ncaptures:  %d (pending %d)\nspool:     %d files\n",
		s.cfg.Home, s.cfg.DBPath(), size, total, counts["pending"], len(files))
	return nil
}
