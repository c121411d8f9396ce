package promote

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/store"
)

func TestThresholds(t *testing.T) {
	tests := []struct {
		name       string
		confidence float64
		evidence   int
		status     string
		want       bool
	}{
		{"at both thresholds", 0.7, 3, belief.StatusActive, true},
		{"well above", 0.95, 12, belief.StatusActive, true},
		{"confidence just below", 0.69, 50, belief.StatusActive, false},
		{"evidence just below", 0.95, 2, belief.StatusActive, false},
		{"not active", 0.95, 12, belief.StatusArchived, false},
		{"revised", 0.95, 12, belief.StatusRevised, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.belief("The build uses Bazel", tt.confidence, tt.evidence, "")
			f.change(id, func(b *belief.Belief) { b.Status = tt.status })
			st := f.run(f.now)
			got := strings.Contains(f.readOr(f.loc.GlobalFile()), "The build uses Bazel")
			if got != tt.want {
				t.Errorf("promoted=%v, want %v (confidence %v, evidence %d, %s)", got, tt.want, tt.confidence, tt.evidence, tt.status)
			}
			if want := map[bool]int{true: 1}[tt.want]; st.Promoted != want {
				t.Errorf("Stats.Promoted=%d, want %d", st.Promoted, want)
			}
			if b := f.get(id); b.PromotedAt.IsZero() == tt.want {
				t.Errorf("promoted_at=%v, want set=%v", b.PromotedAt, tt.want)
			}
		})
	}
}

