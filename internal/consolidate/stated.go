package consolidate

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/store"
)

// Explicit statements. What the user says in so many words — "never add
// emoji to commit messages", "this service deploys to Fly.io", "actually we
// moved from Postgres to SQLite" — needs no three mentions: the extractor
// marks such signals Stated, and each one bears on beliefs at once, before
// any clustering, with the weight of belief.StatedWeight observations:
//
//   - a statement of what an active belief of its partition (same scope
//     and project) claims supports it;
//   - one that says the opposite of an active belief (its own partition's,
//     or a global one) contradicts it; when it corrects ("actually …",
//     "we switched from X to Y", "not X anymore") or states a fact's new
//     value, the old belief is retired at once (status revised, the new
//     belief its child): the newest word of the user wins;
//   - a statement no belief of its partition makes yet becomes one.
//
// A switch away from X also retires a fact whose value is X ("database is
// postgres"), and states the fact anew with the value switched to.
//
// Scope is the statement's own (Signal.Global), not its exchange's: "I
// prefer tabs" said in a project is global, "we use pnpm here" project.
//
// A retired claim does not come back from episodes that predate its
// retirement — older episodes that still mention it, re-consolidation,
// an import — only from a statement made after it.

// statedClaim is one claim an episode states, with its scope.
type statedClaim struct {
	c      claim
	global bool
	// display is the subject in the user's own words, plurals, case and
	// hyphens ("movies with excessive CGI"): the statement reads as they
	// said it, while the claim stays normalised for matching.
	display string
	// said is the clause of the user's sentence the belief reads as
	// (Phrase), or "" when it is rendered.
	said string
	// away: the claim is a switch's turning away from the old value, said
	// as what happened ("we moved off Fly.io"), not as a rule (ruleWords).
	away bool
}

// statedOf returns the claims e states, the switches it states (from →
// to, either side possibly ""), and whether it corrects.
func statedOf(e *episode.Episode) (claims []statedClaim, switches [][2]string, corrects bool) {
	for _, s := range e.Signals {
		if !s.Stated {
			continue
		}
		switch s.Kind {
		case episode.SignalCorrection:
			corrects = true
			// A correction's subject is what the user says instead; it
			// comes with a signal of its own when it is a preference.
			continue
		case episode.SignalSwitch:
			corrects = true
			switches = append(switches, [2]string{headTerm(normTerm(s.Subject)), headTerm(normTerm(s.Object))})
		}
		c, ok := claimOf(s)
		if !ok {
			continue
		}
		sc := statedClaim{c: c, global: s.Global || e.ProjectPath == "", display: asWritten(s.Text, c.subject),
			away: s.Kind == episode.SignalSwitch && !ruleWords(s.Text)}
		sc.said = saidOf(s, c, sc.display)
		if !slices.ContainsFunc(claims, func(o statedClaim) bool { return o.c == sc.c && o.global == sc.global }) {
			claims = append(claims, sc)
		}
	}
	return claims, switches, corrects
}

// oldValues are the values e says the user moved away from: what a switch
// or a correction replaces ("from X", "not X but Y"), as written.
func oldValues(e *episode.Episode) []string {
	var out []string
	corrects := correcting(e)
	for _, sg := range e.Signals {
		var old string
		switch {
		case !sg.Stated || !corrects:
		case sg.Kind == episode.SignalSwitch:
			old = sg.Subject // a switch away from Subject, to Object
		case sg.Kind == episode.SignalCorrection:
			old = sg.Object // Subject instead of Object
		case sg.Kind == episode.SignalAvoid && !sg.Global:
			// "actually we use yarn now, not npm": what a correction
			// says no to is what it replaces.
			old = sg.Subject
		}
		if old != "" && !slices.Contains(out, old) {
			out = append(out, old)
		}
	}
	return out
}

// asWritten returns the words of text that subject was made from, as the
// user wrote them: plurals, case and hyphens ("movies with excessive CGI"
// for "movie with excessive cgi", "fantasy-themed tabletop games" for
// "fantasy themed tabletop game"), an article inside kept. When text holds
// no such run of words, it falls back to plural.
func asWritten(text, subject string) string {
	want := strings.FieldsFunc(subject, notWordRune)
	if len(want) == 0 || strings.ContainsFunc(subject, func(r rune) bool { return notWordRune(r) && r != ' ' && r != '-' }) {
		return plural(text, subject) // "go test -race ./...": not words alone
	}
	type tok struct {
		w          string
		start, end int
	}
	var toks []tok
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if notWordRune(r) {
			i += n
			continue
		}
		j := i
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if notWordRune(r) {
				break
			}
			j += n
		}
		toks = append(toks, tok{strings.ToLower(text[i:j]), i, j})
		i = j
	}
	for i := range toks {
		k, j := i, 0
		for k < len(toks) && j < len(want) {
			switch {
			case sameWord(toks[k].w, want[j]):
				j++
			case j == 0 || toks[k].w != "a" && toks[k].w != "an" && toks[k].w != "the":
				k = len(toks) // no match from i
				continue
			}
			k++
		}
		if j < len(want) {
			continue
		}
		span := text[toks[i].start:toks[k-1].end]
		if strings.ContainsAny(span, ".!?;:\n") || len(span) > 2*len(subject)+20 {
			continue
		}
		if r, n := utf8.DecodeRuneInString(span); unicode.IsUpper(r) && strings.TrimSpace(text[:toks[i].start]) == "" &&
			!(n < len(span) && unicode.IsUpper(rune(span[n]))) {
			span = string(unicode.ToLower(r)) + span[n:] // the sentence's capital, not the word's
		}
		return span
	}
	return plural(text, subject)
}

