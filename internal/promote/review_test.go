package promote

import (
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// runReview runs one pass with review on (ENGRAM_REVIEW=uncertain).
func (f *fixture) runReview(at time.Time) Stats {
	f.t.Helper()
	st, err := Run(f.ctx, f.db, Options{Locations: f.loc, Write: true, GraduateImportance: 0.7,
		CompressAfter: 90 * 24 * time.Hour, Now: at, Review: "uncertain"})
	if err != nil {
		f.t.Fatalf("Run: %v", err)
	}
	return st
}

func (f *fixture) decide(id, before, after string) {
	f.t.Helper()
	if err := f.db.Decide(f.ctx, []store.Decision{{BeliefID: id, Decision: "test", Who: "user", At: f.now, Before: before, After: after}}); err != nil {
		f.t.Fatal(err)
	}
}

func TestPromotionFollowsLevels(t *testing.T) {
	f := newFixture(t)
	f.belief("The build uses Bazel", 0.8, 5, "") // pending: waits for review
	longTerm := f.belief("Deploys go through Fly.io", 0.8, 5, "")
	pinned := f.belief("Releases are cut on Tuesdays", 0.4, 1, "")
	denied := f.belief("The user likes emoji", 0.95, 12, "")
	f.decide(longTerm, store.LevelPending, store.LevelLongTerm)
	f.decide(pinned, store.LevelPending, store.LevelPinned)
	f.decide(denied, store.LevelPending, store.LevelDenied)
	f.runReview(f.now)
	got := bullets(f.read(f.loc.GlobalFile()), "## Beliefs")
	if len(got) != 2 || !strings.Contains(got[0], "Releases are cut on Tuesdays") || !strings.Contains(got[1], "Deploys go through Fly.io") {
		t.Fatalf("bullets %q, want the pinned belief first, then the long-term one", got)
	}

	// With review off, the gates alone decide, except that a denied belief
	// is never shown and a pinned one always is.
	g := newFixture(t)
	g.belief("The build uses Bazel", 0.8, 5, "")
	d2 := g.belief("The user likes emoji", 0.95, 12, "")
	g.decide(d2, store.LevelPending, store.LevelDenied)
	g.run(g.now)
	text := g.read(g.loc.GlobalFile())
	if !strings.Contains(text, "The build uses Bazel") || strings.Contains(text, "emoji") {
		t.Fatalf("review off:\n%s", text)
	}
}

func TestDeniedLeavesAtOnceAndPinnedStays(t *testing.T) {
	f := newFixture(t)
	a := f.belief("The build uses Bazel", 0.8, 5, "")
	b := f.belief("Deploys go through Fly.io", 0.8, 5, "")
	f.run(f.now)
	text := f.read(f.loc.GlobalFile())
	if !strings.Contains(text, "Bazel") || !strings.Contains(text, "Fly.io") {
		t.Fatalf("both should be shown:\n%s", text)
	}
	f.decide(a, store.LevelPending, store.LevelDenied)
	f.decide(b, store.LevelPending, store.LevelPinned)
	f.setConfidence(b, 0.3) // a pinned belief is never demoted
	st := f.run(f.now.Add(time.Hour))
	text = f.read(f.loc.GlobalFile())
	if strings.Contains(text, "Bazel") {
		t.Errorf("a denied belief is still shown (not even as former):\n%s", text)
	}
	if st.Demoted != 0 || !strings.Contains(text, "- Deploys go through Fly.io") || strings.Contains(text, "NO LONGER TRUE") {
		t.Errorf("pinned belief demoted (%d demotions):\n%s", st.Demoted, text)
	}
	if got := f.get(a); !got.PromotedAt.IsZero() || !got.DemotedAt.IsZero() {
		t.Errorf("denied belief still marked shown: promoted %v demoted %v", got.PromotedAt, got.DemotedAt)
	}
}
