package setup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// fakeRunner answers commands from a script (first matching prefix wins)
// and records every call.
type fakeRunner struct {
	mu      sync.Mutex
	calls   []string
	answers []answer
}

type answer struct {
	prefix string
	out    string
	err    error
}

func (f *fakeRunner) run(_ context.Context, name string, args ...string) ([]byte, error) {
	call := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	for _, a := range f.answers {
		if strings.HasPrefix(call, a.prefix) {
			return []byte(a.out), a.err
		}
	}
	return nil, nil
}

// take returns the calls so far and forgets them, leaving out reads of
// the crontab (`crontab -l`, which changes nothing).
func (f *fakeRunner) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var c []string
	for _, call := range f.calls {
		if call != "crontab -l" {
			c = append(c, call)
		}
	}
	f.calls = nil
	return c
}

var errExit1 = errors.New("exit status 1")

// testHome is an empty HOME with the three binaries installed in it.
func testHome(t *testing.T, goos string, fr *fakeRunner) Options {
	t.Helper()
	home := t.TempDir()
	bin := filepath.Join(home, ".local", "bin")
	mkdirs(t, bin)
	for _, b := range []string{WorkerBinary, UserPromptBinary, StopBinary} {
		writeFile(t, filepath.Join(bin, b), "#!/bin/sh\n", 0o755)
	}
	// No crontab command and no systemd as init, unless a test says so.
	fr.answers = append(fr.answers, answer{prefix: "crontab", err: fmt.Errorf("exec: %w", exec.ErrNotFound)})
	return Options{
		BinDir: bin, Home: filepath.Join(home, ".claude-memory"), ClaudeConfigDir: filepath.Join(home, ".claude"),
		UserHome: home, GOOS: goos, UID: 501, Run: fr.run, SystemdRunDir: filepath.Join(home, "no-systemd"),
	}
}

// snapshot maps every path under dir (backups left out) to its content
// ("<dir>" for directories, "-> target" for links).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case strings.Contains(rel, backupSuffix):
		case d.Type()&fs.ModeSymlink != 0:
			dest, _ := os.Readlink(p)
			snap[rel] = "-> " + dest
		case d.IsDir():
			snap[rel] = "<dir>"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			snap[rel] = fmt.Sprintf("%04o %s", fi.Mode().Perm(), b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			d = append(d, "gone: "+k)
		} else if w != v {
			d = append(d, "changed: "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			d = append(d, "new: "+k)
		}
	}
	return d
}

