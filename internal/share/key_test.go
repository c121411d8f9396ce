package share

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProjectKey(t *testing.T) {
	same := []string{
		"git@github.com:Acme/API.git",
		"https://github.com/acme/api",
		"https://github.com/acme/api.git/",
		"ssh://git@github.com/acme/api.git",
		"ssh://git@github.com:22/acme/api",
		"https://ann:token@GitHub.com/acme/api",
		"github.com:acme/api",
	}
	for _, r := range same {
		k, err := ProjectKey(r)
		if err != nil || k != "github.com/acme/api" {
			t.Errorf("ProjectKey(%q) = %q, %v; want github.com/acme/api", r, k, err)
		}
	}
	if k, _ := ProjectKey("git@gitlab.example.com:group/sub/repo.git"); k != "gitlab.example.com/group/sub/repo" {
		t.Errorf("nested group: %q", k)
	}
	for _, bad := range []string{"", "/srv/git/repo.git", "../repo", "file:///srv/git/repo", "https://github.com/", "host:"} {
		if k, err := ProjectKey(bad); err == nil {
			t.Errorf("ProjectKey(%q) = %q, want an error", bad, k)
		}
	}
}

func TestRemoteOf(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("skipped: no git")
	}
	dir := t.TempDir()
	git := func(d string, args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", d}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	main := filepath.Join(dir, "main")
	os.MkdirAll(main, 0o755)
	git(main, "init", "-q")
	if _, err := RemoteOf(main); err == nil || !strings.Contains(err.Error(), "no git remote") {
		t.Errorf("no remote: %v", err)
	}
	git(main, "remote", "add", "upstream", "https://github.com/acme/fork")
	if u, err := RemoteOf(main); err != nil || u != "https://github.com/acme/fork" {
		t.Errorf("the only remote: %q %v", u, err)
	}
	git(main, "remote", "add", "origin", "git@github.com:acme/api.git")
	if u, err := RemoteOf(main); err != nil || u != "git@github.com:acme/api.git" {
		t.Errorf("origin: %q %v", u, err)
	}
	// A worktree: .git is a file naming a directory whose commondir holds
	// the config.
	git(main, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "x")
	wt := filepath.Join(dir, "wt")
	git(main, "worktree", "add", "-q", wt)
	if u, err := RemoteOf(wt); err != nil || u != "git@github.com:acme/api.git" {
		t.Errorf("worktree: %q %v", u, err)
	}
}

func TestMaskURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://ann:s3cret@db.example.com:5432/engram?sslmode=verify-full": "postgres://ann:xxxxx@db.example.com:5432/engram?sslmode=verify-full",
		"postgres://ann@db/engram?password=s3cret":                             "postgres://ann@db/engram?password=xxxxx",
		"postgres://db/engram":                                                 "postgres://db/engram",
	} {
		if got := MaskURL(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
	if got := scrub(`failed to connect: password "s3cret" rejected`, "postgres://ann:s3cret@db/x"); strings.Contains(got, "s3cret") {
		t.Errorf("scrub left the password: %s", got)
	}
}
