package promote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
	"github.com/gofrs/flock"
)

func (f *fixture) strip(path string, removeEmpty bool) StripResult {
	f.t.Helper()
	r, err := Strip(f.ctx, path, removeEmpty)
	if err != nil {
		f.t.Fatalf("Strip(%s): %v", path, err)
	}
	return r
}

// TestStripGivesBackTheUserContent: after a cycle wrote engram's block into
// a file with the user's content, Strip gives back that content byte for
// byte.
func TestStripGivesBackTheUserContent(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"plain", "# Notes\n\n- [Build](build.md) — how to build\n"},
		{"no final newline", "# Notes\n- keep me"},
		{"CRLF", "# Notes\r\n\r\n- one\r\n- two\r\n"},
		{"mixed line breaks", "# Notes\r\n- one\n- two\r\n"},
		{"empty lines only", "\n\n\n"},
		{"lookalikes", "<!-- mine -->\n<!-- ENGRAM:BELIEFS:BEGIN --> not a marker\n## Beliefs\n- Use tabs (confidence: 0.90, evidence: 5)\n"},
		{"trailing blanks", "# Notes\n- one  \n\t\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			proj := f.project("app")
			file := f.loc.ProjectFile(proj)
			f.write(file, tt.content)
			f.belief("The API listens on port 8080", 0.9, 5, proj)
			f.run(f.now)
			if s := f.read(file); block(s) == "" {
				t.Fatalf("no block was written:\n%q", s)
			}
			r := f.strip(file, false)
			if got := f.read(file); got != tt.content {
				t.Errorf("after Strip the file is %q, want the original %q", got, tt.content)
			}
			if !r.Beliefs || r.Episodes || r.Removed || !r.Changed() || r.Path != file {
				t.Errorf("result %+v", r)
			}
			// Again: nothing of engram's is left, nothing changes.
			if r := f.strip(file, false); r.Changed() {
				t.Errorf("a second Strip changed the file: %+v", r)
			}
			if got := f.read(file); got != tt.content {
				t.Errorf("after a second Strip the file is %q", got)
			}
		})
	}
}

func TestStripGlobalFile(t *testing.T) {
	const user = "# My global notes\r\n- Answer in British English.\r\n"
	f := newFixture(t)
	f.write(f.loc.GlobalFile(), user)
	f.belief("Prefers Go for command-line tools", 0.9, 6, "")
	f.episode("Decided to keep the service stateless", 0.9, episode.ScopeGlobal, f.now.Add(-time.Hour))
	if st := f.run(f.now); st.Promoted != 1 || st.Graduated != 1 {
		t.Fatalf("stats %+v", st)
	}
	s := f.read(f.loc.GlobalFile())
	if !strings.Contains(s, EpisodesBegin+"\r\n") || !strings.Contains(s, BeliefsBegin+"\r\n") {
		t.Fatalf("want both blocks with CRLF:\n%q", s)
	}
	r := f.strip(f.loc.GlobalFile(), true)
	if got := f.read(f.loc.GlobalFile()); got != user {
		t.Errorf("file = %q, want %q", got, user)
	}
	if !r.Beliefs || !r.Episodes || r.Removed {
		t.Errorf("result %+v", r)
	}
	if d := r.Describe(); d != "took out engram's blocks (beliefs, graduated episodes)" {
		t.Errorf("Describe() = %q", d)
	}
}

