// Package consolidate turns episodes into beliefs and keeps beliefs true to
// the evidence: it clusters the episodes that arrived since its checkpoint,
// has a judge (the local one, or an LLM) synthesize a candidate belief per
// cluster, matches candidates against active beliefs (reinforce, classify,
// or create), and then applies the rule gates — split, revise, archive,
// merge — that alone may change a belief destructively. Every change of a
// cycle and the new checkpoint commit in one transaction.
package consolidate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/lexicon"
	"github.com/engram-memory/engram/internal/safe"
	"github.com/engram-memory/engram/internal/store"
)

// Thresholds of the belief design.
const (
	// ReinforceSimilarity: a candidate this close to a belief reinforces it.
	ReinforceSimilarity = 0.92
	// MatchSimilarity: closer than this, episodes are classified against
	// the belief; farther, the candidate is a new belief.
	MatchSimilarity = 0.70
	// MergeSimilarity, MergeConfidence, MergeQuiet: the merge gate.
	MergeSimilarity = 0.92
	MergeConfidence = 0.6
	MergeQuiet      = 7 * 24 * time.Hour
	// ArchiveConfidence, StaleAfter, StaleEvidence: the archive gate.
	ArchiveConfidence = 0.3
	StaleAfter        = 90 * 24 * time.Hour
	StaleEvidence     = 5
	// The revision gate: confidence fell below ReviseBelow from above
	// RevisePeak, with MinContradictions and MinEvidence.
	ReviseBelow       = 0.4
	RevisePeak        = 0.5
	MinContradictions = 3
	MinEvidence       = 5
	// The split gate: MinContradictions and MinSupports, MinPartials and
	// MinEvidence.
	MinSupports = 3
	MinPartials = 2

	// structural similarities: a candidate making exactly a belief's claim
	// reinforces it; a claim about the same subject is classified.
	sameClaim   = 0.95
	sameSubject = 0.80
)

// CheckpointKey is the meta key of the consolidation checkpoint.
const CheckpointKey = "belief_checkpoint"

// Options tunes a consolidation cycle. Zero values take the defaults.
type Options struct {
	// EpisodeThreshold new episodes since the checkpoint trigger a cycle (20).
	EpisodeThreshold int
	// Interval: a cycle runs at least this often (4h).
	Interval time.Duration
	// ClusterSimilarity is the cosine at which episodes cluster (0.70).
	ClusterSimilarity float64
	// MaxClusters bounds the clusters a costly judge works on per cycle (10).
	MaxClusters int
	// MaxClassify bounds the existing beliefs classified per cluster (5).
	MaxClassify int
	// MinCluster is the smallest cluster that may become a belief (3).
	MinCluster int
	// CycleBudget bounds a cycle's time (2m).
	CycleBudget time.Duration
	// MaxEpisodes bounds the new episodes read per cycle (500).
	MaxEpisodes int
	// PoolWindow and PoolSize bound the older episodes that are not yet
	// evidence of any belief and may join a cluster of new ones (30 days,
	// 2000).
	PoolWindow time.Duration
	PoolSize   int
	// CommitmentTTL: a commitment with no date after it was stored
	// decays this long after (DefaultCommitmentTTL).
	CommitmentTTL time.Duration
	// Force runs a cycle whatever the triggers say.
	Force bool
	// Progress, when set, is told after each batch of episodes how many of
	// the pending ones were worked.
	Progress func(done, total int)
}

func (o Options) withDefaults() Options {
	o.EpisodeThreshold = cmp.Or(o.EpisodeThreshold, 20)
	o.Interval = cmp.Or(o.Interval, 4*time.Hour)
	o.ClusterSimilarity = cmp.Or(o.ClusterSimilarity, 0.70)
	o.MaxClusters = cmp.Or(o.MaxClusters, 10)
	o.MaxClassify = cmp.Or(o.MaxClassify, 5)
	o.MinCluster = cmp.Or(o.MinCluster, 3)
	o.CycleBudget = cmp.Or(o.CycleBudget, 2*time.Minute)
	o.MaxEpisodes = cmp.Or(o.MaxEpisodes, 500)
	o.PoolWindow = cmp.Or(o.PoolWindow, 30*24*time.Hour)
	o.PoolSize = cmp.Or(o.PoolSize, 2000)
	o.CommitmentTTL = cmp.Or(o.CommitmentTTL, DefaultCommitmentTTL)
	return o
}

