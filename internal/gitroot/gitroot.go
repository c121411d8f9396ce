// Package gitroot resolves the project a working directory belongs to the way
// Claude Code does: the top-level directory of its git repository, or the
// directory itself outside a repository. It only stats files: no git process.
package gitroot

import (
	"os"
	"path/filepath"
)

// Find returns the git root of dir (the nearest ancestor holding a .git
// directory or file), or dir itself, cleaned, when none is found. ok reports
// whether a repository was found.
func Find(dir string) (root string, ok bool) {
	if dir == "" {
		return "", false
	}
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir, false
		}
		d = parent
	}
}

// Name is the short project name shown to users: the root's last element.
func Name(root string) string {
	if root == "" {
		return ""
	}
	b := filepath.Base(root)
	if b == string(filepath.Separator) || b == "." {
		return root
	}
	return b
}
