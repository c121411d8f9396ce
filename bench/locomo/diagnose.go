package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/bench/internal/locomodata"
	"github.com/engram-memory/engram/internal/recall"
)

// Miss classes: why an evidence turn did not reach the injected context
// (lenient rule). "Its episode" is the episode whose stored context holds the
// turn (the capture of its exchange); "the summary" is that episode's
// summary, the only text of it a prompt ever gets.
const (
	// The turn is in no episode: never captured, or its exchange skipped.
	missNotCaptured = "not_captured"
	// Its episode was injected, but the summary does not carry the turn:
	// omits it (not even its first 20 characters), or clips it (its
	// opening is there, not its first 60 characters).
	missInjectedSummaryOmits = "injected_but_summary_omits_turn"
	missInjectedSummaryClips = "injected_but_summary_clips_turn"
	// Its episode was not injected, and its summary would not have carried
	// the turn anyway.
	missSummaryOmits = "not_injected_summary_omits_turn"
	missSummaryClips = "not_injected_summary_clips_turn"
	// Its summary carries the turn, but the episode was not injected:
	// nothing at all was injected for the question (relevance gate, or the
	// deadline), or the episode ranked 4th to 10th among the relevant
	// candidates (three memory bites are injected), or lower, or was no
	// candidate at all (the FTS query and the recollection files missed
	// it, or the gate dropped it).
	missNothingInjected = "summary_has_turn_nothing_injected"
	missDeadline        = "summary_has_turn_deadline_miss"
	missRank4to10       = "summary_has_turn_ranked_4_to_10"
	missBelowTop10      = "summary_has_turn_not_in_top_10"
	missOther           = "other"
)

var missOrder = []string{missNotCaptured, missInjectedSummaryOmits, missInjectedSummaryClips, missSummaryOmits,
	missSummaryClips, missNothingInjected, missDeadline, missRank4to10, missBelowTop10, missOther}

// headRunes is how much of a turn's opening must be in a summary for the
// summary to "clip" rather than "omit" it.
const headRunes = 20

type exportedEpisode struct {
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Summary string `json:"summary"`
	Context string `json:"context"`

	normSummary, normContext string
}

// turnDiag is what the store holds of one turn.
type turnDiag struct {
	episodes    []string // ids of the episodes whose context holds the turn
	summaryHas  bool     // one of their summaries holds the turn (lenient rule)
	summaryHead bool     // one of them holds its first headRunes runes
}

