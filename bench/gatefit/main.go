// Command gatefit fits recall's gate: a logistic model of whether a memory
// is worth injecting for a prompt, on labelled (prompt, memory, relevant?)
// pairs from several sources, checked on a split it was not fitted on, and
// writes the policy the prompt hook, `engram-worker recall` and the MCP
// tools use (internal/recall/gate_policy.go, built in, and the same as
// gate.json).
//
//	go run ./bench/gatefit -locomo-homes DIR -prefeval-homes DIR2 -prompts FILE \
//		[-replay DIR3 -replay-prompts FILE] [-out internal/recall/gate.json -go internal/recall/gate_policy.go] \
//		[-dense-from internal/recall/gate.json]
//
// Two gates are fitted: the sentence embedder's and the lexical one
// (recall by words alone); -dense-from keeps the first as a policy file
// has it and fits the lexical one only.
//
// The stores are those the benchmarks keep: `bench/locomo -keep DIR` (one
// HOME per conversation) and `bench/prefeval -keep DIR2` (one per user),
// made with the sentence embedder (ENGRAM_EMBED_MODEL_DIR) for the dense
// model. Every prompt is asked of a store through recall.Recaller.Recall as
// the prompt hook asks it, and every candidate that reaches the gate is a
// row: its features (recall.GateView) and a label.
//
//   - LoCoMo questions (categories 1-4) of their own conversation's store:
//     a memory is relevant when an evidence turn reaches its text (the
//     turn's first 60 characters, normalised as bench/locomo does) or, a
//     belief, when 60% of its content words are an evidence turn's.
//   - PrefEval questions of the users' stores: relevant when 60% of the
//     preference's content words are in the memory's text (or, a belief,
//     60% of the belief's in the preference).
//   - Prompts about nothing in the store, every memory irrelevant: PrefEval
//     questions and real coding prompts (-prompts: bench/replay -prompts)
//     against the LoCoMo stores, coding prompts and LoCoMo questions against
//     PrefEval users' stores.
//   - Real coding prompts of their own project's store (-replay: the store
//     a bench/replay run left, asked as it was when each prompt was typed):
//     relevant when a hand label of bench/replay (labels/*.jsonl) calls the
//     memory useful for the prompt, else not (see own.go).
//
// Split (by source, never by sentence): LoCoMo conversations conv-26,
// conv-30, conv-41 and the PrefEval topics at even places in name order
// are fitted; conv-42, conv-43 and the other five topics are only checked;
// coding prompts by their session. A pair of prompt and store is fitted
// only when both are.
//
// The centroid of the hub features is the mean vector of the background
// prompts (-background, written for this purpose, plus the coding prompts
// of the fitted split). The threshold is the lowest at which the fitted
// split's prompts about nothing in the store stay silent -silence of the
// time; the figures at it, fitted and checked side by side, with the
// hand-set gate's on the same rows, go to stdout and into the model's
// Source.
//
// The data's licences (LoCoMo, PrefEval: CC BY-NC) forbid copying them into
// this repository: the policy holds weights, means and the centroid only.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/bench/internal/locomodata"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/recall"
)

// fitConvs are the LoCoMo conversations the gate is fitted on.
var fitConvs = map[string]bool{"conv-26": true, "conv-30": true, "conv-41": true}

// Row is one (prompt, memory) pair at the gate.
type Row struct {
	Source string    `json:"source"` // locomo, prefeval, unrelated
	Fit    bool      `json:"fit"`
	Prompt string    `json:"prompt"` // an id: source, store, question
	Label  bool      `json:"label"`
	Old    bool      `json:"old"` // what the hand-set gate decided
	Kind   string    `json:"kind"`
	X      []float64 `json:"x"`
}

type options struct {
	locomo, locomoHomes     string
	prefeval, prefevalHomes string
	prompts, background     string
	replay, replayPrompts   string
	replayLabels            string
	out, dump, features     string
	goOut                   string
	lexical, veto           bool
	denseFrom               string
	model                   string
	trees, depth            int
	rows                    string
	silence, l2             float64
	peUsers                 int
}

