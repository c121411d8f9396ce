package promote

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Core memory: the beliefs a person approved for it (level core, or pinned
// with a core target) go into a managed block of the CLAUDE.md and/or
// AGENTS.md at their project's git root — files every session of Claude
// Code, and other coding agents, read — and global ones into
// $CLAUDE_CONFIG_DIR/CLAUDE.md. The block sits between CoreBegin and
// CoreEnd; every other byte of the file is the user's and stays as it is
// (a new block is appended at the end, and leaves with exactly the bytes
// it brought). Unlike MEMORY.md, a file with damaged markers is not
// repaired: it is left alone, as is a read-only one, one that is not valid
// UTF-8, and a symlink leading out of its directory. The write is the one
// of MEMORY.md: <file>.lock, a temporary file, a check against a
// concurrent writer and an atomic replacement. A belief in core memory is
// not repeated in MEMORY.md.
const (
	CoreBegin = "<!-- ENGRAM:CORE:BEGIN -->"
	CoreEnd   = "<!-- ENGRAM:CORE:END -->"
	// coreHeading opens the block.
	coreHeading = "## Core memory (kept by engram; engram-worker review to change it)"
	// MaxCore caps the beliefs of one block.
	MaxCore = 30
)

// Values of a core target (ENGRAM_CORE_TARGET, or a belief's own).
const (
	CoreClaude = "claude"
	CoreAgents = "agents"
	CoreBoth   = "both"
	CoreOff    = "off"
)

// Errors of a core file left alone.
var (
	ErrReadOnly       = errors.New("is read-only; engram leaves it as it is")
	ErrNotUTF8        = errors.New("is not valid UTF-8; engram leaves it as it is")
	ErrDamagedMarkers = errors.New("has damaged engram markers; engram leaves it as it is until they are fixed by hand")
)

// coreFile is one CLAUDE.md or AGENTS.md and the beliefs of its block.
type coreFile struct {
	path, dir, root string
	// created: engram made the file (it is removed when nothing else is
	// left in it).
	created bool
	beliefs []store.ReviewBelief
}

// CorePlan is what the core-memory files should hold.
type CorePlan struct {
	loc   Locations
	files map[string]*coreFile
	known map[string]store.CoreFile
	// of gives the files each belief belongs in, as planned.
	of map[string][]string
}

// inCore reports whether a belief at level with target goes into core
// memory.
func inCore(b store.ReviewBelief) bool {
	return b.Status == belief.StatusActive &&
		(b.Level == store.LevelCore || b.Level == store.LevelPinned && b.CoreTarget != "")
}

// coreFilesOf returns the files a core belief goes to: its project's
// CLAUDE.md and/or AGENTS.md, or the global CLAUDE.md. The root is ""
// for the global file, and no file is returned for a project whose
// directory is gone.
func coreFilesOf(loc Locations, b store.ReviewBelief, defaultTarget string) (paths []string, root string) {
	target := cmp.Or(b.CoreTarget, defaultTarget)
	if target == CoreOff || target == "" {
		return nil, ""
	}
	if b.Scope != episode.ScopeProject {
		return []string{filepath.Join(loc.ClaudeConfigDir, "CLAUDE.md")}, ""
	}
	root, ok := ProjectRoot(b.ProjectPath)
	if !ok {
		return nil, ""
	}
	switch target {
	case CoreAgents:
		return []string{filepath.Join(root, "AGENTS.md")}, root
	case CoreBoth:
		return []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "CLAUDE.md")}, root
	}
	return []string{filepath.Join(root, "CLAUDE.md")}, root
}

