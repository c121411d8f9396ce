package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/config"
)

// Runner runs a command and returns its combined output. Tests pass a fake;
// ExecRunner is the real one.
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecRunner runs the command, bounded by 30 seconds.
func ExecRunner(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	return cmd.CombinedOutput()
}

// Options locate everything Install and Uninstall touch. DefaultOptions
// fills them from the configuration and the environment.
type Options struct {
	BinDir          string // holds engram-worker and the two hook binaries
	Home            string // ENGRAM_HOME
	ClaudeConfigDir string // CLAUDE_CONFIG_DIR (settings.json, CLAUDE.md)
	UserHome        string // HOME: "~" in the import line, ~/.config, ~/Library/LaunchAgents
	XDGConfigHome   string // $XDG_CONFIG_HOME; empty: UserHome/.config
	GOOS            string // empty: runtime.GOOS
	UID             int    // launchd's gui/<uid> domain
	Label           string // launchd label; empty: DefaultLaunchdLabel
	Run             Runner // empty: ExecRunner
	Purge           bool   // Uninstall only: also delete ENGRAM_HOME
	// SystemdRunDir exists when systemd is the init system; empty:
	// /run/systemd/system (what sd_booted checks).
	SystemdRunDir string
	// UserConfig is Claude Code's user configuration file, where the MCP
	// server is registered; empty: UserConfigFile, with CLAUDE_CONFIG_DIR
	// taken as set when ClaudeConfigDir is not UserHome/.claude.
	UserConfig string
	// StripMemory, Uninstall only, takes engram's blocks out of the
	// MEMORY.md files engram wrote (engram-worker passes promote's Clean):
	// the files cleaned, notes for the user, and the files it could not
	// clean as an error. Uninstall calls it once the scheduler is gone, so
	// that no cycle writes them again, and before a purge; nil skips it.
	StripMemory func(ctx context.Context) ([]Change, []string, error)
	// NoSelfSchedule is ENGRAM_SELF_SCHEDULE=false: the Stop hook does
	// not start the worker where nothing schedules it (reports say so).
	NoSelfSchedule bool
}

// DefaultOptions is Options for the running user, with the binaries in
// binDir (the directory of the running engram-worker, symlinks resolved).
func DefaultOptions(cfg config.Config, binDir string) Options {
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(xdg) { // the XDG spec: a relative value is ignored
		xdg = ""
	}
	return Options{
		BinDir: binDir, Home: cfg.Home, ClaudeConfigDir: cfg.ClaudeConfigDir,
		UserHome: home, XDGConfigHome: xdg, UID: os.Getuid(),
		UserConfig:     UserConfigFile(cfg.ClaudeConfigDir, home, os.Getenv("CLAUDE_CONFIG_DIR") != ""),
		NoSelfSchedule: !cfg.SelfSchedule,
	}
}

func (o Options) withDefaults() Options {
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Label == "" {
		o.Label = DefaultLaunchdLabel
	}
	if o.Run == nil {
		o.Run = ExecRunner
	}
	if o.SystemdRunDir == "" {
		o.SystemdRunDir = "/run/systemd/system"
	}
	if o.XDGConfigHome == "" && o.UserHome != "" {
		o.XDGConfigHome = filepath.Join(o.UserHome, ".config")
	}
	if o.UserConfig == "" && o.UserHome != "" && o.ClaudeConfigDir != "" {
		o.UserConfig = UserConfigFile(o.ClaudeConfigDir, o.UserHome, o.ClaudeConfigDir != filepath.Join(o.UserHome, ".claude"))
	}
	return o
}