func main() {
	var o options
	flag.StringVar(&o.locomo, "locomo", "../shared/eval/locomo-dev.json", "LoCoMo-format file")
	flag.StringVar(&o.locomoHomes, "locomo-homes", "", "HOMEs a `bench/locomo -keep DIR` run left")
	flag.StringVar(&o.prefeval, "prefeval", "../shared/eval/prefeval-dev.json", "PrefEval-format file")
	flag.StringVar(&o.prefevalHomes, "prefeval-homes", "", "HOMEs a `bench/prefeval -keep DIR` run left")
	flag.StringVar(&o.prompts, "prompts", "", "real coding prompts, JSON lines of bench/replay -prompts (comma-separated files)")
	flag.StringVar(&o.replay, "replay", "", "a bench/replay -out directory: its prompts asked of their own project's store (source own)")
	flag.StringVar(&o.replayPrompts, "replay-prompts", "", "the prompts of -replay's input (bench/replay -prompts)")
	flag.StringVar(&o.replayLabels, "replay-labels", "bench/replay/labels/entirecontext-dc3c12e.jsonl,bench/replay/labels/entirecontext-c925dcc.jsonl", "hand-labelled bites of -replay's prompts (comma-separated files)")
	flag.StringVar(&o.background, "background", "bench/gatefit/background.txt", "background prompts, one per line (# comments)")
	flag.StringVar(&o.out, "out", "", "write the policy as JSON (internal/recall/gate.json) here; empty: only report")
	flag.StringVar(&o.goOut, "go", "", "write it as Go too (internal/recall/gate_policy.go, the built-in policy)")
	flag.StringVar(&o.dump, "dump", "", "also write the rows (JSON lines) here")
	flag.StringVar(&o.features, "features", strings.Join(denseFeatures, ","), "features of the dense model")
	flag.BoolVar(&o.lexical, "lexical", true, "also fit the model of recall without the sentence embedder")
	flag.Float64Var(&o.silence, "silence", 0.95, "share of prompts about nothing in the store that must get nothing, on the fitted split")
	flag.Float64Var(&o.l2, "l2", 1, "L2 penalty of the logistic fit")
	flag.IntVar(&o.peUsers, "unrelated-users", 3, "PrefEval users' stores the unrelated prompts are asked of")
	flag.StringVar(&o.rows, "rows", "", "fit on the rows of an earlier -dump instead of asking the stores (its centroid is recomputed)")
	flag.StringVar(&o.model, "model", "trees", "linear (logistic regression) or trees (boosted)")
	flag.IntVar(&o.trees, "trees", 100, "trees of the boosted model")
	flag.IntVar(&o.depth, "depth", 3, "depth of its trees")
	flag.StringVar(&o.denseFrom, "dense-from", "", "keep the sentence embedder's gate of this policy file (internal/recall/gate.json) and fit the lexical one only")
	flag.BoolVar(&o.veto, "veto", false, "fit on the candidates the hand-set gate passes only, and let the model veto them")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "gatefit:", err)
		os.Exit(1)
	}
}

var denseFeatures = []string{"belief", "coverage", "lexcos", "has_vec", "bm25", "has_words", "dense", "gap", "below_best", "hub",
	"centered", "prompt_hub", "stated", "confidence", "past", "many", "terms", "best_coverage", "belief_gap", "stated_gap", "cov_dense",
	"max_gap", "dense_rank", "crowd", "prompt_crowd"}

// allFeatures are what every row holds, in this order (-rows reads them
// back whatever -features picks).
var allFeatures = func() []string {
	s := recall.GateFeatures()
	sort.Strings(s)
	return s
}()

var lexicalFeatures = []string{"belief", "coverage", "lexcos", "has_vec", "bm25", "lexical", "stated", "confidence", "past", "many",
	"terms", "best_coverage"}

