// Command threads measures how engram's threads of work (package thread)
// group what belongs together, on LoCoMo conversations kept by an earlier
// `bench/locomo -keep DIR` run: the evidence turns of one multi-hop
// question (category 1) are said in several sessions, and a thread that
// follows the topic holds them together.
//
//	go run ./bench/threads -data ../shared/eval/locomo-dev.json -homes DIR [-sweep]
//
// Each conversation's store is copied and its boxes built again with the
// setting measured. Over the episodes that hold an evidence turn of some
// multi-hop question, a pair is positive when both hold evidence of one
// question; the report gives the pairwise precision and recall of "in one
// trace" (and of "in one box"), the mean trace size in episodes, and the
// boxes; fitted conversations (the gate's: conv-26, conv-30, conv-41) and
// checked ones side by side.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/bench/internal/locomodata"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/thread"
)

// expandKey is how many key memories of the trace an expansion adds.
const expandKey = 2

var fitConvs = map[string]bool{"conv-26": true, "conv-30": true, "conv-41": true}

type counts struct {
	tp, predicted, positive        int // trace pairs
	boxTP, boxPredicted            int // box pairs
	traceEpisodes, evidenceEps     int
	boxes, episodes, traces, multi int
	questions, spread              int // multi-hop questions with ≥2 evidence episodes; of them, in ≥2 boxes
	// What a recall that adds, to one evidence episode found, the key
	// memories of its trace outside its own box would bring: per (question,
	// evidence episode), added memories and the evidence of that question
	// among them.
	expansions, added, addedEvidence int
}

