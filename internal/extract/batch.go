package extract

import (
	"context"
	"fmt"
	"strings"

	"github.com/engram-memory/engram/internal/llm"
)

// Batcher is an extractor that handles several captures in one model call.
// The ingest pipeline gives it up to BatchSize captures at a time; an item
// whose error is not nil goes to the fallback extractor.
type Batcher interface {
	Extractor
	BatchSize() int
	ExtractBatch(ctx context.Context, ins []Input) ([]Draft, []error)
}

// MaxLLMBatchItem bounds the transcript text of one capture in a batched
// call: its useful part (the head and the tail) rather than all of it.
const MaxLLMBatchItem = 4 << 10

const llmBatchSchemaName = "episode_extractions"

// LLMBatchSystemPrompt is the system prompt of a batched extraction.
var LLMBatchSystemPrompt = strings.Replace(strings.Replace(LLMSystemPrompt,
	"You turn one exchange between a user and Claude Code (an AI coding assistant) into a record",
	"You turn each of several exchanges between a user and Claude Code (an AI coding assistant) into a record", 1),
	"Return one JSON object with these fields:",
	"Each exchange is numbered. Return one JSON object {\"records\": [...]} with one record per exchange, in order; each record has the exchange's number and these fields:", 1)

// llmBatchRecord is llmReply with the exchange's number. The fields are
// spelled out: the schema generator would make an embedded struct a
// property of its own.
type llmBatchRecord struct {
	Exchange   int         `json:"exchange" description:"the exchange's number"`
	Skip       bool        `json:"skip" description:"true when nothing is worth remembering"`
	Summary    string      `json:"summary" description:"at most 2 specific sentences"`
	Type       string      `json:"type" enum:"preference,decision,correction,fact,procedure,event,question"`
	Importance float64     `json:"importance" description:"0 to 1"`
	Scope      string      `json:"scope" enum:"project,global"`
	Entities   []string    `json:"entities"`
	Signals    []llmSignal `json:"signals"`
}

func (r llmBatchRecord) reply() llmReply {
	return llmReply{Skip: r.Skip, Summary: r.Summary, Type: r.Type, Importance: r.Importance, Scope: r.Scope,
		Entities: r.Entities, Signals: r.Signals}
}

type llmBatchReply struct {
	Records []llmBatchRecord `json:"records"`
}

// WithBatch makes the extractor a Batcher of up to n captures per call (n
// > 1), each cut to MaxLLMBatchItem bytes.
func (x *LLM) WithBatch(n int) *LLM { x.batch = n; return x }

// BatchSize implements Batcher.
func (x *LLM) BatchSize() int { return x.batch }

// ExtractBatch implements Batcher: one call for all of ins. A failed call
// fails every item; a record missing from the reply, or one that does not
// validate, fails its item only.
func (x *LLM) ExtractBatch(ctx context.Context, ins []Input) ([]Draft, []error) {
	drafts := make([]Draft, len(ins))
	errs := make([]error, len(ins))
	var user strings.Builder
	asked := 0
	for i, in := range ins {
		if strings.TrimSpace(in.Content) == "" {
			drafts[i] = Draft{Skip: true}
			continue
		}
		asked++
		fmt.Fprintf(&user, "Exchange %d", i+1)
		if p := llmOneLine(in.Project); p != "" {
			fmt.Fprintf(&user, " (project %s)", llmClipRunes(p, 100))
		}
		user.WriteString(":\n")
		user.WriteString(llm.DataBlock(llmTranscriptTag, llmHeadTail(in.Content, MaxLLMBatchItem)))
		user.WriteString("\n\n")
	}
	if asked == 0 {
		return drafts, errs
	}
	fmt.Fprintf(&user, "Return the JSON records of these %d exchanges.", asked)
	var r llmBatchReply
	if err := x.c.JSON(ctx, LLMBatchSystemPrompt, user.String(), llmBatchSchemaName, &r); err != nil {
		err = fmt.Errorf("extract %s: %w", x.Name(), err)
		for i, in := range ins {
			if strings.TrimSpace(in.Content) != "" {
				errs[i] = err
			}
		}
		return drafts, errs
	}
	got := make(map[int]llmReply, len(r.Records))
	for _, rec := range r.Records {
		if _, dup := got[rec.Exchange]; !dup {
			got[rec.Exchange] = rec.reply()
		}
	}
	for i, in := range ins {
		if strings.TrimSpace(in.Content) == "" {
			continue
		}
		rep, ok := got[i+1]
		if !ok {
			errs[i] = fmt.Errorf("extract %s: %w: no record for exchange %d", x.Name(), llm.ErrMalformed, i+1)
			continue
		}
		d, err := llmDraftOf(rep)
		if err != nil {
			errs[i] = fmt.Errorf("extract %s: exchange %d: %w", x.Name(), i+1, err)
			continue
		}
		if !d.Skip {
			d.Context = llmHeadTail(in.Content, MaxContext)
			if x.stated {
				d.Signals = mergeStated(d.Signals, StatedSignals(in))
			}
		}
		drafts[i] = d
	}
	return drafts, errs
}
