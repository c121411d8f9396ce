// Package logx gives every engram program a log/slog logger that writes to a
// file in the data directory, never to stdout: a hook's stdout belongs to
// Claude Code. The file is opened on the first record, so a hook that has
// nothing to say never touches the disk.
package logx

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// MaxSize is the size past which a log file is rotated to <name>.1 when opened.
const MaxSize = 8 << 20

// New returns a logger writing JSON records to dir/name at the given level
// ("debug", "info", "warn", "error").
func New(dir, name, level string) *slog.Logger {
	w := &lazyFile{path: filepath.Join(dir, name)}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: ParseLevel(level)}))
}

// ParseLevel maps a level name to a slog level (info for anything unknown).
func ParseLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Discard is a logger that drops everything.
func Discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

type lazyFile struct {
	path string
	once sync.Once
	mu   sync.Mutex
	f    *os.File
}

func (l *lazyFile) Write(p []byte) (int, error) {
	l.once.Do(l.open)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return len(p), nil // logging must never fail the caller
	}
	return l.f.Write(p)
}

func (l *lazyFile) open() {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return
	}
	if st, err := os.Lstat(l.path); err == nil && st.Mode().IsRegular() && st.Size() > MaxSize {
		_ = os.Rename(l.path, l.path+".1")
	}
	// O_NOFOLLOW: a symlink planted at the log path must not redirect our writes.
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return
	}
	l.f = f
}
