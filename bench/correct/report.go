package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Targets of the issue; the bench reports against them and never fails on
// a miss.
var Targets = map[string]string{
	"uptake":           ">= 0.95",
	"non_resurrection": "1.00",
	"collateral":       "0 changes",
	"false_apply":      "<= 0.02",
}

// Summary is the figures of a set of scenarios (a wording family, or all).
type Summary struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	N    int    `json:"n"`
	// Corrections.
	OldBefore int `json:"old_before"` // the old value was presented as current before the change
	Uptake    int `json:"uptake"`
	Stale     int `json:"stale"`
	// Of the OldBefore corrections (the slot was remembered before the
	// correction), how many took it up and how many stayed stale.
	RememberedUptake int            `json:"remembered_uptake"`
	RememberedStale  int            `json:"remembered_stale"`
	UptakeAt         map[string]int `json:"uptake_at,omitempty"`
	StaleAt          map[string]int `json:"stale_at,omitempty"`
	// NonResBase is the corrections not stale right after the correction;
	// NonRes[phase] how many of them were still not stale in that phase.
	NonResBase int            `json:"non_resurrection_base"`
	NonRes     map[string]int `json:"non_resurrection,omitempty"`
	// Every scenario.
	OtherMeasured int `json:"other_measured"` // the other slot reached the model before the change
	Collateral    int `json:"collateral"`     // scenarios with a collateral change
	// Near-misses.
	FalseApply int `json:"false_apply"`
	NewTakenUp int `json:"new_taken_up,omitempty"`
	// Scope scenarios.
	ScopeN        int `json:"scope_n,omitempty"`
	ScopeMeasured int `json:"scope_measured,omitempty"`
	ScopeKept     int `json:"scope_kept,omitempty"`
	ScopeUptake   int `json:"scope_uptake,omitempty"` // of ScopeN, how many took the correction up in their own project
	Errors        int `json:"errors,omitempty"`       // scenarios a process failure cut short
}

