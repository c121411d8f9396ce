package thread

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// Dir is where the sealed boxes' files live under the data directory:
// boxes/YYYY-MM-DD/box-<id>.md, dated by the day the box opened (UTC).
func Dir(home string) string { return filepath.Join(home, "boxes") }

// FilePath is the file of box b.
func FilePath(home string, b store.Box) string {
	return filepath.Join(Dir(home), b.OpenedAt.UTC().Format("2006-01-02"), "box-"+b.ID+".md")
}

// keyMemories is how many of a box's episodes its file and a trace's
// timeline show.
const keyMemories = 5

// WriteFile writes the file of sealed box b with its episodes eps (0600,
// atomically; directories 0700). A directory on the way that is a
// symbolic link is refused: the file is never written outside home.
func WriteFile(home string, b store.Box, eps []episode.Episode) error {
	path := FilePath(home, b)
	if err := realDirs(home, filepath.Dir(path)); err != nil {
		return err
	}
	return recall.WriteAtomic(path, []byte(Render(b, eps)))
}

// RemoveFile removes the file of box b, if there is one.
func RemoveFile(home string, b store.Box) error {
	path := FilePath(home, b)
	if err := realDirs(home, filepath.Dir(path)); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// realDirs makes the directories from home down to dir (0700), refusing
// one that exists and is not a directory of its own (a symbolic link).
func realDirs(home, dir string) error {
	rel, err := filepath.Rel(home, dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("thread: %s is not under %s", dir, home)
	}
	at := home
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		at = filepath.Join(at, part)
		fi, err := os.Lstat(at)
		switch {
		case os.IsNotExist(err):
			if err := os.Mkdir(at, 0o700); err != nil && !os.IsExist(err) {
				return err
			}
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
			return fmt.Errorf("thread: %s is not a directory of its own; the box files are not written there", at)
		}
	}
	return nil
}

// Render is a box's file: what it is about, when, its trace, and its key
// memories (the most important first, then in the order they happened).
func Render(b store.Box, eps []episode.Episode) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n\n", Label(b.Terms))
	fmt.Fprintf(&sb, "- box: %s\n- trace: %s\n", b.ID, b.TraceID)
	if b.Project != "" || b.ProjectPath != "" {
		fmt.Fprintf(&sb, "- project: %s (%s)\n", b.Project, b.ProjectPath)
	}
	fmt.Fprintf(&sb, "- from %s to %s, %d memories; sealed (%s) %s\n", b.OpenedAt.UTC().Format("2006-01-02 15:04"),
		b.LastAt.UTC().Format("2006-01-02 15:04"), b.Members, b.SealReason, b.SealedAt.UTC().Format("2006-01-02 15:04"))
	if len(b.Terms) > 0 {
		fmt.Fprintf(&sb, "- key terms: %s\n", strings.Join(b.Terms, ", "))
	}
	sb.WriteString("\n## Key memories\n\n")
	for _, e := range Key(eps, keyMemories) {
		fmt.Fprintf(&sb, "- %s %s: %s\n", e.OccurredAt.UTC().Format("2006-01-02 15:04"), e.ID, oneLine(e.Summary, 300))
	}
	return sb.String()
}

// Key returns the n most important of eps (the earlier on a tie), in the
// order they happened.
func Key(eps []episode.Episode, n int) []episode.Episode {
	idx := make([]int, len(eps))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(eps[j].Importance, eps[i].Importance) })
	if len(idx) > n {
		idx = idx[:n]
	}
	slices.Sort(idx)
	out := make([]episode.Episode, len(idx))
	for i, k := range idx {
		out[i] = eps[k]
	}
	return out
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
