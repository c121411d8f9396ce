package share

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path"
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
// the only remote there is.
func RemoteOf(ctx context.Context, root string) (string, error) {
	get := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if u, err := get("config", "--get", "remote.origin.url"); err == nil && u != "" {
		return u, nil
	}
	names, err := get("remote")
	if err != nil {
		return "", fmt.Errorf("%s: git remote: %v", root, err)
	}
	list := strings.Fields(names)
	switch len(list) {
	case 0:
		return "", fmt.Errorf("%s has no git remote: a shared project is known by its remote URL (git remote add origin URL)", root)
	case 1:
		return get("config", "--get", "remote."+list[0]+".url")
	}
	return "", fmt.Errorf("%s has several remotes and no origin (%s): name the shared one origin", root, strings.Join(list, ", "))
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
