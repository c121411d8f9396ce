package main

import (
	"fmt"
	"slices"
	"strings"
)

// Reading is what the judge reads in one phase's observation.
type Reading struct {
	// NewReaches: the new value reaches the model for the question about
	// the slot (injected, or in a current MEMORY.md unit).
	NewReaches bool  `json:"new_reaches"`
	NewVia     *Unit `json:"new_via,omitempty"`
	// NewCurrent: the new value is presented as current by a unit that does
	// not name the old value too (what a near-miss must not do with the
	// value it only mentions).
	NewCurrent bool `json:"new_current,omitempty"`
	// OldCurrent: the old value is presented as current (see Presents).
	OldCurrent bool  `json:"old_current"`
	OldVia     *Unit `json:"old_via,omitempty"`
	// OldAvoided: a belief that turns away from the old value ("Project
	// api avoids jest.") reaches the model: what a near-miss must not
	// bring about.
	OldAvoided    bool  `json:"old_avoided,omitempty"`
	OldAvoidedVia *Unit `json:"old_avoided_via,omitempty"`
	// OtherReaches: the other slot's value reaches the model for its own
	// question.
	OtherReaches bool `json:"other_reaches"`
	// For a scenario with a scope project, the same read for its question
	// in that project.
	ScopeOldCurrent bool `json:"scope_old_current,omitempty"`
	ScopeNewReaches bool `json:"scope_new_reaches,omitempty"`
}

// Read judges one observation.
func Read(s *Scenario, o *Observation) Reading {
	var r Reading
	units := append(InjectedUnits(o.Injected), o.Memory...)
	if len(s.New) > 0 {
		if u, ok := AnyPresents(units, s.New, nil); ok {
			r.NewReaches, r.NewVia = true, &u
		}
	}
	if len(s.New) > 0 {
		_, r.NewCurrent = AnyPresents(units, s.New, s.Old)
	}
	if u, ok := AnyPresents(units, s.Old, s.New); ok {
		r.OldCurrent, r.OldVia = true, &u
	}
	for _, u := range units {
		if u.Kind == UnitBelief && avoided(u.Text, s.Old) {
			r.OldAvoided, r.OldAvoidedVia = true, &u
			break
		}
	}
	_, r.OtherReaches = AnyPresents(append(InjectedUnits(o.OtherInjected), o.Memory...), s.Other.Value, nil)
	if s.Scope != nil {
		su := append(InjectedUnits(o.ScopeInjected), o.ScopeMemory...)
		_, r.ScopeOldCurrent = AnyPresents(su, s.Old, s.New)
		if len(s.New) > 0 {
			_, r.ScopeNewReaches = AnyPresents(su, s.New, nil)
		}
	}
	return r
}

// Verdict is a scenario's outcome.
type Verdict struct {
	// OldBefore: the old value was presented as current before the change
	// session (the slot was remembered at all).
	OldBefore bool `json:"old_before"`
	// Uptake and Stale are read right after the change session's cycle.
	Uptake bool `json:"uptake"`
	Stale  bool `json:"stale"`
	// UptakeAt and StaleAt are the same reads in the later phases.
	UptakeAt map[string]bool `json:"uptake_at,omitempty"`
	StaleAt  map[string]bool `json:"stale_at,omitempty"`
	// Resurrected lists the later phases where the old value is presented
	// as current again, having not been right after the correction.
	Resurrected []string `json:"resurrected,omitempty"`
	// OtherMeasured: the other slot's value reached the model before the
	// change, so its loss can be seen. Collateral lists what the change did
	// to it (in any phase after it): its value no longer reaching the model,
	// a belief naming it retired. OtherSuperseded lists episodes naming it
	// superseded (reported, not counted: the episode may hold the old value
	// too).
	OtherMeasured   bool     `json:"other_measured"`
	Collateral      []string `json:"collateral,omitempty"`
	OtherSuperseded []string `json:"other_superseded,omitempty"`
	// FalseApply lists what a near-miss retired: a belief retired, an
	// episode superseded, the old value no longer presented as current, a
	// belief turning away from it ("avoids X") reaching the model.
	FalseApply []string `json:"false_apply,omitempty"`
	// NewTakenUp: a near-miss's mentioned value was presented as current
	// after it, by a unit not naming the old value (reported, not counted).
	NewTakenUp bool `json:"new_taken_up,omitempty"`
	// ScopeMeasured: the scope project's old value was presented as current
	// there before the change. ScopeLeak lists what the correction did to
	// that project.
	ScopeMeasured bool     `json:"scope_measured,omitempty"`
	ScopeLeak     []string `json:"scope_leak,omitempty"`
	// Failures is every miss in one line each, for the report.
	Failures []string `json:"failures,omitempty"`
}

// retired is whether a belief status takes it out of use.
func retired(status string) bool { return status != "" && status != "active" }

// retiredNaming lists the beliefs of o that name one of values and are not
// active, whose statement was not already retired in before (beliefs are
// compared by statement: a new home gives them new ids); any retired
// belief when values is nil. project, when set, keeps only that project's
// beliefs.
func retiredNaming(before, o *Observation, values []string, project string) []string {
	was := map[string]bool{}
	if before != nil {
		for _, b := range before.Beliefs {
			if retired(b.Status) {
				was[b.Statement] = true
			}
		}
	}
	var out []string
	for _, b := range o.Beliefs {
		if !retired(b.Status) || was[b.Statement] || values != nil && !Names(b.Statement, values) {
			continue
		}
		if project != "" && !strings.HasSuffix(b.Project, "/"+project) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: belief %q is %s", o.Phase, b.Statement, b.Status))
	}
	return out
}

