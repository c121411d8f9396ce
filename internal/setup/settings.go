package setup

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Hooks holds the absolute paths of the two hook binaries. An empty field
// leaves that event alone.
type Hooks struct {
	UserPromptSubmit string // engram-hook-userprompt
	Stop             string // engram-hook-stop
}

// Binary names: a hook entry whose program has one of these base names is
// engram's, wherever it is installed.
const (
	UserPromptBinary = "engram-hook-userprompt"
	StopBinary       = "engram-hook-stop"
	WorkerBinary     = "engram-worker"
)

// HooksIn is the Hooks of binaries installed side by side in binDir.
func HooksIn(binDir string) Hooks {
	return Hooks{
		UserPromptSubmit: filepath.Join(binDir, UserPromptBinary),
		Stop:             filepath.Join(binDir, StopBinary),
	}
}

// hookEvent is one event engram registers a hook for.
type hookEvent struct {
	event string // settings.json key under "hooks"
	base  string // the canonical binary name
}

var hookEvents = []hookEvent{
	{"UserPromptSubmit", UserPromptBinary},
	{"Stop", StopBinary},
}

func (h Hooks) path(event string) string {
	if event == "Stop" {
		return h.Stop
	}
	return h.UserPromptSubmit
}

// commands maps each event to the command string written for it: the
// program's path alone, written in exec form (ExecForm), or, for a path
// with a blank (which exec form does not take in "command"), the path
// quoted for the shell.
func (h Hooks) commands() (map[string]string, error) {
	cmds := map[string]string{}
	for _, ev := range hookEvents {
		p := h.path(ev.event)
		if p == "" {
			continue
		}
		if err := checkPath(ev.event+" hook", p); err != nil {
			return nil, err
		}
		if ExecForm(p) {
			cmds[ev.event] = p
		} else {
			cmds[ev.event] = shellQuote(p)
		}
	}
	if len(cmds) == 0 {
		return nil, errors.New("no hook binary given")
	}
	return cmds, nil
}

// basenames are the program names recognised as engram's for an event: the
// canonical one, plus the one of the path given, if it differs.
func (h Hooks) basenames(ev hookEvent) []string {
	names := []string{ev.base}
	if p := h.path(ev.event); p != "" && filepath.Base(p) != ev.base {
		names = append(names, filepath.Base(p))
	}
	return names
}

// ExecForm reports whether setup writes a hook running program in exec
// form: {"type": "command", "command": PROGRAM, "args": []}, which the
// client runs without a shell (one process fewer on every prompt). A path
// with a blank stays in shell form, quoted: the client takes "command" as
// one executable name in exec form and warns about blanks in it.
func ExecForm(program string) bool { return !strings.ContainsAny(program, " \t") }

// ourHook is one engram entry found in settings: hooks[event][group].hooks[hook].
type ourHook struct {
	group, hook int
	obj         *jnode // the hook object
	command     *jnode
	exec        bool // it has "args": exec form
}

// eventNodes finds the containers on the way to an event's list of groups;
// any of them may be nil when absent. A container of the wrong type is an
// error: the file is not what the client expects and is left alone.
func eventNodes(root *jnode, event string) (hooksObj, list *jnode, err error) {
	if root.kind != jObject {
		return nil, nil, errors.New("the top level is not an object")
	}
	hooksObj, _, err = root.member("hooks")
	if err != nil || hooksObj == nil {
		return nil, nil, err
	}
	if hooksObj.kind != jObject {
		return nil, nil, errors.New(`"hooks" is not an object`)
	}
	list, _, err = hooksObj.member(event)
	if err != nil || list == nil {
		return hooksObj, nil, err
	}
	if list.kind != jArray {
		return nil, nil, fmt.Errorf(`"hooks"."%s" is not an array`, event)
	}
	return hooksObj, list, nil
}

// findOurs lists engram's entries in an event's list of matcher groups, in
// file order. Entries are recognised by the base name of their program, so
// an install at another prefix is found too.
func findOurs(list *jnode, names []string) []ourHook {
	var found []ourHook
	if list == nil {
		return nil
	}
	for gi, g := range list.elems {
		if g.kind != jObject {
			continue
		}
		hs, _, err := g.member("hooks")
		if err != nil || hs == nil || hs.kind != jArray {
			continue
		}
		for hi, h := range hs.elems {
			if h.kind != jObject {
				continue
			}
			if t, _, err := h.member("type"); err != nil || (t != nil && (t.kind != jString || t.str != "command")) {
				continue
			}
			c, _, err := h.member("command")
			if err != nil || c == nil || c.kind != jString {
				continue
			}
			a, _, _ := h.member("args")
			exec := a != nil
			if slices.Contains(names, filepath.Base(HookProgram(c.str, exec))) {
				found = append(found, ourHook{group: gi, hook: hi, obj: h, command: c, exec: exec})
			}
		}
	}
	return found
}

