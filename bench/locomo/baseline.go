package main

import (
	"math"

	"github.com/engram-memory/engram/bench/internal/benchkit"
)

// The baseline the report compares engram with: plain BM25 (Porter
// stemmed, k1 = 1.2, b = 0.75) over the conversation's single turns, the
// question as the query, turns packed in rank order into a character
// budget (benchkit.Pack), evidence scored by the same content-word rule as
// engram's context (benchkit.RuleDoc).

// fixedBudgetTokens is the fixed budget the baseline is also given (the
// issue's 600 tokens per prompt).
const fixedBudgetTokens = 600

// bm25Ranking is one question's BM25 ranking of its conversation's turns.
type bm25Ranking struct {
	docs     []string // the conversation's turns as written
	order    []int    // indices into docs, best first
	evidence []string // the question's evidence turns' texts
}

// reached counts the evidence turns that reach the turns packed into
// budget characters.
func (r bm25Ranking) reached(budget int) int {
	if len(r.evidence) == 0 {
		return 0
	}
	set := benchkit.NewWordSet(benchkit.Pack(r.docs, r.order, budget))
	n := 0
	for _, e := range r.evidence {
		if set.Hit(e) {
			n++
		}
	}
	return n
}

// baseline fills the BM25 figures of s: at engram's mean injected size in
// the same rows (bytes, rounded), and at the fixed budget.
func (s *Stats) baseline() {
	s.BM25BudgetBytes = int(math.Round(s.InjectedBytes.Mean))
	var same, fixed int
	var sameQ, fixedQ float64
	for _, r := range s.rankings {
		n, f := r.reached(s.BM25BudgetBytes), r.reached(fixedBudgetTokens*4)
		same += n
		fixed += f
		if len(r.evidence) > 0 {
			sameQ += float64(n) / float64(len(r.evidence))
			fixedQ += float64(f) / float64(len(r.evidence))
		}
	}
	s.BM25Recall = share(same, s.EvidenceTurns)
	s.BM25Recall600 = share(fixed, s.EvidenceTurns)
	if len(s.rankings) > 0 {
		s.BM25QuestionRecall = sameQ / float64(len(s.rankings))
		s.BM25QuestionRecall600 = fixedQ / float64(len(s.rankings))
	}
}
