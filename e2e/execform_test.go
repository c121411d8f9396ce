package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecFormHooksWithRealClient checks that the pinned client takes
// engram's hooks in exec form ({"type": "command", "command": PROGRAM,
// "args": []}, run without a shell): the Stop hook captures the turn
// that states a fact, and in the next session the prompt hook's context
// reaches the model.
func TestExecFormHooksWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	model := &recallModel{}
	e := NewEnv(t, model.respond, Hooks{})
	e.ExecForm = true
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	}()
	settings, err := os.ReadFile(filepath.Join(e.ClaudeDir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(settings, &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{"UserPromptSubmit", "Stop"} {
		h := doc.Hooks[ev][0].Hooks[0]
		if args, ok := h["args"].([]any); !ok || len(args) != 0 || strings.ContainsAny(h["command"].(string), " \"'") {
			t.Fatalf("the %s hook is not in exec form: %v", ev, h)
		}
	}

	s1, _ := e.runSession(e.Project, promptFact)
	if !strings.Contains(s1.Result, replyFact) {
		t.Fatalf("session 1: client result %q, want %q", s1.Result, replyFact)
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if eps := readEpisodes(t, e); !hasEpisode(eps, factApp, e.Project) {
		t.Fatalf("the Stop hook in exec form captured nothing that became an episode holding %s:\n%s\ncaptures:\n%s",
			factApp, describeEpisodes(eps), describeCapturesOrErr(e))
	}

	_, reqs := e.runSession(e.Project, promptRelated)
	turn := promptRequest(reqs, promptRelated)
	if turn == nil {
		t.Fatalf("session 2: no request carries the prompt %q", promptRelated)
	}
	found := false
	for _, s := range recallSpans(*turn) {
		found = found || strings.Contains(s.Text, factApp)
	}
	if !found {
		t.Fatalf("session 2: the prompt hook in exec form injected nothing holding %s that reached the model\nprompt message:\n%s\n%s",
			factApp, turn.Prompt(), recallDiagnosis(e, bins, e.Project))
	}
}