func TestInstallSystemd(t *testing.T) {
	fr := &fakeRunner{answers: []answer{
		{prefix: "systemctl --user is-system-running", out: "degraded\n", err: errExit1},
		{prefix: "loginctl show-user", out: "no\n"},
	}}
	o := testHome(t, "linux", fr)
	custom := readTestdata("custom.json")
	mkdirs(t, o.ClaudeConfigDir)
	writeFile(t, filepath.Join(o.ClaudeConfigDir, "settings.json"), custom, 0o600)
	writeFile(t, filepath.Join(o.ClaudeConfigDir, "CLAUDE.md"), "# mine", 0o644)
	before := snapshot(t, o.UserHome)

	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatalf("Install: %v\n%s", err, r)
	}
	wantCalls := []string{
		"systemctl --user is-system-running",
		"systemctl --user daemon-reload",
		"systemctl --user enable --now engram-worker.timer",
		"loginctl show-user 501 --property=Linger --value",
	}
	if got := fr.take(); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("calls:\n got %q\nwant %q", got, wantCalls)
	}
	unitDir := filepath.Join(o.UserHome, ".config", "systemd", "user")
	service, timer := SystemdUnits(filepath.Join(o.BinDir, WorkerBinary), o.Home)
	if got := string(readFile(t, filepath.Join(unitDir, ServiceName))); got != service {
		t.Errorf("service file:\n%s", got)
	}
	if got := string(readFile(t, filepath.Join(unitDir, TimerName))); got != timer {
		t.Errorf("timer file:\n%s", got)
	}
	if r.Scheduler.Kind != SchedulerSystemd || r.Scheduler.CronLine != "" {
		t.Errorf("Scheduler %+v", r.Scheduler)
	}
	if n := countOurs(t, readFile(t, filepath.Join(o.ClaudeConfigDir, "settings.json"))); len(n) != 2 {
		t.Errorf("hooks %v", n)
	}
	if got := string(readFile(t, filepath.Join(o.ClaudeConfigDir, "CLAUDE.md"))); got != "# mine\n"+memLine+"\n" {
		t.Errorf("CLAUDE.md %q", got)
	}
	if fi, err := os.Stat(filepath.Join(o.Home, "env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("env template: %v", err)
	}
	for _, d := range []string{o.Home, filepath.Join(o.Home, "logs")} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: want a 0700 directory (%v)", d, err)
		}
	}
	s := r.String()
	for _, want := range []string{"added the Stop hook", "added the line " + memLine, "ran: systemctl --user enable --now engram-worker.timer", "loginctl enable-linger"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}

	// Again: nothing changes; the timer is enabled again (a no-op), not restarted.
	afterFirst := snapshot(t, o.UserHome)
	r2, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if d := diffSnapshots(afterFirst, snapshot(t, o.UserHome)); len(d) != 0 {
		t.Errorf("second Install changed files: %v", d)
	}
	if r2.Settings.Changed || r2.Import.Changed || r2.EnvFile.Changed || r2.Scheduler.Files[0].Changed || r2.Scheduler.Files[1].Changed {
		t.Errorf("second Install reports changes:\n%s", r2)
	}
	if got := fr.take(); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("second Install calls:\n got %q\nwant %q", got, wantCalls)
	}

	// Binaries moved: units rewritten, the timer re-armed.
	newBin := filepath.Join(o.UserHome, "opt", "bin")
	mkdirs(t, newBin)
	for _, b := range []string{WorkerBinary, UserPromptBinary, StopBinary} {
		writeFile(t, filepath.Join(newBin, b), "#!/bin/sh\n", 0o755)
	}
	o2 := o
	o2.BinDir = newBin
	if _, err := Install(context.Background(), o2); err != nil {
		t.Fatal(err)
	}
	if got := fr.take(); !reflect.DeepEqual(got, append(wantCalls[:3:3], "systemctl --user restart engram-worker.timer", wantCalls[3])) {
		t.Errorf("calls after a move: %q", got)
	}

	// Uninstall: back to the original bytes, data kept.
	r3, err := Uninstall(context.Background(), o2)
	if err != nil {
		t.Fatalf("Uninstall: %v\n%s", err, r3)
	}
	wantCalls = []string{
		"systemctl --user is-system-running",
		"systemctl --user disable --now engram-worker.timer",
		"systemctl --user daemon-reload",
	}
	if got := fr.take(); !reflect.DeepEqual(got, wantCalls) {
		t.Errorf("uninstall calls:\n got %q\nwant %q", got, wantCalls)
	}
	after := snapshot(t, o.UserHome)
	d := diffSnapshots(before, after)
	wantDiff := map[string]bool{ // left behind on purpose: the data directory, and ~/.config/systemd/user
		"new: .claude-memory": true, "new: .claude-memory/logs": true, "new: opt": true, "new: opt/bin": true,
		"new: opt/bin/engram-worker": true, "new: opt/bin/engram-hook-userprompt": true, "new: opt/bin/engram-hook-stop": true,
		"new: .config": true, "new: .config/systemd": true, "new: .config/systemd/user": true,
	}
	for _, x := range d {
		if !wantDiff[x] {
			t.Errorf("after uninstall, unexpected difference from before setup: %s", x)
		}
	}
	if !strings.Contains(r3.String(), "your memories are kept") {
		t.Errorf("uninstall report:\n%s", r3)
	}
}

