package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/memory"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

func cmdRecall(ctx context.Context, e *env, args []string) error {
	fs := newFlags("recall", e.stderr)
	project := fs.String("project", "", "recall as from this directory (its git root); default: the current directory")
	all := fs.Bool("all-projects", false, "search every project, not just one")
	limit := fs.Int("limit", 10, "results of each kind")
	asJSON := fs.Bool("json", false, "print JSON")
	explain := fs.Bool("explain", false, "say how each belief was found: for one a link brought, the link and its confidence")
	flagArgs, query := splitQuery(args)
	if err := fs.Parse(flagArgs); err != nil {
		return flagError(err)
	}
	query = append(query, fs.Args()...)
	q := strings.TrimSpace(strings.Join(query, " "))
	if q == "" {
		return usagef(`want a query: engram-worker recall "what did we decide about billing"`)
	}
	if *limit <= 0 {
		return usagef("--limit %d: want a positive number", *limit)
	}
	root := ""
	if !*all {
		dir := *project
		if dir == "" {
			dir = "."
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return usagef("--project %q: %v", dir, err)
		}
		root, _ = gitroot.Find(abs)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	search, done := recollect.Searcher(ctx, s.cfg.Home, s.db)
	defer done()
	r := recall.New(s.cfg.Home, search)
	if err := r.UsePolicyFile(s.cfg.RecallPolicy); err != nil {
		return fmt.Errorf("ENGRAM_RECALL_POLICY: %w", err)
	}
	if m := minilm.OpenInstalled(s.cfg.ModelDir(), s.cfg.SentenceEmbedder); m != nil {
		defer m.Close()
		r.Dense = m
	}
	r.FTSLimit = max(r.FTSLimit, 40, *limit*4) // a superset of what the hook searches
	now := time.Now()
	res := r.Find(ctx, recall.Query{Text: q, ProjectPath: root, Now: now})
	if len(res.Episodes) > *limit {
		res.Episodes = res.Episodes[:*limit]
	}
	if len(res.Beliefs) > *limit {
		res.Beliefs = res.Beliefs[:*limit]
	}
	var ids []string
	for _, c := range append(append([]recall.Candidate{}, res.Beliefs...), res.Episodes...) {
		ids = append(ids, c.ID)
	}
	kinds, err := s.db.KindsOf(ctx, ids)
	if err != nil {
		return err
	}
	if *asJSON {
		type hit struct {
			Kind       string  `json:"kind"`
			MemoryKind string  `json:"memory_kind,omitempty"`
			ID         string  `json:"id"`
			Text       string  `json:"text"`
			Project    string  `json:"project,omitempty"`
			At         string  `json:"at,omitempty"`
			Score      float64 `json:"score"`
			BM25       float64 `json:"bm25,omitempty"`
			Cosine     float32 `json:"cosine"`
			Coverage   float32 `json:"coverage"`
			Confidence float32 `json:"confidence,omitempty"`
			// The sentence embedder's cosine and how far it stands above
			// the reference; by_meaning when it passed the gate by it.
			Dense    *float32 `json:"dense,omitempty"`
			DenseGap *float32 `json:"dense_gap,omitempty"`
			Stated   bool     `json:"stated,omitempty"`
			// Superseded: a later correction replaced what it says.
			Superseded bool `json:"superseded,omitempty"`
			ByMeaning  bool `json:"by_meaning,omitempty"`
			// A belief a link brought: the belief it is linked from and the
			// link's confidence; rank, the order the links gave (PageRank).
			LinkedFrom     string   `json:"linked_from,omitempty"`
			EdgeConfidence *float32 `json:"edge_confidence,omitempty"`
			Rank           float64  `json:"rank,omitempty"`
		}
		out := struct {
			Query   string   `json:"query"`
			Project string   `json:"project"`
			Match   string   `json:"fts_query"`
			Dense   string   `json:"dense_embedder,omitempty"`
			Open    bool     `json:"open"`
			Past    bool     `json:"asks_about_the_past"`
			Many    bool     `json:"asks_for_many"`
			Results []hit    `json:"results"`
			Notes   []string `json:"problems,omitempty"`
		}{Query: q, Project: root, Match: res.Match, Dense: res.Dense, Open: res.Open, Past: res.Past, Many: res.Many, Results: []hit{}, Notes: res.Problems}
		for _, c := range append(append([]recall.Candidate{}, res.Beliefs...), res.Episodes...) {
			h := hit{Kind: "episode", MemoryKind: kinds[c.ID], ID: c.ID, Text: c.Text, Project: c.Project, Score: c.Score, BM25: c.BM25,
				Cosine: c.Cos, Coverage: c.Coverage, Stated: c.Stated, ByMeaning: c.ByMeaning, Superseded: c.Superseded}
			if c.HasDenseCos {
				d, g := c.Dense, c.DenseGap
				h.Dense, h.DenseGap = &d, &g
			}
			if c.Kind == recall.KindBelief {
				h.Kind, h.Confidence, h.Rank = "belief", c.Confidence, c.Rank
				if c.Linked != "" {
					conf := c.LinkConfidence
					h.LinkedFrom, h.EdgeConfidence = c.Linked, &conf
				}
			}
			if !c.At.IsZero() {
				h.At = c.At.Format(time.RFC3339)
			}
			out.Results = append(out.Results, h)
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(res.Beliefs)+len(res.Episodes) == 0 {
		fmt.Fprintln(e.stdout, "nothing recalled")
		return nil
	}
	for _, c := range res.Beliefs {
		fmt.Fprintf(e.stdout, "[B] %.3f  %s  (%s, confidence %.2f) %s\n", c.Score, c.ID, cmp.Or(kinds[c.ID], "-"), c.Confidence, c.Text)
		if *explain {
			fmt.Fprintf(e.stdout, "      %s\n", explainBelief(c, r.LinkDiscount))
		}
	}
	for _, c := range res.Episodes {
		dense := ""
		if c.HasDenseCos {
			dense = fmt.Sprintf(", meaning %.2f (%+.2f)", c.Dense, c.DenseGap)
		}
		if c.Superseded {
			dense += ", " + recall.SupersededLabel(c.Replaced, c.ReplacedAt, now)
		}
		fmt.Fprintf(e.stdout, "[E] %.3f  %s  (%s, %s, bm25 %.2f, cos %.2f, terms %.0f%%%s) %s\n", c.Score, c.ID,
			cmp.Or(kinds[c.ID], "-"), recall.Ago(c.At, now), -c.BM25, c.Cos, 100*c.Coverage, dense, c.Text)
	}
	return nil
}

// explainBelief says how recall came to a belief: by a link (the belief
// it is linked from, the link's confidence, the discount recall applied)
// or by the prompt, and where
// the links put it (its rank, when recall followed any).
func explainBelief(c recall.Candidate, discount float64) string {
	how := "found by the prompt"
	if c.Linked != "" {
		how = fmt.Sprintf("linked from %s conf=%.2f (its score: %.1f × conf × its parent's)", c.Linked, c.LinkConfidence, discount)
	}
	if c.Rank > 0 {
		how += fmt.Sprintf("; rank %.3f over the links", c.Rank)
	}
	return how
}

// splitQuery separates flags from the words of the query, so that both
// `recall --json "q"` and `recall "q" --json` work.
func splitQuery(args []string) (flags, words []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return flags, append(words, args[i+1:]...)
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && (name == "project" || name == "limit") && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		words = append(words, a)
	}
	return flags, words
}

func cmdExpand(ctx context.Context, e *env, args []string) error {
	fs := newFlags("expand", e.stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	flagArgs, ids := splitQuery(args)
	if err := fs.Parse(flagArgs); err != nil {
		return flagError(err)
	}
	ids = append(ids, fs.Args()...)
	if len(ids) != 1 {
		return usagef("want one id (ep_… or bl_…), got %d", len(ids))
	}
	id := ids[0]
	if !strings.HasPrefix(id, "ep_") && !strings.HasPrefix(id, "bl_") {
		return usagef("id %q: want ep_… (an episode) or bl_… (a belief)", id)
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := memory.Load(ctx, s.db, id)
	if err != nil {
		return err
	}
	if _, err := s.db.RecordAccesses(ctx, []store.Access{{ID: id, At: time.Now()}}); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if c.Belief != nil {
			c.Belief.Embedding = nil
			type decision struct {
				Decision string    `json:"decision"`
				Who      string    `json:"who"`
				At       time.Time `json:"at"`
				Before   string    `json:"level_before"`
				After    string    `json:"level_after"`
				Note     string    `json:"note,omitempty"`
			}
			ds := []decision{}
			for _, d := range c.Decisions {
				ds = append(ds, decision{d.Decision, d.Who, d.At, d.Before, d.After, d.Note})
			}
			return enc.Encode(struct {
				*belief.Belief
				Links     []memory.LinkedBelief `json:"links,omitempty"`
				Level     string                `json:"level"`
				Decisions []decision            `json:"decisions"`
			}{c.Belief, c.Links, c.Level, ds})
		}
		c.Episode.Embedding = nil
		return enc.Encode(c.Episode)
	}
	memory.Write(e.stdout, c)
	return nil
}
