package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/llm"
)

// Bounds of the LLM extractor's input and of what it keeps from a reply.
const (
	// MaxLLMInput bounds the transcript text sent per capture: the head
	// and the tail are kept, the middle is cut.
	MaxLLMInput      = 12 << 10
	llmMaxSummary    = 500 // runes
	llmMaxEntities   = 20
	llmMaxEntity     = 120 // runes
	llmMaxSignals    = 12
	llmMaxSignalText = 300 // runes
	llmMaxSignalTerm = 120 // runes, subject and object
	llmSchemaName    = "episode_extraction"
	llmTranscriptTag = "transcript"
	llmOmittedMarker = "\n[… %d bytes omitted …]\n"
	llmHeadShare     = 2 // the head keeps 2/3 of the budget, the tail 1/3
)

// LLMSystemPrompt is the system prompt of the LLM extractor.
var LLMSystemPrompt = `You turn one exchange between a user and Claude Code (an AI coding assistant) into a record for a long-term memory. Future sessions will recall it, so be specific and faithful to what was said.

` + llm.DataRule(llmTranscriptTag) + `

Return one JSON object with these fields:
- skip: true when the exchange holds nothing worth remembering (greetings, thanks, "yes", "ok", an empty tool round-trip). When skip is true the other fields may be empty.
- summary: at most 2 sentences, specific: name the files, packages, commands, errors and decisions involved. Say what happened or was decided; no filler such as "the user asked". Never copy secrets.
- type: one of preference (how the user wants things done), decision (a choice was made), correction (the user corrected the assistant), fact (a durable fact about the project or environment), procedure (steps or commands that worked), event (something happened: a bug fixed, a feature built), question (a question left open).
- importance: 0 to 1. About 0.1 for routine work, 0.5 for useful context, 0.8 or more for a durable preference, decision or correction that should change future behaviour.
- scope: "global" only when the content is about the user in general — their preferences or habits across projects ("I always…", "in all my projects…"); otherwise "project".
- entities: up to 20 files, packages, commands, tools, URLs and other named things, spelled as in the exchange.
- signals: the explicit statements in the exchange, mostly the user's; [] when there are none. Each has:
  - kind: preference ("I prefer X", "always X", "we use X for Y"), avoid ("never X", "don't use X", "I don't like X"), switch ("switch from X to Y", "stop using X"), correction ("no, …", "that's wrong", "actually …"), decision ("let's go with X", "we decided to X") or fact ("our API runs on port 8080").
  - text: the sentence the statement was found in, briefly.
  - subject: what it is about, short and lower case ("table-driven tests", "testify", "bun").
  - object: for a switch, the thing switched to; for "X for Y", the purpose Y; otherwise "".
  - polarity: 1 for do, prefer or use; -1 for don't, avoid or stop. A negation changes the polarity, never the subject: "I don't like X" is kind avoid, subject "x", polarity -1 — never +1, and never a subject such as "not x". "Stop using X, use Y instead" is kind switch, subject "x", object "y", polarity -1.
  - global: true when the statement is about the user in general rather than this project.
Report only what the exchange states; do not invent preferences or decisions.`

// LLM is the extractor backed by an OpenAI-compatible model.
type LLM struct {
	c      llm.JSONer
	model  string
	stated bool
	batch  int // > 1: a Batcher of that many captures per call
}

// NewLLM returns an extractor that calls c; model names it ("llm:<model>").
func NewLLM(c llm.JSONer, model string) *LLM { return &LLM{c: c, model: model} }

// WithStated makes the extractor add to each draft the signals the user
// states in so many words, as the local scan finds them (Signal.Stated):
// explicit statements then become beliefs at once with a model too, and
// the model's own signals take the clustering path.
func (x *LLM) WithStated() *LLM { x.stated = true; return x }

// Name implements Extractor.
func (x *LLM) Name() string { return "llm:" + x.model }

// llmReply is the JSON the model returns.
type llmReply struct {
	Skip       bool        `json:"skip" description:"true when nothing is worth remembering"`
	Summary    string      `json:"summary" description:"at most 2 specific sentences"`
	Type       string      `json:"type" enum:"preference,decision,correction,fact,procedure,event,question"`
	Importance float64     `json:"importance" description:"0 to 1"`
	Scope      string      `json:"scope" enum:"project,global"`
	Entities   []string    `json:"entities"`
	Signals    []llmSignal `json:"signals"`
}

type llmSignal struct {
	Kind     string `json:"kind" enum:"preference,avoid,switch,correction,decision,fact"`
	Text     string `json:"text"`
	Subject  string `json:"subject" description:"lower case"`
	Object   string `json:"object" description:"empty when none"`
	Polarity int    `json:"polarity" description:"1 or -1"`
	Global   bool   `json:"global"`
}

// Extract implements Extractor. Errors (llm.ErrBudget, llm.ErrMalformed,
// an empty summary, network failures) leave the capture to the fallback
// extractor.
func (x *LLM) Extract(ctx context.Context, in Input) (Draft, error) {
	if strings.TrimSpace(in.Content) == "" {
		return Draft{Skip: true}, nil
	}
	var user strings.Builder
	if p := llmOneLine(in.Project); p != "" {
		fmt.Fprintf(&user, "Project: %s\n\n", llmClipRunes(p, 100))
	}
	user.WriteString(llm.DataBlock(llmTranscriptTag, llmHeadTail(in.Content, MaxLLMInput)))
	user.WriteString("\n\nReturn the JSON record of this exchange.")

	var r llmReply
	if err := x.c.JSON(ctx, LLMSystemPrompt, user.String(), llmSchemaName, &r); err != nil {
		return Draft{}, fmt.Errorf("extract %s: %w", x.Name(), err)
	}
	d, err := llmDraftOf(r)
	if err != nil {
		return Draft{}, fmt.Errorf("extract %s: %w", x.Name(), err)
	}
	if !d.Skip {
		d.Context = llmHeadTail(in.Content, MaxContext)
		if x.stated {
			d.Signals = mergeStated(d.Signals, StatedSignals(in))
		}
	}
	return d, nil
}

