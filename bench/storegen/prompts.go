package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
}

// inputs: storegen inputs -dir DIR -cwd CWD writes DIR/<kind>.json, the
// UserPromptSubmit hook's stdin for each prompt, and prints the kinds.
func inputs(args []string) error {
	fs := flag.NewFlagSet("inputs", flag.ExitOnError)
	dir := fs.String("dir", "", "directory to write the inputs to")
	cwd := fs.String("cwd", ProjectRoot+"/"+projectNames[0], "the session's working directory (its project)")
	session := fs.String("session", "0b5e0c1e-5a11-4c0d-9e2f-00000000b0b0", "session id")
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
		fmt.Println(p.Kind)
	}
	return nil
}
