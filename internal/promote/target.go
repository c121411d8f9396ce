package promote

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/gitroot"
)

// Locations say where the MEMORY.md files Claude Code loads are.
type Locations struct {
	// ClaudeConfigDir is CLAUDE_CONFIG_DIR (~/.claude).
	ClaudeConfigDir string
	// EngramHome is ENGRAM_HOME: the global MEMORY.md and its archive.
	EngramHome string
	// AutoMemoryDir is the autoMemoryDirectory setting of the user's
	// settings.json as Claude Code resolves it ("" when unset or unusable).
	// When set, every project shares this one auto-memory directory.
	AutoMemoryDir string
	// SettingsProblem says why settings.json could not be read ("" when
	// it was read or does not exist).
	SettingsProblem string
}

// LocationsFrom reads the locations from the configuration and the user's
// Claude Code settings.
func LocationsFrom(cfg config.Config) Locations {
	l := Locations{ClaudeConfigDir: cfg.ClaudeConfigDir, EngramHome: cfg.Home}
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	path := filepath.Join(cfg.ClaudeConfigDir, "settings.json")
	dir, err := readAutoMemoryDirectory(path)
	switch {
	case err != nil:
		l.SettingsProblem = err.Error()
	case dir != "":
		if l.AutoMemoryDir = ResolveAutoMemoryDirectory(dir, home); l.AutoMemoryDir == "" {
			l.SettingsProblem = fmt.Sprintf("%s: autoMemoryDirectory %q is not an absolute path or ~/ path; Claude Code ignores it", path, dir)
		}
	}
	return l
}

// readAutoMemoryDirectory returns the autoMemoryDirectory of a settings
// file ("" when the file or the key is absent).
func readAutoMemoryDirectory(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var s struct {
		AutoMemoryDirectory *string `json:"autoMemoryDirectory"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return "", fmt.Errorf("%s is not valid JSON (%v): its autoMemoryDirectory, if any, is not honoured", path, err)
	}
	if s.AutoMemoryDirectory == nil {
		return "", nil
	}
	return *s.AutoMemoryDirectory, nil
}

// ResolveAutoMemoryDirectory turns an autoMemoryDirectory setting into the
// directory Claude Code uses, or "" when the client would ignore it: a
// leading "~/" is the home directory (a "~/" path that climbs out of it is
// ignored), the result must be absolute, at least three characters long
// and free of NUL bytes.
func ResolveAutoMemoryDirectory(v, home string) string {
	if v == "" {
		return ""
	}
	if strings.HasPrefix(v, "~/") {
		rest := filepath.Clean(v[2:])
		if rest == "." || rest == ".." || strings.HasPrefix(rest, "../") || home == "" {
			return ""
		}
		v = filepath.Join(home, rest)
	}
	v = strings.TrimRight(filepath.Clean(v), "/")
	if !filepath.IsAbs(v) || len(v) < 3 || strings.ContainsRune(v, 0) {
		return ""
	}
	return v
}

// GlobalFile is engram's own MEMORY.md, loaded through the import line in
// Claude Code's CLAUDE.md.
func (l Locations) GlobalFile() string { return filepath.Join(l.EngramHome, "MEMORY.md") }

// ArchiveDir holds the graduated sections moved out of the global file.
func (l Locations) ArchiveDir() string { return filepath.Join(l.EngramHome, "archive") }

// ProjectFile is the auto-memory MEMORY.md Claude Code loads in every
// session under a project's git root.
func (l Locations) ProjectFile(root string) string {
	return filepath.Join(l.ProjectMemoryDir(root), "MEMORY.md")
}

// ProjectMemoryDir is the auto-memory directory of a project's git root:
// autoMemoryDirectory when set, else
// $CLAUDE_CONFIG_DIR/projects/<sanitized root>/memory.
func (l Locations) ProjectMemoryDir(root string) string {
	if l.AutoMemoryDir != "" {
		return l.AutoMemoryDir
	}
	return filepath.Join(l.ClaudeConfigDir, "projects", Sanitize(root), "memory")
}

// sanitizeMax is the longest folder name Claude Code keeps as is.
const sanitizeMax = 200

// Sanitize names a project folder under $CLAUDE_CONFIG_DIR/projects the way
// Claude Code does: every UTF-16 code unit that is not an ASCII letter or
// digit becomes "-"; a name longer than 200 is cut to 200 and followed by
// "-" and a base-36 hash of the path.
func Sanitize(p string) string {
	units := utf16.Encode([]rune(p))
	b := make([]byte, len(units))
	for i, u := range units {
		if 'a' <= u && u <= 'z' || 'A' <= u && u <= 'Z' || '0' <= u && u <= '9' {
			b[i] = byte(u)
		} else {
			b[i] = '-'
		}
	}
	if len(b) <= sanitizeMax {
		return string(b)
	}
	// The client's string hash: h = h*31 + unit, in 32-bit arithmetic.
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	abs := int64(h)
	if abs < 0 {
		abs = -abs
	}
	return string(b[:sanitizeMax]) + "-" + strconv.FormatInt(abs, 36)
}

// ProjectRoot is the directory Claude Code keys a project's auto-memory
// on: the git root of the belief's project path. ok is false when that
// path no longer exists (the project is gone: nothing is written for it).
func ProjectRoot(projectPath string) (root string, ok bool) {
	if projectPath == "" || !filepath.IsAbs(projectPath) {
		return "", false
	}
	fi, err := os.Stat(projectPath)
	if err != nil || !fi.IsDir() {
		return "", false
	}
	root, _ = gitroot.Find(projectPath)
	return root, true
}