// notWordRune separates words for asWritten: anything but letters, digits
// and apostrophes.
func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
}

// sameWord reports whether a word as written is the subject's word, or
// its plural ("movies" for "movie", "dishes" for "dish", "activities" for
// "activity").
func sameWord(written, w string) bool {
	return written == w || written == w+"s" || written == w+"es" ||
		strings.HasSuffix(w, "y") && written == strings.TrimSuffix(w, "y")+"ies"
}

// plural returns subject's plural when text holds it ("table-driven
// tests" for "table-driven test"), else subject.
func plural(text, subject string) string {
	t := strings.ToLower(text)
	forms := []string{subject + "s", subject + "es"}
	if strings.HasSuffix(subject, "y") {
		forms = append(forms, strings.TrimSuffix(subject, "y")+"ies")
	}
	for _, p := range forms {
		for off := 0; ; {
			i := strings.Index(t[off:], p)
			if i < 0 {
				break
			}
			i += off
			if (i+len(p) == len(t) || !isWordByte(t[i+len(p)])) && (i == 0 || !isWordByte(t[i-1])) {
				return p
			}
			off = i + 1
		}
	}
	return subject
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// retiredClaim is a claim no longer held in a partition, since At.
type retiredClaim struct {
	part string
	c    claim
	at   time.Time
}

// retire records b's claim as retired at `at`.
func (s *cycle) noteRetired(b *belief.Belief, at time.Time) {
	if bc, ok := beliefClaim(b); ok {
		s.retired = append(s.retired, retiredClaim{part: partKey(b.Scope, b.ProjectPath), c: bc, at: at})
	}
}

// stale reports whether claim c in partition part was retired after an
// episode that occurred at t.
func (s *cycle) stale(part string, c claim, t time.Time) bool {
	for _, r := range s.retired {
		if r.part == part && r.c == c && !t.After(r.at) {
			return true
		}
	}
	return false
}

// when is the time an episode speaks for.
func when(e *episode.Episode) time.Time {
	if !e.OccurredAt.IsZero() {
		return e.OccurredAt
	}
	return e.CreatedAt
}

// statedAll works the explicit statements of the new episodes, in order.
func (s *cycle) statedAll(ctx context.Context, eps []store.SeqEpisode) {
	for i := range eps {
		e := &eps[i].Episode
		if s.used[e.ID] {
			continue
		}
		s.working(e)
		if s.stated(ctx, e) {
			s.used[e.ID] = true
			s.epCache[e.ID] = *e
		}
	}
}

// stated works one episode's explicit statements; it reports whether it
// had any.
func (s *cycle) stated(ctx context.Context, e *episode.Episode) bool {
	claims, switches, corrects := statedOf(e)
	claims = append(claims, s.correctedFacts(e, claims)...)
	claims = append(claims, installed(e, claims)...)
	s.versionSlots(e, claims)
	// A correction that says what holds now ("we moved off Fly.io,
	// everything runs on Render now") is one belief, the new value's: its
	// turning away from the old value retires what said it and is no
	// belief of its own.
	installs := slices.ContainsFunc(claims, func(c statedClaim) bool { return c.c.polarity > 0 })
	if len(claims) == 0 {
		return false
	}
	olds := s.oldValuesOf(ctx, e)
	t := when(e)
	// orphans are the beliefs a turning away retired without a belief of
	// its own; the new value's belief is their child.
	var orphans, installedBeliefs []*belief.Belief
	for _, sc := range claims {
		if sc.global && corrects && s.projectSlot(e.ProjectPath, sc.c) {
			// A correction bears on the slot it corrects: said in a
			// project that holds a belief about it, it is that project's
			// ("scratch what I told you about port 8080, the dev server
			// is 3000 now").
			sc.global = false
		}
		scope, project, path := episode.ScopeProject, e.Project, e.ProjectPath
		if sc.global {
			scope, project, path = episode.ScopeGlobal, "", ""
		}
		part := partKey(scope, path)
		if s.stale(part, sc.c, t) {
			// Said before it was corrected (an older session read late,
			// a backfill): never current.
			s.supersede(e.ID, "", "said before it was corrected")
			continue
		}
		var supported bool
		var retired []*belief.Belief
		for _, id := range s.order {
			b := s.beliefs[id]
			bc, ok := beliefClaim(b)
			if b.Status != belief.StatusActive || !ok || bc.subject != sc.c.subject || bc.class != sc.c.class {
				continue
			}
			same := partKey(b.Scope, b.ProjectPath) == part
			if !same && b.Scope != episode.ScopeGlobal {
				continue
			}
			if hasEvidence(b, e.ID) {
				// Counted before (this cycle's other claim, an import).
				supported = supported || same && agrees(bc, sc.c)
				continue
			}
			switch {
			case agrees(bc, sc.c):
				if same {
					s.weigh(b, e, Supports)
					supported = true
				}
			case bc.class == classPref && sc.c.object != bc.object:
				// The opposite for a purpose the belief does not name
				// ("not bun for production"): it holds elsewhere.
				if same && !hasEvidence(b, e.ID) {
					before := snapshot(b)
					b.Partial = append(b.Partial, e.ID)
					b.EvidenceCount++
					b.UpdatedAt = s.now
					s.dirty[b.ID] = true
					s.st.Partial++
					s.record(b, store.ActionPartial, e.ID, "stated for another purpose", before)
				}
				supported = supported || same
			case disagrees(bc, sc.c):
				if (corrects || bc.class == classFact) && !s.frozen(b) {
					s.retire(ctx, b, e, t, bc.object)
					retired = append(retired, b)
				} else {
					s.weigh(b, e, Contradicts)
				}
			}
		}
		if d := s.deniedClaim(sc.c, part); !supported && d != nil {
			// Denied: the statement is evidence of it, not a new belief.
			s.weigh(d, e, Supports)
		} else if !supported && !(sc.away && installs) {
			nb := s.createStated(ctx, e, sc.c, sc.display, sc.said, scope, project, path)
			for _, old := range retired {
				nb.ParentID = old.ID
				old.Children = append(old.Children, nb.ID)
			}
			if sc.c.polarity > 0 {
				installedBeliefs = append(installedBeliefs, nb)
			}
		} else if sc.away {
			orphans = append(orphans, retired...)
		}
	}
	if len(installedBeliefs) > 0 {
		nb := installedBeliefs[0]
		for _, old := range orphans {
			if nb.ParentID == "" {
				nb.ParentID = old.ID
			}
			old.Children = append(old.Children, nb.ID)
		}
	}
	// "We moved from Postgres to SQLite": the fact whose value was
	// Postgres is retired, and stated anew with SQLite.
	for _, sw := range switches {
		if sw[0] == "" {
			continue
		}
		for _, id := range slices.Clone(s.order) {
			b := s.beliefs[id]
			bc, ok := beliefClaim(b)
			if b.Status != belief.StatusActive || !ok || bc.class != classFact || bc.object != sw[0] {
				continue
			}
			if b.Scope != episode.ScopeGlobal && partKey(b.Scope, b.ProjectPath) != partKey(episode.ScopeProject, e.ProjectPath) {
				continue
			}
			frozen := s.frozen(b)
			if frozen {
				s.weigh(b, e, Contradicts) // kept as the user decided
			} else {
				s.retire(ctx, b, e, t, sw[0])
			}
			nc := claim{subject: bc.subject, class: classFact, polarity: 1, object: sw[1]}
			if sw[1] != "" && s.deniedClaim(nc, partKey(b.Scope, b.ProjectPath)) == nil {
				nb := s.createStated(ctx, e, nc, nc.subject, "", b.Scope, b.Project, b.ProjectPath)
				if !frozen {
					nb.ParentID = b.ID
					b.Children = append(b.Children, nb.ID)
				}
			}
		}
	}
	// What else named the old value, episodes and beliefs, whatever their
	// slot, is no longer current.
	for _, old := range olds {
		s.supersedeMentions(ctx, e, old)
		s.retireMentions(ctx, e, old, claims, t)
	}
	return true
}

// correctedFacts are the facts a correction states with its new value
// alone ("we upgraded the database to Postgres 17": the correction's
// subject is "postgres 17"), when that value fills the slot of an active
// fact of e's project: the fact whose name is a word of the value
// ("postgres" = "postgres 16"), or whose value shares the new one's
// first word. The slot's old value is then corrected like any other
// fact's (stated).
func (s *cycle) correctedFacts(e *episode.Episode, claims []statedClaim) []statedClaim {
	if e.ProjectPath == "" {
		return nil
	}
	var out []statedClaim
	for _, sg := range e.Signals {
		if !sg.Stated || sg.Kind != episode.SignalCorrection || sg.Global {
			continue
		}
		val := normTerm(sg.Subject)
		words := strings.Fields(val)
		if len(words) == 0 || lexicon.NoContent(val) != "" || slices.ContainsFunc(claims, func(c statedClaim) bool {
			return c.c.object == val || c.c.subject == val
		}) {
			continue
		}
		for _, id := range s.order {
			b := s.beliefs[id]
			bc, ok := beliefClaim(b)
			if b.Status != belief.StatusActive || !ok || bc.class != classFact || b.Scope != episode.ScopeProject ||
				b.ProjectPath != e.ProjectPath || bc.object == val {
				continue
			}
			ow := strings.Fields(bc.object)
			if !slices.Contains(words, bc.subject) && (len(ow) == 0 || ow[0] != words[0]) {
				continue
			}
			c := claim{subject: bc.subject, class: classFact, polarity: 1, object: val}
			if slices.ContainsFunc(out, func(o statedClaim) bool { return o.c == c }) {
				continue
			}
			sc := statedClaim{c: c, display: asWritten(sg.Text, c.subject)}
			sc.said = saidOf(sg, c, asWritten(sg.Text, val))
			out = append(out, sc)
		}
	}
	return out
}

// ruleWords reports whether text words a change as a rule ("stop using
// bun", "never use mocks again", "don't use moment anymore"), not as what
// happened ("we moved off Fly.io", "beanstalkd is gone"): a rule's turning
// away is a belief of its own.
func ruleWords(text string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\''
	}) {
		switch w {
		case "stop", "quit", "don't", "dont", "never", "avoid":
			return true
		}
	}
	return false
}

