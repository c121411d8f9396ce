package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
)

// TestHookProblems checks the checker of TestRecallWithRealClient against
// transcript lines as Claude Code 2.1.330 writes them. It needs no client.
func TestHookProblems(t *testing.T) {
	tests := []struct {
		name string
		line string
		bad  bool
	}{
		{"hook exits 1", `{"attachment":{"type":"hook_non_blocking_error","hookName":"UserPromptSubmit","hookEvent":"UserPromptSubmit",` +
			`"stderr":"Failed with non-blocking status code: boom","stdout":"","exitCode":1,"command":"/x/bad.sh","durationMs":117},"type":"attachment"}`, true},
		{"blocking hook", `{"attachment":{"type":"hook_blocking_error","hookEvent":"UserPromptSubmit"},"type":"attachment"}`, true},
		{"cancelled hook", `{"attachment":{"type":"hook_cancelled","hookEvent":"UserPromptSubmit"},"type":"attachment"}`, true},
		{"stop hook error", `{"type":"system","subtype":"stop_hook_summary","hookCount":1,"hookErrors":["exit 1"],"preventedContinuation":false,"hasOutput":false}`, true},
		{"stop hook stopped the turn", `{"type":"system","subtype":"stop_hook_summary","hookErrors":[],"preventedContinuation":true}`, true},
		{"hook context", `{"attachment":{"type":"hook_additional_context","content":["<engram-recall>\nx\n</engram-recall>"],"hookEvent":"UserPromptSubmit"},"type":"attachment"}`, false},
		{"clean stop summary", `{"type":"system","subtype":"stop_hook_summary","hookCount":1,"hookErrors":[],"preventedContinuation":false,"hasOutput":false,"level":"suggestion"}`, false},
		{"other attachment", `{"attachment":{"type":"date","date":"2026-11-22"},"type":"attachment"}`, false},
		{"conversation", `{"type":"user","message":{"role":"user","content":"hook_non_blocking_error is a word here"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l TranscriptLine
			if err := json.Unmarshal([]byte(tt.line), &l); err != nil {
				t.Fatal(err)
			}
			l.Raw = tt.line
			if got := len(hookProblems([]TranscriptLine{l})) > 0; got != tt.bad {
				t.Errorf("hookProblems reports a problem: %v, want %v", got, tt.bad)
			}
		})
	}
}

// TestRecallSpans checks that engram's context is found wherever the client
// puts it, and that checkNothingRecalled would notice it.
func TestRecallSpans(t *testing.T) {
	ctx := recallOpen + "\n" + recallHeader + " by engram.\n[Memory · just now · project proj] deploy " + factApp + "\n" + recallClose
	text := func(s string) []anthropicstub.Block { return []anthropicstub.Block{{Type: "text", Text: s}} }
	reqs := map[string]anthropicstub.Request{
		"system message": {Messages: []anthropicstub.Message{
			{Role: "user", Content: text("<system-reminder>\nCLAUDE.md\n</system-reminder>")},
			{Role: "system", Content: text(ctx)},
			{Role: "user", Content: text(promptRelated)},
		}},
		"system reminder": {Messages: []anthropicstub.Message{
			{Role: "user", Content: text("<system-reminder>\nUserPromptSubmit hook additional context: " + ctx + "\n</system-reminder>\n" + promptRelated)},
		}},
		"system prompt": {System: "You are an agent.\n" + ctx, Messages: []anthropicstub.Message{{Role: "user", Content: text(promptRelated)}}},
	}
	for name, r := range reqs {
		t.Run(name, func(t *testing.T) {
			spans := recallSpans(r)
			if len(spans) != 1 || spans[0].Text != ctx {
				t.Fatalf("recallSpans = %+v, want the one span %q", spans, ctx)
			}
			r.Body = mustJSON(t, r)
			if leaks := recallLeaks([]anthropicstub.Request{r}); len(leaks) == 0 {
				t.Errorf("recallLeaks found nothing")
			}
		})
	}
	clean := anthropicstub.Request{Messages: []anthropicstub.Message{{Role: "user", Content: text(promptUnrelated)}}}
	clean.Body = mustJSON(t, clean)
	if spans := recallSpans(clean); len(spans) != 0 {
		t.Errorf("recallSpans of a clean request = %+v", spans)
	}
	if leaks := recallLeaks([]anthropicstub.Request{clean}); len(leaks) != 0 {
		t.Errorf("recallLeaks of a clean request = %q", leaks)
	}
	// The fact alone, outside engram's frame, is a leak too.
	bare := anthropicstub.Request{Messages: []anthropicstub.Message{{Role: "user", Content: text("deploy " + factApp)}}}
	bare.Body = mustJSON(t, bare)
	if leaks := recallLeaks([]anthropicstub.Request{bare}); len(leaks) != 1 {
		t.Errorf("recallLeaks of a request holding the bare fact = %q, want one leak", leaks)
	}
	open := anthropicstub.Request{Messages: []anthropicstub.Message{{Role: "system", Content: text(recallOpen + "\ncut short")}}}
	if spans := recallSpans(open); len(spans) != 1 || !strings.Contains(spans[0].Where, "unterminated") {
		t.Errorf("recallSpans of an unterminated span = %+v", spans)
	}
}

// mustJSON stands in for the raw body of a decoded request.
func mustJSON(t *testing.T, r anthropicstub.Request) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"system": r.System, "messages": r.Messages})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
