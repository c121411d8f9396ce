// Package ingest turns pending captures into episodes: extract (LLM when
// configured, local heuristics otherwise or when a call fails), embed, dedup
// (identical content by hash, near-duplicates by cosine within the same
// scope and project), and commit each batch together with the captures'
// status changes so that a crash never loses or duplicates an episode.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/safe"
	"github.com/engram-memory/engram/internal/store"
)

// Pipeline holds what ingest needs.
type Pipeline struct {
	DB        *store.DB
	Extractor extract.Extractor // the configured extractor
	Fallback  extract.Extractor // used when Extractor fails for a capture (local); may be nil
	Embedder  embed.Embedder
	Log       *slog.Logger
	// DedupSimilarity is the cosine above which an episode is merged into
	// an existing one of the same scope and project.
	DedupSimilarity float32
	// Concurrency bounds extractions in flight (LLM calls); 1 for local.
	Concurrency int
	// BatchSize is how many captures one transaction commits.
	BatchSize int
	// Now is the clock (tests).
	Now func() time.Time
	// Build names the running build: a capture quarantined by it is tried
	// again by another.
	Build string
	// Progress, when set, hears after each batch how many of the captures
	// pending at the start are done (a backfill's thousands take minutes
	// with the sentence embedder).
	Progress func(done, total int)
}

