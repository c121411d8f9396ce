package consolidate

import (
	"context"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
)

// Tentative corrections.
//
// The reading of a sentence alone is often unsure of a correction said in
// passing or in few words ("we swapped Redux out for Zustand in the app",
// "the cluster got upgraded to 1.30 on Tuesday"): the extractor marks such
// a correction tentative (episode.Signal.Tentative) rather than drop it.
// What makes it one is what the project's memory holds: a correction
// retires something that was there. A tentative correction that installs
// what an earlier exchange of the project names becomes a switch away from
// it (of the two values a change names, the one the memory holds is the
// old one). The rest stands when one of them installs something new and
// what they retire is a value the project's earlier statements installed
// or named (heldValues, not pervasive), or the thing of a versioned value
// it installs at another version ("go 1.23" after "go 1.21"; a bare
// version, bareVersion). Otherwise it counts for nothing. An exchange
// whose change the reading is sure of keeps only that: the unsure readings
// of its other sentences add nothing to it. The decision is made from the
// store each time the episode is read for consolidation (nothing is
// rewritten), so a re-consolidation or a backfill makes the same one.

// resolveTentative decides e's tentative signals (see above): they become
// ordinary statements, or they are dropped from e (in memory only).
func (s *cycle) resolveTentative(ctx context.Context, e *episode.Episode) {
	if !slices.ContainsFunc(e.Signals, func(sg episode.Signal) bool { return sg.Tentative }) {
		return
	}
	sure := episode.Sure(e.Signals)
	if e.ProjectPath == "" || correcting(&episode.Episode{Signals: sure}) {
		e.Signals = sure
		return
	}
	// A tentative correction that installs what the project already names
	// installs nothing new: of the two values a change names, the one the
	// memory holds is the one it moves away from ("ignore what I said
	// about eslint for this repo, biome does the linting here now": its
	// first clause read alone installs eslint).
	c := *e
	c.Signals = nil
	installs := false
	for _, sg := range e.Signals {
		if sg.Tentative && sg.Kind == episode.SignalCorrection {
			switch {
			case sg.Polarity <= 0 || sg.Subject == "":
				continue
			case s.namedBefore(ctx, e, sg.Subject):
				sg.Kind, sg.Object = episode.SignalSwitch, ""
			default:
				installs = true
			}
		}
		sg.Tentative = false
		c.Signals = append(c.Signals, sg)
	}
	if installs && s.retiresHeld(ctx, &c) {
		e.Signals = c.Signals
		return
	}
	e.Signals = sure
}

// retiresHeld reports whether the change e states (its tentative signals
// made ordinary, those that install nothing new left out) retires a value
// the project's earlier statements installed or named (see heldValues): an old
// value it names, or the thing of a versioned value it installs at
// another version. Any word an earlier exchange used is not enough: a
// chat turn "it's been ages since we last chatted" read as a correction
// retiring "chatted" would take every exchange that says so out of what
// is current. Nor is a value too many of the project's exchanges name
// (pervasive): it is what the project is about.
func (s *cycle) retiresHeld(ctx context.Context, e *episode.Episode) bool {
	var installs []string
	for _, sg := range e.Signals {
		if sg.Kind == episode.SignalCorrection && sg.Polarity > 0 && sg.Subject != "" && !slices.Contains(installs, sg.Subject) {
			installs = append(installs, sg.Subject)
		}
	}
	held := s.heldValues(ctx, e)
	if len(held) == 0 {
		return false
	}
	for _, o := range s.anchorOld(ctx, e) {
		if lexicon.NoContent(o) != "" || slices.ContainsFunc(installs, func(in string) bool { return sameName(in, o) || mentions(in, o) }) {
			continue
		}
		if slices.ContainsFunc(held, func(v string) bool { return sameName(v, o) || mentions(v, o) }) && !s.pervasive(ctx, e, o) {
			return true
		}
	}
	for _, in := range installs {
		if _, _, ok := s.bareVersion(ctx, e, in); ok {
			return true
		}
		name, version, ok := versioned(in)
		if !ok || projectName(e, name) {
			continue
		}
		if slices.ContainsFunc(held, func(v string) bool {
			n, ver, ok := versioned(v)
			return ok && sameName(n, name) && ver != version
		}) {
			return true
		}
	}
	return false
}

