package e2e

import (
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/store"
)

// TestCaptureProblems checks the checker: a sound set of captures passes,
// and each kind of mistake the end-to-end test exists to catch is caught.
// It needs no client.
func TestCaptureProblems(t *testing.T) {
	const project = "/w/proj"
	sessions := map[string]string{"sa": "A", "sb": "B"}
	reqs := []anthropicstub.Request{{
		System: "You are an agent working with the user.\nA rather long line of the system prompt, for testing.",
		Messages: []anthropicstub.Message{
			{Role: "user", Content: []anthropicstub.Block{
				{Type: "text", Text: "<system-reminder>\nContents of CLAUDE.md, a long enough reminder line\n</system-reminder>"},
				{Type: "text", Text: "Please save a greeting " + wordPromptA1},
			}},
			{Role: "system", Content: []anthropicstub.Block{{Type: "text", Text: "Injected context line that is long enough to check"}}},
		},
	}}
	good := func() []store.Capture {
		return []store.Capture{
			{ID: 1, SessionID: "sa", ProjectPath: project, ByteStart: 0, ByteEnd: 100, Content: "User: save " + wordPromptA1 +
				"\n\nAssistant used Bash: echo hello-from-bash | tr a-z A-Z — Write the greeting\n\nTool result (Bash): " + wordToolOut +
				"\n\nAssistant used Write: /w/proj/notes.txt\n\nAssistant: saved, " + wordReplyA1},
			{ID: 2, SessionID: "sa", ProjectPath: project, ByteStart: 100, ByteEnd: 150, Content: "User: where? " + wordPromptA2 + "\n\nAssistant: there " + wordReplyA2},
			{ID: 3, SessionID: "sb", ProjectPath: project, ByteStart: 0, ByteEnd: 80, Content: "User: q " + wordPromptB1 + "\n\nAssistant: a " + wordReplyB1},
		}
	}
	if p := captureProblems(good(), sessions, project, reqs); len(p) != 0 {
		t.Fatalf("sound captures reported: %q", p)
	}

	tests := []struct {
		name   string
		mutate func([]store.Capture) []store.Capture
		want   string
	}{
		{"reply captured twice", func(c []store.Capture) []store.Capture {
			return append(c, store.Capture{ID: 4, SessionID: "sa", ProjectPath: project, ByteStart: 150, ByteEnd: 160, Content: "Assistant: there " + wordReplyA2})
		}, wordReplyA2 + " occurs 2 times"},
		{"prompt missing", func(c []store.Capture) []store.Capture { return c[:2] }, wordPromptB1 + " occurs 0 times"},
		{"wrong session", func(c []store.Capture) []store.Capture { c[2].SessionID = "sa"; c[2].ByteStart = 150; return c },
			wordPromptB1 + " captured in session A"},
		{"overlapping ranges", func(c []store.Capture) []store.Capture { c[1].ByteStart = 90; return c }, "overlaps capture 1"},
		{"hook context", func(c []store.Capture) []store.Capture { c[0].Content += "\n" + markerOtherHook; return c }, markerOtherHook},
		{"session start", func(c []store.Capture) []store.Capture { c[0].Content += markerSessionStart; return c }, markerSessionStart},
		{"claude.md", func(c []store.Capture) []store.Capture { c[2].Content += markerClaudeMD; return c }, markerClaudeMD},
		{"system prompt phrase", func(c []store.Capture) []store.Capture { c[1].Content += "You are Claude Code"; return c }, "You are Claude Code"},
		{"system prompt line", func(c []store.Capture) []store.Capture {
			c[1].Content += "A rather long line of the system prompt, for testing."
			return c
		}, "line of the client's system prompt"},
		{"reminder line", func(c []store.Capture) []store.Capture {
			c[1].Content += "Contents of CLAUDE.md, a long enough reminder line"
			return c
		}, "line of the client's system prompt"},
		{"system message line", func(c []store.Capture) []store.Capture {
			c[1].Content += "Injected context line that is long enough to check"
			return c
		}, "line of the client's system prompt"},
		{"project path", func(c []store.Capture) []store.Capture { c[0].ProjectPath = "/w"; return c }, "ProjectPath"},
		{"unknown session", func(c []store.Capture) []store.Capture { c[2].SessionID = "sc"; return c }, "unknown session sc"},
		{"no tool use", func(c []store.Capture) []store.Capture {
			c[0].Content = "User: save " + wordPromptA1 + " " + wordToolOut + "\n\nAssistant: saved, " + wordReplyA1
			return c
		}, `"Write"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := captureProblems(tt.mutate(good()), sessions, project, reqs)
			if !strings.Contains(strings.Join(p, "\n"), tt.want) {
				t.Errorf("problems %q, want one mentioning %q", p, tt.want)
			}
		})
	}
}

func TestSanitizePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/home/u/my.proj_v2 x", "-home-u-my-proj-v2-x"},
		{"/tmp/TestX123/001/work/proj", "-tmp-TestX123-001-work-proj"},
	}
	for _, tt := range tests {
		if got := sanitizePath(tt.in); got != tt.want {
			t.Errorf("sanitizePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
