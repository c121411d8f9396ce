package consolidate

import (
	"testing"

	"github.com/engram-memory/engram/internal/episode"
)

func TestHeadTermKeepsAParticiplesComplement(t *testing.T) {
	for in, want := range map[string]string{
		"bun in the workflow":             "bun",
		"tab in config file":              "tab",
		"clothing made from wool":         "clothing made from wool",
		"dishes cooked in butter":         "dishes cooked in butter",
		"go vet before committing":        "go vet before committing",
		"deploy target fly.io on fridays": "deploy target fly.io",
		"participate in water activity":   "participate in water activity",
		"online learning platforms that rely heavily on pre-recorded video lectures": "online learning platforms that rely heavily on pre-recorded video lectures",
		"dining in places that are known for their wine lists":                       "dining in places that are known for their wine lists",
	} {
		if got := headTerm(in); got != want {
			t.Errorf("headTerm(%q)=%q, want %q", in, got, want)
		}
	}
}

func TestRelativeClauseEndingOnParticipleMakesAClaim(t *testing.T) {
	for _, subj := range []string{"play any games that are sports-related", "beauty products that are not tested"} {
		if dangling(subj) {
			t.Errorf("dangling(%q) = true, want false", subj)
		}
	}
}

func TestDanglingSubjectMakesNoClaim(t *testing.T) {
	for _, subj := range []string{"42 story points per", "pictures of", "stash it", "chase those"} {
		if c, ok := claimOf(episode.Signal{Kind: episode.SignalAvoid, Subject: subj, Polarity: -1}); ok {
			t.Errorf("claimOf(%q)=%+v: a fragment made a claim", subj, c)
		}
	}
	// A participle ends many a rule: not a fragment (measured on the
	// speech corpus, see dangling).
	for _, subj := range []string{"go vet before committing", "table-driven test", "clothing made from wool", "feature flag", "red",
		"tests table driven", "anything generated", "clothing made"} {
		if _, ok := claimOf(episode.Signal{Kind: episode.SignalPreference, Subject: subj, Polarity: 1}); !ok {
			t.Errorf("claimOf(%q): no claim", subj)
		}
	}
}

func TestDanglingFactValueMakesNoClaim(t *testing.T) {
	for _, v := range []string{"42 story points per", "is even learning with them"} {
		if c, ok := claimOf(episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: v, Polarity: 1}); ok {
			t.Errorf("a value cut short made a claim: %+v", c)
		}
	}
	if _, ok := claimOf(episode.Signal{Kind: episode.SignalFact, Subject: "api", Object: "port 8080", Polarity: 1}); !ok {
		t.Error("a whole value made no claim")
	}
}

func TestSpeakerWordsMakeNoClaim(t *testing.T) {
	// A fact's value in the speakers' words is no value.
	for _, sig := range []episode.Signal{
		{Kind: episode.SignalFact, Subject: "user", Object: "is proud of how far i've come", Polarity: 1},
	} {
		if c, ok := claimOf(sig); ok {
			t.Errorf("claimOf(%+v)=%+v: a first- or second-person value made a claim", sig, c)
		}
	}
	// A rule about how the assistant works with the user names them both,
	// and is a claim (measured on the speech corpus, see claimOf).
	for _, subj := range []string{"start the dev server yourself", "remove my comment", "recap what you changed"} {
		if _, ok := claimOf(episode.Signal{Kind: episode.SignalAvoid, Subject: subj, Polarity: -1}); !ok {
			t.Errorf("claimOf(%q): no claim", subj)
		}
	}
	if _, ok := claimOf(episode.Signal{Kind: episode.SignalFact, Subject: "user", Object: "is learning german", Polarity: 1}); !ok {
		t.Error("a third-person fact made no claim")
	}
	// A purpose in the speaker's words is dropped, the preference kept.
	if c, ok := claimOf(episode.Signal{Kind: episode.SignalPreference, Subject: "tab", Object: "indentation in my own code", Polarity: 1}); !ok || c.object != "" {
		t.Errorf("claimOf(tabs for indentation in my own code)=%+v, %v", c, ok)
	}
}

func TestStatementKeepsTheUsersWords(t *testing.T) {
	for _, c := range []struct{ text, subject, want string }{
		{"I have a strong aversion to movies with excessive CGI.", "movie with excessive cgi", "movies with excessive CGI"},
		{"I strongly dislike fantasy-themed tabletop games because I'm not interested.", "fantasy themed tabletop game", "fantasy-themed tabletop games"},
		{"I do not like wearing the color black.", "wearing color black", "wearing the color black"},
		{"Movies with CGI are bad", "movie with cgi", "movies with CGI"},
		{"I prefer React Query and Zustand", "react query and zustand", "React Query and Zustand"},
		{"I prefer table-driven tests", "table-driven test", "table-driven tests"},
		// Not words alone, or not in the text: the subject, or its plural.
		{"Always run `go test -race ./...` before you tell me something works.", "go test -race ./...", "go test -race ./..."},
		{"I avoid dry textbooks. Factual ones too.", "dry factual textbook", "dry factual textbook"},
	} {
		if got := asWritten(c.text, c.subject); got != c.want {
			t.Errorf("asWritten(%q, %q) = %q, want %q", c.text, c.subject, got, c.want)
		}
	}
}

// A subject that opens with the verb of a habit reads as English after
// "prefers" and "avoids"; one that opens with a noun spelt like a verb, or
// is the verb alone, stays as it is.
func TestRenderVerbPhrase(t *testing.T) {
	for _, c := range []struct{ subject, pred, want string }{
		{"eat organic produce", PredPrefers, "User prefers to eat organic produce."},
		{"wear heels", PredAvoids, "User avoids wearing heels."},
		{"shop at second-hand stores", PredPrefers, "User prefers to shop at second-hand stores."},
		{"participate in water activities", PredAvoids, "User avoids participating in water activities."},
		{"wearing the color black", PredAvoids, "User avoids wearing the color black."},
		{"go modules", PredPrefers, "User prefers go modules."},
		{"commit messages in the imperative", PredPrefers, "User prefers commit messages in the imperative."},
		{"watch", PredPrefers, "User prefers watch."},
		{"table-driven tests", PredPrefers, "User prefers table-driven tests."},
		// Clipped to ten words, the subject ends on no function word.
		{"games that involve magic and fantasy elements and the thrill of strategy", PredPrefers,
			"User prefers games that involve magic and fantasy elements and the thrill."},
		{"games that involve magic and fantasy elements and a lot of strategy", PredPrefers,
			"User prefers games that involve magic and fantasy elements and a lot."},
		{"games that involve lots of magic and fantasy elements and the thrill of strategy", PredPrefers,
			"User prefers games that involve lots of magic and fantasy elements."},
	} {
		if got := Render(episode.ScopeGlobal, "", c.subject, c.pred, ""); got != c.want {
			t.Errorf("Render(%q, %q) = %q, want %q", c.subject, c.pred, got, c.want)
		}
	}
}

// A fact about the user keeps up to 14 words of its value, and a clip
// ends on no function word.
func TestRenderUserFact(t *testing.T) {
	for _, c := range []struct{ context, want string }{
		{"is passionate about helping people and making a positive impact", "User is passionate about helping people and making a positive impact."},
		{"is passionate about helping people in need and making a big and lasting difference in their lives",
			"User is passionate about helping people in need and making a big and lasting difference."},
	} {
		if got := Render(episode.ScopeGlobal, "", "user", PredIs, c.context); got != c.want {
			t.Errorf("Render(user is %q) = %q, want %q", c.context, got, c.want)
		}
	}
}