func hookGroup(command string) jobj {
	return jobj{{"hooks", jarr{hookEntry(command)}}}
}

// hookEntry is one hook object: in exec form (with "args") when command
// is a program's path alone.
func hookEntry(command string) jobj {
	if ExecForm(command) {
		return jobj{{"type", "command"}, {"command", command}, {"args", jarr{}}}
	}
	return jobj{{"type", "command"}, {"command", command}}
}

// mergeHooksBytes adds or updates engram's hooks in a settings document
// (nil or blank: no settings yet) and says what it did. It is deterministic:
// uninstall relies on re-running it over a backup.
func mergeHooksBytes(data []byte, cmds map[string]string, h Hooks) ([]byte, []string, error) {
	doc := data
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = []byte("{}\n")
	}
	var actions []string
	for _, ev := range hookEvents {
		cmd, ok := cmds[ev.event]
		if !ok {
			continue
		}
	edits:
		for step := 0; ; step++ {
			if step > 100 {
				return nil, nil, fmt.Errorf("hooks for %s: too many edits", ev.event)
			}
			root, err := parseDoc(doc)
			if err != nil {
				return nil, nil, err
			}
			st := detectStyle(doc, root)
			hooksObj, list, err := eventNodes(root, ev.event)
			if err != nil {
				return nil, nil, err
			}
			switch found := findOurs(list, h.basenames(ev)); {
			case hooksObj == nil:
				doc = appendItem(doc, st, root, "hooks", jobj{{ev.event, jarr{hookGroup(cmd)}}})
				actions = append(actions, fmt.Sprintf("added the %s hook %s", ev.event, cmd))
			case list == nil:
				doc = appendItem(doc, st, hooksObj, ev.event, jarr{hookGroup(cmd)})
				actions = append(actions, fmt.Sprintf("added the %s hook %s", ev.event, cmd))
			case len(found) == 0:
				doc = appendItem(doc, st, list, "", hookGroup(cmd))
				actions = append(actions, fmt.Sprintf("added the %s hook %s", ev.event, cmd))
			case found[0].command.str != cmd:
				c := found[0].command
				doc = splice(doc, c.start, c.end, quoteJSON(cmd))
				actions = append(actions, fmt.Sprintf("replaced the %s hook %s with %s", ev.event, c.str, cmd))
			case ExecForm(cmd) && !found[0].exec:
				doc = appendItem(doc, st, found[0].obj, "args", jarr{})
				actions = append(actions, fmt.Sprintf("changed the %s hook %s to exec form (no shell)", ev.event, cmd))
			case len(found) > 1:
				last := found[len(found)-1]
				doc = removeOurs(doc, root, hooksObj, list, ev.event, last)
				actions = append(actions, fmt.Sprintf("removed a second copy of the %s hook %s", ev.event, last.command.str))
			default:
				break edits
			}
		}
	}
	return doc, actions, nil
}

// removeOurs deletes one engram entry, and with it the containers that held
// nothing else: a matcher group with no other hook (and no key but "hooks"
// and "matcher"), an event with no other group, "hooks" with no other event.
// Containers that were already empty are not touched.
func removeOurs(doc []byte, root, hooksObj, list *jnode, event string, o ourHook) []byte {
	group := list.elems[o.group]
	hs, _, _ := group.member("hooks")
	onlyHooks := true
	for _, m := range group.members {
		if m.key != "hooks" && m.key != "matcher" {
			onlyHooks = false
		}
	}
	switch {
	case hs.items() > 1 || !onlyHooks:
		return removeItem(doc, hs, o.hook)
	case list.items() > 1:
		return removeItem(doc, list, o.group)
	case hooksObj.items() > 1:
		_, idx, _ := hooksObj.member(event)
		return removeItem(doc, hooksObj, idx)
	default:
		_, idx, _ := root.member("hooks")
		return removeItem(doc, root, idx)
	}
}

// removeHooksBytes deletes every engram entry of the two events. A file
// whose structure is not what the client expects holds nothing of ours.
func removeHooksBytes(doc []byte, h Hooks) ([]byte, []string, error) {
	var actions []string
	for _, ev := range hookEvents {
		for step := 0; ; step++ {
			if step > 100 {
				return nil, nil, fmt.Errorf("hooks for %s: too many edits", ev.event)
			}
			root, err := parseDoc(doc)
			if err != nil {
				return nil, nil, err
			}
			hooksObj, list, err := eventNodes(root, ev.event)
			found := findOurs(list, h.basenames(ev))
			if err != nil || len(found) == 0 {
				break
			}
			last := found[len(found)-1]
			doc = removeOurs(doc, root, hooksObj, list, ev.event, last)
			actions = append(actions, fmt.Sprintf("removed the %s hook %s", ev.event, last.command.str))
		}
	}
	return doc, actions, nil
}