// PlanCore reads what core memory should hold now, with the decisions in
// override applied first (by belief id: their After level and CoreTarget),
// so that a decision is written before it is recorded.
func PlanCore(ctx context.Context, db *store.DB, loc Locations, defaultTarget string, override []store.Decision) (*CorePlan, error) {
	bs, err := db.ReviewBeliefs(ctx)
	if err != nil {
		return nil, err
	}
	known, err := db.CoreFiles(ctx)
	if err != nil {
		return nil, err
	}
	p := &CorePlan{loc: loc, files: map[string]*coreFile{}, known: map[string]store.CoreFile{}, of: map[string][]string{}}
	for _, f := range known {
		p.known[f.Path] = f
		p.files[f.Path] = &coreFile{path: f.Path, dir: filepath.Dir(f.Path), root: f.Root, created: f.Created}
	}
	ov := map[string]store.Decision{}
	for _, d := range override {
		ov[d.BeliefID] = d
	}
	for _, b := range bs {
		if d, ok := ov[b.ID]; ok {
			b.Level, b.CoreTarget = d.After, d.CoreTarget
			if d.Statement != "" {
				b.Statement = d.Statement
			}
		}
		if !inCore(b) {
			continue
		}
		paths, root := coreFilesOf(loc, b, defaultTarget)
		p.of[b.ID] = paths
		for _, path := range paths {
			f := p.files[path]
			if f == nil {
				f = &coreFile{path: path, dir: filepath.Dir(path), root: root}
				p.files[path] = f
			}
			f.beliefs = append(f.beliefs, b)
		}
	}
	return p, nil
}

// FilesOf returns the files a belief at this level and target goes to
// (none when it is not core memory).
func FilesOf(loc Locations, b store.ReviewBelief, defaultTarget string) []string {
	if !inCore(b) {
		return nil
	}
	paths, _ := coreFilesOf(loc, b, defaultTarget)
	return paths
}

// Check reports the first of the planned files (those in paths) that
// could not be written now — read-only, not valid UTF-8, damaged markers,
// a symlink out of its directory — without writing anything.
func (p *CorePlan) Check(paths []string) error {
	for _, path := range paths {
		f := p.files[path]
		if f == nil {
			continue
		}
		if err := checkCore(f); err != nil {
			return CoreProblem{path, err}
		}
	}
	return nil
}

// checkCore is writeCore's refusals, without the write.
func checkCore(f *coreFile) error {
	if fi, err := os.Lstat(f.path); err == nil && fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o200 == 0 {
		return ErrReadOnly
	}
	target, err := resolve(f.path, f.dir)
	if err != nil {
		return err
	}
	data, exists, err := readFile(target)
	if err != nil || !exists {
		return err
	}
	if fi, err := os.Stat(target); err == nil && fi.Mode().Perm()&0o200 == 0 {
		return ErrReadOnly
	}
	if !utf8.Valid(data) {
		return ErrNotUTF8
	}
	_, _, _, err = splitCore(string(data))
	return err
}

// CoreResult is what writing core memory did.
type CoreResult struct {
	// Written lists the files rewritten.
	Written []string
	// Shown are the beliefs now in a core-memory file.
	Shown map[string]bool
	// Problems are the files left alone, with why.
	Problems []CoreProblem
}

// CoreProblem is a core-memory file left alone.
type CoreProblem struct {
	Path string
	Err  error
}

func (p CoreProblem) Error() string {
	if msg := p.Err.Error(); strings.HasPrefix(msg, p.Path+" ") || strings.HasPrefix(msg, p.Path+":") {
		return msg // it names the file already
	}
	return p.Path + ": " + p.Err.Error()
}
func (p CoreProblem) Unwrap() error { return p.Err }

// Write writes the planned files (only those in paths, when paths is not
// nil) and records them in the store. A file that cannot be written is a
// problem of the result, not an error; only a failing store is.
func (p *CorePlan) Write(ctx context.Context, db *store.DB, paths []string, now time.Time) (CoreResult, error) {
	res := CoreResult{Shown: map[string]bool{}}
	all := make([]string, 0, len(p.files))
	for path := range p.files {
		if paths == nil || slices.Contains(paths, path) {
			all = append(all, path)
		}
	}
	slices.Sort(all)
	failed := map[string]bool{}
	for _, path := range all {
		f := p.files[path]
		if f.root != "" {
			if fi, err := os.Stat(f.root); err != nil || !fi.IsDir() {
				continue // a gone project: its files stay as they are
			}
		}
		changed, created, removed, err := writeCore(ctx, f, now)
		if err != nil {
			res.Problems = append(res.Problems, CoreProblem{path, err})
			failed[path] = true
			continue
		}
		if changed {
			res.Written = append(res.Written, path)
		}
		held := len(f.beliefs) > 0 && !removed
		rec := store.CoreFile{Path: path, Root: f.root, Created: created || p.known[path].Created}
		if err := db.SetCoreFile(ctx, rec, held, now); err != nil {
			return res, err
		}
	}
	for id, paths := range p.of {
		for _, path := range paths {
			if !failed[path] && slices.Contains(all, path) {
				res.Shown[id] = true
			}
		}
	}
	return res, nil
}

