package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// prompts.json holds the prompts of the benchmarks, one per kind; the Go
// benchmarks of internal/recall read the same file.
//
//go:embed prompts.json
var promptsJSON []byte

type benchPrompt struct {
	Kind   string `json:"kind"`
	Prompt string `json:"prompt"`
	About  string `json:"about"`
	// Injects: the hook must inject something for this prompt (the
	// benchmark fails when it prints nothing); false: it must print
	// nothing.
	Injects bool `json:"injects"`
	// InjectsReembedded: the hook must inject something for this prompt
	// also when every vector is the model's (bench/prompt-hook.sh
	// REEMBED=1). A prompt that injects without it is reported there, not
	// checked: on the model's vectors the gate may find none of its
	// matches near enough in meaning.
	InjectsReembedded bool `json:"injects_reembedded"`
	// RealCoverage: with storegen -real-vectors, the records whose text
	// holds at least this share of the prompt's terms (an injecting
	// prompt's) get the model's vectors.
	RealCoverage float64 `json:"real_coverage"`
}

// inputs: storegen inputs -dir DIR -cwd CWD writes DIR/<kind>.json, the
// UserPromptSubmit hook's stdin for each prompt, and prints the kinds.
func inputs(args []string) error {
	fs := flag.NewFlagSet("inputs", flag.ExitOnError)
	dir := fs.String("dir", "", "directory to write the inputs to")
	cwd := fs.String("cwd", ProjectRoot+"/"+projectNames[0], "the session's working directory (its project)")
	session := fs.String("session", "0b5e0c1e-5a11-4c0d-9e2f-00000000b0b0", "session id")
	injecting := fs.Bool("injecting", false, "print only the kinds meant to inject something (prompts.json's injects)")
	reembedded := fs.Bool("reembedded", false, "with -injecting: meant to inject on stores whose every vector is the model's "+
		"(prompts.json's injects_reembedded)")
	fs.Parse(args)
	if *dir == "" {
		return errors.New("inputs: -dir is required")
	}
	var ps []benchPrompt
	if err := json.Unmarshal(promptsJSON, &ps); err != nil {
		return fmt.Errorf("prompts.json: %w", err)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for _, p := range ps {
		b, err := json.Marshal(map[string]string{"session_id": *session, "transcript_path": "/tmp/engram-bench/transcript.jsonl",
			"cwd": *cwd, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": p.Prompt})
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*dir, p.Kind+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
		if !*injecting || (p.Injects && !*reembedded) || (p.InjectsReembedded && *reembedded) {
			fmt.Println(p.Kind)
		}
	}
	return nil
}

// injected: storegen injected < HOOK-OUTPUT prints the length in bytes of
// the additionalContext the hook printed (0 when it printed nothing).
func injected(args []string) error {
	fs := flag.NewFlagSet("injected", flag.ExitOnError)
	fs.Parse(args)
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	n, err := injectedBytes(b)
	if err != nil {
		return err
	}
	fmt.Println(n)
	return nil
}

// injectedBytes is the length of the additionalContext in the hook's
// output b: 0 for no output, an error for anything but one answer.
func injectedBytes(b []byte) (int, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return 0, nil
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&out); err != nil {
		return 0, fmt.Errorf("injected: the hook's output is not its JSON answer: %w: %.200q", err, b)
	}
	if d.More() || out.HookSpecificOutput.HookEventName != "UserPromptSubmit" {
		return 0, fmt.Errorf("injected: the hook printed something else than one UserPromptSubmit answer: %.200q", b)
	}
	return len(out.HookSpecificOutput.AdditionalContext), nil
}
