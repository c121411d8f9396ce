package promote

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// Forget rewrites, at once, the files that may show memories just deleted
// from the store: a forgotten episode's bullet leaves the global file's
// episode block and the archive, and every belief block is written again
// from the store, which no longer holds a forgotten belief. It takes the
// same locks and the same care with Claude Code's own writes as a cycle.
// summaries are the summaries of the forgotten episodes (their bullets are
// made from them). A file that cannot be written is in Stats.Problems.
func Forget(ctx context.Context, db *store.DB, opt Options, summaries []string) (Stats, error) {
	var st Stats
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	if opt.GraduateImportance <= 0 {
		opt.GraduateImportance = DefaultGraduateImportance
	}
	opt.forget = map[string]bool{}
	for _, s := range summaries {
		opt.forget["- "+oneLine(s, graduatedSummaryMax)] = true
	}
	if len(opt.forget) > 0 {
		forgetInArchive(ctx, opt, &st)
	}
	// With promotion off, engram writes no MEMORY.md (and uninstall
	// takes out what it wrote before). A forgotten core belief leaves
	// CLAUDE.md and AGENTS.md at once too.
	if err := coreStep(ctx, db, &opt, &st); err != nil {
		return st, err
	}
	if opt.Write {
		if err := promoteAll(ctx, db, opt, &st); err != nil {
			return st, err
		}
	}
	return st, nil
}

// dropForgotten removes the bullets of forgotten episodes from sections,
// and the sections left empty.
func dropForgotten(secs []section, forget map[string]bool) []section {
	if len(forget) == 0 {
		return secs
	}
	out := make([]section, 0, len(secs))
	for _, s := range secs {
		kept := slices.DeleteFunc(slices.Clone(s.bullets), func(b string) bool { return forget[b] })
		if len(kept) > 0 {
			out = append(out, section{date: s.date, bullets: kept})
		}
	}
	return out
}

// forgetInArchive removes the bullets of forgotten episodes from every
// archive file, and a dated heading left without bullets.
func forgetInArchive(ctx context.Context, opt Options, st *Stats) {
	dir := opt.Locations.ArchiveDir()
	names, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return
	}
	for _, path := range names {
		u := &fileUpdate{path: path, dir: dir, compute: func(old []byte, exists bool) ([]byte, error) {
			if !exists {
				return old, nil
			}
			return []byte(dropArchiveLines(string(old), opt.forget)), nil
		}}
		changed, err := u.run(ctx)
		st.Retries += u.retries
		if err != nil {
			st.Problems = append(st.Problems, fmt.Sprintf("%s: %v", path, err))
			opt.Log.Warn("forget: archive file left alone", "file", path, "err", err)
			continue
		}
		if changed {
			st.Files++
		}
	}
}

// dropArchiveLines removes the forgotten bullets from an archive file's
// text; a "## date" heading whose bullets are all gone goes with its blank
// lines.
func dropArchiveLines(text string, forget map[string]bool) string {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "## ") {
			if !forget[strings.TrimRight(l, "\r\n")] {
				out = append(out, l)
			}
			continue
		}
		// A section: its heading, then lines up to the next heading.
		j := i + 1
		for j < len(lines) && !strings.HasPrefix(lines[j], "## ") {
			j++
		}
		var body []string
		bullets := 0
		for _, b := range lines[i+1 : j] {
			t := strings.TrimRight(b, "\r\n")
			if forget[t] {
				continue
			}
			if strings.HasPrefix(t, "- ") {
				bullets++
			}
			body = append(body, b)
		}
		if bullets > 0 || len(lines[i+1:j]) == len(body) {
			out = append(out, l)
			out = append(out, body...)
		}
		i = j - 1
	}
	return strings.Join(out, "")
}