// Stats is what one cycle did.
type Stats struct {
	// Skipped says why no cycle ran ("" when one did).
	Skipped      string `json:"skipped,omitempty"`
	Episodes     int    `json:"episodes"`
	Pool         int    `json:"pool"`
	Clusters     int    `json:"clusters"`
	Worked       int    `json:"clusters_worked"`
	Created      int    `json:"created"`
	Supported    int    `json:"supported"`
	Contradicted int    `json:"contradicted"`
	Partial      int    `json:"partial"`
	Classified   int    `json:"classified"`
	Revised      int    `json:"revised"`
	Split        int    `json:"split"`
	Merged       int    `json:"merged"`
	Archived     int    `json:"archived"`
	Expired      int    `json:"expired"`
	// Metas counts the meta-beliefs stated (also counted in Created).
	Metas int `json:"metas,omitempty"`
	// EpisodesExpired and EpisodesArchived: episodes whose lifetime ended.
	EpisodesExpired  int `json:"episodes_expired,omitempty"`
	EpisodesArchived int `json:"episodes_archived,omitempty"`
	Fallbacks        int `json:"fallbacks"`
	// Superseded counts the episodes a correction took out of recall
	// (kept for history).
	Superseded int `json:"superseded,omitempty"`
	// Quarantined counts the episodes and beliefs a batch panicked on,
	// held out of consolidation (see the quarantine).
	Quarantined int `json:"quarantined,omitempty"`
	// Deferred is true when a budget ran out: the checkpoint stops before
	// the first cluster not worked, and the next cycle goes on from there.
	Deferred bool  `json:"deferred,omitempty"`
	Millis   int64 `json:"ms"`
}

// add sums a batch's stats into a cycle's; Deferred is the last batch's.
func (st *Stats) add(b Stats) {
	st.Episodes += b.Episodes
	st.Pool = max(st.Pool, b.Pool)
	st.Clusters += b.Clusters
	st.Worked += b.Worked
	st.Created += b.Created
	st.Supported += b.Supported
	st.Contradicted += b.Contradicted
	st.Partial += b.Partial
	st.Classified += b.Classified
	st.Revised += b.Revised
	st.Split += b.Split
	st.Merged += b.Merged
	st.Archived += b.Archived
	st.Expired += b.Expired
	st.Metas += b.Metas
	st.Fallbacks += b.Fallbacks
	st.Superseded += b.Superseded
	st.Quarantined += b.Quarantined
	st.Deferred = b.Deferred
}

// Checkpoint is where consolidation stands.
type Checkpoint struct {
	// Seq is the last episode sequence number accounted for.
	Seq int64 `json:"seq"`
	// At is when the last cycle ran.
	At time.Time `json:"at"`
}

// LoadCheckpoint reads the checkpoint (zero before the first cycle).
func LoadCheckpoint(ctx context.Context, db *store.DB) (Checkpoint, error) {
	var cp Checkpoint
	v, err := db.Meta(ctx, CheckpointKey)
	if err != nil || v == "" {
		return cp, err
	}
	if err := json.Unmarshal([]byte(v), &cp); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: %w", v, err)
	}
	return cp, nil
}

// Consolidator runs consolidation cycles.
type Consolidator struct {
	DB       *store.DB
	Judge    Judge // nil means Local
	Embedder embed.Embedder
	Log      *slog.Logger
	Options  Options
	// Build names the running build: what it quarantines is tried again
	// by another.
	Build string
}

// maxQuarantines bounds how many times one Run quarantines what a batch
// panicked on and works the batch again without it.
const maxQuarantines = 20

