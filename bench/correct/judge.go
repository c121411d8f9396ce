package main

import (
	"regexp"
	"strings"
	"sync"
)

// Where a unit of text reached the model from.
const (
	FromInjected = "injected"  // the prompt hook's additionalContext
	FromMemory   = "MEMORY.md" // a MEMORY.md file the client loads
)

// Kinds of unit.
const (
	UnitBelief  = "belief"  // a belief's statement: "[Belief (0.80): …]", or a current MEMORY.md bullet
	UnitSaid    = "said"    // the user's words a MEMORY.md bullet quotes after its statement
	UnitMemory  = "memory"  // an episode's exchange or summary: a "[Memory …]" bite, or an exchange shown next to it
	UnitEpisode = "episode" // a graduated episode's bullet in the global MEMORY.md
)

// Unit is the smallest piece of what reaches the model that the judge
// reads on its own: one belief, one exchange, one quote.
type Unit struct {
	From string `json:"from"`
	File string `json:"file,omitempty"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Replaced is what a superseded memory's label quotes as having
	// replaced it (`superseded 29 Nov 2026 by "…"`): the values it names
	// are reported as changed, and the memory's other values stand.
	Replaced string `json:"replaced,omitempty"`
}

// replacedBy matches a label that quotes what superseded a memory.
var replacedBy = regexp.MustCompile(`\bsuperseded\b[^"\]]* by "([^"]*)"`)

var (
	reMu    sync.Mutex
	reCache = map[string]*regexp.Regexp{}
)

// valueRe matches a value as a whole phrase, case-insensitively: its words
// in order, separated by any run of spaces, hyphens or underscores (or
// none: "node18" is "node 18"), not inside a longer word ("go" is not in
// "good", "fly.io" is in "fly.io.").
func valueRe(v string) *regexp.Regexp {
	reMu.Lock()
	defer reMu.Unlock()
	if re, ok := reCache[v]; ok {
		return re
	}
	var parts []string
	for _, f := range strings.Fields(strings.ToLower(v)) {
		parts = append(parts, regexp.QuoteMeta(f))
	}
	re := regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}])` + strings.Join(parts, `[\s_-]*`) + `(?:$|[^\p{L}\p{N}])`)
	reCache[v] = re
	return re
}

// Names reports whether text names any of the spellings of a value.
func Names(text string, values []string) bool {
	return firstName(text, values) >= 0
}

// firstName is the byte offset of the first spelling of a value in text,
// or -1.
func firstName(text string, values []string) int {
	best := -1
	for _, v := range values {
		if strings.TrimSpace(v) == "" {
			continue
		}
		if loc := valueRe(v).FindStringIndex(text); loc != nil && (best < 0 || loc[0] < best) {
			best = loc[0]
		}
	}
	return best
}

// retiredLabel matches the words engram puts on something no longer true:
// MEMORY.md's "[NO LONGER TRUE]", and labels a recall could give a
// superseded or replaced memory. A unit so labelled presents nothing as
// current.
var retiredLabel = regexp.MustCompile(`(?i)\[no longer true\]|\bsuperseded\b|[\[(]replaced\b|[\[(]outdated\b|[\[(]former\b`)

// avoidsBefore matches a belief statement's word for turning away from
// what follows: "Project api avoids jest.", "User no longer uses yarn."
var avoidsBefore = regexp.MustCompile(`(?i)\b(avoids?|avoiding|no longer uses?|does not use|doesn't use|stopped using|moved away from|moved off)\b`)

// avoided reports whether a belief statement turns away from the value it
// names (the value comes after such a word).
func avoided(text string, values []string) bool {
	at := firstName(text, values)
	if at < 0 {
		return false
	}
	loc := avoidsBefore.FindStringIndex(text)
	return loc != nil && loc[0] < at
}

// Presents reports whether a unit presents one of the spellings of value
// as current:
//   - it names the value;
//   - it carries no label of engram's saying it is no longer true;
//   - it does not also name a value of against (a unit naming both the old
//     and the new value reports the change: most often it is the
//     correction's own exchange);
//   - a belief's statement does not turn away from it ("avoids X");
//   - a superseded memory's label that quotes what replaced it names
//     neither the value nor a value of against (such a label retires what
//     its quote names; a label that quotes nothing retires the whole unit).
func Presents(u Unit, value, against []string) bool {
	if u.Replaced != "" && (Names(u.Replaced, value) || Names(u.Replaced, against)) {
		return false
	}
	if !Names(u.Text, value) || retiredLabel.MatchString(u.Text) {
		return false
	}
	if len(against) > 0 && Names(u.Text, against) {
		return false
	}
	if u.Kind == UnitBelief && avoided(u.Text, value) {
		return false
	}
	return true
}

// Reaches reports whether a unit brings a value to the model: it names it,
// unlabelled, and a belief's statement does not turn away from it. A unit
// that names the old value too still brings the new one (the correction's
// own words do).
func Reaches(u Unit, value []string) bool {
	return Presents(u, value, nil)
}

// AnyPresents is Presents over units, returning the first unit that does.
func AnyPresents(units []Unit, value, against []string) (Unit, bool) {
	for _, u := range units {
		if Presents(u, value, against) {
			return u, true
		}
	}
	return Unit{}, false
}

// InjectedUnits splits the prompt hook's additionalContext into units:
// each "[Belief (c): statement]" line's statement, and each "[Memory …]"
// bite's exchange with the exchanges shown just before and after it as
// units of their own. The header and framing are no unit.
func InjectedUnits(context string) []Unit {
	var out []Unit
	for _, line := range strings.Split(context, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "[Belief "):
			text := line
			if i := strings.Index(text, "): "); i >= 0 {
				text = text[i+3:]
			}
			text = strings.TrimSuffix(text, "]")
			out = append(out, Unit{From: FromInjected, Kind: UnitBelief, Text: text})
		case strings.HasPrefix(line, "[Memory "):
			main, before, after := splitNeighbours(line)
			replaced := ""
			if i := strings.Index(main, "] "); i >= 0 {
				label := main[:i+1]
				main = main[i+2:]
				if m := replacedBy.FindStringSubmatch(label); m != nil {
					// The label says what replaced it: that retires
					// what the quote names.
					replaced = m[1]
				} else if retiredLabel.MatchString(label) {
					// The bite's label says it was superseded: it
					// presents nothing as current.
					main = "(superseded) " + main
				}
			}
			out = append(out, Unit{From: FromInjected, Kind: UnitMemory, Text: main, Replaced: replaced})
			for _, n := range []string{before, after} {
				if n != "" {
					out = append(out, Unit{From: FromInjected, Kind: UnitMemory, Text: n})
				}
			}
		}
	}
	return out
}

