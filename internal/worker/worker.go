// Package worker is engram's background cycle: drain the spool, sweep the
// transcripts of recently active sessions for late lines, turn pending
// captures into episodes, consolidate episodes into beliefs, and precompute
// the recollections the prompt hook reads. One cycle runs under a single-instance lock; it
// is safe to start at any time and to kill at any point.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/review"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/store"
)

// Components are the pluggable parts chosen from the configuration.
type Components struct {
	Extractor extract.Extractor
	Fallback  extract.Extractor
	Embedder  embed.Embedder
	// Judge synthesizes and classifies beliefs (local or LLM).
	Judge consolidate.Judge
	// ForceConsolidation runs belief consolidation whatever its triggers say.
	ForceConsolidation bool
	// IngestProgress, when set, is told how many pending captures ingest
	// has done (run --backfill prints it).
	IngestProgress func(done, total int)
	// BeliefProgress, when set, is told how many pending episodes belief
	// consolidation has worked (a backfill shows it).
	BeliefProgress func(done, total int)
	// Concurrency bounds extractions in flight.
	Concurrency int
	// ReembedBudget bounds the re-embedding of older memories in a cycle
	// (0: none), and ReembedProgress, when set, hears of each batch.
	ReembedBudget   time.Duration
	ReembedProgress func(ingest.ReembedStats)
	// Close releases what the components hold.
	Close func()
}

// Stats is what one cycle did.
type Stats struct {
	SpoolFiles    int                  `json:"spool_files"`
	SpoolCaptures int                  `json:"spool_captures"`
	SweptSessions int                  `json:"swept_sessions"`
	SweptCaptures int                  `json:"swept_captures"`
	Ingest        ingest.Stats         `json:"ingest"`
	Reembed       ingest.ReembedStats  `json:"reembed"`
	Accesses      int                  `json:"accesses"`
	Beliefs       consolidate.Stats    `json:"beliefs"`
	Recall        recollect.BuildStats `json:"recall"`
	Neighbours    int                  `json:"neighbour_files"`
	Review        review.Stats         `json:"review"`
	Promotion     promote.Stats        `json:"promotion"`
	Share         *share.Stats         `json:"share,omitempty"`
	ShareError    string               `json:"share_error,omitempty"`
	Millis        int64                `json:"ms"`
}

// ErrBusy means another cycle holds the lock.
var ErrBusy = fmt.Errorf("another engram-worker run is in progress")

// Lock takes the worker's single-instance lock without waiting; it returns
// ErrBusy when another process holds it. The kernel releases the lock when
// its holder dies, even by SIGKILL.
func Lock(home string) (*flock.Flock, error) {
	lk := flock.New(filepath.Join(home, "worker.lock"))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lk.Path(), err)
	}
	if !ok {
		return nil, ErrBusy
	}
	return lk, nil
}