// Run runs one cycle if it is due (or forced), at time now.
func (c *Consolidator) Run(ctx context.Context, now time.Time) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Millis = time.Since(start).Milliseconds() }()
	o := c.Options.withDefaults()
	judge := c.Judge
	if judge == nil {
		judge = Local{}
	}
	log := c.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cp, err := LoadCheckpoint(ctx, c.DB)
	if err != nil {
		return st, err
	}
	pending, err := c.DB.CountEpisodesAfter(ctx, cp.Seq)
	if err != nil {
		return st, err
	}
	// Episodes and beliefs a quarantine released (after an upgrade, or on
	// the user's word) are worked in a batch of their own first, behind
	// the checkpoint.
	retry, err := c.retries(ctx)
	if err != nil {
		return st, err
	}
	switch {
	case o.Force, pending >= o.EpisodeThreshold, now.Sub(cp.At) >= o.Interval, len(retry) > 0:
	case pending > 0 && c.statedPending(ctx, cp.Seq, pending):
		// Something the user said in so many words waits: it becomes a
		// belief at this cycle, not after the next 20 episodes.
	default:
		st.Skipped = fmt.Sprintf("%d new episodes (threshold %d), last cycle %s ago (interval %s)",
			pending, o.EpisodeThreshold, now.Sub(cp.At).Round(time.Minute), o.Interval)
		return st, nil
	}
	// A costly judge has a time budget per cycle (and a cluster budget, in
	// run); the local judge costs nothing per call, so a cycle works
	// through everything pending, in batches of MaxEpisodes, each
	// committed with its checkpoint.
	_, local := judge.(Local)
	cctx := ctx
	if !local {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, o.CycleBudget)
		defer cancel()
	}
	done := 0
	quarantined := 0
	for {
		var bst Stats
		s := &cycle{c: c, o: o, judge: judge, log: log, now: now, st: &bst,
			beliefs: map[string]*belief.Belief{}, dirty: map[string]bool{}, created: map[string]bool{}, gained: map[string]bool{},
			fresh: map[string]bool{}, used: map[string]bool{}, epCache: map[string]episode.Episode{},
			metaSources: map[string]bool{}, asked: map[string]bool{}, retry: retry}
		next, err := s.safeRun(cctx, cp)
		if safe.IsPanic(err) && len(s.blame) > 0 && quarantined < maxQuarantines {
			// What the batch was working when it panicked is held out,
			// and the batch is worked again without it: nothing of the
			// failed attempt was saved.
			for _, b := range s.blame {
				log.Error("consolidation failed on an item; it is quarantined", "kind", b.kind, "id", b.id, "err", err)
				if qerr := c.DB.Quarantine(context.WithoutCancel(ctx), b.kind, b.id, "consolidate", err.Error(), c.Build); qerr != nil {
					return st, errors.Join(err, qerr)
				}
				quarantined++
				st.Quarantined++
			}
			continue
		}
		if err != nil {
			return st, err
		}
		if s.retry != nil {
			next = cp.Seq
		}
		// The batch's work and its checkpoint commit together; a parent
		// context cancelled by now still lets this write through.
		if err := s.save(context.WithoutCancel(ctx), Checkpoint{Seq: next, At: now}); err != nil {
			return st, err
		}
		if s.retry != nil {
			// A retry batch cut short by the budget leaves its episodes
			// to be retried by the next cycle.
			if !bst.Deferred {
				if err := c.retried(context.WithoutCancel(ctx), s); err != nil {
					return st, err
				}
			}
			retry = nil
			st.add(bst)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		st.add(bst)
		done += bst.Episodes
		if o.Progress != nil && (bst.Episodes > 0 || done == 0) {
			o.Progress(min(done, pending), pending)
		}
		if !local || !bst.Deferred || bst.Episodes == 0 || next <= cp.Seq || ctx.Err() != nil {
			break
		}
		cp = Checkpoint{Seq: next, At: now}
	}
	if st.EpisodesExpired, st.EpisodesArchived, err = c.episodeLifetimes(ctx, o, now); err != nil {
		return st, err
	}
	log.Info("consolidated", "episodes", st.Episodes, "clusters", st.Clusters, "created", st.Created,
		"supported", st.Supported, "contradicted", st.Contradicted, "revised", st.Revised, "split", st.Split,
		"merged", st.Merged, "archived", st.Archived, "expired", st.Expired, "episodes_expired", st.EpisodesExpired,
		"episodes_archived", st.EpisodesArchived, "deferred", st.Deferred)
	return st, nil
}

// retries returns the episodes a quarantine released, to be worked again
// (nil when there are none, and none that still exist).
func (c *Consolidator) retries(ctx context.Context) ([]store.SeqEpisode, error) {
	ids, err := c.DB.RetryIDs(ctx, store.QuarantineEpisode)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	eps, err := c.DB.EpisodesWithSeq(ctx, slices.Collect(maps.Keys(ids)))
	if err != nil {
		return nil, err
	}
	if len(eps) == 0 {
		// Forgotten since: nothing left to work, nothing to hold.
		return nil, c.DB.Unquarantine(ctx, store.QuarantineEpisode, slices.Collect(maps.Keys(ids)))
	}
	return eps, nil
}

// retried lifts the quarantine of what a retry batch worked without a
// failure: its episodes, and the released beliefs it loaded.
func (c *Consolidator) retried(ctx context.Context, s *cycle) error {
	var eps []string
	for _, e := range s.retry {
		eps = append(eps, e.ID)
	}
	if err := c.DB.Unquarantine(ctx, store.QuarantineEpisode, eps); err != nil {
		return err
	}
	ids, err := c.DB.RetryIDs(ctx, store.QuarantineBelief)
	if err != nil {
		return err
	}
	return c.DB.Unquarantine(ctx, store.QuarantineBelief, slices.Collect(maps.Keys(ids)))
}

// blamed is an item a cycle was working on: what is quarantined when it
// panics.
type blamed struct{ kind, id string }

// safeRun is run, a panic becoming an error (s.blame says what was being
// worked).
func (s *cycle) safeRun(ctx context.Context, cp Checkpoint) (next int64, err error) {
	err = safe.Run(func() error {
		var rerr error
		next, rerr = s.run(ctx, cp)
		return rerr
	})
	return next, err
}

