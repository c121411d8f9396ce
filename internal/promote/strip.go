package promote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/store"
)

// StripResult says what Strip did to one MEMORY.md.
type StripResult struct {
	Path string
	// Beliefs and Episodes report that a block of that kind was cut out.
	Beliefs, Episodes bool
	// Removed reports that nothing else was left and the file was removed.
	Removed bool
	// Damage describes damaged markers (their blocks were cut out too).
	Damage []string
	// Retries counts the times another program wrote the file meanwhile.
	Retries int
}

// Changed reports whether the file changed.
func (r StripResult) Changed() bool { return r.Beliefs || r.Episodes }

// Describe says what was done, for a person.
func (r StripResult) Describe() string {
	var what string
	switch {
	case r.Beliefs && r.Episodes:
		what = "took out engram's blocks (beliefs, graduated episodes)"
	case r.Beliefs:
		what = "took out engram's block of beliefs"
	case r.Episodes:
		what = "took out engram's block of graduated episodes"
	default:
		return "nothing of engram's in it"
	}
	if len(r.Damage) > 0 {
		what += " (damaged markers: " + strings.Join(r.Damage, "; ") + ")"
	}
	if r.Removed {
		what += "; removed the file, which held nothing else"
	}
	return what
}

// Strip cuts engram's blocks, beliefs and graduated episodes, out of the
// MEMORY.md at path: what uninstall leaves behind, since nothing maintains
// them any more while Claude Code keeps loading the file. Every byte
// outside the blocks is kept as it is; damaged markers go with the
// engram-shaped lines next to them, as in a cycle. The write is the one of
// a cycle: the lock, the check against a concurrent writer (redone from
// what that writer left), a symlink followed only inside the file's
// directory (else ErrSymlinkOutside). A file that holds none of engram's
// markers is not touched, not even locked. When removeEmpty is set (a file
// engram created) and nothing is left, the file is removed instead of left
// empty.
func Strip(ctx context.Context, path string, removeEmpty bool) (StripResult, error) {
	r := StripResult{Path: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !hasMarker(data) {
		return r, nil
	}
	u := &fileUpdate{path: path, dir: filepath.Dir(path), removeEmpty: removeEmpty}
	u.compute = func(old []byte, exists bool) ([]byte, error) {
		d := parse(string(old), true)
		r.Beliefs, r.Episodes, r.Damage = d.beliefs, d.episodes, d.damage
		return []byte(d.foreign), nil
	}
	changed, err := u.run(ctx)
	r.Retries = u.retries
	if err != nil || !changed {
		r.Beliefs, r.Episodes, r.Damage = false, false, nil
		return r, err
	}
	r.Removed = u.removed
	return r, nil
}

func hasMarker(data []byte) bool {
	for _, m := range []string{BeliefsBegin, BeliefsEnd, EpisodesBegin, EpisodesEnd} {
		if bytes.Contains(data, []byte(m)) {
			return true
		}
	}
	return false
}

// CleanReport is what Clean did.
type CleanReport struct {
	// Files are the files engram's blocks were taken out of.
	Files []StripResult
	// Failed are the files that still hold engram's blocks, and why.
	Failed []CleanFailure
	// ListProblem says why the list of the files engram wrote could not be
	// read ("" when it was); Searched then names the places looked at
	// instead.
	ListProblem string
	Searched    []string
}

// CleanFailure is a file Clean could not clean.
type CleanFailure struct {
	Path string
	Err  error
}

// Clean takes engram's blocks out of every MEMORY.md engram wrote, for
// uninstall: the files list returns (the store's memory_files), the global
// file and the autoMemoryDirectory one. When list fails (no store, a
// damaged one), every auto-memory file under
// $CLAUDE_CONFIG_DIR/projects/*/memory is looked at instead: only those
// holding engram's markers are touched. The global file, which engram
// created, is removed when nothing else is left in it; every other file is
// kept, even empty. A file that cannot be cleaned is reported in Failed and
// the others are still cleaned.
func Clean(ctx context.Context, loc Locations, list func(context.Context) ([]store.MemoryFile, error)) CleanReport {
	var rep CleanReport
	removable := map[string]bool{loc.GlobalFile(): true}
	paths := []string{loc.GlobalFile()}
	if loc.AutoMemoryDir != "" {
		paths = append(paths, filepath.Join(loc.AutoMemoryDir, "MEMORY.md"))
	}
	files, err := list(ctx)
	if err != nil {
		rep.ListProblem = err.Error()
		pattern := filepath.Join(loc.ClaudeConfigDir, "projects", "*", "memory", "MEMORY.md")
		rep.Searched = append(slices.Clone(paths), pattern)
		found, _ := filepath.Glob(pattern) // the only error is a bad pattern
		paths = append(paths, found...)
	}
	for _, f := range files {
		paths = append(paths, f.Path)
		if f.Kind == kindGlobal {
			removable[f.Path] = true
		}
	}
	slices.Sort(paths)
	for _, p := range slices.Compact(paths) {
		if err := ctx.Err(); err != nil {
			rep.Failed = append(rep.Failed, CleanFailure{p, err})
			continue
		}
		r, err := Strip(ctx, p, removable[p])
		switch {
		case err != nil:
			rep.Failed = append(rep.Failed, CleanFailure{p, err})
			continue // its lock may still be needed: uninstall is run again
		case r.Changed():
			rep.Files = append(rep.Files, r)
		}
		removeLock(p)
	}
	return rep
}

// removeLock deletes the lock file engram's writes of path used (nothing
// of engram's is left in path to lock). It is taken first, so a writer
// still at work keeps it; anything but a regular file is left alone.
func removeLock(path string) {
	lockPath := path + ".lock"
	if fi, err := os.Lstat(lockPath); err != nil || !fi.Mode().IsRegular() {
		return
	}
	lk := flock.New(lockPath)
	if ok, err := lk.TryLock(); err != nil || !ok {
		return
	}
	os.Remove(lockPath)
	lk.Close()
}

// Error is the failure for a person, with what to do about it.
func (f CleanFailure) Error() string {
	todo := "delete"
	if !errors.Is(f.Err, ErrSymlinkOutside) {
		todo = "run uninstall again, or delete"
	}
	return fmt.Sprintf("%s: engram's blocks are still in it (%v): %s the lines from %s to %s (and from %s to %s) yourself",
		f.Path, f.Err, todo, BeliefsBegin, BeliefsEnd, EpisodesBegin, EpisodesEnd)
}

// Unwrap gives the cause.
func (f CleanFailure) Unwrap() error { return f.Err }