// splitNeighbours cuts a memory bite into its own text and the exchanges
// recall showed " (just before: …)" and " (just after: …)" it, in that
// order at its end.
func splitNeighbours(line string) (main, before, after string) {
	main = line
	if i := strings.LastIndex(main, " (just after: "); i >= 0 && strings.HasSuffix(main, ")") {
		after = strings.TrimSuffix(main[i+len(" (just after: "):], ")")
		main = main[:i]
	}
	if i := strings.LastIndex(main, " (just before: "); i >= 0 && strings.HasSuffix(main, ")") {
		before = strings.TrimSuffix(main[i+len(" (just before: "):], ")")
		main = main[:i]
	}
	return main, before, after
}

// The markers and headings of engram's blocks in a MEMORY.md
// (internal/promote writes them; the bench reads the files as the client
// gets them, without importing the writer).
const (
	beliefsBegin   = "<!-- ENGRAM:BELIEFS:BEGIN -->"
	beliefsEnd     = "<!-- ENGRAM:BELIEFS:END -->"
	episodesBegin  = "<!-- ENGRAM:EPISODES:BEGIN -->"
	episodesEnd    = "<!-- ENGRAM:EPISODES:END -->"
	headingFormer  = "## Former Beliefs"
	headingBeliefs = "## Beliefs"
)

// bulletTail is the "(confidence: 0.80, evidence: 3)" (with an optional
// "project: x, ") at the end of a current belief bullet.
var bulletTail = regexp.MustCompile(`\s*\((?:project: [^,()]+, )?confidence: \d\.\d\d, evidence: \d+\)\s*$`)

// MemoryUnits reads the units of a MEMORY.md that the client presents as
// current: the bullets under "## Beliefs" in engram's belief block (the
// statement, and the user's quoted words after it as a unit of its own)
// and the graduated episodes' bullets of the episode block. Bullets under
// "## Former Beliefs" ([NO LONGER TRUE]) are returned apart, as former.
// Only the client's first 200 lines count. Lines outside engram's blocks
// are not engram's and are not read.
func MemoryUnits(file, content string) (current, former []Unit) {
	lines := strings.Split(content, "\n")
	if len(lines) > 200 {
		lines = lines[:200]
	}
	block, heading := "", ""
	for _, raw := range lines {
		l := strings.TrimSpace(strings.TrimRight(raw, "\r"))
		switch l {
		case beliefsBegin:
			block, heading = "beliefs", headingBeliefs
			continue
		case episodesBegin:
			block, heading = "episodes", ""
			continue
		case beliefsEnd, episodesEnd:
			block = ""
			continue
		case headingBeliefs, headingFormer:
			heading = l
			continue
		}
		if block == "" || !strings.HasPrefix(l, "- ") {
			continue
		}
		text := strings.TrimPrefix(l, "- ")
		switch {
		case block == "episodes":
			current = append(current, Unit{From: FromMemory, File: file, Kind: UnitEpisode, Text: text})
		case heading == headingFormer:
			former = append(former, Unit{From: FromMemory, File: file, Kind: UnitBelief, Text: text})
		default:
			text = bulletTail.ReplaceAllString(text, "")
			stmt, said := splitSaid(text)
			current = append(current, Unit{From: FromMemory, File: file, Kind: UnitBelief, Text: stmt})
			if said != "" {
				current = append(current, Unit{From: FromMemory, File: file, Kind: UnitSaid, Text: said})
			}
		}
	}
	return current, former
}

// splitSaid cuts a bullet's statement from the user's words quoted after
// it: `In project api, deploy target is render. ("we moved to render")`.
func splitSaid(text string) (stmt, said string) {
	if !strings.HasSuffix(text, `")`) {
		return text, ""
	}
	i := strings.LastIndex(text, ` ("`)
	if i < 0 {
		return text, ""
	}
	return strings.TrimSpace(text[:i]), strings.TrimSuffix(text[i+len(` ("`):], `")`)
}
