package setup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	workerA = "/opt/engram/bin/engram-worker"
	workerB = "/home/u/.local/bin/engram-worker"
)

// clientConfig is a user configuration file as Claude Code 2.1.330 writes
// it on first start (JSON.stringify with two spaces, no final newline).
const clientConfig = `{
  "firstStartTime": "2026-11-22T04:16:44.178Z",
  "firstStartVersion": "2.1.330",
  "opusProMigrationComplete": true,
  "seenNotifications": {},
  "migrationVersion": 15
}`

// mcpServers decodes a document's mcpServers with encoding/json.
func mcpServers(t *testing.T, doc []byte) map[string]map[string]any {
	t.Helper()
	var v struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, doc)
	}
	return v.MCPServers
}

// withoutEngram decodes a document without mcpServers.engram (and an
// mcpServers left empty), for a semantic comparison.
func withoutEngram(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, doc)
	}
	if s, ok := v["mcpServers"].(map[string]any); ok {
		delete(s, MCPServerName)
		if len(s) == 0 {
			delete(v, "mcpServers")
		}
	}
	return v
}

func wantEngramEntry(t *testing.T, doc []byte, command string) {
	t.Helper()
	e, ok := mcpServers(t, doc)[MCPServerName]
	if !ok {
		t.Fatalf("no mcpServers.%s in:\n%s", MCPServerName, doc)
	}
	if e["type"] != "stdio" || e["command"] != command || !reflect.DeepEqual(e["args"], []any{MCPCommand}) {
		t.Errorf("mcpServers.%s = %v, want stdio %s [%s]", MCPServerName, e, command, MCPCommand)
	}
}

func TestUserConfigFile(t *testing.T) {
	tests := []struct {
		name     string
		set      bool
		legacy   *string // content of <config dir>/.config.json
		legacyRO bool    // legacy file read-only
		global   *string // content of the .claude.json the rule would pick
		globalRO bool    // that file read-only
		want     func(home, cfg string) string
	}{
		{name: "default", want: func(h, _ string) string { return filepath.Join(h, ".claude.json") }},
		{name: "CLAUDE_CONFIG_DIR set", set: true, want: func(_, c string) string { return filepath.Join(c, ".claude.json") }},
		{name: "legacy file with content", legacy: ptr(`{"numStartups":1}`), global: ptr("{}"),
			want: func(_, c string) string { return filepath.Join(c, ".config.json") }},
		{name: "legacy file with content, CLAUDE_CONFIG_DIR set", set: true, legacy: ptr(`{"numStartups":1}`),
			want: func(_, c string) string { return filepath.Join(c, ".config.json") }},
		{name: "empty legacy file, no .claude.json", legacy: ptr(""),
			want: func(_, c string) string { return filepath.Join(c, ".config.json") }},
		{name: "empty legacy file beside a .claude.json", legacy: ptr(""), global: ptr("{}"),
			want: func(h, _ string) string { return filepath.Join(h, ".claude.json") }},
		{name: "empty legacy file beside an empty read-only .claude.json", legacy: ptr(""), global: ptr(""), globalRO: true,
			want: func(_, c string) string { return filepath.Join(c, ".config.json") }},
		{name: "empty read-only legacy file", legacy: ptr(""), legacyRO: true,
			want: func(h, _ string) string { return filepath.Join(h, ".claude.json") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			cfg := filepath.Join(home, ".claude")
			if tt.set {
				cfg = filepath.Join(home, "cc")
			}
			mkdirs(t, cfg)
			if tt.legacy != nil {
				mode := os.FileMode(0o600)
				if tt.legacyRO {
					mode = 0o400
				}
				writeFile(t, filepath.Join(cfg, ".config.json"), *tt.legacy, mode)
			}
			if tt.global != nil {
				p := filepath.Join(home, ".claude.json")
				if tt.set {
					p = filepath.Join(cfg, ".claude.json")
				}
				mode := os.FileMode(0o600)
				if tt.globalRO {
					mode = 0o400
				}
				writeFile(t, p, *tt.global, mode)
			}
			if got, want := UserConfigFile(cfg, home, tt.set), tt.want(home, cfg); got != want {
				t.Errorf("UserConfigFile = %s, want %s", got, want)
			}
		})
	}
}

