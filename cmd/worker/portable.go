package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/portable"
	"github.com/engram-memory/engram/internal/recollect"
)

func cmdExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags("export", e.stderr)
	out := fs.String("out", "-", "file to write (- for standard output)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out != "-" {
		if fi, err := os.Stat(*out); err == nil && fi.IsDir() {
			return fmt.Errorf("--out %q is a directory: name the file to write", *out)
		}
		if fi, err := os.Stat(filepath.Dir(*out)); err != nil || !fi.IsDir() {
			return fmt.Errorf("--out %q: there is no directory %s to write it in", *out, filepath.Dir(*out))
		}
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	if *out == "-" {
		_, err := portable.Export(ctx, s.db, e.stdout)
		return err
	}
	// Write next to the target and rename, 0600: an export holds memories.
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".engram-export-*")
	if err != nil {
		return fmt.Errorf("--out %q: %w", *out, err)
	}
	defer os.Remove(tmp.Name())
	n, err := portable.Export(ctx, s.db, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "exported %d records to %s\n", n, *out)
	return nil
}

func cmdImport(ctx context.Context, e *env, args []string) error {
	fs := newFlags("import", e.stderr)
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	if fs.NArg() != 1 {
		return usagef("want one file to import (- for standard input), got %d arguments", fs.NArg())
	}
	name := fs.Arg(0)
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	// An import may forget memories (those the file says were forgotten):
	// a cycle running meanwhile could write files from what it read
	// before. Wait for it, as forget does.
	lk, err := waitWorkerLock(ctx, s.cfg.Home, forgetWorkerWait)
	if err != nil {
		return fmt.Errorf("a worker run is still going after %v; nothing was imported, try again when it ends: %w", forgetWorkerWait, err)
	}
	defer lk.Unlock()
	res, err := portable.Import(ctx, s.db, r)
	if err != nil {
		return fmt.Errorf("%s: %w (nothing was imported)", name, err)
	}
	t := res.Total()
	fmt.Fprintf(e.stdout, "imported %s from %s: %d added, %d skipped (already in the store), %d merged\n",
		plural(res.Records(), "record"), name, t.Added, t.Skipped, t.Merged)
	if d := res.Detail(); d != "" {
		fmt.Fprintf(e.stdout, "  %s\n", d)
	}
	var epIDs, blIDs, summaries []string
	for _, ep := range res.ForgottenEpisodes {
		epIDs, summaries = append(epIDs, ep.ID), append(summaries, ep.Summary)
	}
	for _, b := range res.ForgottenBeliefs {
		blIDs = append(blIDs, b.ID)
	}
	if len(epIDs)+len(blIDs) > 0 {
		fmt.Fprintf(e.stdout, "forgot what the file says was forgotten where it was made: %s\n", strings.Join(append(epIDs, blIDs...), ", "))
		// Their copies go too, as forget takes them out (this rewrites
		// the recollection files).
		return memory.ForgetCopies(ctx, s.db, s.cfg, epIDs, blIDs, summaries, time.Now(), s.log)
	}
	if !res.Changed() {
		return nil
	}
	if _, err := recollect.Build(ctx, s.db, s.cfg.Home, recollect.BuildOptions{}, time.Now()); err != nil {
		return fmt.Errorf("imported, but the recollection files could not be rewritten (the next run will): %w", err)
	}
	return nil
}
