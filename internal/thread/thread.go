// Package thread gathers episodes into threads of work: boxes and traces
// (Remnic's memory boxes).
//
// Episodes of one project go, in the order they happened, into the
// project's open box. A box seals when the next episode's topic overlap
// with it falls below TopicShift, when the next episode comes more than
// TimeGap after its last one (or TimeGap passes with none), or when it
// holds MaxMemories. A sealed box is woven into a trace: the trace of the
// earlier sealed box of the same project it overlaps most, at least
// TraceOverlap, or a trace of its own. A trace is a thread of work ("the
// cache-layer redesign") followed across sessions and days; `engram-worker
// trace` shows one as a timeline.
//
// Topic overlap is the cosine of sentence vectors where both sides have
// one of the same embedder (an episode's vector, a box's centroid: the
// normalised mean of its members' vectors), else the share of the
// episode's key terms the box holds. Boxes and traces are derived from
// the episodes: an episode forgotten leaves its box (the box is made again
// from what it still holds, or dropped when empty), and an episode that
// arrives later than its project's open box began (an import, a pull) goes
// into boxes of its own, sealed at the end of the run ("late").
package thread

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/store"
)

// The seal conditions. TimeGap and MaxMemories are the seed's defaults
// (boxTimeGapMs, boxMaxMemories). TopicShift is measured (bench/threads,
// LoCoMo dev, with the sentence embedder): the seed's 0.35 made boxes of
// 8.8 episodes whose traces grouped the evidence of a multi-hop question
// with pairwise F1 0.114 (fitted conversations) and 0.166 (checked); 0.5,
// boxes of 3.9 episodes, 0.170 and 0.183.
const (
	TopicShift  = 0.5
	TimeGap     = 30 * time.Minute
	MaxMemories = 50
)

// TraceOverlap is the least overlap of two sealed boxes' topics for the
// later one to join the earlier one's trace, their centroids centred on
// the project's (Policy.Center). Measured with TopicShift (bench/threads):
// 0.4 gave F1 0.141 | 0.183, 0.5 0.170 | 0.183, 0.6 0.121 | 0.165; without
// centring no threshold did better than no traces at all (0.096 | 0.082 at
// 0.9: every box its own), since the boxes of one conversation or project
// are all alike (half the pairs of one coding project's boxes have a
// cosine above 0.33) and one trace took nearly all of them.
const TraceOverlap = 0.5

// Policy holds the settings of a build: the seal conditions and the
// weave's threshold (DefaultPolicy: the constants above).
type Policy struct {
	TopicShift   float64
	TimeGap      time.Duration
	MaxMemories  int
	TraceOverlap float64
	// Center weaves on centred centroids: the mean centroid of the
	// project's earlier boxes taken from both before the cosine, so that
	// what every box of a project shares (its vocabulary, its kind of
	// talk) does not make all of them one thread.
	Center bool
}

// DefaultPolicy is the policy Build uses.
var DefaultPolicy = Policy{TopicShift: TopicShift, TimeGap: TimeGap, MaxMemories: MaxMemories, TraceOverlap: TraceOverlap, Center: true}

// weaveWindow bounds the earlier sealed boxes of a project a box is
// compared with when it seals: the latest ones.
const weaveWindow = 500

// maxTerms is how many key terms a box keeps.
const maxTerms = 8

// batch is how many episodes a run boxes at most.
const batch = 20000

// Stats is what a run did.
type Stats struct {
	Boxed     int `json:"boxed"`     // episodes put in a box
	Opened    int `json:"opened"`    // boxes opened
	Sealed    int `json:"sealed"`    // boxes sealed
	Traces    int `json:"traces"`    // traces started
	Woven     int `json:"woven"`     // sealed boxes that joined an earlier trace
	Refreshed int `json:"refreshed"` // boxes made again after losing members
	Dropped   int `json:"dropped"`   // boxes left empty, removed
}

// open is a box being filled, with its members' vectors and terms.
type open struct {
	box   store.Box
	eps   []episode.Episode
	added []store.BoxMember
	dirty bool
}

// Build boxes every episode not in a box yet, seals the boxes whose time
// has passed at now, weaves what it sealed into traces, and writes the
// sealed boxes' files under home (boxes/, see WriteFile; home "" writes
// none). Boxes that lost members (a forgotten episode) are made again
// first.
func Build(ctx context.Context, db *store.DB, home string, now time.Time) (Stats, error) {
	return BuildWith(ctx, db, home, now, DefaultPolicy)
}

