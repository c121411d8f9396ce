package promote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// ErrSymlinkOutside is returned for a MEMORY.md that is a symlink leading
// out of the directory it is expected in (or nowhere): engram never writes
// through such a link.
var ErrSymlinkOutside = errors.New("is a symlink leading out of its directory; not following it")

// ErrKeptChanging is returned when another program rewrote the file on
// every attempt: nothing of ours was written and nothing of theirs lost.
var ErrKeptChanging = errors.New("kept changing while engram was writing it; left for the next cycle")

// lockWait bounds the wait for another engram writer of the same file.
var lockWait = 10 * time.Second

// maxAttempts bounds the read, compute, replace rounds of one update.
const maxAttempts = 8

// testOnlyBeforeReplace, when set, runs after the new content is written
// to its temporary file and before the target is checked and replaced: a
// test plays Claude Code writing the file at the worst moment.
var testOnlyBeforeReplace func(target string, attempt int)

// testOnlyAfterCheck, when set, runs after the target was found unchanged
// and before it is replaced: the narrowest window.
var testOnlyAfterCheck func(target string, attempt int)

// fileUpdate is one rewrite of a file engram shares with others.
type fileUpdate struct {
	// path is the file as named; dir the directory it must stay in (a
	// symlink is followed only to a file inside dir, both resolved).
	path, dir string
	// compute returns the new content from the current one (exists is
	// false for a missing file). It must be a pure function of its input:
	// it runs again when the file changed under us.
	compute func(old []byte, exists bool) ([]byte, error)
	// beforeReplace runs once the new content is known and before the file
	// is replaced (the archive of sections leaving the global file).
	beforeReplace func() error
	// removeEmpty removes the file, instead of leaving it empty, when the
	// new content is empty (a file engram created, with nothing else in
	// it). A symlink is never removed: its target is emptied.
	removeEmpty bool
	// removed reports that the file was removed.
	removed bool
	// retries counts the times another program had changed the file by
	// the time engram was about to replace it.
	retries int
}

// update rewrites a file safely against other writers: engram's own hold
// <path>.lock (gofrs/flock); Claude Code, which may write MEMORY.md at any
// time without it, is detected instead. The new content goes to a
// temporary file in the same directory (fsynced, the old file's mode, 0600
// for a new one), and the target is replaced only if it still holds what
// the new content was computed from; otherwise the computation is redone
// from what is there now. On Linux the replacement is an atomic exchange,
// so that a write landing between the check and the replacement comes
// back out: it is put back at once and the computation redone from it;
// elsewhere the replacement is a rename right after the check. It returns
// whether the file changed.
func (u *fileUpdate) run(ctx context.Context) (bool, error) {
	if _, err := os.Stat(u.dir); errors.Is(err, fs.ErrNotExist) {
		// Create the directory (0700) only for a file there is something
		// to put in: a gone project's folder is not brought back empty.
		out, err := u.compute(nil, false)
		if err != nil || len(out) == 0 {
			return false, err
		}
		if err := os.MkdirAll(u.dir, 0o700); err != nil {
			return false, fmt.Errorf("create %s: %w", u.dir, err)
		}
	}
	lockPath := u.path + ".lock"
	if fi, err := os.Lstat(lockPath); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("%s %w", lockPath, ErrSymlinkOutside)
	}
	lk := flock.New(lockPath, flock.SetPermissions(0o600))
	lctx, cancel := context.WithTimeout(ctx, lockWait)
	ok, err := lk.TryLockContext(lctx, 20*time.Millisecond)
	cancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return false, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if !ok {
		return false, fmt.Errorf("lock %s: another engram writer held it for %v", lockPath, lockWait)
	}
	defer lk.Close()

	target, err := resolve(u.path, u.dir)
	if err != nil {
		return false, err
	}
	mode := fs.FileMode(0o600)
	base, exists, err := readFile(target)
	if err != nil {
		return false, err
	}
	if exists {
		if fi, err := os.Stat(target); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		out, err := u.compute(base, exists)
		if err != nil {
			return false, err
		}
		if exists && bytes.Equal(out, base) || !exists && len(out) == 0 {
			return false, nil // nothing to change, or nothing to create
		}
		if u.beforeReplace != nil {
			if err := u.beforeReplace(); err != nil {
				return false, err
			}
		}
		if exists && len(out) == 0 && u.removeEmpty && target == u.path {
			removed, cur, curExists, err := removeUnchanged(target, base, attempt)
			if err != nil {
				return false, err
			}
			if removed {
				u.removed = true
				return true, nil
			}
			base, exists = cur, curExists
			u.retries++
			continue
		}
		tmp, err := writeTemp(target, out, mode)
		if err != nil {
			return false, err
		}
		if testOnlyBeforeReplace != nil {
			testOnlyBeforeReplace(target, attempt)
		}
		cur, curExists, checked, err := readFileStat(target)
		if err != nil {
			os.Remove(tmp)
			return false, err
		}
		if curExists != exists || !bytes.Equal(cur, base) {
			// Someone wrote the file since we read it: start again from
			// what is there now.
			os.Remove(tmp)
			base, exists = cur, curExists
			u.retries++
			continue
		}
		if testOnlyAfterCheck != nil {
			testOnlyAfterCheck(target, attempt)
		}
		if !exists {
			switch err := renameNoReplace(tmp, target); {
			case err == nil:
				syncDir(filepath.Dir(target))
				return true, nil
			case errors.Is(err, fs.ErrExist):
				os.Remove(tmp)
				if base, exists, err = readFile(target); err != nil {
					return false, err
				}
				u.retries++
				continue
			default:
				os.Remove(tmp)
				return false, err
			}
		}
		err = exchange(tmp, target)
		if errors.Is(err, errNoExchange) {
			if err := os.Rename(tmp, target); err != nil {
				os.Remove(tmp)
				return false, err
			}
			syncDir(filepath.Dir(target))
			return true, nil
		}
		if err != nil {
			os.Remove(tmp)
			return false, err
		}
		// tmp now holds what the target held just before the exchange. The
		// first test is one stat of the same file version we checked (same
		// file, size and modification time): a writer that replaced or
		// rewrote the file in between fails it, and its write goes back at
		// once, before it can read our content and build on it. Only then
		// is the content compared.
		if fi, err := os.Lstat(tmp); err == nil && sameVersion(checked, fi) {
			prev, _, err := readFile(tmp)
			if err == nil && bytes.Equal(prev, base) {
				os.Remove(tmp)
				syncDir(filepath.Dir(target))
				return true, nil
			}
		}
		// A write landed between the check and the exchange. Put it back
		// at once (before its writer can build on our content, which
		// lacks it), then start again from it.
		if err := exchange(tmp, target); err != nil {
			os.Rename(tmp, target)
		}
		os.Remove(tmp)
		if base, exists, err = readFile(target); err != nil {
			return false, err
		}
		u.retries++
	}
	return false, fmt.Errorf("%s %w", u.path, ErrKeptChanging)
}

