// Command engram-hook-stop is Claude Code's Stop hook: it captures the turn
// that just ended. It prints nothing and always exits 0.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/stophook"
)

// version and commit are set at build time with
// -ldflags "-X main.version=… -X main.commit=…".
var (
	version = "dev"
	commit  = ""
)

func main() {
	defer func() {
		recover() // a hook must never fail Claude Code, not even on a bug of ours
		os.Exit(0)
	}()
	if len(os.Args) == 2 && os.Args[1] == "--version" { // Claude Code passes no arguments
		fmt.Printf("%s %s (commit %s, %s %s/%s)\n", "engram-hook-stop", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	if hookio.Internal() {
		return // engram's own model call: nothing to capture
	}
	cfg, err := config.Load()
	if err != nil {
		return // without a configuration there is nowhere to log to
	}
	log := logx.New(cfg.LogDir(), "hook-stop.log", cfg.LogLevel)
	if err := stophook.Run(context.Background(), cfg, os.Stdin, log); err != nil {
		log.Error("stop hook", "err", err)
	}
}
