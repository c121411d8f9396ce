package main

import (
	"context"
	"os"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/mcpserver"
)

// cmdMCP serves the memory tools on stdin and stdout until the client
// disconnects. Claude Code starts it in the session's working directory,
// whose git root is the project, with CLAUDE_CODE_SESSION_ID set. Stdout belongs to the protocol: logs go to
// $ENGRAM_HOME/logs/mcp.log.
func cmdMCP(ctx context.Context, e *env, args []string) error {
	fs := newFlags("mcp", e.stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	project := ""
	if wd, err := os.Getwd(); err == nil {
		project, _ = gitroot.Find(wd)
	}
	log := logx.New(cfg.LogDir(), "mcp.log", cfg.LogLevel)
	// Claude Code names the session in the server's environment (measured
	// with 2.1.330); an id that would not pass as a hook's is ignored.
	session := os.Getenv("CLAUDE_CODE_SESSION_ID")
	if err := hookio.ValidSessionID(session); err != nil {
		session = ""
	}
	log.Info("mcp server start", "project", project, "session", session, "version", version)
	srv := mcpserver.New(mcpserver.Options{Config: cfg, Project: project, SessionID: session, Version: version, Log: log})
	defer srv.Close()
	err = srv.RunStdio(ctx)
	log.Info("mcp server end", "err", err)
	return err
}
