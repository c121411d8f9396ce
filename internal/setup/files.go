package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// ErrSymlinkOutside is returned for a file that is a symlink leading out of
// its directory (or nowhere): setup never writes through such a link.
var ErrSymlinkOutside = errors.New("is a symlink to a file outside its directory")

// ErrChangedMeanwhile is returned when a file changed between setup reading
// it and replacing it (the client rewrites settings.json itself).
var ErrChangedMeanwhile = errors.New("changed while it was being edited; nothing was written, run again")

// Change says what one edit of a user's file did.
type Change struct {
	Path     string   // the file, as named (a symlink is written through)
	Changed  bool     // the file's bytes changed, or it was created or removed
	Created  bool     // the file did not exist before
	Removed  bool     // the file was removed (setup had created it)
	Backup   string   // the copy of the previous bytes made first, if any
	Restored string   // the backup whose bytes were put back, if any
	Actions  []string // what was done, for a person
}

// backupSuffix starts the name of a backup: <file>.engram-backup-<UTC time>.
const backupSuffix = ".engram-backup-"

// testOnlyNow fixes backup times in tests.
var testOnlyNow = time.Now

// editable is a user file read for editing.
type editable struct {
	path   string      // as given
	target string      // what is written: path, or the symlink's target inside the directory
	link   bool        // path is a symlink
	exists bool        // target exists
	data   []byte      // target's bytes
	mode   fs.FileMode // target's permission bits (0600 for a new file)
}

// openEditable reads a file that setup may rewrite. A symlink is followed
// only to a target inside the directory holding the link.
func openEditable(path string) (*editable, error) {
	f := &editable{path: path, target: path, mode: 0o600}
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		f.link = true
		if f.target, err = insideTarget(path); err != nil {
			return nil, err
		}
		if fi, err = os.Stat(f.target); err != nil {
			return nil, err
		}
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if f.data, err = os.ReadFile(f.target); err != nil {
		return nil, err
	}
	f.exists = true
	f.mode = fi.Mode().Perm()
	return f, nil
}

// insideTarget resolves a symlink and checks that the file it leads to lies
// inside the link's own directory (both sides resolved, so a directory that
// is itself reached through a symlink is fine).
func insideTarget(link string) (string, error) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(link))
	if err != nil {
		return "", err
	}
	t, err := filepath.EvalSymlinks(link)
	if err != nil {
		dest, _ := os.Readlink(link)
		return "", fmt.Errorf("%s %w (it leads to %q, which does not exist); not following it", link, ErrSymlinkOutside, dest)
	}
	rel, err := filepath.Rel(dir, t)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s %w %s (it leads to %s); not following it: edit that file yourself", link, ErrSymlinkOutside, dir, t)
	}
	return t, nil
}

// commit replaces the file's bytes, after a backup of the old ones when
// backup is set and the file existed.
func (f *editable) commit(out []byte, actions []string, backup bool) (Change, error) {
	ch := Change{Path: f.path, Changed: true, Created: !f.exists, Actions: actions}
	if backup && f.exists {
		b, err := writeBackup(f.path, f.data)
		if err != nil {
			return Change{Path: f.path}, err
		}
		ch.Backup = b
	}
	if err := f.replace(out); err != nil {
		return Change{Path: f.path, Backup: ch.Backup}, err
	}
	return ch, nil
}

// replace writes out to a temporary file beside the target and renames it
// over the target, keeping the target's mode. It refuses when the target no
// longer holds what was read.
func (f *editable) replace(out []byte) error {
	dir := filepath.Dir(f.target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(f.target)+".engram-tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(f.mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := f.unchanged(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), f.target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// unchanged checks that the target still holds what was read.
func (f *editable) unchanged() error {
	now, err := os.ReadFile(f.target)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !f.exists:
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", f.path, err)
	case !f.exists || !bytes.Equal(now, f.data):
		return fmt.Errorf("%s %w", f.path, ErrChangedMeanwhile)
	}
	return nil
}

// remove deletes a file setup had created.
func (f *editable) remove(actions []string) (Change, error) {
	if err := f.unchanged(); err != nil {
		return Change{Path: f.path}, err
	}
	if err := os.Remove(f.target); err != nil {
		return Change{Path: f.path}, err
	}
	return Change{Path: f.path, Changed: true, Removed: true, Actions: actions}, nil
}

// restoreOriginal looks for the original of the current bytes: the newest
// backup from which setup's edit reproduces them exactly, else no file at
// all. Found, the original is put back (a backup's bytes, or the removal of
// the file) and ok is true.
func (f *editable) restoreOriginal(reproduces func(orig []byte) bool) (ch Change, ok bool, err error) {
	for _, b := range backups(f.path) {
		data, err := os.ReadFile(b)
		if err != nil || !reproduces(data) {
			continue
		}
		if err := f.replace(data); err != nil {
			return Change{Path: f.path}, false, err
		}
		return Change{Path: f.path, Changed: true, Restored: b,
			Actions: []string{"put back the bytes it had before setup, from " + b}}, true, nil
	}
	if !f.link && reproduces(nil) {
		ch, err := f.remove([]string{"removed it: setup had created it and it holds nothing else"})
		return ch, err == nil, err
	}
	return Change{Path: f.path}, false, nil
}

// backups lists the backups of a file, newest first. The UTC time in their
// names has a fixed width, so the names sort by time.
func backups(path string) []string {
	dir, base := filepath.Dir(path), filepath.Base(path)+backupSuffix
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base) && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// writeBackup saves data as <path>.engram-backup-<time>, 0600, never
// overwriting an existing file.
func writeBackup(path string, data []byte) (string, error) {
	t := testOnlyNow().UTC()
	for range 100 {
		name := path + backupSuffix + t.Format("20060102T150405.000000000Z")
		b, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			t = t.Add(time.Nanosecond)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("backup of %s: %w", path, err)
		}
		_, err = b.Write(data)
		if err == nil {
			err = b.Sync()
		}
		if cerr := b.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("backup of %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("backup of %s: no free name", path)
}

// dropBackups deletes every backup setup made of path (see writeBackup):
// once uninstall has taken engram's entries out, they serve nothing, and
// engram leaves no file of its own behind. The change says which went.
func dropBackups(ch *Change, path string) error {
	var gone []string
	var errs []error
	for _, b := range backups(path) {
		if err := os.Remove(b); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, filepath.Base(b))
	}
	if len(gone) > 0 {
		ch.Path = path
		ch.Actions = append(ch.Actions, "deleted the backups setup had made of it: "+strings.Join(gone, ", "))
	}
	return errors.Join(errs...)
}

// syncDir makes a rename durable; failure only weakens durability.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