func TestInstallEmptyHomeRoundTrip(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}}
	o := testHome(t, "linux", fr)
	before := snapshot(t, o.UserHome)
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, x := range diffSnapshots(before, snapshot(t, o.UserHome)) {
		if !strings.HasPrefix(x, "new: .claude-memory") && !strings.HasPrefix(x, "new: .config") && x != "new: .claude" {
			t.Errorf("after uninstall: %s", x)
		}
	}
	if entries, _ := os.ReadDir(o.ClaudeConfigDir); len(entries) != 0 {
		t.Errorf("%s holds %d entries after uninstall, want none (setup created settings.json and CLAUDE.md)", o.ClaudeConfigDir, len(entries))
	}
}

func TestInstallNoScheduler(t *testing.T) {
	tests := []struct {
		name, goos string
		answers    []answer
		why        string
	}{
		{"container without a user manager", "linux",
			[]answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}, "offline"},
		{"no bus", "linux",
			[]answer{{prefix: "systemctl", out: "Failed to connect to bus: No medium found\n", err: errExit1}}, "Failed to connect to bus"},
		{"no systemctl", "linux",
			[]answer{{prefix: "systemctl", err: fmt.Errorf("exec: %w", exec.ErrNotFound)}}, "systemctl not found"},
		{"no launchctl", "darwin",
			[]answer{{prefix: "launchctl", err: exec.ErrNotFound}}, "launchctl not found"},
		{"other system", "freebsd", nil, "no supported scheduler on freebsd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := &fakeRunner{answers: tt.answers}
			o := testHome(t, tt.goos, fr)
			r, err := Install(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			// Nothing is scheduled, and the report says so once, with what
			// runs the worker instead and what would schedule it; it never
			// asks for a crontab line where there is no crontab.
			if r.Scheduler.Kind != "" || r.Scheduler.CronLine != "" {
				t.Errorf("Scheduler %+v, want nothing scheduled", r.Scheduler)
			}
			s := r.String()
			for _, want := range []string{tt.why, "there is no crontab command: nothing schedules the worker here",
				"Stop hook starts the worker in the background", "install cron and run engram-worker setup again"} {
				if !strings.Contains(s, want) {
					t.Errorf("report lacks %q:\n%s", want, s)
				}
			}
			for _, not := range []string{"add this line to your crontab", "use the crontab line"} {
				if strings.Contains(s, not) {
					t.Errorf("report says %q without a crontab command:\n%s", not, s)
				}
			}
			// doctor asks the same question and gets the same answer.
			if ok, why := Schedulable(context.Background(), o); ok || !strings.Contains(why, tt.why) ||
				!strings.HasSuffix(why, "and there is no crontab command") {
				t.Errorf("Schedulable = %v, %q; want false, %q and no crontab command", ok, why, tt.why)
			}
			for _, c := range fr.take() {
				if strings.Contains(c, "enable") || strings.Contains(c, "bootstrap") {
					t.Errorf("ran %q without a scheduler", c)
				}
			}
			for _, p := range []string{filepath.Join(o.UserHome, ".config", "systemd"), filepath.Join(o.UserHome, "Library")} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s written without a scheduler", p)
				}
			}
			// The hooks are in all the same.
			if n := countOurs(t, readFile(t, filepath.Join(o.ClaudeConfigDir, "settings.json"))); len(n) != 2 {
				t.Errorf("hooks %v", n)
			}
		})
	}
}

