package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/store"
)

// Unique words of the conversation: each must end up in the captures
// exactly once.
const (
	wordPromptA1 = "PROMPTA1-kestrel"
	wordReplyA1  = "REPLYA1-osprey"
	wordPromptA2 = "PROMPTA2-heron"
	wordReplyA2  = "REPLYA2-plover"
	wordPromptB1 = "PROMPTB1-falcon"
	wordReplyB1  = "REPLYB1-merlin"
	// wordToolOut is printed by the Bash call (the command itself holds it
	// in lower case only), so it shows that the tool result was captured.
	wordToolOut = "HELLO-FROM-BASH"
)

// systemPromptPhrases are pieces of Claude Code's own prompt (2.1.330 and
// earlier versions) that must never be captured.
var systemPromptPhrases = []string{
	"You are an agent", "You are Claude Code", "Claude Agent SDK", "<system-reminder>",
	"x-anthropic-billing-header", "hook additional context", "hook success",
}

func TestCaptureWithRealClient(t *testing.T) {
	claudeBin(t) // skip before building anything when the client is absent
	bins := buildBinaries(t)

	tests := []struct {
		name string
		// initStore runs the worker once before the first session, as an
		// installed timer would have: the Stop hook then writes to the
		// store. Without it the database does not exist yet, the hook
		// spools, and the sweep's cycle drains the spool.
		initStore bool
	}{
		{name: "store_ready", initStore: true},
		{name: "before_first_worker_run", initStore: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testCapture(t, bins, tt.initStore)
		})
	}
}

