package extract

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestWithoutRule: an extractor without one rule of the scan no longer
// reads what only that rule reads, and the original keeps it.
func TestWithoutRule(t *testing.T) {
	rules := Rules()
	i := slices.IndexFunc(rules, func(r string) bool { return strings.HasSuffix(r, ": don't|dont|do_not X") })
	if i < 0 || len(rules) != len(patternDefs) {
		t.Fatalf("rules %d (patterns %d); the \"don't X\" rule at %d", len(rules), len(patternDefs), i)
	}
	in := Input{Project: "p", ProjectPath: "/p", Content: "User: don't use testify",
		Blocks: []Block{{Role: "user", Kind: "text", Text: "don't use testify"}}}
	rulesOnly := NewReading(nil, nil)
	for _, c := range []struct {
		x    *Local
		want []string
	}{
		{rulesOnly, []string{"avoid:testify:-G"}},
		{rulesOnly.WithoutRule(i), nil},
		{rulesOnly.WithoutRule(i).WithoutRule(-1), nil},
		{rulesOnly, []string{"avoid:testify:-G"}}, // the copy left it alone
	} {
		d, err := c.x.Extract(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := sigs(d.Signals); !slices.Equal(got, c.want) {
			t.Errorf("signals %v, want %v", got, c.want)
		}
	}
}

// TestNoReadStatementInLongText: a sentence the reading alone takes for a
// statement is one in a short message, and not among the many sentences
// of a long one (pasted material, a prompt for another model).
func TestNoReadStatementInLongText(t *testing.T) {
	said := "I like table-driven tests in Go, please write them that way."
	long := strings.Repeat("The parser reads the header first. ", 4) + said + " " + strings.Repeat("Then it reads the body. ", 3)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"fix the failing test. " + said, []string{"preference:table-driven test:+G"}},
		{long, nil},
	} {
		d, err := NewLocal().Extract(context.Background(), Input{Project: "p", ProjectPath: "/p", Content: "User: " + c.text,
			Blocks: []Block{{Role: "user", Kind: "text", Text: c.text}}})
		if err != nil {
			t.Fatal(err)
		}
		if got := sigs(d.Signals); !slices.Equal(got, c.want) {
			t.Errorf("Extract(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
