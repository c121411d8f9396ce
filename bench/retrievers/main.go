// Command retrievers measures standard retrievers on a LoCoMo-format file,
// outside engram, with engram's scoring rules: what plain BM25, the sentence
// embedder alone and their fusions reach at a fixed budget, over single
// dialog turns and over the exchanges (pairs of turns) engram stores. It
// puts bench/locomo's figures for engram in context: how far a better
// ranking of the same units, with the same embedder, could go.
//
//	go run ./bench/retrievers -data ../shared/eval/locomo-dev.json -model DIR [-budgets 600,1000]
//
// DIR holds the model in the Hugging Face layout (tokenizer.json,
// config.json, model.fp16.safetensors), as ENGRAM_EMBED_MODEL_DIR does; it
// is converted once into a temporary directory.
//
// Units are embedded as engram embeds them: a turn as "Speaker: text", an
// exchange as "User: A: … Assistant: B: …" (BiteText's form), the question
// as EmbedQuery does. BM25 is bench/internal/benchkit's (Porter, k1=1.2,
// b=0.75). A fusion is w·BM25/max + (1−w)·cosine over the conversation's
// units. "+next" appends to each unit the turn that follows it in its
// session. "feedback N" ranks twice: the second time the question's vector
// plus the mean vector of the first ranking's top N units (pseudo-relevance
// feedback). Units are packed in rank order until the next does not fit
// (benchkit.Pack); an evidence turn is reached when >= 60% of its distinct
// content words are in the packed text (benchkit.WordSet.Hit). Categories
// 1-4; questions without evidence are skipped. Recall is the share of all
// evidence turns reached; "per quest" averages each question's share of
// its evidence turns over the questions. The file is read as
// bench/locomo reads it (bench/internal/locomodata: malformed evidence ids
// repaired).
//
// The data's licence (CC BY-NC) forbids copying it into this repository:
// this prints figures only.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/bench/internal/locomodata"
	"github.com/engram-memory/engram/internal/embed/minilm"
)

// scheme is one retriever: which units it ranks, how it scores them, and
// whether each unit carries the turn after it.
type scheme struct {
	name  string
	turns bool    // single turns, else exchanges
	w     float64 // BM25's weight in the fusion (1: BM25 alone, 0: cosine alone)
	next  bool
	half  bool // an exchange's cosine is the better of its two turns'
	prf   int  // pseudo-relevance feedback: the top prf units' mean vector is added to the question's
}

var schemes = []scheme{
	{name: "BM25 turns", turns: true, w: 1},
	{name: "BM25 turns +next", turns: true, w: 1, next: true},
	{name: "MiniLM turns", turns: true, w: 0},
	{name: "0.2 BM25 + 0.8 cos, turns", turns: true, w: 0.2},
	{name: "0.4 BM25 + 0.6 cos, turns", turns: true, w: 0.4},
	{name: "0.4 BM25 + 0.6 cos, turns +next", turns: true, w: 0.4, next: true},
	{name: "BM25 exchanges", w: 1},
	{name: "MiniLM exchanges", w: 0},
	{name: "0.4 BM25 + 0.6 cos, exchanges", w: 0.4},
	{name: "0.4 BM25 + 0.6 cos, exchanges +next", w: 0.4, next: true},
	{name: "0.4 BM25 + 0.6 best turn cos, exchanges", w: 0.4, half: true},
	{name: "0.2 BM25 + 0.8 cos, turns, feedback 3", turns: true, w: 0.2, prf: 3},
	{name: "0.2 BM25 + 0.8 cos, turns, feedback 5", turns: true, w: 0.2, prf: 5},
	{name: "0.4 BM25 + 0.6 cos, exchanges, feedback 3", w: 0.4, prf: 3},
	{name: "0.4 BM25 + 0.6 cos, exchanges +next, feedback 3", w: 0.4, prf: 3, next: true},
}