// working says which episodes the cycle works now.
func (s *cycle) working(eps ...*episode.Episode) {
	s.blame = s.blame[:0]
	for _, e := range eps {
		s.blame = append(s.blame, blamed{store.QuarantineEpisode, e.ID})
	}
}

// workingBelief says which belief the cycle works now.
func (s *cycle) workingBelief(id string) {
	s.blame = append(s.blame[:0], blamed{store.QuarantineBelief, id})
}

// statedPending reports whether one of the n episodes after seq (fewer
// than the episode threshold) holds an explicit statement.
func (c *Consolidator) statedPending(ctx context.Context, seq int64, n int) bool {
	eps, err := c.DB.EpisodesAfter(ctx, seq, n)
	if err != nil {
		return false // the triggers decide without it
	}
	for _, e := range eps {
		// A correction counts even when it states nothing new of its own
		// ("beanstalkd is gone"): the old value must stop being current
		// now.
		if claims, switches, corrects := statedOf(&e.Episode); len(claims) > 0 || len(switches) > 0 || corrects {
			return true
		}
	}
	return false
}

// cycle is the working state of one run.
type cycle struct {
	c     *Consolidator
	o     Options
	judge Judge
	log   *slog.Logger
	now   time.Time
	st    *Stats

	beliefs  map[string]*belief.Belief // active ones, and every one changed
	order    []string                  // ids in load/creation order
	dirty    map[string]bool
	created  map[string]bool
	gained   map[string]bool // gained evidence in this cycle (their links are observed again)
	fresh    map[string]bool // created, revised, split or merged in this cycle
	used     map[string]bool // episodes that are evidence of some belief
	epCache  map[string]episode.Episode
	retired  []retiredClaim // claims the user corrected, and since when
	events   []store.Event  // the history of this cycle's changes, saved with them
	newLinks []store.Link   // links of the beliefs made in this cycle
	// metaLinks link the meta-beliefs made in this cycle to their sources.
	metaLinks []store.Link
	// metaSources are the sources of active meta-beliefs; asked, the
	// groups a judge was asked to generalize in this cycle (saved, so that
	// none is asked twice).
	metaSources map[string]bool
	asked       map[string]bool
	levels      map[string]string // review levels other than pending (see review.go)
	// retry, when set, are the episodes this batch works instead of those
	// after the checkpoint (released from quarantine); the checkpoint
	// stays where it is.
	retry []store.SeqEpisode
	// blame is what the cycle is working on (nil: no item in particular).
	blame []blamed
	// superseded are the episodes a correction of this batch supersedes.
	superseded map[string]store.LifecycleChange
	// olds caches oldValuesOf by episode id: its store lookups are made
	// once a batch.
	olds map[string][]string
	// earlier caches statedBeforeOf by episode id.
	earlier map[string][]episode.Episode
}

