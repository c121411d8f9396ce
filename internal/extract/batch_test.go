package extract_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/openaistub"
)

func record(n int, summary string) map[string]any {
	r := llmReply()
	r["exchange"] = n
	r["summary"] = summary
	return r
}

func TestExtractBatch(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	bad := record(4, "")
	srv.Enqueue(openaistub.JSON(map[string]any{"records": []any{
		record(3, "Third exchange summary."),
		record(1, "First exchange summary."),
		record(1, "A second record for exchange 1 is ignored."),
		bad,
	}}))
	x := llmExtractor(t, srv, 0).WithBatch(8)
	long := "user: I prefer tabs.\n" + strings.Repeat("assistant: lots of tool output here. ", 2000) + "\nEND-OF-EXCHANGE"
	ins := []extract.Input{llmInput(long), llmInput("user: second"), llmInput("user: third"), llmInput("user: fourth"), llmInput("  ")}
	ds, errs := x.ExtractBatch(context.Background(), ins)
	if srv.Count() != 1 {
		t.Fatalf("%d calls, want 1", srv.Count())
	}
	req := srv.ChatRequests()[0]
	if !strings.Contains(req.System(), "each of several exchanges") || !strings.Contains(req.System(), `{"records": [...]}`) {
		t.Errorf("batch system prompt:\n%s", req.System())
	}
	u := req.User()
	for _, want := range []string{"Exchange 1 (project engram):", "Exchange 4", "these 4 exchanges", "END-OF-EXCHANGE", "bytes omitted"} {
		if !strings.Contains(u, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(u, "Exchange 5") {
		t.Error("an empty capture was sent")
	}
	if len(u) > 4*extract.MaxLLMBatchItem+2000 {
		t.Errorf("prompt of %d bytes: items not cut to their useful part", len(u))
	}
	if errs[0] != nil || ds[0].Summary != "First exchange summary." || ds[0].Type != "decision" || !strings.Contains(ds[0].Context, "I prefer tabs") {
		t.Errorf("item 1: %+v %v", ds[0], errs[0])
	}
	if !errors.Is(errs[1], llm.ErrMalformed) || !strings.Contains(errs[1].Error(), "no record for exchange 2") {
		t.Errorf("item 2 err=%v, want a missing record", errs[1])
	}
	if errs[2] != nil || ds[2].Summary != "Third exchange summary." {
		t.Errorf("item 3: %+v %v", ds[2], errs[2])
	}
	if !errors.Is(errs[3], llm.ErrMalformed) {
		t.Errorf("item 4 err=%v, want an empty summary rejected", errs[3])
	}
	if errs[4] != nil || !ds[4].Skip {
		t.Errorf("item 5: %+v %v", ds[4], errs[4])
	}
}

func TestExtractBatchFailedCall(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	x := llmExtractor(t, srv, 1).WithBatch(4)
	srv.Enqueue(openaistub.Content("not json"))
	ds, errs := x.ExtractBatch(context.Background(), []extract.Input{llmInput("user: a"), llmInput("user: b")})
	for i := range ds {
		if !errors.Is(errs[i], llm.ErrMalformed) {
			t.Errorf("item %d err=%v, want ErrMalformed", i, errs[i])
		}
	}
	_, errs = x.ExtractBatch(context.Background(), []extract.Input{llmInput("user: c")})
	if !errors.Is(errs[0], llm.ErrBudget) {
		t.Errorf("err=%v, want ErrBudget", errs[0])
	}
}

// The batch schema lists every field of a record, as the single one does:
// a strict validator (the claude client's) refuses fields it does not list.
func TestBatchSchemaIsFlat(t *testing.T) {
	srv := openaistub.Start(t, openaistub.Options{})
	srv.Enqueue(openaistub.JSON(map[string]any{"records": []any{record(1, "x")}}))
	llmExtractor(t, srv, 0).WithBatch(2).ExtractBatch(context.Background(), []extract.Input{llmInput("user: a")})
	var sch struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(srv.ChatRequests()[0].ResponseFormat.Schema, &sch); err != nil {
		t.Fatal(err)
	}
	props := sch.Defs["llmBatchRecord"].Properties
	for _, f := range []string{"exchange", "skip", "summary", "type", "importance", "scope", "entities", "signals"} {
		if _, ok := props[f]; !ok {
			t.Errorf("record schema lacks %q: %v", f, props)
		}
	}
	if len(props) != 8 {
		t.Errorf("record schema properties %v", props)
	}
}