func (s *Summary) add(r *Result) {
	s.N++
	v := r.Verdict
	if len(r.Errors) > 0 {
		s.Errors++
	}
	if v.OtherMeasured {
		s.OtherMeasured++
	}
	if len(v.Collateral) > 0 {
		s.Collateral++
	}
	switch r.Kind {
	case KindCorrection:
		if s.UptakeAt == nil {
			s.UptakeAt, s.StaleAt, s.NonRes = map[string]int{}, map[string]int{}, map[string]int{}
		}
		s.OldBefore += b2i(v.OldBefore)
		s.Uptake += b2i(v.Uptake)
		s.Stale += b2i(v.Stale)
		if v.OldBefore {
			s.RememberedUptake += b2i(v.Uptake)
			s.RememberedStale += b2i(v.Stale)
		}
		if !v.Stale {
			s.NonResBase++
		}
		for _, p := range LaterPhases {
			st, ran := v.StaleAt[p]
			if !ran {
				continue
			}
			s.UptakeAt[p] += b2i(v.UptakeAt[p])
			s.StaleAt[p] += b2i(st)
			if !v.Stale && !st {
				s.NonRes[p]++
			}
		}
		if r.Scope {
			s.ScopeN++
			s.ScopeMeasured += b2i(v.ScopeMeasured)
			s.ScopeKept += b2i(len(v.ScopeLeak) == 0)
			s.ScopeUptake += b2i(v.Uptake)
		}
	case KindNearMiss:
		s.OldBefore += b2i(v.OldBefore)
		s.FalseApply += b2i(len(v.FalseApply) > 0)
		s.NewTakenUp += b2i(v.NewTakenUp)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Report is the whole run.
type Report struct {
	Command     string     `json:"command"`
	Started     time.Time  `json:"started"`
	Seconds     float64    `json:"seconds"`
	Commit      string     `json:"commit,omitempty"`
	Embedder    string     `json:"embedder"`
	Scenarios   string     `json:"scenarios"` // the file
	Filter      string     `json:"filter,omitempty"`
	Targets     any        `json:"targets"`
	Corrections Summary    `json:"corrections"`
	NearMisses  Summary    `json:"near_misses"`
	Families    []*Summary `json:"families"`
	Results     []*Result  `json:"results"`
}

// Summarise computes the overall and per-family figures.
func Summarise(results []*Result) (corr, near Summary, fams []*Summary) {
	corr = Summary{Name: "all corrections", Kind: KindCorrection}
	near = Summary{Name: "all near-misses", Kind: KindNearMiss}
	byName := map[string]*Summary{}
	for _, kind := range []string{KindCorrection, KindNearMiss} {
		names := correctionFamilies
		if kind == KindNearMiss {
			names = nearMissFamilies
		}
		for _, f := range names {
			s := &Summary{Name: f, Kind: kind}
			byName[kind+"/"+f] = s
			fams = append(fams, s)
		}
	}
	for _, r := range results {
		if r.Kind == KindCorrection {
			corr.add(r)
		} else {
			near.add(r)
		}
		if s := byName[r.Kind+"/"+r.Family]; s != nil {
			s.add(r)
		}
	}
	fams = slices.DeleteFunc(fams, func(s *Summary) bool { return s.N == 0 })
	return corr, near, fams
}

func rate(n, d int) string {
	if d == 0 {
		return "  -  "
	}
	return fmt.Sprintf("%.2f", float64(n)/float64(d))
}

func frac(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", n, d)
}

// Print writes the human report: the overall figures against the targets,
// a table per wording family, and every failing scenario with what
// reached the model.
func (rep *Report) Print(w io.Writer) {
	c, n := rep.Corrections, rep.NearMisses
	fmt.Fprintf(w, "engram correction benchmark: %d scenarios (%d corrections, %d of them with a scope project; %d near-misses)\n",
		c.N+n.N, c.N, c.ScopeN, n.N)
	fmt.Fprintf(w, "commit %s, embedder %s, %.0f s\n\n", orDash(rep.Commit), rep.Embedder, rep.Seconds)
	fmt.Fprintf(w, "corrections\n")
	fmt.Fprintf(w, "  old value remembered before the correction   %s (%s)\n", rate(c.OldBefore, c.N), frac(c.OldBefore, c.N))
	fmt.Fprintf(w, "  uptake (new value reaches the model)        %s (%s)   target %s\n", rate(c.Uptake, c.N), frac(c.Uptake, c.N), Targets["uptake"])
	fmt.Fprintf(w, "  stale (old value presented as current)      %s (%s)\n", rate(c.Stale, c.N), frac(c.Stale, c.N))
	fmt.Fprintf(w, "    of the %d remembered before: uptake %s (%s), stale %s (%s)\n", c.OldBefore,
		rate(c.RememberedUptake, c.OldBefore), frac(c.RememberedUptake, c.OldBefore), rate(c.RememberedStale, c.OldBefore),
		frac(c.RememberedStale, c.OldBefore))
	fmt.Fprintf(w, "  non-resurrection, of the %d not stale right after the correction (target %s):\n", c.NonResBase, Targets["non_resurrection"])
	for _, p := range LaterPhases {
		fmt.Fprintf(w, "    after %-15s %s (%s)   of all corrections: stale %s, uptake %s\n", p, rate(c.NonRes[p], c.NonResBase),
			frac(c.NonRes[p], c.NonResBase), frac(c.StaleAt[p], c.N), frac(c.UptakeAt[p], c.N))
	}
	fmt.Fprintf(w, "  scope precision (the other project keeps its value)  %s (%s; the value was there before in %d, the correction taken up in %d)\n",
		rate(c.ScopeKept, c.ScopeN), frac(c.ScopeKept, c.ScopeN), c.ScopeMeasured, c.ScopeUptake)
	fmt.Fprintf(w, "near-misses\n")
	fmt.Fprintf(w, "  old value remembered before                 %s (%s)\n", rate(n.OldBefore, n.N), frac(n.OldBefore, n.N))
	fmt.Fprintf(w, "  false apply (retired, lost or avoided)      %s (%s)   target %s\n", rate(n.FalseApply, n.N), frac(n.FalseApply, n.N), Targets["false_apply"])
	fmt.Fprintf(w, "  the value only mentioned presented as current  %s\n", frac(n.NewTakenUp, n.N))
	fmt.Fprintf(w, "every scenario\n")
	fmt.Fprintf(w, "  collateral changes (scenarios)              %d of %d (the other slot reached the model before in %d)   target %s\n",
		c.Collateral+n.Collateral, c.N+n.N, c.OtherMeasured+n.OtherMeasured, Targets["collateral"])
	if c.Errors+n.Errors > 0 {
		fmt.Fprintf(w, "  cut short by a process failure              %d\n", c.Errors+n.Errors)
	}

	fmt.Fprintf(w, "\ncorrections by wording family (non-resurrection after: cons = run --consolidate, rebf = run --backfill,\n"+
		"fresh = backfill into a new home, imp = export and import; coll = scenarios with a collateral change)\n")
	fmt.Fprintf(w, "  %-20s %3s %6s %6s %6s %6s %6s %6s %6s %4s\n", "family", "n", "before", "uptake", "stale", "cons", "rebf", "fresh", "imp", "coll")
	row := func(s *Summary) {
		fmt.Fprintf(w, "  %-20s %3d %6s %6s %6s %6s %6s %6s %6s %4d\n", s.Name, s.N, rate(s.OldBefore, s.N), rate(s.Uptake, s.N),
			rate(s.Stale, s.N), rate(s.NonRes[PhaseConsolidate], s.NonResBase), rate(s.NonRes[PhaseRebackfill], s.NonResBase),
			rate(s.NonRes[PhaseFreshBackfill], s.NonResBase), rate(s.NonRes[PhaseImport], s.NonResBase), s.Collateral)
	}
	for _, s := range rep.Families {
		if s.Kind == KindCorrection {
			row(s)
		}
	}
	all := c
	all.Name = "all"
	row(&all)
	fmt.Fprintf(w, "\nnear-misses by kind\n")
	fmt.Fprintf(w, "  %-20s %3s %6s %11s %9s %4s\n", "kind", "n", "before", "false apply", "mentioned", "coll")
	nrow := func(s *Summary) {
		fmt.Fprintf(w, "  %-20s %3d %6s %11s %9s %4d\n", s.Name, s.N, rate(s.OldBefore, s.N), rate(s.FalseApply, s.N),
			frac(s.NewTakenUp, s.N), s.Collateral)
	}
	for _, s := range rep.Families {
		if s.Kind == KindNearMiss {
			nrow(s)
		}
	}
	alln := n
	alln.Name = "all"
	nrow(&alln)

	var failing []*Result
	for _, r := range rep.Results {
		if len(r.Verdict.Failures) > 0 || len(r.Errors) > 0 {
			failing = append(failing, r)
		}
	}
	fmt.Fprintf(w, "\nfailures: %d scenarios\n", len(failing))
	for _, r := range failing {
		r.printFailure(w)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printFailure shows why a scenario failed: its misses, and for the phase
// of each, what was injected and what the MEMORY.md files and the beliefs
// said about the values.
func (r *Result) printFailure(w io.Writer) {
	fmt.Fprintf(w, "\n--- %s (%s, %s; slot %s; old %q, new %q)\n", r.ID, r.Kind, r.Family, r.Slot, r.Old, r.New)
	for _, e := range r.Errors {
		fmt.Fprintf(w, "  error: %s\n", clip(e, 600))
	}
	for _, f := range r.Verdict.Failures {
		fmt.Fprintf(w, "  %s\n", f)
	}
	fmt.Fprintf(w, "  question: %q\n", r.Question)
	shown := map[string]bool{}
	show := func(phase string) {
		o := r.Phase(phase)
		if o == nil || shown[phase] {
			return
		}
		shown[phase] = true
		fmt.Fprintf(w, "  [%s] injected: %s\n", phase, orNothing(clip(oneLine(o.Injected), 1500)))
		values := slices.Concat(r.Old, r.New)
		for _, u := range o.Memory {
			if Names(u.Text, values) {
				fmt.Fprintf(w, "  [%s] MEMORY.md (%s) %s: %s\n", phase, u.File, u.Kind, clip(u.Text, 300))
			}
		}
		for _, u := range o.Former {
			if Names(u.Text, values) {
				fmt.Fprintf(w, "  [%s] MEMORY.md (%s) former: %s\n", phase, u.File, clip(u.Text, 300))
			}
		}
		for _, b := range o.Beliefs {
			if Names(b.Statement, values) {
				fmt.Fprintf(w, "  [%s] belief %s %.2f ev %d: %s\n", phase, b.Status, b.Confidence, b.Evidence, clip(b.Statement, 200))
			}
		}
		if len(o.Superseded) > 0 {
			fmt.Fprintf(w, "  [%s] superseded episodes: %d\n", phase, len(o.Superseded))
		}
	}
	phaseOf := func(f string) string {
		for _, p := range append([]string{PhaseAfter}, LaterPhases...) {
			if strings.Contains(f, p+":") || strings.HasSuffix(f, "after "+p) {
				return p
			}
		}
		return PhaseAfter
	}
	show(PhaseAfter)
	for _, f := range r.Verdict.Failures {
		show(phaseOf(f))
	}
	if strings.Contains(strings.Join(r.Verdict.Failures, "\n"), "collateral") {
		if o := r.Phase(PhaseAfter); o != nil {
			fmt.Fprintf(w, "  [after] other question injected: %s\n", orNothing(clip(oneLine(o.OtherInjected), 800)))
		}
	}
	if r.Scope {
		if o := r.Phase(PhaseAfter); o != nil {
			fmt.Fprintf(w, "  [after] scope project injected: %s\n", orNothing(clip(oneLine(o.ScopeInjected), 800)))
		}
	}
}

func orNothing(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
