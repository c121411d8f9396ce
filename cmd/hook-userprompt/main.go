// Command engram-hook-userprompt is Claude Code's UserPromptSubmit hook: it
// injects the few memories and beliefs that matter for the prompt. It always
// exits 0 (exit code 2 would erase the user's prompt) and prints nothing
// but its JSON answer.
package main

import (
	"context"
	"os"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/prompthook"
)

func main() {
	defer func() {
		recover() // never fail the prompt, not even on a bug of ours
		os.Exit(0)
	}()
	cfg, err := config.Load()
	if err != nil {
		return
	}
	log := logx.New(cfg.LogDir(), "hook-userprompt.log", cfg.LogLevel)
	if err := prompthook.Run(context.Background(), cfg, os.Stdin, os.Stdout, log); err != nil {
		log.Warn("prompt hook", "err", err)
	}
}
