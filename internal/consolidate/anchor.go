package consolidate

import (
	"context"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
)

// The old value of a correction, from what the project's memory holds.
//
// A correction's reading names what it installs more surely than what it
// retires: "we finally got off Mongo! the inventory tables are in Postgres
// now" reads as installing Postgres and retiring "inventory table" (the
// slot, not its value), and "we've migrated away from Jenkins. pipelines
// are GitHub Actions now" as retiring "pipeline". What the user moved away
// from is then the named thing of their message that the project's earlier
// memories name and the correction does not install: Mongo, Jenkins. The
// store is asked, not a list of phrasings, so the same holds for any
// wording the reading catches as a correction at all.
//
// It applies only where the reading gives the old side as no named thing
// of the exchange (or gives none): an old side the reading found among the
// exchange's named things ("we dropped the Papertrail add-on on Heroku":
// "papertrail add", which names Papertrail) is kept, so that a correction of one thing does not retire
// another the message names in passing. And it applies only when one named
// thing qualifies: with two, which one was left is not known.

// anchorLookups bounds the store lookups of one episode's anchoring.
const anchorLookups = 12

// oldValuesOf is oldValues(e), completed from the project's earlier
// memories when the reading names no old value among e's named things
// (see above).
func (s *cycle) oldValuesOf(ctx context.Context, e *episode.Episode) []string {
	if o, ok := s.olds[e.ID]; ok {
		return o
	}
	o := s.anchorOld(ctx, e)
	if s.olds == nil {
		s.olds = map[string][]string{}
	}
	s.olds[e.ID] = o
	return o
}

// anchorOld is oldValuesOf without its cache.
func (s *cycle) anchorOld(ctx context.Context, e *episode.Episode) []string {
	olds := oldValues(e)
	if e.ProjectPath == "" || !correcting(e) {
		return olds
	}
	if slices.ContainsFunc(olds, func(o string) bool { return namedThing(e, o) }) {
		// The reading's old side holds a named thing. Where its other
		// words keep it from matching what the memory says ("paying for
		// launchdarkly"), the named thing alone is what was left, when it
		// is the one named thing there ("papertrail add on on heroku"
		// names two: which one was left is not known).
		for _, o := range slices.Clone(olds) {
			var in []string
			for _, ent := range e.Entities {
				name := strings.ToLower(strings.TrimSpace(ent))
				if name != "" && lexicon.NoContent(name) == "" && mentions(o, name) && !slices.Contains(in, name) {
					in = append(in, name)
				}
			}
			if len(in) != 1 || sameName(in[0], o) || slices.ContainsFunc(olds, func(x string) bool { return sameName(x, in[0]) }) {
				continue
			}
			if !s.namedBefore(ctx, e, o) && s.namedBefore(ctx, e, in[0]) {
				olds = append(olds, in[0])
			}
		}
		return olds
	}
	text := userText(e)
	installs := installedTerms(e, olds)
	var found string
	lookups := 0
	for _, ent := range e.Entities {
		name := strings.ToLower(strings.TrimSpace(ent))
		if name == "" || lexicon.NoContent(name) != "" || strings.Contains(name, "/") || !mentions(text, ent) ||
			slices.ContainsFunc(installs, func(t string) bool { return sameName(t, name) || mentions(t, name) }) {
			continue
		}
		if lookups >= anchorLookups {
			break
		}
		lookups++
		if !s.namedBefore(ctx, e, name) {
			continue
		}
		if found != "" && !sameName(found, name) {
			return olds // two candidates: which one was left is not known
		}
		found = name
	}
	if found == "" || slices.ContainsFunc(olds, func(o string) bool { return sameName(o, found) }) {
		return olds
	}
	return append(olds, found)
}

// correcting reports whether e states a correction or a switch.
func correcting(e *episode.Episode) bool {
	return slices.ContainsFunc(e.Signals, func(sg episode.Signal) bool {
		return sg.Stated && (sg.Kind == episode.SignalSwitch || sg.Kind == episode.SignalCorrection)
	})
}

// namedThing reports whether value holds one of e's named things (its
// entities, in any of a name's spellings), as itself or as a word of it:
// "papertrail add" names Papertrail.
func namedThing(e *episode.Episode, value string) bool {
	return slices.ContainsFunc(e.Entities, func(ent string) bool {
		ent = strings.ToLower(ent)
		return sameName(ent, value) || mentions(value, ent)
	})
}

// sameName reports whether a and b (lower case) are one name: equal, or
// one of the other's spellings ("mongo", "mongodb").
func sameName(a, b string) bool {
	return a == b || slices.Contains(nameForms(a), b) || slices.Contains(nameForms(b), a)
}

// installedTerms are the normalised names of what e's stated signals say
// holds now: what a correction or a switch installs, what a preference or
// a fact states (its subject and value). A named thing among them is what
// the correction installs, not what it retires.
func installedTerms(e *episode.Episode, olds []string) []string {
	var out []string
	add := func(t string) {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !slices.Contains(olds, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, sg := range e.Signals {
		switch {
		case !sg.Stated:
		case sg.Kind == episode.SignalSwitch:
			add(sg.Object)
		case sg.Kind == episode.SignalCorrection:
			if sg.Polarity >= 0 {
				add(sg.Subject)
			}
		case sg.Polarity > 0:
			add(sg.Subject)
			add(sg.Object)
		}
	}
	return out
}

// userText is the user's message of e: the first part of its context
// ("User: …"), up to what the assistant or a tool says; the signals'
// sentences when the context is not of that form.
func userText(e *episode.Episode) string {
	if rest, ok := strings.CutPrefix(e.Context, "User: "); ok {
		end := len(rest)
		for _, m := range []string{"\n\nAssistant", "\n\nTool result"} {
			if i := strings.Index(rest, m); i >= 0 && i < end {
				end = i
			}
		}
		return rest[:end]
	}
	var b strings.Builder
	for _, sg := range e.Signals {
		b.WriteString(sg.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// namedBefore reports whether an episode of e's project said before it
// names name as a whole word, whatever that episode's lifecycle (one a
// correction superseded still says what was there).
func (s *cycle) namedBefore(ctx context.Context, e *episode.Episode, name string) bool {
	for _, n := range nameForms(name) {
		eps, err := s.c.DB.EpisodesNaming(ctx, e.ProjectPath, n, when(e), 20)
		if err != nil {
			s.log.Warn("earlier mentions not looked up", "episode", e.ID, "err", err)
			return false
		}
		for _, o := range eps {
			if o.ID != e.ID && mentions(o.Summary+"\n"+o.Context, n) {
				return true
			}
		}
	}
	return false
}
