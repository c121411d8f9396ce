package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/pgtest"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/share"
)

// TestSharedProjectFactWithRealClient: two machines (two homes, each with
// its own checkout of the same repository under its own path, cloned with
// another spelling of the remote) point at one PostgreSQL database and
// share the project. A fact stated in a session of the real client on
// machine A reaches the model's request in a session on machine B once
// A's worker and then B's have run.
func TestSharedProjectFactWithRealClient(t *testing.T) {
	respond := func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Noted.") }
	a, bins := statedEnv(t, respond)
	b := NewEnv(t, respond, Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	if _, err := setup.AddImport(filepath.Join(b.ClaudeDir, "CLAUDE.md"), setup.ImportLine(b.EngramHome, b.Home)); err != nil {
		t.Fatal(err)
	}
	srv := pgtest.Start(t)
	url := srv.NewDB(t)
	conn, err := share.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := share.Init(context.Background(), conn); err != nil {
		t.Fatal(err)
	}
	conn.Close(context.Background())
	for _, m := range []struct {
		e      *Env
		remote string
	}{{a, "git@github.com:acme/shop.git"}, {b, "https://github.com/Acme/shop"}} {
		cmd := exec.Command("git", "-C", m.e.Project, "remote", "add", "origin", m.remote)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git remote add: %v\n%s", err, out)
		}
		if err := os.MkdirAll(m.e.EngramHome, 0o700); err != nil {
			t.Fatal(err)
		}
		m.e.writeFile(filepath.Join(m.e.EngramHome, "env"), "ENGRAM_SHARE_URL="+url+"\n", 0o600)
		if out := m.e.Worker(bins.Worker, "share", "enable", m.e.Project); !strings.Contains(out, "as github.com/acme/shop") {
			t.Fatalf("share enable: %s", out)
		}
	}
	if a.Project == b.Project {
		t.Fatal("the two checkouts share a path")
	}

	if res, _ := a.runSession(a.Project, "This service deploys to Fly.io, and the staging app is called shop-staging-blue."); !strings.Contains(res.Result, "Noted.") {
		t.Fatalf("session on a: %q", res.Result)
	}
	t.Logf("a: engram-worker run:\n%s", strings.TrimSpace(a.Worker(bins.Worker, "run")))
	out := b.Worker(bins.Worker, "run")
	t.Logf("b: engram-worker run:\n%s", strings.TrimSpace(out))
	if !strings.Contains(out, "share: pushed 0") || strings.Contains(out, "pulled 0 ") {
		t.Errorf("b pulled nothing: %s", out)
	}

	_, reqs := b.runSession(b.Project, "Where does this service deploy to, and what is the staging app called?")
	if !reqs[0].Contains("fly.io") && !reqs[0].Contains("Fly.io") {
		t.Fatalf("the fact learnt on a did not reach the model's request on b:\n%s", b.Stub.Summary())
	}
	if !reqs[0].Contains("shop-staging-blue") {
		t.Errorf("the staging app's name learnt on a did not reach b's request")
	}
	// The pulled belief is promoted into b's own checkout's MEMORY.md, and
	// stays out of b's global one.
	if got := readFileOr(filepath.Join(b.ClaudeDir, "projects", sanitizePath(b.Project), "memory", "MEMORY.md")); !strings.Contains(strings.ToLower(got), "fly.io") {
		t.Errorf("b's project MEMORY.md lacks the shared belief:\n%s", got)
	}
	if got := readFileOr(filepath.Join(b.EngramHome, "MEMORY.md")); strings.Contains(strings.ToLower(got), "fly.io") {
		t.Errorf("a project fact reached b's global MEMORY.md:\n%s", got)
	}
}
