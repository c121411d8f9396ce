package gitroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "sub", "deeper")
	worktree := filepath.Join(base, "wt")
	plain := filepath.Join(base, "plain", "dir")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, worktree, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir, want string
		ok        bool
	}{
		{repo, repo, true},
		{deep, repo, true},
		{deep + "/", repo, true},
		{worktree, worktree, true},
		{plain, plain, false},
		{"", "", false},
	} {
		got, ok := Find(tt.dir)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Find(%q)=%q,%v, want %q,%v", tt.dir, got, ok, tt.want, tt.ok)
		}
	}
	if got := Name("/home/u/my.proj"); got != "my.proj" {
		t.Errorf("Name=%q", got)
	}
}