func (s *cycle) run(ctx context.Context, cp Checkpoint) (next int64, err error) {
	next = cp.Seq
	newEps := s.retry
	if newEps == nil {
		if newEps, err = s.c.DB.EpisodesAfter(ctx, cp.Seq, s.o.MaxEpisodes); err != nil {
			return next, err
		}
	}
	// What a stage failed on stays out of it.
	held, err := s.c.DB.QuarantinedIDs(ctx, store.QuarantineEpisode)
	if err != nil {
		return next, err
	}
	heldBeliefs, err := s.c.DB.QuarantinedIDs(ctx, store.QuarantineBelief)
	if err != nil {
		return next, err
	}
	lastSeq := int64(0)
	if n := len(newEps); n > 0 {
		lastSeq = newEps[n-1].Seq
	}
	newEps = slices.DeleteFunc(slices.Clone(newEps), func(e store.SeqEpisode) bool { return held[e.ID] })
	for i := range newEps {
		s.resolve(ctx, &newEps[i].Episode)
	}
	s.st.Episodes = len(newEps)
	levels, err := s.c.DB.BeliefLevels(ctx)
	if err != nil {
		return next, err
	}
	s.loadLevels(levels)
	err = s.c.DB.EachBelief(ctx, func(b belief.Belief) error {
		for _, l := range [][]string{b.Supporting, b.Contradicting, b.Partial} {
			for _, id := range l {
				s.used[id] = true
			}
		}
		if heldBeliefs[b.ID] {
			return nil
		}
		if b.Status == belief.StatusActive || s.levels[b.ID] == store.LevelDenied {
			s.beliefs[b.ID] = &b
			s.order = append(s.order, b.ID)
		}
		if b.Status == belief.StatusRevised {
			at := b.UpdatedAt
			if n := len(b.Revisions); n > 0 && !b.Revisions[n-1].Timestamp.IsZero() {
				at = b.Revisions[n-1].Timestamp
			}
			s.noteRetired(&b, at)
		}
		return nil
	})
	if err != nil {
		return next, err
	}
	var pool []store.SeqEpisode
	if len(newEps) > 0 {
		older, err := s.c.DB.EpisodesUpTo(ctx, cp.Seq, s.now.Add(-s.o.PoolWindow), s.o.PoolSize)
		if err != nil {
			return next, err
		}
		inBatch := map[string]bool{}
		for _, e := range newEps {
			inBatch[e.ID] = true
		}
		for _, e := range older {
			if !s.used[e.ID] && !held[e.ID] && !inBatch[e.ID] {
				s.resolve(ctx, &e.Episode)
				pool = append(pool, e)
			}
		}
	}
	s.st.Pool = len(pool)
	// What names a value the user had moved away from is not current.
	s.supersedeLate(ctx, newEps)
	// What the user said in so many words bears on beliefs at once.
	s.statedAll(ctx, newEps)
	clusters := clusterEpisodes(newEps, pool, s.o.ClusterSimilarity)
	s.st.Clusters = len(clusters)
	_, local := s.judge.(Local)
	worked := 0
	for i, cl := range clusters {
		if ctx.Err() != nil || (!local && worked >= s.o.MaxClusters) {
			s.st.Deferred = true
			next = cl.minNewSeq() - 1
			for _, rest := range clusters[i+1:] {
				next = min(next, rest.minNewSeq()-1)
			}
			break
		}
		s.working(cl.newEpisodes()...)
		if err := s.cluster(ctx, cl); err != nil {
			if ctx.Err() != nil {
				// The time budget ran out inside this cluster: what was
				// applied stays (it is recorded per episode, so redoing
				// the cluster cannot count it twice).
				s.st.Deferred = true
				next = cl.minNewSeq() - 1
				for _, rest := range clusters[i+1:] {
					next = min(next, rest.minNewSeq()-1)
				}
				break
			}
			return next, err
		}
		worked++
		if len(newEps) > 0 {
			next = max(next, cl.maxNewSeq())
		}
	}
	s.working()
	s.st.Worked = worked
	if !s.st.Deferred && lastSeq > 0 {
		// Past the held episodes too: they wait for their release, not
		// at the checkpoint.
		next = lastSeq
		if len(newEps) == s.o.MaxEpisodes {
			s.st.Deferred = true
		}
	}
	// The gates run even when a budget ran out: they need no model unless
	// a revision or split has to phrase a new belief, and then the local
	// judge stands in.
	s.gates(ctx)
	s.newLinks = s.links(ctx)
	return next, nil
}

// cluster works one cluster.
func (s *cycle) cluster(ctx context.Context, cl *cluster) error {
	var eps []episode.Episode
	for _, it := range cl.items {
		if !s.used[it.ID] {
			eps = append(eps, it.Episode)
		}
	}
	if len(eps) == 0 {
		return nil
	}
	covered := map[string]bool{}
	if len(eps) >= s.o.MinCluster {
		g := Group{Scope: cl.scope, Project: cl.project, ProjectPath: cl.projectPath, Episodes: eps}
		cands, err := s.synthesize(ctx, g)
		if err != nil {
			return err
		}
		for _, cand := range cands {
			if err := s.candidate(ctx, cl, cand); err != nil {
				return err
			}
			for _, e := range cand.Episodes {
				covered[e.ID] = true
			}
		}
	}
	// Episodes no candidate spoke for (all of a small cluster) still bear
	// on existing beliefs: match each one directly.
	for _, it := range cl.items {
		if !it.isNew || covered[it.ID] || s.used[it.ID] {
			continue
		}
		if err := s.direct(ctx, cl, &it.Episode); err != nil {
			return err
		}
	}
	return nil
}

// synthesize asks the judge, falling back to the local judge when the
// model fails for a reason other than the cycle's deadline.
func (s *cycle) synthesize(ctx context.Context, g Group) ([]Candidate, error) {
	cands, err := s.judge.Synthesize(ctx, g)
	if err == nil {
		return cands, nil
	}
	if ctx.Err() != nil {
		return nil, err
	}
	s.st.Fallbacks++
	s.log.Warn("belief synthesis failed; using the local judge", "err", err)
	return Local{}.Synthesize(ctx, g)
}

// classify asks the judge, falling back to the local judge on failure.
func (s *cycle) classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (Relation, error) {
	s.st.Classified++
	rel, err := s.judge.Classify(ctx, b, e)
	if err == nil {
		return rel, nil
	}
	if ctx.Err() != nil {
		return "", err
	}
	s.st.Fallbacks++
	s.log.Warn("belief classification failed; using the local judge", "belief", b.ID, "episode", e.ID, "err", err)
	return classifyLocal(b, e), nil
}