// heldActive reports whether an active belief of o names one of values
// and none of old.
func heldActive(o *Observation, values, old []string) bool {
	for _, b := range o.Beliefs {
		if b.Status == "active" && Names(b.Statement, values) && !Names(b.Statement, old) {
			return true
		}
	}
	return false
}

// supersededNew lists the episodes of o superseded that were not in before
// (compared by summary), naming one of values (any episode when values is
// nil), of project when set.
func supersededNew(before, o *Observation, values []string, project string) []string {
	was := map[string]bool{}
	if before != nil {
		for _, e := range before.Superseded {
			was[e.Summary] = true
		}
	}
	var out []string
	for _, e := range o.Superseded {
		if was[e.Summary] {
			continue
		}
		if values != nil && !Names(e.Summary+"\n"+e.Context, values) {
			continue
		}
		if project != "" && !strings.HasSuffix(e.Project, "/"+project) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: episode %q superseded", o.Phase, clip(e.Summary, 160)))
	}
	return out
}

// Judge reads a scenario's phases into its verdict.
func Judge(s *Scenario, phases []*Observation) Verdict {
	v := Verdict{UptakeAt: map[string]bool{}, StaleAt: map[string]bool{}}
	get := func(name string) *Observation {
		for _, o := range phases {
			if o.Phase == name {
				return o
			}
		}
		return nil
	}
	before, after := get(PhaseBefore), get(PhaseAfter)
	if before == nil || after == nil {
		v.Failures = append(v.Failures, "did not run to the end of the change session")
		return v
	}
	v.OldBefore = before.OldCurrent
	v.OtherMeasured = before.OtherReaches
	var later []*Observation // after and every later phase
	for _, name := range append([]string{PhaseAfter}, LaterPhases...) {
		if o := get(name); o != nil {
			later = append(later, o)
		}
	}
	// Collateral: the other slot, in every phase after the change.
	for _, o := range later {
		if v.OtherMeasured && !o.OtherReaches {
			v.Collateral = append(v.Collateral, o.Phase+": the other slot's value no longer reaches the model")
		}
		if !heldActive(o, s.Other.Value, s.Old) {
			// A retired belief that named the other value is collateral
			// unless an active belief still holds that value without
			// the old one (what the retired one said besides the old
			// value, kept).
			v.Collateral = append(v.Collateral, retiredNaming(before, o, s.Other.Value, "")...)
		}
		v.OtherSuperseded = append(v.OtherSuperseded, supersededNew(before, o, s.Other.Value, "")...)
	}
	switch s.Kind {
	case KindCorrection:
		v.Uptake, v.Stale = after.NewReaches, after.OldCurrent
		if !v.Uptake {
			v.Failures = append(v.Failures, "uptake: the new value does not reach the model after the correction")
		}
		if v.Stale {
			v.Failures = append(v.Failures, "stale: the old value is presented as current after the correction")
		}
		for _, name := range LaterPhases {
			o := get(name)
			if o == nil {
				continue
			}
			v.UptakeAt[name], v.StaleAt[name] = o.NewReaches, o.OldCurrent
			if !v.Stale && o.OldCurrent {
				v.Resurrected = append(v.Resurrected, name)
				v.Failures = append(v.Failures, "resurrected: the old value is presented as current again after "+name)
			}
		}
		if sc := s.Scope; sc != nil {
			v.ScopeMeasured = before.ScopeOldCurrent
			for _, o := range later {
				if v.ScopeMeasured && !o.ScopeOldCurrent {
					v.ScopeLeak = append(v.ScopeLeak, o.Phase+": project "+sc.Project+"'s old value is no longer presented as current there")
				}
				if o.ScopeNewReaches && !before.ScopeNewReaches {
					v.ScopeLeak = append(v.ScopeLeak, o.Phase+": the new value reaches project "+sc.Project)
				}
				v.ScopeLeak = append(v.ScopeLeak, retiredNaming(before, o, s.Old, sc.Project)...)
				v.ScopeLeak = append(v.ScopeLeak, supersededNew(before, o, s.Old, sc.Project)...)
			}
			for _, l := range v.ScopeLeak {
				v.Failures = append(v.Failures, "scope: "+l)
			}
		}
	case KindNearMiss:
		for _, o := range later {
			if before.OldCurrent && !o.OldCurrent {
				v.FalseApply = append(v.FalseApply, o.Phase+": the old value is no longer presented as current")
			}
			if o.OldAvoided && !before.OldAvoided {
				v.FalseApply = append(v.FalseApply, fmt.Sprintf("%s: a belief turning away from the old value reaches the model: %q",
					o.Phase, o.OldAvoidedVia.Text))
			}
			v.FalseApply = append(v.FalseApply, retiredNaming(before, o, nil, "")...)
			v.FalseApply = append(v.FalseApply, supersededNew(before, o, nil, "")...)
			if o.NewCurrent && !before.NewCurrent && o.Phase == PhaseAfter {
				v.NewTakenUp = true
			}
		}
		for _, f := range v.FalseApply {
			v.Failures = append(v.Failures, "false apply: "+f)
		}
	}
	for _, c := range v.Collateral {
		v.Failures = append(v.Failures, "collateral: "+c)
	}
	v.Collateral, v.FalseApply, v.ScopeLeak = uniq(v.Collateral), uniq(v.FalseApply), uniq(v.ScopeLeak)
	v.Failures = uniq(v.Failures)
	return v
}

func uniq(s []string) []string {
	var out []string
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
