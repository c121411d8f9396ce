package promote

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/store"
)

// FileReport is one MEMORY.md engram writes, as it is now.
type FileReport struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"` // global | project
	Project string `json:"project,omitempty"`
	Exists  bool   `json:"exists"`
	Lines   int    `json:"lines"`
	Bytes   int    `json:"bytes"`
	// EngramLines are the lines of engram's blocks; OtherLines the rest
	// (the user's, Claude Code's).
	EngramLines int `json:"engram_lines"`
	OtherLines  int `json:"other_lines"`
	OtherBytes  int `json:"other_bytes"`
	// Chars counts the file as the client does (UTF-16 code units).
	Chars      int `json:"chars"`
	OtherChars int `json:"other_chars"`
	// WithinLimit: the whole file reaches the model (at most LineLimit
	// lines and ByteLimit bytes).
	WithinLimit bool `json:"within_limit"`
	// UnderReminder: the file is under the client's reminder thresholds
	// (at most ReminderLines lines and ReminderChars characters), so the
	// client does not ask the model to shrink it.
	UnderReminder bool `json:"under_reminder"`
	// OtherOverLimit: the content that is not engram's reaches the
	// reminder thresholds by itself; engram leaves it alone and has no
	// room left in the file.
	OtherOverLimit bool `json:"other_over_limit"`
	// EngramRoom is how many lines the rest of the file leaves engram's
	// blocks under the reminder thresholds; Limited, whether that is
	// fewer than its belief block may take (BeliefBlockMaxLines), so that
	// engram's part is kept smaller.
	EngramRoom int  `json:"engram_room"`
	Limited    bool `json:"limited"`
	// Problem says what is wrong with the file, if anything.
	Problem string `json:"problem,omitempty"`
}

// Inspect reports on the global MEMORY.md and every file engram has
// written. It only reads.
func Inspect(ctx context.Context, loc Locations, db *store.DB) ([]FileReport, error) {
	files, err := db.MemoryFiles(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{loc.GlobalFile(): true}
	out := []FileReport{inspect(loc.GlobalFile(), loc.EngramHome, kindGlobal, "", true)}
	for _, f := range files {
		if seen[f.Path] {
			continue
		}
		seen[f.Path] = true
		r := inspect(f.Path, filepath.Dir(f.Path), f.Kind, f.Root, f.Path == loc.GlobalFile())
		if f.Root != "" {
			if fi, err := os.Stat(f.Root); err != nil || !fi.IsDir() {
				r.Problem = joinProblem(r.Problem, "the project directory "+f.Root+" no longer exists; engram no longer writes this file")
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func inspect(path, dir, kind, root string, global bool) FileReport {
	r := FileReport{Path: path, Kind: kind, WithinLimit: true}
	if root != "" {
		r.Project = gitroot.Name(root)
	}
	target, err := resolve(path, dir)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	data, exists, err := readFile(target)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Exists = exists
	if !exists {
		return r
	}
	s := string(data)
	d := parse(s, global)
	r.Lines, r.Bytes = countLines(s), len(s)
	r.OtherLines, r.OtherBytes = countLines(d.foreign), len(d.foreign)
	r.Chars, r.OtherChars = countChars(s), countChars(d.foreign)
	r.EngramLines = r.Lines - r.OtherLines
	r.WithinLimit = r.Lines <= LineLimit && r.Bytes <= ByteLimit
	r.UnderReminder = r.Lines <= ReminderLines && r.Chars <= ReminderChars && r.Bytes <= ByteLimit
	r.OtherOverLimit = r.OtherLines >= ReminderLines || r.OtherChars >= ReminderChars || r.OtherBytes >= ByteLimit
	r.EngramRoom = max(0, ReminderLines-r.OtherLines)
	r.Limited = r.EngramRoom < BeliefBlockMaxLines
	if len(d.damage) > 0 {
		r.Problem = joinProblem(r.Problem, "damaged markers ("+strings.Join(d.damage, "; ")+"); the next cycle repairs them")
	}
	return r
}

func joinProblem(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// Describe says in one line how a file stands against the client's limit.
func (r FileReport) Describe() string {
	switch {
	case r.Problem != "" && !r.Exists:
		return r.Problem
	case !r.Exists:
		return "not written yet"
	case r.Lines == 0:
		return "empty (nothing of engram's to show there now)"
	}
	var b strings.Builder
	b.WriteString(plural(r.Lines, "line") + " (" + strconv.Itoa(r.EngramLines) + " engram's, " + strconv.Itoa(r.OtherLines) + " other)")
	const thresholds = "the client's reminder thresholds (160 lines, 20,000 characters)"
	switch {
	case r.UnderReminder && r.Limited:
		b.WriteString(", under " + thresholds + "; the rest of the file leaves engram " + plural(r.EngramRoom, "line") +
			", so engram's part is kept smaller (its highest-ranked lines)")
	case r.UnderReminder:
		b.WriteString(", under " + thresholds)
	case r.OtherOverLimit:
		b.WriteString(", past " + thresholds + " by content that is not engram's: the client asks the model to shrink the file, " +
			"and engram has no room left there")
	default:
		b.WriteString(", past " + thresholds + " since engram's last write: the next cycle makes engram's part smaller")
	}
	if !r.WithinLimit {
		b.WriteString("; past the " + plural(LineLimit, "line") + " (or 25 KB) the client loads: the model sees only the start of it")
	}
	if r.Problem != "" {
		b.WriteString("; " + r.Problem)
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}