// installed are the claims of what e's corrections install ("it's all
// Prisma now": the correction's subject) that no claim of e makes yet
// (a fact of its slot, a preference the rules read beside it): a
// preference for the new value, reading as the user's clause.
func installed(e *episode.Episode, claims []statedClaim) []statedClaim {
	var out []statedClaim
	for _, sg := range e.Signals {
		if !sg.Stated || sg.Kind != episode.SignalCorrection || sg.Polarity < 0 {
			continue
		}
		c, ok := claimOf(sg)
		if !ok || slices.ContainsFunc(claims, func(o statedClaim) bool {
			return o.c.subject == c.subject || o.c.object == c.subject
		}) || slices.ContainsFunc(out, func(o statedClaim) bool { return o.c == c }) {
			continue
		}
		sc := statedClaim{c: c, global: sg.Global || e.ProjectPath == "", display: asWritten(sg.Text, c.subject)}
		sc.said = saidOf(sg, c, sc.display)
		out = append(out, sc)
	}
	return out
}

// userSubject is the subject of the facts the user states about themself.
const userSubject = "user"

// agrees: the same polarity of a preference (whatever purpose each
// names: "bun for scripts" is still bun), the same value of a fact.
func agrees(bc, c claim) bool {
	if bc.class == classFact {
		return bc.object == c.object
	}
	return bc.polarity == c.polarity
}

