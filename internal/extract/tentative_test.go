package extract

import (
	"context"
	"github.com/engram-memory/engram/internal/reading"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/episode"
)

// A correction the reading is unsure of (between TentativeCorr and the
// model's own add threshold) is kept, marked tentative, and weighs nothing:
// the exchange's type, kind, importance and scope are what they are with
// no such reading at all.
func TestTentativeCorrection(t *testing.T) {
	in := func(u string) Input {
		return Input{SessionID: "s", Project: "p", ProjectPath: "/src/p", TurnAt: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC),
			Content: "User: " + u + "\n\nAssistant: Thanks.",
			Blocks:  []Block{{Role: "user", Kind: "text", Text: u}, {Role: "assistant", Kind: "text", Text: "Thanks."}}}
	}
	for _, u := range []string{
		"bumped the toolchain to Go 1.23, go.mod says so now",
		"ignore what I said about eslint for this repo, biome does the linting here now",
	} {
		d, err := unsure().Extract(context.Background(), in(u))
		if err != nil {
			t.Fatal(err)
		}
		var tent []episode.Signal
		for _, s := range d.Signals {
			if s.Tentative {
				tent = append(tent, s)
			}
		}
		if len(tent) == 0 {
			t.Errorf("%q: no tentative correction: %+v", u, d.Signals)
			continue
		}
		for _, s := range tent {
			if s.Kind != episode.SignalCorrection && s.Kind != episode.SignalSwitch {
				t.Errorf("%q: a tentative %s: %+v", u, s.Kind, s)
			}
		}
		if len(episode.Sure(d.Signals)) != len(d.Signals)-len(tent) {
			t.Errorf("%q: Sure keeps %d of %d signals, %d tentative", u, len(episode.Sure(d.Signals)), len(d.Signals), len(tent))
		}
		saved := TentativeCorr
		TentativeCorr = 2
		none, err := unsure().Extract(context.Background(), in(u))
		if err != nil {
			t.Fatal(err)
		}
		TentativeCorr = saved
		if len(none.Signals) != len(d.Signals)-len(tent) {
			t.Errorf("%q: without tentative readings %d signals, with %d of which %d tentative", u, len(none.Signals), len(d.Signals), len(tent))
		}
		if d.Type != none.Type || d.Kind != none.Kind || d.Importance != none.Importance || d.Scope != none.Scope || d.Skip != none.Skip {
			t.Errorf("%q: the tentative correction weighs: type %s kind %s importance %v scope %s skip %v, without it %s %s %v %s %v",
				u, d.Type, d.Kind, d.Importance, d.Scope, d.Skip, none.Type, none.Kind, none.Importance, none.Scope, none.Skip)
		}
	}
}

// unsure is the local extractor with the lexical reading made surer
// before it adds a correction (0.95): what the committed model reads
// between TentativeCorr and that is tentative. The test fixes the band so
// that it checks what a tentative correction is, whatever the fitted
// threshold of the day.
func unsure() *Local {
	m := *reading.Lexical()
	m.AddKind[reading.Corr] = 0.95
	return NewLocal().WithReading(&m, nil)
}