// readOr reads a file, "" when it does not exist.
func (f *fixture) readOr(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

func TestRankingAndCaps(t *testing.T) {
	f := newFixture(t)
	// 14 eligible beliefs: score confidence × ln(1+evidence).
	type spec struct {
		c float64
		e int
	}
	specs := []spec{{0.9, 3}, {0.75, 20}, {0.99, 4}, {0.7, 100}, {0.8, 8}, {0.85, 5}, {0.72, 3}, {0.95, 30},
		{0.71, 6}, {0.88, 9}, {0.78, 12}, {0.93, 3}, {0.7, 4}, {0.82, 15}}
	type ranked struct {
		stmt  string
		score float64
	}
	var want []ranked
	for i, s := range specs {
		stmt := fmt.Sprintf("Belief number %02d", i)
		f.belief(stmt, s.c, s.e, "")
		want = append(want, ranked{stmt, score(promotionBelief(s.c, s.e))})
	}
	slices.SortFunc(want, func(a, b ranked) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	st := f.run(f.now)
	got := bullets(f.read(f.loc.GlobalFile()), headingBeliefs)
	if len(got) != MaxActive || st.Promoted != MaxActive {
		t.Fatalf("%d bullets, Stats.Promoted=%d; want %d of the 14 eligible", len(got), st.Promoted, MaxActive)
	}
	for i, l := range got {
		if !strings.HasPrefix(l, "- "+want[i].stmt+" (") {
			t.Errorf("bullet %d = %q, want %s (score %.3f)", i, l, want[i].stmt, want[i].score)
		}
	}
	// The ranking is by score, not confidence alone: 0.75 with 20 pieces of
	// evidence outranks 0.99 with 4.
	i75, i99 := indexOf(got, "(confidence: 0.75, evidence: 20)"), indexOf(got, "(confidence: 0.99, evidence: 4)")
	if i75 < 0 || i99 < 0 || i75 > i99 {
		t.Errorf("0.75/20 at %d, 0.99/4 at %d: want the first ahead", i75, i99)
	}

	// Seven beliefs lose confidence at once: five former ones are shown,
	// and the block stays within its 30 lines.
	rows, err := f.db.PromotionCandidates(f.ctx, PromoteConfidence, PromoteEvidence)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Shown() && n < 7 {
			f.setConfidence(r.ID, 0.6)
			n++
		}
	}
	st = f.run(f.now.Add(time.Hour))
	s := f.read(f.loc.GlobalFile())
	former := bullets(s, headingFormer)
	if len(former) != MaxFormer {
		t.Errorf("%d former beliefs, want %d:\n%s", len(former), MaxFormer, s)
	}
	if st.Demoted != MaxFormer || st.Removed != 2 {
		t.Errorf("Stats demoted=%d removed=%d, want %d and 2 (no room for more former beliefs)", st.Demoted, st.Removed, MaxFormer)
	}
	if got := bullets(s, headingBeliefs); len(got) != 7 {
		t.Errorf("%d beliefs after demotion, want the 7 remaining eligible ones", len(got))
	}
	if l := countLines(block(s)); l > BeliefBlockMaxLines {
		t.Errorf("belief block of %d lines, want at most %d", l, BeliefBlockMaxLines)
	}
}

func promotionBelief(c float64, e int) store.PromotionBelief {
	return store.PromotionBelief{Alpha: c * 10, Beta: (1 - c) * 10, EvidenceCount: e}
}

func configFor(f *fixture) config.Config {
	return config.Config{Home: f.loc.EngramHome, ClaudeConfigDir: f.loc.ClaudeConfigDir}
}

func indexOf(list []string, suffix string) int {
	for i, l := range list {
		if strings.HasSuffix(l, suffix) {
			return i
		}
	}
	return -1
}

func TestTwoStageDemotionAndExpiry(t *testing.T) {
	f := newFixture(t)
	proj := f.project("shop")
	id := f.belief("Payments go through Stripe", 0.85, 6, proj)
	file := f.loc.ProjectFile(proj)

	st := f.run(f.now)
	if st.Promoted != 1 || !slices.Equal(bullets(f.read(file), headingBeliefs), []string{"- Payments go through Stripe (confidence: 0.85, evidence: 6)"}) {
		t.Fatalf("after promotion: %+v\n%s", st, f.readOr(file))
	}
	promotedAt := f.get(id).PromotedAt

	// Stage 1: below 0.7 → former, with the confidence it was shown with.
	f.setConfidence(id, 0.6)
	day2 := f.now.Add(24 * time.Hour)
	st = f.run(day2)
	s := f.read(file)
	if st.Demoted != 1 || len(bullets(s, headingBeliefs)) != 0 ||
		!slices.Equal(bullets(s, headingFormer), []string{"- [NO LONGER TRUE] Payments go through Stripe (was: 0.85, now: 0.60, demoted: 2026-03-11)"}) {
		t.Fatalf("after the drop to 0.6: %+v\n%s", st, s)
	}
	b := f.get(id)
	if !b.DemotedAt.Equal(day2) || !b.PromotedAt.Equal(promotedAt) {
		t.Errorf("demoted_at=%v promoted_at=%v, want %v and unchanged %v", b.DemotedAt, b.PromotedAt, day2, promotedAt)
	}

	// Still between 0.5 and 0.7 within 30 days: stays former.
	st = f.run(day2.Add(29 * 24 * time.Hour))
	if st.Removed != 0 || len(bullets(f.read(file), headingFormer)) != 1 {
		t.Fatalf("29 days after demotion: %+v\n%s", st, f.read(file))
	}
	// 30 days after the demotion: removed, state cleared.
	st = f.run(day2.Add(30 * 24 * time.Hour))
	if st.Removed != 1 || block(f.read(file)) != "" {
		t.Fatalf("30 days after demotion: %+v\n%s", st, f.read(file))
	}
	if b := f.get(id); !b.PromotedAt.IsZero() || !b.DemotedAt.IsZero() {
		t.Errorf("after removal promoted_at=%v demoted_at=%v, want both cleared", b.PromotedAt, b.DemotedAt)
	}
}

func TestFormerRemovedBelowHalfAndOnStatus(t *testing.T) {
	for _, tt := range []struct {
		name string
		edit func(f *fixture, id string)
	}{
		{"confidence below 0.5", func(f *fixture, id string) { f.setConfidence(id, 0.45) }},
		{"no longer active", func(f *fixture, id string) {
			f.change(id, func(b *belief.Belief) { b.Status = belief.StatusArchived })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.belief("Tabs, not spaces", 0.8, 5, "")
			f.run(f.now)
			tt.edit(f, id)
			// The first cycle after the change shows the belief as former;
			// the next one removes it.
			st := f.run(f.now.Add(time.Hour))
			if st.Demoted != 1 || len(bullets(f.read(f.loc.GlobalFile()), headingFormer)) != 1 {
				t.Fatalf("first cycle: %+v\n%s", st, f.read(f.loc.GlobalFile()))
			}
			st = f.run(f.now.Add(2 * time.Hour))
			if st.Removed != 1 || strings.Contains(f.read(f.loc.GlobalFile()), "Tabs, not spaces") {
				t.Fatalf("second cycle: %+v\n%s", st, f.read(f.loc.GlobalFile()))
			}
			if b := f.get(id); !b.PromotedAt.IsZero() || !b.DemotedAt.IsZero() {
				t.Errorf("promoted_at=%v demoted_at=%v, want cleared", b.PromotedAt, b.DemotedAt)
			}
		})
	}
}

func TestRepromotion(t *testing.T) {
	f := newFixture(t)
	id := f.belief("Deploys happen on Tuesdays", 0.8, 4, "")
	f.run(f.now)
	f.setConfidence(id, 0.65)
	f.run(f.now.Add(time.Hour))
	if len(bullets(f.read(f.loc.GlobalFile()), headingFormer)) != 1 {
		t.Fatalf("not demoted:\n%s", f.read(f.loc.GlobalFile()))
	}
	f.setConfidence(id, 0.9)
	st := f.run(f.now.Add(2 * time.Hour))
	s := f.read(f.loc.GlobalFile())
	if st.Promoted != 1 || len(bullets(s, headingFormer)) != 0 ||
		!slices.Equal(bullets(s, headingBeliefs), []string{"- Deploys happen on Tuesdays (confidence: 0.90, evidence: 4)"}) {
		t.Fatalf("after recovery: %+v\n%s", st, s)
	}
	if b := f.get(id); b.PromotedAt.IsZero() || !b.DemotedAt.IsZero() {
		t.Errorf("promoted_at=%v demoted_at=%v, want set and cleared", b.PromotedAt, b.DemotedAt)
	}
}

func TestUserContentPreservedByteForByte(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"plain", "# Notes\n\n- [Build](build.md) — how to build\n"},
		{"no final newline", "# Notes\n- keep me"},
		{"CRLF", "# Notes\r\n\r\n- one\r\n- two\r\n"},
		{"empty lines only", "\n\n\n"},
		{"html comment and markers lookalike", "<!-- mine -->\n<!-- ENGRAM:BELIEFS:BEGIN --> not a marker\n## Beliefs\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			proj := f.project("app")
			file := f.loc.ProjectFile(proj)
			f.write(file, tt.content)
			id := f.belief("The API listens on port 8080", 0.9, 5, proj)
			f.run(f.now)
			s := f.read(file)
			blk := block(s)
			if !strings.HasPrefix(s, BeliefsBegin) || blk == "" {
				t.Fatalf("no block at the top:\n%q", s)
			}
			if rest := s[len(blk):]; rest != tt.content {
				t.Errorf("content after the block = %q, want the original %q", rest, tt.content)
			}
			// Once nothing is promoted any more, the file is the original.
			f.setConfidence(id, 0.3)
			f.run(f.now.Add(time.Hour))
			f.run(f.now.Add(2 * time.Hour))
			if got := f.read(file); got != tt.content {
				t.Errorf("after removal the file is %q, want the original %q", got, tt.content)
			}
		})
	}
}

