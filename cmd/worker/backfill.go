package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/engram-memory/engram/internal/capture"
	"github.com/engram-memory/engram/internal/worker"
)

func cmdBackfill(ctx context.Context, e *env, args []string) error {
	fs := newFlags("backfill", e.stderr)
	noIngest := fs.Bool("no-ingest", false, "capture only; leave ingest to the next run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return locked(ctx, e, true, func(s *session) error { return backfill(ctx, e, s, !*noIngest) })
}

// backfill captures every existing transcript, then (with ingest) runs a
// cycle. The caller holds the worker lock.
func backfill(ctx context.Context, e *env, s *session, ingest bool) error {
	bar := newProgress(e.stdout)
	st, err := capture.Backfill(ctx, s.db, s.cfg.ProjectsDir(), capture.OptionsFrom(s.cfg), s.log, bar.update)
	bar.done()
	fmt.Fprintf(e.stdout, "backfill: %d transcripts (%d read), %d captures, %.1f MB\n",
		st.Transcripts, st.Read, st.Captures, float64(st.Bytes)/1e6)
	if err != nil && !ingest {
		return err
	}
	if !ingest {
		return nil
	}
	comp, cerr := worker.NewComponents(ctx, s.cfg, s.log)
	if cerr != nil {
		return cerr
	}
	defer comp.Close()
	// The history is read once, to the end: consolidation runs whatever
	// its triggers say and shows how far it got.
	comp.ForceConsolidation = true
	comp.IngestProgress = newStepProgress(e.stdout, "ingest", "captures").update
	comp.BeliefProgress = newStepProgress(e.stdout, "beliefs", "episodes").update
	runID, cerr := s.db.StartRun(ctx, "backfill")
	if cerr != nil {
		return cerr
	}
	cst, cerr := worker.Cycle(ctx, s.cfg, s.db, comp, s.log)
	if ferr := s.db.FinishRun(context.WithoutCancel(ctx), runID, cst, cerr); ferr != nil {
		s.log.Error("record run", "err", ferr)
	}
	fmt.Fprintf(e.stdout, "ingest: %d captures -> %d episodes (%d merged, %d skipped, %d failed)\n",
		cst.Ingest.Captures, cst.Ingest.Episodes, cst.Ingest.Merged, cst.Ingest.Skipped, cst.Ingest.Failed)
	if cerr == nil {
		fmt.Fprintln(e.stdout, beliefLine(cst.Beliefs))
	}
	return errors.Join(err, cerr)
}

// progress draws a bar on a terminal and prints plain lines otherwise.
type progress struct {
	w        io.Writer
	tty      bool
	lastStep int
	drawn    bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, lastStep: -1}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(done, total int, bytes, totalBytes int64) {
	if total == 0 {
		return
	}
	frac := float64(bytes) / float64(max(totalBytes, 1))
	if p.tty {
		const width = 30
		n := int(frac * width)
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d transcripts, %.1f/%.1f MB", strings.Repeat("#", n), strings.Repeat("-", width-n),
			done, total, float64(bytes)/1e6, float64(totalBytes)/1e6)
		p.drawn = true
		return
	}
	if step := int(frac * 10); step > p.lastStep || done == total {
		p.lastStep = step
		fmt.Fprintf(p.w, "backfill: %d/%d transcripts (%d%%)\n", done, total, int(frac*100))
	}
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}

// stepProgress prints "beliefs: 500/20000 episodes (2%)" at each tenth of
// the way (every call on a terminal, on one line).
type stepProgress struct {
	w          io.Writer
	what, unit string
	tty        bool
	lastStep   int
}

func newStepProgress(w io.Writer, what, unit string) *stepProgress {
	p := &stepProgress{w: w, what: what, unit: unit, lastStep: -1}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *stepProgress) update(done, total int) {
	if total <= 0 {
		return
	}
	pct := done * 100 / total
	if p.tty {
		fmt.Fprintf(p.w, "\r%s: %d/%d %s (%d%%)", p.what, done, total, p.unit, pct)
		if done >= total {
			fmt.Fprintln(p.w)
		}
		return
	}
	if step := pct / 10; step > p.lastStep || done >= total {
		p.lastStep = step
		fmt.Fprintf(p.w, "%s: %d/%d %s (%d%%)\n", p.what, done, total, p.unit, pct)
	}
}
