package consolidate

import (
	"strings"
	"testing"
)

func TestPhrase(t *testing.T) {
	for _, c := range []struct{ sentence, anchor, want string }{
		// The statements of the walkthrough, with their qualifiers.
		{"and please never put emoji in commit messages.", "emoji", "Never put emoji in commit messages."},
		{"I like table-driven tests in Go, please write them that way.", "table-driven tests", "I like table-driven tests in Go."},
		{"I always want error messages in lowercase.", "error messages in lowercase", "I always want error messages in lowercase."},
		{"I prefer tabs over spaces in Makefiles", "spaces in Makefiles", "I prefer tabs over spaces in Makefiles."},
		{"add a lint target to the Makefile, in this repo we run golangci-lint before every commit", "golangci-lint",
			"In this repo we run golangci-lint before every commit."},
		{"our tests use Jest; run them with pnpm test", "Jest", "Our tests use Jest."},
		{"hey, quick context before we start: we're on Postgres 16", "Postgres 16", "We're on Postgres 16."},
		{"We're on Postgres 16, so feel free to use MERGE", "Postgres 16", "We're on Postgres 16."},
		// Requests and reminders lose their frame, keep their content.
		{"can you always run gofmt before committing, thanks", "gofmt", "Always run gofmt before committing."},
		{"no longer terraform btw", "terraform", "No longer terraform."},
		{"remember that the staging box is staging.internal!", "staging.internal", "The staging box is staging.internal!"},
		{"Stdlib net/http only; no gorilla or chi", "gorilla", "No gorilla or chi."},
		{"in Go projects I prefer table-driven tests and I never use testify", "testify", "I never use testify."},
		// Nothing to phrase: the anchor is not in the sentence, or the
		// clause is one word or longer than a statement.
		{"I prefer bun", "pnpm", ""},
		{"bun!", "bun", ""},
		{"", "bun", ""},
		{"I prefer bun", "", ""},
		{"I like it when " + strings.Repeat("the build and the deploy ", 6) + "use bun", "bun", ""},
		// A word, not a part of one: "go" is not in "golang".
		{"we use golang for the cli", "go", ""},
	} {
		if got := Phrase(c.sentence, c.anchor); got != c.want {
			t.Errorf("Phrase(%q, %q) = %q, want %q", c.sentence, c.anchor, got, c.want)
		}
	}
}
