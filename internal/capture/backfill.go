package capture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/store"
)

// Transcript is one session transcript found on disk.
type Transcript struct {
	SessionID string
	Path      string
	Size      int64
}

// FindTranscripts lists the session transcripts under projectsDir
// (<projects>/<sanitized cwd>/<session_id>.jsonl), oldest first. Sub-agent
// transcripts (nested folders, agent-*.jsonl) are not sessions of the user's
// and are left out.
func FindTranscripts(projectsDir string) ([]Transcript, error) {
	matches, err := filepath.Glob(filepath.Join(projectsDir, "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	type found struct {
		Transcript
		mod int64
	}
	var fs []found
	for _, m := range matches {
		id := strings.TrimSuffix(filepath.Base(m), ".jsonl")
		if strings.HasPrefix(id, "agent-") || hookio.ValidSessionID(id) != nil {
			continue
		}
		fi, err := os.Lstat(m)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		fs = append(fs, found{Transcript{SessionID: id, Path: m, Size: fi.Size()}, fi.ModTime().UnixNano()})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod < fs[j].mod })
	out := make([]Transcript, len(fs))
	for i, f := range fs {
		out[i] = f.Transcript
	}
	return out, nil
}

// BackfillStats counts what a backfill did.
type BackfillStats struct {
	Transcripts, Read, Captures, Failed int
	Bytes                               int64
}

// Backfill captures every transcript under projectsDir through the same
// path as the Stop hook. It is resumable: each session continues from its
// stored offset, so a second backfill reads only what is new. progress is
// called after each transcript with the count done, the total, and the bytes.
func Backfill(ctx context.Context, db *store.DB, projectsDir string, opt Options, log *slog.Logger,
	progress func(done, total int, bytes, totalBytes int64)) (BackfillStats, error) {
	var st BackfillStats
	ts, err := FindTranscripts(projectsDir)
	if err != nil {
		return st, err
	}
	st.Transcripts = len(ts)
	var total int64
	for _, t := range ts {
		total += t.Size
	}
	for i, t := range ts {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		prev, _, err := db.GetSession(ctx, t.SessionID)
		if err != nil {
			return st, err
		}
		if prev.Offset < t.Size {
			st.Read++
			fi, _ := os.Stat(t.Path)
			req := Request{SessionID: t.SessionID, TranscriptPath: t.Path, Source: SourceBackfill}
			if fi != nil {
				req.Now = fi.ModTime()
			}
			n, err := Session(ctx, db, req, opt)
			if err != nil {
				st.Failed++
				if errors.Is(err, context.Canceled) {
					return st, err
				}
				log.Warn("backfill: capture failed", "transcript", t.Path, "err", err)
			}
			st.Captures += n
		}
		st.Bytes += t.Size
		if progress != nil {
			progress(i+1, len(ts), st.Bytes, total)
		}
	}
	if st.Failed > 0 {
		return st, fmt.Errorf("%d of %d transcripts could not be read (see the worker log)", st.Failed, st.Read)
	}
	return st, nil
}