// TestStripHandWritten covers blocks where a cycle does not put them: moved
// by the user, damaged, several.
func TestStripHandWritten(t *testing.T) {
	const user = "# Notes\n- mine\n"
	old := "## Beliefs\n\n- Old statement (confidence: 0.80, evidence: 4)\n\n"
	blk := BeliefsBegin + "\n" + old + BeliefsEnd + "\n"
	eps := EpisodesBegin + "\n## 2026-02-01\n\n- Decided on Postgres\n\n" + EpisodesEnd + "\n"
	tests := []struct {
		name, content, want string
		damaged             bool
	}{
		{"in the middle", "# Top\n" + blk + user, "# Top\n" + user, false},
		{"at the end without a line break", user + strings.TrimSuffix(blk, "\n"), user, false},
		{"indented markers", "  " + BeliefsBegin + " \n" + old + "\t" + BeliefsEnd + "\n" + user, user, false},
		{"episodes only", user + eps, user, false},
		{"both, around user content", blk + user + eps + "tail\n", user + "tail\n", false},
		{"BEGIN without END", BeliefsBegin + "\n" + old + user, user, true},
		{"END without BEGIN", old + BeliefsEnd + "\n" + user, user, true},
		{"repeated blocks", blk + blk + user, user, true},
		{"END before BEGIN", BeliefsEnd + "\n" + old + BeliefsBegin + "\n" + user, user, true},
		{"episode END without BEGIN", "## 2026-02-01\n\n- Decided on Postgres\n\n" + EpisodesEnd + "\n" + user, user, true},
		{"damaged, with the user's bullets next to it", BeliefsBegin + "\n" + old + "- my own bullet\n", "- my own bullet\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			file := filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-app", "memory", "MEMORY.md")
			f.write(file, tt.content)
			r := f.strip(file, false)
			if got := f.read(file); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
			if !r.Changed() || (len(r.Damage) > 0) != tt.damaged {
				t.Errorf("result %+v (damaged: want %v)", r, tt.damaged)
			}
		})
	}
}

func TestStripLeavesOtherFilesAlone(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-app", "memory")
	file := filepath.Join(dir, "MEMORY.md")
	f.write(file, "# Index\n- [a](a.md)\n")
	if err := os.Chtimes(file, f.now, f.now); err != nil {
		t.Fatal(err)
	}
	if r := f.strip(file, true); r.Changed() {
		t.Errorf("result %+v", r)
	}
	if fi, err := os.Stat(file); err != nil || !fi.ModTime().Equal(f.now) {
		t.Errorf("a file without engram's markers was written: %v", err)
	}
	if _, err := os.Lstat(file + ".lock"); !os.IsNotExist(err) {
		t.Errorf("a file without engram's markers was locked: %v", err)
	}
	// A missing file, in a missing directory: nothing is created.
	gone := filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-gone", "memory", "MEMORY.md")
	if r := f.strip(gone, true); r.Changed() {
		t.Errorf("result %+v", r)
	}
	if _, err := os.Stat(filepath.Dir(gone)); !os.IsNotExist(err) {
		t.Errorf("the directory of a missing file was created: %v", err)
	}
}

func TestStripEmptyFile(t *testing.T) {
	only := BeliefsBegin + "\n## Beliefs\n\n- Use pnpm (confidence: 0.90, evidence: 5)\n\n" + BeliefsEnd + "\n"
	t.Run("removed when asked", func(t *testing.T) {
		f := newFixture(t)
		f.write(f.loc.GlobalFile(), only)
		if err := os.Chmod(f.loc.GlobalFile(), 0o640); err != nil {
			t.Fatal(err)
		}
		r := f.strip(f.loc.GlobalFile(), true)
		if !r.Removed || !r.Beliefs {
			t.Errorf("result %+v", r)
		}
		if _, err := os.Stat(f.loc.GlobalFile()); !os.IsNotExist(err) {
			t.Errorf("the file is still there: %v", err)
		}
		if !strings.HasSuffix(r.Describe(), "; removed the file, which held nothing else") {
			t.Errorf("Describe() = %q", r.Describe())
		}
		checkNoStrays(t, filepath.Dir(f.loc.GlobalFile()))
	})
	t.Run("kept empty otherwise", func(t *testing.T) {
		f := newFixture(t)
		file := filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-app", "memory", "MEMORY.md")
		f.write(file, only)
		r := f.strip(file, false)
		if r.Removed || !r.Beliefs {
			t.Errorf("result %+v", r)
		}
		if got := f.read(file); got != "" {
			t.Errorf("file = %q, want it empty", got)
		}
	})
	t.Run("a symlink is not removed", func(t *testing.T) {
		f := newFixture(t)
		real := filepath.Join(f.loc.EngramHome, "real.md")
		f.write(real, only)
		if err := os.Symlink("real.md", f.loc.GlobalFile()); err != nil {
			t.Fatal(err)
		}
		if r := f.strip(f.loc.GlobalFile(), true); r.Removed || !r.Beliefs {
			t.Errorf("result %+v", r)
		}
		if fi, err := os.Lstat(f.loc.GlobalFile()); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the symlink is gone: %v", err)
		}
		if got := f.read(real); got != "" {
			t.Errorf("target = %q, want it empty", got)
		}
	})
}