// disagrees: the opposite of a preference for the same purpose (or none),
// another value of a fact.
func disagrees(bc, c claim) bool {
	if bc.class == classFact {
		// What the user says of themself is many facts, not one value:
		// "has a peanut allergy" and "is on macOS" both hold.
		return bc.object != c.object && bc.subject != userSubject
	}
	return bc.polarity != c.polarity && c.object == bc.object
}

// weigh records a stated episode as evidence of StatedWeight.
func (s *cycle) weigh(b *belief.Belief, e *episode.Episode, rel Relation) {
	if hasEvidence(b, e.ID) {
		return
	}
	before := snapshot(b)
	w := float64(belief.StatedWeight)
	switch rel {
	case Supports:
		b.Alpha += w
		b.Supporting = append(b.Supporting, e.ID)
		b.LastReinforcedAt = s.now
		confirm(b, e)
		s.st.Supported++
	case Contradicts:
		b.Beta += w
		b.Contradicting = append(b.Contradicting, e.ID)
		s.st.Contradicted++
	default:
		return
	}
	b.EvidenceCount += belief.StatedWeight
	b.PeakConfidence = max(b.PeakConfidence, b.Confidence())
	b.UpdatedAt = s.now
	s.dirty[b.ID], s.gained[b.ID] = true, true
	s.record(b, relationAction(rel), e.ID, "stated by the user", before)
}

