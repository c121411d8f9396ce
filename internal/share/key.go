package share

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ProjectKey turns a git remote URL into the key a project is known by on
// every machine: host and path, lower case, without scheme, user, port,
// trailing ".git" or slash. git@github.com:Org/Repo.git,
// https://github.com/org/repo and ssh://git@github.com:22/org/repo/ are all
// "github.com/org/repo".
func ProjectKey(remote string) (string, error) {
	r := strings.TrimSpace(remote)
	if r == "" {
		return "", errors.New("empty remote URL")
	}
	var host, p string
	if i := strings.Index(r, "://"); i >= 0 {
		u, err := url.Parse(r)
		if err != nil {
			return "", fmt.Errorf("remote URL %q: %v", remote, err)
		}
		if u.Scheme == "file" {
			return "", fmt.Errorf("remote URL %q is a local path: a project shared between machines needs a remote they all reach", remote)
		}
		host, p = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(r, ":"); ok && !strings.Contains(at, "/") {
		// scp-like: [user@]host:path
		if i := strings.LastIndex(at, "@"); i >= 0 {
			at = at[i+1:]
		}
		host, p = at, rest
	} else {
		return "", fmt.Errorf("remote URL %q is a local path: a project shared between machines needs a remote they all reach", remote)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	p = strings.ToLower(path.Clean("/" + strings.TrimSpace(p)))
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	p = strings.Trim(p, "/")
	if host == "" || p == "" || p == "." {
		return "", fmt.Errorf("remote URL %q names no host and repository", remote)
	}
	return host + "/" + p, nil
}

// RemoteOf returns the URL of the repository's remote at root: origin, or
// the only remote there is. It reads the repository's config file (no git
// process), following a .git file to its directory and a worktree to the
// repository's common directory.
func RemoteOf(root string) (string, error) {
	gitDir := filepath.Join(root, ".git")
	fi, err := os.Stat(gitDir)
	if err != nil {
		return "", fmt.Errorf("%s is not a git repository: %v", root, err)
	}
	if !fi.IsDir() {
		data, err := os.ReadFile(gitDir)
		if err != nil {
			return "", err
		}
		d, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return "", fmt.Errorf("%s: not a gitdir file", gitDir)
		}
		d = strings.TrimSpace(d)
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		gitDir = d
	}
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		d := strings.TrimSpace(string(data))
		if !filepath.IsAbs(d) {
			d = filepath.Join(gitDir, d)
		}
		gitDir = d
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return "", fmt.Errorf("%s: %v", root, err)
	}
	remotes := map[string]string{}
	var order []string
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if strings.HasPrefix(line, "[") {
			section = ""
			head := strings.TrimSuffix(strings.TrimPrefix(line, "["), "]")
			if kind, name, ok := strings.Cut(head, " "); ok && strings.EqualFold(kind, "remote") {
				section = strings.Trim(strings.TrimSpace(name), `"`)
			}
			continue
		}
		if section == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "url") {
			continue
		}
		if _, seen := remotes[section]; !seen {
			order = append(order, section)
			remotes[section] = strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	if u := remotes["origin"]; u != "" {
		return u, nil
	}
	switch len(order) {
	case 0:
		return "", fmt.Errorf("%s has no git remote: a shared project is known by its remote URL (git remote add origin URL)", root)
	case 1:
		return remotes[order[0]], nil
	}
	return "", fmt.Errorf("%s has several remotes and no origin (%s): name the shared one origin", root, strings.Join(order, ", "))
}

// MaskURL hides the password of a connection URL ("postgres://ann:xxxxx@db/engram").
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unreadable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}