// guard is the reinforce path's check: a candidate close enough to a
// belief supports it, unless the episode's own signals say the opposite
// (a negation embeds close to what it negates) or it only quotes the
// belief.
func guard(b *belief.Belief, e *episode.Episode) Relation {
	if selfReference(b, e) {
		return Irrelevant
	}
	if rel := classifyLocal(b, e); rel != Irrelevant {
		return rel
	}
	return Supports
}

type match struct {
	b   *belief.Belief
	sim float64
}

// matches returns the active beliefs that apply to a cluster's partition
// (its own, and the global ones) and are closer than MatchSimilarity to a
// vector or a claim, closest first.
func (s *cycle) matches(cl *cluster, vec []float32, embedder string, claims []claim, exact *claim) []match {
	var out []match
	for _, id := range s.order {
		b := s.beliefs[id]
		// A belief of the same scope and project, or a global one: what
		// the user holds everywhere is in question in every project.
		inScope := b.Scope == episode.ScopeGlobal || (b.Scope == cl.scope && partPath(b.Scope, b.ProjectPath) == cl.projectPath)
		if b.Status != belief.StatusActive || !inScope {
			continue
		}
		if sim, ok := s.similarity(b, vec, embedder, claims, exact); ok && sim > MatchSimilarity {
			out = append(out, match{b, sim})
		}
	}
	slices.SortStableFunc(out, func(a, b match) int { return cmp.Compare(b.sim, a.sim) })
	return out
}

// similarity is how close a vector and claims are to a belief; false when
// both sides say what they are about, and it differs.
func (s *cycle) similarity(b *belief.Belief, vec []float32, embedder string, claims []claim, exact *claim) (float64, bool) {
	sim := 0.0
	if len(vec) > 0 && b.Embedder == embedder && len(b.Embedding) == len(vec) {
		sim = float64(embed.Cosine(vec, b.Embedding))
	}
	if bc, ok := beliefClaim(b); ok {
		if differentSubjects(bc, exact, claims) {
			// Both sides say what they are about, and it differs:
			// however close the vectors (a sentence embedder puts
			// "prefers bun" next to "prefers npm"), no match.
			return 0, false
		}
		if exact != nil && *exact == bc {
			sim = max(sim, sameClaim)
		}
		for _, c := range claims {
			if c.subject == bc.subject && c.class == bc.class {
				sim = max(sim, sameSubject)
			}
		}
	}
	return sim, true
}

// differentSubjects reports a belief whose claim is about another subject
// than every claim known of the other side (none known: false).
func differentSubjects(bc claim, exact *claim, claims []claim) bool {
	if exact == nil && len(claims) == 0 {
		return false
	}
	if exact != nil && exact.subject == bc.subject {
		return false
	}
	for _, c := range claims {
		if c.subject == bc.subject {
			return false
		}
	}
	return true
}

// candidate matches one candidate against the partition's beliefs.
func (s *cycle) candidate(ctx context.Context, cl *cluster, cand Candidate) error {
	vec := s.embed(ctx, cand.Statement)
	exact, hasExact := beliefClaim(&belief.Belief{Subject: cand.Subject, Predicate: cand.Predicate, Context: cand.Context})
	var claims []claim
	if hasExact {
		claims = []claim{exact}
	}
	var ex *claim
	if hasExact {
		ex = &exact
	}
	ms := s.matches(cl, vec, s.embedderName(), claims, ex)
	if len(ms) > 0 && ms[0].sim > ReinforceSimilarity {
		b := ms[0].b
		for i := range cand.Episodes {
			s.apply(b, &cand.Episodes[i], guard(b, &cand.Episodes[i]))
		}
		return nil
	}
	relevant := false
	for _, m := range ms[:min(len(ms), s.o.MaxClassify)] {
		for i := range cand.Episodes {
			e := &cand.Episodes[i]
			if hasEvidence(m.b, e.ID) {
				relevant = true
				continue
			}
			rel, err := s.classify(ctx, m.b, e)
			if err != nil {
				return err
			}
			if s.apply(m.b, e, rel) {
				relevant = true
			}
		}
	}
	if relevant {
		return nil
	}
	if d := s.deniedMatch(cl, vec, claims, ex); d != nil {
		// Said again: evidence of the denied belief, not a new one.
		for i := range cand.Episodes {
			s.apply(d, &cand.Episodes[i], Supports)
		}
		return nil
	}
	return s.create(cl, cand, vec)
}