func testCapture(t *testing.T, bins Binaries, initStore bool) {
	sc := anthropicstub.NewScript()
	e := NewEnv(t, sc.Respond, Hooks{})
	otherSessionStart := e.WriteScript("other-sessionstart.sh", "cat >/dev/null\necho "+markerSessionStart+"\n")
	otherPrompt := e.WriteScript("other-userprompt.sh", "cat >/dev/null\n"+
		`echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"`+markerOtherHook+`"}}'`+"\n")
	e.SetHooks(Hooks{
		SessionStart:     []string{otherSessionStart},
		UserPromptSubmit: []string{bins.HookUserPrompt, otherPrompt},
		Stop:             []string{bins.HookStop},
	})

	notes := filepath.Join(e.Project, "notes.txt")
	sc.On(wordPromptA1).
		Bash("echo hello-from-bash | tr a-z A-Z | tee out.txt", "Write the greeting to out.txt").
		Write(notes, "Notes written by the stub model.\n").
		Reply("I saved the greeting and the notes, " + wordReplyA1 + ".")
	sc.On(wordPromptA2).Reply("The notes are in notes.txt, " + wordReplyA2 + ".")
	sc.On(wordPromptB1).Reply("Nothing to do here, " + wordReplyB1 + ".")

	if initStore {
		t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	}

	a1 := e.Prompt("", "Please save a greeting to out.txt and write notes, "+wordPromptA1)
	a2 := e.Prompt(a1.SessionID, "Where are the notes? "+wordPromptA2)
	b1 := e.Prompt("", "Unrelated question, "+wordPromptB1)
	if a2.SessionID != a1.SessionID {
		t.Fatalf("--resume %s continued as session %s", a1.SessionID, a2.SessionID)
	}
	if b1.SessionID == a1.SessionID {
		t.Fatalf("session B reused session A's id %s", a1.SessionID)
	}
	sessions := map[string]string{a1.SessionID: "A", b1.SessionID: "B"}

	// The client really ran the scripted conversation.
	if p := sc.Problems(); len(p) > 0 {
		t.Fatalf("stub script problems: %q\nrequests:\n%s", p, e.Stub.Summary())
	}
	for res, want := range map[*RunResult]string{&a1: wordReplyA1, &a2: wordReplyA2, &b1: wordReplyB1} {
		if !strings.Contains(res.Result, want) {
			t.Errorf("client result %q, want it to contain %s", res.Result, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.Project, "out.txt")); err != nil || strings.TrimSpace(string(b)) != wordToolOut {
		t.Errorf("out.txt = %q, %v: the Bash call did not run", b, err)
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("the Write call did not run: %v", err)
	}
	checkWhatReachedTheModel(t, e)
	for id := range sessions {
		checkStopHookSummaries(t, e, id)
	}
	if caps, err := readCaptures(e); err == nil {
		t.Logf("captures before sweep:\n%s", describeCaptures(caps))
	} else {
		t.Logf("captures before sweep: %v", err)
	}

	// A final pass, then a second one that must add nothing.
	for pass := 1; pass <= 2; pass++ {
		t.Logf("engram-worker sweep (pass %d): %s", pass, strings.TrimSpace(e.Worker(bins.Worker, "sweep")))
		caps, err := readCaptures(e)
		if err != nil {
			t.Fatalf("after sweep %d: %v", pass, err)
		}
		if probs := captureProblems(caps, sessions, e.Project, e.Stub.MainRequests()); len(probs) > 0 {
			t.Fatalf("after sweep %d the captures are wrong:\n  %s\nall captures:\n%s",
				pass, strings.Join(probs, "\n  "), describeCaptures(caps))
		}
		if pass == 1 {
			t.Logf("captures after sweep:\n%s", describeCaptures(caps))
		}
	}
}

// checkWhatReachedTheModel proves that every marker was a real candidate
// for leaking: the client sent it to the model.
func checkWhatReachedTheModel(t *testing.T, e *Env) {
	t.Helper()
	main := e.Stub.MainRequests()
	if len(main) == 0 {
		t.Fatalf("the stub saw no conversation request:\n%s", e.Stub.Summary())
	}
	contains := func(s string) bool {
		for _, r := range main {
			if r.Contains(s) {
				return true
			}
		}
		return false
	}
	for _, m := range []string{markerOtherHook, markerSessionStart, markerClaudeMD} {
		if !contains(m) {
			t.Errorf("no request to the model contains %s: the planted text never reached it", m)
		}
	}
	// Claude Code 2.1.330 sends ~/.claude/CLAUDE.md as a <system-reminder>
	// in the first user message, not in the system field.
	first := main[0]
	if len(first.Messages) == 0 || !strings.Contains(first.Messages[0].Text(), markerClaudeMD) {
		t.Errorf("the first message of the first request does not hold CLAUDE.md (%s)", markerClaudeMD)
	}
	if first.System == "" {
		t.Errorf("the first request has no system prompt")
	}
	if u := e.Stub.UnknownPaths(); len(u) > 0 {
		t.Logf("the client called paths the stub does not know: %v", u)
	}
}

// checkStopHookSummaries checks the client's own record of the Stop hook:
// it ran, printed nothing and reported no error.
func checkStopHookSummaries(t *testing.T, e *Env, sessionID string) {
	t.Helper()
	n := 0
	for _, l := range e.ReadTranscript(sessionID) {
		if l.Type != "system" || l.Subtype != "stop_hook_summary" {
			continue
		}
		n++
		t.Logf("session %s: stop hooks ran: %s", sessionID, l.HookInfos)
		errs := strings.TrimSpace(string(l.HookErrors))
		if l.HasOutput == nil || *l.HasOutput || (errs != "" && errs != "[]" && errs != "null") || l.PreventedCont {
			t.Errorf("session %s: the Stop hook printed something or failed: %s", sessionID, l.Raw)
		}
	}
	if n == 0 {
		t.Logf("session %s: no stop_hook_summary line in the transcript", sessionID)
	}
}

// readCaptures lists every capture of the store, read-only.
func readCaptures(e *Env) ([]store.Capture, error) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("open store read-only: %w", err)
	}
	defer db.Close()
	return db.Captures(ctx, "")
}

