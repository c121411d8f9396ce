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
	Memories int // memory bites
	Beliefs  int // belief bites
	Budget   int // bytes of injected text, framing included
	BiteMax  int // bytes of one bite's text
}

// DefaultLimits: at most 3 memory bites and 2 belief bites in about 1,500
// tokens.
var DefaultLimits = Limits{Memories: 3, Beliefs: 2, Budget: 6000, BiteMax: 1200}

const header = "Notes recalled from earlier sessions by engram (long-term memory). They may be outdated or wrong: " +
	"prefer what the user says now and what the code shows."

// Format renders the bites that fit the limits, framed as engram's injected
// context, and returns the ids it used. Beliefs come first: they are short
// and distilled.
func Format(res Result, lim Limits, now time.Time) (string, []string) {
	var lines []string
	var ids []string
	size := len(inject.Wrap(header))
	addLine := func(line, id string) bool {
		if size+len(line)+1 > lim.Budget {
			return false
		}
		size += len(line) + 1
		lines = append(lines, line)
		ids = append(ids, id)
		return true
	}
	n := 0
	for _, b := range res.Beliefs {
		if n >= lim.Beliefs {
			break
		}
		if addLine(fmt.Sprintf("[Belief (%.2f): %s]", b.Confidence, clip(oneLine(b.Text), lim.BiteMax)), b.ID) {
			n++
		}
	}
	n = 0
	for _, e := range res.Episodes {
		if n >= lim.Memories {
			break
		}
		label := "[Memory · " + Ago(e.At, now)
		if e.Project != "" {
			label += " · project " + e.Project
		}
		label += "] "
		body := e.Text
		if e.Detail != "" {
			body = e.Detail
		}
		if addLine(label+clip(oneLine(body), lim.BiteMax), e.ID) {
			n++
		}
	}
	if len(lines) == 0 {
		return "", nil
	}
	return inject.Wrap(header + "\n" + strings.Join(lines, "\n")), ids
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
