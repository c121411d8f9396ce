package promote

import (
	"strings"
	"testing"

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
