package extract

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/reading"
)

// TestWithoutRule: an extractor without one rule of the scan no longer
// reads what only that rule reads, and the original keeps it.
func TestWithoutRule(t *testing.T) {
	rules := Rules()
	i := slices.IndexFunc(rules, func(r string) bool { return strings.HasSuffix(r, ": never X") })
	if i < 0 || len(rules) != len(patternDefs) {
		t.Fatalf("rules %d (patterns %d); the \"never X\" rule at %d", len(rules), len(patternDefs), i)
	}
	in := Input{Project: "p", ProjectPath: "/p", Content: "User: never use testify",
		Blocks: []Block{{Role: "user", Kind: "text", Text: "never use testify"}}}
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
		{"fix the failing test. " + said, []string{"preference:table-driven:+G"}},
		{long, nil},
	} {
		d, err := NewLocal().Extract(context.Background(), Input{Project: "p", ProjectPath: "/p", Content: "User: " + c.text,
			Blocks: []Block{{Role: "user", Kind: "text", Text: c.text}}})
		if err != nil {
			t.Fatal(err)
		}
		// What the statement is about is the tagger's span: "table-driven"
		// or "table-driven test(s)"; the belief reads the user's clause.
		got := sigs(d.Signals)
		for i, g := range got {
			got[i] = strings.Replace(g, "table-driven test:", "table-driven:", 1)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Extract(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestRekind: a statement the rules read as one kind takes the model's
// kind and reading of what it is about when the model reads another kind
// with at least Model.Rekind of its statement probability, and keeps the
// rules' reading otherwise. The model here is trained on a few "we use X
// for Y" facts with their spans (Y the fact's name, X its value) and
// one-off requests.
func TestRekind(t *testing.T) {
	tools := []string{"optuna", "vitest", "prisma", "pnpm", "celery", "redis", "zod", "pytest"}
	jobs := []string{"tuning", "tests", "orm", "installs", "queues", "caching", "validation", "checks"}
	var ex []reading.Example
	var spans []reading.SpanExample
	for i, tool := range tools {
		for j, job := range jobs {
			if (i+j)%3 == 0 {
				continue // leaves "we use optuna for tuning" unseen
			}
			text := "we use " + tool + " for " + job
			ex = append(ex, reading.Example{Text: text, Kind: reading.Fact, Global: 0, Positive: 1},
				reading.Example{Text: "please run " + tool + " on the " + job + " now", Kind: reading.None, Global: -1, Positive: -1})
			ws := reading.Tokens(text)
			var in [len(reading.SpanExample{}.In)][]bool
			in[reading.SpanSubject], in[reading.SpanValue] = make([]bool, len(ws)), make([]bool, len(ws))
			in[reading.SpanValue][2], in[reading.SpanSubject][4] = true, true
			spans = append(spans, reading.SpanExample{Words: ws, Kind: reading.Fact, In: in})
		}
	}
	m := reading.Train("test", 0, ex, reading.Options{})
	reading.TrainSpans(m, spans, reading.Options{})
	m.Add, m.Drop, m.Scope = 2, 2, 1 // only the kind is read
	const said = "we use optuna for tuning"
	if rd := m.Read(said, nil); rd.Kind() != reading.Fact || rd.P[reading.Fact] < 0.8*rd.Statement() {
		t.Fatalf("the test model reads %q as %+v", said, rd)
	}
	in := Input{Project: "p", ProjectPath: "/p", Content: "User: " + said, Blocks: []Block{{Role: "user", Kind: "text", Text: said}}}
	for _, c := range []struct {
		rekind float64
		want   []string
	}{
		{2, []string{"preference:optuna>tuning:+"}},
		{0.8, []string{"fact:tuning>optuna:+"}},
	} {
		mc := *m
		mc.Rekind = c.rekind
		d, err := NewReading(&mc, nil).Extract(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got := sigs(d.Signals); !slices.Equal(got, c.want) {
			t.Errorf("rekind %v: signals %v, want %v", c.rekind, got, c.want)
		}
	}
}

// TestBareCorrectionRead: a sentence the rules read as a correction of
// nothing in particular ("actually …") is read by the model's correction
// taggers: what it installs and what it retires; one the model reads as
// nothing lasting stays the rules' bare correction.
func TestBareCorrectionRead(t *testing.T) {
	for _, tt := range []struct {
		text  string
		rules []string
		read  []string
	}{
		{"actually the bot runs on Railway now, not Heroku", []string{"correction::-"}, []string{"correction:railway:+", "switch:heroku:+"}},
		{"No, that's wrong.", []string{"correction::-"}, []string{"correction::-"}},
	} {
		for _, c := range []struct {
			x    *Local
			want []string
		}{{NewReading(nil, nil), tt.rules}, {NewLocal(), tt.read}} {
			d, err := c.x.Extract(context.Background(), userInput(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range d.Signals {
				got = append(got, sig(s))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%q: %v, want %v", tt.text, got, c.want)
			}
		}
	}
}
