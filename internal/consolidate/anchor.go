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
// from is then the named thing of the change's sentences (the
// correction's, and the one before it) that the project's earlier memories
// name and the correction does not install: Mongo, Jenkins. The
// store is asked, not a list of phrasings, so the same holds for any
// wording the reading catches as a correction at all.
//
// It applies only where no old side the reading gives is what the
// project's memory names: an old side it names is what was left; one that
// holds a named thing among other words ("paying for launchdarkly") is
// narrowed to it; one that holds two ("we dropped the Papertrail add-on on
// Heroku": "papertrail add on on heroku") is kept as read, so that a change
// of one thing does not retire another the message names in passing. And
// it applies only when one named thing qualifies: with two, which one was
// left is not known.

// anchorLookups bounds the store lookups of one episode's anchoring.
const anchorLookups = 12

// oldValuesOf is oldValues(e), completed from the project's earlier
// memories (see above).
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
	// The project's own name is never what it moved away from ("we
	// upgraded risk-engine to Java 21" reads as retiring "risk engine"):
	// every exchange of the project may name it.
	olds = slices.DeleteFunc(olds, func(o string) bool { return projectName(e, o) })
	// An old side is also looked for as the user wrote it: the reading
	// normalises "axios" to "axio" and "styled-components" to "styled
	// component", which no earlier exchange says as a whole word.
	user := userText(e)
	for _, o := range slices.Clone(olds) {
		if w := strings.ToLower(asWritten(user, o)); w != "" && w != o && !slices.Contains(olds, w) && mentions(user, w) && !projectName(e, w) {
			olds = append(olds, w)
		}
	}
	// An old side the project's memory names is what was left. One that
	// holds one named thing among other words ("paying for launchdarkly")
	// is narrowed to it when only the thing is named before. One that holds
	// two ("papertrail add on on heroku") is left as read: which one was
	// left is not known. Otherwise (a slot noun, "inventory table"; a path
	// the memory never named, "db/schema.sql") the old value is looked
	// for below.
	found, ambiguous := false, false
	for _, o := range slices.Clone(olds) {
		if s.namedBefore(ctx, e, o) {
			found = true
			continue
		}
		in := namedIn(e, o)
		switch {
		case len(in) >= 2:
			ambiguous = true
		case len(in) == 1 && !sameName(in[0], o) && s.namedBefore(ctx, e, in[0]):
			found = true
			if !slices.ContainsFunc(olds, func(x string) bool { return sameName(x, in[0]) }) {
				olds = append(olds, in[0])
			}
		}
	}
	if found || ambiguous {
		return olds
	}
	text := changeText(e)
	installs := installedTerms(e, olds)
	var name string
	lookups := 0
	for _, ent := range e.Entities {
		n := strings.ToLower(strings.TrimSpace(ent))
		if n == "" || lexicon.NoContent(n) != "" || strings.Contains(n, "/") || !mentions(text, ent) || projectName(e, n) ||
			slices.ContainsFunc(installs, func(t string) bool { return sameName(t, n) || mentions(t, n) }) {
			continue
		}
		if lookups >= anchorLookups {
			break
		}
		lookups++
		if !s.namedBefore(ctx, e, n) {
			continue
		}
		if name != "" && !sameName(name, n) {
			return olds // two candidates: which one was left is not known
		}
		name = n
	}
	if name == "" {
		// No named thing the reading knew ("beanstalkd is gone. it's SQS
		// now": an unknown lower-case word is no entity): what the
		// project's earlier statements installed (a preference's subject,
		// a fact's value), which name what it used, is looked for in the
		// change's words the same way.
		var ok bool
		if name, ok = s.statedValueNamed(ctx, e, text, installs); !ok {
			return olds
		}
	}
	if name == "" || slices.ContainsFunc(olds, func(o string) bool { return sameName(o, name) }) || s.pervasive(ctx, e, name) {
		return olds
	}
	return append(olds, name)
}

// A value found this way is a guess from the store, not the user's words:
// one that many of the project's exchanges name is what the project is
// about (a person in every turn, its main tool), and retiring it would
// take a large part of the project's memory out of what is current. So a
// guess named by more than guessShare of the project's earlier exchanges,
// and by more than guessMin of them, is not taken. (LoCoMo: a chat turn
// read as a correction guessed its speaker, named in 132 of 340 turns.)
const (
	guessShare = 0.25
	guessMin   = 10
)