func (c *counts) add(o counts) {
	c.tp += o.tp
	c.predicted += o.predicted
	c.positive += o.positive
	c.boxTP += o.boxTP
	c.boxPredicted += o.boxPredicted
	c.traceEpisodes += o.traceEpisodes
	c.evidenceEps += o.evidenceEps
	c.boxes += o.boxes
	c.episodes += o.episodes
	c.traces += o.traces
	c.multi += o.multi
	c.questions += o.questions
	c.spread += o.spread
	c.expansions += o.expansions
	c.added += o.added
	c.addedEvidence += o.addedEvidence
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func (c counts) String() string {
	p, r := ratio(c.tp, c.predicted), ratio(c.tp, c.positive)
	f := 0.0
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return fmt.Sprintf("trace P %.3f R %.3f F1 %.3f | box P %.3f R %.3f | trace size %.1f eps | %d boxes (%.1f eps), %d traces (%d of several boxes) | spread %d/%d | expansion by %d key memories: %.2f added, %.3f of them evidence",
		p, r, f, ratio(c.boxTP, c.boxPredicted), ratio(c.boxTP, c.positive), ratio(c.traceEpisodes, c.evidenceEps),
		c.boxes, ratio(c.episodes, c.boxes), c.traces, c.multi, c.spread, c.questions, expandKey, ratio(c.added, c.expansions), ratio(c.addedEvidence, c.added))
}

func main() {
	data := flag.String("data", "", "LoCoMo-format file, e.g. ../shared/eval/locomo-dev.json")
	homes := flag.String("homes", "", "the -keep directory of a bench/locomo run (one HOME per conversation)")
	sweep := flag.Bool("sweep", false, "also try other trace and topic thresholds")
	flag.Parse()
	if *data == "" || *homes == "" {
		fmt.Fprintln(os.Stderr, "threads: -data and -homes are required")
		os.Exit(2)
	}
	samples, err := locomodata.Load(*data)
	if err != nil {
		fmt.Fprintln(os.Stderr, "threads:", err)
		os.Exit(1)
	}
	policies := []thread.Policy{thread.DefaultPolicy}
	if *sweep {
		for _, center := range []bool{false, true} {
			for _, tr := range []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 2} {
				for _, ts := range []float64{0.2, 0.35, 0.5, 0.6} {
					p := thread.DefaultPolicy
					p.TraceOverlap, p.TopicShift, p.Center = tr, ts, center
					if p != thread.DefaultPolicy {
						policies = append(policies, p)
					}
				}
			}
		}
	}
	tmp, err := os.MkdirTemp("", "threads-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "threads:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	for _, p := range policies {
		var fit, check counts
		for _, s := range samples {
			src := filepath.Join(*homes, s.ID, ".claude-memory", "memory.db")
			if _, err := os.Stat(src); err != nil {
				continue
			}
			c, err := measure(s, src, tmp, p)
			if err != nil {
				fmt.Fprintln(os.Stderr, "threads:", s.ID, err)
				os.Exit(1)
			}
			if fitConvs[s.ID] {
				fit.add(c)
			} else {
				check.add(c)
			}
		}
		fmt.Printf("trace %.2f topic %.2f centre %v\n  fitted:  %s\n  checked: %s\n", p.TraceOverlap, p.TopicShift, p.Center, fit, check)
	}
}

// measure builds the boxes of a copy of one conversation's store with
// policy p and counts.
func measure(s locomodata.Sample, src, tmp string, p thread.Policy) (counts, error) {
	var c counts
	dir, err := os.MkdirTemp(tmp, s.ID+"-")
	if err != nil {
		return c, err
	}
	defer os.RemoveAll(dir)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := copyFile(src+suffix, filepath.Join(dir, "memory.db"+suffix)); err != nil && !os.IsNotExist(err) {
			return c, err
		}
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "memory.db"), store.Options{})
	if err != nil {
		return c, err
	}
	defer db.Close()
	if err := db.ClearBoxes(ctx); err != nil {
		return c, err
	}
	if _, err := thread.BuildWith(ctx, db, "", time.Now().Add(24*time.Hour), p); err != nil {
		return c, err
	}
	var eps []episode.Episode
	if err := db.EachEpisode(ctx, func(e episode.Episode) error { eps = append(eps, e); return nil }); err != nil {
		return c, err
	}
	boxOf, traceOf := map[string]string{}, map[string]string{}
	traceSize := map[string]int{}
	bs, err := db.AllBoxes(ctx)
	if err != nil {
		return c, err
	}
	boxTrace := map[string]string{}
	perTrace := map[string]int{}
	for _, b := range bs {
		boxTrace[b.ID] = b.TraceID
		perTrace[b.TraceID]++
		c.boxes++
		c.episodes += b.Members
	}
	c.traces = len(perTrace)
	for _, n := range perTrace {
		if n > 1 {
			c.multi++
		}
	}
	for _, e := range eps {
		b, err := db.BoxOf(ctx, e.ID)
		if err != nil {
			return c, err
		}
		boxOf[e.ID] = b
		traceOf[e.ID] = boxTrace[b]
		traceSize[boxTrace[b]]++
	}
	// Each evidence turn's episode: the first whose context holds its text.
	texts := map[string]string{}
	for _, sess := range s.Sessions {
		for _, t := range sess.Turns {
			texts[t.DiaID] = norm(t.Text)
		}
	}
	ctxs := make([]string, len(eps))
	for i, e := range eps {
		ctxs[i] = norm(e.Context)
	}
	episodeOf := map[string]string{}
	find := func(dia string) string {
		if id, ok := episodeOf[dia]; ok {
			return id
		}
		t := texts[dia]
		id := ""
		if len(t) > 10 {
			for i := range eps {
				if strings.Contains(ctxs[i], t) {
					id = eps[i].ID
					break
				}
			}
		}
		episodeOf[dia] = id
		return id
	}
	groups := map[string][]int{} // episode → questions it holds evidence of
	var sets [][]string
	for qi, q := range s.QA {
		if q.Category != 1 {
			continue
		}
		var set []string
		for _, dia := range locomodata.ParseEvidence(q.Evidence).IDs {
			if id := find(dia); id != "" && !slices.Contains(set, id) {
				set = append(set, id)
			}
		}
		if len(set) < 2 {
			continue
		}
		c.questions++
		sets = append(sets, set)
		boxes := map[string]bool{}
		for _, id := range set {
			groups[id] = append(groups[id], qi)
			boxes[boxOf[id]] = true
		}
		if len(boxes) > 1 {
			c.spread++
		}
	}
	// The key memories of each trace outside each of its boxes.
	byID := map[string]episode.Episode{}
	members := map[string][]episode.Episode{} // trace → episodes in time order
	for _, e := range eps {
		byID[e.ID] = e
		if tr := traceOf[e.ID]; tr != "" {
			members[tr] = append(members[tr], e)
		}
	}
	for _, set := range sets {
		for _, id := range set {
			var others []episode.Episode
			for _, m := range members[traceOf[id]] {
				if boxOf[m.ID] != boxOf[id] {
					others = append(others, m)
				}
			}
			key := thread.Key(others, expandKey)
			c.expansions++
			c.added += len(key)
			for _, k := range key {
				if slices.Contains(set, k.ID) {
					c.addedEvidence++
				}
			}
		}
	}
	var u []string
	for id := range groups {
		u = append(u, id)
	}
	slices.Sort(u)
	for i, a := range u {
		c.evidenceEps++
		c.traceEpisodes += traceSize[traceOf[a]]
		for _, b := range u[i+1:] {
			pos := slices.ContainsFunc(groups[a], func(q int) bool { return slices.Contains(groups[b], q) })
			sameTrace := traceOf[a] != "" && traceOf[a] == traceOf[b]
			sameBox := boxOf[a] != "" && boxOf[a] == boxOf[b]
			if pos {
				c.positive++
			}
			if sameTrace {
				c.predicted++
				if pos {
					c.tp++
				}
			}
			if sameBox {
				c.boxPredicted++
				if pos {
					c.boxTP++
				}
			}
		}
	}
	return c, nil
}

func norm(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
