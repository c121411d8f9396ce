package recall

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/engram-memory/engram/internal/edge"
)

// Links between beliefs, for the prompt hook: the worker writes, for every
// belief a recollection file carries, the beliefs linked to it that a
// recollection file carries too, with each link's confidence
// (recall/graph.tsv); recall adds the linked neighbours of its top beliefs
// at LinkDiscount of their parent's score times the link's confidence,
// follows no link under edge.PruneFloor, and refines the order of the
// beliefs by a few PageRank iterations over the found beliefs and their
// neighbours (pageRank); the belief bites are chosen from the lot as
// before, within the same limits. The hook reads one small file and opens
// no database.

// Linked is a belief linked to another, with what a bite of it shows and
// the link's confidence (package edge).
type Linked struct {
	ID          string    `json:"id"`
	Text        string    `json:"text"`
	Project     string    `json:"project,omitempty"`
	ProjectPath string    `json:"project_path,omitempty"`
	At          time.Time `json:"at,omitzero"`
	Confidence  float32   `json:"confidence"`
	Evidence    int32     `json:"evidence"`
	// Edge is the link's confidence.
	Edge float32 `json:"edge_confidence"`
}

// Graph is what the worker precomputes about beliefs for the prompt hook:
// each belief's links, and the subjects beliefs are about with the
// memories about each (the beliefs, and the episodes that support them).
type Graph struct {
	Links    map[string][]Linked
	Subjects map[string][]string
}

// GraphPath is the graph file of a home. It is text, one record a line,
// fields separated by tabs, so that the hook finds what it needs without
// decoding the rest:
//
//	E <from> <to> <edge confidence> <confidence> <evidence> <at ms> <project> <project path> <text>
//	S <subject> <id>,<id>,…
//
// (ids and numbers hold no tab; texts have theirs folded into spaces). A
// link line of the format before links had a confidence ("L", without the
// edge's confidence) is not read: the worker writes the file again in its
// next cycle.
func GraphPath(home string) string { return filepath.Join(Dir(home), "graph.tsv") }

// SaveGraph writes the graph file (0600, atomically).
func SaveGraph(home string, g Graph) error {
	var b bytes.Buffer
	froms := slices.Sorted(maps.Keys(g.Links))
	for _, from := range froms {
		for _, l := range g.Links[from] {
			at := int64(0)
			if !l.At.IsZero() {
				at = l.At.UnixMilli()
			}
			fmt.Fprintf(&b, "E\t%s\t%s\t%g\t%g\t%d\t%d\t%s\t%s\t%s\n", field(from), field(l.ID), l.Edge, l.Confidence, l.Evidence, at,
				field(l.Project), field(l.ProjectPath), field(l.Text))
		}
	}
	for _, subj := range slices.Sorted(maps.Keys(g.Subjects)) {
		var ids []string
		for _, id := range g.Subjects[subj] {
			ids = append(ids, strings.ReplaceAll(field(id), ",", " "))
		}
		fmt.Fprintf(&b, "S\t%s\t%s\n", field(subj), strings.Join(ids, ","))
	}
	return WriteAtomic(GraphPath(home), b.Bytes())
}

// field folds tabs and line breaks into spaces.
func field(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// GraphFile is a graph file as read: it is searched, not decoded.
type GraphFile struct{ data []byte }

// LoadGraph reads the graph file; a missing one is an empty graph.
func LoadGraph(home string) *GraphFile {
	data, err := os.ReadFile(GraphPath(home))
	if err != nil {
		return &GraphFile{}
	}
	return &GraphFile{data: data}
}

// linksOf returns the links of one belief.
func (g *GraphFile) linksOf(id string) []Linked {
	var out []Linked
	key := []byte("E\t" + id + "\t")
	data := g.data
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return out
		}
		if i > 0 && data[i-1] != '\n' {
			data = data[i+len(key):]
			continue
		}
		line := data[i:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		data = data[i+len(line):]
		f := strings.SplitN(string(line), "\t", 10)
		if len(f) != 10 {
			continue
		}
		w, err := strconv.ParseFloat(f[3], 32)
		if err != nil || math.IsNaN(w) {
			continue
		}
		conf, _ := strconv.ParseFloat(f[4], 32)
		ev, _ := strconv.Atoi(f[5])
		at, _ := strconv.ParseInt(f[6], 10, 64)
		l := Linked{ID: f[2], Edge: float32(w), Confidence: float32(conf), Evidence: int32(ev), Project: f[7], ProjectPath: f[8], Text: f[9]}
		if at > 0 {
			l.At = time.UnixMilli(at)
		}
		out = append(out, l)
	}
}

// about returns the ids of the memories about the subjects a prompt's
// words (subjectWords, joined by single spaces and framed by spaces) name.
func (g *GraphFile) about(words string) map[string]bool {
	var out map[string]bool
	data := g.data
	for len(data) > 0 {
		line := data
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			line, data = data[:j], data[j+1:]
		} else {
			data = nil
		}
		if len(line) < 3 || line[0] != 'S' || line[1] != '\t' {
			continue
		}
		rest := line[2:]
		j := bytes.IndexByte(rest, '\t')
		if j <= 0 {
			continue
		}
		if !strings.Contains(words, " "+string(rest[:j])+" ") {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		for _, id := range strings.Split(string(rest[j+1:]), ",") {
			out[id] = true
		}
	}
	return out
}

