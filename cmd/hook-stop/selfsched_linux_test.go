package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/stophook"
	"github.com/engram-memory/engram/internal/store"
)

// The Stop hook's self-scheduling, with real processes: the hook binary
// starts a stand-in engram-worker (this test binary, in childMode) that
// reports how it was started, and this process, made a child subreaper,
// inherits it once the hook exits and sees it end.

// childReport is what the stand-in worker records about itself.
type childReport struct {
	PID, PPID, PGID, SID int
	Nice                 int
	Args                 []string
	FDs                  map[int]string // descriptor: its target
}

const childEnv = "ENGRAM_TEST_STANDIN_WORKER"

func init() {
	if os.Getenv(childEnv) != "" {
		standIn = childMode
	}
}

// childMode runs when this test binary is started as engram-worker.
func childMode() {
	var r childReport
	r.PID, r.PPID, r.Args = os.Getpid(), os.Getppid(), os.Args[1:]
	r.PGID, _ = syscall.Getpgid(0)
	r.SID = getsid()
	if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
		r.Nice = 20 - p // the raw system call returns 20 - nice
	}
	r.FDs = map[int]string{}
	if d, err := os.Open("/proc/self/fd"); err == nil {
		names, _ := d.Readdirnames(-1)
		for _, n := range names {
			fd, _ := strconv.Atoi(n)
			if fd == int(d.Fd()) {
				continue
			}
			r.FDs[fd], _ = os.Readlink("/proc/self/fd/" + n)
		}
		d.Close()
	}
	b, _ := json.Marshal(r)
	home := os.Getenv("ENGRAM_HOME")
	tmp := filepath.Join(home, ".child-"+strconv.Itoa(r.PID))
	os.WriteFile(tmp, b, 0o600)
	os.Rename(tmp, filepath.Join(home, "child-"+strconv.Itoa(r.PID)+".json"))
	// Hold the worker's lock a moment, as a run does.
	lk := flock.New(filepath.Join(home, stophook.LockName))
	if ok, _ := lk.TryLock(); ok {
		time.Sleep(300 * time.Millisecond)
		lk.Unlock()
	}
	os.Exit(0)
}

func getsid() int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		return -1
	}
	return int(sid)
}

var subreaperOnce sync.Once

// becomeSubreaper makes orphans of our descendants our children, so that
// the test can wait for the detached worker.
func becomeSubreaper(t testing.TB) {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			t.Fatalf("prctl(PR_SET_CHILD_SUBREAPER): %v", errno)
		}
	})
}

// selfSchedFixture is a fixture whose hook binary has a stand-in worker
// next to it.
type selfSchedFixture struct {
	fixture
	bin string // the hook's copy
}

func newSelfSchedFixture(t testing.TB) selfSchedFixture {
	t.Helper()
	f := selfSchedFixture{fixture: newFixture(t)}
	dir := t.TempDir()
	f.bin = filepath.Join(dir, "engram-hook-stop")
	copyFile(t, hookBin, f.bin)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, filepath.Join(dir, stophook.WorkerBinary))
	return f
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// ageRuns moves every recorded run back by d.
func (f selfSchedFixture) ageRuns(t testing.TB, d time.Duration) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(f.home, "memory.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms := d.Milliseconds()
	if _, err := db.Exec("UPDATE runs SET started_at = started_at - ?, finished_at = finished_at - ?", ms, ms); err != nil {
		t.Fatal(err)
	}
}

// run runs the hook copy with an inherited descriptor 3 (a pipe's write
// end, without close-on-exec, as a careless parent could leave it) and
// checks the contract; it returns once the pipe's read end sees EOF, which
// it would not while a descendant still held the write end.
func (f selfSchedFixture) run(t testing.TB, env ...string) time.Duration {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(f.bin)
	cmd.Env = append([]string{"HOME=" + filepath.Dir(f.home), "ENGRAM_HOME=" + f.home, "CLAUDE_CONFIG_DIR=" + f.claude,
		childEnv + "=1"}, env...)
	cmd.Stdin = bytes.NewReader(f.input(t, nil))
	cmd.ExtraFiles = []*os.File{pw}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil || out.Len() != 0 {
		t.Fatalf("hook: %v, output %q", err, out.String())
	}
	took := time.Since(start)
	pw.Close()
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, pr); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hook's inherited pipe stayed open after it exited: a descendant holds it")
	}
	pr.Close()
	return took
}

// children reads the stand-in workers' reports.
func (f selfSchedFixture) children(t testing.TB) []childReport {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(f.home, "child-*.json"))
	var out []childReport
	for _, p := range m {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var r childReport
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, r)
	}
	return out
}