func TestInstallLaunchd(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "launchctl print", err: errExit1}}}
	o := testHome(t, "darwin", fr)
	plist := filepath.Join(o.UserHome, "Library", "LaunchAgents", DefaultLaunchdLabel+".plist")
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	want := []string{
		"launchctl print gui/501/" + DefaultLaunchdLabel,
		"launchctl bootstrap gui/501 " + plist,
		"launchctl print gui/501/" + DefaultLaunchdLabel, // loaded?
	}
	if got := fr.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	// The stand-in never shows the agent loaded.
	if !strings.Contains(r.String(), "launchd does not show the agent "+DefaultLaunchdLabel+" loaded") {
		t.Errorf("report does not say the agent is not loaded:\n%s", r)
	}
	if got := string(readFile(t, plist)); got != LaunchdPlist(filepath.Join(o.BinDir, WorkerBinary), o.Home, DefaultLaunchdLabel) {
		t.Errorf("plist:\n%s", got)
	}
	if r.Scheduler.Kind != SchedulerLaunchd {
		t.Errorf("Kind %q", r.Scheduler.Kind)
	}

	// Loaded and unchanged: nothing to do.
	fr.answers = nil
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := fr.take(); !reflect.DeepEqual(got, want[:1]) {
		t.Errorf("second Install calls %q, want only the check", got)
	}

	// Bootstrap refused (no gui domain): falls back to load -w.
	os.Remove(plist)
	fr.answers = []answer{{prefix: "launchctl print", err: errExit1}, {prefix: "launchctl bootstrap", out: "Bootstrap failed: 125", err: errExit1}}
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := fr.take(); len(got) != 4 || got[2] != "launchctl load -w "+plist {
		t.Errorf("fallback calls %q", got)
	}

	fr.answers = nil
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := fr.take(); !reflect.DeepEqual(got, []string{"launchctl bootout gui/501/" + DefaultLaunchdLabel}) {
		t.Errorf("uninstall calls %q", got)
	}
	if _, err := os.Stat(plist); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("plist still there")
	}
}

func TestInstallRefusesBeforeAnyChange(t *testing.T) {
	t.Run("invalid settings.json", func(t *testing.T) {
		fr := &fakeRunner{}
		o := testHome(t, "linux", fr)
		mkdirs(t, o.ClaudeConfigDir)
		writeFile(t, filepath.Join(o.ClaudeConfigDir, "settings.json"), "{\"a\": 1,,}\n", 0o600)
		before := snapshot(t, o.UserHome)
		_, err := Install(context.Background(), o)
		if !errors.Is(err, ErrInvalidJSON) || !strings.Contains(err.Error(), "line 1, column 9") {
			t.Fatalf("Install: %v, want ErrInvalidJSON at line 1, column 9", err)
		}
		if d := diffSnapshots(before, snapshot(t, o.UserHome)); len(d) != 0 {
			t.Errorf("Install changed files: %v", d)
		}
		if c := fr.take(); len(c) != 0 {
			t.Errorf("Install ran %q", c)
		}
	})
	t.Run("missing hook binary", func(t *testing.T) {
		fr := &fakeRunner{}
		o := testHome(t, "linux", fr)
		os.Remove(filepath.Join(o.BinDir, StopBinary))
		before := snapshot(t, o.UserHome)
		if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), StopBinary) {
			t.Fatalf("Install: %v, want an error naming %s", err, StopBinary)
		}
		if d := diffSnapshots(before, snapshot(t, o.UserHome)); len(d) != 0 {
			t.Errorf("Install changed files: %v", d)
		}
	})
	t.Run("relative path", func(t *testing.T) {
		o := testHome(t, "linux", &fakeRunner{})
		o.Home = "data"
		if _, err := Install(context.Background(), o); err == nil || !strings.Contains(err.Error(), "ENGRAM_HOME") {
			t.Fatalf("Install: %v, want an error naming ENGRAM_HOME", err)
		}
	})
}