// direct matches one episode that no candidate spoke for.
func (s *cycle) direct(ctx context.Context, cl *cluster, e *episode.Episode) error {
	var vec []float32
	if e.Embedder == s.embedderName() {
		vec = e.Embedding
	}
	ms := s.matches(cl, vec, s.embedderName(), claimsOf(e), nil)
	for _, m := range ms[:min(len(ms), s.o.MaxClassify)] {
		if hasEvidence(m.b, e.ID) {
			continue
		}
		rel := Relation("")
		if m.sim > ReinforceSimilarity {
			rel = guard(m.b, e)
		} else {
			var err error
			if rel, err = s.classify(ctx, m.b, e); err != nil {
				return err
			}
		}
		s.apply(m.b, e, rel)
	}
	return nil
}

// create makes a new belief from a candidate whose episodes support it:
// at least MinCluster of them, and more than contradict it.
func (s *cycle) create(cl *cluster, cand Candidate, vec []float32) error {
	if len(cand.Episodes) < s.o.MinCluster {
		return nil
	}
	if why := lexicon.NotAThing(cand.Subject); why != "" && cand.Subject != "" {
		s.log.Debug("candidate belief dropped: its subject is no thing", "why", why)
		return nil
	}
	pseudo := &belief.Belief{Statement: cand.Statement, Subject: cand.Subject, Predicate: cand.Predicate, Context: cand.Context}
	var sup, con, par []string
	pc, pok := beliefClaim(pseudo)
	for i := range cand.Episodes {
		e := &cand.Episodes[i]
		if selfReference(pseudo, e) || pok && s.stale(partKey(cl.scope, cl.projectPath), pc, when(e)) {
			continue // quotes the belief, or predates its correction
		}
		switch classifyLocal(pseudo, e) {
		case Contradicts:
			con = append(con, e.ID)
		case Partial:
			par = append(par, e.ID)
		case Supports:
			sup = append(sup, e.ID)
		case Irrelevant:
			// The local signals have no opinion: the judge's synthesis,
			// which only states what every episode supports, stands.
			if _, local := s.judge.(Local); !local {
				sup = append(sup, e.ID)
			}
		}
	}
	if len(sup) < s.o.MinCluster || len(sup) <= len(con) {
		return nil
	}
	b := &belief.Belief{
		ID: store.NewID("bl_"), Statement: cand.Statement, Subject: cand.Subject, Predicate: cand.Predicate,
		Context: cand.Context, Timeframe: cmp.Or(cand.Timeframe, belief.TimeCurrent),
		Alpha: 1 + float64(len(sup)), Beta: 1 + float64(len(con)),
		Scope: cl.scope, Project: cl.project, ProjectPath: cl.projectPath,
		Supporting: sup, Contradicting: con, Partial: par,
		Embedding: vec, Embedder: s.embedderName(), Status: belief.StatusActive,
		EvidenceCount: len(sup) + len(con) + len(par), Stability: 1,
		CreatedAt: s.now, UpdatedAt: s.now, LastReinforcedAt: s.now,
	}
	b.Kind, b.Speculative, b.DueAt = kindOf(cand.Episodes, sup)
	if len(vec) == 0 {
		b.Embedder = ""
	}
	b.PeakConfidence = b.Confidence()
	s.add(b)
	s.formed(b, "consolidate", fmt.Sprintf("clustered from %d episodes", len(sup)+len(con)+len(par)))
	for _, l := range [][]string{sup, con, par} {
		for _, id := range l {
			s.used[id] = true
		}
	}
	s.st.Created++
	s.log.Info("belief formed", "id", b.ID, "confidence", b.Confidence(), "evidence", b.EvidenceCount)
	return nil
}

// add registers a new belief of this cycle.
func (s *cycle) add(b *belief.Belief) {
	s.beliefs[b.ID] = b
	s.order = append(s.order, b.ID)
	s.created[b.ID], s.dirty[b.ID], s.fresh[b.ID] = true, true, true
}

// apply records one classification; it reports whether the episode bears
// on the belief. An episode already counted for the belief is not counted
// again.
func (s *cycle) apply(b *belief.Belief, e *episode.Episode, rel Relation) bool {
	if rel == Irrelevant || rel == "" {
		return false
	}
	if hasEvidence(b, e.ID) {
		return true
	}
	before := snapshot(b)
	switch rel {
	case Supports:
		b.Alpha++
		b.Supporting = append(b.Supporting, e.ID)
		b.LastReinforcedAt = s.now
		confirm(b, e)
		s.st.Supported++
	case Contradicts:
		b.Beta++
		b.Contradicting = append(b.Contradicting, e.ID)
		s.st.Contradicted++
	case Partial:
		b.Partial = append(b.Partial, e.ID)
		s.st.Partial++
	default:
		return false
	}
	b.EvidenceCount++
	b.PeakConfidence = max(b.PeakConfidence, b.Confidence())
	b.UpdatedAt = s.now
	s.used[e.ID] = true
	s.epCache[e.ID] = *e
	s.dirty[b.ID], s.gained[b.ID] = true, true
	s.record(b, relationAction(rel), e.ID, "", before)
	return true
}

