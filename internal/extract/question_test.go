package extract

import (
	"slices"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

func userTurn(u string) Input {
	return Input{SessionID: "s", Project: "p", ProjectPath: "/src/p", TurnAt: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC),
		Content: "User: " + u + "\n\nAssistant: Done.",
		Blocks:  []Block{{Role: "user", Kind: "text", Text: u}, {Role: "assistant", Kind: "text", Text: "Done."}}}
}

// What a request put as a question rests on is read as a sentence of its
// own; what a question of another kind asks about, or a question of one
// clause, states nothing.
func TestQuestionLead(t *testing.T) {
	for _, tc := range []struct {
		u    string
		want string // a stated signal's subject, or "" for none
	}{
		{"since we dropped Travis for GitLab CI, can you update the badge in the README?", "travis"},
		{"in this repo we always use pnpm, could you add the lint script to package.json?", "pnpm"},
		{"you never log the request id, is that on purpose?", ""},
		{"should we always use pnpm here?", ""},
		{"can you always use pnpm?", ""},
	} {
		d := mustExtract(t, userTurn(tc.u))
		var got []string
		for _, s := range d.Signals {
			if s.Stated && !s.Tentative {
				got = append(got, s.Subject)
			}
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q: stated %q, want nothing", tc.u, got)
		case tc.want != "" && !slices.Contains(got, tc.want):
			t.Errorf("%q: stated %q, want %q among them (%+v)", tc.u, got, tc.want, d.Signals)
		}
	}
}

// A statement the model would add from a condition alone is none ("suppose
// we switched from npm to bun"), as in the rules' clauses.
func TestConditionStatesNothing(t *testing.T) {
	for _, u := range []string{
		"suppose we switched from npm to bun",
		"if we switched from npm to bun",
	} {
		d := mustExtract(t, userTurn(u))
		for _, s := range d.Signals {
			if s.Kind == episode.SignalCorrection || s.Kind == episode.SignalSwitch || s.Kind == episode.SignalPreference {
				t.Errorf("%q: %+v", u, s)
			}
		}
	}
}
