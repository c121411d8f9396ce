package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var (
	hooksA = HooksIn("/opt/engram/bin")
	hooksB = HooksIn("/home/u/.local/bin")
)

// settingsCases are the settings files setup meets. golden is the file
// holding the expected result of MergeHooks(hooksA).
var settingsCases = []struct {
	name    string
	absent  bool // no settings.json at all
	orig    string
	mode    fs.FileMode
	golden  string
	inverse bool // cutting our entries out of the text alone gives orig back
}{
	{name: "no file", absent: true, golden: "new.golden"},
	{name: "empty file", orig: "", mode: 0o600, golden: "new.golden"},
	{name: "empty object", orig: "{}\n", mode: 0o644, golden: "empty-object.golden"},
	{name: "custom", orig: readTestdata("custom.json"), mode: 0o640, golden: "custom.golden", inverse: true},
	{name: "compact one line", orig: `{"model":"x","hooks":{"Stop":[{"hooks":[{"type":"command","command":"a"}]}]}}`, mode: 0o600, golden: "compact.golden", inverse: true},
	{name: "tabs and CRLF", orig: "{\r\n\t\"a\": [1, 2.50, null],\r\n\t\"b\": \"\\u00e9\"\r\n}\r\n", mode: 0o600, golden: "crlf.golden", inverse: true},
	{name: "ours already there", orig: readTestdata("ours.json"), mode: 0o600, golden: "ours.json", inverse: false},
	// An older setup's hooks (or the README's old way, by hand), in shell
	// form: changed to exec form in place, the user's hook kept.
	{name: "ours in shell form", orig: readTestdata("ours-shell.json"), mode: 0o600, golden: "ours-shell.golden", inverse: false},
}

func readTestdata(name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return string(b)
}

// checkGolden compares got with testdata/name (rewritten with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (go test -update rewrites it):\n%s", p, firstDiff(want, got))
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(want, got []byte) string {
	wl, gl := strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(no line differs)"
}

// setupSettings writes a case's settings.json into a fresh config dir.
func setupSettings(t *testing.T, absent bool, orig string, mode fs.FileMode) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, "settings.json")
	if !absent {
		if err := os.WriteFile(path, []byte(orig), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	return dir, path
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func listBackups(t *testing.T, path string) []string {
	t.Helper()
	return backups(path)
}

// countOurs counts engram's entries per event in a document, decoding it
// with encoding/json (independent of the positional parser).
func countOurs(t *testing.T, doc []byte) map[string][]string {
	t.Helper()
	var v struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("result is not valid JSON: %v\n%s", err, doc)
	}
	got := map[string][]string{}
	for ev, groups := range v.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if b := filepath.Base(commandProgram(h.Command)); b == UserPromptBinary || b == StopBinary {
					got[ev] = append(got[ev], h.Command)
				}
			}
		}
	}
	return got
}

// withoutOurs decodes a document and drops engram's entries and the
// containers they leave empty, for a semantic comparison.
func withoutOurs(t *testing.T, doc []byte) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	hooks, _ := v["hooks"].(map[string]any)
	for ev, groups := range hooks {
		var keep []any
		for _, g := range groups.([]any) {
			gm := g.(map[string]any)
			var hs []any
			for _, h := range gm["hooks"].([]any) {
				c, _ := h.(map[string]any)["command"].(string)
				if b := filepath.Base(commandProgram(c)); b != UserPromptBinary && b != StopBinary {
					hs = append(hs, h)
				}
			}
			if len(hs) > 0 {
				gm["hooks"] = hs
				keep = append(keep, gm)
			}
		}
		if len(keep) > 0 {
			hooks[ev] = keep
		} else {
			delete(hooks, ev)
		}
	}
	if hooks != nil && len(hooks) == 0 {
		delete(v, "hooks")
	}
	return v
}