func TestMergeMCP(t *testing.T) {
	otherServer := `{
  "numStartups": 3,
  "mcpServers": {
    "github": {
      "type": "http",
      "url": "https://example.invalid/mcp"
    }
  },
  "projects": {}
}`
	tests := []struct {
		name   string
		absent bool
		orig   string
		// keep: every byte of orig outside the inserted text stays; checked
		// by cutting the registration back out (RemoveMCP's text path).
		inverse bool
	}{
		{name: "no file", absent: true},
		{name: "empty file", orig: ""},
		{name: "the client's own file", orig: clientConfig, inverse: true},
		{name: "another server", orig: otherServer, inverse: true},
		// Cutting out takes an mcpServers left empty with it.
		{name: "empty mcpServers", orig: "{\"mcpServers\": {}}\n"},
		{name: "compact, CRLF", orig: "{\"a\":1,\r\n\"mcpServers\":{\"x\":{\"command\":\"/bin/x\"}}}\r\n", inverse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ".claude.json")
			if !tt.absent {
				writeFile(t, path, tt.orig, 0o644)
			}
			ch, err := MergeMCP(path, workerA)
			if err != nil {
				t.Fatalf("MergeMCP: %v", err)
			}
			got := readFile(t, path)
			wantEngramEntry(t, got, workerA)
			if !ch.Changed || len(ch.Actions) != 1 || !strings.Contains(ch.Actions[0], "registered the MCP server engram: "+workerA+" mcp") {
				t.Errorf("Change %+v", ch)
			}
			if tt.absent {
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("new file: %v, want mode 0600", err)
				}
			} else {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
					t.Errorf("mode %04o, want the file's own 0644", fi.Mode().Perm())
				}
				if strings.TrimSpace(tt.orig) != "" && !reflect.DeepEqual(withoutEngram(t, got), withoutEngram(t, []byte(tt.orig))) {
					t.Errorf("the rest of the file changed:\n%s", got)
				}
				if b := listBackups(t, path); len(b) != 1 || string(readFile(t, b[0])) != tt.orig {
					t.Errorf("backups %v, want one holding the original", b)
				}
			}
			if tt.inverse {
				out, _, err := removeMCPBytes(got, workerA)
				if err != nil || string(out) != tt.orig {
					t.Errorf("cutting the registration out does not give the original back (%v):\n%q\nwant\n%q", err, out, tt.orig)
				}
			}

			// Idempotent: nothing changes, no new backup.
			n := len(listBackups(t, path))
			ch, err = MergeMCP(path, workerA)
			if err != nil || ch.Changed || string(readFile(t, path)) != string(got) || len(listBackups(t, path)) != n {
				t.Errorf("second MergeMCP: %v %+v", err, ch)
			}
		})
	}
}

func TestMergeMCPUpdatesOurs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude.json")
	// Ours from another prefix, with an env the user added and old args.
	orig := `{
  "mcpServers": {
    "engram": {
      "type": "stdio",
      "command": "` + workerB + `",
      "args": ["serve"],
      "env": {"ENGRAM_HOME": "/data/engram"}
    }
  }
}
`
	writeFile(t, path, orig, 0o600)
	ch, err := MergeMCP(path, workerA)
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	wantEngramEntry(t, got, workerA)
	env, _ := mcpServers(t, got)[MCPServerName]["env"].(map[string]any)
	if env["ENGRAM_HOME"] != "/data/engram" {
		t.Errorf("the user's env was lost:\n%s", got)
	}
	if len(ch.Actions) != 2 || !strings.Contains(ch.Actions[0], "replaced the MCP server command "+workerB+" with "+workerA) {
		t.Errorf("actions %q", ch.Actions)
	}
	if strings.Count(string(got), `"engram"`) != 1 {
		t.Errorf("registration duplicated:\n%s", got)
	}
}

