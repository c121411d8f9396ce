package recall

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Links between beliefs, for the prompt hook: the worker writes, for every
// belief a recollection file carries, the beliefs linked to it that a
// recollection file carries too (recall/graph.json); recall adds the
// linked neighbours of its top beliefs at LinkDiscount of their parent's
// score, and the belief bites are chosen from the lot as before, within
// the same limits. The hook reads one small file and opens no database.

// LinkDiscount is a linked neighbour's share of its parent's score.
const LinkDiscount = 0.8

// LinkParents is how many of the top beliefs bring their neighbours.
const LinkParents = 3

// Linked is a belief linked to another, with what a bite of it shows.
type Linked struct {
	ID          string    `json:"id"`
	Text        string    `json:"text"`
	Project     string    `json:"project,omitempty"`
	ProjectPath string    `json:"project_path,omitempty"`
	At          time.Time `json:"at,omitzero"`
	Confidence  float32   `json:"confidence"`
	Evidence    int32     `json:"evidence"`
}

// Graph is what the worker precomputes about beliefs for the prompt hook:
// each belief's links, and the subjects beliefs are about with the
// memories about each (the beliefs, and the episodes that support them).
type Graph struct {
	Links    map[string][]Linked `json:"links,omitempty"`
	Subjects map[string][]string `json:"subjects,omitempty"`
}

// GraphPath is the graph file of a home.
func GraphPath(home string) string { return filepath.Join(Dir(home), "graph.json") }

// SaveGraph writes the graph file (0600, atomically).
func SaveGraph(home string, g Graph) error {
	data, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return WriteAtomic(GraphPath(home), data)
}

// LoadGraph reads the graph file; a missing or broken one is an empty
// graph.
func LoadGraph(home string) Graph {
	var g Graph
	data, err := os.ReadFile(GraphPath(home))
	if err != nil {
		return Graph{}
	}
	if json.Unmarshal(data, &g) != nil {
		return Graph{}
	}
	return g
}

// ExpandLinks adds to res the beliefs linked to its top LinkParents
// beliefs that it does not hold yet and that the prompt's project may see
// (its own and global ones), each at LinkDiscount of its parent's score,
// and orders the beliefs by score again.
func ExpandLinks(res *Result, links map[string][]Linked, projectPath string) {
	if len(links) == 0 || len(res.Beliefs) == 0 {
		return
	}
	have := map[string]bool{}
	for _, b := range res.Beliefs {
		have[b.ID] = true
	}
	for _, e := range res.Episodes {
		have[e.ID] = true
	}
	var added []Candidate
	for _, p := range res.Beliefs[:min(LinkParents, len(res.Beliefs))] {
		for _, l := range links[p.ID] {
			if have[l.ID] || (l.ProjectPath != "" && l.ProjectPath != projectPath) {
				continue
			}
			have[l.ID] = true
			added = append(added, Candidate{Item: Item{Kind: KindBelief, ID: l.ID, Text: l.Text, Project: l.Project,
				ProjectPath: l.ProjectPath, At: l.At, Confidence: l.Confidence, Evidence: l.Evidence},
				Score: LinkDiscount * p.Score, Linked: p.ID})
		}
	}
	if len(added) == 0 {
		return
	}
	res.Beliefs = append(res.Beliefs, added...)
	slices.SortStableFunc(res.Beliefs, func(a, b Candidate) int { return cmp.Compare(b.Score, a.Score) })
}

// SubjectBoost is the bounded boost of a memory about a subject the prompt
// names: its score is multiplied by 1 + SubjectBoost, once however many
// subjects it is about.
const SubjectBoost = 0.15

// BoostSubjects raises the score of the found beliefs and episodes about a
// subject the prompt names (a whole word or words of it, any case) by
// SubjectBoost, and orders each list by score again. It finds nothing
// new: it only reorders what recall found.
func BoostSubjects(res *Result, subjects map[string][]string, prompt string) {
	if len(subjects) == 0 || len(res.Beliefs)+len(res.Episodes) == 0 {
		return
	}
	p := " " + strings.Join(subjectWords(clipQuery(prompt)), " ") + " "
	about := map[string]bool{}
	for subj, ids := range subjects {
		if strings.Contains(p, " "+subj+" ") {
			for _, id := range ids {
				about[id] = true
			}
		}
	}
	if len(about) == 0 {
		return
	}
	for _, list := range []*[]Candidate{&res.Beliefs, &res.Episodes} {
		changed := false
		for i := range *list {
			if c := &(*list)[i]; about[c.ID] {
				c.Score *= 1 + SubjectBoost
				changed = true
			}
		}
		if changed {
			slices.SortStableFunc(*list, func(a, b Candidate) int { return cmp.Compare(b.Score, a.Score) })
		}
	}
}

// SubjectKey is how a subject is matched in a prompt: lower case, words
// joined by single spaces ("" for one too short to name anything).
func SubjectKey(s string) string {
	k := strings.Join(subjectWords(s), " ")
	if len(k) < 3 {
		return ""
	}
	return k
}

// subjectWords are the lower-case words of s, singular; a word keeps the
// dots, dashes, pluses and hashes inside it (fly.io, c++, c#), not a
// sentence's full stop.
func subjectWords(s string) []string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '.' && r != '-' && r != '+' && r != '#'
	})
	out := ws[:0]
	for _, w := range ws {
		w = strings.Trim(w, ".-")
		// A plural names the same subject ("pytest plugins", the belief's
		// "pytest plugin").
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
