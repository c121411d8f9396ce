package recall

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/inject"
)

// Limits of what one prompt gets.
type Limits struct {
	Memories int `json:"memories"` // memory bites
	Beliefs  int `json:"beliefs"`  // belief bites
	Budget   int `json:"budget"`   // bytes of injected text, framing included
	BiteMax  int `json:"bite_max"` // bytes of one bite's own text
	// NeighbourMax bounds each of the exchanges shown next to a memory
	// (see Recaller.Expand); they are added only while the budget allows.
	NeighbourMax int `json:"neighbour_max"`
}

const header = "Notes recalled from earlier sessions by engram (long-term memory). They may be outdated or wrong: " +
	"prefer what the user says now and what the code shows."

// Format renders the bites that fit the limits, framed as engram's injected
// context, and returns the ids of what it shows (each bite's, then the
// exchanges shown next to it), so that none is shown again in the session.
// Beliefs come first: they are short and distilled. Then the memories, best
// first; the exchanges next to them (after, then before) are added to their
// bites, best memory first, while the budget allows, each exchange once.
func Format(res Result, lim Limits, now time.Time) (string, []string) {
	size := len(inject.Wrap(header))
	var lines []string
	var ids []string
	fits := func(n int) bool { return size+n <= lim.Budget }
	n := 0
	for _, b := range res.Beliefs {
		if n >= lim.Beliefs {
			break
		}
		line := fmt.Sprintf("[Belief (%.2f): %s]", b.Confidence, clip(oneLine(b.Text), lim.BiteMax))
		if fits(len(line) + 1) {
			size += len(line) + 1
			lines = append(lines, line)
			ids = append(ids, b.ID)
			n++
		}
	}
	type bite struct {
		line          string
		before, after string // " (just before: …)", " (just after: …)" when they fit
		c             *Candidate
	}
	var bites []*bite
	// A memory whose text is one already shown (an automated prompt sent
	// again, a command typed in many sessions) is not shown twice; its id
	// counts as injected, so that it does not come up later in the session
	// in place of the one shown.
	said := map[string]bool{}
	var twins []string
	for i := range res.Episodes {
		if len(bites) >= lim.Memories {
			break
		}
		e := &res.Episodes[i]
		text := clip(oneLine(body(e.Item)), lim.BiteMax)
		if said[text] {
			twins = append(twins, e.ID)
			continue
		}
		label := "[Memory · " + When(e.At, now)
		if e.Project != "" {
			label += " · project " + e.Project
		}
		if e.Superseded {
			// Kept for what else it says; what it says of a value the
			// user corrected since is not current, and the label says
			// what replaced it and when.
			label += " · " + SupersededLabel(e.Replaced, e.ReplacedAt, now)
		}
		label += "] "
		line := label + text
		if fits(len(line) + 1) {
			size += len(line) + 1
			bites = append(bites, &bite{line: line, c: e})
			said[text] = true
		}
	}
	// An exchange is shown once: a neighbour that is a bite itself, or
	// the neighbour of an earlier bite, is not repeated.
	shown := map[string]bool{}
	for _, b := range bites {
		shown[b.c.ID] = true
	}
	for _, which := range []string{"after", "before"} {
		for _, b := range bites {
			it, part := b.c.After, &b.after
			if which == "before" {
				it, part = b.c.Before, &b.before
			}
			if it == nil || shown[it.ID] {
				continue
			}
			s := " (just " + which + ": " + clip(oneLine(body(*it)), lim.NeighbourMax) + ")"
			if fits(len(s)) {
				size += len(s)
				*part = s
				shown[it.ID] = true
			}
		}
	}
	for _, b := range bites {
		lines = append(lines, b.line+b.before+b.after)
		ids = append(ids, b.c.ID)
		if b.before != "" {
			ids = append(ids, b.c.Before.ID)
		}
		if b.after != "" {
			ids = append(ids, b.c.After.ID)
		}
	}
	if len(lines) == 0 {
		return "", nil
	}
	return inject.Wrap(header + "\n" + strings.Join(lines, "\n")), append(ids, twins...)
}

// body is what a bite shows of an item: an episode's exchange when it is
// short (what was said, the tool calls named once, no tool output), else
// its summary.
func body(it Item) string {
	if it.Detail != "" {
		if b := parseExchange(it.Detail).render(); b != "" {
			return b
		}
	}
	return it.Text
}

// Unanswered reports whether an item is an exchange whose question got no
// answer (see exchange.unanswered): it is never injected.
func Unanswered(it Item) bool {
	return it.Kind == KindEpisode && it.Detail != "" && parseExchange(it.Detail).unanswered()
}

// When labels a memory's time for a bite: how long ago within a day, the
// date from a day on ("2 Nov 2026", in now's time zone). What a memory
// calls "last Friday" means something only with its day, questions of when
// are answered by it, and Claude Code tells the model today's date, so the
// date says how old the memory is too, in as few bytes as "3 weeks ago".
func When(t, now time.Time) string {
	if t.IsZero() || now.Sub(t) < 24*time.Hour {
		return Ago(t, now)
	}
	return t.In(now.Location()).Format("2 Jan 2006")
}

// Ago renders how long ago t was, coarsely.
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "some time ago"
	}
	d := now.Sub(t)
	plural := func(n int, unit string) string {
		if n == 1 {
			return "1 " + unit + " ago"
		}
		return fmt.Sprintf("%d %ss ago", n, unit)
	}
	switch {
	case d < 2*time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d.Minutes()), "minute")
	case d < 24*time.Hour:
		return plural(int(d.Hours()), "hour")
	case d < 48*time.Hour:
		return "yesterday"
	case d < 14*24*time.Hour:
		return plural(int(d.Hours()/24), "day")
	case d < 60*24*time.Hour:
		return plural(int(d.Hours()/24/7), "week")
	case d < 365*24*time.Hour:
		return plural(int(d.Hours()/24/30), "month")
	}
	return plural(int(d.Hours()/24/365), "year")
}

// oneLine folds white space so that a bite is one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
