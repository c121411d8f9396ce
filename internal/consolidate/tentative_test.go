package consolidate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/reading"
	"github.com/engram-memory/engram/internal/store"
)

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func anyContainsFold(ss []string, sub string) bool {
	return slices.ContainsFunc(ss, func(s string) bool { return containsFold(s, sub) })
}

// activeStatements returns the statements of the active beliefs.
func (w *statedWorld) activeStatements() []string {
	w.t.Helper()
	var out []string
	all, err := w.db.ListBeliefs(w.ctx, store.BeliefFilter{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, b := range all {
		if b.Status == belief.StatusActive {
			out = append(out, b.Statement)
		}
	}
	return out
}

// A correction the reading of its sentence alone is unsure of stands when
// the project's memory holds what it retires: the name it moves away from,
// or the thing of a versioned value at another version.
func TestTentativeCorrectionStands(t *testing.T) {
	for _, tc := range []struct {
		name           string
		before, change string
		old, new       string
	}{
		{"named", "we use eslint for linting in this repo. styling is Tailwind",
			"ignore what I said about eslint for this repo, biome does the linting here now",
			"we use eslint", "biome"},
		{"versioned", "we build with Go 1.21, so no range-over-func. lint is golangci-lint",
			"bumped the toolchain to Go 1.23, go.mod says so now",
			"we build with Go 1.21", "go 1.23"},
		{"bare version", "the cluster is on Kubernetes 1.27, charts live in charts/",
			"the cluster got upgraded to 1.30 on Tuesday",
			"kubernetes 1.27", "1.30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newStatedWorld(t)
			w.x = unsure()
			w.day(0, tc.before)
			w.day(1, tc.change)
			got := w.lifecycles()
			if got[tc.before] == "" {
				w.dump()
				t.Errorf("the exchange that held the old value is %q after the correction, want superseded", got[tc.before])
			}
			if got[tc.change] != "" {
				t.Errorf("the correction itself is %q", got[tc.change])
			}
			active := w.activeStatements()
			for _, s := range active {
				if containsFold(s, tc.old) {
					w.dump()
					t.Errorf("a belief still holds the old value as current: %q", s)
				}
			}
			if !anyContainsFold(active, tc.new) {
				w.dump()
				t.Errorf("no active belief holds the new value %q: %q", tc.new, active)
			}
		})
	}
}

// Without what it would retire in the project's memory, a tentative
// correction counts for nothing: no belief, nothing superseded, and the
// exchange weighed as if it said nothing lasting.
func TestTentativeCorrectionNeedsHeldValue(t *testing.T) {
	w := newStatedWorld(t)
	w.x = unsure()
	w.day(0, "the queue is redis, jobs are in worker/")
	before := w.activeStatements()
	w.day(1, "ignore what I said about eslint for this repo, biome does the linting here now",
		"the cluster got upgraded to 1.30 on Tuesday")
	after := w.activeStatements()
	if len(after) != len(before) {
		w.dump()
		t.Errorf("active beliefs %q before, %q after corrections with nothing to retire", before, after)
	}
	for u, lc := range w.lifecycles() {
		if lc != "" {
			t.Errorf("%q is %s", u, lc)
		}
	}
}

// unsure is the local extractor with the lexical reading made surer
// before it adds a correction (0.95): what the committed model reads
// between TentativeCorr and that is tentative. The tests fix the band so
// that they check what a tentative correction does, whatever the fitted
// threshold of the day.
func unsure() extract.Extractor {
	m := *reading.Lexical()
	m.AddKind[reading.Corr] = 0.95
	return extract.NewLocal().WithReading(&m, nil)
}

// A change that names a quantity alone ("actually it's 4 spaces here")
// turns away from the project's earlier value of the same count ("2
// spaces"); with two such values, which one is meant is not known and
// both stay.
func TestBareQuantity(t *testing.T) {
	const before, change = "our indent width is 2 spaces", "actually it's 4 spaces here, PSR-12."
	w := newStatedWorld(t)
	w.day(0, before)
	w.day(1, change)
	if got := w.lifecycles(); got[before] == "" {
		w.dump()
		t.Errorf("the exchange that held the old value is %q after the correction, want superseded", got[before])
	}
	active := w.activeStatements()
	for _, s := range active {
		if containsFold(s, "2 spaces") {
			w.dump()
			t.Errorf("a belief still holds the old value as current: %q", s)
		}
	}
	if !anyContainsFold(active, "4 spaces") {
		t.Errorf("no active belief holds the new value: %q", active)
	}

	w = newStatedWorld(t)
	w.day(0, before, "the yaml indent is 8 spaces")
	w.day(1, change)
	for _, s := range []string{"2 spaces", "8 spaces"} {
		if !anyContainsFold(w.activeStatements(), s) {
			w.dump()
			t.Errorf("with two earlier values, %q was retired", s)
		}
	}
}