func TestInstallCustomDirs(t *testing.T) {
	// ENGRAM_HOME and CLAUDE_CONFIG_DIR away from their defaults reach the
	// units and the import line; XDG_CONFIG_HOME moves the units.
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}}
	o := testHome(t, "linux", fr)
	o.Home = filepath.Join(o.UserHome, "data", "engram")
	o.ClaudeConfigDir = filepath.Join(o.UserHome, "cc")
	o.XDGConfigHome = filepath.Join(o.UserHome, "xdg")
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	service := string(readFile(t, filepath.Join(o.XDGConfigHome, "systemd", "user", ServiceName)))
	for _, want := range []string{"Environment=ENGRAM_HOME=" + o.Home + "\n", "Environment=CLAUDE_CONFIG_DIR=" + o.ClaudeConfigDir + "\n"} {
		if !strings.Contains(service, want) {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	if got := string(readFile(t, filepath.Join(o.ClaudeConfigDir, "CLAUDE.md"))); got != "@~/data/engram/MEMORY.md\n" {
		t.Errorf("CLAUDE.md %q", got)
	}
}

func TestInstallCLAUDEmdSymlinkOutside(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}}
	o := testHome(t, "linux", fr)
	mkdirs(t, o.ClaudeConfigDir)
	dot := filepath.Join(o.UserHome, "dotfiles", "CLAUDE.md")
	mkdirs(t, filepath.Dir(dot))
	writeFile(t, dot, "mine\n", 0o644)
	if err := os.Symlink(dot, filepath.Join(o.ClaudeConfigDir, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if got := string(readFile(t, dot)); got != "mine\n" {
		t.Errorf("wrote through the symlink: %q", got)
	}
	if !strings.Contains(r.String(), "add this line to it yourself: "+memLine) {
		t.Errorf("report does not tell what to add:\n%s", r)
	}
}

func TestUninstallPurge(t *testing.T) {
	t.Run("data directory deleted", func(t *testing.T) {
		fr := &fakeRunner{answers: []answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}}
		o := testHome(t, "linux", fr)
		if _, err := Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(o.Home, "memory.db"), "x", 0o600)
		o.Purge = true
		if _, err := Uninstall(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(o.Home); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there", o.Home)
		}
	})
	t.Run("refused for a directory holding the home", func(t *testing.T) {
		o := testHome(t, "linux", &fakeRunner{})
		o.Home = filepath.Dir(o.UserHome)
		o.Purge = true
		if _, err := Uninstall(context.Background(), o); err == nil || !strings.Contains(err.Error(), "not deleting") {
			t.Fatalf("Uninstall: %v, want a refusal", err)
		}
		if _, err := os.Stat(o.UserHome); err != nil {
			t.Fatalf("home gone: %v", err)
		}
	})
	t.Run("refused for a directory that is not engram's", func(t *testing.T) {
		o := testHome(t, "linux", &fakeRunner{})
		o.Home = filepath.Join(o.UserHome, "Documents")
		writeFile(t, filepath.Join(o.UserHome, "Documents.keep"), "", 0o600)
		mkdirs(t, o.Home)
		writeFile(t, filepath.Join(o.Home, "thesis.tex"), "x", 0o600)
		o.Purge = true
		if _, err := Uninstall(context.Background(), o); err == nil || !strings.Contains(err.Error(), "no memory.db") {
			t.Fatalf("Uninstall: %v, want a refusal", err)
		}
		if _, err := os.Stat(filepath.Join(o.Home, "thesis.tex")); err != nil {
			t.Fatalf("file gone: %v", err)
		}
	})
}

func TestUninstallWithoutUserManager(t *testing.T) {
	// Units installed earlier, no user manager now: the files and the
	// enablement link still go.
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}}
	o := testHome(t, "linux", fr)
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	unitDir := filepath.Join(o.UserHome, ".config", "systemd", "user")
	wants := filepath.Join(unitDir, "timers.target.wants")
	mkdirs(t, wants)
	if err := os.Symlink(filepath.Join(unitDir, TimerName), filepath.Join(wants, TimerName)); err != nil {
		t.Fatal(err)
	}
	fr.take()
	fr.answers = []answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := fr.take(); !reflect.DeepEqual(got, []string{"systemctl --user is-system-running"}) {
		t.Errorf("calls %q", got)
	}
	for _, p := range []string{filepath.Join(unitDir, ServiceName), filepath.Join(unitDir, TimerName), filepath.Join(wants, TimerName)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there", p)
		}
	}
}