// Stats counts what a run did.
type Stats struct {
	Captures  int `json:"captures"`
	Episodes  int `json:"episodes"`
	Merged    int `json:"merged"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
	Fallbacks int `json:"fallbacks"`
}

// DedupWindow is how many of the latest episodes of a scope and project a
// new episode is compared with for near-duplicates. Repeats of an exchange
// come close together in time; comparing with every episode ever stored
// would make a bulk backfill quadratic.
const DedupWindow = 1000

// index is the in-memory vector index used for near-duplicate detection,
// partitioned by scope and project. Each row carries a signature of its
// vector: which coordinates are positive and which negative. Near-duplicate
// vectors agree on almost every coordinate they use; unrelated ones (the
// local embedder's vectors are sparse) use mostly different coordinates.
// Comparing signatures (a few popcounts) skips the full dot product for
// almost every row.
type index struct {
	parts map[string][]row
}

type row struct {
	store.VectorRow
	sig signature
}

type signature struct{ pos, neg []uint64 }

func signatureOf(v []float32) signature {
	n := (len(v) + 63) / 64
	s := signature{pos: make([]uint64, n), neg: make([]uint64, n)}
	for i, x := range v {
		switch {
		case x > 0:
			s.pos[i/64] |= 1 << (i % 64)
		case x < 0:
			s.neg[i/64] |= 1 << (i % 64)
		}
	}
	return s
}

// maxSignDiff is the share of used coordinates whose sign may differ for a
// pair to still be compared in full. Measured with the local embedder:
// unrelated texts differ on most of their coordinates, a near-duplicate
// (cosine ≥ 0.95) on a small share.
const maxSignDiff = 0.5

// mayBeNear reports whether two signatures are close enough to compare.
func mayBeNear(a, b signature) bool {
	if len(a.pos) != len(b.pos) {
		return false
	}
	diff, used := 0, 0
	for i := range a.pos {
		diff += bits.OnesCount64((a.pos[i] ^ b.pos[i]) | (a.neg[i] ^ b.neg[i]))
		used += bits.OnesCount64(a.pos[i] | a.neg[i] | b.pos[i] | b.neg[i])
	}
	return used == 0 || float64(diff) <= maxSignDiff*float64(used)
}

func newIndex(rows []store.VectorRow) *index {
	ix := &index{parts: map[string][]row{}}
	for _, r := range rows {
		ix.add(r)
	}
	return ix
}

func partKey(scope, project string) string { return scope + "\x00" + project }

func (ix *index) add(r store.VectorRow) {
	k := partKey(r.Scope, r.ProjectPath)
	ix.parts[k] = append(ix.parts[k], row{r, signatureOf(r.Vector)})
}

// remove drops the rows of the given ids added last (a batch's own rows).
func (ix *index) remove(ids map[string]bool) {
	for k, rows := range ix.parts {
		kept := rows[:0]
		for _, r := range rows {
			if !ids[r.ID] {
				kept = append(kept, r)
			}
		}
		ix.parts[k] = kept
	}
}

func (ix *index) nearest(scope, project string, v []float32) (string, float32) {
	rows := ix.parts[partKey(scope, project)]
	if len(rows) > DedupWindow {
		rows = rows[len(rows)-DedupWindow:]
	}
	sig := signatureOf(v)
	best, bestID := float32(-1), ""
	for _, r := range rows {
		if !mayBeNear(r.sig, sig) {
			continue
		}
		if s := dot(r.Vector, v); s > best {
			best, bestID = s, r.ID
		}
	}
	return bestID, best
}

// dot is the cosine of two L2-normalised vectors.
func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Run ingests pending captures until none is left or ctx ends.
func (p *Pipeline) Run(ctx context.Context) (Stats, error) {
	var st Stats
	if p.BatchSize <= 0 {
		// A batch is one write transaction: large enough to amortise the
		// FTS index flush, small enough to hold the lock for tens of ms.
		p.BatchSize = 256
	}
	if p.Concurrency <= 0 {
		p.Concurrency = 1
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.DedupSimilarity == 0 {
		p.DedupSimilarity = 0.95
	}
	rows, err := p.DB.EpisodeVectors(ctx, p.Embedder.Name())
	if err != nil {
		return st, err
	}
	ix := newIndex(rows)
	total := 0
	if p.Progress != nil {
		counts, err := p.DB.CaptureCounts(ctx)
		if err != nil {
			return st, err
		}
		total = counts[store.CapturePending]
	}
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		caps, err := p.DB.PendingCaptures(ctx, p.BatchSize)
		if err != nil {
			return st, err
		}
		if len(caps) == 0 {
			return st, nil
		}
		outs, fallbacks, err := p.batch(ctx, caps, ix)
		if err != nil {
			return st, err
		}
		res, err := p.DB.CommitOutcomes(ctx, outs)
		if err != nil {
			return st, err
		}
		for _, o := range outs {
			if o.Episode != nil && res.IDs[o.CaptureID] == o.Episode.ID {
				ix.add(store.VectorRow{ID: o.Episode.ID, Scope: o.Episode.Scope,
					ProjectPath: o.Episode.ProjectPath, Vector: o.Episode.Embedding})
			}
		}
		st.Captures += len(caps)
		st.Episodes += res.Inserted
		st.Merged += res.Merged
		st.Skipped += res.Skipped
		st.Failed += res.Failed
		st.Fallbacks += fallbacks
		if p.Progress != nil {
			p.Progress(st.Captures, max(total, st.Captures))
		}
		if res.Inserted+res.Merged+res.Skipped+res.Failed == 0 && res.Stale == 0 {
			// Only retried failures: stop rather than spin on them this run.
			return st, nil
		}
	}
}

type extracted struct {
	draft    extract.Draft
	by       string
	err      error
	fallback bool
	panicked bool // err is a panic: the capture is quarantined at once
}

// safeExtract runs x on in, a panic becoming an error.
func safeExtract(ctx context.Context, x extract.Extractor, in extract.Input) (d extract.Draft, err error) {
	defer func() {
		if perr := safe.Recovered(recover()); perr != nil {
			d, err = extract.Draft{}, perr
		}
	}()
	return x.Extract(ctx, in)
}

// batch extracts, embeds and dedups one batch of captures.
func (p *Pipeline) batch(ctx context.Context, caps []store.Capture, ix *index) ([]store.Outcome, int, error) {
	results := make([]extracted, len(caps))
	sem := make(chan struct{}, p.Concurrency)
	var wg sync.WaitGroup
	if b, ok := p.Extractor.(extract.Batcher); ok && b.BatchSize() > 1 {
		// Several captures per call.
		for lo := 0; lo < len(caps); lo += b.BatchSize() {
			hi := min(lo+b.BatchSize(), len(caps))
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				p.extractBatch(ctx, b, caps[lo:hi], results[lo:hi])
			}()
		}
	} else {
		for i := range caps {
			wg.Add(1)
			sem <- struct{}{}
			go func(i int) {
				defer wg.Done()
				defer func() { <-sem }()
				results[i] = p.extract(ctx, caps[i])
			}(i)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}

	// Embed every new episode's text in one call (batched by the embedder).
	var texts []string
	var which []int
	for i, r := range results {
		if r.err == nil && !r.draft.Skip && !caps[i].Continuation {
			texts = append(texts, TextFor(p.Embedder.Name(), r.draft))
			which = append(which, i)
		}
	}
	vecs := make([][]float32, len(caps))
	if len(texts) > 0 {
		vs, err := p.embed(ctx, texts)
		if err != nil {
			// One text may be what fails: each alone, and the ones that
			// still fail fail their capture. When none goes through, the
			// embedder itself is down: the stage fails and every capture
			// stays pending.
			good := 0
			for k, i := range which {
				v, err1 := p.embed(ctx, texts[k:k+1])
				if err1 != nil {
					results[i] = extracted{err: fmt.Errorf("embed: %w", err1), panicked: safe.IsPanic(err1)}
					continue
				}
				vecs[i] = v[0]
				good++
			}
			if good == 0 {
				return nil, 0, fmt.Errorf("embed: %w", err)
			}
		} else {
			for k, i := range which {
				vecs[i] = vs[k]
			}
		}
	}

	now := p.Now()
	outs := make([]store.Outcome, 0, len(caps))
	fallbacks := 0
	// Within the batch, later captures may duplicate earlier ones.
	batchHash := map[string]string{}
	own := map[string]bool{}
	for i, c := range caps {
		r := results[i]
		if r.fallback {
			fallbacks++
		}
		switch {
		case r.err != nil:
			outs = append(outs, store.Outcome{CaptureID: c.ID, Fail: r.err.Error(), Panicked: r.panicked, Build: p.Build})
			continue
		case c.Continuation:
			// The turn's start is the nearest earlier capture of the
			// session: stored before, or earlier in this batch.
			prev, prevStart, err := p.DB.PreviousEpisodeStart(ctx, c.SessionID, c.ByteStart)
			if err != nil {
				return nil, 0, err
			}
			if id, start := batchEpisodeBefore(outs, caps[:i], c); id != "" && start > prevStart {
				prev = id
			}
			if prev != "" {
				outs = append(outs, store.Outcome{CaptureID: c.ID, MergeInto: prev, Merge: &store.EpisodeMerge{
					SessionID: c.SessionID, Context: c.Content, Entities: r.draft.Entities,
					Importance: r.draft.Importance, MaxContext: extract.MaxContext}})
				continue
			}
			// The turn's start was never captured: the tail stands alone.
			if r.draft.Skip {
				outs = append(outs, store.Outcome{CaptureID: c.ID, Skip: "trivial"})
				continue
			}
			vs, err := p.embed(ctx, []string{TextFor(p.Embedder.Name(), r.draft)})
			if err != nil {
				outs = append(outs, store.Outcome{CaptureID: c.ID, Fail: "embed: " + err.Error(),
					Panicked: safe.IsPanic(err), Build: p.Build})
				continue
			}
			vecs[i] = vs[0]
		case r.draft.Skip:
			outs = append(outs, store.Outcome{CaptureID: c.ID, Skip: "trivial"})
			continue
		}
		ep, err := p.safeEpisodeOf(c, r, vecs[i], now)
		if err != nil {
			outs = append(outs, store.Outcome{CaptureID: c.ID, Fail: err.Error(), Panicked: true, Build: p.Build})
			continue
		}
		if id, ok := batchHash[ep.ContentHash]; ok {
			outs = append(outs, store.Outcome{CaptureID: c.ID, MergeInto: id,
				Merge: &store.EpisodeMerge{SessionID: c.SessionID, Entities: ep.Entities, Importance: ep.Importance}})
			continue
		}
		if id, sim := ix.nearest(ep.Scope, ep.ProjectPath, ep.Embedding); id != "" && sim >= p.DedupSimilarity {
			outs = append(outs, store.Outcome{CaptureID: c.ID, MergeInto: id,
				Merge: &store.EpisodeMerge{SessionID: c.SessionID, Entities: ep.Entities, Importance: ep.Importance}})
			continue
		}
		batchHash[ep.ContentHash] = ep.ID
		// Visible to near-duplicate checks of later captures in this batch.
		ix.add(store.VectorRow{ID: ep.ID, Scope: ep.Scope, ProjectPath: ep.ProjectPath, Vector: ep.Embedding})
		own[ep.ID] = true
		outs = append(outs, store.Outcome{CaptureID: c.ID, Episode: ep})
	}
	// The batch's own rows were added for in-batch dedup; Run re-adds the
	// committed ones, so drop them here to avoid doubles.
	ix.remove(own)
	return outs, fallbacks, nil
}

// batchEpisodeBefore finds, among outcomes decided earlier in this batch,
// the episode of the same session's capture just before c.
func batchEpisodeBefore(outs []store.Outcome, earlier []store.Capture, c store.Capture) (string, int64) {
	byCapture := map[int64]string{}
	for _, o := range outs {
		switch {
		case o.Episode != nil:
			byCapture[o.CaptureID] = o.Episode.ID
		case o.MergeInto != "":
			byCapture[o.CaptureID] = o.MergeInto
		}
	}
	best, bestStart := "", int64(-1)
	for _, e := range earlier {
		if e.SessionID == c.SessionID && e.ByteStart < c.ByteStart && e.ByteStart > bestStart && byCapture[e.ID] != "" {
			best, bestStart = byCapture[e.ID], e.ByteStart
		}
	}
	return best, bestStart
}

// extractBatch extracts caps in one call of b; each capture the call did not
// serve goes to the fallback.
func (p *Pipeline) extractBatch(ctx context.Context, b extract.Batcher, caps []store.Capture, out []extracted) {
	ins := make([]extract.Input, len(caps))
	for i, c := range caps {
		ins[i] = InputOf(c)
	}
	ds, errs := safeBatch(ctx, b, ins)
	for i := range caps {
		if errs[i] == nil {
			out[i] = extracted{draft: ds[i], by: b.Name()}
			continue
		}
		out[i] = p.fallback(ctx, caps[i], ins[i], errs[i])
	}
}

// safeBatch is b.ExtractBatch with a panic failing every input (each then
// goes to the fallback on its own).
func safeBatch(ctx context.Context, b extract.Batcher, ins []extract.Input) (ds []extract.Draft, errs []error) {
	defer func() {
		if perr := safe.Recovered(recover()); perr != nil {
			ds, errs = make([]extract.Draft, len(ins)), make([]error, len(ins))
			for i := range errs {
				errs[i] = perr
			}
		}
	}()
	ds, errs = b.ExtractBatch(ctx, ins)
	if len(ds) != len(ins) || len(errs) != len(ins) {
		err := fmt.Errorf("extractor %s returned %d drafts and %d errors for %d captures", b.Name(), len(ds), len(errs), len(ins))
		ds, errs = make([]extract.Draft, len(ins)), make([]error, len(ins))
		for i := range errs {
			errs[i] = err
		}
	}
	return ds, errs
}

func (p *Pipeline) extract(ctx context.Context, c store.Capture) extracted {
	in := InputOf(c)
	d, err := safeExtract(ctx, p.Extractor, in)
	if err == nil {
		return extracted{draft: d, by: p.Extractor.Name()}
	}
	return p.fallback(ctx, c, in, err)
}

// fallback extracts in with the fallback extractor after the configured one
// failed with err. Without a fallback, or when it fails too, the capture
// fails; a panic of the last extractor tried quarantines it at once.
func (p *Pipeline) fallback(ctx context.Context, c store.Capture, in extract.Input, err error) extracted {
	if p.Fallback == nil || errors.Is(err, context.Canceled) {
		return extracted{err: err, panicked: safe.IsPanic(err)}
	}
	p.Log.Warn("extractor failed, using fallback", "capture", c.ID, "extractor", p.Extractor.Name(), "err", err)
	d, ferr := safeExtract(ctx, p.Fallback, in)
	if ferr != nil {
		return extracted{err: fmt.Errorf("%v; fallback: %w", err, ferr), panicked: safe.IsPanic(ferr)}
	}
	return extracted{draft: d, by: p.Fallback.Name(), fallback: true}
}

// InputOf turns a capture into extractor input.
func InputOf(c store.Capture) extract.Input {
	in := extract.Input{CaptureID: c.ID, SessionID: c.SessionID, Project: c.Project, ProjectPath: c.ProjectPath,
		TurnAt: c.TurnAt, Content: c.Content}
	_ = json.Unmarshal([]byte(c.Messages), &in.Blocks)
	return in
}

// embed is the embedder's Embed, a panic becoming an error and a reply of
// the wrong length an error too.
func (p *Pipeline) embed(ctx context.Context, texts []string) (vs [][]float32, err error) {
	defer func() {
		if perr := safe.Recovered(recover()); perr != nil {
			vs, err = nil, perr
		}
	}()
	vs, err = p.Embedder.Embed(ctx, texts)
	if err == nil && len(vs) != len(texts) {
		return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", p.Embedder.Name(), len(vs), len(texts))
	}
	return vs, err
}

// safeEpisodeOf is episodeOf, a panic (of the classification) becoming an
// error.
func (p *Pipeline) safeEpisodeOf(c store.Capture, r extracted, vec []float32, now time.Time) (ep *episode.Episode, err error) {
	defer func() {
		if perr := safe.Recovered(recover()); perr != nil {
			ep, err = nil, perr
		}
	}()
	return p.episodeOf(c, r, vec, now), nil
}

func (p *Pipeline) episodeOf(c store.Capture, r extracted, vec []float32, now time.Time) *episode.Episode {
	d := r.draft
	extract.Classify(InputOf(c), &d)
	scope := d.Scope
	if scope != episode.ScopeGlobal {
		scope = episode.ScopeProject
	}
	ep := &episode.Episode{
		ID: store.NewID("ep_"), Summary: d.Summary, Context: d.Context, Entities: d.Entities, Signals: d.Signals,
		Importance: d.Importance, Type: d.Type, Scope: scope, Project: c.Project, ProjectPath: c.ProjectPath,
		SessionID: c.SessionID, SessionIDs: []string{c.SessionID}, Embedding: vec, Embedder: p.Embedder.Name(),
		Extractor: r.by, OccurredAt: c.TurnAt, CreatedAt: now, UpdatedAt: now, Stability: 1,
		Kind: d.Kind, Speculative: d.Speculative, DueAt: d.DueAt,
	}
	if ep.Type == "" {
		ep.Type = episode.TypeEvent
	}
	ep.ContentHash = ContentHash(ep.Scope, ep.ProjectPath, c.Content)
	return ep
}

// ContentHash identifies identical content within a scope and project:
// case and white space do not make two exchanges different.
func ContentHash(scope, projectPath, content string) string {
	norm := strings.Join(strings.FieldsFunc(strings.ToLower(content), func(r rune) bool {
		return unicode.IsSpace(r)
	}), " ")
	if scope == episode.ScopeGlobal {
		projectPath = ""
	}
	sum := sha256.Sum256([]byte(scope + "\x00" + projectPath + "\x00" + norm))
	return hex.EncodeToString(sum[:16])
}

// TextFor is the text an episode's vector is made from by the embedder
// named: for a sentence embedder, the exchange as a memory bite shows it
// (what was said, tool calls named once, no tool output: the model reads
// its first 256 tokens, and boilerplate would fill them), else EmbedText.
func TextFor(embedder string, d extract.Draft) string {
	if !embed.IsSentence(embedder) {
		return EmbedText(d)
	}
	if t := recall.BiteText(d.Context); t != "" {
		return t
	}
	return d.Summary
}

// EmbedText is the text an episode's vector is made from by the lexical
// and remote embedders.
func EmbedText(d extract.Draft) string {
	var b strings.Builder
	b.WriteString(d.Summary)
	if len(d.Entities) > 0 {
		b.WriteString("\n")
		b.WriteString(strings.Join(d.Entities, " "))
	}
	ctx := d.Context
	if len(ctx) > 1500 {
		ctx = ctx[:1500]
	}
	b.WriteString("\n")
	b.WriteString(ctx)
	return b.String()
}