// checkNoStrays fails when dir holds a temporary file of engram's.
func checkNoStrays(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".engram-tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestStripSymlinkRefused(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-app", "memory", "MEMORY.md")
	outside := filepath.Join(f.base, "elsewhere", "notes.md")
	content := BeliefsBegin + "\n## Beliefs\n\n- Use pnpm (confidence: 0.90, evidence: 5)\n\n" + BeliefsEnd + "\nmy notes\n"
	f.write(outside, content)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, file); err != nil {
		t.Fatal(err)
	}
	r, err := Strip(f.ctx, file, true)
	if !errors.Is(err, ErrSymlinkOutside) || r.Changed() {
		t.Errorf("Strip = %+v, %v; want ErrSymlinkOutside", r, err)
	}
	if got := f.read(outside); got != content {
		t.Errorf("the file outside was written: %q", got)
	}
	if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v", err)
	}
}

// TestStripConcurrentWriterSurvives: another program writes the file while
// Strip is at work, at the worst moments; its write is kept and engram's
// block still goes. With only engram's block left, Strip is about to
// remove the file: the write must stop that.
func TestStripConcurrentWriterSurvives(t *testing.T) {
	const late = "- [Late](late.md) — written during the uninstall"
	blk := BeliefsBegin + "\n## Beliefs\n\n- Use pnpm (confidence: 0.90, evidence: 5)\n\n" + BeliefsEnd + "\n"
	for _, user := range []string{"- [Setup](setup.md)\n", ""} {
		for _, tt := range []struct {
			name   string
			when   *func(string, int)
			script string
			linux  bool
		}{
			{"append before the check", &testOnlyBeforeReplace, appendLine, false},
			{"rename before the check", &testOnlyBeforeReplace, renameWrite, false},
			{"append after the check", &testOnlyAfterCheck, appendLine, true},
			{"rename after the check", &testOnlyAfterCheck, renameWrite, true},
		} {
			name := tt.name
			if user == "" {
				name += ", nothing else in the file"
			}
			t.Run(name, func(t *testing.T) {
				if tt.linux && runtime.GOOS != "linux" && user != "" {
					t.Skip("the atomic exchange is Linux only")
				}
				f := newFixture(t)
				f.write(f.loc.GlobalFile(), blk+user)
				calls := 0
				hook(t, tt.when, func(target string, attempt int) {
					calls++
					if attempt == 1 {
						sh(t, tt.script, target, late)
					}
				})
				r := f.strip(f.loc.GlobalFile(), true)
				if got, want := f.read(f.loc.GlobalFile()), user+late+"\n"; got != want {
					t.Errorf("file = %q, want %q", got, want)
				}
				if calls < 2 || r.Retries != 1 || !r.Beliefs || r.Removed {
					t.Errorf("hook calls %d (want a retry), result %+v", calls, r)
				}
				checkNoStrays(t, f.loc.EngramHome)
			})
		}
	}
}

// cleanFixture is a machine after a cycle: blocks in two projects' files
// (one with the user's notes) and in the global file, a block in a file
// only the store's list knows (written where the autoMemoryDirectory the
// user had then pointed), and a file of the user's under projects/.
type cleanFixture struct {
	*fixture
	app, web, listed, mine string
}

