// Package health holds the checks of an installation that doctor, status
// and the MCP server's memory_status share: whether the hooks can keep
// what they are given (the data directory, the database, the spool) and
// whether Claude Code runs them (settings.json's hooks or the plugin).
// Each check gives a Finding; the callers render them.
package health

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/setup"
)

// Statuses of a Finding.
const (
	OK   = "ok"
	Warn = "warn"
	Fail = "fail" // the hooks drop data, or do not run
)

// Finding is one check's result: Detail says what was found and, when it
// is not OK, what to do, in a sentence.
type Finding struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

func finding(name, status, format string, a ...any) Finding {
	return Finding{Name: name, Status: status, Detail: fmt.Sprintf(format, a...)}
}

// Problems are the findings that are not OK.
func Problems(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Status != OK {
			out = append(out, f)
		}
	}
	return out
}

// Storage checks what the hooks write: the data directory (a file can be
// created in it), the database (opened for writing, when it exists) and
// the spool, where the Stop hook keeps a capture the database does not
// take. Each is written to for real (a temporary file, removed at once),
// so that permissions, a read-only file system or a file where a
// directory belongs all show.
func Storage(cfg config.Config) []Finding {
	var out []Finding
	if err := writableDir(cfg.Home, true); err != nil {
		out = append(out, finding("data directory", Fail,
			"%s: %v: the hooks can store, spool and log nothing; make it a directory you can write (chmod u+rwx %s)", cfg.Home, err, cfg.Home))
		return out
	}
	out = append(out, finding("data directory", OK, "%s is writable", cfg.Home))
	switch f, err := os.OpenFile(cfg.DBPath(), os.O_RDWR, 0); {
	case errors.Is(err, fs.ErrNotExist):
		out = append(out, finding("database file", OK, "%s does not exist yet (the first hook or worker run creates it)", cfg.DBPath()))
	case err != nil:
		out = append(out, finding("database file", Fail,
			"%s cannot be opened for writing: %v: the hooks spool every capture and the worker cannot run; make it yours and writable (chmod u+rw %s)", cfg.DBPath(), err, cfg.DBPath()))
	default:
		f.Close()
		out = append(out, finding("database file", OK, "%s is writable", cfg.DBPath()))
	}
	if err := writableDir(cfg.SpoolDir(), false); err != nil {
		out = append(out, finding("spool directory", Fail,
			"%s: %v: a capture the database does not take is lost; make it a directory you can write, or remove it (the Stop hook creates it)", cfg.SpoolDir(), err))
	} else {
		out = append(out, finding("spool directory", OK, "%s can be written", cfg.SpoolDir()))
	}
	return out
}

// writableDir checks that dir is a directory a file can be created in. A
// missing dir is fine when its parent is (the hooks create it), unless
// mustExist.
func writableDir(dir string, mustExist bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return writableDir(filepath.Dir(dir), true)
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	f, err := os.CreateTemp(dir, ".engram-health-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in it (%v)", err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// Hooks checks that Claude Code runs engram's two hooks: from
// settings.json (in exec or shell form, pointing at an executable file),
// or from the Claude Code plugin when settings.json enables it. Both at
// once is a warning (every hook runs twice); neither is a failure.
func Hooks(cfg config.Config) []Finding {
	path := filepath.Join(cfg.ClaudeConfigDir, "settings.json")
	settings, err := readSettings(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return append([]Finding{finding("hooks", Fail, "%s does not exist: Claude Code runs no hook of engram's; run engram-worker setup, or install the Claude Code plugin", path)}, autoMemoryEnv()...)
	case err != nil:
		return append([]Finding{finding("hooks", Fail, "%s: %v", path, err)}, autoMemoryEnv()...)
	}
	var out []Finding
	plugin := EnabledPlugin(settings)
	both := false
	for _, h := range [][2]string{{"UserPromptSubmit", setup.UserPromptBinary}, {"Stop", setup.StopBinary}} {
		event, bin := h[0], h[1]
		cmds, progs := HookCommands(settings, event, bin)
		name := "hook " + event
		switch {
		case len(cmds) == 0 && plugin != "":
			out = append(out, finding(name, OK, "from the Claude Code plugin %s", plugin))
		case len(cmds) == 0:
			out = append(out, finding(name, Fail, "no %s hook in %s: run engram-worker setup, or install the Claude Code plugin", bin, path))
		case plugin != "":
			both = true
			out = append(out, finding(name, Warn, "both the plugin %s and setup's %s run it", plugin, cmds[0]))
		case len(cmds) > 1:
			out = append(out, finding(name, Warn, "%d copies of the %s hook: %s", len(cmds), bin, strings.Join(cmds, ", ")))
		default:
			if st, err := os.Stat(progs[0]); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				out = append(out, finding(name, Fail, "%s is not an executable file: Claude Code cannot run the hook; run engram-worker setup again (or scripts/install.sh)", progs[0]))
			} else {
				out = append(out, finding(name, OK, "%s", progs[0]))
			}
		}
	}
	if both {
		out = append(out, finding("plugin", Warn, "engram is installed twice, as the Claude Code plugin %s and by setup: every hook runs twice "+
			"(a turn is still stored once); keep one: claude plugin uninstall %s, or engram-worker uninstall", plugin, plugin))
	}
	if v, ok := settings["autoMemoryEnabled"].(bool); ok && !v {
		out = append(out, finding("auto-memory", Warn, "autoMemoryEnabled is false in %s: Claude Code will not load project MEMORY.md files", path))
	}
	return append(out, autoMemoryEnv()...)
}

// autoMemoryEnv warns when the environment turns Claude Code's
// auto-memory off.
func autoMemoryEnv() []Finding {
	if os.Getenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY") == "" {
		return nil
	}
	return []Finding{finding("auto-memory", Warn, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set: Claude Code will not load project MEMORY.md files")}
}

// Install is the checks of what setup (or the plugin) installs, with no
// store needed: Storage, Hooks and Import.
func Install(cfg config.Config) []Finding {
	return append(append(Storage(cfg), Hooks(cfg)...), Import(cfg))
}

func readSettings(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	return m, nil
}

// EnabledPlugin is the name of engram's Claude Code plugin ("engram@…")
// when settings enables it, else "".
func EnabledPlugin(settings map[string]any) string {
	plugins, _ := settings["enabledPlugins"].(map[string]any)
	var names []string
	for name, on := range plugins {
		if b, _ := on.(bool); b && strings.HasPrefix(name, "engram@") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// HookCommands lists the commands of an event's hooks that run bin, and
// the program each runs (the command itself in exec form, where the hook
// has "args"; its first shell word otherwise).
func HookCommands(settings map[string]any, event, bin string) (cmds, programs []string) {
	hooks, _ := settings["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		list, _ := gm["hooks"].([]any)
		for _, h := range list {
			hm, _ := h.(map[string]any)
			cmd, _ := hm["command"].(string)
			_, exec := hm["args"]
			if p := setup.HookProgram(cmd, exec); p != "" && filepath.Base(p) == bin {
				cmds, programs = append(cmds, cmd), append(programs, p)
			}
		}
	}
	return cmds, programs
}

// Plugin is the name of engram's Claude Code plugin when settings.json
// enables it, else "" (also when settings.json cannot be read).
func Plugin(cfg config.Config) string {
	settings, err := readSettings(filepath.Join(cfg.ClaudeConfigDir, "settings.json"))
	if err != nil {
		return ""
	}
	return EnabledPlugin(settings)
}
