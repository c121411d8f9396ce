// Command storegen writes a synthetic engram store in the export format
// (JSON Lines, see internal/portable) for `engram-worker import`: N
// developer-memory episodes, then M beliefs, with local-embedder vectors so
// that recall can use them. The same flags and seed give the same bytes.
//
//	go run ./bench/storegen -episodes 100000 -beliefs 5000 -projects 4 -seed 1 > store.jsonl
//
// Vocabulary (vocab.go) comes from ranked word lists of programming terms,
// file paths, package names, commands and error messages drawn with a Zipf
// law, so that a few terms ("test", "file", "error", "go") are in most
// episodes and a long tail is rare. Summaries are 100–300 characters,
// contexts 1–3 KB; importance, types, scopes (the projects and global),
// access counts and occurred_at (over the year before -now) are spread.
// Beliefs are mostly active with confidence above 0.4.
//
// Helper commands serve bench/prompt-hook.sh:
//
//	storegen inputs -dir DIR [-cwd DIR]          the hook's stdin for each prompt of prompts.json
//	storegen injected < HOOK-OUTPUT              the bytes of additionalContext the hook printed
//	storegen hits -home DIR KIND=INPUT.json ...  the FTS query and hits of each prompt on a store
//	storegen report -raw DIR -out FILE.json ...  the summary table of the timings
//	storegen rebuild -home DIR                   rewrite a store's recollection files (a reused store
//	                                             made by an older engram), as the worker's cycle does
//	storegen progress < STATUS.json              where re-embedding by the sentence embedder stands
//	                                             (engram-worker status --json)
//	storegen settle -home DIR                    mark an imported store's consolidation as done
package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
)

func main() {
	cmd := ""
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	var err error
	switch cmd {
	case "hits":
		err = hits(os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	case "inputs":
		err = inputs(os.Args[2:])
	case "rebuild":
		err = rebuild(os.Args[2:])
	case "injected":
		err = injected(os.Args[2:])
	case "progress":
		err = progress(os.Args[2:])
	case "settle":
		err = settle(os.Args[2:])
	default:
		err = generate(os.Args[1:])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "storegen:", err)
		os.Exit(1)
	}
}

// options of one generated store.
type options struct {
	episodes, beliefs, projects int
	seed                        uint64
	globalShare                 float64 // share of global-scope episodes
	beliefGlobalShare           float64 // share of global-scope beliefs
	now                         time.Time
	dense                       bool
	// -real-vectors: the records the injecting prompts are about get the
	// model's vectors (real.go); about holds those prompts' terms.
	cache *vectorCache
	about []aboutPrompt
}

// Episodes i*EpisodesPerSession… belong to session i, which works on issue
// #(IssueBase+i): the rare prompt of bench/storegen/prompts.json names one,
// #(IssueBase+RareSession), whose session settled it in one exchange
// (rareEpisode): so that the rare prompt has its answer in every store,
// the same record at every size.
const (
	EpisodesPerSession = 12
	IssueBase          = 10000
	RareSession        = 42
)

// rareEpisode is the index of the episode that answers the rare prompt.
const rareEpisode = RareSession*EpisodesPerSession + 5

// The rare prompt's answer: a decision, in the summary and the exchange.
const (
	rareSummary = "Decided for #10042: chrony steps the clock once at the leapsecond instead of smearing it, " +
		"and the billing jobs read the monotonic clock"
	rareContext = "User: for #10042, should chrony step the clock at the leapsecond or smear it?\n\n" +
		"Assistant: Step it once: chrony's leapsecmode is set to step in deploy/chrony.conf, and the billing " +
		"jobs now read the monotonic clock, so a repeated second cannot bill an invoice twice."
)

// ProjectRoot is the directory under which the generated projects live:
// /srv/engram-bench/<name>. Nothing needs to exist there; the prompt hook
// takes a cwd without a .git above it as its own project root.
const ProjectRoot = "/srv/engram-bench"

