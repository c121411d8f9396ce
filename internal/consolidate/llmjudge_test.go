package consolidate

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/openaistub"
)

// model is a scripted stand-in: synthesis answers with statement (or the
// reply synth gives), classification by the negations in the episode.
type model struct {
	mu         sync.Mutex
	synth      func(*openaistub.Request) openaistub.Reply
	syntheses  []string
	classified []string
}

func (m *model) chat(r *openaistub.Request) openaistub.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case strings.Contains(r.System(), "generalized belief"):
		m.syntheses = append(m.syntheses, r.User())
		return m.synth(r)
	case strings.Contains(r.System(), "bears on an existing belief"):
		m.classified = append(m.classified, r.User())
		_, ep, _ := strings.Cut(r.User(), "<episode>")
		if strings.Contains(ep, "don't") || strings.Contains(ep, "stop") {
			return openaistub.JSON(map[string]string{"classification": "CONTRADICTS", "reasoning": "negated"})
		}
		return openaistub.JSON(map[string]string{"classification": "SUPPORTS", "reasoning": "same"})
	}
	return openaistub.Status(400, "unexpected prompt")
}

func tableTests(*openaistub.Request) openaistub.Reply {
	return openaistub.JSON(map[string]any{"skip": false, "statement": "User prefers table-driven tests in Go",
		"subject": "table-driven tests", "predicate": "prefers", "context": "go", "timeframe": "current"})
}

func llmJudge(t *testing.T, m *model) *LLM {
	srv := openaistub.Start(t, openaistub.Options{Chat: m.chat})
	c := llm.New(llm.Config{BaseURL: srv.BaseURL(), Model: "gpt-4.1-mini", MaxRetries: -1, Timeout: 5 * time.Second})
	return NewLLM(c, 5*time.Second)
}

func TestLLMJudgeFormsAndClassifies(t *testing.T) {
	f := newFixture(t)
	m := &model{synth: tableTests}
	j := llmJudge(t, m)
	withLLM := func(c *Consolidator) { c.Judge = j }
	// No signals at all: only the model can see the common belief.
	for i := range 3 {
		f.add(t0.Add(hours(i)), "Wrote table-driven tests in Go for the parser package")
	}
	st := f.run(t0.Add(hours(4)), withLLM)
	b := f.only(belief.StatusActive)
	if st.Created != 1 || b.Statement != "User prefers table-driven tests in Go" || b.Alpha != 4 || b.Subject != "table-driven tests" {
		t.Fatalf("formed: %+v %v", st, statements(f.beliefs("")))
	}
	if len(m.syntheses) != 1 || !strings.Contains(m.syntheses[0], "<episodes>") || !strings.Contains(m.syntheses[0], "parser package") {
		t.Fatalf("synthesis request: %q", m.syntheses)
	}
	// A negation about the same subject is classified by the model.
	f.add(t0.Add(hours(5)), "I don't want table-driven tests here", avoid("table-driven tests"))
	st = f.run(t0.Add(hours(6)), withLLM)
	got := f.only(belief.StatusActive)
	if got.Beta != 2 || st.Contradicted != 1 || st.Classified != 1 || len(m.classified) != 1 ||
		!strings.Contains(m.classified[0], "Belief: User prefers table-driven tests in Go") {
		t.Fatalf("classified: %+v %v %q", st, statements([]belief.Belief{got}), m.classified)
	}
}

func TestLLMJudgeNegationGuardOnReinforce(t *testing.T) {
	f := newFixture(t)
	m := &model{synth: tableTests}
	j := llmJudge(t, m)
	withLLM := func(c *Consolidator) { c.Judge = j }
	for i := range 3 {
		f.add(t0.Add(hours(i)), "Wrote table-driven tests in Go")
	}
	f.run(t0.Add(hours(4)), withLLM)
	// The next cluster synthesizes the same statement (cosine 1): the
	// reinforce path. One of its episodes says the opposite in its signals.
	f.add(t0.Add(hours(5)), "More table-driven tests in Go", pref("table-driven tests"))
	f.add(t0.Add(hours(5)), "More table-driven tests in Go again")
	f.add(t0.Add(hours(6)), "No more table-driven tests in Go", avoid("table-driven tests"))
	st := f.run(t0.Add(hours(7)), withLLM)
	got := f.only(belief.StatusActive)
	if got.Alpha != 6 || got.Beta != 2 || st.Supported != 2 || st.Contradicted != 1 {
		t.Fatalf("reinforce with a negation: %+v %v", st, statements([]belief.Belief{got}))
	}
}

func TestLLMJudgeMalformedFallsBackToLocal(t *testing.T) {
	f := newFixture(t)
	m := &model{synth: func(*openaistub.Request) openaistub.Reply {
		return openaistub.JSON(map[string]any{"skip": false, "statement": strings.Repeat("word ", 31), "subject": "x",
			"predicate": "is", "context": "general", "timeframe": "current"})
	}}
	j := llmJudge(t, m)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	st := f.run(t0.Add(hours(4)), func(c *Consolidator) { c.Judge = j })
	b := f.only(belief.StatusActive)
	if st.Fallbacks != 1 || b.Statement != "User prefers bun." {
		t.Fatalf("fallback: %+v %v", st, statements([]belief.Belief{b}))
	}
}

func TestLLMJudgeServerDownFallsBackToLocal(t *testing.T) {
	f := newFixture(t)
	m := &model{synth: func(*openaistub.Request) openaistub.Reply { return openaistub.ServerError() }}
	j := llmJudge(t, m)
	for i := range 3 {
		f.add(t0.Add(hours(i)), "I prefer bun", pref("bun"))
	}
	st := f.run(t0.Add(hours(4)), func(c *Consolidator) { c.Judge = j })
	if st.Created != 1 || st.Fallbacks != 1 {
		t.Fatalf("server error: %+v %v", st, statements(f.beliefs("")))
	}
}
