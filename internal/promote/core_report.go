package promote

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/store"
)

// CoreReport is one CLAUDE.md or AGENTS.md that holds, or should hold,
// engram's core-memory block, as it is now.
type CoreReport struct {
	Path    string `json:"path"`
	Project string `json:"project,omitempty"` // "" for the global CLAUDE.md
	// Beliefs is how many beliefs the block should hold now.
	Beliefs int  `json:"beliefs"`
	Exists  bool `json:"exists"`
	// Block: the file holds the block, its markers intact; Shown is how
	// many beliefs it lists.
	Block bool `json:"block"`
	Shown int  `json:"shown"`
	// Stale: the block is not what the next cycle writes (edited by hand,
	// or the beliefs changed since the last write).
	Stale bool `json:"stale,omitempty"`
	// Problem says what keeps engram from keeping the block ("" when
	// nothing does).
	Problem string `json:"problem,omitempty"`
}

// InspectCore reports on every core-memory file: those engram keeps a
// block in and those the core beliefs should go to now. It only reads.
func InspectCore(ctx context.Context, db *store.DB, loc Locations, defaultTarget string) ([]CoreReport, error) {
	p, err := PlanCore(ctx, db, loc, defaultTarget, nil)
	if err != nil {
		return nil, err
	}
	return p.Inspect(), nil
}

// Inspect reports on every file of the plan. It only reads.
func (p *CorePlan) Inspect() []CoreReport {
	paths := make([]string, 0, len(p.files))
	for path := range p.files {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	out := make([]CoreReport, 0, len(paths))
	for _, path := range paths {
		out = append(out, inspectCore(p.files[path]))
	}
	return out
}

func inspectCore(f *coreFile) CoreReport {
	r := CoreReport{Path: f.path, Project: gitroot.Name(f.root), Beliefs: min(len(f.beliefs), MaxCore)}
	if f.root != "" {
		if fi, err := os.Stat(f.root); err != nil || !fi.IsDir() {
			r.Problem = "the project directory " + f.root + " no longer exists; engram no longer writes this file"
			return r
		}
	}
	_, err := os.Lstat(f.path)
	r.Exists = err == nil
	if err := checkCore(f); err != nil {
		// The file is named by the report: not again in its problem.
		msg := err.Error()
		msg = strings.TrimPrefix(msg, f.path+": ")
		r.Problem = strings.TrimPrefix(msg, f.path+" ")
		return r
	}
	if fi, err := os.Stat(f.dir); err == nil && fi.Mode().Perm()&0o200 == 0 {
		r.Problem = fmt.Sprintf("its directory %s is not writable: engram cannot replace the file", f.dir)
		return r
	}
	if !r.Exists {
		if r.Beliefs > 0 {
			r.Problem = "missing: the next cycle writes it again"
		}
		return r
	}
	target, _ := resolve(f.path, f.dir) // checkCore resolved it already
	data, err := os.ReadFile(target)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	before, after, found, _ := splitCore(string(data))
	if found {
		r.Block = true
		block := strings.TrimSuffix(strings.TrimPrefix(string(data), before), after)
		for l := range strings.SplitSeq(block, "\n") {
			if strings.HasPrefix(l, "- ") {
				r.Shown++
			}
		}
		r.Stale = block != renderCore(f.beliefs)
	}
	switch {
	case !found && r.Beliefs > 0:
		r.Problem = "engram's core-memory block is missing (taken out by hand?): the next cycle writes it again"
	case found && r.Beliefs == 0:
		r.Problem = "holds a core-memory block no belief belongs in any more: the next cycle takes it out"
	}
	return r
}

// Describe says in one line how a core-memory file stands.
func (r CoreReport) Describe() string {
	var b strings.Builder
	switch {
	case r.Block:
		b.WriteString("engram's block, markers intact, " + plural(r.Shown, "belief"))
		if r.Stale && r.Problem == "" {
			b.WriteString(" (not what the next cycle writes: edited by hand, or the beliefs changed since; it is rewritten)")
		}
	case r.Exists && r.Problem == "":
		b.WriteString("no block of engram's")
	case !r.Exists && r.Problem == "":
		b.WriteString("not written yet")
	}
	if r.Problem != "" {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Problem)
	}
	return b.String()
}
