package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/engram-memory/engram/internal/config"
)

// MCPServerName is the name engram's MCP server is registered under; the
// client offers its tools to the model as mcp__engram__<tool>.
const MCPServerName = "engram"

// MCPCommand is the subcommand of engram-worker that serves MCP on stdio.
const MCPCommand = "mcp"

// ErrMCPNameTaken is returned when the user configuration already has an
// MCP server named MCPServerName that does not run engram-worker: it is the
// user's, and is left alone.
var ErrMCPNameTaken = errors.New("has an MCP server named " + MCPServerName + " that does not run " + WorkerBinary)

// UserConfigFile is the file Claude Code keeps its user-level state in,
// user-scope MCP servers included (what `claude mcp add --scope user`
// writes). Measured with Claude Code 2.1.330:
//
//   - CLAUDE_CONFIG_DIR set and not empty: $CLAUDE_CONFIG_DIR/.claude.json;
//   - otherwise ~/.claude.json, beside the ~/.claude directory, not in it;
//   - but a legacy <config dir>/.config.json (config dir: CLAUDE_CONFIG_DIR,
//     or ~/.claude) wins when it is a regular file that is not empty, or an
//     empty writable one with no .claude.json (or an empty read-only one)
//     beside the file above.
//
// configDirSet tells whether CLAUDE_CONFIG_DIR was set: the client does
// not look for .claude.json in ~/.claude even though that is the default
// configuration directory.
func UserConfigFile(claudeConfigDir, userHome string, configDirSet bool) string {
	file := filepath.Join(userHome, ".claude.json")
	if configDirSet {
		file = filepath.Join(claudeConfigDir, ".claude.json")
	}
	legacy := filepath.Join(claudeConfigDir, ".config.json")
	lfi, err := os.Stat(legacy)
	if err != nil || !lfi.Mode().IsRegular() {
		return file
	}
	if lfi.Size() > 0 {
		return legacy
	}
	if lfi.Mode().Perm()&0o222 == 0 {
		return file
	}
	ffi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return legacy
	case err == nil && ffi.Mode().IsRegular() && ffi.Size() == 0 && ffi.Mode().Perm()&0o222 == 0:
		return legacy
	}
	return file
}

// UserConfigFor is UserConfigFile for the running user: HOME and
// CLAUDE_CONFIG_DIR from the environment, as the client reads them.
func UserConfigFor(cfg config.Config) string {
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return UserConfigFile(cfg.ClaudeConfigDir, home, os.Getenv("CLAUDE_CONFIG_DIR") != "")
}

// mcpEntry is the value registered under mcpServers.engram, the shape the
// client itself writes for a stdio server (it adds "env": {}; absent is the
// same to it).
func mcpEntry(command string) jobj {
	return jobj{{"type", "stdio"}, {"command", command}, {"args", jarr{MCPCommand}}}
}

// mcpNodes finds mcpServers and its engram member; either may be nil when
// absent. A container of the wrong type is an error.
func mcpNodes(root *jnode) (servers, entry *jnode, err error) {
	if root.kind != jObject {
		return nil, nil, errors.New("the top level is not an object")
	}
	servers, _, err = root.member("mcpServers")
	if err != nil || servers == nil {
		return nil, nil, err
	}
	if servers.kind != jObject {
		return nil, nil, errors.New(`"mcpServers" is not an object`)
	}
	entry, _, err = servers.member(MCPServerName)
	return servers, entry, err
}

// mcpNames are the program base names recognised as engram's: the
// canonical one, plus the one of the path given, if it differs.
func mcpNames(command string) []string {
	names := []string{WorkerBinary}
	if b := filepath.Base(command); command != "" && b != WorkerBinary {
		names = append(names, b)
	}
	return names
}

// ourMCP reports whether an mcpServers.engram value runs engram-worker,
// and returns its command node.
func ourMCP(entry *jnode, names []string) (*jnode, bool) {
	if entry == nil || entry.kind != jObject {
		return nil, false
	}
	c, _, err := entry.member("command")
	if err != nil || c == nil || c.kind != jString {
		return nil, false
	}
	for _, n := range names {
		if filepath.Base(c.str) == n {
			return c, true
		}
	}
	return nil, false
}