func TestBlockMovesToTheTop(t *testing.T) {
	f := newFixture(t)
	f.belief("Use pnpm", 0.9, 5, "")
	f.run(f.now)
	s := f.read(f.loc.GlobalFile())
	// The user puts notes above engram's block.
	moved := "# My notes\n" + s + "tail\n"
	f.write(f.loc.GlobalFile(), moved)
	f.run(f.now.Add(time.Hour))
	if got, want := f.read(f.loc.GlobalFile()), s+"# My notes\ntail\n"; got != want {
		t.Errorf("file = %q, want the block back on top and the notes kept: %q", got, want)
	}
}

func TestDamagedMarkers(t *testing.T) {
	const user = "# Notes\n- mine\n"
	old := "## Beliefs\n\n- Old statement (confidence: 0.80, evidence: 4)\n\n"
	tests := []struct{ name, content string }{
		{"BEGIN without END", BeliefsBegin + "\n" + old + user},
		{"END without BEGIN", old + BeliefsEnd + "\n" + user},
		{"repeated blocks", BeliefsBegin + "\n" + old + BeliefsEnd + "\n" + BeliefsBegin + "\n" + old + BeliefsEnd + "\n" + user},
		{"END before BEGIN", BeliefsEnd + "\n" + old + BeliefsBegin + "\n" + user},
		{"block missing", user},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(f.loc.GlobalFile(), tt.content)
			f.belief("Prefers short commit messages", 0.9, 5, "")
			f.run(f.now)
			s := f.read(f.loc.GlobalFile())
			want := BeliefsBegin + "\n" + headingBeliefs + "\n\n- Prefers short commit messages (confidence: 0.90, evidence: 5)\n\n" + BeliefsEnd + "\n" + user
			if s != want {
				t.Errorf("file =\n%s\nwant\n%s", s, want)
			}
			if strings.Count(s, BeliefsBegin) != 1 || strings.Contains(s, "Old statement") {
				t.Errorf("want one clean block without the old bullet:\n%s", s)
			}
		})
	}
}

