package recall

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestAsksForMany(t *testing.T) {
	for _, c := range []struct {
		prompt string
		want   bool
	}{
		{"What books has Ana read this year?", true},
		{"Which tests did we skip in CI?", true},
		{"What other flags does the CLI take?", true},
		{"which new endpoints need auth", true},
		{"What kinds of yoga does she do?", true},
		{"How many retries did we configure?", true},
		{"What activities does Sam enjoy?", true},

		{"What is the timeout of the webhook?", false},
		{"What does the parser return on EOF?", false},
		{"What time does the job run?", false},
		{"What was the status of the deploy?", false},
		{"What are some good restaurants in Lisbon?", false},
		{"Which class handles retries?", false},
		{"How do I rebase?", false},
		{"List the open bugs", false},
		{"books", false},
	} {
		if got := AsksForMany(c.prompt); got != c.want {
			t.Errorf("AsksForMany(%q) = %v, want %v", c.prompt, got, c.want)
		}
	}
	if l := DefaultSettings.LimitsFor(Result{Many: true}); l.Memories <= DefaultSettings.Limits.Memories || l.Budget != DefaultSettings.Limits.Budget {
		t.Errorf("limits of a prompt that asks for many: %+v", l)
	}
	if DefaultSettings.LimitsFor(Result{}) != DefaultSettings.Limits {
		t.Error("limits of another prompt are not the defaults")
	}
}

// A prompt that asks for several things keeps an episode scoring 0.58 of
// the best, which the same words asking for one thing drop; and the
// limits let it show eight bites where others show six.
func TestManyKeepsMore(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	q := randUnit(r, 384)
	mk, items := episodesNear(r, q)
	mk("road trip playlist ideas", 0.12)
	budget := mk("road trip budget spreadsheet", 0.40)
	snacks := mk("snacks to pack for the road trip", 0.60)
	items = append(items, budget, snacks)
	ask := askerOn(t, items, q)
	ids := episodeIDs
	one := ask("road trip snacks to pack?")
	many := ask("which snacks to pack for the road trip?")
	if one.Many || !slices.Equal(ids(one), []string{snacks.ID}) {
		t.Errorf("one thing: many %v, episodes %v, want only the snacks", one.Many, ids(one))
	}
	if !many.Many || !slices.Equal(ids(many), []string{snacks.ID, budget.ID}) {
		for _, c := range many.Episodes {
			t.Logf("%s score %.3f", c.ID, c.Score)
		}
		t.Errorf("several things: many %v, episodes %v, want the snacks then the budget", many.Many, ids(many))
	}

	var res Result
	for i := range 9 {
		res.Episodes = append(res.Episodes, Candidate{Item: Item{Kind: KindEpisode, ID: fmt.Sprintf("ep_%d", i), Text: fmt.Sprintf("short memory %d", i)}})
	}
	_, six := Format(res, DefaultSettings.LimitsFor(res), now)
	res.Many = true
	text, eight := Format(res, DefaultSettings.LimitsFor(res), now)
	if len(six) != 6 || len(eight) != 8 || strings.Count(text, "[Memory") != 8 {
		t.Errorf("bites: %d with the defaults, %d for many (%d shown)", len(six), len(eight), strings.Count(text, "[Memory"))
	}
}