func TestMergeMCPRefuses(t *testing.T) {
	tests := []struct {
		name, orig string
		want       error
		wantText   string
	}{
		{"invalid JSON", "{\"a\": 1,,}", ErrInvalidJSON, "line 1, column 9"},
		{"not an object", "[]", nil, "top level is not an object"},
		{"mcpServers not an object", `{"mcpServers": []}`, nil, `"mcpServers" is not an object`},
		{"engram is someone else's", `{"mcpServers": {"engram": {"command": "/usr/bin/other-memory", "args": []}}}`, ErrMCPNameTaken, ""},
		{"engram duplicated", `{"mcpServers": {"engram": {}, "engram": {}}}`, nil, "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude.json")
			writeFile(t, path, tt.orig, 0o600)
			_, err := MergeMCP(path, workerA)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("MergeMCP: %v, want %v %q", err, tt.want, tt.wantText)
			}
			if got := string(readFile(t, path)); got != tt.orig {
				t.Errorf("file changed: %q", got)
			}
			if b := listBackups(t, path); len(b) != 0 {
				t.Errorf("backups %v", b)
			}
		})
	}
	t.Run("relative command", func(t *testing.T) {
		if _, err := MergeMCP(filepath.Join(t.TempDir(), ".claude.json"), "engram-worker"); err == nil {
			t.Fatal("MergeMCP accepted a relative command")
		}
	})
}

func TestRemoveMCP(t *testing.T) {
	t.Run("unchanged since setup: the original bytes come back", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".claude.json")
		writeFile(t, path, clientConfig, 0o600)
		if _, err := MergeMCP(path, workerA); err != nil {
			t.Fatal(err)
		}
		ch, err := RemoveMCP(path, workerA)
		if err != nil || ch.Restored == "" {
			t.Fatalf("RemoveMCP: %v %+v, want a restore", err, ch)
		}
		if got := string(readFile(t, path)); got != clientConfig {
			t.Errorf("after RemoveMCP:\n%s", got)
		}
	})
	t.Run("created by setup: removed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".claude.json")
		if _, err := MergeMCP(path, workerA); err != nil {
			t.Fatal(err)
		}
		if ch, err := RemoveMCP(path, workerA); err != nil || !ch.Removed {
			t.Fatalf("RemoveMCP: %v %+v", err, ch)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("file still there: %v", err)
		}
	})
	t.Run("rewritten by the client since: only our entry goes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".claude.json")
		writeFile(t, path, clientConfig, 0o600)
		if _, err := MergeMCP(path, workerA); err != nil {
			t.Fatal(err)
		}
		// The client adds a server and bumps a counter.
		var v map[string]any
		if err := json.Unmarshal(readFile(t, path), &v); err != nil {
			t.Fatal(err)
		}
		v["numStartups"] = 2
		v["mcpServers"].(map[string]any)["github"] = map[string]any{"type": "http", "url": "https://example.invalid"}
		edited, _ := json.MarshalIndent(v, "", "  ")
		writeFile(t, path, string(edited), 0o600)

		ch, err := RemoveMCP(path, workerA)
		if err != nil || ch.Restored != "" || !ch.Changed || ch.Backup != "" {
			t.Fatalf("RemoveMCP: %v %+v", err, ch)
		}
		got := readFile(t, path)
		servers := mcpServers(t, got)
		if _, ok := servers[MCPServerName]; ok || servers["github"] == nil {
			t.Errorf("after RemoveMCP:\n%s", got)
		}
		if !reflect.DeepEqual(withoutEngram(t, got), withoutEngram(t, edited)) {
			t.Errorf("RemoveMCP changed more than our entry:\n%s", got)
		}
	})
	t.Run("someone else's engram stays", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), ".claude.json")
		orig := `{"mcpServers": {"engram": {"command": "/usr/bin/other-memory"}}}`
		writeFile(t, path, orig, 0o600)
		if ch, err := RemoveMCP(path, workerA); err != nil || ch.Changed {
			t.Fatalf("RemoveMCP: %v %+v", err, ch)
		}
		if got := string(readFile(t, path)); got != orig {
			t.Errorf("file changed: %s", got)
		}
	})
	t.Run("nothing there", func(t *testing.T) {
		dir := t.TempDir()
		if ch, err := RemoveMCP(filepath.Join(dir, ".claude.json"), workerA); err != nil || ch.Changed {
			t.Fatalf("RemoveMCP on no file: %v %+v", err, ch)
		}
		path := filepath.Join(dir, "other.json")
		writeFile(t, path, clientConfig, 0o600)
		if ch, err := RemoveMCP(path, workerA); err != nil || ch.Changed {
			t.Fatalf("RemoveMCP without our entry: %v %+v", err, ch)
		}
	})
}

