package consolidate

import (
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
)

// A versioned value names one thing at one version: "python 3.12",
// "postgres 16", "kubernetes 1.30", "node v20", "aws provider 5.x". Two
// versions of one thing are two values of one slot, whatever each
// statement's subject: "We're on Python 3.9 in prod." (subject python) and
// "prod runs Python 3.12 since the base image bump" (subject "prod runs
// python") are the same slot, and the later one corrects the earlier.

// versionWord is a version: digits with dots, an optional leading "v",
// an "x" for a series and a short letter tail ("3.12", "v2", "5.x",
// "8.4lts" is not: "lts" is a word of its own).
var versionWord = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+)*(\.x)?[a-z]?$`)

// versioned splits a fact's value into the thing it names and its
// version: the value's last word is a version and the words before it (one
// to three, with a letter) are the thing.
func versioned(value string) (name, version string, ok bool) {
	ws := strings.Fields(value)
	if len(ws) < 2 || len(ws) > 4 || !versionWord.MatchString(ws[len(ws)-1]) {
		return "", "", false
	}
	name = strings.Join(ws[:len(ws)-1], " ")
	if !strings.ContainsFunc(name, func(r rune) bool { return r >= 'a' && r <= 'z' }) || versionWord.MatchString(ws[len(ws)-2]) {
		return "", "", false
	}
	return name, ws[len(ws)-1], true
}

// versionSlots gives a project fact of e whose value is a version of a
// thing ("python 3.12") the subject of the one active fact of the project
// that holds another version of that thing, when no active fact has the
// claim's own subject and the two subjects are one slot's: one of them is
// the thing itself, or one's words are all words of the other. Facts of
// other subjects stay apart ("the legacy cli runs node 18", "the web app
// runs node 20").
func (s *cycle) versionSlots(e *episode.Episode, claims []statedClaim) {
	if e.ProjectPath == "" {
		return
	}
	user := userText(e)
	for i := range claims {
		c := claims[i].c
		if c.class != classFact || c.polarity <= 0 || claims[i].global {
			continue
		}
		name, version, ok := versioned(c.object)
		if !ok || s.projectSlot(e.ProjectPath, c) {
			continue
		}
		var slot string
		for _, id := range s.order {
			b := s.beliefs[id]
			bc, ok := beliefClaim(b)
			if b.Status != belief.StatusActive || !ok || bc.class != classFact || b.Scope != episode.ScopeProject ||
				b.ProjectPath != e.ProjectPath || hasEvidence(b, e.ID) || bc.subject == c.subject {
				continue
			}
			bn, bv, ok := versioned(bc.object)
			if !ok || bn != name || bv == version || !oneSlot(bc.subject, c.subject, name) {
				continue
			}
			if slot != "" && slot != bc.subject {
				slot = "" // two slots hold the thing: which one is meant is not known
				break
			}
			slot = bc.subject
		}
		if slot == "" {
			continue
		}
		claims[i].c.subject = slot
		claims[i].display = cmp.Or(asWritten(user, slot), slot)
	}
}

// oneSlot reports whether subjects a and b of two versions of the thing
// name are one slot's: one of them is the thing, or one's words are all
// words of the other ("database", "prod database").
func oneSlot(a, b, name string) bool {
	if a == name || b == name {
		return true
	}
	aw, bw := strings.Fields(a), strings.Fields(b)
	within := func(x, y []string) bool {
		return len(x) > 0 && !slices.ContainsFunc(x, func(w string) bool { return !slices.Contains(y, w) })
	}
	return within(aw, bw) || within(bw, aw)
}