func TestMergeHooks(t *testing.T) {
	for _, tc := range settingsCases {
		t.Run(tc.name, func(t *testing.T) {
			_, path := setupSettings(t, tc.absent, tc.orig, tc.mode)
			ch, err := MergeHooks(path, hooksA)
			if err != nil {
				t.Fatalf("MergeHooks: %v", err)
			}
			got := readFile(t, path)
			checkGolden(t, tc.golden, got)

			alreadyThere := tc.golden == "ours.json"
			if ch.Changed == alreadyThere {
				t.Errorf("Changed=%v, want %v", ch.Changed, !alreadyThere)
			}
			if ch.Created != tc.absent {
				t.Errorf("Created=%v, want %v", ch.Created, tc.absent)
			}
			if n := countOurs(t, got); len(n["UserPromptSubmit"]) != 1 || len(n["Stop"]) != 1 {
				t.Errorf("engram entries per event = %v, want one each", n)
			}
			if strings.TrimSpace(tc.orig) != "" && !alreadyThere {
				if !reflect.DeepEqual(withoutOurs(t, got), withoutOurs(t, []byte(tc.orig))) {
					t.Errorf("the user's settings changed in meaning:\n%s", got)
				}
			}

			// Mode: kept for an existing file, 0600 for a new one.
			wantMode := tc.mode
			if tc.absent {
				wantMode = 0o600
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != wantMode {
				t.Errorf("mode %04o, want %04o", fi.Mode().Perm(), wantMode)
			}

			// Backup: the previous bytes, 0600, only when an existing file changed.
			bs := listBackups(t, path)
			switch {
			case tc.absent || alreadyThere:
				if len(bs) != 0 || ch.Backup != "" {
					t.Errorf("backups %v (Backup=%q), want none", bs, ch.Backup)
				}
			case len(bs) != 1 || bs[0] != ch.Backup:
				t.Errorf("backups %v, want exactly Backup=%q", bs, ch.Backup)
			default:
				if b := readFile(t, bs[0]); string(b) != tc.orig {
					t.Errorf("backup holds %q, want the original %q", b, tc.orig)
				}
				if fi, _ := os.Stat(bs[0]); fi.Mode().Perm() != 0o600 {
					t.Errorf("backup mode %04o, want 0600", fi.Mode().Perm())
				}
			}

			// Idempotent: a second run changes nothing and backs up nothing.
			ch2, err := MergeHooks(path, hooksA)
			if err != nil {
				t.Fatalf("second MergeHooks: %v", err)
			}
			if ch2.Changed || len(ch2.Actions) != 0 {
				t.Errorf("second run: Changed=%v Actions=%q, want no change", ch2.Changed, ch2.Actions)
			}
			if again := readFile(t, path); !bytes.Equal(again, got) {
				t.Errorf("second run changed the file:\n%s", firstDiff(got, again))
			}
			if n := len(listBackups(t, path)); n != len(bs) {
				t.Errorf("second run made a backup: %d backups, want %d", n, len(bs))
			}

			// Every byte of the user's text survives: cutting our entries out
			// of the text gives the original back.
			if tc.inverse {
				back, _, err := removeHooksBytes(got, hooksA)
				if err != nil {
					t.Fatal(err)
				}
				if string(back) != tc.orig {
					t.Errorf("the original is not the result minus our entries:\n%s", firstDiff([]byte(tc.orig), back))
				}
			}
			assertNoTempFiles(t, filepath.Dir(path))
		})
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".engram-tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestMergeHooksOtherPrefixReplaces(t *testing.T) {
	for _, tc := range settingsCases {
		t.Run(tc.name, func(t *testing.T) {
			_, path := setupSettings(t, tc.absent, tc.orig, tc.mode)
			if _, err := MergeHooks(path, hooksA); err != nil {
				t.Fatal(err)
			}
			ch, err := MergeHooks(path, hooksB)
			if err != nil {
				t.Fatal(err)
			}
			if !ch.Changed || !strings.Contains(strings.Join(ch.Actions, "\n"), "replaced the Stop hook") {
				t.Errorf("Actions=%q, want replacements", ch.Actions)
			}
			got := readFile(t, path)
			want := map[string][]string{"UserPromptSubmit": {hooksB.UserPromptSubmit}, "Stop": {hooksB.Stop}}
			if n := countOurs(t, got); !reflect.DeepEqual(n, want) {
				t.Errorf("engram entries %v, want %v", n, want)
			}
			// Same bytes as installing at the new prefix straight away.
			cmds, _ := hooksB.commands()
			direct, _, err := mergeHooksBytes([]byte(tc.orig), cmds, hooksB)
			if err != nil {
				t.Fatal(err)
			}
			if tc.golden != "ours.json" && !bytes.Equal(got, direct) {
				t.Errorf("reinstall differs from a direct install:\n%s", firstDiff(direct, got))
			}
		})
	}
}

func TestMergeHooksDuplicatesCollapse(t *testing.T) {
	orig := `{"hooks": {"Stop": [
  {"hooks": [{"type": "command", "command": "/old/engram-hook-stop"}, {"type": "command", "command": "mine"}]},
  {"hooks": [{"type": "command", "command": "/older/engram-hook-stop"}]}
]}}
`
	_, path := setupSettings(t, false, orig, 0o600)
	if _, err := MergeHooks(path, hooksA); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if n := countOurs(t, got); len(n["Stop"]) != 1 || n["Stop"][0] != hooksA.Stop {
		t.Errorf("Stop entries %v, want only %s", n["Stop"], hooksA.Stop)
	}
	if !bytes.Contains(got, []byte(`"command": "mine"`)) {
		t.Errorf("the user's hook in the same group was lost:\n%s", got)
	}
}

func TestMergeHooksRefuses(t *testing.T) {
	tests := []struct {
		name, orig string
		want       []string // in the error message
		invalid    bool     // errors.Is(err, ErrInvalidJSON)
	}{
		{"trailing comma", "{\n  \"model\": \"x\",\n}\n", []string{"line 3, column 1"}, true},
		{"missing colon", "{\n  \"model\" \"x\"\n}\n", []string{"line 2, column 11"}, true},
		{"truncated", "{\"hooks\": {", []string{"unexpected end"}, true},
		{"comments", "// mine\n{}\n", []string{"line 1, column 1"}, true},
		{"top level array", "[]\n", []string{"top level is not an object"}, false},
		{"hooks not an object", `{"hooks": []}`, []string{`"hooks" is not an object`}, false},
		{"event not an array", `{"hooks": {"Stop": {}}}`, []string{`"hooks"."Stop" is not an array`}, false},
		{"hooks twice", `{"hooks": {}, "hooks": {}}`, []string{`key "hooks" appears twice`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, path := setupSettings(t, false, tt.orig, 0o644)
			before := time.Now().Add(-time.Hour)
			if err := os.Chtimes(path, before, before); err != nil {
				t.Fatal(err)
			}
			_, err := MergeHooks(path, hooksA)
			if err == nil {
				t.Fatal("MergeHooks accepted it")
			}
			for _, w := range append(tt.want, path, "not changed") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if errors.Is(err, ErrInvalidJSON) != tt.invalid {
				t.Errorf("errors.Is(err, ErrInvalidJSON)=%v, want %v", !tt.invalid, tt.invalid)
			}
			if got := readFile(t, path); string(got) != tt.orig {
				t.Errorf("file changed to %q", got)
			}
			fi, _ := os.Stat(path)
			if !fi.ModTime().Equal(before) || fi.Mode().Perm() != 0o644 {
				t.Errorf("file touched: mtime %v mode %04o", fi.ModTime(), fi.Mode().Perm())
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only settings.json (no backup, no temp file)", len(entries))
			}
			// Uninstall refuses it the same way.
			if _, err := RemoveHooks(path, hooksA); tt.invalid && !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("RemoveHooks: %v, want ErrInvalidJSON", err)
			}
		})
	}
}

func TestSettingsSymlinks(t *testing.T) {
	t.Run("out of the directory: refused", func(t *testing.T) {
		root := t.TempDir()
		dir, outside := filepath.Join(root, "claude"), filepath.Join(root, "dotfiles", "settings.json")
		mkdirs(t, dir, filepath.Dir(outside))
		writeFile(t, outside, "{}\n", 0o600)
		link := filepath.Join(dir, "settings.json")
		if err := os.Symlink("../dotfiles/settings.json", link); err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]func(string, Hooks) (Change, error){"MergeHooks": MergeHooks, "RemoveHooks": RemoveHooks} {
			if _, err := f(link, hooksA); !errors.Is(err, ErrSymlinkOutside) {
				t.Errorf("%s: %v, want ErrSymlinkOutside", name, err)
			}
		}
		if got := readFile(t, outside); string(got) != "{}\n" {
			t.Errorf("the target outside was changed: %q", got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("config dir holds %d entries, want only the link", len(entries))
		}
	})
	t.Run("dangling: refused", func(t *testing.T) {
		dir := t.TempDir()
		link := filepath.Join(dir, "settings.json")
		if err := os.Symlink("nowhere.json", link); err != nil {
			t.Fatal(err)
		}
		if _, err := MergeHooks(link, hooksA); !errors.Is(err, ErrSymlinkOutside) {
			t.Errorf("MergeHooks: %v, want ErrSymlinkOutside", err)
		}
	})
	t.Run("inside the directory: written through", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "profiles", "work.json")
		mkdirs(t, filepath.Dir(target))
		writeFile(t, target, "{\"model\": \"x\"}\n", 0o640)
		link := filepath.Join(dir, "settings.json")
		if err := os.Symlink("profiles/work.json", link); err != nil {
			t.Fatal(err)
		}
		if _, err := MergeHooks(link, hooksA); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("settings.json is no longer a symlink")
		}
		if n := countOurs(t, readFile(t, target)); len(n) != 2 {
			t.Errorf("target has engram entries %v, want both", n)
		}
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
			t.Errorf("target mode %04o, want 0640 kept", fi.Mode().Perm())
		}
		if _, err := RemoveHooks(link, hooksA); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, target); string(got) != "{\"model\": \"x\"}\n" {
			t.Errorf("after RemoveHooks the target holds %q", got)
		}
	})
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, p, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestRemoveHooksRestoresOriginal(t *testing.T) {
	sequences := []struct {
		name    string
		install []Hooks
	}{
		{"setup then uninstall", []Hooks{hooksA}},
		{"setup twice", []Hooks{hooksA, hooksA}},
		{"setup, reinstall at another prefix", []Hooks{hooksA, hooksB}},
	}
	for _, tc := range settingsCases {
		if tc.golden == "ours.json" || tc.golden == "ours-shell.golden" {
			continue // the original already holds our hooks: see TestRemoveHooksPreexisting
		}
		for _, seq := range sequences {
			t.Run(tc.name+"/"+seq.name, func(t *testing.T) {
				_, path := setupSettings(t, tc.absent, tc.orig, tc.mode)
				for _, h := range seq.install {
					if _, err := MergeHooks(path, h); err != nil {
						t.Fatal(err)
					}
				}
				ch, err := RemoveHooks(path, seq.install[len(seq.install)-1])
				if err != nil {
					t.Fatalf("RemoveHooks: %v", err)
				}
				if !ch.Changed {
					t.Errorf("Changed=false")
				}
				if tc.absent {
					if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) || !ch.Removed {
						t.Errorf("settings.json still there (Removed=%v), want it gone as before setup", ch.Removed)
					}
				} else {
					got := readFile(t, path)
					if string(got) != tc.orig {
						t.Errorf("not the original bytes:\n%s", firstDiff([]byte(tc.orig), got))
					}
					if fi, _ := os.Stat(path); fi.Mode().Perm() != tc.mode {
						t.Errorf("mode %04o, want %04o", fi.Mode().Perm(), tc.mode)
					}
				}
				ch2, err := RemoveHooks(path, hooksA)
				if err != nil || ch2.Changed {
					t.Errorf("second RemoveHooks: Changed=%v err=%v, want nothing to do", ch2.Changed, err)
				}
			})
		}
	}
}