// writeCore rewrites one file's block. created reports a file engram made
// now; removed, one it made before and removed, nothing else being left.
func writeCore(ctx context.Context, f *coreFile, now time.Time) (changed, created, removed bool, err error) {
	if err := checkCore(f); err != nil {
		return false, false, false, err
	}
	block := renderCore(f.beliefs)
	_, statErr := os.Lstat(f.path)
	existed := statErr == nil
	u := &fileUpdate{path: f.path, dir: f.dir, removeEmpty: f.created}
	u.compute = func(old []byte, exists bool) ([]byte, error) {
		if !utf8.Valid(old) {
			return nil, ErrNotUTF8
		}
		before, after, found, err := splitCore(string(old))
		if err != nil {
			return nil, err
		}
		if !found {
			if block == "" {
				return old, nil
			}
			sep := ""
			if len(old) > 0 && !strings.HasSuffix(string(old), "\n") {
				sep = "\n"
			}
			return []byte(string(old) + sep + block), nil
		}
		return []byte(before + block + after), nil
	}
	changed, err = u.run(ctx)
	if err != nil {
		return false, false, false, err
	}
	// The lock file would sit in the user's repository: it goes once the
	// write is done.
	removeLock(f.path)
	return changed, changed && !existed, u.removed, nil
}

// renderCore renders the block ("" for no beliefs), best first.
func renderCore(bs []store.ReviewBelief) string {
	if len(bs) == 0 {
		return ""
	}
	bs = slices.Clone(bs)
	slices.SortFunc(bs, func(a, b store.ReviewBelief) int {
		return cmp.Or(cmp.Compare(belief.Confidence(b.Alpha, b.Beta), belief.Confidence(a.Alpha, a.Beta)),
			cmp.Compare(b.EvidenceCount, a.EvidenceCount), cmp.Compare(a.ID, b.ID))
	})
	var sb strings.Builder
	sb.WriteString(CoreBegin + "\n" + coreHeading + "\n\n")
	for i, b := range bs {
		if i == MaxCore {
			break
		}
		sb.WriteString("- " + oneLine(b.Statement, statementMax) + "\n")
	}
	sb.WriteString(CoreEnd + "\n")
	return sb.String()
}

// splitCore cuts the core block out of a file: the bytes before it and
// after it. A file without markers has none (found false); markers that
// are not exactly one BEGIN followed by one END are damage.
func splitCore(s string) (before, after string, found bool, err error) {
	lines := splitLines(s)
	begin, end := -1, -1
	nb, ne := 0, 0
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case CoreBegin:
			nb++
			begin = i
		case CoreEnd:
			ne++
			end = i
		}
	}
	switch {
	case nb == 0 && ne == 0:
		return s, "", false, nil
	case nb != 1 || ne != 1:
		return "", "", false, fmt.Errorf("%w (%d %s and %d %s)", ErrDamagedMarkers, nb, CoreBegin, ne, CoreEnd)
	case end < begin:
		return "", "", false, fmt.Errorf("%w (%s before %s)", ErrDamagedMarkers, CoreEnd, CoreBegin)
	}
	return strings.Join(lines[:begin], ""), strings.Join(lines[end+1:], ""), true, nil
}

// StripCore takes the core block out of a file, for uninstall; removeEmpty
// removes a file engram created when nothing else is left. A file without
// the markers is not touched.
func StripCore(ctx context.Context, path string, removeEmpty bool) (changed, removed bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if !strings.Contains(string(data), CoreBegin) && !strings.Contains(string(data), CoreEnd) {
		return false, false, nil
	}
	u := &fileUpdate{path: path, dir: filepath.Dir(path), removeEmpty: removeEmpty}
	u.compute = func(old []byte, exists bool) ([]byte, error) {
		before, after, found, err := splitCore(string(old))
		if err != nil || !found {
			return old, err
		}
		return []byte(before + after), nil
	}
	changed, err = u.run(ctx)
	if err == nil && changed {
		removeLock(path)
	}
	return changed, u.removed, err
}