func run(o options) error {
	if o.locomoHomes == "" || o.prefevalHomes == "" {
		return errors.New("give -locomo-homes and -prefeval-homes")
	}
	ctx := context.Background()
	samples, err := locomodata.Load(o.locomo)
	if err != nil {
		return err
	}
	pe, err := loadPrefEval(o.prefeval)
	if err != nil {
		return err
	}
	coding, err := loadPrompts(o.prompts)
	if err != nil {
		return err
	}
	lmHome := func(id string) (engram, project string) {
		h := filepath.Join(o.locomoHomes, id)
		return filepath.Join(h, ".claude-memory"), filepath.Join(h, "src", benchkit.Sanitize(id))
	}
	users, err := filepath.Glob(filepath.Join(o.prefevalHomes, "user-*"))
	if err != nil || len(users) == 0 {
		return fmt.Errorf("no user-* homes under %s", o.prefevalHomes)
	}
	sort.Strings(users)
	peHome := func(u int) (engram, project string) {
		return filepath.Join(users[u], ".claude-memory"), filepath.Join(users[u], "src", "app")
	}
	eng0, _ := lmHome(samples[0].ID)
	model, err := minilm.Open(filepath.Join(eng0, "models", "minilm"))
	if err != nil {
		return fmt.Errorf("the sentence embedder of %s: %w", eng0, err)
	}
	defer model.Close()
	emb := &cached{m: model, vecs: map[string][]float32{}}

	// The centroid: background prompts and the fitted coding prompts.
	bg, err := readLines(o.background)
	if err != nil {
		return err
	}
	for _, p := range coding {
		if p.fit {
			bg = append(bg, p.text)
		}
	}
	centroid, norm, err := meanVector(ctx, emb, bg)
	if err != nil {
		return err
	}
	fmt.Printf("centroid of %d background prompts: length %.3f\n", len(bg), norm)

	denseNames := strings.Split(o.features, ",")
	var dense, lexical []Row
	if o.rows != "" {
		if dense, lexical, err = loadRows(o.rows); err != nil {
			return err
		}
		return fitAll(o, model.Name(), denseNames, dense, lexical, centroid, norm)
	}
	ask := func(engram, project, source, id, text string, fit bool, exclude map[string]bool, label func(c *recall.Candidate) bool) {
		prompts[id] = promptInfo{source: source, fit: fit}
		for _, withDense := range []bool{true, false} {
			if !withDense && !o.lexical {
				continue
			}
			r := recall.New(engram, recall.OpenIndex(engram))
			r.SkipUnknown = true
			if withDense {
				r.Dense = emb
				r.Policy = &recall.Policy{Gates: []recall.GateModel{{Embedder: model.Name(), Centroid: centroid, CentroidNorm: norm}}}
			} else {
				r.Policy = nil
			}
			r.Observe = func(v *recall.GateView, c *recall.Candidate, passed bool) {
				row := Row{Source: source, Fit: fit, Prompt: id, Label: label(c), Old: passed, Kind: kindName(c)}
				for _, f := range allFeatures {
					row.X = append(row.X, v.Value(f, c))
				}
				if withDense {
					dense = append(dense, row)
				} else {
					lexical = append(lexical, row)
				}
			}
			r.Recall(ctx, recall.Query{Text: text, ProjectPath: project, Now: time.Now(), Exclude: exclude})
			if db, ok := r.DB.(interface{ Close() error }); ok {
				db.Close()
			}
		}
	}
	none := func(*recall.Candidate) bool { return false }

	// LoCoMo: each conversation's questions of its own store.
	for _, s := range samples {
		engram, project := lmHome(s.ID)
		turns := map[string]string{}
		for _, ss := range s.Sessions {
			for _, t := range ss.Turns {
				turns[t.DiaID] = t.Text
			}
		}
		for qi, q := range s.QA {
			if q.Category < 1 || q.Category > 4 {
				continue
			}
			var ev []string
			for _, id := range locomodata.ParseEvidence(q.Evidence).IDs {
				if t, ok := turns[id]; ok {
					ev = append(ev, t)
				}
			}
			if len(ev) == 0 {
				continue
			}
			ask(engram, project, "locomo", fmt.Sprintf("locomo/%s/%d", s.ID, qi), q.Question, fitConvs[s.ID], nil, func(c *recall.Candidate) bool {
				return locomoRelevant(c, ev)
			})
		}
		fmt.Fprintf(os.Stderr, "locomo %s: %d dense rows so far\n", s.ID, len(dense))
	}
	// PrefEval: each user's questions of their own store.
	for u := range users {
		engram, project := peHome(u)
		for _, t := range pe.topics {
			it := pe.items[t][u%len(pe.items[t])]
			ask(engram, project, "prefeval", fmt.Sprintf("prefeval/%d/%s", u, t), it.Question, pe.fit[t], nil, func(c *recall.Candidate) bool {
				return prefRelevant(c, it.Preference)
			})
		}
	}
	fmt.Fprintf(os.Stderr, "prefeval: %d dense rows so far\n", len(dense))
	// Prompts about nothing in the store.
	for _, s := range samples {
		engram, project := lmHome(s.ID)
		for _, t := range pe.topics {
			if pe.fit[t] != fitConvs[s.ID] {
				continue
			}
			for i, it := range pe.items[t] {
				ask(engram, project, "unrelated", fmt.Sprintf("unrelated/pe-%s-%d/%s", t, i, s.ID), it.Question, pe.fit[t], nil, none)
			}
		}
		for i, p := range coding {
			if p.fit != fitConvs[s.ID] {
				continue
			}
			ask(engram, project, "unrelated", fmt.Sprintf("unrelated/code-%d/%s", i, s.ID), p.text, p.fit, nil, none)
		}
		fmt.Fprintf(os.Stderr, "unrelated %s: %d dense rows so far\n", s.ID, len(dense))
	}
	for u := 0; u < min(o.peUsers, len(users)); u++ {
		engram, project := peHome(u)
		for i, p := range coding {
			ask(engram, project, "unrelated", fmt.Sprintf("unrelated/code-%d/user-%d", i, u), p.text, p.fit, nil, none)
		}
		for _, s := range samples {
			for qi, q := range s.QA {
				if q.Category >= 1 && q.Category <= 4 && qi%3 == u%3 {
					ask(engram, project, "unrelated", fmt.Sprintf("unrelated/%s-%d/user-%d", s.ID, qi, u), q.Question, fitConvs[s.ID], nil, none)
				}
			}
		}
	}
	if o.replay != "" {
		if err := askOwn(ctx, o.replay, o.replayPrompts, o.replayLabels, ask); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "own: %d dense rows so far\n", len(dense))
	}
	fmt.Fprintf(os.Stderr, "all: %d dense rows, %d lexical rows\n", len(dense), len(lexical))
	if o.dump != "" {
		if err := dumpRows(o.dump, dense, lexical); err != nil {
			return err
		}
	}

	return fitAll(o, model.Name(), denseNames, dense, lexical, centroid, norm)
}