// heldValues are the values the earlier statements of e's project
// installed, whatever became of them: a preference's subject, a fact's
// subject and value, and the named things of the exchanges that state
// them (lower case): "global state is Redux, and the app is built with
// Expo" read as the build tool's fact still names Redux.
func (s *cycle) heldValues(ctx context.Context, e *episode.Episode) []string {
	eps, ok := s.statedBeforeOf(ctx, e)
	if !ok {
		return nil
	}
	var out []string
	add := func(v string) {
		if v = strings.ToLower(strings.TrimSpace(v)); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, o := range eps {
		if o.ID == e.ID {
			continue
		}
		states := false
		for _, sg := range o.Signals {
			if !sg.Stated || sg.Tentative || sg.Polarity <= 0 || sg.Kind == episode.SignalCorrection || sg.Kind == episode.SignalSwitch {
				continue
			}
			states = true
			add(sg.Subject)
			if sg.Kind == episode.SignalFact {
				add(sg.Object)
			}
		}
		if states {
			for _, ent := range o.Entities {
				if lexicon.NoContent(strings.ToLower(ent)) == "" {
					add(ent)
				}
			}
		}
	}
	return out
}

// A change may name the new version alone: "the cluster got upgraded to
// 1.30 on Tuesday" after "the cluster is on Kubernetes 1.27". Its install
// is a bare version ("1.30"), no thing; the thing is the one the project's
// earlier statements gave a version of the same form ("kubernetes 1.27":
// as many dots) for a subject the change names ("cluster"). The change
// then installs the thing at the new version and turns away from it at
// the old one ("kubernetes 1.30" for "kubernetes 1.27"). With two such
// subjects or versions, which one is meant is not known.

// bareVersion returns the versioned values that a change of e installing
// the bare version v installs and retires (see above).
func (s *cycle) bareVersion(ctx context.Context, e *episode.Episode, v string) (installs, retires string, ok bool) {
	if e.ProjectPath == "" || !versionWord.MatchString(v) || !strings.ContainsRune(v, '.') {
		return "", "", false
	}
	facts, ok := s.factsBefore(ctx, e)
	if !ok {
		return "", "", false
	}
	user := strings.ToLower(userText(e))
	subject := ""
	for _, f := range facts {
		subj, val := f[0], f[1]
		name, ver, vok := versioned(val)
		if !vok || ver == v || strings.Count(ver, ".") != strings.Count(v, ".") || subj == "" ||
			lexicon.NoContent(subj) != "" || !mentions(user, subj) {
			continue
		}
		if subject != "" && (subject != subj || retires != val) {
			return "", "", false // two slots, or two versions: which one is meant is not known
		}
		subject, installs, retires = subj, name+" "+v, val
	}
	return installs, retires, subject != ""
}

// factsBefore is the subject and value (lower case) of each sure fact the
// project's earlier statements of e state (statedBeforeOf).
func (s *cycle) factsBefore(ctx context.Context, e *episode.Episode) (facts [][2]string, ok bool) {
	eps, ok := s.statedBeforeOf(ctx, e)
	if !ok {
		return nil, false
	}
	for _, o := range eps {
		if o.ID == e.ID {
			continue
		}
		for _, sg := range o.Signals {
			if sg.Stated && !sg.Tentative && sg.Kind == episode.SignalFact && sg.Polarity > 0 {
				facts = append(facts, [2]string{strings.ToLower(strings.TrimSpace(sg.Subject)), strings.ToLower(strings.TrimSpace(sg.Object))})
			}
		}
	}
	return facts, true
}

// A change may also name a quantity alone: "actually it's 4 spaces here"
// after "indentation is 2 spaces in this codebase". Its install is a
// number and what it counts ("4 space"); the slot is the one whose value
// the project's earlier statements gave as another number of the same
// thing ("2 spaces"). The change then turns away from that value as well.
// With two such values, which one is meant is not known.

// bareQuantity returns the value a change of e installing the quantity q
// ("4 space") retires (see above), and q itself as what it installs.
func (s *cycle) bareQuantity(ctx context.Context, e *episode.Episode, q string) (installs, retires string, ok bool) {
	n, unit, qok := quantity(strings.Fields(strings.ToLower(q)))
	if e.ProjectPath == "" || !qok {
		return "", "", false
	}
	facts, ok := s.factsBefore(ctx, e)
	if !ok {
		return "", "", false
	}
	for _, f := range facts {
		val := f[1]
		ws := strings.Fields(val)
		for i := 0; i+1 < len(ws); i++ {
			m, u, ok := quantity(ws[i : i+2])
			if !ok || u != unit || m == n {
				continue
			}
			if retires != "" && retires != val {
				return "", "", false // two values: which one is meant is not known
			}
			retires = val
		}
	}
	return q, retires, retires != ""
}

// quantity reads two words as a number and what it counts ("4 spaces",
// "120 chars"), the counted word without a plural s.
func quantity(ws []string) (n, unit string, ok bool) {
	if len(ws) != 2 || strings.Trim(ws[0], "0123456789") != "" || ws[0] == "" ||
		strings.Trim(ws[1], "abcdefghijklmnopqrstuvwxyz") != "" || len(ws[1]) < 3 {
		return "", "", false
	}
	return ws[0], strings.TrimSuffix(ws[1], "s"), true
}

// bareVersions makes each correction of e that installs a bare version
// install the versioned value bareVersion gives, and one that installs a
// bare quantity turn away from the value bareQuantity gives, in memory.
func (s *cycle) bareVersions(ctx context.Context, e *episode.Episode) {
	var out []episode.Signal
	for i, sg := range e.Signals {
		if sg.Tentative || sg.Kind != episode.SignalCorrection || sg.Polarity <= 0 {
			continue
		}
		in, old, ok := s.bareVersion(ctx, e, sg.Subject)
		if !ok {
			in, old, ok = s.bareQuantity(ctx, e, sg.Subject)
		}
		if ok {
			if out == nil {
				out = slices.Clone(e.Signals)
			}
			out[i].Subject = in
			sw := sg
			sw.Kind, sw.Subject, sw.Object = episode.SignalSwitch, old, in
			out = append(out, sw)
		}
	}
	if out != nil {
		e.Signals = out
	}
}

// resolve reads e as consolidation takes it: its tentative signals
// decided (resolveTentative), its bare versions made versioned values of
// their thing (bareVersions).
func (s *cycle) resolve(ctx context.Context, e *episode.Episode) {
	s.resolveTentative(ctx, e)
	s.bareVersions(ctx, e)
}

// statedBeforeOf is the project's earlier statements of e (StatedBefore),
// read once per cycle: deciding one episode asks for them several times
// (its held values, each bare version it installs). ok is false when the
// store cannot say.
func (s *cycle) statedBeforeOf(ctx context.Context, e *episode.Episode) (eps []episode.Episode, ok bool) {
	if eps, ok := s.earlier[e.ID]; ok {
		return eps, true
	}
	eps, err := s.c.DB.StatedBefore(ctx, e.ProjectPath, when(e), statedBefore)
	if err != nil {
		s.log.Warn("earlier statements not looked up", "episode", e.ID, "err", err)
		return nil, false
	}
	if s.earlier == nil {
		s.earlier = map[string][]episode.Episode{}
	}
	s.earlier[e.ID] = eps
	return eps, true
}
