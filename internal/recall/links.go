package recall

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Links between beliefs, for the prompt hook: the worker writes, for every
// belief a recollection file carries, the beliefs linked to it that a
// recollection file carries too (recall/links.json); recall adds the
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

// LinksPath is the links file of a home.
func LinksPath(home string) string { return filepath.Join(Dir(home), "links.json") }

// SaveLinks writes the links file (0600, atomically).
func SaveLinks(home string, links map[string][]Linked) error {
	data, err := json.Marshal(links)
	if err != nil {
		return err
	}
	return WriteAtomic(LinksPath(home), data)
}

// LoadLinks reads the links file; a missing or broken one is no links.
func LoadLinks(home string) map[string][]Linked {
	data, err := os.ReadFile(LinksPath(home))
	if err != nil {
		return nil
	}
	var m map[string][]Linked
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	return m
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