// Cycle runs one cycle. The caller holds the lock.
func Cycle(ctx context.Context, cfg config.Config, db *store.DB, comp Components, log *slog.Logger) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Millis = time.Since(start).Milliseconds() }()
	if st, err = Capture(ctx, cfg, db, log); err != nil {
		return st, err
	}
	p := &ingest.Pipeline{DB: db, Extractor: comp.Extractor, Fallback: comp.Fallback, Embedder: comp.Embedder,
		Log: log, Concurrency: comp.Concurrency, DedupSimilarity: float32(cfg.DedupSimilarity), Progress: comp.IngestProgress}
	st.Ingest, err = p.Run(ctx)
	if err != nil {
		return st, fmt.Errorf("ingest: %w", err)
	}
	if embed.IsSentence(comp.Embedder.Name()) {
		// Memories made before the sentence embedder arrived get its vectors,
		// newest first, within a budget per cycle.
		if st.Reembed, err = ingest.Reembed(ctx, db, comp.Embedder, comp.ReembedBudget, comp.ReembedProgress); err != nil {
			return st, fmt.Errorf("re-embed: %w", err)
		}
	} else {
		// Beliefs without a vector (a statement edited in review while the
		// configured embedder was not at hand) get one; Reembed does the
		// same for the sentence embedder.
		if st.Reembed.Beliefs, err = ingest.EmbedMissingBeliefs(ctx, db, comp.Embedder, comp.ReembedBudget); err != nil {
			return st, fmt.Errorf("embed beliefs: %w", err)
		}
	}
	if st.Accesses, err = recollect.FoldAccessLog(ctx, db, cfg.Home); err != nil {
		return st, fmt.Errorf("fold access log: %w", err)
	}
	c := &consolidate.Consolidator{DB: db, Judge: comp.Judge, Embedder: comp.Embedder, Log: log,
		Options: consolidate.Options{EpisodeThreshold: cfg.BeliefEpisodeThreshold, Interval: cfg.BeliefInterval,
			ClusterSimilarity: cfg.BeliefClusterSimilarity, Force: comp.ForceConsolidation, Progress: comp.BeliefProgress,
			CommitmentTTL: time.Duration(cfg.CommitmentDays) * 24 * time.Hour}}
	if st.Beliefs, err = c.Run(ctx, time.Now()); err != nil {
		return st, fmt.Errorf("consolidate beliefs: %w", err)
	}
	if cfg.ShareURL != "" {
		// After consolidation, so that an episode and the belief it formed
		// leave together; before the recollections, so that what was
		// pulled is recallable at once. A server that cannot be reached
		// costs this step only: the cycle goes on, and the next one pushes
		// what is queued.
		ss, serr := share.Sync(ctx, db, share.Options{URL: cfg.ShareURL, Personal: cfg.SharePersonal,
			Embedder: comp.Embedder, Log: log})
		st.Share = &ss
		if serr != nil {
			if ctx.Err() != nil {
				return st, ctx.Err()
			}
			st.ShareError = serr.Error()
			log.Warn("share: sync failed; memory stays local until the next cycle", "err", serr, "pending", ss.Pending)
		} else if ss.Pushed+ss.Tombstones+ss.Pulled > 0 {
			log.Info("share: synced", "pushed", ss.Pushed, "tombstones", ss.Tombstones, "pulled", ss.Pulled,
				"inserted", ss.Inserted, "updated", ss.Updated, "deleted", ss.Deleted, "ms", ss.Millis)
		}
	}
	if st.Recall, err = recollect.Build(ctx, db, cfg.Home, recollect.BuildOptions{}, time.Now()); err != nil {
		return st, fmt.Errorf("recollections: %w", err)
	}
	now := time.Now()
	if st.Neighbours, err = recollect.BuildNeighbours(ctx, db, cfg.Home, comp.Embedder.Name(), now.Add(-24*time.Hour), now); err != nil {
		return st, fmt.Errorf("session neighbours: %w", err)
	}
	recollect.CleanSessionFiles(cfg.Home, 7*24*time.Hour, now)
	if st.Review, err = review.Advance(ctx, db, cfg.Review, time.Now()); err != nil {
		return st, fmt.Errorf("review levels: %w", err)
	}
	if err := notice.WriteReview(cfg.Home, st.Review.Waiting); err != nil {
		log.Warn("review notice", "err", err)
	}
	if st.Promotion, err = promote.Run(ctx, db, promote.OptionsFrom(cfg, log, time.Now())); err != nil {
		return st, fmt.Errorf("promotion: %w", err)
	}
	return st, nil
}

// Capture is the capture part of a cycle: drain the spool, then sweep.
func Capture(ctx context.Context, cfg config.Config, db *store.DB, log *slog.Logger) (Stats, error) {
	var st Stats
	start := time.Now()
	opt := capture.OptionsFrom(cfg)
	drained, err := capture.Drain(ctx, db, cfg.SpoolDir(), opt, log)
	st.SpoolFiles, st.SpoolCaptures = drained.Files, drained.Captures
	if err != nil {
		return st, fmt.Errorf("drain spool: %w", err)
	}
	swept, err := capture.Sweep(ctx, db, start.Add(-cfg.SweepWindow), opt, log)
	st.SweptSessions, st.SweptCaptures = swept.Read, swept.Captures
	if err != nil {
		return st, fmt.Errorf("sweep: %w", err)
	}
	return st, nil
}
