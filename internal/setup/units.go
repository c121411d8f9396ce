package setup

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/engram-memory/engram/internal/config"
)

// Scheduler file names and the launchd label.
const (
	ServiceName         = "engram-worker.service"
	TimerName           = "engram-worker.timer"
	DefaultLaunchdLabel = "io.github.engram-memory.worker"
	// EnvFileName is the file in ENGRAM_HOME holding the worker's settings
	// (ENGRAM_LLM_*, an API key): systemd reads it through EnvironmentFile=,
	// launchd and cron cannot, so the worker loads it itself (LoadEnvFile).
	EnvFileName = "env"
)

// Interval is how often the worker runs.
var intervalSeconds = int(config.WorkerInterval.Seconds())

const unitHeader = "# Written by `engram-worker setup`; `engram-worker uninstall` removes it.\n"

// SystemdUnits renders the user service and timer that run `engram-worker
// run --quiet` shortly after the user manager starts and every 15 minutes
// after the last run. home is ENGRAM_HOME, set for the worker and holding the
// optional env file. extraEnv holds more NAME=value settings for the service
// (CLAUDE_CONFIG_DIR when it is not the default).
//
// The timer is monotonic (OnStartupSec + OnUnitActiveSec); Persistent= only
// acts on OnCalendar= timers, so it is not set: the catch-up after a
// shutdown is OnStartupSec, which elapses at once when the timer is started
// late (as by `enable --now`).
func SystemdUnits(binPath, home string, extraEnv ...string) (service, timer string) {
	var s strings.Builder
	s.WriteString(unitHeader)
	s.WriteString("[Unit]\n")
	s.WriteString("Description=engram worker: store and consolidate Claude Code memories\n")
	s.WriteString("Documentation=https://github.com/engram-memory/engram\n\n")
	s.WriteString("[Service]\n")
	s.WriteString("Type=oneshot\n")
	for _, kv := range append([]string{"ENGRAM_HOME=" + home}, extraEnv...) {
		s.WriteString("Environment=" + systemdQuoteWord(systemdEscape(kv)) + "\n")
	}
	// The leading "-": a missing file is fine. Settings from the file win
	// over Environment= lines.
	s.WriteString("EnvironmentFile=-" + systemdEscape(filepath.Join(home, EnvFileName)) + "\n")
	// "$" expands variables in ExecStart= (not in Environment=).
	s.WriteString("ExecStart=" + systemdQuoteWord(strings.ReplaceAll(systemdEscape(binPath), "$", "$$")) + " run --quiet\n")
	s.WriteString("Nice=10\n")
	s.WriteString("IOSchedulingClass=idle\n")
	s.WriteString("NoNewPrivileges=yes\n")
	// A oneshot has no start timeout by default; a hung run would stop the
	// timer from ever starting another.
	s.WriteString("TimeoutStartSec=1h\n")
	service = s.String()

	var t strings.Builder
	t.WriteString(unitHeader)
	t.WriteString("[Unit]\n")
	t.WriteString("Description=Run the engram worker every 15 minutes\n")
	t.WriteString("Documentation=https://github.com/engram-memory/engram\n\n")
	t.WriteString("[Timer]\n")
	t.WriteString("OnStartupSec=2min\n")
	t.WriteString("OnUnitActiveSec=15min\n")
	t.WriteString("RandomizedDelaySec=60\n")
	t.WriteString("AccuracySec=1min\n")
	t.WriteString("Unit=" + ServiceName + "\n\n")
	t.WriteString("[Install]\n")
	t.WriteString("WantedBy=timers.target\n")
	return service, t.String()
}

// systemdEscape protects specifiers: "%" starts one in most unit settings.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// systemdQuoteWord makes s one word of a unit setting, quoted when it holds
// a blank, a quote, a backslash or a ";".
func systemdQuoteWord(s string) string {
	if !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// LaunchdPlist renders a launchd agent running `engram-worker run --quiet`
// at load (login) and every 900 seconds, at low priority, with its output in
// ENGRAM_HOME/logs. launchd takes absolute paths only and cannot read an
// env file: the worker loads ENGRAM_HOME/env itself (LoadEnvFile). extraEnv
// holds more NAME=value settings, as for SystemdUnits.
func LaunchdPlist(binPath, home, label string, extraEnv ...string) string {
	esc := func(s string) string {
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(s)) // writing to a buffer cannot fail
		return b.String()
	}
	str := func(s string) string { return "<string>" + esc(s) + "</string>" }
	key := func(k string) string { return "\t<key>" + esc(k) + "</key>\n" }
	logs := filepath.Join(home, "logs")
	var p strings.Builder
	p.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p.WriteString(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">` + "\n")
	p.WriteString("<!-- Written by `engram-worker setup`; `engram-worker uninstall` removes it. -->\n")
	p.WriteString(`<plist version="1.0">` + "\n<dict>\n")
	p.WriteString(key("Label") + "\t" + str(label) + "\n")
	p.WriteString(key("ProgramArguments") + "\t<array>\n")
	for _, a := range []string{binPath, "run", "--quiet"} {
		p.WriteString("\t\t" + str(a) + "\n")
	}
	p.WriteString("\t</array>\n")
	p.WriteString(key("EnvironmentVariables") + "\t<dict>\n")
	for _, kv := range append([]string{"ENGRAM_HOME=" + home}, extraEnv...) {
		k, v, _ := strings.Cut(kv, "=")
		p.WriteString("\t" + key(k) + "\t\t" + str(v) + "\n")
	}
	p.WriteString("\t</dict>\n")
	p.WriteString(key("StartInterval") + fmt.Sprintf("\t<integer>%d</integer>\n", intervalSeconds))
	p.WriteString(key("RunAtLoad") + "\t<true/>\n")
	p.WriteString(key("ProcessType") + "\t" + str("Background") + "\n")
	p.WriteString(key("LowPriorityIO") + "\t<true/>\n")
	p.WriteString(key("Nice") + "\t<integer>10</integer>\n")
	p.WriteString(key("StandardOutPath") + "\t" + str(filepath.Join(logs, "worker.out.log")) + "\n")
	p.WriteString(key("StandardErrorPath") + "\t" + str(filepath.Join(logs, "worker.err.log")) + "\n")
	p.WriteString("</dict>\n</plist>\n")
	return p.String()
}

// CronLine is the crontab line to use where no scheduler can be installed:
// every 15 minutes, output appended to ENGRAM_HOME/logs/worker.cron.log.
// The worker loads ENGRAM_HOME/env itself.
func CronLine(binPath, home string, extraEnv ...string) string {
	q := func(s string) string { return cronEscape(shellQuote(s)) }
	var env []string
	for _, kv := range append([]string{"ENGRAM_HOME=" + home}, extraEnv...) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+q(v))
	}
	return fmt.Sprintf("*/15 * * * * %s %s run --quiet >>%s 2>&1",
		strings.Join(env, " "), q(binPath), q(filepath.Join(home, "logs", "worker.cron.log")))
}

// cronEscape protects "%", which cron turns into a newline.
func cronEscape(s string) string { return strings.ReplaceAll(s, "%", `\%`) }