func TestRegisteredMCP(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".claude.json")
	if reg, err := RegisteredMCP(path); err != nil || reg.Command != "" {
		t.Fatalf("no file: %+v %v", reg, err)
	}
	if _, err := MergeMCP(path, workerA); err != nil {
		t.Fatal(err)
	}
	reg, err := RegisteredMCP(path)
	if err != nil || reg.Command != workerA || !reg.Ours || !reflect.DeepEqual(reg.Args, []string{MCPCommand}) {
		t.Fatalf("RegisteredMCP: %+v %v", reg, err)
	}
	writeFile(t, path, "{", 0o600)
	if _, err := RegisteredMCP(path); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("invalid file: %v", err)
	}
}

func TestInstallRegistersMCP(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}}
	o := testHome(t, "linux", fr)
	user := filepath.Join(o.UserHome, ".claude.json")
	writeFile(t, user, clientConfig, 0o600)
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	worker := filepath.Join(o.BinDir, WorkerBinary)
	wantEngramEntry(t, readFile(t, user), worker)
	if !strings.Contains(r.String(), user+": registered the MCP server engram: "+worker+" mcp") {
		t.Errorf("report:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(o.ClaudeConfigDir, ".claude.json")); err == nil {
		t.Errorf("wrote %s/.claude.json, which the client does not read without CLAUDE_CONFIG_DIR", o.ClaudeConfigDir)
	}
	if r2, err := Install(context.Background(), o); err != nil || r2.MCP.Changed {
		t.Fatalf("second Install: %v\n%s", err, r2)
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, user)); got != clientConfig {
		t.Errorf("after uninstall:\n%s", got)
	}

	t.Run("CLAUDE_CONFIG_DIR", func(t *testing.T) {
		o := testHome(t, "linux", fr)
		o.ClaudeConfigDir = filepath.Join(o.UserHome, "cc")
		if _, err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		wantEngramEntry(t, readFile(t, filepath.Join(o.ClaudeConfigDir, ".claude.json")), filepath.Join(o.BinDir, WorkerBinary))
		if _, err := os.Stat(filepath.Join(o.UserHome, ".claude.json")); err == nil {
			t.Errorf("wrote ~/.claude.json, which the client does not read with CLAUDE_CONFIG_DIR set")
		}
	})
	t.Run("invalid user configuration: nothing changes", func(t *testing.T) {
		o := testHome(t, "linux", &fakeRunner{})
		writeFile(t, filepath.Join(o.UserHome, ".claude.json"), "{,}", 0o600)
		before := snapshot(t, o.UserHome)
		if _, err := Install(context.Background(), o); !errors.Is(err, ErrInvalidJSON) {
			t.Fatalf("Install: %v, want ErrInvalidJSON", err)
		}
		if d := diffSnapshots(before, snapshot(t, o.UserHome)); len(d) != 0 {
			t.Errorf("Install changed files: %v", d)
		}
	})
	t.Run("someone else's server named engram: a note, left alone", func(t *testing.T) {
		o := testHome(t, "linux", fr)
		orig := `{"mcpServers": {"engram": {"command": "/usr/bin/other-memory"}}}`
		writeFile(t, filepath.Join(o.UserHome, ".claude.json"), orig, 0o600)
		r, err := Install(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(readFile(t, filepath.Join(o.UserHome, ".claude.json"))); got != orig {
			t.Errorf("changed: %s", got)
		}
		if !strings.Contains(r.String(), "does not run engram-worker") {
			t.Errorf("report:\n%s", r)
		}
		if _, err := Uninstall(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if got := string(readFile(t, filepath.Join(o.UserHome, ".claude.json"))); got != orig {
			t.Errorf("uninstall changed it: %s", got)
		}
	})
	t.Run("symlink out of the home: a note, the rest installed", func(t *testing.T) {
		o := testHome(t, "linux", fr)
		dot := filepath.Join(t.TempDir(), "claude.json")
		writeFile(t, dot, "{}", 0o600)
		if err := os.Symlink(dot, filepath.Join(o.UserHome, ".claude.json")); err != nil {
			t.Fatal(err)
		}
		r, err := Install(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(readFile(t, dot)); got != "{}" {
			t.Errorf("wrote through the symlink: %s", got)
		}
		if !strings.Contains(r.String(), "claude mcp add --scope user engram -- "+filepath.Join(o.BinDir, WorkerBinary)+" mcp") {
			t.Errorf("report does not say how to register:\n%s", r)
		}
		if n := countOurs(t, readFile(t, filepath.Join(o.ClaudeConfigDir, "settings.json"))); len(n) != 2 {
			t.Errorf("hooks %v", n)
		}
	})
}
