package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/prompthook"
	"github.com/engram-memory/engram/internal/recall"
)

// TestOneEngine: for the same prompt, engram-worker recall and the MCP
// server's memory_recall return every memory the prompt hook injects: the
// three run one recall engine.
func TestOneEngine(t *testing.T) {
	h := newHome(t)
	seedMemories(t, h)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", h.home)
	t.Setenv("ENGRAM_HOME", "")
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.PromptHookDeadline = 10 * time.Second // a loaded machine must not cut the hook short here
	for i, prompt := range []string{"postgres invoices schema per tenant", "does the CI pipeline lint before the tests?"} {
		session := fmt.Sprintf("5e7c1a2b-0d3f-4a6e-9b8c-%012d", i)
		var out bytes.Buffer
		in := hookio.Input{SessionID: session, CWD: dir, HookEventName: "UserPromptSubmit", Prompt: prompt}
		if err := prompthook.Answer(context.Background(), cfg, in, time.Now(), &out, logx.Discard()); err != nil {
			t.Fatal(err)
		}
		var hook []string
		for id := range recall.Injected(cfg.Home, session) {
			hook = append(hook, id)
		}
		if len(hook) == 0 {
			t.Fatalf("%q: the hook injected nothing (%s): the check shows nothing", prompt, out.String())
		}

		cli, errOut, code := h.run(t, "", "recall", "--json", "--project", dir, prompt)
		if code != 0 {
			t.Fatalf("recall: %d %s", code, errOut)
		}
		var got struct {
			Results []struct {
				ID string `json:"id"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(cli), &got); err != nil {
			t.Fatalf("recall --json: %v\n%s", err, cli)
		}
		var cliIDs []string
		for _, r := range got.Results {
			cliIDs = append(cliIDs, r.ID)
		}

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := h.command("mcp")
		cmd.Dir = dir
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_recall", Arguments: map[string]any{"query": prompt}})
		cs.Close()
		cancel()
		if err != nil || res.IsError {
			t.Fatalf("memory_recall: %v %+v", err, res)
		}
		mcpText := res.Content[0].(*mcp.TextContent).Text
		for _, id := range hook {
			if !slices.Contains(cliIDs, id) {
				t.Errorf("%q: the hook injected %s; recall returned %v", prompt, id, cliIDs)
			}
			if !strings.Contains(mcpText, "ID: "+id) {
				t.Errorf("%q: the hook injected %s; memory_recall returned\n%s", prompt, id, mcpText)
			}
		}
	}
}
