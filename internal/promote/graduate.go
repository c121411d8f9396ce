package promote

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"time"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// graduation is the episode block of the global file and what it changes.
type graduation struct {
	block string
	// graduated are the episodes now in the block (or already archived
	// from it): their graduated_at is set once the file is written.
	graduated []string
	// archive are the sections leaving the block, oldest first.
	archive []section
	nl      string
}

// graduate adds today's section of newly graduated episodes to the dated
// sections of the global file, then moves the oldest sections out until
// the block fits. An episode whose bullet is already there (a cycle that
// stopped between writing the file and recording it) is not added twice.
func graduate(secs []section, eps []episode.Episode, now time.Time, fits func(string) bool, nl string) graduation {
	g := graduation{nl: nl}
	secs = cloneSections(secs)
	slices.SortStableFunc(secs, func(a, b section) int { return strings.Compare(a.date, b.date) })
	have := map[string]bool{}
	for _, s := range secs {
		for _, b := range s.bullets {
			have[b] = true
		}
	}
	for _, e := range eps {
		g.graduated = append(g.graduated, e.ID)
		bullet := "- " + oneLine(e.Summary, graduatedSummaryMax)
		if have[bullet] {
			continue
		}
		have[bullet] = true
		// Under the day it was said, not the day of the cycle: a backfill
		// or a worker that has not run for a while files each episode
		// where it belongs. Sections stay in date order (the oldest is
		// archived first).
		date := now.Format(time.DateOnly)
		if !e.OccurredAt.IsZero() && e.OccurredAt.Before(now) {
			date = e.OccurredAt.In(now.Location()).Format(time.DateOnly)
		}
		i, found := slices.BinarySearchFunc(secs, date, func(s section, d string) int { return strings.Compare(s.date, d) })
		if !found {
			secs = slices.Insert(secs, i, section{date: date})
		}
		secs[i].bullets = append(secs[i].bullets, bullet)
	}
	for {
		g.block = renderEpisodes(secs, nl)
		if g.block == "" || fits(g.block) {
			break
		}
		g.archive = append(g.archive, secs[0])
		secs = secs[1:]
	}
	return g
}

func cloneSections(secs []section) []section {
	out := make([]section, len(secs))
	for i, s := range secs {
		out[i] = section{date: s.date, bullets: append([]string(nil), s.bullets...)}
	}
	return out
}

// archive appends sections to $ENGRAM_HOME/archive/YYYY-MM.md (the month
// of each section's date), under the same locking as MEMORY.md. A section
// already in its archive file is not appended again, so an archive step
// repeated after an interruption adds nothing.
func archive(ctx context.Context, loc Locations, secs []section, nl string) error {
	byMonth := map[string][]section{}
	var months []string
	for _, s := range secs {
		m := s.date[:7]
		if _, ok := byMonth[m]; !ok {
			months = append(months, m)
		}
		byMonth[m] = append(byMonth[m], s)
	}
	for _, m := range months {
		path := filepath.Join(loc.ArchiveDir(), m+".md")
		u := &fileUpdate{path: path, dir: loc.ArchiveDir(), compute: func(old []byte, exists bool) ([]byte, error) {
			out := string(old)
			if !exists || out == "" {
				out = "# engram archive " + m + nl + nl
			} else if !strings.HasSuffix(out, "\n") {
				out += nl
			}
			for _, s := range byMonth[m] {
				text := renderSection(s, nl)
				if !strings.Contains(out, text) {
					out += text
				}
			}
			return []byte(out), nil
		}}
		if _, err := u.run(ctx); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	}
	return nil
}

// compress shortens the old episodes nobody ever recalled: the summary is
// cut to compressedSummaryMax runes and the full context dropped. Their
// summary and entities stay in the full-text index and their vector in
// place, so they can still be found.
func compress(ctx context.Context, db *store.DB, opt Options) (int, error) {
	if opt.CompressAfter <= 0 {
		return 0, nil
	}
	before := opt.Now.Add(-opt.CompressAfter)
	total := 0
	for range compressRounds {
		eps, err := db.StaleEpisodes(ctx, before, opt.GraduateImportance, compressBatch)
		if err != nil {
			return total, err
		}
		for i := range eps {
			eps[i].Summary = cut(strings.Join(strings.Fields(eps[i].Summary), " "), compressedSummaryMax)
		}
		n, err := db.CompressEpisodes(ctx, eps)
		total += n
		if err != nil {
			return total, err
		}
		if len(eps) < compressBatch {
			break
		}
	}
	return total, nil
}