// captureProblems lists everything wrong with the captures of the run:
// words missing or duplicated, text that is not the conversation, byte
// ranges read twice. project is the expected ProjectPath, reqs the
// conversation requests the stub saw.
func captureProblems(caps []store.Capture, sessions map[string]string, project string, reqs []anthropicstub.Request) []string {
	var probs []string
	errorf := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	var all strings.Builder
	bySession := map[string][]store.Capture{}
	for _, c := range caps {
		if _, known := sessions[c.SessionID]; !known {
			errorf("capture %d belongs to unknown session %s", c.ID, c.SessionID)
		}
		if c.ProjectPath != project {
			errorf("capture %d: ProjectPath %q, want %q", c.ID, c.ProjectPath, project)
		}
		bySession[c.SessionID] = append(bySession[c.SessionID], c)
		all.WriteString(c.Content)
		all.WriteString("\n\x00\n")
	}
	text := all.String()

	// Each prompt and reply exactly once, in its own session.
	wordSession := map[string]string{
		wordPromptA1: "A", wordReplyA1: "A", wordPromptA2: "A", wordReplyA2: "A", wordToolOut: "A",
		wordPromptB1: "B", wordReplyB1: "B",
	}
	words := make([]string, 0, len(wordSession))
	for w := range wordSession {
		words = append(words, w)
	}
	sort.Strings(words)
	for _, w := range words {
		if n := strings.Count(text, w); n != 1 {
			errorf("%s occurs %d times in the captures, want exactly 1", w, n)
			continue
		}
		for _, c := range caps {
			if strings.Contains(c.Content, w) && sessions[c.SessionID] != wordSession[w] {
				errorf("%s captured in session %s, want session %s", w, sessions[c.SessionID], wordSession[w])
			}
		}
	}
	for _, want := range []string{"User: ", "Assistant: ", "Bash", "Write"} {
		if !strings.Contains(text, want) {
			errorf("no capture contains %q", want)
		}
	}

	// Byte ranges of one session never overlap: no line was read twice.
	ids := make([]string, 0, len(bySession))
	for id := range bySession {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		cs := bySession[id]
		sort.Slice(cs, func(i, j int) bool { return cs[i].ByteStart < cs[j].ByteStart })
		for i, c := range cs {
			if c.ByteEnd <= c.ByteStart {
				errorf("session %s: capture %d has range [%d, %d)", id, c.ID, c.ByteStart, c.ByteEnd)
			}
			if i > 0 && c.ByteStart < cs[i-1].ByteEnd {
				errorf("session %s: capture %d [%d, %d) overlaps capture %d [%d, %d)", id,
					c.ID, c.ByteStart, c.ByteEnd, cs[i-1].ID, cs[i-1].ByteStart, cs[i-1].ByteEnd)
			}
		}
	}

	// Nothing that is not the conversation.
	for _, m := range []string{markerSessionStart, markerOtherHook, markerClaudeMD} {
		if strings.Contains(text, m) {
			errorf("a capture contains %s", m)
		}
	}
	for _, p := range systemPromptPhrases {
		if strings.Contains(text, p) {
			errorf("a capture contains Claude Code's own text %q", p)
		}
	}
	if line, found := leakedContextLine(reqs, text); found {
		errorf("a capture contains this line of the client's system prompt or injected context: %q", line)
	}
	return probs
}

// leakedContextLine looks for any longer line of what the client added
// around the conversation (system prompt, system messages, system
// reminders) in the captured text.
func leakedContextLine(reqs []anthropicstub.Request, captured string) (string, bool) {
	seen := map[string]bool{}
	var texts []string
	for _, r := range reqs {
		texts = append(texts, r.System)
		for _, m := range r.Messages {
			for _, b := range m.Content {
				if b.Type != "text" {
					continue
				}
				if m.Role == "system" || strings.Contains(b.Text, "<system-reminder>") {
					texts = append(texts, b.Text)
				}
			}
		}
	}
	for _, text := range texts {
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if len(line) < 30 || seen[line] {
				continue
			}
			seen[line] = true
			if strings.Contains(captured, line) {
				return line, true
			}
		}
	}
	return "", false
}

func describeCaptures(caps []store.Capture) string {
	var b strings.Builder
	for _, c := range caps {
		content, _ := json.Marshal(c.Content)
		fmt.Fprintf(&b, "  #%d session=%s source=%s bytes=%d..%d continuation=%v project=%s\n    %s\n",
			c.ID, c.SessionID, c.Source, c.ByteStart, c.ByteEnd, c.Continuation, c.ProjectPath, content)
	}
	if len(caps) == 0 {
		b.WriteString("  (none)\n")
	}
	return b.String()
}