func isMCPArgs(n *jnode) bool {
	return n != nil && n.kind == jArray && len(n.elems) == 1 && n.elems[0].kind == jString && n.elems[0].str == MCPCommand
}

// mergeMCPBytes registers engram's server in a user configuration document
// (nil or blank: none yet), or brings an existing registration of ours up
// to date (command, args, type), keeping whatever else the user put in it
// (an "env", say). It is deterministic: uninstall relies on re-running it
// over a backup.
func mergeMCPBytes(data []byte, command string) ([]byte, []string, error) {
	doc := data
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	names := mcpNames(command)
	var actions []string
	for step := 0; ; step++ {
		if step > 10 {
			return nil, nil, errors.New("mcpServers: too many edits")
		}
		root, err := parseDoc(doc)
		if err != nil {
			return nil, nil, err
		}
		st := detectStyle(doc, root)
		servers, entry, err := mcpNodes(root)
		if err != nil {
			return nil, nil, err
		}
		added := fmt.Sprintf("registered the MCP server %s: %s %s", MCPServerName, command, MCPCommand)
		if servers == nil {
			doc = appendItem(doc, st, root, "mcpServers", jobj{{MCPServerName, mcpEntry(command)}})
			actions = append(actions, added)
			continue
		}
		if entry == nil {
			doc = appendItem(doc, st, servers, MCPServerName, mcpEntry(command))
			actions = append(actions, added)
			continue
		}
		c, ok := ourMCP(entry, names)
		if !ok {
			return nil, nil, ErrMCPNameTaken
		}
		if c.str != command {
			doc = splice(doc, c.start, c.end, quoteJSON(command))
			actions = append(actions, fmt.Sprintf("replaced the MCP server command %s with %s", c.str, command))
			continue
		}
		if t, _, err := entry.member("type"); err != nil {
			return nil, nil, err
		} else if t != nil && (t.kind != jString || t.str != "stdio") {
			doc = splice(doc, t.start, t.end, quoteJSON("stdio"))
			actions = append(actions, `set the MCP server's type to "stdio"`)
			continue
		}
		args, _, err := entry.member("args")
		if err != nil {
			return nil, nil, err
		}
		switch {
		case args == nil:
			doc = appendItem(doc, st, entry, "args", jarr{MCPCommand})
		case !isMCPArgs(args):
			doc = splice(doc, args.start, args.end, st.render(jarr{MCPCommand}, lineIndent(doc, args.start)))
		default:
			return doc, actions, nil
		}
		actions = append(actions, fmt.Sprintf("set the MCP server's arguments to [%q]", MCPCommand))
	}
}

// removeMCPBytes deletes engram's registration, and mcpServers with it
// when it held nothing else. A server named engram that is not ours stays.
func removeMCPBytes(doc []byte, command string) ([]byte, []string, error) {
	root, err := parseDoc(doc)
	if err != nil {
		return nil, nil, err
	}
	servers, entry, err := mcpNodes(root)
	if err != nil {
		return doc, nil, nil // not the shape the client reads: nothing of ours
	}
	c, ok := ourMCP(entry, mcpNames(command))
	if !ok {
		return doc, nil, nil
	}
	action := fmt.Sprintf("removed the MCP server %s (%s)", MCPServerName, c.str)
	if servers.items() > 1 {
		_, idx, _ := servers.member(MCPServerName)
		return removeItem(doc, servers, idx), []string{action}, nil
	}
	_, idx, _ := root.member("mcpServers")
	return removeItem(doc, root, idx), []string{action}, nil
}

// MCPPlan is a registration computed but not written yet, so that Install
// can refuse an unusable file before it changes anything.
type MCPPlan struct {
	f       *editable
	out     []byte
	actions []string
}

