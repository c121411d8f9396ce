package setup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const memLine = "@~/.claude-memory/MEMORY.md"

func TestImportLine(t *testing.T) {
	tests := []struct{ home, user, want string }{
		{"/home/u/.claude-memory", "/home/u", "@~/.claude-memory/MEMORY.md"},
		{"/home/u/data/engram", "/home/u", "@~/data/engram/MEMORY.md"},
		{"/srv/engram", "/home/u", "@/srv/engram/MEMORY.md"},
		{"/home/u2/engram", "/home/u", "@/home/u2/engram/MEMORY.md"},
		{"/srv/engram", "", "@/srv/engram/MEMORY.md"},
	}
	for _, tt := range tests {
		if got := ImportLine(tt.home, tt.user); got != tt.want {
			t.Errorf("ImportLine(%q, %q)=%q, want %q", tt.home, tt.user, got, tt.want)
		}
	}
}

func TestImportRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		absent  bool
		orig    string
		want    string // after AddImport
		changed bool
	}{
		{name: "missing file", absent: true, want: memLine + "\n", changed: true},
		{name: "empty file", orig: "", want: memLine + "\n", changed: true},
		{name: "trailing newline", orig: "# Me\n\nBe brief.\n", want: "# Me\n\nBe brief.\n" + memLine + "\n", changed: true},
		{name: "no trailing newline", orig: "# Me\nBe brief.", want: "# Me\nBe brief.\n" + memLine + "\n", changed: true},
		{name: "CRLF", orig: "a\r\nb\r\n", want: "a\r\nb\r\n" + memLine + "\r\n", changed: true},
		{name: "similar line only", orig: memLine + "x\n", want: memLine + "x\n" + memLine + "\n", changed: true},
		{name: "line already there", orig: "a\n" + memLine + "\nb\n", want: "a\n" + memLine + "\nb\n"},
		{name: "line already there with trailing blanks", orig: memLine + "  \r\n", want: memLine + "  \r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "CLAUDE.md")
			if !tt.absent {
				writeFile(t, path, tt.orig, 0o644)
			}
			ch, err := AddImport(path, memLine)
			if err != nil {
				t.Fatalf("AddImport: %v", err)
			}
			if ch.Changed != tt.changed {
				t.Errorf("Changed=%v, want %v", ch.Changed, tt.changed)
			}
			if got := string(readFile(t, path)); got != tt.want {
				t.Errorf("after AddImport: %q, want %q", got, tt.want)
			}
			if ch2, err := AddImport(path, memLine); err != nil || ch2.Changed {
				t.Errorf("second AddImport: Changed=%v err=%v, want no change", ch2.Changed, err)
			}
			if got := string(readFile(t, path)); got != tt.want {
				t.Errorf("second AddImport changed the file to %q", got)
			}
			if !tt.changed {
				return // the user's own line: see TestRemoveImportUserLine
			}
			wantMode := fs.FileMode(0o644)
			if tt.absent {
				wantMode = 0o600
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != wantMode {
				t.Errorf("mode %04o, want %04o", fi.Mode().Perm(), wantMode)
			}

			ch, err = RemoveImport(path, memLine)
			if err != nil {
				t.Fatalf("RemoveImport: %v", err)
			}
			if !ch.Changed {
				t.Errorf("RemoveImport: Changed=false")
			}
			if tt.absent {
				if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("CLAUDE.md still there, want it gone as before setup")
				}
				return
			}
			if got := string(readFile(t, path)); got != tt.orig {
				t.Errorf("after RemoveImport: %q, want the original %q", got, tt.orig)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
				t.Errorf("mode %04o after RemoveImport, want 0644", fi.Mode().Perm())
			}
		})
	}
}

func TestRemoveImportAfterUserEdit(t *testing.T) {
	tests := []struct {
		name, orig string
		absent     bool
		edit       func(string) string
		want       string
	}{
		{"line added after ours", "a\n", false,
			func(s string) string { return s + "new\n" }, "a\nnew\n"},
		{"line added before ours", "a", false,
			func(s string) string { return "top\n" + s }, "top\na\n"},
		{"ours last without newline", "a\n", false,
			func(s string) string { return "top\n" + strings.TrimSuffix(s, "\n") }, "top\na"},
		{"created by setup, then edited", "", true,
			func(s string) string { return s + "mine\n" }, "mine\n"},
		// Notes added below the line, set off by a blank line: the file
		// does not start with that blank line once the line is out.
		{"created by setup, then notes set off by a blank line", "", true,
			func(s string) string { return s + "\n# Notes\n- keep\n" }, "# Notes\n- keep\n"},
		{"CRLF notes set off by a blank line", "", true,
			func(s string) string { return s + "\r\n# Notes\r\n" }, "# Notes\r\n"},
		{"after a blank line, notes set off by another", "# Me\n\n", false,
			func(s string) string { return s + "\n# Notes\n" }, "# Me\n\n# Notes\n"},
		{"after text, notes set off by a blank line", "# Me\n", false,
			func(s string) string { return s + "\n# Notes\n" }, "# Me\n\n# Notes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "CLAUDE.md")
			if !tt.absent {
				writeFile(t, path, tt.orig, 0o600)
			}
			if _, err := AddImport(path, memLine); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, tt.edit(string(readFile(t, path))), 0o600)
			ch, err := RemoveImport(path, memLine)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(readFile(t, path)); got != tt.want {
				t.Errorf("after RemoveImport: %q, want %q", got, tt.want)
			}
			if ch.Restored != "" {
				t.Errorf("restored %s over the user's edit", ch.Restored)
			}
		})
	}
}

func TestRemoveImportUserLine(t *testing.T) {
	// The line was the user's before setup (setup changed nothing): uninstall
	// still takes engram's wiring out, and only that line.
	path := filepath.Join(t.TempDir(), "CLAUDE.md")
	writeFile(t, path, "a\n"+memLine+"\nb\n", 0o600)
	if _, err := RemoveImport(path, memLine); err != nil {
		t.Fatal(err)
	}
	if got := string(readFile(t, path)); got != "a\nb\n" {
		t.Errorf("got %q, want %q", got, "a\nb\n")
	}
}

func TestImportRefusals(t *testing.T) {
	root := t.TempDir()
	dir, out := filepath.Join(root, "claude"), filepath.Join(root, "dotfiles", "CLAUDE.md")
	mkdirs(t, dir, filepath.Dir(out))
	writeFile(t, out, "mine\n", 0o600)
	link := filepath.Join(dir, "CLAUDE.md")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	if _, err := AddImport(link, memLine); !errors.Is(err, ErrSymlinkOutside) {
		t.Errorf("AddImport through a symlink out: %v, want ErrSymlinkOutside", err)
	}
	if got := string(readFile(t, out)); got != "mine\n" {
		t.Errorf("target changed: %q", got)
	}
	for _, bad := range []string{"", "a\nb", " @x"} {
		if _, err := AddImport(filepath.Join(dir, "other.md"), bad); err == nil {
			t.Errorf("AddImport accepted the line %q", bad)
		}
	}
}
