package consolidate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/redact"
)

// Bounds of what the LLM judge sends.
const (
	llmMaxEpisodes = 12
	llmMaxEpisode  = 600 // runes of one episode's text
	llmEpisodesTag = "episodes"
	llmEpisodeTag  = "episode"
)

// ErrNoCandidate means the model found nothing that all episodes support.
var ErrNoCandidate = errors.New("no belief supported by every episode")

// SynthesisPrompt is the system prompt of belief synthesis.
var SynthesisPrompt = `You extract one generalized belief from a cluster of memory episodes of a user working with Claude Code (an AI coding assistant).

` + llm.DataRule(llmEpisodesTag) + `

Return one JSON object:
- skip: true when the episodes share no durable belief (then the other fields may be empty).
- statement: one concise, falsifiable sentence of at most 30 words, e.g. "User prefers table-driven tests in Go" or "Project billing deploys with Fly.io".
- subject: the entity the belief is about, short and lower case (e.g. "table-driven tests", "fly.io").
- predicate: the property or preference, e.g. "prefers", "avoids", "deploys with", "is".
- context: when or where it applies, or "general".
- timeframe: "current", "past" or "always".
Rules: generalize only what ALL episodes support; do not infer beyond the evidence. If the episodes conflict, state the majority view and name the context. A negation is never support: "I don't like X" supports "avoids X", never "likes X". Never copy secrets.`

// ClassifyPrompt is the system prompt of the four-way classification.
var ClassifyPrompt = `You decide how one new memory episode bears on an existing belief about a user working with Claude Code (an AI coding assistant).

` + llm.DataRule(llmEpisodeTag) + `

Classify as exactly one of:
- SUPPORTS: the episode is evidence for the belief.
- CONTRADICTS: the episode is evidence against the belief.
- PARTIAL: the episode supports the belief in some contexts but not in others.
- IRRELEVANT: the episode has no bearing on the belief.
Negations matter: for the belief "User likes X", "I don't like X" CONTRADICTS and "stop using X, use Y" CONTRADICTS; "use X, but not for production" is PARTIAL. An episode that only quotes the belief back is IRRELEVANT.
Return JSON: {"classification": "SUPPORTS|CONTRADICTS|PARTIAL|IRRELEVANT", "reasoning": "brief"}.`

// LLM is the judge backed by an OpenAI-compatible model. Each call gets its
// own timeout; a reply that fails validation is an error, and the pipeline
// falls back to the local judge for that step.
type LLM struct {
	c       llm.JSONer
	timeout time.Duration
}

// NewLLM returns a judge calling c, each call bounded by timeout (10s when
// zero).
func NewLLM(c llm.JSONer, timeout time.Duration) *LLM {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return &LLM{c: c, timeout: timeout}
}

// Name implements Judge.
func (j *LLM) Name() string { return "llm:" + j.c.Model() }

type synthesisReply struct {
	Skip      bool   `json:"skip"`
	Statement string `json:"statement" description:"at most 30 words"`
	Subject   string `json:"subject" description:"lower case"`
	Predicate string `json:"predicate"`
	Context   string `json:"context" description:"or general"`
	Timeframe string `json:"timeframe" enum:"current,past,always"`
}

type classifyReply struct {
	Classification string `json:"classification" enum:"SUPPORTS,CONTRADICTS,PARTIAL,IRRELEVANT"`
	Reasoning      string `json:"reasoning"`
}

// Synthesize implements Judge.
func (j *LLM) Synthesize(ctx context.Context, g Group) ([]Candidate, error) {
	var b strings.Builder
	if g.Scope == episode.ScopeProject && g.Project != "" {
		fmt.Fprintf(&b, "Project: %s\n\n", clipRunes(oneLine(g.Project), 100))
	}
	var list strings.Builder
	eps := g.Episodes
	if len(eps) > llmMaxEpisodes {
		eps = eps[len(eps)-llmMaxEpisodes:]
	}
	for i, e := range eps {
		fmt.Fprintf(&list, "%d. %s\n", i+1, clipRunes(oneLine(episodeText(&e)), llmMaxEpisode))
	}
	b.WriteString(llm.DataBlock(llmEpisodesTag, list.String()))
	b.WriteString("\n\nReturn the JSON belief these episodes support.")
	var r synthesisReply
	cctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if err := j.c.JSON(cctx, SynthesisPrompt, b.String(), "belief_synthesis", &r); err != nil {
		return nil, fmt.Errorf("synthesize with %s: %w", j.Name(), err)
	}
	if r.Skip {
		return nil, nil
	}
	c := Candidate{
		Statement: scrub(oneLine(r.Statement)),
		Subject:   scrub(clipRunes(normTerm(r.Subject), 120)),
		Predicate: scrub(clipRunes(normTerm(r.Predicate), 80)),
		Context:   scrub(clipRunes(oneLine(r.Context), 200)),
		Timeframe: r.Timeframe,
		Episodes:  g.Episodes,
	}
	if c.Statement == "" {
		return nil, fmt.Errorf("synthesize with %s: %w: empty statement", j.Name(), llm.ErrMalformed)
	}
	if n := len(strings.Fields(c.Statement)); n > MaxStatementWords {
		return nil, fmt.Errorf("synthesize with %s: %w: statement of %d words", j.Name(), llm.ErrMalformed, n)
	}
	switch c.Timeframe {
	case belief.TimeCurrent, belief.TimePast, belief.TimeAlways:
	default:
		c.Timeframe = belief.TimeCurrent
	}
	return []Candidate{c}, nil
}