func TestOrphanedAndVanishedProjects(t *testing.T) {
	f := newFixture(t)
	orphan := f.belief("Orphaned statement", 0.9, 5, "")
	f.change(orphan, func(b *belief.Belief) { b.Scope = "project"; b.ProjectPath = "" })
	gone := f.project("gone")
	goneID := f.belief("Gone project statement", 0.9, 5, gone)
	st := f.run(f.now)
	if st.Promoted != 1 {
		t.Fatalf("Stats.Promoted=%d, want 1 (the gone project's belief, while its directory exists)", st.Promoted)
	}
	goneFile := f.loc.ProjectFile(gone)
	before := f.read(goneFile)
	if !strings.Contains(before, "Gone project statement") {
		t.Fatalf("project file:\n%s", before)
	}
	// Nothing anywhere holds the orphan.
	filepath.WalkDir(f.base, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && strings.Contains(f.read(p), "Orphaned statement") {
			t.Errorf("%s holds the orphaned belief", p)
		}
		return nil
	})

	// The project's directory disappears: its file is left alone, and the
	// belief keeps its state.
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	f.setConfidence(goneID, 0.3)
	st = f.run(f.now.Add(time.Hour))
	if st.Demoted+st.Removed != 0 || f.read(goneFile) != before {
		t.Errorf("gone project: %+v, file changed:\n%s", st, f.read(goneFile))
	}
	if b := f.get(goneID); b.PromotedAt.IsZero() {
		t.Error("the gone project's belief lost its promoted state")
	}

	// A gone project without a MEMORY.md yet gets no folder at all.
	gone2 := f.project("gone2")
	f.belief("Never written", 0.9, 5, gone2)
	os.RemoveAll(gone2)
	f.run(f.now.Add(2 * time.Hour))
	if _, err := os.Stat(filepath.Dir(f.loc.ProjectFile(gone2))); !os.IsNotExist(err) {
		t.Errorf("a memory folder was created for a gone project: %v", err)
	}
}

func TestRouting(t *testing.T) {
	f := newFixture(t)
	a, b := f.project("alpha"), f.project("beta")
	f.belief("Global statement", 0.9, 5, "")
	f.belief("Alpha statement", 0.9, 5, a)
	f.belief("Beta statement", 0.9, 5, b)
	// A belief recorded with a subdirectory of beta goes to beta's git root.
	sub := filepath.Join(b, "services", "api")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	f.belief("Beta subdirectory statement", 0.9, 5, sub)
	st := f.run(f.now)
	if st.Promoted != 4 {
		t.Errorf("Stats.Promoted=%d, want 4", st.Promoted)
	}
	want := map[string][]string{
		f.loc.GlobalFile():   {"Global statement"},
		f.loc.ProjectFile(a): {"Alpha statement"},
		f.loc.ProjectFile(b): {"Beta statement", "Beta subdirectory statement"},
	}
	all := []string{"Global statement", "Alpha statement", "Beta statement", "Beta subdirectory statement"}
	for path, stmts := range want {
		s := f.read(path)
		for _, stmt := range all {
			if got, want := strings.Contains(s, stmt+" ("), slices.Contains(stmts, stmt); got != want {
				t.Errorf("%s holds %q: %v, want %v\n%s", path, stmt, got, want, s)
			}
		}
	}
	if wantPath := filepath.Join(f.loc.ClaudeConfigDir, "projects", Sanitize(b), "memory", "MEMORY.md"); f.loc.ProjectFile(b) != wantPath {
		t.Errorf("ProjectFile=%s, want %s", f.loc.ProjectFile(b), wantPath)
	}
	if _, err := os.Stat(f.loc.ProjectFile(sub)); !os.IsNotExist(err) {
		t.Errorf("a MEMORY.md was written for the subdirectory's own folder")
	}
	for _, p := range []string{filepath.Dir(f.loc.ProjectFile(a)), filepath.Dir(filepath.Dir(f.loc.ProjectFile(a)))} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v (%v), want 0700", p, fi.Mode().Perm(), err)
		}
	}
	for p := range want {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", p, fi.Mode().Perm(), err)
		}
	}
}

func TestBeliefMovesWithItsProject(t *testing.T) {
	f := newFixture(t)
	a, b := f.project("one"), f.project("two")
	id := f.belief("Moving statement", 0.9, 5, a)
	f.run(f.now)
	f.change(id, func(x *belief.Belief) { x.ProjectPath = b })
	st := f.run(f.now.Add(time.Hour))
	if strings.Contains(f.read(f.loc.ProjectFile(a)), "Moving statement") || !strings.Contains(f.read(f.loc.ProjectFile(b)), "Moving statement") {
		t.Errorf("after the move: %+v\none:\n%s\ntwo:\n%s", st, f.read(f.loc.ProjectFile(a)), f.read(f.loc.ProjectFile(b)))
	}
	if got := f.get(id); got.PromotedAt.IsZero() {
		t.Error("the moved belief is no longer marked promoted")
	}
}