// retire ends a belief the user corrected: it is contradicted with the
// statement's weight and kept as revised, so that promotion shows it as
// [NO LONGER TRUE] once and then removes it.
func (s *cycle) retire(ctx context.Context, b *belief.Belief, e *episode.Episode, at time.Time, old string) {
	s.keepRest(ctx, b, e, old)
	s.weigh(b, e, Contradicts)
	before := snapshot(b)
	before["statement"] = b.Statement
	b.Revisions = append(b.Revisions, belief.Revision{Timestamp: at, OldStatement: b.Statement,
		OldConfidence: b.Confidence(), Reason: fmt.Sprintf("corrected by the user in %s: %q", e.ID, clipRunes(oneLine(e.Summary), 160))})
	b.Status, b.Timeframe, b.UpdatedAt = belief.StatusRevised, belief.TimePast, s.now
	s.dirty[b.ID], s.fresh[b.ID] = true, true
	s.noteRetired(b, at)
	s.st.Revised++
	s.record(b, store.ActionRevised, e.ID, "corrected by the user", before)
	s.events[len(s.events)-1].After["statement"] = b.Statement
	s.log.Info("belief corrected", "id", b.ID, "by", e.ID)
	// The exchanges that said the old value are not current any more:
	// the belief's evidence, and the project's other exchanges that name
	// it ("risk-engine targets Java 11" beside the belief "We're on Java
	// 11." it did not form).
	for _, id := range b.Supporting {
		if id != e.ID {
			s.supersede(id, e.ID, "what it said was corrected")
		}
	}
	if b.Scope == episode.ScopeProject && b.ProjectPath == e.ProjectPath {
		s.supersedeMentions(ctx, e, old)
	}
}

// keepRest keeps what a belief the user corrected said besides the value
// they corrected (old): "Static assets are served through CloudFront, and
// images get converted to AVIF at build time." corrected for CloudFront
// leaves "Images get converted to AVIF at build time." active, as its
// child with its evidence and confidence, so that a correction changes its
// own slot only. The child claims no slot (its statement is all there is
// of it: a later statement supports or corrects it by its words). A belief
// whose rest is not a clause of its own (withoutClauses) is retired whole.
func (s *cycle) keepRest(ctx context.Context, b *belief.Belief, e *episode.Episode, old string) {
	if old == "" || lexicon.NoContent(old) != "" {
		return
	}
	names := func(t string) bool {
		return slices.ContainsFunc(nameForms(old), func(n string) bool { return mentions(t, n) })
	}
	rest, ok := withoutClauses(b.Statement, names)
	if !ok {
		return
	}
	support := slices.DeleteFunc(slices.Clone(b.Supporting), func(id string) bool { return id == e.ID })
	if len(support) == 0 {
		return
	}
	reason := fmt.Sprintf("what it said besides %q, which the user corrected in %s", old, e.ID)
	nb := s.child(ctx, b, Candidate{Statement: rest, Subject: normTerm(rest), Timeframe: belief.TimeCurrent}, support, reason)
	nb.Alpha, nb.Beta, nb.EvidenceCount = b.Alpha, b.Beta, b.EvidenceCount
	nb.Kind, nb.Speculative = b.Kind, b.Speculative
	nb.PeakConfidence = nb.Confidence()
	s.add(nb)
	s.formed(nb, b.ID, "the rest of "+b.ID+" after a correction")
	b.Children = append(b.Children, nb.ID)
	s.st.Created++
	s.log.Info("belief kept in part", "old", b.ID, "new", nb.ID, "by", e.ID)
}

// projectSlot reports whether the project at path holds an active belief
// about c's subject, of c's class.
func (s *cycle) projectSlot(path string, c claim) bool {
	if path == "" {
		return false
	}
	for _, id := range s.order {
		b := s.beliefs[id]
		if b.Status != belief.StatusActive || b.Scope != episode.ScopeProject || b.ProjectPath != path {
			continue
		}
		if bc, ok := beliefClaim(b); ok && bc.subject == c.subject && bc.class == c.class {
			return true
		}
	}
	return false
}

// supersede marks an episode superseded by another (by: "" when only the
// time of the correction is known); the marks are applied with the
// batch's save. An episode is superseded once.
func (s *cycle) supersede(id, by, why string) {
	if s.superseded == nil {
		s.superseded = map[string]store.LifecycleChange{}
	}
	if _, ok := s.superseded[id]; !ok {
		s.superseded[id] = store.LifecycleChange{ID: id, State: episode.LifecycleSuperseded, Detail: why, By: by}
	}
}