// Classify implements Judge.
func (j *LLM) Classify(ctx context.Context, b *belief.Belief, e *episode.Episode) (Relation, error) {
	if selfReference(b, e) {
		return Irrelevant, nil
	}
	user := "Belief: " + clipRunes(oneLine(b.Statement), 400) + "\n\n" +
		llm.DataBlock(llmEpisodeTag, clipRunes(oneLine(episodeText(e)), llmMaxEpisode)) +
		"\n\nReturn the JSON classification."
	var r classifyReply
	cctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if err := j.c.JSON(cctx, ClassifyPrompt, user, "belief_classification", &r); err != nil {
		return "", fmt.Errorf("classify with %s: %w", j.Name(), err)
	}
	switch rel := Relation(strings.ToUpper(strings.TrimSpace(r.Classification))); rel {
	case Supports, Contradicts, Partial, Irrelevant:
		return rel, nil
	}
	return "", fmt.Errorf("classify with %s: %w: classification %q", j.Name(), llm.ErrMalformed, r.Classification)
}

// episodeText is what a judge reads of an episode: its summary, and the
// user's stated signals, which carry negations a summary may blur.
func episodeText(e *episode.Episode) string {
	s := e.Summary
	for _, sg := range e.Signals {
		if sg.Text != "" && !strings.Contains(s, sg.Text) {
			s += " | " + sg.Text
		}
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// scrub redacts secrets from what a model wrote before it is stored.
func scrub(s string) string {
	r, _ := redact.String(s)
	return r
}

// PrinciplePrompt is the system prompt of a meta-belief: the principle a
// group of related beliefs share.
var PrinciplePrompt = `You state the one general principle that a group of related beliefs about a user working with Claude Code (an AI coding assistant) share.

` + llm.DataRule(llmBeliefsTag) + `

Return one JSON object:
- skip: true when the beliefs share no principle that each of them is an instance of (then the other fields may be empty).
- statement: the principle, one sentence of at most 20 words, e.g. "User prefers minimal dependencies" for "User prefers the standard library testing package", "User avoids testify" and "User avoids lodash".
- subject: what the principle is about, short and lower case (e.g. "minimal dependencies").
- predicate: e.g. "prefers", "avoids", "values".
- context: when or where it applies, or "general".
Rules: every belief must be an instance of the principle; do not generalize beyond what they share; never copy secrets.`

const llmBeliefsTag = "beliefs"

type principleReply struct {
	Skip      bool   `json:"skip"`
	Statement string `json:"statement" description:"at most 20 words"`
	Subject   string `json:"subject" description:"lower case"`
	Predicate string `json:"predicate"`
	Context   string `json:"context" description:"or general"`
}

// Generalize states the principle the beliefs share; ok is false when the
// model finds none.
func (j *LLM) Generalize(ctx context.Context, bs []*belief.Belief) (c Candidate, ok bool, err error) {
	var list strings.Builder
	for i, b := range bs {
		fmt.Fprintf(&list, "%d. %s\n", i+1, clipRunes(oneLine(b.Statement), 400))
	}
	user := llm.DataBlock(llmBeliefsTag, list.String()) + "\n\nReturn the JSON principle these beliefs share."
	var r principleReply
	cctx, cancel := context.WithTimeout(ctx, j.timeout)
	defer cancel()
	if err := j.c.JSON(cctx, PrinciplePrompt, user, "belief_principle", &r); err != nil {
		return c, false, fmt.Errorf("generalize with %s: %w", j.Name(), err)
	}
	if r.Skip {
		return c, false, nil
	}
	c = Candidate{Statement: scrub(oneLine(r.Statement)), Subject: scrub(clipRunes(normTerm(r.Subject), 120)),
		Predicate: scrub(clipRunes(normTerm(r.Predicate), 80)), Context: scrub(clipRunes(oneLine(r.Context), 200)),
		Timeframe: belief.TimeCurrent}
	if c.Statement == "" || len(strings.Fields(c.Statement)) > MaxStatementWords {
		return Candidate{}, false, fmt.Errorf("generalize with %s: %w: statement %q", j.Name(), llm.ErrMalformed, c.Statement)
	}
	return c, true, nil
}