func TestRemoveHooksAfterUserEdit(t *testing.T) {
	tests := []struct {
		name, orig string
		absent     bool
		edit       func(string) string
	}{
		{"custom: model changed", readTestdata("custom.json"), false,
			func(s string) string { return strings.Replace(s, `"model": "opus"`, `"model": "sonnet"`, 1) }},
		{"custom: a key added at the end", readTestdata("custom.json"), false,
			func(s string) string { return strings.TrimSuffix(s, "}\n") + `,"theme": "dark"}` + "\n" }},
		{"empty object: a hook of theirs added to our event", "{}\n", false,
			func(s string) string {
				return strings.Replace(s, `"Stop": [`, `"Stop": [{"hooks": [{"type": "command", "command": "theirs"}]},`, 1)
			}},
		{"no file: a key added", "", true,
			func(s string) string { return strings.Replace(s, "{\n", "{\n  \"model\": \"opus\",\n", 1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, path := setupSettings(t, tt.absent, tt.orig, 0o600)
			if _, err := MergeHooks(path, hooksA); err != nil {
				t.Fatal(err)
			}
			edited := tt.edit(string(readFile(t, path)))
			writeFile(t, path, edited, 0o600)
			ch, err := RemoveHooks(path, hooksA)
			if err != nil {
				t.Fatalf("RemoveHooks: %v", err)
			}
			got := readFile(t, path)
			if n := countOurs(t, got); len(n) != 0 {
				t.Errorf("engram entries left: %v\n%s", n, got)
			}
			if ch.Restored != "" {
				t.Errorf("restored a backup (%s) over the user's edit", ch.Restored)
			}
			// Cutting out engram's entries makes no backup: uninstall
			// leaves no file of its own.
			if ch.Backup != "" {
				t.Errorf("a backup (%s) of the edited file before cutting", ch.Backup)
			}
			// The edit survives: the result means the edited file minus our entries.
			if !reflect.DeepEqual(withoutOurs(t, got), withoutOurs(t, []byte(edited))) {
				t.Errorf("the user's edit was not kept:\n%s", got)
			}
		})
	}
	// Where cutting is the exact inverse, the edit is all that differs.
	t.Run("custom: exact bytes", func(t *testing.T) {
		orig := readTestdata("custom.json")
		_, path := setupSettings(t, false, orig, 0o600)
		if _, err := MergeHooks(path, hooksA); err != nil {
			t.Fatal(err)
		}
		edit := func(s string) string { return strings.Replace(s, `"model": "opus"`, `"model": "sonnet"`, 1) }
		writeFile(t, path, edit(string(readFile(t, path))), 0o600)
		if _, err := RemoveHooks(path, hooksA); err != nil {
			t.Fatal(err)
		}
		if got, want := readFile(t, path), edit(orig); string(got) != want {
			t.Errorf("want the original with the user's edit:\n%s", firstDiff([]byte(want), got))
		}
	})
}

func TestRemoveHooksPreexisting(t *testing.T) {
	// Hooks added by hand (the README's old way, in shell form), setup
	// changing them to exec form: uninstall still takes them out, keeping
	// the user's other hook.
	orig := readTestdata("ours-shell.json")
	_, path := setupSettings(t, false, orig, 0o600)
	if ch, err := MergeHooks(path, hooksA); err != nil || !ch.Changed {
		t.Fatalf("MergeHooks: Changed=%v err=%v, want the hooks changed to exec form", ch.Changed, err)
	}
	if _, err := RemoveHooks(path, hooksA); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if n := countOurs(t, got); len(n) != 0 {
		t.Errorf("engram entries left: %v", n)
	}
	if !bytes.Contains(got, []byte("other-stop-hook")) {
		t.Errorf("the user's own hook was removed:\n%s", got)
	}
}

func TestRemoveHooksNothingToDo(t *testing.T) {
	for name, orig := range map[string]*string{"no file": nil, "no hooks of ours": ptr(readTestdata("custom.json"))} {
		t.Run(name, func(t *testing.T) {
			_, path := setupSettings(t, orig == nil, deref(orig), 0o600)
			ch, err := RemoveHooks(path, hooksA)
			if err != nil || ch.Changed {
				t.Errorf("Changed=%v err=%v, want nothing done", ch.Changed, err)
			}
			if orig != nil && string(readFile(t, path)) != *orig {
				t.Errorf("file changed")
			}
			if len(listBackups(t, path)) != 0 {
				t.Errorf("backup made")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestCommandProgram(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"/opt/bin/engram-hook-stop", "/opt/bin/engram-hook-stop"},
		{"  /opt/bin/engram-hook-stop --flag", "/opt/bin/engram-hook-stop"},
		{`'/Users/a b/bin/engram-hook-stop'`, "/Users/a b/bin/engram-hook-stop"},
		{`"/Users/a b/bin/engram-hook-stop" x`, "/Users/a b/bin/engram-hook-stop"},
		{`/Users/a\ b/engram-hook-stop`, "/Users/a b/engram-hook-stop"},
		{"ENGRAM_HOME=/x FOO=1 ~/bin/engram-hook-stop", "~/bin/engram-hook-stop"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := commandProgram(tt.cmd); got != tt.want {
			t.Errorf("commandProgram(%q)=%q, want %q", tt.cmd, got, tt.want)
		}
	}
	for _, p := range []string{"/a/b", "/a b/c", "/it's/here", `/x"y/$z`} {
		if got := commandProgram(shellQuote(p)); got != p {
			t.Errorf("commandProgram(shellQuote(%q))=%q", p, got)
		}
	}
}

func TestMergeHooksQuotesOddPaths(t *testing.T) {
	_, path := setupSettings(t, true, "", 0)
	h := HooksIn("/Users/Jane Doe/bin")
	if _, err := MergeHooks(path, h); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"UserPromptSubmit": {"'/Users/Jane Doe/bin/engram-hook-userprompt'"},
		"Stop":             {"'/Users/Jane Doe/bin/engram-hook-stop'"},
	}
	if got := countOurs(t, readFile(t, path)); !reflect.DeepEqual(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	// A blank keeps the shell form (the client takes an exec-form
	// "command" as one name and warns about blanks); a path without one,
	// however odd, is written as it is, in exec form.
	if bytes.Contains(readFile(t, path), []byte(`"args"`)) {
		t.Errorf("a path with a blank was written in exec form:\n%s", readFile(t, path))
	}
	_, path2 := setupSettings(t, true, "", 0)
	if _, err := MergeHooks(path2, HooksIn("/opt/it's/bin")); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string    `json:"command"`
				Args    *[]string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(readFile(t, path2), &doc); err != nil {
		t.Fatal(err)
	}
	if h := doc.Hooks["Stop"][0].Hooks[0]; h.Command != "/opt/it's/bin/engram-hook-stop" || h.Args == nil || len(*h.Args) != 0 {
		t.Errorf("Stop hook %+v, want the path as it is with empty args", h)
	}
	if _, err := MergeHooks(path, Hooks{Stop: "relative/engram-hook-stop"}); err == nil {
		t.Errorf("a relative path was accepted")
	}
}
