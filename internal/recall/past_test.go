package recall

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestAsksAboutThePast(t *testing.T) {
	for _, c := range []struct {
		prompt string
		want   bool
	}{
		{"When did we switch the CI to pnpm?", true},
		{"what was the error in the nightly build", true},
		{"Why didn't the migration run on staging?", true},
		{"Has the cache key been changed since the upgrade?", true},
		{"have we tried bumping the timeout?", true},
		{"Which libraries have Ana and Ben both evaluated?", true},
		{"Which libraries have Ana and Ben both evaluated for the new service?", false}, // the participle comes too late
		{"What inspired the rewrite of the parser?", true},
		{"How many users reported the crash?", true},
		{"Which commit introduced the regression?", true},
		{"What are some highly-rated laptops?", false},
		{"What is the recommended way to pin Go versions?", false},
		{"How should I structure the nested packages?", false},
		{"Do you have any recommended reading?", true}, // taken for a perfect
		{"Where were the fixtures stored before the move?", true},
		{"Remember the flaky login test? Is it fixed?", true},
		{"what did I say about tabs", true},
		{"How many times has the deploy failed?", true},
		{"What did we decide last week about the schema?", true},
		{"the release we cut two days ago", true},
		{"Is the design the same as last time?", true},
		{"What event is Lena organizing in June?", true},
		{"Which talk is on 12 March, 2024?", true},
		{"What happened in 2023 with the billing service?", true},
		{"What did Sam cook in May?", true},
		{"May 4 was the launch, right", true},
		{"Have you ever used Zig?", true},

		{"Can you recommend a good laptop for travel?", false},
		{"What are some highly-rated restaurants in Lisbon?", false},
		{"Do you have any tips for a long flight?", false},
		{"Rename parseDate to parseDay and fix the tests", false},
		{"May I ask you to review this diff?", false},
		{"I need a bag that will last for years", false},
		{"What are some top-rated sedans you would suggest?", false},
		{"this test needs a faster setup", false},
		{"", false},
	} {
		if got := AsksAboutThePast(c.prompt); got != c.want {
			t.Errorf("AsksAboutThePast(%q) = %v, want %v", c.prompt, got, c.want)
		}
	}
	// Up to maxQuestionWords words a prompt is a question; past them,
	// material.
	q := "did we " + strings.Repeat("word ", maxQuestionWords-2)
	if !AsksAboutThePast(q) || AsksAboutThePast(q+"more") {
		t.Errorf("at %d words: %v; at %d: %v", maxQuestionWords, AsksAboutThePast(q), maxQuestionWords+1, AsksAboutThePast(q+"more"))
	}
	// A long prompt is material, whatever words it holds.
	long := "Why does this fail? " + strings.Repeat("the job was queued and then ", 12)
	if AsksAboutThePast(long) {
		t.Errorf("a prompt of %d words counted as a question about the past", len(strings.Fields(long)))
	}
}

func TestPastGateIsLower(t *testing.T) {
	r := New("", nil)
	g := r.gate(true)
	if g == r || g.OpenCoverage != DefaultSettings.PastOpenCoverage || g.OpenScore != DefaultSettings.PastOpenScore || g.WordScore != DefaultSettings.PastWordScore {
		t.Fatalf("past gate: %+v", g)
	}
	if r.gate(false) != r || r.OpenCoverage != DefaultSettings.OpenCoverage {
		t.Fatalf("the gate of other prompts changed: %+v", r)
	}
	// One shared word of three, near in meaning: opens for a question
	// about the past, not for a request.
	c := Candidate{Item: Item{Kind: KindEpisode}, HasDenseCos: true, Coverage: 0.2, Dense: 0.42}
	if r.opens(c) || r.nearByWords(c) {
		t.Errorf("request: opens %v, near %v", r.opens(c), r.nearByWords(c))
	}
	if !g.opens(c) || !g.nearByWords(c) {
		t.Errorf("question about the past: opens %v, near %v", g.opens(c), g.nearByWords(c))
	}
	// Far in meaning, it stays out for both.
	c.Dense = 0.2
	if g.opens(c) || g.nearByWords(c) {
		t.Errorf("far memory, question about the past: opens %v, near %v", g.opens(c), g.nearByWords(c))
	}
}

// Through Recall: a memory that shares one of the prompt's rarer words and
// is fairly near it in meaning is injected when the prompt asks what
// happened, and not when the same words ask for new work.
func TestRecallAsksAboutThePast(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	q := randUnit(r, 384)
	mk, items := episodesNear(r, q)
	yoga := mk("tried aerial yoga at the studio downtown", 0.45)
	items = append(items, yoga)
	ask := askerOn(t, items, q)
	ids := episodeIDs
	res := ask("Which yoga routines did I do for my stiff back?")
	if !res.Past || !slices.Equal(ids(res), []string{yoga.ID}) {
		t.Errorf("question about the past: past %v, open %v, episodes %v", res.Past, res.Open, ids(res))
	}
	res = ask("Recommend yoga routines for a stiff back")
	if res.Past || len(res.Episodes) != 0 {
		t.Errorf("request: past %v, open %v, episodes %v", res.Past, res.Open, ids(res))
	}
}

// The prompt hook runs AsksAboutThePast and AsksForMany on every prompt: a
// question, and a prompt at MaxQueryBytes (a paste).
func BenchmarkAsksAboutThePast(b *testing.B) {
	for _, c := range []struct{ name, prompt string }{
		{"question", "What did we decide last week about the schema of the events table?"},
		{"paste", strings.Repeat("panic: runtime error: index out of range [3] with length 3 ", MaxQueryBytes/58)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				AsksAboutThePast(c.prompt)
				AsksForMany(c.prompt)
			}
		})
	}
}