func TestAutoMemoryDirectory(t *testing.T) {
	f := newFixture(t)
	t.Setenv("HOME", f.home)
	f.write(filepath.Join(f.loc.ClaudeConfigDir, "settings.json"), `{"hooks": {}, "autoMemoryDirectory": "~/notes/claude"}`)
	loc := LocationsFrom(configFor(f))
	if want := filepath.Join(f.home, "notes", "claude"); loc.AutoMemoryDir != want || loc.SettingsProblem != "" {
		t.Fatalf("AutoMemoryDir=%q (%s), want %q", loc.AutoMemoryDir, loc.SettingsProblem, want)
	}
	f.loc = loc
	a, b := f.project("web"), f.project("cli")
	f.belief("Web statement", 0.9, 5, a)
	f.belief("CLI statement", 0.8, 4, b)
	f.run(f.now)
	file := filepath.Join(f.home, "notes", "claude", "MEMORY.md")
	got := bullets(f.read(file), headingBeliefs)
	want := []string{"- Web statement (project: web, confidence: 0.90, evidence: 5)", "- CLI statement (project: cli, confidence: 0.80, evidence: 4)"}
	if !slices.Equal(got, want) {
		t.Errorf("shared auto-memory file bullets %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(f.loc.ClaudeConfigDir, "projects")); !os.IsNotExist(err) {
		t.Errorf("the default projects folder was used despite autoMemoryDirectory")
	}
}

func TestResolveAutoMemoryDirectory(t *testing.T) {
	home := "/home/u"
	for _, tt := range []struct{ in, want string }{
		{"~/mem", "/home/u/mem"},
		{"~/a/../b/", "/home/u/b"},
		{"/srv/memory/", "/srv/memory"},
		{"~/..", ""},
		{"~/../etc", ""},
		{"~/", ""},
		{"~", ""},
		{"relative/dir", ""},
		{"/a", ""},
		{"", ""},
		{"/x\x00y", ""},
	} {
		if got := ResolveAutoMemoryDirectory(tt.in, home); got != tt.want {
			t.Errorf("ResolveAutoMemoryDirectory(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSanitize(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/home/u/my.proj_v2 x", "-home-u-my-proj-v2-x"},
		{"/repo", "-repo"},
		{"/tmp/é", "-tmp--"},
		{"/tmp/😀", "-tmp---"}, // two UTF-16 code units
	} {
		if got := Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
	long := "/" + strings.Repeat("d", 250)
	got := Sanitize(long)
	if !strings.HasPrefix(got, "-"+strings.Repeat("d", 199)+"-") || len(got) <= 201 || len(got) > 201+8 {
		t.Errorf("Sanitize(long)=%q: want 200 characters, '-', a base-36 hash", got)
	}
	if Sanitize(long) == Sanitize(long+"e") {
		t.Error("two long paths with the same first 200 characters share a folder name")
	}
}

func TestImportedPromotionState(t *testing.T) {
	// An export carries promoted_at and demoted_at but not the file: after
	// an import, a belief that qualifies is promoted afresh, one that does
	// not is no longer marked promoted.
	f := newFixture(t)
	good := f.belief("Qualifies after import", 0.9, 5, "")
	weak := f.belief("Does not qualify after import", 0.4, 5, "")
	for _, id := range []string{good, weak} {
		f.change(id, func(b *belief.Belief) { b.PromotedAt, b.DemotedAt = f.now.Add(-time.Hour), f.now.Add(-time.Minute) })
	}
	st := f.run(f.now)
	if st.Promoted != 1 || !strings.Contains(f.read(f.loc.GlobalFile()), "- Qualifies after import (confidence: 0.90, evidence: 5)") {
		t.Errorf("%+v\n%s", st, f.read(f.loc.GlobalFile()))
	}
	if b := f.get(good); !b.PromotedAt.Equal(f.now) || !b.DemotedAt.IsZero() {
		t.Errorf("qualifying belief promoted_at=%v demoted_at=%v", b.PromotedAt, b.DemotedAt)
	}
	if b := f.get(weak); !b.PromotedAt.IsZero() || !b.DemotedAt.IsZero() {
		t.Errorf("weak belief promoted_at=%v demoted_at=%v, want cleared", b.PromotedAt, b.DemotedAt)
	}
}
