package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/setup"
)

func testConfig(t *testing.T) config.Config {
	t.Helper()
	base := t.TempDir()
	cfg := config.Config{Home: filepath.Join(base, "engram"), ClaudeConfigDir: filepath.Join(base, "claude")}
	for _, d := range []string{cfg.Home, cfg.ClaudeConfigDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func byName(fs []Finding) map[string]Finding {
	m := map[string]Finding{}
	for _, f := range fs {
		m[f.Name] = f
	}
	return m
}

func want(t *testing.T, fs []Finding, name, status, detail string) {
	t.Helper()
	f, ok := byName(fs)[name]
	if !ok || f.Status != status || !strings.Contains(f.Detail, detail) {
		t.Errorf("finding %q = %+v, want %s with %q; all: %+v", name, f, status, detail, fs)
	}
}

func TestStorage(t *testing.T) {
	cfg := testConfig(t)
	fs := Storage(cfg)
	want(t, fs, "data directory", OK, "writable")
	want(t, fs, "database file", OK, "does not exist yet")
	want(t, fs, "spool directory", OK, "can be written")
	if len(Problems(fs)) != 0 {
		t.Errorf("problems in a fresh home: %+v", Problems(fs))
	}
	if err := os.WriteFile(cfg.DBPath(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, Storage(cfg), "database file", OK, "is writable")
	if entries, _ := os.ReadDir(cfg.Home); len(entries) != 1 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

// TestStorageUnwritableHome: a data directory the hooks cannot write
// fails, whatever the reason (checked as any user, root included: a file
// where the directory belongs, a path on a read-only file system, and,
// for a user other than root, permissions).
func TestStorageUnwritableHome(t *testing.T) {
	cfg := testConfig(t)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{"a file": file}
	if fi, err := os.Stat("/proc/self"); err == nil && fi.IsDir() {
		cases["read-only file system"] = "/proc/self"
	}
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(ro, 0o700) })
		cases["no write permission"] = ro
	}
	for name, home := range cases {
		t.Run(name, func(t *testing.T) {
			c := cfg
			c.Home = home
			fs := Storage(c)
			want(t, fs, "data directory", Fail, "the hooks can store, spool and log nothing")
			if len(Problems(fs)) == 0 {
				t.Error("no problem reported")
			}
		})
	}
}

func TestStorageUnwritableSpool(t *testing.T) {
	cfg := testConfig(t)
	if err := os.WriteFile(cfg.SpoolDir(), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	want(t, Storage(cfg), "spool directory", Fail, "a capture the database does not take is lost")
}

func writeSettings(t *testing.T, cfg config.Config, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(cfg.ClaudeConfigDir, "settings.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func binaries(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, b := range []string{setup.UserPromptBinary, setup.StopBinary} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

func TestHooks(t *testing.T) {
	t.Run("no settings", func(t *testing.T) {
		cfg := testConfig(t)
		want(t, Hooks(cfg), "hooks", Fail, "does not exist")
	})
	t.Run("setup, exec form", func(t *testing.T) {
		cfg := testConfig(t)
		bin := binaries(t)
		if _, err := setup.MergeHooks(filepath.Join(cfg.ClaudeConfigDir, "settings.json"), setup.HooksIn(bin)); err != nil {
			t.Fatal(err)
		}
		fs := Hooks(cfg)
		want(t, fs, "hook UserPromptSubmit", OK, filepath.Join(bin, setup.UserPromptBinary))
		want(t, fs, "hook Stop", OK, filepath.Join(bin, setup.StopBinary))
		if len(Problems(fs)) != 0 {
			t.Errorf("problems: %+v", Problems(fs))
		}
	})
	t.Run("shell form, quoted path with a blank", func(t *testing.T) {
		cfg := testConfig(t)
		bin := filepath.Join(binaries(t), "my bin")
		if err := os.Mkdir(bin, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{setup.UserPromptBinary, setup.StopBinary} {
			os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755)
		}
		if _, err := setup.MergeHooks(filepath.Join(cfg.ClaudeConfigDir, "settings.json"), setup.HooksIn(bin)); err != nil {
			t.Fatal(err)
		}
		want(t, Hooks(cfg), "hook Stop", OK, filepath.Join(bin, setup.StopBinary))
	})
	t.Run("missing binary", func(t *testing.T) {
		cfg := testConfig(t)
		bin := binaries(t)
		if _, err := setup.MergeHooks(filepath.Join(cfg.ClaudeConfigDir, "settings.json"), setup.HooksIn(bin)); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(bin, setup.StopBinary))
		fs := Hooks(cfg)
		want(t, fs, "hook Stop", Fail, "is not an executable file")
		want(t, fs, "hook UserPromptSubmit", OK, "")
	})
	t.Run("plugin alone", func(t *testing.T) {
		cfg := testConfig(t)
		writeSettings(t, cfg, `{"enabledPlugins": {"engram@engram": true, "other@x": true}}`)
		fs := Hooks(cfg)
		want(t, fs, "hook UserPromptSubmit", OK, "from the Claude Code plugin engram@engram")
		want(t, fs, "hook Stop", OK, "from the Claude Code plugin engram@engram")
		if len(Problems(fs)) != 0 {
			t.Errorf("problems with the plugin alone: %+v", Problems(fs))
		}
		if Plugin(cfg) != "engram@engram" {
			t.Errorf("Plugin() = %q", Plugin(cfg))
		}
	})
	t.Run("plugin and setup both", func(t *testing.T) {
		cfg := testConfig(t)
		bin := binaries(t)
		path := filepath.Join(cfg.ClaudeConfigDir, "settings.json")
		writeSettings(t, cfg, `{"enabledPlugins": {"engram@engram": true}}`)
		if _, err := setup.MergeHooks(path, setup.HooksIn(bin)); err != nil {
			t.Fatal(err)
		}
		fs := Hooks(cfg)
		want(t, fs, "hook Stop", Warn, "both the plugin engram@engram and setup's")
		want(t, fs, "plugin", Warn, "engram is installed twice")
	})
	t.Run("plugin disabled, no hooks", func(t *testing.T) {
		cfg := testConfig(t)
		writeSettings(t, cfg, `{"enabledPlugins": {"engram@engram": false}}`)
		want(t, Hooks(cfg), "hook Stop", Fail, "no engram-hook-stop hook")
	})
}

func TestAutoMemoryOff(t *testing.T) {
	cfg := testConfig(t)
	writeSettings(t, cfg, `{"autoMemoryEnabled": false, "enabledPlugins": {"engram@engram": true}}`)
	want(t, Hooks(cfg), "auto-memory", Warn, "autoMemoryEnabled is false")
	t.Setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
	writeSettings(t, cfg, `{"enabledPlugins": {"engram@engram": true}}`)
	want(t, Hooks(cfg), "auto-memory", Warn, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set")
	os.Remove(filepath.Join(cfg.ClaudeConfigDir, "settings.json"))
	want(t, Install(cfg), "auto-memory", Warn, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set")
}
