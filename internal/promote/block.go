package promote

import (
	"regexp"
	"strings"
)

// The markers around engram's blocks. Claude Code strips HTML comments
// before the file reaches the model, so they cost a line each but no
// attention.
const (
	BeliefsBegin  = "<!-- ENGRAM:BELIEFS:BEGIN -->"
	BeliefsEnd    = "<!-- ENGRAM:BELIEFS:END -->"
	EpisodesBegin = "<!-- ENGRAM:EPISODES:BEGIN -->"
	EpisodesEnd   = "<!-- ENGRAM:EPISODES:END -->"
)

// Headings inside the belief block.
const (
	headingBeliefs = "## Beliefs"
	headingFormer  = "## Former Beliefs"
)

// The client's limits on MEMORY.md: only the first 200 lines (and about
// 25 KB) reach the model.
const (
	LineLimit = 200
	ByteLimit = 25000
)

// The client's reminder thresholds: past 160 lines or 20,000 characters
// (UTF-16 code units, as it counts them) it asks the model to shrink the
// file, and the model then deletes lines, engram's or anyone's. engram
// keeps the whole file under both: its blocks take only the room the rest
// of the file leaves, and shrink first (fewer, higher-ranked lines) as the
// rest grows; the rest is never touched.
const (
	ReminderLines = 160
	ReminderChars = 20000
)

// BeliefBlockMaxLines caps the belief block, markers included.
const BeliefBlockMaxLines = 30

// section is one dated section of graduated episodes.
type section struct {
	date    string   // YYYY-MM-DD
	bullets []string // whole lines without their line break ("- …")
}

// document is a MEMORY.md split into engram's blocks and everything else.
type document struct {
	// foreign is every byte that is not engram's, in order.
	foreign string
	// beliefs and episodes report whether a block of that kind was found
	// (whole, or damaged and cleaned up).
	beliefs, episodes bool
	// sections are the dated sections of the episode block (also those
	// recovered from around damaged markers).
	sections []section
	// damage describes markers that were missing a partner, repeated or
	// out of order.
	damage []string
	// nl is the line break the file uses ("\n" or "\r\n").
	nl string
}

type markerKind int

const (
	noMarker markerKind = iota
	beliefsBegin
	beliefsEnd
	episodesBegin
	episodesEnd
)

func markerOf(line string) markerKind {
	switch strings.TrimRight(strings.TrimLeft(line, " \t"), " \t\r\n") {
	case BeliefsBegin:
		return beliefsBegin
	case BeliefsEnd:
		return beliefsEnd
	case EpisodesBegin:
		return episodesBegin
	case EpisodesEnd:
		return episodesEnd
	}
	return noMarker
}

// splitLines cuts s into lines that keep their line breaks.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// countLines counts lines as the client does: a final line without a
// line break counts, the empty piece after a final line break does not.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// countChars counts s as the client counts characters: UTF-16 code units
// (a character outside the Basic Multilingual Plane is two).
func countChars(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 && r <= 0x10FFFF {
			n++
		}
	}
	return n
}

func bare(line string) string { return strings.TrimRight(line, "\r\n") }

var (
	activeBulletRe = regexp.MustCompile(`^- .+ \((project: [^,()]+, )?confidence: \d\.\d\d, evidence: \d+\)$`)
	formerBulletRe = regexp.MustCompile(`^- \[NO LONGER TRUE\] .+ \((project: [^,()]+, )?was: \d\.\d\d, now: \d\.\d\d, demoted: \d{4}-\d\d-\d\d\)$`)
	dateHeadingRe  = regexp.MustCompile(`^## (\d{4}-\d\d-\d\d)\s*$`)
)

// looksBelief reports whether a line is one engram writes in a belief
// block (blank lines aside).
func looksBelief(line string) bool {
	l := strings.TrimSpace(bare(line))
	return l == headingBeliefs || l == headingFormer || activeBulletRe.MatchString(l) || formerBulletRe.MatchString(l)
}

// looksEpisode reports whether a line belongs to a dated section.
func looksEpisode(line string) bool {
	l := strings.TrimSpace(bare(line))
	return dateHeadingRe.MatchString(l) || strings.HasPrefix(l, "- ")
}

func isBlank(line string) bool { return strings.TrimSpace(line) == "" }

