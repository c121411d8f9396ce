// Package worker is engram's background cycle: drain the spool, sweep the
// transcripts of recently active sessions for late lines, turn pending
// captures into episodes, consolidate episodes into beliefs, and precompute
// the recollections the prompt hook reads. One cycle runs under a single-instance lock; it
// is safe to start at any time and to kill at any point.
package worker

import (
	"context"
	"errors"
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
	"github.com/engram-memory/engram/internal/safe"
	"github.com/engram-memory/engram/internal/share"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/thread"
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
	// Build names the running build (BuildID when empty): what it
	// quarantines, another build tries again.
	Build string
}

// Stats is what one cycle did.
type Stats struct {
	SpoolFiles    int                  `json:"spool_files"`
	SpoolCaptures int                  `json:"spool_captures"`
	SweptSessions int                  `json:"swept_sessions"`
	SweptCaptures int                  `json:"swept_captures"`
	Ingest        ingest.Stats         `json:"ingest"`
	Reembed       ingest.ReembedStats  `json:"reembed"`
	Threads       thread.Stats         `json:"threads"`
	Accesses      int                  `json:"accesses"`
	Beliefs       consolidate.Stats    `json:"beliefs"`
	Recall        recollect.BuildStats `json:"recall"`
	Neighbours    int                  `json:"neighbour_files"`
	Review        review.Stats         `json:"review"`
	Promotion     promote.Stats        `json:"promotion"`
	Share         *share.Stats         `json:"share,omitempty"`
	ShareError    string               `json:"share_error,omitempty"`
	// Failures are the steps that failed (the others ran).
	Failures []StepFailure `json:"failures,omitempty"`
	// Released counts the quarantined items a new build tries again;
	// Quarantined, the items held at the end of the cycle.
	Released    int   `json:"released,omitempty"`
	Quarantined int   `json:"quarantined"`
	Millis      int64 `json:"ms"`

	// LinksDecayed counts the links between beliefs whose confidence
	// decay lowered (package edge).
	LinksDecayed int `json:"links_decayed"`
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

// StepFailure is a step of the cycle that failed; the others went on.
type StepFailure struct {
	Step  string `json:"step"`
	Error string `json:"error"`
}

// Cycle runs one cycle. The caller holds the lock. Each step is guarded: a
// step that fails (an error, or a panic) is logged and recorded in
// st.Failures, and the steps after it still run, since each works from
// what the store holds; the returned error joins the failures. One bad item
// never fails a step: ingest and consolidation quarantine what they fail on
// and go on. Only a cancelled ctx stops the cycle early.
func Cycle(ctx context.Context, cfg config.Config, db *store.DB, comp Components, log *slog.Logger) (st Stats, err error) {
	start := time.Now()
	defer func() { st.Millis = time.Since(start).Milliseconds() }()
	var errs []error
	step := func(name string, fn func() error) {
		if ctx.Err() != nil {
			return
		}
		if err := safe.Run(fn); err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Error("cycle step failed; the others go on", "step", name, "err", err)
			st.Failures = append(st.Failures, StepFailure{Step: name, Error: err.Error()})
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	build := comp.Build
	if build == "" {
		build = BuildID()
	}
	step("quarantine", func() (err error) {
		// A new build may have fixed what an older one failed on.
		if st.Released, err = db.ReleaseQuarantine(ctx, build); st.Released > 0 {
			log.Info("quarantine: items held by another build are tried again", "items", st.Released, "build", build)
		}
		return err
	})
	step("capture", func() error {
		cst, err := Capture(ctx, cfg, db, log)
		st.SpoolFiles, st.SpoolCaptures, st.SweptSessions, st.SweptCaptures = cst.SpoolFiles, cst.SpoolCaptures, cst.SweptSessions, cst.SweptCaptures
		return err
	})
	step("ingest", func() (err error) {
		p := &ingest.Pipeline{DB: db, Extractor: comp.Extractor, Fallback: comp.Fallback, Embedder: comp.Embedder,
			Log: log, Concurrency: comp.Concurrency, DedupSimilarity: float32(cfg.DedupSimilarity), Progress: comp.IngestProgress,
			Build: build}
		st.Ingest, err = p.Run(ctx)
		return err
	})
	if embed.IsSentence(comp.Embedder.Name()) {
		// Memories made before the sentence embedder arrived get its vectors,
		// newest first, within a budget per cycle.
		step("re-embed", func() (err error) {
			st.Reembed, err = ingest.Reembed(ctx, db, comp.Embedder, comp.ReembedBudget, comp.ReembedProgress)
			return err
		})
	} else {
		// Beliefs without a vector (a statement edited in review while the
		// configured embedder was not at hand) get one; Reembed does the
		// same for the sentence embedder.
		step("embed beliefs", func() (err error) {
			st.Reembed.Beliefs, err = ingest.EmbedMissingBeliefs(ctx, db, comp.Embedder, comp.ReembedBudget)
			return err
		})
	}
	step("threads", func() (err error) {
		// After the vectors are made, so that topics compare sentence
		// vectors where the sentence embedder is at hand.
		st.Threads, err = thread.Build(ctx, db, cfg.Home, time.Now())
		return err
	})
	step("fold access log", func() (err error) {
		st.Accesses, err = recollect.FoldAccessLog(ctx, db, cfg.Home)
		return err
	})
	step("consolidate beliefs", func() (err error) {
		c := &consolidate.Consolidator{DB: db, Judge: comp.Judge, Embedder: comp.Embedder, Log: log, Build: build,
			Options: consolidate.Options{EpisodeThreshold: cfg.BeliefEpisodeThreshold, Interval: cfg.BeliefInterval,
				ClusterSimilarity: cfg.BeliefClusterSimilarity, Force: comp.ForceConsolidation, Progress: comp.BeliefProgress,
				CommitmentTTL: time.Duration(cfg.CommitmentDays) * 24 * time.Hour}}
		st.Beliefs, err = c.Run(ctx, time.Now())
		return err
	})
	if cfg.ShareURL != "" {
		// After consolidation, so that an episode and the belief it formed
		// leave together; before the recollections, so that what was
		// pulled is recallable at once. A server that cannot be reached
		// costs this step only: the cycle goes on, and the next one pushes
		// what is queued.
		step("share", func() error {
			ss, serr := share.Sync(ctx, db, share.Options{URL: cfg.ShareURL, Personal: cfg.SharePersonal,
				Embedder: comp.Embedder, Log: log})
			st.Share = &ss
			if serr != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				st.ShareError = serr.Error()
				log.Warn("share: sync failed; memory stays local until the next cycle", "err", serr, "pending", ss.Pending)
			} else if ss.Pushed+ss.Tombstones+ss.Pulled > 0 {
				log.Info("share: synced", "pushed", ss.Pushed, "tombstones", ss.Tombstones, "pulled", ss.Pulled,
					"inserted", ss.Inserted, "updated", ss.Updated, "deleted", ss.Deleted, "ms", ss.Millis)
			}
			return nil
		})
	}
	step("link decay", func() (err error) {
		// After consolidation has reinforced the links it observed again,
		// before the graph file is written with their confidences.
		st.LinksDecayed, err = db.DecayLinks(ctx, time.Now())
		return err
	})
	step("recollections", func() (err error) {
		st.Recall, err = recollect.Build(ctx, db, cfg.Home, recollect.BuildOptions{}, time.Now())
		return err
	})
	step("session neighbours", func() (err error) {
		now := time.Now()
		st.Neighbours, err = recollect.BuildNeighbours(ctx, db, cfg.Home, comp.Embedder.Name(), now.Add(-24*time.Hour), now)
		recollect.CleanSessionFiles(cfg.Home, 7*24*time.Hour, now)
		return err
	})
	step("review levels", func() (err error) {
		if st.Review, err = review.Advance(ctx, db, cfg.Review, time.Now()); err != nil {
			return err
		}
		if err := notice.WriteReview(cfg.Home, st.Review.Waiting); err != nil {
			log.Warn("review notice", "err", err)
		}
		return nil
	})
	step("promotion", func() (err error) {
		st.Promotion, err = promote.Run(ctx, db, promote.OptionsFrom(cfg, log, time.Now()))
		return err
	})
	step("quarantine", func() (err error) {
		st.Quarantined, err = db.QuarantineTotal(ctx)
		return err
	})
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return st, errors.Join(errs...)
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