// oursInDoc returns, per event, the command of the first engram entry.
func oursInDoc(doc []byte, h Hooks) (map[string]string, error) {
	root, err := parseDoc(doc)
	if err != nil {
		return nil, err
	}
	cmds := map[string]string{}
	for _, ev := range hookEvents {
		_, list, err := eventNodes(root, ev.event)
		if err != nil {
			continue
		}
		if found := findOurs(list, h.basenames(ev)); len(found) > 0 {
			cmds[ev.event] = found[0].command.str
		}
	}
	return cmds, nil
}

// MergeHooks adds engram's two hooks to a Claude Code settings file (absent:
// created 0600 with only the hooks). Every byte outside the inserted entries
// is kept; an entry of ours already present (recognised by the program's base
// name) is updated in place, never duplicated. Before the first change of an
// existing file its bytes are copied to settings.json.engram-backup-<time>.
// A file that is not valid JSON, or a symlink leading out of its directory,
// is refused untouched.
func MergeHooks(settingsPath string, hooks Hooks) (Change, error) {
	ch := Change{Path: settingsPath}
	cmds, err := hooks.commands()
	if err != nil {
		return ch, err
	}
	f, err := openEditable(settingsPath)
	if err != nil {
		return ch, err
	}
	out, actions, err := mergeHooksBytes(f.data, cmds, hooks)
	if err != nil {
		return ch, fmt.Errorf("%s: %w; the file was not changed", settingsPath, err)
	}
	if f.exists && bytes.Equal(out, f.data) {
		return ch, nil
	}
	return f.commit(out, actions, true)
}

// RemoveHooks takes engram's hooks out of a settings file. When the file is
// exactly what MergeHooks made of a backup it kept (nothing changed since),
// the backup's bytes are put back, or the file is removed if MergeHooks had
// created it; otherwise only engram's entries (and the containers that held
// nothing else) are cut out of the current text, after a backup.
func RemoveHooks(settingsPath string, hooks Hooks) (Change, error) {
	ch := Change{Path: settingsPath}
	f, err := openEditable(settingsPath)
	if err != nil || !f.exists || len(bytes.TrimSpace(f.data)) == 0 {
		return ch, err
	}
	ours, err := oursInDoc(f.data, hooks)
	if err != nil {
		return ch, fmt.Errorf("%s: %w; the file was not changed", settingsPath, err)
	}
	if len(ours) == 0 {
		return ch, nil
	}
	reproduces := func(orig []byte) bool {
		if o, err := oursInDoc(orig, hooks); len(bytes.TrimSpace(orig)) > 0 && (err != nil || len(o) > 0) {
			return false // not a pre-engram original
		}
		out, _, err := mergeHooksBytes(orig, ours, hooks)
		return err == nil && bytes.Equal(out, f.data)
	}
	if ch, ok, err := f.restoreOriginal(reproduces); ok || err != nil {
		return ch, err
	}
	out, actions, err := removeHooksBytes(f.data, hooks)
	if err != nil {
		return ch, fmt.Errorf("%s: %w; the file was not changed", settingsPath, err)
	}
	return f.commit(out, actions, false)
}

// HookProgram is the program a hook's "command" runs: the whole string in
// exec form (the hook has "args"), else its first shell word, unquoted,
// after any leading NAME=value assignments.
func HookProgram(command string, exec bool) string {
	if exec {
		return command
	}
	return commandProgram(command)
}

// commandProgram is the program a hook command runs: its first shell word,
// unquoted, after any leading NAME=value assignments.
func commandProgram(cmd string) string {
	for _, w := range shellWords(cmd) {
		if i := strings.IndexByte(w, '='); i > 0 && isEnvName(w[:i]) {
			continue
		}
		return w
	}
	return ""
}

// shellWords splits the way sh does for the simple cases a hook command
// uses: blanks, single quotes, double quotes, backslashes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		default:
			cur.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func isEnvName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// shellQuote leaves a path made of safe characters as it is and puts any
// other in single quotes: Claude Code runs a hook command through a shell.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+:@,=", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkPath accepts an absolute, clean path without control characters
// (which would break out of a unit file line or a plist string).
func checkPath(what, p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s %q: not an absolute path", what, p)
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%s %q: control character in path", what, p)
		}
	}
	return nil
}
