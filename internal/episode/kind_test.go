package episode

import (
	"strings"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	wed := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) // a Wednesday
	stated := []Signal{{Kind: SignalPreference, Subject: "bun", Polarity: 1, Stated: true}}
	for _, tt := range []struct {
		name, typ, text string
		sigs            []Signal
		kind            string
		speculative     bool
		due             string
	}{
		{"preference", TypePreference, "I prefer bun for scripts", stated, KindPreference, false, ""},
		{"hedged preference stated", TypePreference, "I think I prefer bun", stated, KindPreference, false, ""},
		{"correction", TypeCorrection, "no, that's wrong", nil, KindCorrection, false, ""},
		{"decision", TypeDecision, "we will go with Postgres", nil, KindDecision, false, ""},
		{"commitment with a day", TypeEvent, "I'll send the migration plan on Friday.", nil, KindCommitment, false, "2026-03-06"},
		{"commitment tomorrow", TypeEvent, "I will review the PR tomorrow", nil, KindCommitment, false, "2026-03-05"},
		{"commitment with a date", TypeFact, "I'll ship it by 2026-04-01", nil, KindCommitment, false, "2026-04-01"},
		{"commitment without a date", TypeEvent, "remind me to rotate the keys", nil, KindCommitment, false, ""},
		{"a question is no commitment", TypeQuestion, "will I need a migration?", nil, KindMoment, false, ""},
		{"relationship", TypeEvent, "Dana is my manager and signs off releases", nil, KindRelationship, false, ""},
		{"principle", TypeEvent, "As a rule, we never deploy on Fridays", nil, KindPrinciple, false, ""},
		{"entity", TypeFact, "Atlas is our billing service, written in Go", nil, KindEntity, false, ""},
		{"fact", TypeFact, "the staging database runs on port 5433", nil, KindFact, false, ""},
		{"skill", TypeProcedure, "how do I rebase onto main", nil, KindSkill, false, ""},
		{"moment", TypeEvent, "fix the flaky test", nil, KindMoment, false, ""},
		{"speculative", TypeEvent, "maybe the cache is what makes it slow", nil, KindMoment, true, ""},
		{"speculative fact", TypeFact, "I guess the API limit is 100 requests", nil, KindFact, true, ""},
		{"a hedged question is no guess", TypeEvent, "maybe we should add a cache?", nil, KindMoment, false, ""},
		{"a hedged long request is no guess", TypeEvent, "I think we need to " + strings.Repeat("refactor the parser and ", 15), nil, KindMoment, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kind, spec, due := Classify(tt.typ, tt.sigs, []string{tt.text}, wed, false)
			got := ""
			if !due.IsZero() {
				got = due.Format("2006-01-02")
			}
			if kind != tt.kind || spec != tt.speculative || got != tt.due {
				t.Fatalf("Classify(%q) = %s, speculative %v, due %q; want %s, %v, %q", tt.text, kind, spec, got, tt.kind, tt.speculative, tt.due)
			}
		})
	}
}

func TestToolWorkIsNoGuessNorPromise(t *testing.T) {
	if _, spec, _ := Classify(TypeEvent, nil, []string{"maybe the cache is slow"}, time.Now(), true); spec {
		t.Fatal("a hedged request that set off tool work is speculative")
	}
	if kind, _, _ := Classify(TypeEvent, nil, []string{"we'll need a migration for the new column"}, time.Now(), true); kind == KindCommitment {
		t.Fatal("a request that set off tool work is a commitment")
	}
	if kind, _, _ := Classify(TypeEvent, nil, []string{"will we need a migration on Friday?"}, time.Now(), false); kind == KindCommitment {
		t.Fatal("a question is a commitment")
	}
}

func TestDueDate(t *testing.T) {
	fri := time.Date(2026, 3, 6, 9, 0, 0, 0, time.UTC)
	for text, want := range map[string]string{
		"on Friday":       "2026-03-13", // said on a Friday: the next one
		"by monday":       "2026-03-09",
		"today":           "2026-03-06",
		"next week":       "2026-03-13",
		"end of the week": "2026-03-06",
		"by 2026-02-30":   "", // no such day
		"soon":            "",
	} {
		got := ""
		if d := DueDate(text, fri); !d.IsZero() {
			got = d.Format("2006-01-02")
			if d.Hour() != 23 {
				t.Errorf("DueDate(%q) = %v: want the end of the day", text, d)
			}
		}
		if got != want {
			t.Errorf("DueDate(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestKindOfTypeCoversEveryType(t *testing.T) {
	for _, typ := range []string{TypePreference, TypeDecision, TypeCorrection, TypeFact, TypeProcedure, TypeEvent, TypeQuestion} {
		if !ValidKind(KindOfType(typ)) {
			t.Errorf("type %s: kind %q", typ, KindOfType(typ))
		}
	}
}