func fitAll(o options, name string, denseNames []string, dense, lexical []Row, centroid []float32, norm float64) error {
	pol := recall.Policy{}
	if o.denseFrom != "" {
		// The gate of the sentence embedder as it was fitted before: a fit
		// of the other one changes nothing of it.
		kept, err := recall.LoadPolicy(o.denseFrom)
		if err != nil {
			return err
		}
		g := kept.Gate(name)
		if g == nil {
			return fmt.Errorf("%s holds no gate of %s", o.denseFrom, name)
		}
		fmt.Printf("\n== gate %s: kept from %s\n", name, o.denseFrom)
		pol.Gates = append(pol.Gates, *g)
	} else {
		dm, err := fitGate(name, denseNames, dense, o, centroid, norm)
		if err != nil {
			return err
		}
		pol.Gates = append(pol.Gates, dm)
	}
	if o.lexical {
		lm, err := fitGate("", lexicalFeatures, lexical, o, nil, 0)
		if err != nil {
			return err
		}
		pol.Gates = append(pol.Gates, lm)
	}
	return writePolicy(pol, o.out, o.goOut)
}

func kindName(c *recall.Candidate) string {
	if c.Kind == recall.KindBelief {
		return "belief"
	}
	return "episode"
}

// locomoRelevant: an evidence turn reaches the memory's text, or most of a
// belief's words are an evidence turn's.
func locomoRelevant(c *recall.Candidate, ev []string) bool {
	text := benchkit.Normalize(c.Text + " " + c.Detail)
	for _, t := range ev {
		if c.Kind == recall.KindBelief {
			if beliefHit(benchkit.NewWordSet(t), c.Text) {
				return true
			}
			continue
		}
		if n := benchkit.Normalize(t); n != "" && strings.Contains(text, benchkit.PrefixRunes(n, benchkit.LenientPrefix)) {
			return true
		}
	}
	return false
}

func prefRelevant(c *recall.Candidate, pref string) bool {
	if c.Kind == recall.KindBelief {
		return beliefHit(benchkit.NewWordSet(pref), c.Text)
	}
	return benchkit.NewWordSet(c.Text, c.Detail).Hit(pref)
}

