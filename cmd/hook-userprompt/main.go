// Command engram-hook-userprompt is Claude Code's UserPromptSubmit hook: it
// injects the few memories and beliefs that matter for the prompt. It always
// exits 0 (exit code 2 would erase the user's prompt) and prints nothing
// but its JSON answer.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/prompthook"
)

// version and commit are set at build time with
// -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

func main() {
	defer func() {
		recover() // never fail the prompt, not even on a bug of ours
		os.Exit(0)
	}()
	if len(os.Args) == 2 && os.Args[1] == "--version" { // Claude Code passes no arguments
		fmt.Printf("%s %s (commit %s, %s %s/%s)\n", "engram-hook-userprompt", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	if hookio.Internal() {
		return // engram's own model call: nothing to recall into it
	}
	start := time.Now()
	in, inErr := hookio.Read(os.Stdin)
	if inErr == nil && prompthook.Skip(in) {
		return // a trivial prompt: not even the configuration is needed
	}
	cfg, err := config.Load()
	if err != nil {
		return
	}
	log := logx.New(cfg.LogDir(), "hook-userprompt.log", cfg.LogLevel)
	if inErr == nil {
		err = prompthook.Answer(context.Background(), cfg, in, start, os.Stdout, log)
	} else {
		err = inErr
	}
	if err != nil {
		log.Warn("prompt hook", "err", err)
	}
}