// pervasive reports whether name is too common in e's project to be
// guessed as its old value (see guessShare).
func (s *cycle) pervasive(ctx context.Context, e *episode.Episode, name string) bool {
	total, err := s.c.DB.ProjectEpisodes(ctx, e.ProjectPath, when(e))
	if err != nil || total <= guessMin {
		return err != nil
	}
	limit := max(guessMin, int(guessShare*float64(total)))
	eps, err := s.c.DB.EpisodesNaming(ctx, e.ProjectPath, name, when(e), limit+1)
	if err != nil {
		return true
	}
	n := 0
	for _, o := range eps {
		if mentions(o.Summary+"\n"+o.Context, name) {
			n++
		}
	}
	return n > limit
}

// statedBefore bounds the earlier statements statedValueNamed reads.
const statedBefore = 200

// statedValueNamed is the one value an earlier statement of e's project
// installed (a preference's subject, a fact's value; read from the
// store, whatever became of it, so that a re-consolidation finds what the
// first one did) that text names as a whole word and that is none of
// installs nor the project's name; ok is false when two such values are
// named (which one was left is not known) or the store cannot say.
func (s *cycle) statedValueNamed(ctx context.Context, e *episode.Episode, text string, installs []string) (name string, ok bool) {
	eps, err := s.c.DB.StatedBefore(ctx, e.ProjectPath, when(e), statedBefore)
	if err != nil {
		s.log.Warn("earlier statements not looked up", "episode", e.ID, "err", err)
		return "", false
	}
	for _, o := range eps {
		for _, sg := range o.Signals {
			if !sg.Stated || sg.Polarity <= 0 || sg.Kind == episode.SignalCorrection || sg.Kind == episode.SignalSwitch {
				continue
			}
			v := strings.ToLower(strings.TrimSpace(sg.Subject))
			if sg.Kind == episode.SignalFact {
				v = strings.ToLower(strings.TrimSpace(sg.Object))
			}
			if v == "" || lexicon.NoContent(v) != "" || projectName(e, v) || !mentions(text, v) ||
				slices.ContainsFunc(installs, func(t string) bool { return sameName(t, v) || mentions(t, v) || mentions(v, t) }) {
				continue
			}
			if name != "" && !sameName(name, v) {
				return "", false
			}
			name = v
		}
	}
	return name, true
}

// projectName reports whether name is e's project's name, hyphens,
// underscores and case aside ("risk engine" for risk-engine).
func projectName(e *episode.Episode, name string) bool {
	fold := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == '-' || r == '_' || r == ' ' }), " ")
	}
	return e.Project != "" && fold(name) == fold(e.Project)
}

// correcting reports whether e states a correction or a switch.
func correcting(e *episode.Episode) bool {
	return slices.ContainsFunc(e.Signals, func(sg episode.Signal) bool {
		return sg.Stated && (sg.Kind == episode.SignalSwitch || sg.Kind == episode.SignalCorrection)
	})
}

// namedIn returns e's named things (its entities, lower case) that value
// holds as words: "papertrail add on on heroku" holds papertrail and
// heroku, "db/schema.sql" itself.
func namedIn(e *episode.Episode, value string) []string {
	var out []string
	for _, ent := range e.Entities {
		n := strings.ToLower(strings.TrimSpace(ent))
		if n != "" && lexicon.NoContent(n) == "" && (sameName(n, value) || mentions(value, n)) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
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

// changeText is what of the user's message says the change: each
// sentence of a stated correction or switch, and the sentence before it
// ("we finally got off Mongo! the inventory tables are in Postgres now").
// A name elsewhere in the message (a person thanked, a file to edit) is
// no value the change moves away from.
func changeText(e *episode.Episode) string {
	user := userText(e)
	var b strings.Builder
	for _, sg := range e.Signals {
		if !sg.Stated || (sg.Kind != episode.SignalSwitch && sg.Kind != episode.SignalCorrection) || sg.Text == "" {
			continue
		}
		i := strings.Index(user, sg.Text)
		if i < 0 {
			b.WriteString(sg.Text + "\n")
			continue
		}
		start := sentenceStart(user, i)
		if start > 0 {
			start = sentenceStart(user, start-1)
		}
		b.WriteString(user[start:i+len(sg.Text)] + "\n")
	}
	return b.String()
}

// sentenceStart is where the sentence of text that holds byte i starts:
// after the last line break, or ". ", "! " or "? ", before i.
func sentenceStart(text string, i int) int {
	for j := i - 1; j > 0; j-- {
		if text[j] == '\n' || text[j] == ' ' && strings.ContainsRune(".!?", rune(text[j-1])) {
			return j + 1
		}
	}
	return 0
}

// userText is the user's message of e: the first part of its context
// (transcript.Render's "User: …"), up to what the assistant or a tool
// says; the signals'
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
// names name (in any of its spellings) as a whole word, whatever that
// episode's lifecycle (one a correction superseded still says what was
// there).
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
