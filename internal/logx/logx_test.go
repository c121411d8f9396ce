package logx

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLazyFileAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	log := New(dir, "hook.log", "info")
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("log dir created before any record: %v", err)
	}
	log.Debug("hidden")
	log.Warn("visible", "session", "abc")
	b, err := os.ReadFile(filepath.Join(dir, "hook.log"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hidden") || !strings.Contains(string(b), `"session":"abc"`) {
		t.Errorf("log content: %s", b)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "hook.log"): 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s mode %v, want %v (%v)", path, st.Mode().Perm(), want, err)
		}
	}
}

func TestSymlinkIsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "hook.log")); err != nil {
		t.Fatal(err)
	}
	New(dir, "hook.log", "info").Error("boom")
	b, _ := os.ReadFile(target)
	if string(b) != "keep\n" {
		t.Errorf("write went through the symlink: %q", b)
	}
}