// ExpandLinks adds to res the beliefs linked to its top LinkParents
// beliefs that it does not hold yet and that the prompt's project may see
// (its own and global ones), each at LinkDiscount of its parent's score
// times the link's confidence (of the parents it is linked to, the one
// that gives it the most), leaving out links under edge.PruneFloor; then
// it orders the beliefs by their rank over the links it read (pageRank).
func (s Settings) ExpandLinks(res *Result, g *GraphFile, projectPath string) {
	if g == nil || len(g.data) == 0 || len(res.Beliefs) == 0 {
		return
	}
	at := map[string]int{} // a belief's place in res.Beliefs
	for i, b := range res.Beliefs {
		at[b.ID] = i
	}
	have := map[string]bool{}
	for _, e := range res.Episodes {
		have[e.ID] = true
	}
	var links []graphEdge
	found := len(res.Beliefs)
	for pi := range min(s.LinkParents, found) {
		p := res.Beliefs[pi]
		for _, l := range g.linksOf(p.ID) {
			if !edge.Followed(float64(l.Edge)) || have[l.ID] || l.ID == p.ID {
				continue
			}
			score := s.LinkDiscount * p.Score * float64(l.Edge)
			i, ok := at[l.ID]
			switch {
			case !ok && l.ProjectPath != "" && l.ProjectPath != projectPath:
				continue
			case !ok:
				i = len(res.Beliefs)
				at[l.ID] = i
				res.Beliefs = append(res.Beliefs, Candidate{Item: Item{Kind: KindBelief, ID: l.ID, Text: l.Text, Project: l.Project,
					ProjectPath: l.ProjectPath, At: l.At, Confidence: l.Confidence, Evidence: l.Evidence},
					Score: score, Linked: p.ID, LinkConfidence: l.Edge})
			case i >= found && score > res.Beliefs[i].Score:
				c := &res.Beliefs[i]
				c.Score, c.Linked, c.LinkConfidence = score, p.ID, l.Edge
			}
			links = append(links, graphEdge{pi, i, float64(l.Edge)})
		}
	}
	if len(links) == 0 {
		return
	}
	rank := pageRank(res.Beliefs, links)
	for i := range res.Beliefs {
		res.Beliefs[i].Rank = rank[i]
	}
	slices.SortStableFunc(res.Beliefs, func(a, b Candidate) int { return cmp.Compare(b.Rank, a.Rank) })
}

// graphEdge is a link between two candidates (their places), of weight w.
type graphEdge struct {
	a, b int
	w    float64
}

// pageRank refines the order of candidates by the links between them:
// personalised PageRank, the personalisation the candidates' scores (a
// linked neighbour's being its share of its parent's), the links weighing
// by their confidence both ways, edge.PageRankIterations steps with
// damping edge.Damping from the scores themselves. A candidate without a
// link keeps its score; a group of linked ones keeps the sum of theirs
// and shares it out by the links, so the ranks stay on the scores' scale.
// A candidate's rank is the greater of its score and its PageRank: a
// belief linked to several of the found ones rises, and none falls below
// its own score. (Plain PageRank let a found belief whose one link led to
// a shared neighbour hand it most of its score and fall under unlinked
// beliefs of lower score: a belief found by its words pushed down by a
// neighbour.) It returns the candidates' ranks, in their order.
func pageRank(cands []Candidate, links []graphEdge) []float64 {
	n := len(cands)
	out := make([]float64, n) // each candidate's total link weight
	type arc struct {
		to int
		w  float64
	}
	adj := make([][]arc, n)
	seen := map[[2]int]bool{}
	for _, l := range links {
		a, b := min(l.a, l.b), max(l.a, l.b)
		if a == b || seen[[2]int{a, b}] || l.w <= 0 {
			continue
		}
		seen[[2]int{a, b}] = true
		adj[a] = append(adj[a], arc{b, l.w})
		adj[b] = append(adj[b], arc{a, l.w})
		out[a] += l.w
		out[b] += l.w
	}
	p := make([]float64, n)
	for i, c := range cands {
		p[i] = max(c.Score, 0)
	}
	r, next := slices.Clone(p), make([]float64, n)
	for range edge.PageRankIterations {
		for i := range next {
			next[i] = (1 - edge.Damping) * p[i]
		}
		for i, ai := range adj {
			if out[i] == 0 {
				next[i] += edge.Damping * r[i] // no link: it keeps what it has
				continue
			}
			for _, e := range ai {
				next[e.to] += edge.Damping * r[i] * e.w / out[i]
			}
		}
		r, next = next, r
	}
	for i := range r {
		r[i] = max(r[i], p[i])
	}
	return r
}

// BoostSubjects raises the score of the found beliefs and episodes about a
// subject the prompt names (a whole word or words of it, any case) by
// SubjectBoost, and orders each list by score again. It finds nothing
// new: it only reorders what recall found.
func (s Settings) BoostSubjects(res *Result, g *GraphFile, prompt string) {
	if g == nil || len(g.data) == 0 || len(res.Beliefs)+len(res.Episodes) == 0 {
		return
	}
	about := g.about(" " + strings.Join(subjectWords(clipQuery(prompt)), " ") + " ")
	if len(about) == 0 {
		return
	}
	for _, list := range []*[]Candidate{&res.Beliefs, &res.Episodes} {
		changed := false
		for i := range *list {
			if c := &(*list)[i]; about[c.ID] {
				c.Score *= 1 + s.SubjectBoost
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
