// Package notice carries word of a lagging worker from the Stop hook, which
// reads the database, to the prompt hook, which does not (nor links
// SQLite): a small file in ENGRAM_HOME holds the worker's last run and the
// oldest capture waiting for it, and the prompt hook tells the user once a
// day.
package notice

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	// Name is the notice file in ENGRAM_HOME.
	Name = "worker-stale"
	// toldName's modification time is when the prompt hook last told.
	toldName = "worker-stale.told"
	// After is how long a capture waits before the notice is written.
	After = 24 * time.Hour
	// Every is how often the prompt hook tells at most.
	Every = 24 * time.Hour
)

// Notice is what the notice file says.
type Notice struct {
	LastRun time.Time // the worker's last finished run; zero: never
	Oldest  time.Time // the oldest capture waiting for it
}

// Line is the notice for the user, one line in the prompt's context.
func (n Notice) Line() string {
	const doctor = "; run `engram-worker doctor`"
	switch {
	case n.LastRun.IsZero():
		return "engram: the memory worker has never run; captures have waited since " + stamp(n.Oldest) + doctor
	case n.LastRun.Before(n.Oldest):
		return "engram: the memory worker has not run since " + stamp(n.LastRun) + doctor
	}
	return "engram: captures have waited for the memory worker since " + stamp(n.Oldest) + " although it ran at " + stamp(n.LastRun) + doctor
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (n Notice) text() string {
	last := "never"
	if !n.LastRun.IsZero() {
		last = stamp(n.LastRun)
	}
	return last + " " + stamp(n.Oldest) + "\n"
}

// Read reads the notice; ok is false without one (or with a damaged one).
func Read(home string) (n Notice, ok bool) {
	b, err := os.ReadFile(filepath.Join(home, Name))
	if err != nil {
		return Notice{}, false
	}
	last, oldest, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if n.Oldest, err = time.Parse(time.RFC3339, oldest); err != nil {
		return Notice{}, false
	}
	if last != "never" {
		if n.LastRun, err = time.Parse(time.RFC3339, last); err != nil {
			return Notice{}, false
		}
	}
	return n, true
}

// Write replaces the notice atomically; changed is false when it said
// the same already.
func Write(home string, n Notice) (changed bool, err error) {
	return replace(home, Name, n.text())
}

// replace writes text to home/name atomically (temp file + rename);
// changed is false, and nothing is written, when the file says it already.
func replace(home, name, text string) (changed bool, err error) {
	path := filepath.Join(home, name)
	if b, err := os.ReadFile(path); err == nil && string(b) == text {
		return false, nil
	}
	f, err := os.CreateTemp(home, "."+name+"-*")
	if err != nil {
		return false, err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return false, err
	}
	return true, nil
}

// Remove takes the notice away (a stat when there is none).
func Remove(home string) error {
	path := filepath.Join(home, Name)
	if _, err := os.Lstat(path); err != nil {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Due returns the line to tell at now, "" when there is no notice or it
// was told within Every. One failed open in the common case.
func Due(home string, now time.Time) string {
	n, ok := Read(home)
	if !ok {
		return ""
	}
	if toldWithin(home, toldName, now) {
		return ""
	}
	return n.Line()
}

// toldWithin reports whether the stamp file home/name says a line was told
// less than Every before now.
func toldWithin(home, name string, now time.Time) bool {
	fi, err := os.Lstat(filepath.Join(home, name))
	if err != nil {
		return false
	}
	age := now.Sub(fi.ModTime())
	return age >= 0 && age < Every
}

// Told records that the line was told at now.
func Told(home string, now time.Time) error { return touch(home, toldName, now) }

// touch sets the modification time of home/name (created 0600, never
// through a symlink) to now.
func touch(home, name string, now time.Time) error {
	path := filepath.Join(home, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chtimes(path, now, now)
}
