package promote

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// TestGoldenGlobalFile renders the global MEMORY.md over two days:
// promoted beliefs (one needing its import token defused, its HTML comment
// broken and a key redacted), a demotion, graduated episodes in dated
// sections, the user's own lines below.
func TestGoldenGlobalFile(t *testing.T) {
	f := newFixture(t)
	f.write(f.loc.GlobalFile(), "# My own notes\n\n- keep answers short\n")
	f.belief("Prefers table-driven tests in Go", 0.92, 12, "")
	f.belief("Reads @docs/STYLE.md before editing, key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ, <!-- note -->", 0.8, 4, "")
	dark := f.belief("Uses dark mode in every editor", 0.78, 5, "")
	f.belief("Likes `@latest` tags in code spans", 0.75, 3, "")
	f.belief("Not yet trusted enough", 0.69, 9, "")
	day1 := time.Date(2026, 2, 19, 18, 30, 0, 0, time.UTC)
	f.episode("Decided to keep every service behind the gateway", 0.85, episode.ScopeGlobal, day1.Add(-time.Hour))
	f.episode("Switched from npm to pnpm in all projects", 0.9, episode.ScopeGlobal, day1.Add(-2*time.Hour))
	st := f.run(day1)
	if st.Promoted != 4 || st.Graduated != 2 {
		t.Fatalf("day 1: %+v", st)
	}
	day2 := day1.Add(24 * time.Hour)
	f.setConfidence(dark, 0.45)
	f.episode("Always runs the linters before committing", 0.8, episode.ScopeGlobal, day2.Add(-time.Hour))
	st = f.run(day2)
	if st.Demoted != 1 || st.Graduated != 1 {
		t.Fatalf("day 2: %+v", st)
	}
	checkGolden(t, "global.golden", f.read(f.loc.GlobalFile()))
}

// TestGoldenSharedBlock renders the block of an auto-memory directory
// every project shares, where each belief names its project.
func TestGoldenSharedBlock(t *testing.T) {
	f := newFixture(t)
	f.loc.AutoMemoryDir = filepath.Join(f.home, "memory")
	web, api := f.project("web"), f.project("api")
	f.belief("The web app builds with Vite", 0.9, 7, web)
	f.belief("The API runs on port 8080", 0.85, 5, api)
	old := f.belief("The API uses MySQL", 0.8, 6, api)
	f.run(f.now)
	f.setConfidence(old, 0.55)
	f.run(f.now.Add(24 * time.Hour))
	s := f.read(filepath.Join(f.loc.AutoMemoryDir, "MEMORY.md"))
	checkGolden(t, "shared-block.golden", s)
	if !strings.Contains(s, "(project: api, was: 0.80, now: 0.55, demoted: 2026-03-11)") {
		t.Errorf("former bullet:\n%s", s)
	}
}
