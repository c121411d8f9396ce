package setup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crontabStandIn is a crontab command keeping the user's crontab in
// memory: -l prints it (or fails as cron does without one), FILE replaces
// it, -r removes it. Other commands go to the fake runner.
type crontabStandIn struct {
	fr     *fakeRunner
	text   string
	exists bool
	writes int
}

func (c *crontabStandIn) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if name != "crontab" {
		return c.fr.run(ctx, name, args...)
	}
	c.fr.run(ctx, name, args...) // recorded
	switch {
	case len(args) == 1 && args[0] == "-l":
		if !c.exists {
			return []byte("no crontab for dev\n"), errExit1
		}
		return []byte(c.text), nil
	case len(args) == 1 && args[0] == "-r":
		if !c.exists {
			return []byte("no crontab for dev\n"), errExit1
		}
		c.text, c.exists = "", false
		c.writes++
		return nil, nil
	case len(args) == 1:
		b, err := os.ReadFile(args[0])
		if err != nil {
			return []byte(err.Error()), errExit1
		}
		c.text, c.exists = string(b), true
		c.writes++
		return nil, nil
	}
	return []byte("usage"), errExit1
}

// The user's own lines, as a crontab can hold them: comments, a variable,
// a "%", blank lines, and no newline at the end.
const userCrontab = "# m h dom mon dow command\nMAILTO=me@example.com\n\n0 3 * * * tar czf /backup/home-$(date +\\%F).tgz ~ \n*/5 * * * * /usr/bin/true"

func TestInstallCrontab(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before string
		exists bool
	}{
		{"other lines", userCrontab, true},
		{"no crontab yet", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := &fakeRunner{answers: []answer{{prefix: "systemctl", out: "offline\n", err: errExit1}}}
			o := testHome(t, "linux", fr)
			ct := &crontabStandIn{fr: fr, text: tc.before, exists: tc.exists}
			o.Run = ct.run
			r, err := Install(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			line := CronLine(filepath.Join(o.BinDir, WorkerBinary), o.Home)
			want := CronMarker + "\n" + line + "\n" + tc.before
			if ct.text != want {
				t.Fatalf("crontab:\n%s\nwant:\n%s", ct.text, want)
			}
			if r.Scheduler.Kind != SchedulerCron || !r.Scheduler.Crontab.Changed || r.Scheduler.CronLine != "" {
				t.Errorf("scheduler %+v", r.Scheduler)
			}
			s := r.String()
			if !strings.Contains(s, "crontab: added the line that runs "+filepath.Join(o.BinDir, WorkerBinary)) || strings.Contains(s, "add this line to your crontab") {
				t.Errorf("report:\n%s", s)
			}
			if m, _ := filepath.Glob(filepath.Join(o.Home, ".crontab-*")); len(m) != 0 {
				t.Errorf("temporary crontab files left: %v", m)
			}

			// Again: the entry is there once, nothing is written.
			r, err = Install(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if ct.writes != 1 || ct.text != want || r.Scheduler.Crontab.Changed {
				t.Errorf("second install: %d writes, changed %v, crontab:\n%s", ct.writes, r.Scheduler.Crontab.Changed, ct.text)
			}
			if !strings.Contains(r.String(), "crontab: unchanged") {
				t.Errorf("report:\n%s", r)
			}

			// The binaries moved: the entry is replaced, not added.
			o2 := o
			o2.BinDir = filepath.Join(o.UserHome, "bin2")
			mkdirs(t, o2.BinDir)
			for _, b := range []string{WorkerBinary, UserPromptBinary, StopBinary} {
				writeFile(t, filepath.Join(o2.BinDir, b), "#!/bin/sh\n", 0o755)
			}
			if _, err := Install(context.Background(), o2); err != nil {
				t.Fatal(err)
			}
			if strings.Count(ct.text, CronMarker) != 1 || !strings.Contains(ct.text, filepath.Join(o2.BinDir, WorkerBinary)+" run") {
				t.Errorf("after a move:\n%s", ct.text)
			}

			// uninstall leaves the user's lines byte for byte, or no
			// crontab where there was none.
			r, err = Uninstall(context.Background(), o2)
			if err != nil {
				t.Fatal(err)
			}
			if ct.text != tc.before || ct.exists != tc.exists {
				t.Errorf("after uninstall (exists %v):\n%q\nwant:\n%q", ct.exists, ct.text, tc.before)
			}
			if !strings.Contains(r.String(), "crontab: removed engram's line") {
				t.Errorf("report:\n%s", r)
			}
		})
	}
}

func TestWithoutCronEntryKeepsOtherLines(t *testing.T) {
	// A marker whose next line is not engram's keeps that line.
	in := "a\n" + CronMarker + "\n0 * * * * mine\nb"
	if got := withoutCronEntry(in); got != "a\n0 * * * * mine\nb" {
		t.Errorf("got %q", got)
	}
	// Two entries (an older install) become one.
	line := "*/15 * * * * /x/engram-worker run --quiet"
	two := CronMarker + "\n*/15 * * * * /old/engram-worker run --quiet\nz\n" + CronMarker + "\n" + line + "\n"
	got, changed := withCronEntry(two, line)
	if !changed || got != CronMarker+"\n"+line+"\n"+"z\n" {
		t.Errorf("changed %v, got %q", changed, got)
	}
}

// Where systemd is the init system but no user manager runs (an SSH login
// without lingering), the units are written and enabled for the next
// login, and the crontab runs the worker meanwhile; uninstall takes out
// both.
func TestInstallSystemdWithoutUserManager(t *testing.T) {
	fr := &fakeRunner{answers: []answer{{prefix: "systemctl --user is-system-running", out: "offline\n", err: errExit1}}}
	o := testHome(t, "linux", fr)
	o.SystemdRunDir = t.TempDir()
	ct := &crontabStandIn{fr: fr, text: userCrontab, exists: true}
	o.Run = ct.run
	r, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(o.UserHome, ".config", "systemd", "user")
	link := filepath.Join(dir, "timers.target.wants", TimerName)
	if dest, err := os.Readlink(link); err != nil || dest != filepath.Join(dir, TimerName) {
		t.Errorf("enable link: %q, %v", dest, err)
	}
	for _, n := range []string{ServiceName, TimerName} {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(ct.text, CronMarker) {
		t.Errorf("no crontab entry:\n%s", ct.text)
	}
	s := r.String()
	for _, want := range []string{"starts with your next login", "loginctl enable-linger", link + ": enabled the timer"} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	for _, c := range fr.take() {
		if strings.Contains(c, "enable") || strings.Contains(c, "daemon-reload") {
			t.Errorf("ran %q without a user manager", c)
		}
	}

	// Once the user manager runs, setup enables the timer and takes the
	// crontab entry out.
	fr.answers = []answer{{prefix: "systemctl --user is-system-running", out: "running\n"}}
	r, err = Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if ct.text != userCrontab {
		t.Errorf("crontab after the timer took over:\n%q", ct.text)
	}
	if r.Scheduler.Kind != SchedulerSystemd {
		t.Errorf("kind %q", r.Scheduler.Kind)
	}

	if _, err := Uninstall(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(link); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("enable link left: %v", err)
	}
}