// PlanMCP reads the user configuration file and computes the registration
// of engram's MCP server running command (engram-worker's absolute path).
// A file that is not valid JSON, or whose mcpServers is not an object, is
// refused; so is a symlink leading out of its directory (ErrSymlinkOutside)
// and a server named engram that is not ours (ErrMCPNameTaken).
func PlanMCP(path, command string) (*MCPPlan, error) {
	if err := checkPath("engram-worker", command); err != nil {
		return nil, err
	}
	f, err := openEditable(path)
	if err != nil {
		return nil, err
	}
	out, actions, err := mergeMCPBytes(f.data, command)
	if errors.Is(err, ErrMCPNameTaken) {
		return nil, fmt.Errorf("%s %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w; the file was not changed", path, err)
	}
	return &MCPPlan{f: f, out: out, actions: actions}, nil
}

// Apply writes the plan: nothing when the registration is already there,
// else the new bytes after a backup of the old ones (a new file is created
// 0600).
func (p *MCPPlan) Apply() (Change, error) {
	if p.f.exists && bytes.Equal(p.out, p.f.data) {
		return Change{Path: p.f.path}, nil
	}
	return p.f.commit(p.out, p.actions, true)
}

// MergeMCP registers engram's MCP server, running command with the
// argument "mcp", as a user-scope server in Claude Code's user
// configuration file (UserConfigFile). Like MergeHooks it keeps every other
// byte of the file, backs it up before the first change, is idempotent and
// refuses invalid JSON.
func MergeMCP(path, command string) (Change, error) {
	p, err := PlanMCP(path, command)
	if err != nil {
		return Change{Path: path}, err
	}
	return p.Apply()
}

// RemoveMCP takes engram's MCP server out of the user configuration file:
// the backup's bytes are put back when the file is exactly what MergeMCP
// made of it (or the file removed when MergeMCP created it); otherwise only
// the registration (and an mcpServers holding nothing else) is cut out.
func RemoveMCP(path, command string) (Change, error) {
	ch := Change{Path: path}
	f, err := openEditable(path)
	if err != nil || !f.exists || len(bytes.TrimSpace(f.data)) == 0 {
		return ch, err
	}
	out, actions, err := removeMCPBytes(f.data, command)
	if err != nil {
		return ch, fmt.Errorf("%s: %w; the file was not changed", path, err)
	}
	if len(actions) == 0 {
		return ch, nil
	}
	root, _ := parseDoc(f.data)
	_, entry, _ := mcpNodes(root)
	cur, _ := ourMCP(entry, mcpNames(command))
	reproduces := func(orig []byte) bool {
		if len(bytes.TrimSpace(orig)) > 0 {
			r, err := parseDoc(orig)
			if err != nil {
				return false
			}
			if _, e, err := mcpNodes(r); err != nil || e != nil {
				return false // not a pre-engram original
			}
		}
		merged, _, err := mergeMCPBytes(orig, cur.str)
		return err == nil && bytes.Equal(merged, f.data)
	}
	if ch, ok, err := f.restoreOriginal(reproduces); ok || err != nil {
		return ch, err
	}
	return f.commit(out, actions, false)
}

// MCPRegistration is what the user configuration file says of engram's
// server.
type MCPRegistration struct {
	Path    string   // the file read
	Command string   // the registered command ("" when absent)
	Args    []string // its arguments
	Ours    bool     // the command runs engram-worker
}

// RegisteredMCP reads the user configuration file's mcpServers.engram. An
// absent file or entry is no error (Command is empty); a file that is not
// valid JSON is.
func RegisteredMCP(path string) (MCPRegistration, error) {
	reg := MCPRegistration{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return reg, nil
	}
	if err != nil {
		return reg, err
	}
	root, err := parseDoc(data)
	if err != nil {
		return reg, err
	}
	_, entry, err := mcpNodes(root)
	if err != nil || entry == nil || entry.kind != jObject {
		return reg, err
	}
	if c, _, _ := entry.member("command"); c != nil && c.kind == jString {
		reg.Command = c.str
	}
	if a, _, _ := entry.member("args"); a != nil && a.kind == jArray {
		for _, e := range a.elems {
			if e.kind == jString {
				reg.Args = append(reg.Args, e.str)
			}
		}
	}
	_, reg.Ours = ourMCP(entry, []string{WorkerBinary})
	return reg, nil
}