// supersedeMentions marks the episodes of e's partition said before it
// that name a value the user moved away from ("we moved off Fly.io", "not
// Jest anymore"), whether or not a belief had formed from them.
func (s *cycle) supersedeMentions(ctx context.Context, e *episode.Episode, old string) {
	if old == "" || e.ProjectPath == "" || lexicon.NoContent(old) != "" {
		return
	}
	for _, name := range nameForms(old) {
		eps, err := s.c.DB.EpisodesMentioning(ctx, e.ProjectPath, name, when(e), 200)
		if err != nil {
			s.log.Warn("superseded episodes not looked up", "episode", e.ID, "err", err)
			return
		}
		for _, o := range eps {
			if o.ID != e.ID && mentions(o.Summary+"\n"+o.Context, name) {
				s.supersede(o.ID, e.ID, "it names a value the user moved away from")
			}
		}
	}
}

// retireMentions retires the active beliefs of e's project that name a
// value the user moved away from ("we moved off winston":
// "The winston transports are in src/log.ts"), whatever their slot, unless
// they also name what the correction installs (then they report the
// change) or are the correction's own. A belief the user pinned or denied
// stays as they decided.
func (s *cycle) retireMentions(ctx context.Context, e *episode.Episode, old string, claims []statedClaim, at time.Time) {
	if old == "" || e.ProjectPath == "" || lexicon.NoContent(old) != "" {
		return
	}
	part := partKey(episode.ScopeProject, e.ProjectPath)
	names := func(t string) bool {
		return slices.ContainsFunc(nameForms(old), func(n string) bool { return mentions(t, n) })
	}
	for _, id := range slices.Clone(s.order) {
		b := s.beliefs[id]
		if b.Status != belief.StatusActive || partKey(b.Scope, b.ProjectPath) != part || hasEvidence(b, e.ID) || s.frozen(b) {
			continue
		}
		text := b.Statement + "\n" + b.Subject + "\n" + b.Context
		if !names(text) || slices.ContainsFunc(claims, func(c statedClaim) bool {
			installs := c.c.polarity > 0 && c.c.subject != old && c.c.object != old
			if c.c.class == classFact {
				// What a fact installs is its value: its subject is the
				// slot, which the old value's belief names too ("the
				// cluster is on Kubernetes 1.27" for "cluster" at 1.30).
				return installs && c.c.object != "" && mentions(text, c.c.object)
			}
			return installs && (mentions(text, c.c.subject) || c.c.object != "" && mentions(text, c.c.object))
		}) {
			continue
		}
		if !names(b.Subject + "\n" + b.Context) {
			// Only its wording names the old value: a belief about another
			// slot, said in one sentence with it ("Login is handled by
			// Auth0, and the app is hosted on Vercel." is about hosting).
			// It keeps its slot and loses the clause that is no longer
			// true.
			if rest, ok := withoutClauses(b.Statement, names); ok {
				s.reword(b, e, rest)
			}
			continue
		}
		s.retire(ctx, b, e, at, old)
	}
}

// withoutClauses is statement without its clauses (cut at "; ", ", and
// ", ", ", and at " and " before a second predicate of the same subject:
// "… runs at 02:00 UTC and writes to S3") that drop says to drop, when
// some are dropped and what is left reads as a clause of its own. A clause
// that leans on what was cut is given the subject of the sentence's first
// clause, when that one says "<subject> is|are …" or "<subject> <verb>s
// …": "The bot is hosted on Heroku, and it's written with discord.py"
// without Heroku is "The bot is written with discord.py.", "The CMS is on
// Django 3.2 LTS, served by gunicorn" without Django 3.2 "The CMS is
// served by gunicorn.", "The report runs at 02:00 UTC and writes to S3"
// without 02:00 "The report writes to S3.". Left without a subject
// ("they", "which", a verb form after a first clause of another shape),
// it is not a clause of its own. Kept clauses keep the word that joined
// them.
func withoutClauses(statement string, drop func(string) bool) (string, bool) {
	body := strings.TrimRight(strings.TrimSpace(statement), ".!")
	type part struct{ sep, text string }
	var parts []part
	for i, p := range strings.Split(body, "; ") {
		for j, q := range strings.Split(p, ", and ") {
			for k, r := range strings.Split(q, ", ") {
				sep := ", "
				switch {
				case k == 0 && j > 0:
					sep = ", and "
				case k == 0 && i > 0:
					sep = "; "
				}
				for l, v := range predicates(r) {
					if l > 0 {
						sep = " and "
					}
					parts = append(parts, part{sep, v})
				}
			}
		}
	}
	var kept []part
	for _, p := range parts {
		if !drop(p.text) {
			kept = append(kept, part{p.sep, strings.TrimSpace(p.text)})
		}
	}
	if len(kept) == 0 || len(kept) == len(parts) || kept[0].text == "" {
		return "", false
	}
	k0 := kept[0].text
	first := strings.ToLower(strings.Fields(k0 + " x")[0])
	subject, copula := clauseSubject(parts[0].text)
	lean := func(subject string) bool { return subject != "" && k0 != strings.TrimSpace(parts[0].text) }
	switch {
	case first == "it's" || first == "it" && strings.HasPrefix(strings.ToLower(k0), "it is "):
		if !lean(subject) || copula == "" {
			return "", false
		}
		rest := strings.TrimSpace(k0[strings.Index(k0, " ")+1:])
		if first == "it" {
			rest = strings.TrimSpace(rest[len("is"):])
		}
		k0 = subject + " " + copula + " " + rest
	case first == "it":
		if !lean(subject) {
			return "", false
		}
		k0 = subject + k0[len("it"):]
	case first == "its", first == "they", first == "they're", first == "this", first == "that", first == "these",
		first == "those", first == "which", first == "and", first == "but", first == "so":
		return "", false
	case lexicon.IsVerbForm(first) || len(first) > 4 && strings.HasSuffix(first, "ed") || kept[0].sep == " and ":
		if !lean(subject) {
			return "", false
		}
		if strings.HasSuffix(first, "ed") || strings.HasSuffix(first, "en") {
			if copula == "" {
				return "", false
			}
			k0 = subject + " " + copula + " " + k0 // a participle: "served by gunicorn"
		} else {
			k0 = subject + " " + k0 // "writes to S3"
		}
	}
	var b strings.Builder
	b.WriteString(k0)
	for _, p := range kept[1:] {
		b.WriteString(p.sep + p.text)
	}
	out := b.String()
	r, n := utf8.DecodeRuneInString(out)
	return string(unicode.ToUpper(r)) + out[n:] + ".", true
}