// waitChild waits for the report of a child and for its exit.
func (f selfSchedFixture) waitChild(t *testing.T) childReport {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var c []childReport
	for {
		if c = f.children(t); len(c) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(c) != 1 {
		t.Fatalf("%d stand-in workers started, want 1; log:\n%s", len(c), f.logText())
	}
	var ws syscall.WaitStatus
	waited := make(chan error, 1)
	go func() {
		_, err := syscall.Wait4(c[0].PID, &ws, 0, nil)
		waited <- err
	}()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("wait for the worker %d: %v", c[0].PID, err)
		}
		if !ws.Exited() || ws.ExitStatus() != 0 {
			t.Fatalf("worker %d ended with %v", c[0].PID, ws)
		}
	case <-time.After(20 * time.Second):
		syscall.Kill(c[0].PID, syscall.SIGKILL)
		t.Fatalf("the worker %d did not exit", c[0].PID)
	}
	return c[0]
}

func (f selfSchedFixture) staleStore(t testing.TB) *store.DB {
	t.Helper()
	db := f.makeStore(t)
	ctx := context.Background()
	id, err := db.StartRun(ctx, "cycle")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, id, nil, nil); err != nil {
		t.Fatal(err)
	}
	f.ageRuns(t, stophook.StaleAfter+time.Minute)
	return db
}

func TestSelfScheduleStartsOneDetachedRun(t *testing.T) {
	becomeSubreaper(t)
	f := newSelfSchedFixture(t)
	f.staleStore(t)
	f.run(t)
	c := f.waitChild(t)
	if c.SID != c.PID || c.PGID != c.PID {
		t.Errorf("worker pid %d: session %d, process group %d; want its own session and group", c.PID, c.SID, c.PGID)
	}
	if strings.Join(c.Args, " ") != "run --quiet --settle 3s" {
		t.Errorf("worker arguments %q", c.Args)
	}
	if c.Nice < 10 {
		t.Errorf("worker nice %d, want >= 10", c.Nice)
	}
	if c.FDs[0] != "/dev/null" {
		t.Errorf("worker stdin is %q, want /dev/null", c.FDs[0])
	}
	logPath := filepath.Join(f.home, "logs", "worker.out.log")
	for _, fd := range []int{1, 2} {
		if c.FDs[fd] != logPath {
			t.Errorf("worker fd %d is %q, want %s", fd, c.FDs[fd], logPath)
		}
	}
	// The Go runtime opens a few descriptors of its own (cgroup files, the
	// poller): the same binary started directly, with nothing but 0-2,
	// shows which.
	own := f.baselineFDs(t)
	for fd, target := range c.FDs {
		if fd > 2 && !own[target] {
			t.Errorf("worker inherited fd %d (%s); a process started with 0-2 only has %v", fd, target, own)
		}
	}
	if !strings.Contains(f.logText(), "started one in the background") {
		t.Errorf("the hook did not log the start:\n%s", f.logText())
	}
	stamp, err := os.Stat(filepath.Join(f.home, stophook.StampName))
	if err != nil || stamp.Mode().Perm() != 0o600 {
		t.Fatalf("stamp: %v", err)
	}

	// A second Stop within the interval starts nothing, though the worker
	// (a stand-in) still has not recorded a run.
	f.run(t)
	time.Sleep(500 * time.Millisecond)
	if n := len(f.children(t)); n != 1 {
		t.Errorf("%d workers after a second Stop within the interval, want 1", n)
	}
	if st, _ := os.Stat(filepath.Join(f.home, stophook.StampName)); !st.ModTime().Equal(stamp.ModTime()) {
		t.Errorf("the second Stop rewrote the stamp")
	}

	// Past the interval it starts another.
	old := time.Now().Add(-stophook.StaleAfter)
	os.Chtimes(filepath.Join(f.home, stophook.StampName), old, old)
	f.run(t)
	deadline := time.Now().Add(20 * time.Second)
	for len(f.children(t)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := len(f.children(t)); n != 2 {
		t.Fatalf("%d workers after the interval, want 2", n)
	}
	for _, c := range f.children(t) {
		var ws syscall.WaitStatus
		syscall.Wait4(c.PID, &ws, 0, nil) // reap; the first returns ECHILD
	}
}

func TestSelfScheduleStartsNothing(t *testing.T) {
	becomeSubreaper(t)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, f selfSchedFixture)
		env   []string
	}{
		{"recent run", func(t *testing.T, f selfSchedFixture) {
			db := f.makeStore(t)
			id, _ := db.StartRun(context.Background(), "cycle")
			db.FinishRun(context.Background(), id, nil, nil)
		}, nil},
		{"never ran, captures fresh", func(t *testing.T, f selfSchedFixture) { f.makeStore(t) }, nil},
		{"turned off", func(t *testing.T, f selfSchedFixture) { f.staleStore(t) }, []string{"ENGRAM_SELF_SCHEDULE=false"}},
		{"a run holds the lock", func(t *testing.T, f selfSchedFixture) {
			f.staleStore(t)
			lk := flock.New(filepath.Join(f.home, stophook.LockName))
			if ok, err := lk.TryLock(); !ok || err != nil {
				t.Fatal(ok, err)
			}
			t.Cleanup(func() { lk.Unlock() })
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSelfSchedFixture(t)
			tc.setup(t, f)
			f.run(t, tc.env...)
			time.Sleep(300 * time.Millisecond)
			if n := len(f.children(t)); n != 0 {
				t.Errorf("%d workers started", n)
			}
			if _, err := os.Stat(filepath.Join(f.home, stophook.StampName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("stamp written: %v", err)
			}
		})
	}
}

