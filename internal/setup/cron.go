package setup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CronMarker is the comment line above engram's crontab entry: setup and
// uninstall find the entry by it, and leave every other line alone.
const CronMarker = "# engram: runs the memory worker every 15 minutes; `engram-worker uninstall` removes this line and the next"

// crontabName is how reports name the user's crontab.
const crontabName = "crontab"

// readCrontab returns the user's crontab; found is false when the crontab
// command is missing. A user without a crontab has an empty one.
func (o Options) readCrontab(ctx context.Context) (text string, found bool, err error) {
	out, err := o.Run(ctx, "crontab", "-l")
	if errors.Is(err, exec.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		if strings.Contains(string(out), "no crontab for") {
			return "", true, nil
		}
		return "", true, fmt.Errorf("crontab -l: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return string(out), true, nil
}

// writeCrontab replaces the user's crontab with text, through a file in
// ENGRAM_HOME (crontab reads a file; a runner has no stdin); an empty text
// removes the crontab.
func (o Options) writeCrontab(ctx context.Context, r *Report, text string) error {
	if text == "" {
		_, err := o.run(ctx, r, "crontab", "-r")
		return err
	}
	f, err := os.CreateTemp(o.Home, ".crontab-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	_, err = o.run(ctx, r, "crontab", f.Name())
	return err
}

// withCronEntry returns text with engram's entry (the marker and line) at
// its start, any older entry taken out; changed is false when text holds
// exactly that entry already.
func withCronEntry(text, line string) (string, bool) {
	lines := splitLines(text)
	markers, ours := 0, 0
	for i, l := range lines {
		if strings.TrimSuffix(l, "\n") == CronMarker {
			markers++
			if i+1 < len(lines) && strings.TrimSuffix(lines[i+1], "\n") == line {
				ours++
			}
		}
	}
	if markers == 1 && ours == 1 {
		return text, false
	}
	// At the top: the user's variables (SHELL, PATH, MAILTO) do not apply
	// to it, and taking it out gives back the user's bytes exactly, a last
	// line without its newline included.
	return CronMarker + "\n" + line + "\n" + withoutCronEntry(text), true
}

// withoutCronEntry takes engram's entries out of text: each marker line,
// and the line after it when it runs engram-worker. Every other byte stays.
func withoutCronEntry(text string) string {
	lines := splitLines(text)
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		if strings.TrimSuffix(lines[i], "\n") == CronMarker {
			if i+1 < len(lines) && strings.Contains(lines[i+1], WorkerBinary+" run") {
				i++
			}
			continue
		}
		b.WriteString(lines[i])
	}
	return b.String()
}

// splitLines splits text after each newline; the last line may lack one.
func splitLines(text string) []string {
	var lines []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			lines = append(lines, text)
			break
		}
		lines = append(lines, text[:i+1])
		text = text[i+1:]
	}
	return lines
}

// installCron adds engram's entry to the user's crontab; without a
// crontab command it says what runs the worker instead (cronFallback).
func (o Options) installCron(ctx context.Context, r *Report, why string) error {
	cur, found, err := o.readCrontab(ctx)
	if !found {
		o.cronFallback(r, why)
		return nil
	}
	if err != nil {
		r.note("%s, and the crontab could not be read (%v): meanwhile, %s", why, err, o.selfScheduleNote())
		r.Scheduler.CronLine = CronLine(o.workerPath(), o.Home, o.extraEnv()...)
		return nil
	}
	if r.Scheduler.Kind == "" {
		r.Scheduler.Kind = SchedulerCron
	}
	ch := Change{Path: crontabName}
	text, changed := withCronEntry(cur, CronLine(o.workerPath(), o.Home, o.extraEnv()...))
	if changed {
		if err := o.writeCrontab(ctx, r, text); err != nil {
			r.Scheduler.Crontab = ch
			return err
		}
		ch.Changed = true
		ch.Actions = []string{"added the line that runs " + o.workerPath() + " every 15 minutes (output in " + filepath.Join(o.Home, "logs", "worker.cron.log") + ")"}
	}
	r.Scheduler.Crontab = ch
	r.note("%s: the worker runs from your crontab; check that cron runs: engram-worker doctor says when the worker last ran", why)
	return nil
}

// uninstallCron takes engram's entry out of the user's crontab, leaving
// every other line byte for byte.
func (o Options) uninstallCron(ctx context.Context, r *Report) error {
	cur, found, err := o.readCrontab(ctx)
	if !found || err != nil || !strings.Contains(cur, CronMarker) {
		return err
	}
	if err := o.writeCrontab(ctx, r, withoutCronEntry(cur)); err != nil {
		return err
	}
	r.Scheduler.Crontab = Change{Path: crontabName, Changed: true, Removed: true, Actions: []string{"removed engram's line"}}
	return nil
}