// mergeStated appends the stated signals the model's do not already hold
// (same kind, subject and polarity), within maxSignals.
func mergeStated(sigs, stated []episode.Signal) []episode.Signal {
	for _, s := range stated {
		found := false
		for i := range sigs {
			if sigs[i].Kind == s.Kind && sigs[i].Subject == s.Subject && sigs[i].Polarity == s.Polarity {
				sigs[i].Stated, sigs[i].Global = true, s.Global
				found = true
				break
			}
		}
		if !found && len(sigs) < maxSignals {
			sigs = append(sigs, s)
		}
	}
	return sigs
}

// llmDraftOf validates and normalises a reply.
func llmDraftOf(r llmReply) (Draft, error) {
	if r.Skip {
		return Draft{Skip: true}, nil
	}
	d := Draft{
		Summary:    llmClipRunes(llmOneLine(r.Summary), llmMaxSummary),
		Type:       llmEpisodeType(r.Type),
		Importance: min(max(r.Importance, 0), 1),
		Scope:      episode.ScopeProject,
		Entities:   llmEntitiesOf(r.Entities),
		Signals:    llmSignalsOf(r.Signals),
	}
	if d.Summary == "" {
		return Draft{}, fmt.Errorf("%w: empty summary", llm.ErrMalformed)
	}
	if strings.EqualFold(strings.TrimSpace(r.Scope), episode.ScopeGlobal) {
		d.Scope = episode.ScopeGlobal
	}
	return d, nil
}

func llmEpisodeType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	switch t {
	case episode.TypePreference, episode.TypeDecision, episode.TypeCorrection, episode.TypeFact,
		episode.TypeProcedure, episode.TypeEvent, episode.TypeQuestion:
		return t
	}
	return episode.TypeEvent
}

func llmEntitiesOf(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range in {
		e = llmClipRunes(strings.Trim(llmOneLine(e), "`'\"“”‘’"), llmMaxEntity)
		key := strings.ToLower(e)
		if e == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, e)
		if len(out) == llmMaxEntities {
			break
		}
	}
	return out
}

func llmSignalsOf(in []llmSignal) []episode.Signal {
	var out []episode.Signal
	for _, s := range in {
		kind := strings.ToLower(strings.TrimSpace(s.Kind))
		switch kind {
		case episode.SignalPreference, episode.SignalAvoid, episode.SignalSwitch,
			episode.SignalCorrection, episode.SignalDecision, episode.SignalFact:
		default:
			continue
		}
		sig := episode.Signal{
			Kind:     kind,
			Text:     llmClipRunes(llmOneLine(s.Text), llmMaxSignalText),
			Subject:  llmClipRunes(strings.ToLower(llmOneLine(s.Subject)), llmMaxSignalTerm),
			Object:   llmClipRunes(strings.ToLower(llmOneLine(s.Object)), llmMaxSignalTerm),
			Polarity: 1,
			Global:   s.Global,
		}
		// "never X" and "stop using X" are against their subject whatever
		// the model wrote.
		if s.Polarity < 0 || kind == episode.SignalAvoid || kind == episode.SignalSwitch {
			sig.Polarity = -1
		}
		// A negative preference is an avoidance, as the local extractor
		// records "I don't like X".
		if kind == episode.SignalPreference && sig.Polarity < 0 {
			sig.Kind = episode.SignalAvoid
		}
		if sig.Text == "" && sig.Subject == "" {
			continue
		}
		out = append(out, sig)
	}
	// A switch X→Y is also a preference for Y, as the local extractor
	// records it, so that consolidation sees both sides.
	for _, sig := range out {
		if sig.Kind != episode.SignalSwitch || sig.Object == "" || sig.Object == sig.Subject {
			continue
		}
		if !slices.ContainsFunc(out, func(o episode.Signal) bool {
			return o.Kind == episode.SignalPreference && o.Subject == sig.Object && o.Polarity > 0
		}) {
			out = append(out, episode.Signal{Kind: episode.SignalPreference, Text: sig.Text, Subject: sig.Object, Polarity: 1, Global: sig.Global})
		}
	}
	if len(out) > llmMaxSignals {
		out = out[:llmMaxSignals]
	}
	return out
}

// llmHeadTail bounds s to n bytes by keeping its head and its tail, with a
// marker saying how much was cut, never splitting a UTF-8 sequence.
func llmHeadTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	marker := fmt.Sprintf(llmOmittedMarker, len(s)) // an upper bound of its final length
	room := n - len(marker)
	if room <= 0 {
		return llmClipBytes(s, n)
	}
	headN := room * llmHeadShare / 3
	head := llmClipBytes(s, headN)
	tailStart := len(s) - (room - len(head))
	for tailStart < len(s) && !utf8.RuneStart(s[tailStart]) {
		tailStart++
	}
	return head + fmt.Sprintf(llmOmittedMarker, tailStart-len(head)) + s[tailStart:]
}

// llmClipBytes returns the longest prefix of s of at most n bytes that ends on
// a rune boundary.
func llmClipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// llmClipRunes bounds s to n runes, marking a cut with "…".
func llmClipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func llmOneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
