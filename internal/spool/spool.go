// Package spool keeps captures that a hook could not store (database
// missing, locked past the hook's deadline, or corrupt) as one file each in
// a directory the worker drains. Files are written to a temporary name and
// renamed, so the worker never sees half a file.
package spool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/engram-memory/engram/internal/transcript"
)

// Version is the format version of a spool file.
const Version = 1

// Entry is one spooled capture pass: the kept, redacted messages of a
// session read from From to End, and the reply state after them.
type Entry struct {
	Version          int                  `json:"version"`
	SessionID        string               `json:"session_id"`
	TranscriptPath   string               `json:"transcript_path"`
	CWD              string               `json:"cwd"`
	Source           string               `json:"source"`
	From             int64                `json:"from"`
	End              int64                `json:"end"`
	PendingReplyHash string               `json:"pending_reply_hash"`
	LastReplyHash    string               `json:"last_reply_hash"`
	LastPromptID     string               `json:"last_prompt_id,omitempty"`
	DeferredReplies  string               `json:"deferred_replies,omitempty"`
	CopiedBefore     time.Time            `json:"copied_before,omitzero"`
	Messages         []transcript.Message `json:"messages"`
	CreatedAt        time.Time            `json:"created_at"`
	Reason           string               `json:"reason"`
}

// File is a spool file found by List.
type File struct {
	Path  string
	Entry Entry
	Err   error // the file could not be read or decoded
}

// Write stores e in dir as a new file and returns its path. dir is created
// 0700, the file 0600.
func Write(dir string, e Entry) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("spool: create %s: %w", dir, err)
	}
	e.Version = Version
	data, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("spool: encode: %w", err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	// The name sorts by time, and the session id (validated by the caller)
	// makes it easy to see whose capture it is.
	name := fmt.Sprintf("%020d-%s-%s.json", time.Now().UnixNano(), e.SessionID, hex.EncodeToString(rnd[:]))
	final := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", fmt.Errorf("spool: write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("spool: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", fmt.Errorf("spool: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return final, nil
}

// List returns the spool files in dir, oldest first. Temporary files of a
// writer still at work are not listed.
func List(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var names []string
	for _, de := range entries {
		n := de.Name()
		if strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".json") || !de.Type().IsRegular() {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]File, 0, len(names))
	for _, n := range names {
		f := File{Path: filepath.Join(dir, n)}
		f.Entry, f.Err = read(f.Path)
		out = append(out, f)
	}
	return out, nil
}

func read(path string) (Entry, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return Entry{}, err
	}
	defer fd.Close()
	var e Entry
	if err := json.NewDecoder(fd).Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("spool: decode %s: %w", filepath.Base(path), err)
	}
	if e.Version != Version {
		return Entry{}, fmt.Errorf("spool: %s: unknown version %d", filepath.Base(path), e.Version)
	}
	return e, nil
}

// LastEnd returns the largest End spooled for a session, and whether any
// file of the session exists: a hook that cannot read the database resumes
// from there instead of from the start of the transcript.
func LastEnd(dir, sessionID string) (int64, Entry, bool) {
	files, err := List(dir)
	if err != nil {
		return 0, Entry{}, false
	}
	var best Entry
	found := false
	for _, f := range files {
		if f.Err == nil && f.Entry.SessionID == sessionID && (!found || f.Entry.End >= best.End) {
			best, found = f.Entry, true
		}
	}
	return best.End, best, found
}

// Quarantine moves a file that cannot be drained out of the way, keeping it
// for the user to inspect.
func Quarantine(path string) error {
	dir := filepath.Join(filepath.Dir(path), "bad")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Rename(path, filepath.Join(dir, filepath.Base(path)))
}