// BuildWith is Build with the settings of p.
func BuildWith(ctx context.Context, db *store.DB, home string, now time.Time, p Policy) (Stats, error) {
	var st Stats
	if err := refresh(ctx, db, home, &st); err != nil {
		return st, err
	}
	opens := map[string]*open{}
	boxes, err := db.OpenBoxes(ctx)
	if err != nil {
		return st, err
	}
	for _, b := range boxes {
		eps, err := db.BoxEpisodes(ctx, b.ID)
		if err != nil {
			return st, err
		}
		opens[b.ProjectPath] = &open{box: b, eps: eps}
	}
	late := map[string]*open{}
	sealed := sealedCache{}
	eps, err := db.UnboxedEpisodes(ctx, batch)
	if err != nil {
		return st, err
	}
	for _, e := range eps {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		set := opens
		if o := opens[e.ProjectPath]; o != nil && e.OccurredAt.Before(o.box.OpenedAt) {
			set = late
		}
		o := set[e.ProjectPath]
		if o != nil {
			if why := p.SealReason(o.box, o.eps, e); why != "" {
				if err := p.seal(ctx, db, home, o, why, p.sealTime(o.box, e, why), &st, sealed); err != nil {
					return st, err
				}
				o = nil
			}
		}
		if o == nil {
			o = &open{box: store.Box{ID: boxID(e), Project: e.Project, ProjectPath: e.ProjectPath, OpenedAt: e.OccurredAt}}
			set[e.ProjectPath] = o
			st.Opened++
		}
		o.eps = append(o.eps, e)
		o.added = append(o.added, store.BoxMember{EpisodeID: e.ID, At: e.OccurredAt})
		o.dirty = true
		remake(&o.box, o.eps)
		st.Boxed++
	}
	for _, path := range sortedKeys(late) {
		o := late[path]
		if err := p.seal(ctx, db, home, o, "late", o.box.LastAt, &st, sealed); err != nil {
			return st, err
		}
	}
	for _, path := range sortedKeys(opens) {
		o := opens[path]
		if o.box.Sealed() {
			continue
		}
		if now.Sub(o.box.LastAt) > p.TimeGap {
			if err := p.seal(ctx, db, home, o, "idle", o.box.LastAt.Add(p.TimeGap), &st, sealed); err != nil {
				return st, err
			}
			continue
		}
		if o.dirty {
			if err := db.SaveBox(ctx, o.box, o.added); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// SealReason is why box b (holding eps) must seal before episode e joins
// it: "idle" when e comes more than TimeGap after its last episode,
// "full" when it holds MaxMemories, "topic" when e's topic overlap with
// it is below TopicShift; "" when e joins it.
func (p Policy) SealReason(b store.Box, eps []episode.Episode, e episode.Episode) string {
	switch {
	case e.OccurredAt.Sub(b.LastAt) > p.TimeGap:
		return "idle"
	case len(eps) >= p.MaxMemories:
		return "full"
	case Overlap(b, e) < p.TopicShift:
		return "topic"
	}
	return ""
}

// sealTime is when a box sealed for reason why, on the episodes' clock:
// TimeGap after its last episode for a pause, else when e came.
func (p Policy) sealTime(b store.Box, e episode.Episode, why string) time.Time {
	if why == "idle" {
		return b.LastAt.Add(p.TimeGap)
	}
	return e.OccurredAt
}

// Overlap is the topic overlap of episode e with box b: the cosine of e's
// vector with b's centroid when both are of one embedder, else the share
// of e's key terms that b holds.
func Overlap(b store.Box, e episode.Episode) float64 {
	if len(b.Centroid) > 0 && len(e.Embedding) == len(b.Centroid) && e.Embedder == b.Embedder {
		return cosine(b.Centroid, e.Embedding)
	}
	ts := Terms([]episode.Episode{e}, maxTerms)
	if len(ts) == 0 {
		return 0
	}
	n := 0
	for _, t := range ts {
		if slices.Contains(b.Terms, t) {
			n++
		}
	}
	return float64(n) / float64(len(ts))
}

// BoxOverlap is the topic overlap of two boxes: the cosine of their
// centroids when both are of one embedder, else the Jaccard share of
// their key terms.
func BoxOverlap(a, b store.Box) float64 {
	if len(a.Centroid) > 0 && len(a.Centroid) == len(b.Centroid) && a.Embedder == b.Embedder {
		return cosine(a.Centroid, b.Centroid)
	}
	if len(a.Terms) == 0 || len(b.Terms) == 0 {
		return 0
	}
	n := 0
	for _, t := range a.Terms {
		if slices.Contains(b.Terms, t) {
			n++
		}
	}
	return float64(n) / float64(len(a.Terms)+len(b.Terms)-n)
}

// seal seals o at t for reason why, weaves it into a trace, saves it and
// writes its file.
func (p Policy) seal(ctx context.Context, db *store.DB, home string, o *open, why string, t time.Time, st *Stats, sealed sealedCache) error {
	o.box.SealedAt, o.box.SealReason = t, why
	if t.Before(o.box.LastAt) {
		o.box.SealedAt = o.box.LastAt
	}
	earlier, err := sealed.get(ctx, db, o.box.ProjectPath)
	if err != nil {
		return err
	}
	tr, _ := p.Weave(o.box, earlier)
	if tr == "" {
		tr = traceID(o.box.ID)
		st.Traces++
	} else {
		st.Woven++
	}
	o.box.TraceID = tr
	if err := db.SaveBox(ctx, o.box, o.added); err != nil {
		return err
	}
	o.added = nil
	st.Sealed++
	sealed.add(o.box)
	if home != "" {
		return WriteFile(home, o.box, o.eps)
	}
	return nil
}

// sealedCache holds, per project, the latest sealed boxes a box sealing
// is woven against (weaveWindow of them, in the store's order: the latest
// sealed first, then by id), read from the store once a build.
type sealedCache map[string][]store.Box

func (c sealedCache) get(ctx context.Context, db *store.DB, projectPath string) ([]store.Box, error) {
	if bs, ok := c[projectPath]; ok {
		return bs, nil
	}
	bs, err := db.SealedBoxes(ctx, projectPath, weaveWindow)
	if err != nil {
		return nil, err
	}
	c[projectPath] = bs
	return bs, nil
}

// add puts a box just sealed (and saved) in its place.
func (c sealedCache) add(b store.Box) {
	bs, ok := c[b.ProjectPath]
	if !ok {
		return // read from the store, with b, when first needed
	}
	i := slices.IndexFunc(bs, func(x store.Box) bool {
		return x.SealedAt.Before(b.SealedAt) || x.SealedAt.Equal(b.SealedAt) && x.ID > b.ID
	})
	if i < 0 {
		i = len(bs)
	}
	bs = slices.Insert(bs, i, b)
	if len(bs) > weaveWindow {
		bs = bs[:weaveWindow]
	}
	c[b.ProjectPath] = bs
}

// Weave returns the trace box b joins: that of the earlier sealed box
// (other than b) it overlaps most, when at least TraceOverlap, with that
// overlap; "" for none.
func (p Policy) Weave(b store.Box, earlier []store.Box) (string, float64) {
	best, bestO := "", p.TraceOverlap
	var mean []float64
	if p.Center {
		mean = meanCentroid(b, earlier)
	}
	for _, c := range earlier {
		if c.ID == b.ID || c.TraceID == "" || c.OpenedAt.After(b.OpenedAt) {
			continue
		}
		o := 0.0
		if mean != nil && c.Embedder == b.Embedder && len(c.Centroid) == len(mean) {
			o = centred(b.Centroid, c.Centroid, mean)
		} else {
			o = BoxOverlap(b, c)
		}
		if o >= bestO {
			best, bestO = c.TraceID, o
		}
	}
	if best == "" {
		return "", 0
	}
	return best, bestO
}

// meanCentroid is the mean of the centroids of earlier of b's embedder,
// nil for fewer than two.
func meanCentroid(b store.Box, earlier []store.Box) []float64 {
	var sum []float64
	n := 0
	for _, c := range earlier {
		if c.Embedder != b.Embedder || len(c.Centroid) != len(b.Centroid) || len(c.Centroid) == 0 {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(c.Centroid))
		}
		for i, v := range c.Centroid {
			sum[i] += float64(v)
		}
		n++
	}
	if n < 2 {
		return nil
	}
	for i := range sum {
		sum[i] /= float64(n)
	}
	return sum
}

// centred is the cosine of a-mean and b-mean.
func centred(a, b []float32, mean []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i])-mean[i], float64(b[i])-mean[i]
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// Refresh makes again the boxes that lost members (a forgotten episode)
// and rewrites their files, and drops the ones left empty with their
// files: forget calls it so that no box file keeps a forgotten episode's
// words until the worker's next run.
func Refresh(ctx context.Context, db *store.DB, home string) (Stats, error) {
	var st Stats
	err := refresh(ctx, db, home, &st)
	return st, err
}

// refresh is Refresh, counting in st.
func refresh(ctx context.Context, db *store.DB, home string, st *Stats) error {
	ids, err := db.StaleBoxes(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		b, err := db.GetBox(ctx, id)
		if err != nil {
			return err
		}
		eps, err := db.BoxEpisodes(ctx, id)
		if err != nil {
			return err
		}
		if len(eps) == 0 {
			if err := db.DeleteBox(ctx, id); err != nil {
				return err
			}
			if home != "" {
				if err := RemoveFile(home, b); err != nil {
					return err
				}
			}
			st.Dropped++
			continue
		}
		remake(&b, eps)
		b.OpenedAt = eps[0].OccurredAt
		if err := db.SaveBox(ctx, b, nil); err != nil {
			return err
		}
		if b.Sealed() && home != "" {
			if err := WriteFile(home, b, eps); err != nil {
				return err
			}
		}
		st.Refreshed++
	}
	return nil
}

// remake sets b's members, last time, terms and centroid from eps.
func remake(b *store.Box, eps []episode.Episode) {
	b.Members = len(eps)
	b.LastAt = b.OpenedAt
	for _, e := range eps {
		if e.OccurredAt.After(b.LastAt) {
			b.LastAt = e.OccurredAt
		}
	}
	b.Terms = Terms(eps, maxTerms)
	b.Centroid, b.Embedder = Centroid(eps)
}

// Centroid is the normalised mean of the vectors of the episodes of the
// embedder most of them have (the latest one's on a tie), with that
// embedder's name; nil when none has a vector.
func Centroid(eps []episode.Episode) ([]float32, string) {
	count := map[string]int{}
	name := ""
	for _, e := range eps {
		if len(e.Embedding) == 0 || e.Embedder == "" {
			continue
		}
		count[e.Embedder]++
		if count[e.Embedder] >= count[name] {
			name = e.Embedder
		}
	}
	if name == "" {
		return nil, ""
	}
	var sum []float64
	for _, e := range eps {
		if e.Embedder != name || len(e.Embedding) == 0 {
			continue
		}
		if sum == nil {
			sum = make([]float64, len(e.Embedding))
		}
		if len(e.Embedding) != len(sum) {
			continue
		}
		var n float64
		for _, v := range e.Embedding {
			n += float64(v) * float64(v)
		}
		n = math.Sqrt(n)
		if n == 0 {
			continue
		}
		for i, v := range e.Embedding {
			sum[i] += float64(v) / n
		}
	}
	var n float64
	for _, v := range sum {
		n += v * v
	}
	n = math.Sqrt(n)
	if n == 0 {
		return nil, ""
	}
	out := make([]float32, len(sum))
	for i, v := range sum {
		out[i] = float32(v / n)
	}
	return out, name
}

// Terms are the key terms of eps, most frequent first (then first
// seen), at most max: their entities, lower-cased; an episode without
// entities gives the content words of its summary.
func Terms(eps []episode.Episode, max int) []string {
	count := map[string]int{}
	var order []string
	add := func(t string) {
		t = strings.ToLower(strings.TrimSpace(t))
		if len([]rune(t)) < 2 || lexicon.IsFunctionWord(t) {
			return
		}
		if count[t] == 0 {
			order = append(order, t)
		}
		count[t]++
	}
	for _, e := range eps {
		if len(e.Entities) > 0 {
			for _, t := range e.Entities {
				add(t)
			}
			continue
		}
		for _, w := range strings.FieldsFunc(e.Summary, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r > 127)
		}) {
			if len(w) >= 4 {
				add(strings.Trim(w, ".-_"))
			}
		}
	}
	slices.SortStableFunc(order, func(a, b string) int { return cmp.Compare(count[b], count[a]) })
	if len(order) > max {
		order = order[:max]
	}
	return order
}

func cosine(a, b []float32) float64 { return float64(embed.Cosine(a, b)) }

// boxID names the box a project's episode e opens: the same episode
// always opens the same box.
func boxID(e episode.Episode) string { return "bx_" + hash12(e.ProjectPath+"\x00"+e.ID) }

// traceID names the trace a box starts.
func traceID(boxID string) string { return "tr_" + hash12(boxID) }

func hash12(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:6])
}

func sortedKeys(m map[string]*open) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Label is how a box or trace is named for a reader: its first key
// terms.
func Label(terms []string) string {
	if len(terms) == 0 {
		return "(no key terms)"
	}
	return strings.Join(terms[:min(4, len(terms))], ", ")
}