func generate(args []string) error {
	fs := flag.NewFlagSet("storegen", flag.ExitOnError)
	var o options
	fs.IntVar(&o.episodes, "episodes", 1000, "episodes to generate")
	fs.IntVar(&o.beliefs, "beliefs", 5000, "beliefs to generate")
	fs.IntVar(&o.projects, "projects", 4, "projects the project-scoped records are spread over (at most 10)")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Float64Var(&o.globalShare, "global-share", 0.25, "share of episodes with global scope")
	fs.Float64Var(&o.beliefGlobalShare, "belief-global-share", 0.4, "share of beliefs with global scope")
	nowFlag := fs.String("now", "", "RFC 3339 time the store is generated at (default: today, 00:00 UTC)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines generating records")
	fs.BoolVar(&o.dense, "dense", false, "give records vectors under the sentence embedder's name (a fixed random projection of "+
		"the lexical vector: the prompt hook's dense search does the same work on them as on the model's, at no embedding cost)")
	realVectors := fs.String("real-vectors", "", "with -dense: a cache `file` of sentence vectors (kept outside the repository, shared by "+
		"every store size); the records the injecting prompts of prompts.json are about get the model's vector of their text, from "+
		"the cache or embedded with -model and added to it")
	modelDir := fs.String("model", "", "with -real-vectors: the installed sentence embedder (`dir` of minilm.engram, as engram-worker "+
		"model install leaves it) that embeds the texts the cache lacks")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: storegen [flags] > store.jsonl   (also: storegen hits|report -h)")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	o.seed = *seed
	if o.projects < 1 || o.projects > len(projectNames) {
		return fmt.Errorf("-projects %d: want 1..%d", o.projects, len(projectNames))
	}
	if o.episodes < 0 || o.beliefs < 0 {
		return fmt.Errorf("negative -episodes or -beliefs")
	}
	if *realVectors != "" {
		if !o.dense {
			return errors.New("-real-vectors needs -dense")
		}
		var err error
		if o.about, err = aboutPrompts(); err != nil {
			return err
		}
		if o.cache, err = openVectorCache(*realVectors, *modelDir); err != nil {
			return err
		}
	}
	o.now = time.Now().UTC().Truncate(24 * time.Hour)
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		o.now = t.UTC()
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	total := o.episodes + o.beliefs
	// Records are made in batches by a pool of goroutines and written in
	// order; each record has its own random stream (seed, index), so the
	// output does not depend on -workers.
	const batch = 256
	nb := (total + batch - 1) / batch
	results := make([]chan []byte, nb)
	for i := range results {
		results[i] = make(chan []byte, 1)
	}
	next := make(chan int)
	sem := make(chan struct{}, 4*max(1, *workers)) // batches made ahead of the writer
	go func() {
		for i := 0; i < nb; i++ {
			sem <- struct{}{}
			next <- i
		}
		close(next)
	}()
	for range max(1, *workers) {
		go func() {
			g := newGen(o)
			for bi := range next {
				var buf []byte
				for i := bi * batch; i < min(total, (bi+1)*batch); i++ {
					line, err := g.record(i)
					if err != nil {
						fmt.Fprintln(os.Stderr, "storegen:", err)
						os.Exit(1)
					}
					buf = append(append(buf, line...), '\n')
				}
				results[bi] <- buf
			}
		}()
	}
	for i := 0; i < nb; i++ {
		if _, err := w.Write(<-results[i]); err != nil {
			return err
		}
		results[i] = nil
		<-sem
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if c := o.cache; c != nil {
		fmt.Fprintf(os.Stderr, "storegen: %d records given the model's vectors (%d embedded now, the rest from %s)\n", c.real, c.embedded, c.path)
		return c.close()
	}
	return nil
}

// gen makes records; one per goroutine.
type gen struct {
	o     options
	local *embed.Local
	name  string
	proj  [][]float32 // -dense: minilm.Dim rows of the local dimension
}

func newGen(o options) *gen {
	l := embed.NewLocal()
	g := &gen{o: o, local: l, name: l.Name()}
	if o.dense {
		g.name = minilm.Name
		r := rand.New(rand.NewPCG(o.seed, 0x5e17))
		g.proj = make([][]float32, minilm.Dim)
		for i := range g.proj {
			g.proj[i] = make([]float32, l.Dim())
			for j := range g.proj[i] {
				g.proj[i][j] = float32(r.NormFloat64())
			}
		}
	}
	return g
}

// vector is a text's vector: the local embedder's, or with -dense its
// projection to the sentence embedder's dimension (related texts stay
// near each other), L2-normalised.
func (g *gen) vector(text string) []float32 {
	v := g.local.EmbedText(text)
	if g.proj == nil {
		return v
	}
	out := make([]float32, len(g.proj))
	var n float64
	for i, row := range g.proj {
		var d float32
		for j, x := range v {
			d += row[j] * x
		}
		out[i] = d
		n += float64(d) * float64(d)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range out {
			out[i] *= inv
		}
	}
	return out
}

type episodeRecord struct {
	Kind string `json:"kind"`
	episode.Episode
}

type beliefRecord struct {
	Kind string `json:"kind"`
	belief.Belief
}

// record i: episodes first, then beliefs.
func (g *gen) record(i int) ([]byte, error) {
	r := rand.New(rand.NewPCG(g.o.seed, uint64(i)))
	v := newVocab(r)
	v.issue = strconv.Itoa(IssueBase + i/EpisodesPerSession) // unused by beliefs
	if i < g.o.episodes {
		e := g.episode(i, r, v)
		if i == rareEpisode {
			g.plantRare(&e)
		}
		if err := g.realVector(&e.Embedding, episodeText(e.Summary, e.Context)); err != nil {
			return nil, fmt.Errorf("episode %s: %w", e.ID, err)
		}
		return json.Marshal(episodeRecord{Kind: "episode", Episode: e})
	}
	// A belief's stream does not depend on the episode count: the stores
	// of every size hold the same beliefs.
	j := i - g.o.episodes
	r = rand.New(rand.NewPCG(g.o.seed, 1<<50+uint64(j)))
	b := g.belief(j, r, newVocab(r))
	if err := g.realVector(&b.Embedding, b.Statement); err != nil {
		return nil, fmt.Errorf("belief %s: %w", b.ID, err)
	}
	return json.Marshal(beliefRecord{Kind: "belief", Belief: b})
}

// plantRare makes e the rare prompt's answer, in the project the prompts
// are asked from.
func (g *gen) plantRare(e *episode.Episode) {
	e.Summary, e.Context = rareSummary, rareContext
	e.Type = episode.TypeDecision
	e.Entities = []string{"chrony", "deploy/chrony.conf"}
	e.Signals = []episode.Signal{{Kind: episode.SignalDecision, Text: rareSummary, Subject: "chrony", Polarity: 1}}
	e.Embedding = g.vector(e.Summary)
	// The prompts come from a session in the first project.
	e.Scope, e.Project, e.ProjectPath = episode.ScopeProject, projectNames[0], ProjectRoot+"/"+projectNames[0]
	s := sha256.Sum256([]byte(e.ID + "\x00" + e.Summary + "\x00" + e.Context))
	e.ContentHash = hex.EncodeToString(s[:])
}

// realVector replaces *vec with the model's vector of text when the
// injecting prompts are about it (-real-vectors).
func (g *gen) realVector(vec *[]float32, text string) error {
	if g.o.cache == nil || !about(g.o.about, text) {
		return nil
	}
	v, err := g.o.cache.vector(text)
	if err != nil {
		return err
	}
	*vec = v
	return nil
}

// id is prefix + 12 hex digits derived from the seed, the kind and the index.
func (g *gen) id(prefix string, i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d/%s/%d", g.o.seed, prefix, i))
	return prefix + hex.EncodeToString(sum[:6])
}

// project picks a project with a skew: the first projects have most records.
func (g *gen) project(r *rand.Rand) (name, path string) {
	k := int(math.Floor(float64(g.o.projects) * math.Pow(r.Float64(), 1.5)))
	name = projectNames[min(k, g.o.projects-1)]
	return name, ProjectRoot + "/" + name
}

var episodeTypes = []struct {
	t string
	w int
}{{episode.TypeEvent, 30}, {episode.TypeFact, 22}, {episode.TypeProcedure, 14}, {episode.TypeDecision, 12},
	{episode.TypePreference, 9}, {episode.TypeCorrection, 8}, {episode.TypeQuestion, 5}}

func (g *gen) episode(i int, r *rand.Rand, v *vocab) episode.Episode {
	summary := v.fill(summaryTemplates[r.IntN(len(summaryTemplates))])
	for want := 100 + r.IntN(100); len(summary) < want; {
		summary += "; " + v.fill(summaryTemplates[r.IntN(len(summaryTemplates))])
	}
	summary = cut(summary, 300)
	want := 1000 + r.IntN(2048)
	var ctx strings.Builder
	for ctx.Len() < want {
		if ctx.Len() > 0 {
			ctx.WriteString("\n\n")
		}
		ctx.WriteString(v.fill(contextTemplates[r.IntN(len(contextTemplates))]))
	}
	context := cut(ctx.String(), 3072)

	entities := map[string]bool{}
	var ents []string
	for n, tries := 2+r.IntN(7), 0; len(ents) < n && tries < 40; tries++ {
		var e string
		switch r.IntN(4) {
		case 0:
			e = v.path()
		case 1:
			e = v.pkg.pick()
		case 2:
			e = v.tech.pick()
		default:
			e = v.ident()
		}
		if !entities[e] {
			entities[e] = true
			ents = append(ents, e)
		}
	}

	w := r.IntN(100)
	typ := episode.TypeEvent
	for _, t := range episodeTypes {
		if w < t.w {
			typ = t.t
			break
		}
		w -= t.w
	}
	var signals []episode.Signal
	if typ == episode.TypePreference || typ == episode.TypeDecision || typ == episode.TypeCorrection {
		kind := map[string]string{episode.TypePreference: episode.SignalPreference, episode.TypeDecision: episode.SignalDecision,
			episode.TypeCorrection: episode.SignalCorrection}[typ]
		pol := 1
		if r.IntN(4) == 0 {
			pol = -1
		}
		signals = append(signals, episode.Signal{Kind: kind, Text: cut(summary, 160), Subject: v.tech.pick(), Polarity: pol,
			Global: r.IntN(5) == 0})
	}

	e := episode.Episode{
		ID: g.id("ep_", i), Summary: summary, Context: context, Entities: ents, Signals: signals,
		// Importance: most episodes middling, a few high.
		Importance: math.Round(100*math.Min(1, math.Max(0.05, 0.2+0.6*math.Pow(r.Float64(), 1.6)+0.2*r.Float64()))) / 100,
		Type:       typ, Scope: episode.ScopeProject,
		ContentHash: hex.EncodeToString(func() []byte {
			s := sha256.Sum256([]byte(g.id("ep_", i) + "\x00" + summary + "\x00" + context))
			return s[:]
		}()),
		Embedding: g.vector(summary), Embedder: g.name, Extractor: "storegen",
		Stability: 1,
	}
	// A session works in one project; some of its memories are global.
	sess := i / EpisodesPerSession
	e.Project, e.ProjectPath = g.project(rand.New(rand.NewPCG(g.o.seed, 1<<40+uint64(sess))))
	if r.Float64() < g.o.globalShare {
		e.Scope, e.ProjectPath = episode.ScopeGlobal, ""
	}
	e.SessionID = uuidOf(g.o.seed, sess)
	e.SessionIDs = []string{e.SessionID}
	// occurred_at: over the year before now, more of them recent.
	age := time.Duration(math.Pow(r.Float64(), 1.4) * float64(365*24*time.Hour))
	e.OccurredAt = g.o.now.Add(-age).Truncate(time.Millisecond)
	e.CreatedAt = e.OccurredAt.Add(time.Duration(1+r.IntN(600)) * time.Second)
	e.UpdatedAt = e.CreatedAt
	if r.IntN(5) == 0 { // recalled before
		e.AccessCount = 1 + int(math.Floor(math.Pow(r.Float64(), 3)*30))
		e.LastAccessedAt = e.CreatedAt.Add(time.Duration(r.Float64() * float64(age))).Truncate(time.Millisecond)
		e.Stability = math.Round(100*math.Min(365, 1+float64(e.AccessCount)*r.Float64()*3)) / 100
	}
	return e
}

var beliefStatuses = []struct {
	s string
	w int
}{{belief.StatusActive, 88}, {belief.StatusRevised, 5}, {belief.StatusArchived, 4}, {belief.StatusMerged, 2}, {belief.StatusSplit, 1}}

func (g *gen) belief(i int, r *rand.Rand, v *vocab) belief.Belief {
	stmt := v.fill(beliefTemplates[r.IntN(len(beliefTemplates))])
	// Evidence: most beliefs rest on a few episodes, some on many.
	evidence := 1 + int(math.Floor(math.Pow(r.Float64(), 2.5)*40))
	contra := 0
	if r.IntN(4) == 0 {
		contra = r.IntN(1 + evidence/2)
	}
	if r.IntN(12) == 0 { // a contested one: confidence below 0.5
		contra = evidence + r.IntN(4)
	}
	w := r.IntN(100)
	status := belief.StatusActive
	for _, s := range beliefStatuses {
		if w < s.w {
			status = s.s
			break
		}
		w -= s.w
	}
	created := g.o.now.Add(-time.Duration(math.Pow(r.Float64(), 1.3) * float64(365*24*time.Hour))).Truncate(time.Millisecond)
	reinforced := created.Add(time.Duration(r.Float64() * float64(g.o.now.Sub(created)))).Truncate(time.Millisecond)
	b := belief.Belief{
		ID: g.id("bl_", i), Statement: stmt, Subject: v.tech.pick(), Predicate: v.verb.pick(),
		Context: v.noun.pick() + " " + v.noun.pick(), Timeframe: belief.TimeCurrent,
		Alpha: float64(1 + evidence - contra/2), Beta: float64(1 + contra),
		Scope: episode.ScopeProject, Embedding: g.vector(stmt), Embedder: g.name, Status: status,
		EvidenceCount: evidence + contra, Stability: 1, CreatedAt: created, UpdatedAt: reinforced, LastReinforcedAt: reinforced,
	}
	if b.Alpha < 1 {
		b.Alpha = 1
	}
	if r.IntN(10) == 0 {
		b.Timeframe = belief.TimeAlways
	}
	if r.Float64() < g.o.beliefGlobalShare {
		b.Scope = episode.ScopeGlobal
	} else {
		b.Project, b.ProjectPath = g.project(r)
	}
	b.PeakConfidence = math.Round(1000*b.Confidence()) / 1000
	for n := min(evidence, 5); n > 0; n-- {
		b.Supporting = append(b.Supporting, g.id("ep_", r.IntN(max(1, g.o.episodes))))
	}
	for n := min(contra, 3); n > 0; n-- {
		b.Contradicting = append(b.Contradicting, g.id("ep_", r.IntN(max(1, g.o.episodes))))
	}
	if r.IntN(3) == 0 {
		b.AccessCount = 1 + r.IntN(20)
		b.LastAccessedAt = reinforced.Add(time.Duration(r.Float64() * float64(g.o.now.Sub(reinforced)))).Truncate(time.Millisecond)
		b.Stability = math.Round(100*math.Min(365, 1+float64(b.AccessCount)*r.Float64()*2)) / 100
	}
	return b
}

func uuidOf(seed uint64, n int) string {
	s := sha256.Sum256(fmt.Appendf(nil, "session/%d/%d", seed, n))
	h := hex.EncodeToString(s[:16])
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// cut shortens s to at most n bytes, at a space when there is one in the
// last quarter, else on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndexByte(s[:n], ' '); i > n*3/4 {
		return strings.TrimRight(s[:i], " ;,:")
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return strings.TrimSpace(s[:n])
}
