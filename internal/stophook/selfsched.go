package stophook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/store"
)

// Self-scheduling: where no scheduler runs the worker (a container without
// a systemd user manager, a timer that failed, a refused launchd agent),
// the Stop hook starts one `engram-worker run` in the background.
const (
	// WorkerBinary is engram-worker's file name; the hook looks for it
	// next to itself, where setup installs the three binaries.
	WorkerBinary = "engram-worker"
	// StampName is the file in ENGRAM_HOME whose modification time is the
	// last start by a Stop hook.
	StampName = "selfsched.stamp"
	// LockName is the worker's single-instance lock in ENGRAM_HOME (the
	// worker package's Lock takes the same file).
	LockName = "worker.lock"
)

// StaleAfter is how long the worker may go without a run before the Stop
// hook starts one: twice the schedulers' interval.
const StaleAfter = 2 * config.WorkerInterval

// WorkerStale tells whether the worker has not run for longer than
// StaleAfter at now: its last run finished earlier, or it never ran and
// the oldest capture waiting for it was stored earlier. since is that
// time (zero when there is neither run nor waiting capture).
func WorkerStale(ctx context.Context, db *store.DB, now time.Time) (stale bool, since time.Time, err error) {
	run, ok, err := db.LastRun(ctx, "")
	if err != nil {
		return false, time.Time{}, err
	}
	if ok {
		since = run.FinishedAt
	} else if since, ok, err = db.OldestPending(ctx); err != nil || !ok {
		return false, time.Time{}, err
	}
	return now.Sub(since) > StaleAfter, since, nil
}

// selfScheduler decides and starts a background worker run.
type selfScheduler struct {
	home   string
	logDir string
	worker string // engram-worker's path
	now    time.Time
	start  func(bin string, args []string, out *os.File) (pid int, err error)
}

func newSelfScheduler(cfg config.Config, now time.Time) (selfScheduler, error) {
	exe, err := os.Executable()
	if err != nil {
		return selfScheduler{}, err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return selfScheduler{home: cfg.Home, logDir: cfg.LogDir(), worker: filepath.Join(filepath.Dir(exe), WorkerBinary),
		now: now, start: startDetached}, nil
}

// selfSchedule starts one detached `engram-worker run --quiet` when the
// worker is stale, no run holds its lock and no Stop hook started one
// within the interval. It returns the child's pid, 0 when it started
// nothing; the Stop hook does not wait for the child.
func (s selfScheduler) selfSchedule(ctx context.Context, db *store.DB, log *slog.Logger) (int, error) {
	stamp := filepath.Join(s.home, StampName)
	if recent(stamp, s.now) {
		return 0, nil // the common case once started: one stat
	}
	stale, since, err := WorkerStale(ctx, db, s.now)
	if err != nil || !stale {
		return 0, err
	}
	if st, err := os.Stat(s.worker); err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return 0, fmt.Errorf("the worker has not run since %s, but %s is not an executable file to start", since.Format(time.RFC3339), s.worker)
	}
	// The worker's lock, held while deciding: a running cycle, or another
	// Stop hook deciding at the same moment, makes this one start nothing.
	lk := flock.New(filepath.Join(s.home, LockName))
	ok, err := lk.TryLock()
	if err != nil || !ok {
		return 0, err
	}
	claimed := false
	func() {
		defer lk.Unlock()
		if recent(stamp, s.now) {
			return
		}
		if err = writeStamp(s.home, stamp, s.now); err == nil {
			claimed = true
		}
	}()
	if !claimed {
		return 0, err
	}
	out := openLog(filepath.Join(s.logDir, "worker.out.log"))
	if out != nil {
		defer out.Close()
	}
	pid, err := s.start(s.worker, []string{"run", "--quiet", "--settle", "3s"}, out)
	if err != nil {
		return 0, fmt.Errorf("start %s run: %w", s.worker, err)
	}
	log.Info("no worker run since "+since.Format(time.RFC3339)+": started one in the background", "pid", pid)
	return pid, nil
}

// recent tells whether the stamp was written within the interval.
func recent(stamp string, now time.Time) bool {
	fi, err := os.Lstat(stamp)
	if err != nil {
		return false
	}
	age := now.Sub(fi.ModTime())
	return age >= 0 && age < config.WorkerInterval
}

// writeStamp replaces the stamp atomically (a new file renamed over it),
// with the start time as its modification time.
func writeStamp(dir, stamp string, now time.Time) error {
	f, err := os.CreateTemp(dir, ".selfsched-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(now.UTC().Format(time.RFC3339Nano) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(f.Name(), now, now)
	}
	if err == nil {
		err = os.Rename(f.Name(), stamp)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// openLog opens the worker's output log for appending; nil (the child's
// output goes to /dev/null) when it cannot, or when it is a symlink.
func openLog(path string) *os.File {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|oNoFollow, 0o600)
	if err != nil {
		return nil
	}
	return f
}

var errUnsupported = errors.New("starting a detached process is not supported on this system")
