// Command engram-hook-stop is Claude Code's Stop hook: it captures the turn
// that just ended. It prints nothing and always exits 0.
package main

import (
	"context"
	"os"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/stophook"
)

func main() {
	defer func() {
		recover() // a hook must never fail Claude Code, not even on a bug of ours
		os.Exit(0)
	}()
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
