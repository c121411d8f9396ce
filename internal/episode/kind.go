package episode

import (
	"regexp"
	"strings"
	"time"
)

// Kinds of a memory (an episode or a belief): what it is, which decides
// its lifetime. An episode's Type says what happened in the exchange; its
// kind says what kind of thing is remembered.
const (
	KindFact         = "fact"
	KindPreference   = "preference"
	KindCorrection   = "correction"
	KindEntity       = "entity"
	KindDecision     = "decision"
	KindRelationship = "relationship"
	KindPrinciple    = "principle"
	KindCommitment   = "commitment"
	KindMoment       = "moment"
	KindSkill        = "skill"
)

// Kinds lists every kind.
var Kinds = []string{KindFact, KindPreference, KindCorrection, KindEntity, KindDecision, KindRelationship,
	KindPrinciple, KindCommitment, KindMoment, KindSkill}

// ValidKind reports whether k is one of Kinds.
func ValidKind(k string) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// KindOfType is the kind an episode type stands for when its words say no
// more: preference, decision, correction and fact keep their name, a
// procedure is a skill, an event or a question a moment.
func KindOfType(typ string) string {
	switch typ {
	case TypePreference:
		return KindPreference
	case TypeDecision:
		return KindDecision
	case TypeCorrection:
		return KindCorrection
	case TypeFact:
		return KindFact
	case TypeProcedure:
		return KindSkill
	}
	return KindMoment
}

var (
	// A promise of the user's to do something: "I'll send the plan on
	// Friday", "I will review it tomorrow", "remind me to…".
	commitmentRe = regexp.MustCompile(`(?i)\b(i'll|i will|i promise to|we'll|we will|remind me to|let me (?:get back|follow up))\b[^.!?\n]{0,160}`)
	// A date a commitment names.
	dueRe = regexp.MustCompile(`(?i)\b(?:on|by|before|until|next|this|due)?\s*(today|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|next week|end of (?:the )?week|(\d{4})-(\d{2})-(\d{2}))\b`)
	// A relation between people, or a person and a team.
	relationshipRe = regexp.MustCompile(`(?i)\b(my|our|the user's) (manager|boss|colleague|coworker|co-worker|teammate|team lead|tech lead|lead|mentor|report|reports|wife|husband|partner|friend|client|customer|cofounder|co-founder)\b|\b(reports to|works with|works for|is married to|manages)\b`)
	// A general rule the user holds.
	principleRe = regexp.MustCompile(`(?i)\b(as a rule|rule of thumb|in general,? (?:i|we)|my principle|our principle|on principle|the principle is|i always try to|we always try to)\b`)
	// What a thing is: "Atlas is our billing service".
	entityRe = regexp.MustCompile(`^([A-Z][\w.-]{1,40}) is (?:a|an|our|the) [\w -]{2,60}`)
	// Hedged words: the user is not sure.
	hedgeRe = regexp.MustCompile(`(?i)\b(maybe|perhaps|probably|possibly|might|i think|i guess|i suppose|not sure|i'm unsure|unsure|i believe|it seems|kind of|sort of|could be)\b`)
)

// Classify assigns a kind to an exchange from its type, its signals and
// the user's words: a correction or a preference stays one; a promise with
// or without a date is a commitment (with its due date when the words name
// one, relative to at) unless it asks something or set off tool work; a relation between people a relationship; a
// stated rule a principle; a definition of a named thing an entity; else
// the kind of the type. Speculative is true for a remark, not a request:
// the user's words hedge, state nothing in so many words, ask nothing, are
// short (SpeculativeMax bytes) and set off no tool work (toolWork); such
// a memory expires unless confirmed.
func Classify(typ string, sigs []Signal, user []string, at time.Time, toolWork bool) (kind string, speculative bool, due time.Time) {
	text := strings.Join(user, "\n")
	if len(text) > 8<<10 {
		text = text[:8<<10]
	}
	kind = KindOfType(typ)
	stated := false
	for _, s := range sigs {
		if s.Stated && !s.Tentative {
			stated = true
		}
	}
	switch {
	case typ == TypeCorrection || typ == TypePreference:
	case commitmentRe.MatchString(text) && (typ == TypeEvent || typ == TypeFact) && !toolWork && !strings.Contains(text, "?"):
		// A promise, not a request that set the assistant to work.
		kind = KindCommitment
		if m := commitmentRe.FindString(text); m != "" {
			due = DueDate(m, at)
		}
	case relationshipRe.MatchString(text):
		kind = KindRelationship
	case principleRe.MatchString(text):
		kind = KindPrinciple
	case (typ == TypeFact || typ == TypeEvent) && entityRe.MatchString(strings.TrimSpace(text)):
		kind = KindEntity
	}
	speculative = !stated && !toolWork && len(text) <= SpeculativeMax && !strings.Contains(text, "?") &&
		typ != TypeProcedure && typ != TypeQuestion && hedgeRe.MatchString(text)
	return kind, speculative, due
}

// SpeculativeMax bounds the user's words of a speculative remark, in bytes:
// a longer message is a request or an explanation, not a guess.
const SpeculativeMax = 300

// DueDate is the first date named in text, relative to at (the end of that
// day, in at's location), or zero.
func DueDate(text string, at time.Time) time.Time {
	m := dueRe.FindStringSubmatch(text)
	if m == nil || at.IsZero() {
		return time.Time{}
	}
	endOf := func(t time.Time) time.Time {
		y, mo, d := t.Date()
		return time.Date(y, mo, d, 23, 59, 59, 0, t.Location())
	}
	w := strings.ToLower(m[1])
	switch w {
	case "today", "tonight":
		return endOf(at)
	case "tomorrow":
		return endOf(at.AddDate(0, 0, 1))
	case "next week":
		return endOf(at.AddDate(0, 0, 7))
	case "end of week", "end of the week":
		return endOf(at.AddDate(0, 0, (int(time.Friday)-int(at.Weekday())+7)%7))
	}
	if m[2] != "" {
		t, err := time.ParseInLocation("2006-01-02", m[1], at.Location())
		if err != nil {
			return time.Time{}
		}
		return endOf(t)
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), w) {
			ahead := (int(d) - int(at.Weekday()) + 7) % 7
			if ahead == 0 {
				ahead = 7 // "on Friday" said on a Friday: the next one
			}
			return endOf(at.AddDate(0, 0, ahead))
		}
	}
	return time.Time{}
}