func main() {
	data := flag.String("data", "", "LoCoMo-format file (required)")
	model := flag.String("model", "", "the sentence embedder's directory, Hugging Face layout (required)")
	budgetList := flag.String("budgets", "600,1000", "token budgets (tokens = characters / 4), comma-separated")
	flag.Parse()
	if *data == "" || *model == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/retrievers -data FILE -model DIR [-budgets 600,1000]")
		os.Exit(2)
	}
	var budgets []int
	for _, s := range strings.Split(*budgetList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "retrievers: -budgets: %q is not a positive number of tokens\n", s)
			os.Exit(2)
		}
		budgets = append(budgets, n)
	}
	if err := run(*data, *model, budgets); err != nil {
		fmt.Fprintln(os.Stderr, "retrievers:", err)
		os.Exit(1)
	}
}

// tally counts evidence reached per category, each question's share of
// its evidence reached, and the tokens packed.
type tally struct {
	hit, total [5]int
	share      [5]float64 // sum over questions
	asked      [5]int     // questions with evidence
	tokens     float64
	questions  int
}

func run(dataPath, modelDir string, budgets []int) error {
	data, err := locomodata.Load(dataPath)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "retrievers-model-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := minilm.Install(modelDir, tmp, false); err != nil {
		return fmt.Errorf("model %s: %w", modelDir, err)
	}
	m, err := minilm.Open(tmp)
	if err != nil {
		return err
	}
	defer m.Close()

	res := map[string]*tally{}
	key := func(s scheme, b int) string { return fmt.Sprintf("%s@%d", s.name, b) }
	for _, s := range schemes {
		for _, b := range budgets {
			res[key(s, b)] = &tally{}
		}
	}
	for _, smp := range data {
		c := newConversation(smp)
		if err := c.embed(m); err != nil {
			return err
		}
		for _, q := range smp.QA {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			ev := c.evidence(locomodata.ParseEvidence(q.Evidence).IDs)
			if len(ev) == 0 {
				continue
			}
			qv, err := m.EmbedQuery(context.Background(), q.Question)
			if err != nil {
				return err
			}
			for _, s := range schemes {
				docs, order := c.rank(s, q.Question, qv)
				if s.prf > 0 {
					vecs := c.exVec
					if s.turns {
						vecs = c.turnVec
					}
					q2 := append([]float32(nil), qv...)
					for _, i := range order[:min(s.prf, len(order))] {
						for d := range q2 {
							q2[d] += vecs[i][d] / float32(s.prf)
						}
					}
					docs, order = c.rank(s, q.Question, q2)
				}
				for _, b := range budgets {
					packed := benchkit.Pack(docs, order, 4*b)
					t := res[key(s, b)]
					t.tokens += benchkit.Tokens(packed)
					t.questions++
					ws := benchkit.NewWordSet(packed)
					n := 0
					for _, i := range ev {
						t.total[q.Category]++
						if ws.Hit(c.turns[i].Text) {
							t.hit[q.Category]++
							n++
						}
					}
					t.share[q.Category] += float64(n) / float64(len(ev))
					t.asked[q.Category]++
				}
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %d turns, %d exchanges\n", smp.ID, len(c.turns), len(c.exchanges))
	}
	for _, b := range budgets {
		fmt.Printf("\nevidence recall at %d tokens, categories 1-4 (multi-hop, temporal, open-domain, single-hop):\n", b)
		fmt.Printf("%-42s %7s %7s %7s %7s %7s %8s %9s\n", "retriever", "1-4", "1", "2", "3", "4", "tok mean", "per quest")
		for _, s := range schemes {
			t := res[key(s, b)]
			var h, n, asked int
			var sh float64
			for k := 1; k <= 4; k++ {
				h += t.hit[k]
				n += t.total[k]
				sh += t.share[k]
				asked += t.asked[k]
			}
			fmt.Printf("%-42s %7.3f %7.3f %7.3f %7.3f %7.3f %8.0f %9.3f\n", s.name, ratio(h, n),
				ratio(t.hit[1], t.total[1]), ratio(t.hit[2], t.total[2]), ratio(t.hit[3], t.total[3]), ratio(t.hit[4], t.total[4]),
				t.tokens/float64(max(1, t.questions)), sh/float64(max(1, asked)))
		}
	}
	return nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// exchange is a pair of consecutive turns of a session (b < 0: a last turn
// alone), as the LoCoMo harness captures them.
type exchange struct{ a, b int }

type conversation struct {
	turns     []locomodata.Turn
	text      []string // "Speaker: text"
	next      []int    // the turn after each turn in its session, or -1
	exchanges []exchange
	exText    []string
	byID      map[string]int
	turnVec   [][]float32
	exVec     [][]float32
	bmTurns   *benchkit.BM25
	bmEx      *benchkit.BM25
}

func newConversation(s locomodata.Sample) *conversation {
	c := &conversation{byID: map[string]int{}}
	for _, ses := range s.Sessions {
		start := len(c.turns)
		for i, t := range ses.Turns {
			c.byID[t.DiaID] = len(c.turns)
			c.turns = append(c.turns, t)
			c.text = append(c.text, t.Speaker+": "+t.Text)
			if i+1 < len(ses.Turns) {
				c.next = append(c.next, len(c.turns))
			} else {
				c.next = append(c.next, -1)
			}
		}
		for i := start; i < len(c.turns); i += 2 {
			e := exchange{a: i, b: i + 1}
			if e.b >= len(c.turns) {
				e.b = -1
			}
			c.exchanges = append(c.exchanges, e)
			t := "User: " + c.text[e.a]
			if e.b >= 0 {
				t += " Assistant: " + c.text[e.b]
			}
			c.exText = append(c.exText, t)
		}
	}
	c.bmTurns = benchkit.NewBM25(c.text)
	c.bmEx = benchkit.NewBM25(c.exText)
	return c
}

func (c *conversation) embed(m *minilm.Model) error {
	var err error
	docs := minilm.Documents{Model: m}
	if c.turnVec, err = docs.Embed(context.Background(), c.text); err != nil {
		return err
	}
	c.exVec, err = docs.Embed(context.Background(), c.exText)
	return err
}

// evidence resolves a question's evidence ids (ParseEvidence's) to turns;
// ids of no turn are skipped.
func (c *conversation) evidence(ids []string) []int {
	var out []int
	for _, id := range ids {
		if i, ok := c.byID[id]; ok {
			out = append(out, i)
		}
	}
	return out
}

// rank returns the scheme's documents and their order, best first.
func (c *conversation) rank(s scheme, q string, qv []float32) ([]string, []int) {
	n := len(c.exchanges)
	if s.turns {
		n = len(c.turns)
	}
	bm := make([]float64, n)
	cs := make([]float64, n)
	top := 0.0
	for i := range n {
		if s.turns {
			bm[i] = c.bmTurns.Score(q, i)
			cs[i] = dot(qv, c.turnVec[i])
		} else {
			bm[i] = c.bmEx.Score(q, i)
			cs[i] = dot(qv, c.exVec[i])
			if e := c.exchanges[i]; s.half {
				cs[i] = dot(qv, c.turnVec[e.a])
				if e.b >= 0 {
					cs[i] = math.Max(cs[i], dot(qv, c.turnVec[e.b]))
				}
			}
		}
		top = math.Max(top, bm[i])
	}
	score := make([]float64, n)
	docs := make([]string, n)
	for i := range n {
		b := 0.0
		if top > 0 {
			b = bm[i] / top
		}
		score[i] = s.w*b + (1-s.w)*cs[i]
		last := i
		if s.turns {
			docs[i] = c.text[i]
		} else {
			docs[i] = c.exText[i]
			last = c.exchanges[i].a
			if c.exchanges[i].b >= 0 {
				last = c.exchanges[i].b
			}
		}
		if s.next && c.next[last] >= 0 {
			docs[i] += " " + c.text[c.next[last]]
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	if s.w == 1 {
		// BM25 alone ranks only what shares a term (benchkit.BM25.Rank).
		keep := order[:0]
		for _, i := range order {
			if bm[i] > 0 {
				keep = append(keep, i)
			}
		}
		order = keep
	}
	sort.SliceStable(order, func(x, y int) bool { return score[order[x]] > score[order[y]] })
	return docs, order
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}