// export reads the store through `engram-worker export`.
func (c *conversation) export(ctx context.Context) error {
	path := filepath.Join(c.home, "export.jsonl")
	r := benchkit.Run(ctx, c.env, c.project, nil, c.bins.Worker, "export", "--out", path)
	if r.Err != nil {
		return fmt.Errorf("engram-worker export: %v: %s", r.Err, r.Stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e exportedEpisode
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if e.Kind != "" && e.Kind != "episode" {
			continue
		}
		e.normSummary, e.normContext = normalize(e.Summary), normalize(e.Context)
		c.episodes = append(c.episodes, e)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	c.capture.Episodes = len(c.episodes)
	if c.opt.Keep == "" {
		os.Remove(path)
	}
	return nil
}

// diagnoseTurns finds, for every turn, the episodes holding it.
func (c *conversation) diagnoseTurns() {
	c.turnDiag = map[string]turnDiag{}
	for id, text := range c.turnText {
		t := normalize(text)
		if t == "" {
			continue
		}
		lenient, head := prefixRunes(t, LenientPrefix), prefixRunes(t, headRunes)
		var d turnDiag
		for _, e := range c.episodes {
			if !strings.Contains(e.normContext, t) {
				continue
			}
			d.episodes = append(d.episodes, e.ID)
			if strings.Contains(e.normSummary, lenient) {
				d.summaryHas = true
			}
			if strings.Contains(e.normSummary, head) {
				d.summaryHead = true
			}
		}
		c.turnDiag[id] = d
	}
}

// classifyMisses labels each evidence turn of res that missed the context
// (lenient rule), and lists the evidence turns whose episode was injected
// (whether or not its bite carried the turn).
func (c *conversation) classifyMisses(ctx context.Context, res *questionResult, q locomodata.QA) {
	hit := map[string]bool{}
	for _, id := range res.Lenient {
		hit[id] = true
	}
	injected := recall.Injected(c.engram, res.sessionID)
	var ranks map[string]int // episode id -> rank among relevant candidates (1-based)
	res.Episode = []string{}
	for _, id := range res.Evidence {
		d := c.turnDiag[id]
		anyInjected := false
		for _, e := range d.episodes {
			anyInjected = anyInjected || injected[e]
		}
		if anyInjected {
			res.Episode = append(res.Episode, id)
		}
		if hit[id] {
			continue
		}
		if res.Misses == nil {
			res.Misses = map[string]string{}
		}
		var class string
		switch {
		case len(d.episodes) == 0:
			class = missNotCaptured
		case anyInjected && d.summaryHead:
			class = missInjectedSummaryClips
		case anyInjected:
			class = missInjectedSummaryOmits
		case !d.summaryHas && d.summaryHead:
			class = missSummaryClips
		case !d.summaryHas:
			class = missSummaryOmits
		case res.DeadlineMiss:
			class = missDeadline
		case res.Bytes == 0:
			class = missNothingInjected
		default:
			if ranks == nil {
				ranks = c.rank(ctx, q.Question)
			}
			best := 0
			for _, e := range d.episodes {
				if r, ok := ranks[e]; ok && (best == 0 || r < best) {
					best = r
				}
			}
			switch {
			case best == 0:
				class = missBelowTop10
			case best > 3:
				class = missRank4to10
			default:
				class = missOther
			}
		}
		res.Misses[id] = class
	}
}

// rank runs `engram-worker recall` (the hook's ranking, with the same FTS
// limit, ten results) and returns the ranks of the episodes it lists.
func (c *conversation) rank(ctx context.Context, question string) map[string]int {
	out := map[string]int{}
	r := benchkit.Run(ctx, c.env, c.project, nil, c.bins.Worker, "recall", "--json", "--limit", "10", "--project", c.project, "--", question)
	if r.Err != nil {
		return out
	}
	var v struct {
		Results []struct {
			Kind string `json:"kind"`
			ID   string `json:"id"`
		} `json:"results"`
	}
	if json.Unmarshal(r.Stdout, &v) != nil {
		return out
	}
	n := 0
	for _, h := range v.Results {
		if h.Kind != "episode" {
			continue
		}
		n++
		out[h.ID] = n
	}
	return out
}

// showMisses prints examples of missed evidence turns, with their text, to
// w (meant for a terminal: the data's licence forbids copying its text into
// the repository).
func (c *conversation) showMisses(w io.Writer, perClass int) {
	type ex struct {
		q  questionResult
		id string
	}
	byClass := map[string][]ex{}
	for _, q := range c.results {
		ids := make([]string, 0, len(q.Misses))
		for id := range q.Misses {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			cl := q.Misses[id]
			if len(byClass[cl]) < perClass {
				byClass[cl] = append(byClass[cl], ex{q, id})
			}
		}
	}
	for _, cl := range missOrder {
		for _, e := range byClass[cl] {
			fmt.Fprintf(w, "--- %s | %s q%d (%s) evidence %s\n", cl, c.sample.ID, e.q.Index, locomodata.CategoryName(e.q.Category), e.id)
			fmt.Fprintf(w, "question: %s\n", c.sample.QA[e.q.Index].Question)
			fmt.Fprintf(w, "turn:     %s\n", c.turnText[e.id])
			for _, epID := range c.turnDiag[e.id].episodes {
				for _, ep := range c.episodes {
					if ep.ID == epID {
						fmt.Fprintf(w, "summary:  %s\n", ep.Summary)
					}
				}
			}
			if e.q.injected == "" {
				fmt.Fprintf(w, "injected: (nothing)\n")
			} else {
				fmt.Fprintf(w, "injected:\n%s\n", e.q.injected)
			}
		}
	}
}
