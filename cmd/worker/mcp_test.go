package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPCommand runs `engram-worker mcp` as Claude Code does, a child
// process spoken to over its stdin and stdout, and calls a tool through it.
func TestMCPCommand(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := h.command("mcp")
	cmd.Env = append(cmd.Env, "CLAUDE_CODE_SESSION_ID=3f1c2a9e-0b7d-4e51-9a11-5d6c7e8f9a0b")
	dir, err := filepath.EvalSymlinks(t.TempDir()) // as getwd sees it
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	if got := cs.InitializeResult().ServerInfo.Name; got != "engram" {
		t.Errorf("server name %q", got)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_recall", Arguments: map[string]any{"query": "postgres invoices schema"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_recall: %v %+v", err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "— ID: ep_0000000000a1") || !strings.Contains(text, "[B] (") {
		t.Errorf("memory_recall:\n%s", text)
	}
	// A saved memory belongs to the session the client named.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_save", Arguments: map[string]any{"text": "We decided to release on Thursdays"}})
	if err != nil || res.IsError {
		t.Fatalf("memory_save: %v %+v", err, res)
	}
	id := strings.Fields(strings.TrimPrefix(res.Content[0].(*mcp.TextContent).Text, "Saved as "))[0]
	ep, err := h.db(t).GetEpisode(ctx, strings.TrimSuffix(id, ":"))
	if err != nil || ep.SessionID != "3f1c2a9e-0b7d-4e51-9a11-5d6c7e8f9a0b" || ep.ProjectPath != cmd.Dir {
		t.Errorf("saved episode: %v session %q project %q, want the session and %s", err, ep.SessionID, ep.ProjectPath, cmd.Dir)
	}
	// Closing the connection ends the server cleanly.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("engram-worker mcp exited %d\n%s", code, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("engram-worker mcp wrote to stderr:\n%s", stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(h.engram, "logs", "mcp.log")); err != nil || !strings.Contains(string(b), `"tool":"memory_recall"`) {
		t.Errorf("mcp.log: %v\n%s", err, b)
	}
}

func TestDoctorMCPCheck(t *testing.T) {
	h := newHome(t)
	bin := t.TempDir()
	for _, b := range []string{"engram-hook-stop", "engram-hook-userprompt", "engram-worker"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	user := filepath.Join(h.home, ".claude.json")
	doctorLine := func() string {
		t.Helper()
		out, _, _ := h.run(t, "", "doctor")
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "mcp server") {
				return l
			}
		}
		t.Fatalf("doctor has no mcp server line:\n%s", out)
		return ""
	}
	if l := doctorLine(); !strings.HasPrefix(l, "warn") || !strings.Contains(l, "not registered in "+user) {
		t.Errorf("before setup: %q", l)
	}
	if out, errOut, code := h.run(t, "", "setup", "--bin-dir", bin); code != 0 || !strings.Contains(out, user+": registered the MCP server engram") {
		t.Fatalf("setup: %d\n%s%s", code, out, errOut)
	}
	if l := doctorLine(); !strings.HasPrefix(l, "ok") || !strings.Contains(l, filepath.Join(bin, "engram-worker")+" mcp") {
		t.Errorf("after setup: %q", l)
	}
	// CLAUDE_CONFIG_DIR moves the file the client reads.
	cmd := h.command("doctor")
	cmd.Env = append(cmd.Env, "CLAUDE_CONFIG_DIR="+filepath.Join(h.home, "cc"))
	out, _ := cmd.Output()
	if !strings.Contains(string(out), "not registered in "+filepath.Join(h.home, "cc", ".claude.json")) {
		t.Errorf("doctor with CLAUDE_CONFIG_DIR:\n%s", out)
	}
	// The registered binary went away.
	os.Remove(filepath.Join(bin, "engram-worker"))
	if l := doctorLine(); !strings.HasPrefix(l, "fail") || !strings.Contains(l, "not an executable file") {
		t.Errorf("binary removed: %q", l)
	}
	// Another program registered under the name.
	if err := os.WriteFile(user, []byte(`{"mcpServers": {"engram": {"command": "/usr/bin/other"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if l := doctorLine(); !strings.HasPrefix(l, "warn") || !strings.Contains(l, "/usr/bin/other") {
		t.Errorf("someone else's server: %q", l)
	}
	if err := os.WriteFile(user, []byte(`{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if l := doctorLine(); !strings.HasPrefix(l, "fail") || !strings.Contains(l, "not valid JSON") {
		t.Errorf("invalid file: %q", l)
	}
}

// TestMCPSessionEndLogsNoError: a session's end — the client closing the
// server's stdin, or ending the process with SIGTERM — ends the server
// with exit 0 and leaves no ERROR line in mcp.log (a canceled context is
// how a session ends, not a failure).
func TestMCPSessionEndLogsNoError(t *testing.T) {
	for _, how := range []string{"close", "sigterm"} {
		t.Run(how, func(t *testing.T) {
			h := newHome(t)
			seedMemories(t, h)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := h.command("mcp")
			cmd.Dir = t.TempDir()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			tr := &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_status", Arguments: map[string]any{}}); err != nil || res.IsError {
				t.Fatalf("memory_status: %v %+v", err, res)
			}
			if how == "sigterm" {
				if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			cs.Close()
			if code := cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("engram-worker mcp exited %d\n%s", code, stderr.String())
			}
			b, err := os.ReadFile(filepath.Join(h.engram, "logs", "mcp.log"))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"level":"ERROR"`) || !strings.Contains(string(b), `"msg":"mcp server end"`) {
				t.Errorf("mcp.log after the session's end:\n%s", b)
			}
		})
	}
}