// predicates cuts a clause at " and " before a verb in its -s form ("runs
// at 02:00 UTC and writes to S3"); an "and" before anything else (a
// second noun: "from Jira and GitHub") leaves it whole.
func predicates(clause string) []string {
	var out []string
	for {
		i, cut := 0, -1
		for cut < 0 {
			j := strings.Index(clause[i:], " and ")
			if j < 0 {
				break
			}
			words := strings.Fields(clause[i+j+len(" and "):])
			if len(words) > 1 && verbS(words[0], words[1]) {
				cut = i + j
			}
			i += j + len(" and ")
		}
		if cut < 0 {
			return append(out, clause)
		}
		out = append(out, clause[:cut])
		clause = clause[cut+len(" and "):]
	}
}

// verbS reports whether w, followed by next, reads as a verb in its -s
// form: a common verb ("writes"), or a word in -s before a function word
// ("runs at", "pulls from").
func verbS(w, next string) bool {
	w, next = strings.ToLower(w), strings.ToLower(next)
	if len(w) < 3 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") ||
		strings.HasSuffix(w, "is") || lexicon.IsFunctionWord(w) {
		return false
	}
	return lexicon.IsVerbForm(w) || lexicon.IsFunctionWord(next)
}

// clauseSubject is the subject and copula of a clause "<subject> is|are
// …" whose subject is one to five words and no pronoun; of a clause
// "<subject> <verb>s …" (verbS), the subject and "" ("", "" for any other
// clause).
func clauseSubject(clause string) (subject, copula string) {
	words := strings.Fields(clause)
	if len(words) == 0 {
		return "", ""
	}
	switch strings.ToLower(words[0]) {
	case "it", "they", "this", "that", "there", "here", "we", "i", "you":
		return "", ""
	}
	for i, w := range words {
		if i > 5 {
			break
		}
		if lw := strings.ToLower(w); (lw == "is" || lw == "are") && i > 0 {
			return strings.Join(words[:i], " "), lw
		}
	}
	for i := 1; i < len(words)-1 && i <= 5; i++ {
		if verbS(words[i], words[i+1]) {
			return strings.Join(words[:i], " "), ""
		}
	}
	return "", ""
}

// reword gives belief b the statement text, because e said what the rest
// of its old wording held is no longer true; recorded as an edit caused
// by e.
func (s *cycle) reword(b *belief.Belief, e *episode.Episode, text string) {
	before := snapshot(b)
	before["statement"] = b.Statement
	b.Statement, b.UpdatedAt = text, s.now
	s.dirty[b.ID] = true
	s.record(b, store.ActionEdited, e.ID, "a clause it held was corrected", before)
	s.events[len(s.events)-1].After["statement"] = b.Statement
}