// parse splits a MEMORY.md into engram's blocks and the rest. withEpisodes
// says whether the file carries an episode block (the global file); in
// other files the episode markers are left as they are.
//
// A block is whole when its kind has exactly one BEGIN and one END marker,
// in that order, with no marker of the other kind between them. Otherwise
// the block is damaged: its markers are dropped, and so are the lines next
// to them that engram writes in such a block (belief bullets and headings
// after a BEGIN and before an END; dated sections, which are kept, for the
// episode block). Everything else is foreign and kept byte for byte.
func parse(data string, withEpisodes bool) document {
	d := document{nl: "\n"}
	lines := splitLines(data)
	own := make([]bool, len(lines))
	kinds := make([]markerKind, len(lines))
	for i, l := range lines {
		kinds[i] = markerOf(l)
		if !withEpisodes && (kinds[i] == episodesBegin || kinds[i] == episodesEnd) {
			kinds[i] = noMarker
		}
	}

	type span struct{ from, to int } // inclusive
	block := func(begin, end markerKind, looks func(string) bool, name string, claimSections bool) []span {
		var begins, ends []int
		for i, k := range kinds {
			switch k {
			case begin:
				begins = append(begins, i)
			case end:
				ends = append(ends, i)
			}
		}
		if len(begins) == 0 && len(ends) == 0 {
			return nil
		}
		if len(begins) == 1 && len(ends) == 1 && begins[0] < ends[0] {
			clean := true
			for i := begins[0] + 1; i < ends[0]; i++ {
				if kinds[i] != noMarker {
					clean = false
				}
			}
			if clean {
				for i := begins[0]; i <= ends[0]; i++ {
					own[i] = true
				}
				return []span{{begins[0] + 1, ends[0] - 1}}
			}
		}
		d.damage = append(d.damage, describeDamage(name, len(begins), len(ends)))
		var claimed []span
		isDate := func(l string) bool { return dateHeadingRe.MatchString(strings.TrimSpace(bare(l))) }
		// claimDown takes the run of engram's lines below a stray marker
		// (with the blank lines that end it: the block ends with one); a
		// run of sections must start with a date.
		claimDown := func(m int) {
			first, last := -1, -1
			i := m + 1
			for ; i < len(lines) && kinds[i] == noMarker && !own[i] && (isBlank(lines[i]) || looks(lines[i])); i++ {
				if isBlank(lines[i]) {
					continue
				}
				if claimSections && first < 0 && !isDate(lines[i]) {
					break
				}
				if first < 0 {
					first = i
				}
				last = i
			}
			if first < 0 {
				return
			}
			for last+1 < len(lines) && kinds[last+1] == noMarker && !own[last+1] && isBlank(lines[last+1]) {
				last++
			}
			for k := m + 1; k <= last; k++ {
				own[k] = true
			}
			claimed = append(claimed, span{first, last})
		}
		// claimUp takes the run of engram's lines above a stray marker, from
		// its first line of engram's (its first date for sections) down.
		claimUp := func(m int) {
			first, last := -1, -1
			for i := m - 1; i >= 0 && kinds[i] == noMarker && !own[i] && (isBlank(lines[i]) || looks(lines[i])); i-- {
				if isBlank(lines[i]) {
					continue
				}
				if last < 0 {
					last = i
				}
				if !claimSections || isDate(lines[i]) {
					first = i
				}
			}
			if first < 0 {
				return
			}
			for k := first; k < m; k++ {
				own[k] = true
			}
			claimed = append(claimed, span{first, last})
		}
		for i, k := range kinds {
			if k == begin || k == end {
				own[i] = true
			}
		}
		for i, k := range kinds {
			if k == begin || k == end {
				claimDown(i)
				claimUp(i)
			}
		}
		if len(claimed) == 0 {
			claimed = append(claimed, span{0, -1})
		}
		return claimed
	}

	if spans := block(beliefsBegin, beliefsEnd, looksBelief, "belief", false); spans != nil {
		d.beliefs = true
	}
	if withEpisodes {
		if spans := block(episodesBegin, episodesEnd, looksEpisode, "episode", true); spans != nil {
			d.episodes = true
			for _, s := range spans {
				if s.to >= s.from {
					d.sections = appendSections(d.sections, lines[s.from:s.to+1])
				}
			}
		}
	}

	var b strings.Builder
	for i, l := range lines {
		if !own[i] {
			b.WriteString(l)
		}
	}
	d.foreign = b.String()
	if strings.Contains(d.foreign, "\r\n") {
		d.nl = "\r\n"
	}
	return d
}

func describeDamage(name string, begins, ends int) string {
	switch {
	case begins == 0:
		return name + " block: END marker without BEGIN"
	case ends == 0:
		return name + " block: BEGIN marker without END"
	case begins > 1 || ends > 1:
		return name + " block: markers repeated"
	}
	return name + " block: markers out of order or interleaved"
}

// appendSections parses dated sections out of lines: a "## YYYY-MM-DD"
// heading starts one; its non-blank lines are its bullets. Lines before
// the first heading are dropped. Sections of the same date merge.
func appendSections(secs []section, lines []string) []section {
	cur := -1
	for _, l := range lines {
		t := strings.TrimSpace(bare(l))
		if m := dateHeadingRe.FindStringSubmatch(t); m != nil {
			cur = -1
			for i := range secs {
				if secs[i].date == m[1] {
					cur = i
				}
			}
			if cur < 0 {
				secs = append(secs, section{date: m[1]})
				cur = len(secs) - 1
			}
			continue
		}
		if t == "" || cur < 0 {
			continue
		}
		secs[cur].bullets = append(secs[cur].bullets, t)
	}
	return secs
}

// renderBeliefs renders the belief block; empty when there is nothing to
// show (the block is then left out altogether).
func renderBeliefs(active, former []string, nl string) string {
	if len(active) == 0 && len(former) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(BeliefsBegin + nl)
	if len(active) > 0 {
		b.WriteString(headingBeliefs + nl + nl)
		for _, l := range active {
			if l != "" { // shown by another belief's bullet
				b.WriteString(l + nl)
			}
		}
		b.WriteString(nl)
	}
	if len(former) > 0 {
		b.WriteString(headingFormer + nl + nl)
		for _, l := range former {
			b.WriteString(l + nl)
		}
		b.WriteString(nl)
	}
	b.WriteString(BeliefsEnd + nl)
	return b.String()
}

// renderEpisodes renders the episode block; empty when there are no
// sections.
func renderEpisodes(secs []section, nl string) string {
	if len(secs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(EpisodesBegin + nl)
	for _, s := range secs {
		b.WriteString(renderSection(s, nl))
	}
	b.WriteString(EpisodesEnd + nl)
	return b.String()
}

// renderSection renders one dated section: heading, blank, bullets, blank.
func renderSection(s section, nl string) string {
	var b strings.Builder
	b.WriteString("## " + s.date + nl + nl)
	for _, l := range s.bullets {
		b.WriteString(l + nl)
	}
	b.WriteString(nl)
	return b.String()
}