// beliefHit: at least 60% of what a belief is about (its content words,
// its framing aside: "User prefers", "avoids") are words of the set.
func beliefHit(set benchkit.WordSet, belief string) bool {
	n, of := 0, 0
	for _, w := range benchkit.ContentWords(belief) {
		if recall.IsFramingWord(w) {
			continue
		}
		of++
		if set[w] {
			n++
		}
	}
	return of > 0 && 5*n >= 3*of
}

// cached embeds each prompt once (every prompt is asked of several
// stores).
type cached struct {
	m    *minilm.Model
	vecs map[string][]float32
}

func (c *cached) Name() string { return c.m.Name() }

func (c *cached) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if v, ok := c.vecs[text]; ok {
		return v, nil
	}
	v, err := c.m.EmbedQuery(ctx, text)
	if err == nil {
		c.vecs[text] = v
	}
	return v, err
}

// meanVector is the unit mean of the prompts' vectors and its length
// before.
func meanVector(ctx context.Context, emb *cached, texts []string) ([]float32, float64, error) {
	var sum []float64
	for _, t := range texts {
		v, err := emb.EmbedQuery(ctx, t)
		if err != nil {
			return nil, 0, err
		}
		if sum == nil {
			sum = make([]float64, len(v))
		}
		for i, x := range v {
			sum[i] += float64(x)
		}
	}
	if len(sum) == 0 {
		return nil, 0, errors.New("no background prompts")
	}
	var n2 float64
	for i := range sum {
		sum[i] /= float64(len(texts))
		n2 += sum[i] * sum[i]
	}
	n := math.Sqrt(n2)
	out := make([]float32, len(sum))
	for i := range sum {
		out[i] = float32(sum[i] / n)
	}
	return out, n, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

type prompt struct {
	text string
	fit  bool
}

// loadPrompts reads bench/replay -prompts files: distinct prompts, split
// by their session.
func loadPrompts(files string) ([]prompt, error) {
	var out []prompt
	seen := map[string]bool{}
	for _, path := range strings.Split(files, ",") {
		if path == "" {
			continue
		}
		lines, err := benchkit.ReadJSONL[promptLine](path)
		if err != nil {
			return nil, err
		}
		for _, l := range lines {
			p := strings.TrimSpace(l.Prompt)
			if p == "" || seen[p] || recall.Trivial(p) {
				continue
			}
			seen[p] = true
			out = append(out, prompt{text: p, fit: sessionFit(l.Session)})
		}
	}
	return out, nil
}

type peItem struct {
	Preference string `json:"preference"`
	Question   string `json:"question"`
}

type prefEval struct {
	topics []string
	items  map[string][]peItem
	fit    map[string]bool
}

func loadPrefEval(path string) (*prefEval, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Topics map[string][]peItem `json:"topics"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &prefEval{items: raw.Topics, fit: map[string]bool{}}
	for t := range raw.Topics {
		p.topics = append(p.topics, t)
	}
	sort.Strings(p.topics)
	for i, t := range p.topics {
		p.fit[t] = i%2 == 0
	}
	return p, nil
}

// loadRows reads a -dump file back, and the prompts it names.
func loadRows(path string) (dense, lexical []Row, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r dumpLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, nil, err
		}
		switch r.Model {
		case -1:
		case 0:
			dense = append(dense, r.Row)
		default:
			lexical = append(lexical, r.Row)
		}
		if r.Prompt != "" {
			prompts[r.Prompt] = promptInfo{source: r.Source, fit: r.Fit}
		}
	}
	return dense, lexical, sc.Err()
}

// dumpLine is a line of -dump: a row of model 0 (the sentence
// embedder's) or 1 (words alone), or -1 for a prompt asked.
type dumpLine struct {
	Model int `json:"model"`
	Row
}

func dumpRows(path string, sets ...[]Row) error {
	var lines []dumpLine
	for id, p := range prompts {
		lines = append(lines, dumpLine{-1, Row{Source: p.source, Fit: p.fit, Prompt: id}})
	}
	for i, rows := range sets {
		for _, r := range rows {
			lines = append(lines, dumpLine{i, r})
		}
	}
	return benchkit.WriteJSONL(path, lines)
}
