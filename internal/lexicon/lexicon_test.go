package lexicon

import "testing"

func TestNotAThing(t *testing.T) {
	for subject, want := range map[string]string{
		// Junk the real sessions made beliefs of.
		"is":                  "only function words",
		"it":                  "only function words",
		"that one":            "a reference to an item of an answer",
		"#91":                 "a number alone",
		"2":                   "a number alone",
		"Option 2":            "a reference to an item of an answer",
		"the second approach": "a reference to an item of an answer",
		"exists":              "a bare verb",
		"fix anything":        "a bare verb",
		"":                    "no words",
		// Things a person prefers or avoids, or a fact is about.
		"pnpm":                        "",
		"emoji in commit messages":    "",
		"table-driven tests in Go":    "",
		"Postgres 16":                 "",
		"tabs over spaces":            "",
		"error messages in lowercase": "",
		"go test -race ./...":         "",
		"fly.io":                      "",
		"the first-party SDK":         "",
		"writing tests first":         "",
		"using mocks":                 "",
		"v2":                          "",
		"deploy target":               "",
		"tests":                       "",
		"build":                       "",
		"Go":                          "",
		"%b":                          "only function words",
		"%s full":                     "",
		"C":                           "",
		"go":                          "a bare verb",
	} {
		if got := NotAThing(subject); got != want {
			t.Errorf("NotAThing(%q) = %q, want %q", subject, got, want)
		}
	}
}

func TestInflect(t *testing.T) {
	for v, want := range map[string][3]string{
		"try": {"tries", "tried", "trying"}, "use": {"uses", "used", "using"},
		"fix": {"fixes", "fixed", "fixing"}, "add": {"adds", "added", "adding"}, "play": {"plays", "played", "playing"},
	} {
		got := inflect(v)
		if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("inflect(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestNoContent(t *testing.T) {
	for subject, want := range map[string]string{"go": "", "exists": "", "#91": "a number alone", "is": "only function words", "pnpm": ""} {
		if got := NoContent(subject); got != want {
			t.Errorf("NoContent(%q) = %q, want %q", subject, got, want)
		}
	}
}
