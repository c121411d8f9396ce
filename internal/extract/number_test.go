package extract

import "testing"

// TestThingOfNumber: a span that is only a number or version takes what
// it counts from the word after it, else the thing it numbers from the
// words before it; any other span stays.
func TestThingOfNumber(t *testing.T) {
	for _, c := range []struct{ text, span, want string }{
		{"we're on java 21 now", "21", "java 21"},
		{"we upgraded react to 19, so use the new use() hook", "19", "react 19"},
		{"correction: line length is 120 now", "120", "line length 120"},
		{"remix got merged into react router 7", "7", "react router 7"},
		{"bumped it to v2", "v2", "v2"}, // "it" names nothing
		{"21 is the one", "21", "21"},   // nothing before it
		{"we're on java 21 now", "java 21", "java 21"},
		{"use pnpm", "pnpm", "pnpm"},
		{"actually it's 4 spaces here, PSR-12.", "4", "4 spaces"},
		{"lines wrap at 100 chars now", "100", "100 chars"},
		{"actually 21 here", "21", "21"},
		{"the timeout is 30 these days", "30", "timeout 30"},
		{"DNS moved there from Route 53 last month", "53", "route 53"},
	} {
		if got := thingOfNumber(c.text, c.span); got != c.want {
			t.Errorf("thingOfNumber(%q, %q) = %q, want %q", c.text, c.span, got, c.want)
		}
	}
}

// TestStateNotName: a word of a fact's value that says a state is not a
// state when it is part of a name.
func TestStateNotName(t *testing.T) {
	for w, want := range map[string]bool{
		"failing": true, "broken": true, "fine": true,
		"srt-model-quantizing": false, "@pinia/testing": false, "pinia_testing": false, "kafka": false,
	} {
		if got := stateNotName(w); got != want {
			t.Errorf("stateNotName(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestNumberWithin: a correction's old side that is its new side's own
// version is no switch away; a name inside the new side may be.
func TestNumberWithin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"1.23", "go 1.23", true}, {"21", "java 21", true}, {"typeorm", "drizzle typeorm", false}, {"1.21", "go 1.23", false}, {"", "go", false}} {
		if got := numberWithin(c.a, c.b); got != c.want {
			t.Errorf("numberWithin(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