// supersedeLate supersedes the episodes of this batch that name a value
// their project's user had already moved away from when they were read: an
// older session read late, a backfill, a correction in the same batch. The
// corrections come from the store, so none is missed for being in another
// batch or cycle.
func (s *cycle) supersedeLate(ctx context.Context, eps []store.SeqEpisode) {
	var paths []string
	for _, e := range eps {
		if e.ProjectPath != "" && !slices.Contains(paths, e.ProjectPath) {
			paths = append(paths, e.ProjectPath)
		}
	}
	if len(paths) == 0 {
		return
	}
	corr, err := s.c.DB.CorrectingEpisodes(ctx, paths)
	if err != nil {
		s.log.Warn("corrections not looked up", "err", err)
		return
	}
	for i := range corr {
		c := &corr[i]
		if s.resolve(ctx, c); !correcting(c) {
			continue
		}
		olds := s.oldValuesOf(ctx, c)
		if len(olds) == 0 {
			continue
		}
		at := when(c)
		for j := range eps {
			e := &eps[j].Episode
			if e.ID == c.ID || e.ProjectPath != c.ProjectPath || !when(e).Before(at) {
				continue
			}
			for _, old := range olds {
				if lexicon.NoContent(old) == "" && mentions(e.Summary+"\n"+e.Context, old) {
					s.supersede(e.ID, c.ID, "it names a value the user moved away from")
				}
			}
		}
	}
}

// nameForms are the spellings a tool's name goes by with and without its
// suffix: "mongo" and "mongodb", "postgres" and "postgresql", "vue" and
// "vuejs".
func nameForms(name string) []string {
	out := []string{name}
	for _, suf := range []string{"db", "ql", "sql", "js", ".js"} {
		if base, ok := strings.CutSuffix(name, suf); ok && len(base) >= 3 {
			out = append(out, base)
		} else if len(name) >= 3 && !strings.ContainsAny(name, " ") {
			out = append(out, name+suf)
		}
	}
	return out
}

// mentions reports whether text names term as a whole word (case aside).
// A term of several words (a normalized value: "02 00 utc") is also named
// by the same words joined otherwise ("02:00 UTC").
func mentions(text, term string) bool {
	t, w := strings.ToLower(text), strings.ToLower(term)
	for off := 0; ; {
		i := strings.Index(t[off:], w)
		if i < 0 {
			return strings.Contains(w, " ") && wordRun(t, w)
		}
		i += off
		if (i == 0 || !isWordByte(t[i-1])) && (i+len(w) == len(t) || !isWordByte(t[i+len(w)])) {
			return true
		}
		off = i + 1
	}
}

// wordRun reports whether the words of term (runs of letters and digits)
// come one after another in text.
func wordRun(text, term string) bool {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	tw, ww := split(text), split(term)
	if len(ww) == 0 {
		return false
	}
	for i := 0; i+len(ww) <= len(tw); i++ {
		if slices.Equal(tw[i:i+len(ww)], ww) {
			return true
		}
	}
	return false
}

// saidOf is the clause of signal s a belief of claim c reads as: the one
// that holds what it is about as the user wrote it (display), or for a
// fact its value ("" when neither is in the sentence).
func saidOf(s episode.Signal, c claim, display string) string {
	if p := Phrase(s.Text, display); p != "" {
		return p
	}
	if c.class == classFact && c.object != "" {
		return Phrase(s.Text, asWritten(s.Text, c.object))
	}
	return ""
}

// createStated makes a belief from one stated claim, reading as the
// user's clause said when there is one.
func (s *cycle) createStated(ctx context.Context, e *episode.Episode, c claim, display, said, scope, project, path string) *belief.Belief {
	pred, ctxt := PredPrefers, ""
	switch {
	case c.class == classFact:
		pred, ctxt = PredIs, c.object
	case c.polarity < 0:
		pred = PredAvoids
	}
	w := float64(belief.StatedWeight)
	b := &belief.Belief{
		ID: store.NewID("bl_"), Subject: c.subject, Predicate: pred, Context: ctxt, Timeframe: belief.TimeCurrent,
		Statement: cmp.Or(said, Render(scope, project, cmp.Or(display, c.subject), pred, ctxt)),
		Alpha:     1 + w, Beta: 1, Scope: scope, Project: project, ProjectPath: path,
		Supporting: []string{e.ID}, Status: belief.StatusActive, EvidenceCount: belief.StatedWeight, Stability: 1,
		CreatedAt: s.now, UpdatedAt: s.now, LastReinforcedAt: s.now,
		Kind: episode.KindPreference, Speculative: e.Speculative,
	}
	if c.class == classFact {
		b.Kind = episode.KindFact
		if e.Kind == episode.KindRelationship || e.Kind == episode.KindEntity {
			b.Kind = e.Kind
		}
	}
	if vec := s.embed(ctx, b.Statement); len(vec) > 0 {
		b.Embedding, b.Embedder = vec, s.embedderName()
	}
	b.PeakConfidence = b.Confidence()
	s.add(b)
	s.formed(b, e.ID, "stated by the user")
	s.st.Created++
	s.log.Info("belief stated", "id", b.ID, "episode", e.ID)
	return b
}
