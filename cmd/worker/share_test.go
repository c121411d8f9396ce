package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/pgtest"
)

// shareHome is a home whose env file names the shared database, with a
// password (the test server trusts local connections, so any password
// passes; it must never show).
func shareHome(t *testing.T, url string) testHome {
	t.Helper()
	h := newHome(t)
	if err := os.MkdirAll(h.engram, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.engram, "env"), []byte("ENGRAM_SHARE_URL="+url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func gitRepo(t *testing.T, dir, remote string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", remote}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

const sharePassword = "s3cretpw-7f1c"

func TestShareCommands(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("skipped: no git")
	}
	srv := pgtest.Start(t)
	srv.NewDB(t)
	url := strings.Replace(srv.URL("engram_1", ""), "postgres://engram@", "postgres://engram:"+sharePassword+"@", 1)
	a, b := shareHome(t, url), shareHome(t, url)
	var said strings.Builder
	run := func(h testHome, want int, args ...string) string {
		t.Helper()
		out, errOut, code := h.run(t, "", args...)
		said.WriteString(out + errOut)
		if code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out + errOut
	}

	// Before init: status says what to do, and a cycle with nothing to
	// share does not connect.
	out := run(a, 0, "share", "status")
	if !strings.Contains(out, "to pull:    unknown") || !strings.Contains(out, "run engram-worker share init") {
		t.Errorf("share status before init: %s", out)
	}
	if out = run(a, 0, "run"); !strings.Contains(out, "share: pushed 0") {
		t.Errorf("run before init, nothing shared: %s", out)
	}
	out = run(a, 0, "share", "init")
	if !strings.Contains(out, "migrated from version 0 to 1") || !strings.Contains(out, "postgres://engram:xxxxx@") {
		t.Errorf("share init: %s", out)
	}
	if out = run(b, 0, "share", "init"); !strings.Contains(out, "up to date (version 1)") {
		t.Errorf("share init again: %s", out)
	}

	// A's project holds a memory before it is shared; a global one never
	// leaves.
	rootA := gitRepo(t, filepath.Join(a.home, "code", "api"), "git@github.com:acme/api.git")
	rootB := gitRepo(t, filepath.Join(b.home, "elsewhere", "api-clone"), "https://github.com/acme/api")
	db := a.db(t)
	local := embed.NewLocal()
	now := time.Now()
	mk := func(id, text, scope, root string) episode.Episode {
		return episode.Episode{ID: id, Summary: text, Context: text, Type: "fact", Scope: scope, ProjectPath: root, Project: filepath.Base(root),
			ContentHash: id, Importance: 0.6, Embedding: local.EmbedText(text), Embedder: local.Name(), OccurredAt: now, CreatedAt: now, UpdatedAt: now}
	}
	if err := db.ImportEpisodes(context.Background(), []episode.Episode{
		mk("ep_00000000aa01", "The api service listens on port 8443 behind the gateway", episode.ScopeProject, rootA),
		mk("ep_00000000aa02", "I keep my dotfiles in a private repository called hearthstone", episode.ScopeGlobal, ""),
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	out = run(a, 0, "share", "enable", rootA)
	if !strings.Contains(out, "as github.com/acme/api") || !strings.Contains(out, "1 items queued") {
		t.Errorf("share enable: %s", out)
	}
	out = run(a, 0, "share", "--dry-run")
	if !strings.Contains(out, "episode ep_00000000aa01 -> project:github.com/acme/api") || !strings.Contains(out, "port 8443") ||
		strings.Contains(out, "hearthstone") {
		t.Errorf("dry run: %s", out)
	}
	if out = run(a, 0, "run"); !strings.Contains(out, "share: pushed 1,") {
		t.Errorf("run on a: %s", out)
	}
	if out = run(a, 0, "share", "--dry-run"); !strings.Contains(out, "dry run: 0 items") {
		t.Errorf("dry run after the push: %s", out)
	}

	// B: the same project under another path and another spelling.
	cmd := b.command("share", "enable")
	cmd.Dir = rootB
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "as github.com/acme/api") {
		t.Fatalf("share enable in the checkout: %v %s", err, out)
	}
	if out = run(b, 0, "share", "status"); !strings.Contains(out, "to pull:    1 changes on the server") {
		t.Errorf("share status on b before its sync: %s", out)
	}
	if out = run(b, 0, "run"); !strings.Contains(out, "pulled 1 (1 new") {
		t.Errorf("run on b: %s", out)
	}
	out = run(b, 0, "recall", "--all-projects", "port 8443 gateway")
	if !strings.Contains(out, "ep_00000000aa01") {
		t.Errorf("b does not recall the shared memory: %s", out)
	}
	out = run(b, 0, "expand", "ep_00000000aa01")
	if !strings.Contains(out, rootB) {
		t.Errorf("the pulled memory is not b's project: %s", out)
	}
	if out = run(b, 0, "recall", "--all-projects", "dotfiles hearthstone"); strings.Contains(out, "ep_00000000aa02") {
		t.Errorf("global memory left a: %s", out)
	}

	out = run(a, 0, "status")
	if !strings.Contains(out, "sharing:    postgres://engram:xxxxx@") || !strings.Contains(out, "to push:    0 local changes") {
		t.Errorf("status: %s", out)
	}
	out, _, _ = a.run(t, "", "doctor", "--json") // other checks fail here: no hooks are installed
	said.WriteString(out)
	var checks []struct{ Name, Status, Detail string }
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "]")+1]), &checks); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	found := false
	for _, c := range checks {
		if c.Name == "sharing" {
			found = true
			if c.Status != "ok" || !strings.Contains(c.Detail, "1 projects") {
				t.Errorf("doctor sharing: %+v", c)
			}
		}
	}
	if !found {
		t.Errorf("doctor has no sharing check: %s", out)
	}

	// The server down: the cycle succeeds, and status and doctor say how
	// far behind this machine is.
	srv.Stop(t)
	db = a.db(t)
	if err := db.ImportEpisodes(context.Background(), []episode.Episode{
		mk("ep_00000000aa03", "The api service's health check lives at /healthz", episode.ScopeProject, rootA)}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out = run(a, 0, "run")
	if !strings.Contains(out, "share: not synced") || !strings.Contains(out, "1 changes wait") {
		t.Errorf("run with the server down: %s", out)
	}
	out = run(a, 0, "status")
	if !strings.Contains(out, "to push:    1 local changes") || !strings.Contains(out, "to pull:    unknown") {
		t.Errorf("status with the server down: %s", out)
	}
	out, _, _ = a.run(t, "", "doctor")
	said.WriteString(out)
	if !strings.Contains(out, "1 local changes wait to be pushed") {
		t.Errorf("doctor with the server down: %s", out)
	}
	srv.Restart(t)
	if out = run(a, 0, "share", "sync"); !strings.Contains(out, "pushed 1,") || !strings.Contains(out, "0 changes waiting") {
		t.Errorf("share sync: %s", out)
	}

	// Bad input: the value named, a non-zero exit.
	if out = run(a, 1, "share", "enable", filepath.Join(a.home, "nowhere")); !strings.Contains(out, "nowhere") {
		t.Errorf("enable a missing directory: %s", out)
	}
	os.MkdirAll(filepath.Join(a.home, "plain"), 0o755)
	if out = run(a, 1, "share", "enable", filepath.Join(a.home, "plain")); !strings.Contains(out, "not inside a git repository") {
		t.Errorf("enable outside a repository: %s", out)
	}
	if out = run(a, 2, "share", "push"); !strings.Contains(out, `unknown share command "push"`) {
		t.Errorf("unknown subcommand: %s", out)
	}
	cmd = a.command("status")
	cmd.Env = append(cmd.Env, "ENGRAM_SHARE_URL=mysql://root:"+sharePassword+"@db/x")
	if o, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(o), "ENGRAM_SHARE_URL: must start with postgres://") {
		t.Errorf("a bad URL: %v %s", err, o)
	} else {
		said.Write(o)
	}

	// The password is in the env file and nowhere else: not in any output,
	// not in any other file of either home.
	if strings.Contains(said.String(), sharePassword) {
		t.Errorf("the password was printed:\n%s", said.String())
	}
	for _, h := range []testHome{a, b} {
		filepath.Walk(h.engram, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || p == filepath.Join(h.engram, "env") {
				return nil
			}
			data, _ := os.ReadFile(p)
			if strings.Contains(string(data), sharePassword) {
				t.Errorf("%s holds the password", p)
			}
			return nil
		})
	}
}