// TestUninstallStripsMemory: the MEMORY.md step runs once the timer is
// disabled and its files removed, before the data directory is purged; what
// it cleaned is reported one line per file, its notes as notes, and its
// error fails uninstall only after every other step ran.
func TestUninstallStripsMemory(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}}
	o := testHome(t, "linux", fr)
	if _, err := Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(o.Home, "memory.db"), "x", 0o600)
	fr.take()
	unit := filepath.Join(o.UserHome, ".config", "systemd", "user", TimerName)
	project := filepath.Join(o.ClaudeConfigDir, "projects", "-work-app", "memory", "MEMORY.md")
	var sawCalls []string
	o.StripMemory = func(ctx context.Context) ([]Change, []string, error) {
		sawCalls = fr.take()
		if _, err := os.Lstat(unit); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("MEMORY.md step ran while %s was still there", unit)
		}
		if _, err := os.Stat(o.Home); err != nil {
			t.Errorf("MEMORY.md step ran after the purge: %v", err)
		}
		return []Change{{Path: project, Changed: true, Actions: []string{"took out engram's block of beliefs"}}},
			[]string{"a note about MEMORY.md"}, errors.New("one file could not be cleaned")
	}
	o.Purge = true
	r, err := Uninstall(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "one file could not be cleaned") {
		t.Errorf("Uninstall: %v, want the MEMORY.md step's error", err)
	}
	if len(sawCalls) == 0 || !strings.HasPrefix(sawCalls[len(sawCalls)-1], "systemctl --user daemon-reload") {
		t.Errorf("commands before the MEMORY.md step: %q, want the timer disabled first", sawCalls)
	}
	if _, err := os.Stat(o.Home); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the purge did not run after the MEMORY.md step: %v", err)
	}
	s := r.String()
	for _, want := range []string{project + ": took out engram's block of beliefs\n", "note: a note about MEMORY.md\n",
		"note: deleted " + o.Home} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, project+": unchanged") {
		t.Errorf("report:\n%s", s)
	}
}

// TestInstallImportsAnExistingFile: the CLAUDE.md import line is added
// only once the global MEMORY.md it imports exists (Install creates it
// empty, mode 0600), so that the model is never shown a bare import line;
// a MEMORY.md already there is left as it is; Uninstall removes the file
// while it is still empty and keeps it once it holds anything.
func TestInstallImportsAnExistingFile(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}}
	o := testHome(t, "linux", fr)
	global := filepath.Join(o.Home, "MEMORY.md")
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(global)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("after Install: %s: %v %v, want an empty regular file of mode 0600", global, fi, err)
	}
	if !r.GlobalMemory.Created || !strings.Contains(r.String(), global) {
		t.Errorf("the report does not say the file was created:\n%s", r)
	}
	md, err := os.ReadFile(filepath.Join(o.ClaudeConfigDir, "CLAUDE.md"))
	if err != nil || !strings.Contains(string(md), ImportLine(o.Home, o.UserHome)) {
		t.Fatalf("CLAUDE.md lacks the import line: %q %v", md, err)
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(global); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Uninstall the empty %s is still there (%v)", global, err)
	}

	// A file with content: Install keeps it byte for byte, Uninstall too.
	const mine = "# kept\n"
	if err := os.WriteFile(global, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, err = Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if r.GlobalMemory.Changed {
		t.Errorf("Install changed an existing %s: %+v", global, r.GlobalMemory)
	}
	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(global); err != nil || string(b) != mine {
		t.Errorf("after Uninstall %s = %q, %v; want %q", global, b, err, mine)
	}
}