func hasEvidence(b *belief.Belief, id string) bool {
	return slices.Contains(b.Supporting, id) || slices.Contains(b.Contradicting, id) || slices.Contains(b.Partial, id)
}

func (s *cycle) embedderName() string {
	if s.c.Embedder == nil {
		return ""
	}
	return s.c.Embedder.Name()
}

// embed embeds a statement; a failure leaves the structured match alone.
func (s *cycle) embed(ctx context.Context, text string) []float32 {
	if s.c.Embedder == nil {
		return nil
	}
	vs, err := s.c.Embedder.Embed(ctx, []string{text})
	if err != nil || len(vs) != 1 {
		s.log.Warn("embedding a belief failed; matching by its fields only", "err", err)
		return nil
	}
	return vs[0]
}

// episodes loads episodes by id (cached), in the order given, skipping
// those that no longer exist.
func (s *cycle) episodes(ctx context.Context, ids []string) ([]episode.Episode, error) {
	var missing []string
	for _, id := range ids {
		if _, ok := s.epCache[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		got, err := s.c.DB.EpisodesByID(ctx, missing)
		if err != nil {
			return nil, err
		}
		for id, e := range got {
			s.resolve(ctx, &e)
			s.epCache[id] = e
		}
	}
	var out []episode.Episode
	for _, id := range ids {
		if e, ok := s.epCache[id]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// save commits every changed belief and the checkpoint in one transaction.
func (s *cycle) save(ctx context.Context, cp Checkpoint) error {
	v, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	return s.c.DB.Beliefs(ctx, func(t *store.BeliefTx) error {
		gone := map[string]bool{}
		for _, id := range s.order {
			if !s.dirty[id] {
				continue
			}
			b := s.beliefs[id]
			if s.created[id] {
				if err := t.Insert(b); err != nil {
					return err
				}
				continue
			}
			if err := t.UpdateEvidence(b); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					// Forgotten by the user during the cycle: gone it stays.
					s.log.Info("belief forgotten during consolidation", "id", id)
					gone[id] = true
					continue
				}
				return err
			}
		}
		for _, l := range slices.Concat(s.metaLinks, s.newLinks) {
			if err := t.Link(l.From, l.To, l.Similarity, l.At); err != nil {
				return err
			}
		}
		for _, ev := range s.events {
			if gone[ev.MemoryID] {
				continue // its forget left one event; this one would bring its words back
			}
			if err := t.RecordEvent(ev); err != nil {
				return err
			}
		}
		for _, key := range slices.Sorted(maps.Keys(s.asked)) {
			if err := t.SetMeta(key, "1"); err != nil {
				return err
			}
		}
		for _, id := range slices.Sorted(maps.Keys(s.superseded)) {
			done, err := t.EndEpisode(s.superseded[id], s.now)
			if err != nil {
				return err
			}
			if done {
				s.st.Superseded++
			}
		}
		return t.SetMeta(CheckpointKey, string(v))
	})
}

// snapshot is what a history event keeps of a belief's values: status,
// confidence and evidence (the statement only where it is made).
func snapshot(b *belief.Belief) map[string]any {
	v := map[string]any{"status": b.Status, "confidence": math.Round(b.Confidence()*1000) / 1000, "evidence": b.EvidenceCount}
	if b.Speculative {
		v["speculative"] = true
	}
	return v
}

// record adds a history event of b, its values now as After, to the
// cycle's; they are saved with the change.
func (s *cycle) record(b *belief.Belief, action, cause, detail string, before map[string]any) {
	s.events = append(s.events, store.Event{At: s.now, MemoryID: b.ID, Action: action, Cause: cause, Detail: detail,
		Before: before, After: snapshot(b)})
}

// formed records a new belief, with its statement and where it holds.
func (s *cycle) formed(b *belief.Belief, cause, detail string) {
	s.record(b, store.ActionFormed, cause, detail, nil)
	ev := &s.events[len(s.events)-1]
	ev.After["statement"], ev.After["scope"], ev.After["kind"] = b.Statement, b.Scope, b.Kind
	if !b.DueAt.IsZero() {
		ev.After["due"] = b.DueAt.Format("2006-01-02")
	}
	if b.Project != "" {
		ev.After["project"] = b.Project
	}
}

// relationAction is the history action of an episode's relation to a belief.
func relationAction(rel Relation) string {
	switch rel {
	case Supports:
		return store.ActionReinforced
	case Contradicts:
		return store.ActionContradicted
	}
	return store.ActionPartial
}

// partPath is the project path of a partition: "" for global scope.
func partPath(scope, projectPath string) string {
	if scope == episode.ScopeGlobal {
		return ""
	}
	return projectPath
}