const appNotes = "# app\r\n- [Build](build.md)\r\n"

func newCleanFixture(t *testing.T) cleanFixture {
	f := cleanFixture{fixture: newFixture(t)}
	app, web := f.project("app"), f.project("web")
	f.app, f.web = f.loc.ProjectFile(app), f.loc.ProjectFile(web)
	f.write(f.app, appNotes)
	f.belief("The app listens on port 8080", 0.9, 5, app)
	f.belief("The web front end uses Vite", 0.9, 5, web)
	f.belief("Prefers short commit messages", 0.9, 5, "")
	f.run(f.now)
	f.listed = filepath.Join(f.base, "automem", "MEMORY.md")
	f.write(f.listed, BeliefsBegin+"\n## Beliefs\n\n- Kept (project: x, confidence: 0.90, evidence: 5)\n\n"+BeliefsEnd+"\n")
	if err := f.db.ApplyPromotion(f.ctx, store.MemoryFile{Path: f.listed, Kind: kindProject}, nil, f.now); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f.app, f.web, f.loc.GlobalFile(), f.listed} {
		if block(f.read(p)) == "" {
			t.Fatalf("%s: no block written", p)
		}
	}
	f.mine = filepath.Join(f.loc.ClaudeConfigDir, "projects", "-work-mine", "memory", "MEMORY.md")
	f.write(f.mine, "# mine\n")
	return f
}

// check checks the files every Clean finds: cleaned, the user's bytes
// kept, the global file gone, the user's own file not even locked.
func (f cleanFixture) check(t *testing.T, rep CleanReport, want ...string) {
	t.Helper()
	var got []string
	for _, r := range rep.Files {
		got = append(got, r.Path)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cleaned %q, want %q", got, want)
	}
	if got := f.read(f.app); got != appNotes {
		t.Errorf("app file = %q, want %q", got, appNotes)
	}
	if got := f.read(f.web); got != "" {
		t.Errorf("web file = %q, want it empty (and kept: engram may not have created it)", got)
	}
	if _, err := os.Stat(f.loc.GlobalFile()); !os.IsNotExist(err) {
		t.Errorf("the global file, which held nothing else, is still there: %v", err)
	}
	if got := f.read(f.mine); got != "# mine\n" {
		t.Errorf("a file without engram's markers = %q", got)
	}
	if _, err := os.Lstat(f.mine + ".lock"); !os.IsNotExist(err) {
		t.Errorf("a file without engram's markers was locked")
	}
	// No lock file is left beside a file engram cleaned.
	for _, r := range rep.Files {
		if _, err := os.Lstat(r.Path + ".lock"); !os.IsNotExist(err) {
			t.Errorf("%s.lock left behind (%v)", r.Path, err)
		}
	}
}

func TestClean(t *testing.T) {
	t.Run("from the store's list", func(t *testing.T) {
		f := newCleanFixture(t)
		rep := Clean(f.ctx, f.loc, f.db.MemoryFiles)
		// In path order: base/automem, base/home/.claude-memory, base/home/.claude/projects.
		f.check(t, rep, f.listed, f.loc.GlobalFile(), f.app, f.web)
		if rep.ListProblem != "" || len(rep.Searched) != 0 || len(rep.Failed) != 0 {
			t.Errorf("report %+v", rep)
		}
		if got := f.read(f.listed); got != "" {
			t.Errorf("listed file = %q", got)
		}
	})
	t.Run("without the list", func(t *testing.T) {
		f := newCleanFixture(t)
		kept := f.read(f.listed)
		rep := Clean(f.ctx, f.loc, func(context.Context) ([]store.MemoryFile, error) {
			return nil, errors.New("database disk image is malformed")
		})
		f.check(t, rep, f.loc.GlobalFile(), f.app, f.web)
		if rep.ListProblem != "database disk image is malformed" || len(rep.Failed) != 0 {
			t.Errorf("report %+v", rep)
		}
		if want := filepath.Join(f.loc.ClaudeConfigDir, "projects", "*", "memory", "MEMORY.md"); len(rep.Searched) != 2 ||
			rep.Searched[0] != f.loc.GlobalFile() || rep.Searched[1] != want {
			t.Errorf("Searched = %q", rep.Searched)
		}
		// Only the list knew that file.
		if got := f.read(f.listed); got != kept {
			t.Errorf("listed file = %q", got)
		}
	})
	t.Run("the autoMemoryDirectory, without the list", func(t *testing.T) {
		f := newCleanFixture(t)
		f.loc.AutoMemoryDir = filepath.Dir(f.listed)
		rep := Clean(f.ctx, f.loc, func(context.Context) ([]store.MemoryFile, error) { return nil, errors.New("no store") })
		f.check(t, rep, f.listed, f.loc.GlobalFile(), f.app, f.web)
	})
}