// removeUnchanged removes target if it still holds base, and otherwise
// returns what it holds now. The file is moved aside in one rename and
// removed only if the moved file still holds base: a write that lands
// between the check and the move is found there and put back at once; a
// write that lands after the move creates a new file, which is left as it
// is.
func removeUnchanged(target string, base []byte, attempt int) (removed bool, cur []byte, curExists bool, err error) {
	if testOnlyBeforeReplace != nil {
		testOnlyBeforeReplace(target, attempt)
	}
	if cur, curExists, err = readFile(target); err != nil || !curExists || !bytes.Equal(cur, base) {
		return false, cur, curExists, err
	}
	if testOnlyAfterCheck != nil {
		testOnlyAfterCheck(target, attempt)
	}
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(filepath.Base(target), ".")+".engram-tmp-*")
	if err != nil {
		return false, nil, false, err
	}
	aside := f.Name()
	f.Close()
	if err := os.Rename(target, aside); err != nil {
		os.Remove(aside)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil, false, nil // someone else removed it
		}
		return false, nil, false, err
	}
	prev, _, err := readFile(aside)
	if err == nil && bytes.Equal(prev, base) {
		os.Remove(aside)
		syncDir(dir)
		return true, nil, false, nil
	}
	// A write landed between the check and the move: put it back.
	if err := renameNoReplace(aside, target); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil, false, fmt.Errorf("%s was written twice while engram was removing it: the newer version is in place, the older one kept as %s", target, aside)
		}
		return false, nil, false, err
	}
	cur, curExists, err = readFile(target)
	return false, cur, curExists, err
}

// resolve returns the file to write for path: path itself, or the target
// of a symlink when it lies inside dir (both resolved, so a directory
// reached through a symlink is fine).
func resolve(path, dir string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil
	}
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		if !fi.Mode().IsRegular() {
			return "", fmt.Errorf("%s: not a regular file", path)
		}
		return path, nil
	}
	rdir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	t, err := filepath.EvalSymlinks(path)
	if err != nil {
		dest, _ := os.Readlink(path)
		return "", fmt.Errorf("%s %w (it leads to %q, which does not exist)", path, ErrSymlinkOutside, dest)
	}
	rel, err := filepath.Rel(rdir, t)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s %w (it leads to %s, outside %s)", path, ErrSymlinkOutside, t, rdir)
	}
	if fi, err := os.Stat(t); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: its target %s is not a regular file", path, t)
	}
	return t, nil
}

// readFile reads a file; a missing one is (nil, false, nil).
func readFile(path string) ([]byte, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// readFileStat is readFile that also returns the file's status, taken from
// the same open file as the content (nil when it does not exist).
func readFileStat(path string) ([]byte, bool, fs.FileInfo, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil, nil
	}
	if err != nil {
		return nil, false, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, nil, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, false, nil, err
	}
	return b, true, fi, nil
}

// sameVersion reports whether b is the file version a was taken from: the
// same file, not written since.
func sameVersion(a, b fs.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// writeTemp writes data to a new temporary file beside target, with mode,
// synced to disk, and returns its name.
func writeTemp(target string, data []byte, mode fs.FileMode) (string, error) {
	dir := filepath.Dir(target)
	f, err := os.CreateTemp(dir, "."+strings.TrimPrefix(filepath.Base(target), ".")+".engram-tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}

// syncDir makes a rename durable; failure only weakens durability.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// linkNoReplace gives the content of a the name b unless b exists
// (fs.ErrExist), by a hard link, which never replaces; where links are not
// available, by a rename.
func linkNoReplace(a, b string) error {
	err := os.Link(a, b)
	switch {
	case err == nil:
		os.Remove(a)
		return nil
	case errors.Is(err, fs.ErrExist):
		return fs.ErrExist
	}
	return os.Rename(a, b)
}
