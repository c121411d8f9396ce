package setup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// SchedulerState is one scheduler of the worker found on this machine.
type SchedulerState struct {
	Kind string `json:"kind"` // SchedulerSystemd, SchedulerLaunchd, SchedulerCron
	// Active: it runs the worker now (a running timer, a loaded agent, a
	// crontab entry: whether cron itself runs cannot be told from here).
	Active bool   `json:"active"`
	Detail string `json:"detail"`
}

// Schedulers finds what schedules the worker: the systemd timer, the
// launchd agent, engram's crontab entry. None found, or none active, means
// only the Stop hook's fallback runs the worker.
func Schedulers(ctx context.Context, opts Options) []SchedulerState {
	o := opts.withDefaults()
	var out []SchedulerState
	switch o.GOOS {
	case "linux":
		timer := filepath.Join(o.unitDir(), TimerName)
		if _, err := os.Stat(timer); err == nil {
			res, _ := o.Run(ctx, "systemctl", "--user", "is-active", TimerName)
			state := strings.TrimSpace(string(res))
			if state == "active" {
				out = append(out, SchedulerState{SchedulerSystemd, true, "systemd timer " + TimerName + " is active"})
			} else {
				enabled := ""
				if _, err := os.Stat(filepath.Join(o.unitDir(), "timers.target.wants", TimerName)); err == nil {
					enabled = "enabled, "
				}
				if state == "" {
					state = "not answered: no systemd user manager runs"
				}
				out = append(out, SchedulerState{SchedulerSystemd, false, "systemd timer " + timer + " is " + enabled + "not running (" + state + "); it starts with the user manager, at your next login or at boot with loginctl enable-linger"})
			}
		}
	case "darwin":
		if _, err := os.Stat(o.plistPath()); err == nil {
			_, err := o.Run(ctx, "launchctl", "print", "gui/"+strconv.Itoa(o.UID)+"/"+o.Label)
			if err == nil {
				out = append(out, SchedulerState{SchedulerLaunchd, true, "launchd agent " + o.Label + " is loaded"})
			} else {
				out = append(out, SchedulerState{SchedulerLaunchd, false, "launchd agent " + o.plistPath() + " is not loaded (it loads at your next login; or: launchctl bootstrap gui/" + strconv.Itoa(o.UID) + " " + o.plistPath() + ")"})
			}
		}
	}
	if text, found, err := o.readCrontab(ctx); found && err == nil {
		lines := splitLines(text)
		for i, l := range lines {
			if strings.TrimSuffix(l, "\n") == CronMarker && i+1 < len(lines) {
				out = append(out, SchedulerState{SchedulerCron, true, "crontab entry: " + strings.TrimSuffix(lines[i+1], "\n")})
				break
			}
		}
	}
	return out
}

// Schedulable tells whether setup can schedule the worker on this machine:
// a systemd user manager, or systemd as the init system (the timer then
// waits for the next login), launchd, or a crontab command. When it cannot,
// why says what was looked for and not found.
func Schedulable(ctx context.Context, opts Options) (ok bool, why string) {
	o := opts.withDefaults()
	switch o.GOOS {
	case "linux":
		user, w := o.systemdUser(ctx)
		if user || o.systemdInit(ctx) {
			return true, ""
		}
		why = "no systemd user manager runs (" + w + ")"
	case "darwin":
		if _, err := o.Run(ctx, "launchctl", "print", "gui/"+strconv.Itoa(o.UID)+"/"+o.Label); !errors.Is(err, exec.ErrNotFound) {
			return true, ""
		}
		why = "launchctl not found"
	default:
		why = "no supported scheduler on " + o.GOOS
	}
	if _, found, _ := o.readCrontab(ctx); found {
		return true, ""
	}
	return false, why + ", and there is no crontab command"
}
