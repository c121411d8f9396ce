package promote

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// episode stores an episode and returns its id.
func (f *fixture) episode(summary string, importance float64, scope string, created time.Time) string {
	f.t.Helper()
	e := episode.Episode{ID: store.NewID("ep_"), Summary: summary, Context: "Full context: " + summary + " with the zebrafish detail",
		Entities: []string{"kestrel"}, Importance: importance, Type: episode.TypeFact, Scope: scope,
		ContentHash: store.NewID("h_"), CreatedAt: created, UpdatedAt: created, OccurredAt: created}
	if scope == episode.ScopeProject {
		e.ProjectPath = f.project("p")
	}
	if err := f.db.ImportEpisodes(f.ctx, []episode.Episode{e}); err != nil {
		f.t.Fatal(err)
	}
	return e.ID
}

func TestGraduationWithinBudgetAndArchive(t *testing.T) {
	f := newFixture(t)
	// The user keeps 60 lines of their own in the global file.
	var user strings.Builder
	user.WriteString("# My global notes\n")
	for i := range 59 {
		fmt.Fprintf(&user, "- note %d\n", i)
	}
	f.write(f.loc.GlobalFile(), user.String())
	f.belief("Prefers Go for command-line tools", 0.9, 6, "")

	// Thirty days, 10 graduating episodes a day (the batch is 20), some not
	// important or not global enough to graduate.
	start := time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC)
	var total int
	for day := range 30 {
		at := start.Add(time.Duration(day) * 24 * time.Hour)
		for i := range 10 {
			f.episode(fmt.Sprintf("Day %02d decision %d: keep the service stateless", day, i), 0.8, episode.ScopeGlobal, at)
		}
		f.episode(fmt.Sprintf("Day %02d routine work", day), 0.3, episode.ScopeGlobal, at)
		f.episode(fmt.Sprintf("Day %02d project decision", day), 0.9, episode.ScopeProject, at)
		st := f.run(at.Add(time.Hour))
		total += st.Graduated
		if st.Graduated != 10 {
			t.Fatalf("day %d: Stats.Graduated=%d, want 10", day, st.Graduated)
		}
		s := f.read(f.loc.GlobalFile())
		if n := countLines(s); n > LineLimit {
			t.Fatalf("day %d: the global file has %d lines, want at most %d", day, n, LineLimit)
		}
		if len(s) > ByteLimit {
			t.Fatalf("day %d: the global file has %d bytes, want at most %d", day, len(s), ByteLimit)
		}
		if !strings.HasPrefix(s, BeliefsBegin+"\n## Beliefs\n\n- Prefers Go for command-line tools (confidence: 0.90, evidence: 6)\n") {
			t.Fatalf("day %d: the belief block is not intact at the top:\n%s", day, s)
		}
		if !strings.HasSuffix(s, user.String()) {
			t.Fatalf("day %d: the user's notes are not kept at the end", day)
		}
		if !strings.Contains(s, "## "+at.Format(time.DateOnly)+"\n") {
			t.Fatalf("day %d: no section for today", day)
		}
	}
	// Every graduated bullet is either in the file or in its month's
	// archive, exactly once; nothing unimportant or project-scoped is.
	s := f.read(f.loc.GlobalFile())
	archives := map[string]string{}
	entries, err := os.ReadDir(f.loc.ArchiveDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".md") {
			archives[e.Name()] = f.read(filepath.Join(f.loc.ArchiveDir(), e.Name()))
		}
	}
	if len(archives) != 2 {
		t.Errorf("archive files %v, want 2026-01.md and 2026-02.md", keys(archives))
	}
	for day := range 30 {
		month := start.Add(time.Duration(day)*24*time.Hour).Format("2006-01") + ".md"
		for i := range 10 {
			bullet := fmt.Sprintf("- Day %02d decision %d: keep the service stateless\n", day, i)
			n := strings.Count(s, bullet) + strings.Count(archives[month], bullet)
			if n != 1 {
				t.Errorf("%q appears %d times in the file and %s", bullet, n, month)
			}
		}
	}
	all := s
	for _, a := range archives {
		all += a
	}
	if strings.Contains(all, "routine work") || strings.Contains(all, "project decision") {
		t.Error("an unimportant or project episode graduated")
	}
	if strings.Contains(archives["2026-01.md"], "Prefers Go") {
		t.Error("the archiver took the belief block")
	}
	// Archive files are engram's: 0600 in a 0700 directory.
	if fi, err := os.Stat(f.loc.ArchiveDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("archive directory mode %v, want 0700", fi.Mode().Perm())
	}
	if fi, err := os.Stat(filepath.Join(f.loc.ArchiveDir(), "2026-01.md")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("archive file mode %v, want 0600", fi.Mode().Perm())
	}
	if total != 300 {
		t.Errorf("%d graduated in all, want 300", total)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestArchiveIsIdempotent(t *testing.T) {
	f := newFixture(t)
	sec := []section{{date: "2026-02-01", bullets: []string{"- one", "- two"}}, {date: "2026-03-02", bullets: []string{"- three"}}}
	for range 2 {
		if err := archive(f.ctx, f.loc, sec, "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := f.read(filepath.Join(f.loc.ArchiveDir(), "2026-02.md")), "# engram archive 2026-02\n\n## 2026-02-01\n\n- one\n- two\n\n"; got != want {
		t.Errorf("2026-02.md = %q, want %q", got, want)
	}
	if got := f.read(filepath.Join(f.loc.ArchiveDir(), "2026-03.md")); strings.Count(got, "- three") != 1 {
		t.Errorf("2026-03.md = %q", got)
	}
}

func TestGraduatedBulletNotRepeated(t *testing.T) {
	// A cycle that wrote the file but stopped before recording the
	// graduation: the next one adds nothing twice.
	f := newFixture(t)
	id := f.episode("Always sign commits", 0.9, episode.ScopeGlobal, f.now)
	f.run(f.now)
	if err := f.db.ImportEpisodes(f.ctx, nil); err != nil {
		t.Fatal(err)
	}
	// Forget the graduation in the store only.
	ep, err := f.db.GetEpisode(f.ctx, id)
	if err != nil || ep.GraduatedAt.IsZero() {
		t.Fatalf("graduated_at not set: %v %v", ep.GraduatedAt, err)
	}
	if err := f.db.DeleteEpisode(f.ctx, id); err != nil {
		t.Fatal(err)
	}
	ep.GraduatedAt = time.Time{}
	if err := f.db.ImportEpisodes(f.ctx, []episode.Episode{ep}); err != nil {
		t.Fatal(err)
	}
	st := f.run(f.now.Add(time.Hour))
	if st.Graduated != 1 || strings.Count(f.read(f.loc.GlobalFile()), "Always sign commits") != 1 {
		t.Errorf("%+v\n%s", st, f.read(f.loc.GlobalFile()))
	}
}

func TestForeignContentPastTheLimit(t *testing.T) {
	f := newFixture(t)
	proj := f.project("big")
	file := f.loc.ProjectFile(proj)
	var big strings.Builder
	for i := range 250 {
		fmt.Fprintf(&big, "- [note %d](n%d.md)\n", i, i)
	}
	f.write(file, big.String())
	f.belief("Big project statement", 0.9, 5, proj)
	st := f.run(f.now)
	if got := f.read(file); got != big.String() {
		t.Error("a file whose own content is past the limit was changed")
	}
	if st.Promoted != 0 {
		t.Errorf("Stats.Promoted=%d, want 0: there is no room", st.Promoted)
	}

	// 150 lines of the user's leave room for a short block only: the
	// file stays under the client's reminder threshold of 160 lines.
	f.write(file, strings.Join(strings.Split(big.String(), "\n")[:150], "\n")+"\n")
	f.belief("Second statement", 0.8, 5, proj)
	st = f.run(f.now.Add(time.Hour))
	s := f.read(file)
	if n := countLines(s); n > ReminderLines {
		t.Errorf("%d lines, want at most %d", n, ReminderLines)
	}
	if got := bullets(s, headingBeliefs); len(got) != 2 || st.Promoted != 2 {
		t.Errorf("bullets %q, Stats.Promoted=%d: want both (7 lines fit in 10)", got, st.Promoted)
	}

	// Inspect reports both situations.
	if err := f.db.ApplyPromotion(f.ctx, store.MemoryFile{Path: file, Kind: "project", Root: proj}, nil, f.now); err != nil {
		t.Fatal(err)
	}
	reports, err := Inspect(f.ctx, f.loc, f.db)
	if err != nil {
		t.Fatal(err)
	}
	r := find(reports, file)
	if r == nil || !r.WithinLimit || !r.UnderReminder || !r.Limited || r.EngramRoom != 10 || r.OtherLines != 150 || r.EngramLines != 7 || r.Project != "big" {
		t.Fatalf("report %+v", r)
	}
	if d := r.Describe(); !strings.Contains(d, "leaves engram 10 lines, so engram's part is kept smaller") {
		t.Errorf("Describe() = %q, want it to say engram's part is kept smaller", d)
	}
	f.write(file, s+big.String())
	reports, _ = Inspect(f.ctx, f.loc, f.db)
	r = find(reports, file)
	if r == nil || r.WithinLimit || r.UnderReminder || !r.OtherOverLimit || !strings.Contains(r.Describe(), "by content that is not engram's") {
		t.Fatalf("report %+v: %s", r, r.Describe())
	}
	if g := find(reports, f.loc.GlobalFile()); g == nil || g.Exists {
		t.Errorf("global report %+v, want listed and not written yet", g)
	}
}

func find(rs []FileReport, path string) *FileReport {
	for i := range rs {
		if rs[i].Path == path {
			return &rs[i]
		}
	}
	return nil
}

func TestCompression(t *testing.T) {
	f := newFixture(t)
	old := f.now.Add(-100 * 24 * time.Hour)
	long := "Investigated the flaky kestrel integration test " + strings.Repeat("and looked at one more log file ", 10)
	stale := f.episode(long, 0.3, episode.ScopeProject, old)
	recent := f.episode("Recent kestrel work", 0.3, episode.ScopeProject, f.now.Add(-10*24*time.Hour))
	important := f.episode("Important kestrel decision", 0.9, episode.ScopeProject, old)
	accessed := f.episode("Accessed kestrel note", 0.3, episode.ScopeProject, old)
	if _, err := f.db.RecordAccesses(f.ctx, []store.Access{{ID: accessed, At: f.now.Add(-50 * 24 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	st := f.run(f.now)
	if st.Compressed != 1 {
		t.Errorf("Stats.Compressed=%d, want 1", st.Compressed)
	}
	e, err := f.db.GetEpisode(f.ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Compressed || e.Context != "" || len([]rune(e.Summary)) > compressedSummaryMax || !strings.HasPrefix(e.Summary, "Investigated the flaky kestrel") {
		t.Errorf("stale episode after compression: compressed=%v context=%q summary=%q", e.Compressed, e.Context, e.Summary)
	}
	for _, id := range []string{recent, important, accessed} {
		if e, _ := f.db.GetEpisode(f.ctx, id); e.Compressed || e.Context == "" {
			t.Errorf("%s (%s) was compressed", id, e.Summary)
		}
	}
	// Still found by full-text search on its summary and entities, no
	// longer on its dropped context.
	for _, q := range []string{`"flaky"`, `"kestrel"`} {
		hits, err := f.db.SearchEpisodes(f.ctx, q, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if !hasHit(hits, stale) {
			t.Errorf("search %s does not find the compressed episode", q)
		}
	}
	if hits, _ := f.db.SearchEpisodes(f.ctx, `"zebrafish"`, "", 10); hasHit(hits, stale) {
		t.Error("the dropped context is still indexed")
	}
	if st := f.run(f.now.Add(time.Hour)); st.Compressed != 0 {
		t.Errorf("second pass compressed %d again", st.Compressed)
	}
}

func hasHit(hits []store.EpisodeHit, id string) bool {
	for _, h := range hits {
		if h.ID == id {
			return true
		}
	}
	return false
}

// TestGraduatedUnderTheDaySaid: an episode graduates under the date it was
// said, not the date of the cycle (a worker that has not run for days, a
// backfill), in date order among the sections already there.
func TestGraduatedUnderTheDaySaid(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	f.episode("Keep the service stateless", 0.9, episode.ScopeGlobal, now.Add(-time.Hour))
	f.run(now)
	f.episode("Always sign commits", 0.9, episode.ScopeGlobal, now.Add(-5*24*time.Hour))
	f.episode("Release on Tuesdays", 0.9, episode.ScopeGlobal, now.Add(-2*24*time.Hour))
	f.run(now.Add(time.Hour))
	s := f.read(f.loc.GlobalFile())
	want := []string{"## 2026-03-05\n\n- Always sign commits\n", "## 2026-03-08\n\n- Release on Tuesdays\n", "## 2026-03-10\n\n- Keep the service stateless\n"}
	last := -1
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 || i < last {
			t.Fatalf("want %q after the sections before it:\n%s", w, s)
		}
		last = i
	}
}

// TestNoThingNotPromoted: beliefs an older build formed about no thing
// ("User prefers is.", a project preference for "#91") stay out of
// MEMORY.md; a name that is also a verb ("Go") and a belief whose
// statement the user rewrote are shown.
func TestNoThingNotPromoted(t *testing.T) {
	f := newFixture(t)
	for stmt, subject := range map[string]string{
		"User prefers is.":                  "is",
		"User prefers Option 2.":            "option 2",
		"User avoids fix anything.":         "fix anything",
		"User prefers Go.":                  "go",
		"Always run the linter before push": "run",
	} {
		id := f.belief(stmt, 0.9, 6, "")
		f.change(id, func(b *belief.Belief) { b.Subject = subject })
	}
	f.run(f.now)
	got := bullets(f.read(f.loc.GlobalFile()), headingBeliefs)
	joined := strings.Join(got, "\n")
	for _, want := range []string{"User prefers Go.", "Always run the linter before push"} {
		if !strings.Contains(joined, want) {
			t.Errorf("%q not shown: %q", want, got)
		}
	}
	for _, junk := range []string{"prefers is", "Option 2", "fix anything"} {
		if strings.Contains(joined, junk) {
			t.Errorf("%q shown: %q", junk, got)
		}
	}
}