// TestCleanCarriesOn: a file that cannot be cleaned is reported, and the
// others are still cleaned.
func TestCleanCarriesOn(t *testing.T) {
	f := newFixture(t)
	old := lockWait
	lockWait = 200 * time.Millisecond
	t.Cleanup(func() { lockWait = old })
	blk := BeliefsBegin + "\n## Beliefs\n\n- Use pnpm (confidence: 0.90, evidence: 5)\n\n" + BeliefsEnd + "\n"
	dir := filepath.Join(f.loc.ClaudeConfigDir, "projects")
	locked := filepath.Join(dir, "-work-a", "memory", "MEMORY.md")
	linked := filepath.Join(dir, "-work-b", "memory", "MEMORY.md")
	fine := filepath.Join(dir, "-work-c", "memory", "MEMORY.md")
	outside := filepath.Join(f.base, "outside.md")
	f.write(locked, blk+"a\n")
	f.write(outside, blk+"b\n")
	f.write(fine, blk+"c\n")
	if err := os.MkdirAll(filepath.Dir(linked), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, linked); err != nil {
		t.Fatal(err)
	}
	other := flock.New(locked + ".lock")
	if err := other.Lock(); err != nil {
		t.Fatal(err)
	}
	defer other.Unlock()
	list := func(context.Context) ([]store.MemoryFile, error) {
		return []store.MemoryFile{{Path: locked, Kind: kindProject}, {Path: linked, Kind: kindProject}, {Path: fine, Kind: kindProject}}, nil
	}
	rep := Clean(f.ctx, f.loc, list)
	if _, err := os.Stat(locked + ".lock"); err != nil {
		t.Errorf("the lock another writer holds was removed: %v", err)
	}
	if len(rep.Files) != 1 || rep.Files[0].Path != fine || f.read(fine) != "c\n" {
		t.Errorf("cleaned %+v; %s = %q", rep.Files, fine, f.read(fine))
	}
	if len(rep.Failed) != 2 || rep.Failed[0].Path != locked || !strings.Contains(rep.Failed[0].Err.Error(), "lock") ||
		rep.Failed[1].Path != linked || !errors.Is(rep.Failed[1].Err, ErrSymlinkOutside) {
		t.Fatalf("failed %+v", rep.Failed)
	}
	if msg := rep.Failed[0].Error(); !strings.Contains(msg, "run uninstall again, or delete the lines from "+BeliefsBegin) ||
		!strings.HasPrefix(msg, locked+": engram's blocks are still in it (lock ") {
		t.Errorf("message %q", msg)
	}
	if msg := rep.Failed[1].Error(); !strings.Contains(msg, "): delete the lines from "+BeliefsBegin) || !errors.Is(rep.Failed[1], ErrSymlinkOutside) {
		t.Errorf("message %q", msg)
	}
	if f.read(locked) != blk+"a\n" || f.read(outside) != blk+"b\n" {
		t.Error("a file that could not be cleaned safely was written")
	}
}
