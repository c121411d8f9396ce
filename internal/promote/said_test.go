package promote

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/store"
)

func TestBulletQuotesTheUsersWords(t *testing.T) {
	b := store.PromotionBelief{ID: "bl_1", Statement: "User avoids floral fragrances.", Alpha: 4, Beta: 1, EvidenceCount: 3,
		FirstEvidence:     "User: I dislike floral fragrances in beauty products.\n\nAssistant: Got it, I'll keep that in mind.",
		FirstEvidenceType: "preference"}
	got := activeBullet(b, false)
	want := `- User avoids floral fragrances. ("I dislike floral fragrances in beauty products.") (confidence: 0.80, evidence: 3)`
	if got != want {
		t.Errorf("bullet\n got %s\nwant %s", got, want)
	}
	if !looksBelief(got) {
		t.Error("the block parser does not recognise the bullet")
	}
	for name, c := range map[string]store.PromotionBelief{
		"no evidence":      {Statement: "User prefers pnpm."},
		"not a statement":  {Statement: "User prefers pnpm.", FirstEvidence: "User: run the tests\n\nAssistant: All pass.", FirstEvidenceType: "event"},
		"a long statement": {Statement: "User prefers pnpm.", FirstEvidence: "User: I prefer " + strings.Repeat("pnpm and ", 40), FirstEvidenceType: "preference"},
		"the same words":   {Statement: "User prefers pnpm.", FirstEvidence: "User: user prefers pnpm", FirstEvidenceType: "preference"},
	} {
		if s := saidIn(c); s != "" {
			t.Errorf("%s: quoted %q", name, s)
		}
	}
	// Secrets and comment markers in the user's words are no more shown
	// than in a statement.
	b.FirstEvidence = "User: I always deploy with the token ghp_abcdefghijklmnopqrstuvwxyz0123456789 <!-- x -->"
	if got := activeBullet(b, false); strings.Contains(got, "ghp_abcdef") || strings.Contains(got, "<!--") {
		t.Errorf("bullet shows a secret or a comment marker: %s", got)
	}
}

// TestSaidRanksFirstAmongEquals: among beliefs of equal score, those the
// user said in a short sentence of their own (shown with their words) are
// shown before ones drawn from long messages, whatever their age.
func TestSaidRanksFirstAmongEquals(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tg := &target{path: "/m/MEMORY.md", kind: kindGlobal}
	cur := map[string]string{}
	var quoted []string
	for i := range MaxActive + 4 {
		b := store.PromotionBelief{ID: fmt.Sprintf("bl_%02d", i), Statement: fmt.Sprintf("User avoids thing%02d.", i),
			Status: belief.StatusActive, Alpha: 4, Beta: 1, EvidenceCount: 3, Level: store.LevelLongTerm,
			// The drawn ones are older: age alone would show them first.
			CreatedAt: now.Add(-time.Duration(100-i) * time.Hour)}
		if i >= 6 {
			b.FirstEvidence = fmt.Sprintf("User: I really dislike thing%02d in my projects.\n\nAssistant: Noted.", i)
			if i%2 == 0 {
				// in the user's words: shown without a quote, ranked the same
				b.Statement = fmt.Sprintf("I really dislike thing%02d in my projects.", i)
			}
			b.FirstEvidenceType = "preference"
			quoted = append(quoted, b.Statement)
		} else {
			b.FirstEvidence = "User: " + strings.Repeat("a long pasted prompt with a constraint ", 20)
			b.FirstEvidenceType = "preference"
		}
		tg.beliefs = append(tg.beliefs, b)
		cur[b.ID] = tg.path
	}
	p := planBeliefs(tg, cur, map[string]string{}, now, false, func(string) bool { return true }, "\n")
	got := bullets(p.block, headingBeliefs)
	if len(got) != MaxActive {
		t.Fatalf("%d bullets, want %d:\n%s", len(got), MaxActive, p.block)
	}
	for i, stmt := range quoted {
		if !strings.HasPrefix(got[i], "- "+stmt) {
			t.Errorf("bullet %d = %q, want the quoted %q first", i, got[i], stmt)
		}
	}
}

// TestOnePlacePerStatement: two beliefs first stated in one sentence take
// one of the MaxActive places before every other statement has one.
func TestOnePlacePerStatement(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tg := &target{path: "/m/MEMORY.md", kind: kindGlobal}
	cur := map[string]string{}
	add := func(id, stmt, said string, evidence int) {
		b := store.PromotionBelief{ID: id, Statement: stmt, Status: belief.StatusActive, Alpha: 4, Beta: 1,
			EvidenceCount: evidence, Level: store.LevelLongTerm, CreatedAt: now.Add(-time.Hour),
			FirstEvidence: "User: " + said + "\n\nAssistant: Noted.", FirstEvidenceType: "preference"}
		tg.beliefs = append(tg.beliefs, b)
		cur[id] = tg.path
	}
	// One sentence, two beliefs, both ranked first by their evidence.
	pair := "I prefer to adopt pets from shelters rather than buying from breeders."
	add("bl_a", "User prefers adopting pets from shelters.", pair, 6)
	add("bl_b", "User avoids buying from breeders.", pair, 6)
	for i := range MaxActive - 1 {
		add(fmt.Sprintf("bl_%02d", i), fmt.Sprintf("User avoids thing%02d.", i), fmt.Sprintf("I really dislike thing%02d.", i), 3)
	}
	p := planBeliefs(tg, cur, map[string]string{}, now, false, func(string) bool { return true }, "\n")
	got := bullets(p.block, headingBeliefs)
	if len(got) != MaxActive {
		t.Fatalf("%d bullets, want %d:\n%s", len(got), MaxActive, p.block)
	}
	if !strings.HasPrefix(got[0], "- User prefers adopting pets from shelters.") {
		t.Errorf("first bullet %q, want the pair's first belief", got[0])
	}
	if strings.Contains(p.block, "User avoids buying from breeders.") {
		t.Errorf("the pair's second belief took a place from another statement:\n%s", p.block)
	}
	for i := range MaxActive - 1 {
		if !strings.Contains(p.block, fmt.Sprintf("User avoids thing%02d.", i)) {
			t.Errorf("statement %02d has no place:\n%s", i, p.block)
		}
	}
}

// TestOneBulletPerClause: two beliefs that read as the same clause of the
// user's ("I prefer Go over Python for CLIs": Go, and not Python) show as
// one bullet, with no quote of words the statement already is.
func TestOneBulletPerClause(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tg := &target{path: "/m/MEMORY.md", kind: kindGlobal}
	cur := map[string]string{}
	said := "User: ok, I prefer Go over Python for CLIs, thanks\n\nAssistant: Noted."
	for _, id := range []string{"bl_go", "bl_py"} {
		b := store.PromotionBelief{ID: id, Statement: "I prefer Go over Python for CLIs.", Status: belief.StatusActive,
			Alpha: 4, Beta: 1, EvidenceCount: 3, Level: store.LevelLongTerm, CreatedAt: now.Add(-time.Hour),
			FirstEvidence: said, FirstEvidenceType: "preference"}
		tg.beliefs = append(tg.beliefs, b)
		cur[id] = tg.path
	}
	p := planBeliefs(tg, cur, map[string]string{}, now, false, func(string) bool { return true }, "\n")
	got := bullets(p.block, headingBeliefs)
	want := "- I prefer Go over Python for CLIs. (confidence: 0.80, evidence: 3)"
	if len(got) != 1 || got[0] != want {
		t.Errorf("bullets %q, want only %q", got, want)
	}
}