// A worker missing next to the hook is logged, and the capture stands.
func TestSelfScheduleWithoutWorkerBinary(t *testing.T) {
	f := newSelfSchedFixture(t)
	db := f.staleStore(t)
	os.Remove(filepath.Join(filepath.Dir(f.bin), stophook.WorkerBinary))
	f.run(t)
	if !strings.Contains(f.logText(), "is not an executable file to start") {
		t.Errorf("log:\n%s", f.logText())
	}
	if caps, err := db.Captures(context.Background(), sid); err != nil || len(caps) == 0 {
		t.Errorf("captures %d, %v", len(caps), err)
	}
}

// baselineFDs is the targets of the descriptors above 2 that the stand-in
// worker has when started directly with stdin, stdout and stderr only.
func (f selfSchedFixture) baselineFDs(t *testing.T) map[string]bool {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(filepath.Join(filepath.Dir(f.bin), stophook.WorkerBinary), "baseline")
	cmd.Env = []string{childEnv + "=1", "ENGRAM_HOME=" + home}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(home, "child-*.json"))
	if len(m) != 1 {
		t.Fatalf("baseline reports: %v", m)
	}
	b, _ := os.ReadFile(m[0])
	var r childReport
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}
	for fd, target := range r.FDs {
		// Only the runtime's kinds: this test process may itself leak
		// descriptors into the baseline.
		if fd > 2 && (strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/")) {
			own[target] = true
		}
	}
	return own
}

// BenchmarkSelfSchedule measures the whole hook process with the
// self-scheduling check on against the same hook with it off
// (ENGRAM_SELF_SCHEDULE=false), alternating run by run so that both see
// the same machine; read the ratio, not the times. Cases:
//   - healthy: the worker ran recently (every Stop on a scheduled machine:
//     a stat of the stamp and a query of the last run)
//   - stamped: the worker is stale and a Stop started one within the
//     interval (every Stop after a start: one stat)
//   - start: the worker is stale and each Stop starts one (at most once
//     per interval in use)
//
// go test -run '^$' -bench SelfSchedule -benchtime 40x ./cmd/hook-stop/
func BenchmarkSelfSchedule(b *testing.B) {
	becomeSubreaper(b)
	for _, tc := range []string{"healthy", "stamped", "start"} {
		b.Run(tc, func(b *testing.B) {
			f := newSelfSchedFixture(b)
			stamp := filepath.Join(f.home, stophook.StampName)
			if tc == "healthy" {
				db := f.makeStore(b)
				id, _ := db.StartRun(context.Background(), "cycle")
				db.FinishRun(context.Background(), id, nil, nil)
			} else {
				f.staleStore(b)
			}
			f.run(b) // the first capture, outside the timing
			reap(f, b)
			var on, off time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				switch tc {
				case "stamped":
					now := time.Now()
					os.Chtimes(stamp, now, now)
				case "start":
					os.Remove(stamp)
				}
				on += f.run(b)
				if tc == "start" { // the worker holds its lock while it runs
					b.StopTimer()
					var ws syscall.WaitStatus
					syscall.Wait4(-1, &ws, 0, nil)
					b.StartTimer()
				}
				off += f.run(b, "ENGRAM_SELF_SCHEDULE=false")
			}
			b.StopTimer()
			reap(f, b)
			b.ReportMetric(float64(off.Microseconds())/float64(b.N)/1000, "ms-off/op")
			b.ReportMetric(float64(on.Microseconds())/float64(b.N)/1000, "ms-on/op")
			b.ReportMetric(float64(on)/float64(off), "ratio")
			b.ReportMetric(float64(len(f.children(b))), "workers")
		})
	}
}

// reap waits for every stand-in worker started so far.
func reap(f selfSchedFixture, t testing.TB) {
	for _, c := range f.children(t) {
		var ws syscall.WaitStatus
		syscall.Wait4(c.PID, &ws, 0, nil)
	}
	// Reports may still be on their way: wait for any child of ours.
	for {
		var ws syscall.WaitStatus
		if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}