func (o Options) check() error {
	var errs []error
	for _, p := range []struct{ what, path string }{
		{"binary directory", o.BinDir}, {"ENGRAM_HOME", o.Home},
		{"CLAUDE_CONFIG_DIR", o.ClaudeConfigDir}, {"home directory", o.UserHome},
	} {
		if err := checkPath(p.what, p.path); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Paths of what setup manages.
func (o Options) settingsPath() string { return filepath.Join(o.ClaudeConfigDir, "settings.json") }
func (o Options) claudeMDPath() string { return filepath.Join(o.ClaudeConfigDir, "CLAUDE.md") }
func (o Options) envPath() string      { return filepath.Join(o.Home, EnvFileName) }
func (o Options) globalMemoryPath() string {
	return filepath.Join(o.Home, "MEMORY.md")
}
func (o Options) workerPath() string { return filepath.Join(o.BinDir, WorkerBinary) }
func (o Options) unitDir() string    { return filepath.Join(o.XDGConfigHome, "systemd", "user") }
func (o Options) plistPath() string {
	return filepath.Join(o.UserHome, "Library", "LaunchAgents", o.Label+".plist")
}

// extraEnv is what the scheduled worker needs besides ENGRAM_HOME: a
// CLAUDE_CONFIG_DIR that is not the default (a timer does not see the
// user's shell environment).
func (o Options) extraEnv() []string {
	if o.ClaudeConfigDir != filepath.Join(o.UserHome, ".claude") {
		return []string{"CLAUDE_CONFIG_DIR=" + o.ClaudeConfigDir}
	}
	return nil
}

// Scheduler kinds.
const (
	SchedulerSystemd = "systemd"
	SchedulerLaunchd = "launchd"
	SchedulerCron    = "cron" // the crontab entry (or, where the crontab could not be read, CronLine to add by hand)
)

// Report says what Install or Uninstall did.
type Report struct {
	Settings Change // settings.json hooks
	MCP      Change // the MCP server in Claude Code's user configuration file
	Import   Change // the CLAUDE.md import line
	EnvFile  Change // the commented template ENGRAM_HOME/env
	// GlobalMemory is engram's global MEMORY.md, created empty for the
	// import line when it did not exist yet (Install), or removed while
	// still empty (Uninstall).
	GlobalMemory Change
	Scheduler    SchedulerReport
	Memory       []Change // MEMORY.md files engram's blocks were taken out of (Uninstall)
	Notes        []string // things the user should know or do
}

// SchedulerReport is the scheduler part of a Report.
type SchedulerReport struct {
	Kind     string   // SchedulerSystemd, SchedulerLaunchd or SchedulerCron; empty when nothing was found (Uninstall)
	Files    []Change // unit files or the plist
	Commands []string // the commands run, as one would type them
	Crontab  Change   // the user's crontab (Path "crontab") when its engram entry was added, kept or removed
	CronLine string   // the crontab line to add by hand: the crontab could not be read
}

// String is the report for a person, one line per fact.
func (r Report) String() string {
	var b strings.Builder
	changes := append([]Change{r.Settings, r.MCP, r.GlobalMemory, r.Import, r.EnvFile}, r.Scheduler.Files...)
	changes = append(changes, r.Scheduler.Crontab)
	for _, c := range append(changes, r.Memory...) {
		if c.Path == "" {
			continue
		}
		if !c.Changed {
			fmt.Fprintf(&b, "%s: unchanged\n", c.Path)
		}
		if c.Backup != "" {
			fmt.Fprintf(&b, "%s: previous version saved as %s\n", c.Path, c.Backup)
		}
		for _, a := range c.Actions {
			fmt.Fprintf(&b, "%s: %s\n", c.Path, a)
		}
	}
	for _, c := range r.Scheduler.Commands {
		fmt.Fprintf(&b, "ran: %s\n", c)
	}
	if r.Scheduler.CronLine != "" {
		fmt.Fprintf(&b, "add this line to your crontab (crontab -e) to run the worker every 15 minutes:\n%s\n", r.Scheduler.CronLine)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

func (r *Report) note(format string, a ...any) { r.Notes = append(r.Notes, fmt.Sprintf(format, a...)) }

// run runs a command through the runner and records it.
func (o Options) run(ctx context.Context, r *Report, name string, args ...string) ([]byte, error) {
	r.Scheduler.Commands = append(r.Scheduler.Commands, strings.Join(append([]string{name}, args...), " "))
	out, err := o.Run(ctx, name, args...)
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// Install wires engram into Claude Code and schedules the worker, in this
// order: the hooks in settings.json and the MCP server in the user
// configuration file (a refusal of either, such as invalid JSON, stops
// everything before any change), the data directory and a commented env
// template, the CLAUDE.md import line, the scheduler. Every step is
// idempotent: running Install again changes nothing.
func Install(ctx context.Context, opts Options) (Report, error) {
	o := opts.withDefaults()
	var r Report
	if err := o.check(); err != nil {
		return r, err
	}
	hooks := HooksIn(o.BinDir)
	for _, p := range []string{o.workerPath(), hooks.UserPromptSubmit, hooks.Stop} {
		if err := checkExecutable(p); err != nil {
			return r, err
		}
	}
	mcp, err := PlanMCP(o.UserConfig, o.workerPath())
	if err != nil && !errors.Is(err, ErrSymlinkOutside) && !errors.Is(err, ErrMCPNameTaken) {
		return r, err
	}
	mcpErr := err
	if r.Settings, err = MergeHooks(o.settingsPath(), hooks); err != nil {
		return r, err
	}
	if mcpErr != nil {
		r.note("%v; to give Claude engram's memory tools, register it yourself: claude mcp add --scope user %s -- %s %s",
			mcpErr, MCPServerName, o.workerPath(), MCPCommand)
	} else if r.MCP, err = mcp.Apply(); err != nil {
		return r, err
	}
	for _, d := range []string{o.Home, filepath.Join(o.Home, "logs")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return r, err
		}
	}
	if r.EnvFile, err = writeIfMissing(o.envPath(), envTemplate, 0o600, "created a commented template (mode 0600) for the worker's settings"); err != nil {
		return r, err
	}

	// The import line is added only once the file it imports exists:
	// before the worker first writes the global MEMORY.md, the model would
	// be shown the bare line. An empty file shows nothing.
	if r.GlobalMemory, err = writeIfMissing(o.globalMemoryPath(), "", 0o600, "created it empty (mode 0600), for the CLAUDE.md import line to load"); err != nil {
		return r, err
	}
	line := ImportLine(o.Home, o.UserHome)
	r.Import, err = AddImport(o.claudeMDPath(), line)
	if errors.Is(err, ErrSymlinkOutside) {
		r.note("%v; add this line to it yourself: %s", err, line)
		err = nil
	}
	if err != nil {
		return r, err
	}
	if strings.ContainsAny(line, " \t") {
		r.note("the data directory's path holds a blank, which a CLAUDE.md import may not take: check that Claude Code loads %s", filepath.Join(o.Home, "MEMORY.md"))
	}

	err = o.installScheduler(ctx, &r)
	return r, err
}

func (o Options) installScheduler(ctx context.Context, r *Report) error {
	switch o.GOOS {
	case "linux":
		ok, why := o.systemdUser(ctx)
		if ok {
			return o.installSystemd(ctx, r)
		}
		why = "no systemd user manager runs (" + why + ")"
		if o.systemdInit(ctx) {
			// The user manager starts with the next login (or at boot,
			// with lingering): the units wait for it, enabled.
			if err := o.writeSystemdUnits(r, true); err != nil {
				return err
			}
			r.note("%s: the systemd timer is installed and enabled, and starts with your next login (to have it run without a login session: loginctl enable-linger)", why)
		}
		return o.installCron(ctx, r, why)
	case "darwin":
		return o.installLaunchd(ctx, r)
	default:
		return o.installCron(ctx, r, "no supported scheduler on "+o.GOOS)
	}
}

// systemdInit tells whether systemd is the init system, with systemctl
// at hand.
func (o Options) systemdInit(ctx context.Context) bool {
	if _, err := o.Run(ctx, "systemctl", "--version"); errors.Is(err, exec.ErrNotFound) {
		return false
	}
	fi, err := os.Stat(o.SystemdRunDir)
	return err == nil && fi.IsDir()
}

// selfScheduleNote says what runs the worker where nothing schedules it:
// the Stop hook's fallback, unless ENGRAM_SELF_SCHEDULE=false.
func (o Options) selfScheduleNote() string {
	if o.NoSelfSchedule {
		return "ENGRAM_SELF_SCHEDULE=false keeps the Stop hook from starting it, so captures wait until you run engram-worker run"
	}
	return "each Claude Code turn's Stop hook starts the worker in the background when it has not run for 30 minutes, " +
		"so it runs while you use Claude Code (ENGRAM_SELF_SCHEDULE=false turns that off)"
}

// cronFallback is for a machine without a crontab command. Nothing is
// scheduled then (unless systemd units wait for the user manager), and the
// report says what runs the worker instead, and what would schedule it.
func (o Options) cronFallback(r *Report, why string) {
	if r.Scheduler.Kind == SchedulerSystemd {
		r.note("there is no crontab command either: until the user manager runs, %s", o.selfScheduleNote())
		return
	}
	r.note("%s, and there is no crontab command: nothing schedules the worker here; %s; "+
		"to have it run every 15 minutes, install cron and run engram-worker setup again", why, o.selfScheduleNote())
}

// systemdUser tells whether a systemd user manager answers. A container
// without one answers "offline" or cannot reach the bus.
func (o Options) systemdUser(ctx context.Context) (bool, string) {
	out, err := o.Run(ctx, "systemctl", "--user", "is-system-running")
	if errors.Is(err, exec.ErrNotFound) {
		return false, "systemctl not found"
	}
	for l := range strings.SplitSeq(string(out), "\n") {
		switch strings.TrimSpace(l) {
		case "running", "degraded", "starting", "initializing":
			return true, ""
		}
	}
	why := strings.Join(strings.Fields(string(out)), " ")
	if why == "" && err != nil {
		why = err.Error()
	}
	return false, "systemctl --user is-system-running: " + why
}

func (o Options) installSystemd(ctx context.Context, r *Report) error {
	if err := o.writeSystemdUnits(r, false); err != nil {
		return err
	}
	updated := false // a timer already installed got new settings
	for _, ch := range r.Scheduler.Files {
		updated = updated || (ch.Changed && !ch.Created)
	}
	if _, err := o.run(ctx, r, "systemctl", "--user", "daemon-reload"); err != nil {
		return err
	}
	if _, err := o.run(ctx, r, "systemctl", "--user", "enable", "--now", TimerName); err != nil {
		return err
	}
	if updated { // re-arm with the new settings
		if _, err := o.run(ctx, r, "systemctl", "--user", "restart", TimerName); err != nil {
			return err
		}
	}
	out, err := o.Run(ctx, "loginctl", "show-user", strconv.Itoa(o.UID), "--property=Linger", "--value")
	if err == nil && strings.TrimSpace(string(out)) == "no" {
		r.note("user timers run only while you are logged in; to run the worker without a session: loginctl enable-linger")
	}
	// A crontab entry from an install without a user manager is not
	// needed any more.
	return o.uninstallCron(ctx, r)
}

// writeSystemdUnits writes the service and the timer; enable also makes
// the link `systemctl --user enable` makes, for a user manager that does
// not run yet.
func (o Options) writeSystemdUnits(r *Report, enable bool) error {
	r.Scheduler.Kind = SchedulerSystemd
	service, timer := SystemdUnits(o.workerPath(), o.Home, o.extraEnv()...)
	dir := o.unitDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, u := range []struct{ name, text string }{{ServiceName, service}, {TimerName, timer}} {
		ch, err := writeOwned(filepath.Join(dir, u.name), u.text, 0o644)
		r.Scheduler.Files = append(r.Scheduler.Files, ch)
		if err != nil {
			return err
		}
	}
	if !enable {
		return nil
	}
	wants := filepath.Join(dir, "timers.target.wants")
	link := filepath.Join(wants, TimerName)
	target := filepath.Join(dir, TimerName)
	if dest, err := os.Readlink(link); err == nil && dest == target {
		return nil
	}
	if err := os.MkdirAll(wants, 0o755); err != nil {
		return err
	}
	if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Symlink(target, link); err != nil {
		return err
	}
	r.Scheduler.Files = append(r.Scheduler.Files, Change{Path: link, Changed: true, Created: true,
		Actions: []string{"enabled the timer (a link to " + target + ")"}})
	return nil
}

func (o Options) installLaunchd(ctx context.Context, r *Report) error {
	domain := "gui/" + strconv.Itoa(o.UID)
	_, err := o.Run(ctx, "launchctl", "print", domain+"/"+o.Label)
	if errors.Is(err, exec.ErrNotFound) {
		return o.installCron(ctx, r, "launchctl not found")
	}
	loaded := err == nil
	r.Scheduler.Kind = SchedulerLaunchd
	plist := o.plistPath()
	if err := os.MkdirAll(filepath.Dir(plist), 0o755); err != nil {
		return err
	}
	ch, err := writeOwned(plist, LaunchdPlist(o.workerPath(), o.Home, o.Label, o.extraEnv()...), 0o644)
	r.Scheduler.Files = append(r.Scheduler.Files, ch)
	if err != nil {
		return err
	}
	if loaded && !ch.Changed {
		return nil
	}
	if loaded {
		_, _ = o.run(ctx, r, "launchctl", "bootout", domain+"/"+o.Label)
	}
	_, err = o.run(ctx, r, "launchctl", "bootstrap", domain, plist)
	if err != nil {
		// Older systems, or a session without a gui domain (ssh).
		if _, err2 := o.run(ctx, r, "launchctl", "load", "-w", plist); err2 != nil {
			return errors.Join(err, err2)
		}
	}
	// launchctl can accept an agent it then does not keep loaded.
	if out, err := o.Run(ctx, "launchctl", "print", domain+"/"+o.Label); err != nil {
		r.note("launchd does not show the agent %s loaded (launchctl print: %v %s): it loads at your next login; %s",
			o.Label, err, strings.TrimSpace(string(out)), "meanwhile, "+o.selfScheduleNote())
	}
	return nil
}

// Uninstall takes out what Install added: the hooks, the import line, the
// scheduler, an env file still equal to the template, and, through
// opts.StripMemory, engram's blocks in the MEMORY.md files. The data
// directory is kept unless opts.Purge. It carries on past a failing step
// and returns all errors together.
func Uninstall(ctx context.Context, opts Options) (Report, error) {
	o := opts.withDefaults()
	var r Report
	if err := o.check(); err != nil {
		return r, err
	}
	var errs []error
	var err error
	// A file that no longer holds engram's entries loses the backups
	// setup made of it too.
	if r.Settings, err = RemoveHooks(o.settingsPath(), HooksIn(o.BinDir)); err != nil {
		errs = append(errs, err)
	} else if err := dropBackups(&r.Settings, o.settingsPath()); err != nil {
		errs = append(errs, err)
	}
	if r.MCP, err = RemoveMCP(o.UserConfig, o.workerPath()); errors.Is(err, ErrSymlinkOutside) {
		r.note("%v; if it registers engram's MCP server, remove it yourself: claude mcp remove --scope user %s", err, MCPServerName)
	} else if err != nil {
		errs = append(errs, err)
	} else if err := dropBackups(&r.MCP, o.UserConfig); err != nil {
		errs = append(errs, err)
	}
	if r.Import, err = RemoveImport(o.claudeMDPath(), ImportLine(o.Home, o.UserHome)); err != nil {
		errs = append(errs, err)
	} else if err := dropBackups(&r.Import, o.claudeMDPath()); err != nil {
		errs = append(errs, err)
	}
	if !o.Purge {
		if r.EnvFile, err = removeIfContent(o.envPath(), envTemplate, "removed the unedited template"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := o.uninstallScheduler(ctx, &r); err != nil {
		errs = append(errs, err)
	}
	if o.StripMemory != nil {
		changes, notes, err := o.StripMemory(ctx)
		r.Memory = changes
		r.Notes = append(r.Notes, notes...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !o.Purge {
		// The empty file Install made for the import line, or one left
		// empty by taking engram's blocks out.
		if r.GlobalMemory, err = removeIfContent(o.globalMemoryPath(), "", "removed it: it was empty"); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Purge {
		if err := purgeHome(o); err != nil {
			errs = append(errs, err)
		} else {
			r.note("deleted %s and everything in it", o.Home)
		}
	} else {
		r.note("your memories are kept in %s (uninstall --purge deletes them)", o.Home)
	}
	return r, errors.Join(errs...)
}

func (o Options) uninstallScheduler(ctx context.Context, r *Report) error {
	var err error
	switch o.GOOS {
	case "linux":
		err = o.uninstallSystemd(ctx, r)
	case "darwin":
		err = o.uninstallLaunchd(ctx, r)
	}
	return errors.Join(err, o.uninstallCron(ctx, r))
}

func (o Options) uninstallSystemd(ctx context.Context, r *Report) error {
	dir := o.unitDir()
	var present []string
	for _, n := range []string{ServiceName, TimerName} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			present = append(present, n)
		}
	}
	if len(present) == 0 {
		return nil
	}
	r.Scheduler.Kind = SchedulerSystemd
	var errs []error
	avail, _ := o.systemdUser(ctx)
	if avail {
		if _, err := o.run(ctx, r, "systemctl", "--user", "disable", "--now", TimerName); err != nil {
			errs = append(errs, err)
		}
	}
	// What `disable` removes, for when no user manager runs.
	wants := filepath.Join(dir, "timers.target.wants", TimerName)
	if dest, err := os.Readlink(wants); err == nil && filepath.Base(dest) == TimerName {
		if err := os.Remove(wants); err != nil {
			errs = append(errs, err)
		}
	}
	for _, n := range present {
		p := filepath.Join(dir, n)
		ch := Change{Path: p}
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		} else {
			ch.Changed, ch.Removed, ch.Actions = true, true, []string{"removed"}
		}
		r.Scheduler.Files = append(r.Scheduler.Files, ch)
	}
	if avail {
		if _, err := o.run(ctx, r, "systemctl", "--user", "daemon-reload"); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (o Options) uninstallLaunchd(ctx context.Context, r *Report) error {
	plist := o.plistPath()
	if _, err := os.Lstat(plist); err != nil {
		return nil
	}
	r.Scheduler.Kind = SchedulerLaunchd
	domain := "gui/" + strconv.Itoa(o.UID)
	if _, err := o.run(ctx, r, "launchctl", "bootout", domain+"/"+o.Label); err != nil {
		_, _ = o.run(ctx, r, "launchctl", "unload", "-w", plist) // not loaded is fine
	}
	ch := Change{Path: plist}
	if err := os.Remove(plist); err != nil {
		r.Scheduler.Files = append(r.Scheduler.Files, ch)
		return err
	}
	ch.Changed, ch.Removed, ch.Actions = true, true, []string{"removed"}
	r.Scheduler.Files = append(r.Scheduler.Files, ch)
	return nil
}

// purgeHome deletes ENGRAM_HOME, refusing any directory that holds the
// user's home, Claude Code's directory or the binaries, or that does not
// look like engram's (no memory.db, not the default path).
func purgeHome(o Options) error {
	home := filepath.Clean(o.Home)
	for _, keep := range []string{o.UserHome, o.ClaudeConfigDir, o.BinDir, o.XDGConfigHome} {
		if keep == "" {
			continue
		}
		if rel, err := filepath.Rel(home, keep); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			return fmt.Errorf("not deleting %s: it holds %s", home, keep)
		}
	}
	_, err := os.Stat(filepath.Join(home, "memory.db"))
	if err != nil && home != filepath.Join(o.UserHome, ".claude-memory") {
		return fmt.Errorf("not deleting %s: it has no memory.db and is not the default data directory; delete it yourself if it is engram's", home)
	}
	return os.RemoveAll(home)
}

// checkExecutable accepts an executable regular file (symlinks followed).
func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("engram binary: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("engram binary %s: not an executable file", p)
	}
	return nil
}

// writeOwned writes a file setup owns (a unit, the plist) when its content
// differs; no backup.
func writeOwned(path, text string, mode fs.FileMode) (Change, error) {
	f, err := openEditable(path)
	if err != nil {
		return Change{Path: path}, err
	}
	if f.exists && string(f.data) == text {
		return Change{Path: path}, nil
	}
	if !f.exists {
		f.mode = mode
	}
	act := "wrote"
	if f.exists {
		act = "updated"
	}
	return f.commit([]byte(text), []string{act}, false)
}

// writeIfMissing creates a file with text, leaving an existing one (or
// anything at path, a symlink included) alone; action says what creating
// it did.
func writeIfMissing(path, text string, mode fs.FileMode, action string) (Change, error) {
	fd, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return Change{Path: path}, nil
	}
	if err != nil {
		return Change{Path: path}, err
	}
	_, err = fd.WriteString(text)
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return Change{Path: path}, err
	}
	return Change{Path: path, Changed: true, Created: true, Actions: []string{action}}, nil
}

// removeIfContent removes a file still holding exactly text; action says
// what removing it did.
func removeIfContent(path, text, action string) (Change, error) {
	data, err := os.ReadFile(path)
	if err != nil || string(data) != text {
		return Change{}, nil // absent or edited: the user's now
	}
	if err := os.Remove(path); err != nil {
		return Change{Path: path}, err
	}
	return Change{Path: path, Changed: true, Removed: true, Actions: []string{action}}, nil
}
