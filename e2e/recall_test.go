package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// The conversation of the recall test. factApp is the distinctive fact:
// it occurs in session 1 and nowhere else the client could take it from.
const (
	factApp         = "billing-prod-7731"
	promptFact      = "Remember: the billing service deploys to Fly with `flyctl deploy --app " + factApp + "`"
	replyFact       = "Noted: the billing service deploys to Fly with app " + factApp + "."
	promptRelated   = "How do we deploy the billing service?"
	replyRecalled   = "From the notes of an earlier session: flyctl deploy --app " + factApp + "."
	replyNoNotes    = "I have no notes on how the billing service is deployed."
	promptUnrelated = "Write a haiku about autumn leaves"
	replyHaiku      = "Red leaves drift and fall / the maple lets go of gold / quiet ground below."

	recallOpen   = "<engram-recall>"
	recallClose  = "</engram-recall>"
	recallHeader = "Notes recalled from earlier sessions"
)

// recallModel is the stand-in model of the recall test. It answers the
// related question with the fact only when the fact reached it, so that
// the client's final answer shows what the model could see.
type recallModel struct {
	mu       sync.Mutex
	problems []string
}

func (m *recallModel) respond(r *anthropicstub.Request) anthropicstub.Reply {
	p := r.Prompt()
	// Most specific first: a wrongly injected memory carries the text of
	// the other prompts, never the haiku request.
	switch {
	case strings.Contains(p, promptUnrelated):
		return anthropicstub.Text(replyHaiku)
	case strings.Contains(p, promptRelated):
		if r.Contains(factApp) {
			return anthropicstub.Text(replyRecalled)
		}
		return anthropicstub.Text(replyNoNotes)
	case strings.Contains(p, "Remember: the billing service"):
		return anthropicstub.Text(replyFact)
	}
	m.mu.Lock()
	m.problems = append(m.problems, fmt.Sprintf("request #%d: unexpected prompt %q", r.Seq, p))
	m.mu.Unlock()
	return anthropicstub.Text("OK.")
}

func (m *recallModel) Problems() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.problems...)
}

// TestRecallWithRealClient: a fact stated in session 1 reaches the model's
// request in session 2 (a new session of the same project, started in a
// subdirectory) once engram-worker has run, when a related question is
// asked; it does not reach it for an unrelated question, nor in another
// project; the hook never shows an error, and what engram injected is not
// captured back.
func TestRecallWithRealClient(t *testing.T) {
	claudeBin(t) // skip before building anything when the client is absent
	bins := buildBinaries(t)
	model := &recallModel{}
	e := NewEnv(t, model.respond, Hooks{})
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	projectName := filepath.Base(e.Project)
	var sessions []RunResult
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	}()

	// Session 1 states the fact. The store does not exist yet: the Stop
	// hook spools, and the worker drains the spool.
	s1, _ := e.runSession(e.Project, promptFact)
	sessions = append(sessions, s1)
	if !strings.Contains(s1.Result, replyFact) {
		t.Fatalf("session 1: client result %q, want %q", s1.Result, replyFact)
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	eps := readEpisodes(t, e)
	t.Logf("episodes after session 1:\n%s", describeEpisodes(eps))
	if !hasEpisode(eps, factApp, e.Project) {
		t.Fatalf("after engram-worker run no episode of project %s holds %s: nothing to recall\nepisodes:\n%s\ncaptures:\n%s",
			e.Project, factApp, describeEpisodes(eps), describeCapturesOrErr(e))
	}

	// Session 2: a new session of the same project, started in a
	// subdirectory, asks the related question.
	sub := filepath.Join(e.Project, "services", "billing")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	s2, reqs2 := e.runSession(sub, promptRelated)
	sessions = append(sessions, s2)
	if s2.SessionID == s1.SessionID {
		t.Fatalf("session 2 reused session 1's id %s", s1.SessionID)
	}
	turn := promptRequest(reqs2, promptRelated)
	if turn == nil {
		t.Fatalf("session 2: no request to the model carries the prompt %q\n%s", promptRelated, e.Stub.Summary())
	}
	spans := recallSpans(*turn)
	for _, s := range spans {
		t.Logf("session 2: engram's context reached the model in %s:\n%s", s.Where, s.Text)
	}
	if len(spans) == 0 {
		t.Fatalf("session 2: request #%d (the prompt %q from %s) carries no %s…%s: engram injected nothing "+
			"(contains %s anywhere: %v)\nprompt message:\n%s\n%s", turn.Seq, promptRelated, sub, recallOpen, recallClose,
			factApp, turn.Contains(factApp), turn.Prompt(), recallDiagnosis(e, bins, sub))
	}
	var found *recallSpan
	for i := range spans {
		if strings.Contains(spans[i].Text, factApp) {
			found = &spans[i]
			break
		}
	}
	if found == nil {
		t.Fatalf("session 2: engram's injected context does not hold %s:\n%s\n%s", factApp, spans[0].Text, recallDiagnosis(e, bins, sub))
	}
	if !strings.Contains(found.Text, recallHeader) {
		t.Errorf("session 2: engram's injected context lacks its header %q:\n%s", recallHeader, found.Text)
	}
	// The fact arrives as a memory bite labelled with its project:
	// "[Memory · just now · project proj] …" (and may arrive as a belief
	// in the user's words as well).
	var bite string
	for _, line := range strings.Split(found.Text, "\n") {
		if strings.Contains(line, factApp) && (bite == "" || strings.HasPrefix(line, "[Memory · ")) {
			bite = line
		}
	}
	label, _, _ := strings.Cut(bite, "] ")
	if !strings.HasPrefix(bite, "[Memory · ") || !strings.HasSuffix(label, " · project "+projectName) {
		t.Errorf("session 2: the fact is not in a memory bite labelled \"[Memory · … · project %s]\": %q", projectName, bite)
	}
	if !strings.Contains(s2.Result, replyRecalled) {
		t.Errorf("session 2: client result %q, want the model's answer from the recalled note %q", s2.Result, replyRecalled)
	}
	if att := recallAttachments(e, s2.SessionID); strings.Contains(att, factApp) {
		t.Logf("session 2: the transcript records engram's context as: %s", clipLine(att))
	} else {
		t.Logf("session 2: the transcript records no hook_additional_context attachment holding %s (informational)", factApp)
	}

	// What engram injected must not come back as a memory.
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	s2caps := checkNoRecallCaptured(t, e, s2.SessionID, sub)
	if s2caps == 0 {
		// A lost turn is an engram bug of its own; say what happened,
		// then let a backfill read the transcript so that the check
		// above still gets to run on session 2.
		t.Errorf("session 2 (%s, started in %s) has no capture after engram-worker run: its turn is lost. "+
			"engram's Stop hook log says about it:\n%s\ntranscript now: %s",
			s2.SessionID, sub, grepFile(filepath.Join(e.EngramHome, "logs", "hook-stop.log"), s2.SessionID), statLine(e.TranscriptPath(s2.SessionID)))
		t.Logf("engram-worker backfill (to check session 2 anyway): %s", strings.TrimSpace(e.Worker(bins.Worker, "backfill")))
		if checkNoRecallCaptured(t, e, s2.SessionID, sub) == 0 {
			t.Errorf("session 2 is not captured even by engram-worker backfill: the injected-context check proves nothing")
		}
	}
	for _, ep := range readEpisodes(t, e) {
		if strings.Contains(ep.Summary, recallOpen) || strings.Contains(ep.Context, recallOpen) ||
			strings.Contains(ep.Summary, recallHeader) || strings.Contains(ep.Context, recallHeader) {
			t.Errorf("episode %s holds engram's own injected context:\n%s", ep.ID, ep.Context)
		}
	}

	// Session 3: same project, a question the fact has nothing to do with.
	// The project's MEMORY.md, which the client loads in every session of
	// the project, may hold the fact (the promoted belief quotes the user's
	// words); engram's recall must not add it.
	s3, reqs3 := e.runSession(e.Project, promptUnrelated)
	sessions = append(sessions, s3)
	for _, p := range recallLeaksBesideMemory(reqs3) {
		t.Errorf("session 3 (unrelated prompt): %s", p)
	}
	if !strings.Contains(s3.Result, replyHaiku) {
		t.Errorf("session 3: client result %q, want %q", s3.Result, replyHaiku)
	}

	// Session 4: the related question in another project. Every memory of
	// the store belongs to the first project, so nothing may be injected.
	other := e.NewProject("other")
	s4, reqs4 := e.runSession(other, promptRelated)
	sessions = append(sessions, s4)
	for _, p := range recallLeaks(reqs4) {
		t.Errorf("session 4 (another project): %s", p)
	}
	if !strings.Contains(s4.Result, replyNoNotes) {
		t.Errorf("session 4: client result %q, want %q", s4.Result, replyNoNotes)
	}

	// The hooks never made the client report an error.
	for i, s := range sessions {
		lines := e.ReadTranscript(s.SessionID)
		for _, p := range hookProblems(lines) {
			t.Errorf("session %d: the client recorded a hook problem: %s", i+1, p)
		}
		if strings.Contains(strings.ToLower(s.Stderr), "hook") {
			t.Errorf("session %d: the client's stderr mentions a hook:\n%s", i+1, s.Stderr)
		}
	}
	if p := model.Problems(); len(p) > 0 {
		t.Errorf("stand-in model problems: %q", p)
	}
}

// checkNoRecallCaptured fails when any capture holds engram's own injected
// context, or when session s2 (started in dir) was captured under another
// project than the git root. It returns how many captures session s2 has.
func checkNoRecallCaptured(t *testing.T, e *Env, s2, dir string) int {
	t.Helper()
	caps, err := readCaptures(e)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("captures:\n%s", describeCaptures(caps))
	n := 0
	for _, c := range caps {
		if c.SessionID == s2 {
			n++
			if c.ProjectPath != e.Project {
				t.Errorf("capture %d of session 2 (started in %s): ProjectPath %q, want the git root %q", c.ID, dir, c.ProjectPath, e.Project)
			}
		}
		for _, bad := range []string{recallOpen, recallClose, recallHeader} {
			if strings.Contains(c.Content, bad) || strings.Contains(c.Messages, bad) {
				t.Errorf("capture %d of session %s holds engram's own injected context (%q): engram would re-learn its output\n%s",
					c.ID, c.SessionID, bad, c.Content)
			}
		}
	}
	return n
}

// grepFile returns the lines of path that contain s.
func grepFile(path, s string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "(nothing)"
	}
	return strings.Join(out, "\n")
}

func statLine(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%s, %d bytes, modified %s", path, fi.Size(), fi.ModTime().Format("15:04:05.000"))
}

// runSession runs a new session with one prompt in dir and returns the
// conversation requests the stub received meanwhile.
func (e *Env) runSession(dir, prompt string) (RunResult, []anthropicstub.Request) {
	e.t.Helper()
	before := len(e.Stub.Requests())
	res := e.PromptIn(dir, "", prompt)
	var main []anthropicstub.Request
	for _, r := range e.Stub.Requests()[before:] {
		if r.Path == "/v1/messages" && !r.Aux {
			main = append(main, r)
		}
	}
	if len(main) == 0 {
		e.t.Fatalf("the session in %s with prompt %q sent no conversation request:\n%s", dir, prompt, e.Stub.Summary())
	}
	return res, main
}

// promptRequest is the first request whose current prompt holds prompt.
func promptRequest(reqs []anthropicstub.Request, prompt string) *anthropicstub.Request {
	for i := range reqs {
		if strings.Contains(reqs[i].Prompt(), prompt) {
			return &reqs[i]
		}
	}
	return nil
}

// recallSpan is one piece of engram's framed context found in a request.
type recallSpan struct {
	Where string // "system", or "message N (role), block M"
	Text  string // from <engram-recall> to </engram-recall> inclusive
}

// recallSpans finds engram's framed context in the decoded system prompt
// and in every text block of every message, whatever role carries it.
func recallSpans(r anthropicstub.Request) []recallSpan {
	var out []recallSpan
	scan := func(where, text string) {
		for {
			i := strings.Index(text, recallOpen)
			if i < 0 {
				return
			}
			text = text[i:]
			j := strings.Index(text, recallClose)
			if j < 0 {
				out = append(out, recallSpan{Where: where + " (unterminated)", Text: text})
				return
			}
			j += len(recallClose)
			out = append(out, recallSpan{Where: where, Text: text[:j]})
			text = text[j:]
		}
	}
	scan("system", r.System)
	for i, m := range r.Messages {
		for j, b := range m.Content {
			where := fmt.Sprintf("message %d (role %s), block %d", i, m.Role, j)
			if strings.Contains(b.Text, "<system-reminder>") {
				where += " inside a system-reminder"
			}
			scan(where, b.Text)
			scan(where+" tool_result", b.Content)
		}
	}
	return out
}

// recallLeaks lists what engram must not have put into these requests:
// any of its framed context, and the fact.
// recallLeaksBesideMemory is recallLeaks for a session whose project's
// MEMORY.md holds a promoted belief about the fact: the fact may appear in
// engram's belief lines there, and nowhere else.
func recallLeaksBesideMemory(reqs []anthropicstub.Request) []string {
	return leaks(reqs, func(r anthropicstub.Request) bool {
		var rest []string
		for _, line := range strings.Split(r.Prompt(), "\n") {
			if !(strings.HasPrefix(line, "- ") && strings.Contains(line, "(confidence: ")) {
				rest = append(rest, line)
			}
		}
		return strings.Contains(strings.Join(rest, "\n"), factApp)
	})
}

func recallLeaks(reqs []anthropicstub.Request) []string {
	return leaks(reqs, func(r anthropicstub.Request) bool { return r.Contains(factApp) })
}

// leaks lists the requests that carry engram's injected context, or the
// fact where holdsFact finds it.
func leaks(reqs []anthropicstub.Request, holdsFact func(anthropicstub.Request) bool) []string {
	var out []string
	for _, r := range reqs {
		spans := recallSpans(r)
		for _, s := range spans {
			out = append(out, fmt.Sprintf("request #%d carries engram's context in %s:\n%s", r.Seq, s.Where, s.Text))
		}
		if len(spans) == 0 && r.Contains(recallOpen) {
			out = append(out, fmt.Sprintf("request #%d holds %s", r.Seq, recallOpen))
		}
		if holdsFact(r) {
			out = append(out, fmt.Sprintf("request #%d holds the fact %s; prompt message:\n%s", r.Seq, factApp, r.Prompt()))
		}
	}
	return out
}

// hookProblems lists the transcript lines in which the client recorded a
// failed, blocking or cancelled hook: attachments such as
// hook_non_blocking_error (what 2.1.330 writes for a hook that exits 1 or
// prints invalid JSON), and system lines with hook errors.
func hookProblems(lines []TranscriptLine) []string {
	var out []string
	for _, l := range lines {
		switch l.Type {
		case "attachment":
			var a struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(l.Attachment, &a) != nil || !strings.HasPrefix(a.Type, "hook_") {
				continue
			}
			for _, bad := range []string{"error", "block", "cancel", "stopped", "denied", "fail"} {
				if strings.Contains(a.Type, bad) {
					out = append(out, clipLine(l.Raw))
					break
				}
			}
		case "system":
			errs := strings.TrimSpace(string(l.HookErrors))
			if errs != "" && errs != "[]" && errs != "null" || l.PreventedCont ||
				strings.Contains(strings.ToLower(l.Subtype), "hook") && l.Level == "error" {
				out = append(out, clipLine(l.Raw))
			}
		}
	}
	return out
}

func clipLine(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// recallAttachments joins the hook_additional_context attachments of a
// session's transcript.
func recallAttachments(e *Env, sessionID string) string {
	var b strings.Builder
	for _, l := range e.ReadTranscript(sessionID) {
		if l.Type == "attachment" && strings.Contains(string(l.Attachment), `"hook_additional_context"`) {
			b.WriteString(string(l.Attachment))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// readEpisodes lists every episode of the store, read-only.
func readEpisodes(t *testing.T, e *Env) []episode.Episode {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open store read-only: %v", err)
	}
	defer db.Close()
	var out []episode.Episode
	if err := db.EachEpisode(ctx, func(ep episode.Episode) error {
		out = append(out, ep)
		return nil
	}); err != nil {
		t.Fatalf("list episodes: %v", err)
	}
	return out
}

func hasEpisode(eps []episode.Episode, word, projectPath string) bool {
	for _, ep := range eps {
		// A fact about this repository is project-scoped and keyed by the git root.
		if ep.ProjectPath == projectPath && ep.Scope == "project" && strings.Contains(ep.Summary, word) {
			return true
		}
	}
	return false
}

func describeEpisodes(eps []episode.Episode) string {
	var b strings.Builder
	for _, ep := range eps {
		summary, _ := json.Marshal(ep.Summary)
		fmt.Fprintf(&b, "  %s scope=%s project=%s (%s) type=%s importance=%.3f\n    %s\n",
			ep.ID, ep.Scope, ep.Project, ep.ProjectPath, ep.Type, ep.Importance, summary)
	}
	if len(eps) == 0 {
		b.WriteString("  (none)\n")
	}
	return b.String()
}

func describeCapturesOrErr(e *Env) string {
	caps, err := readCaptures(e)
	if err != nil {
		return err.Error()
	}
	return describeCaptures(caps)
}

// recallDiagnosis is what engram itself ranks for the related prompt from
// dir, and the recollection files, for a failure message.
func recallDiagnosis(e *Env, bins Binaries, dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "engram-worker recall --project %s %q:\n%s\n", dir, promptRelated,
		e.Worker(bins.Worker, "recall", "--project", dir, promptRelated))
	files, _ := filepath.Glob(filepath.Join(e.EngramHome, "*", "*.rec"))
	more, _ := filepath.Glob(filepath.Join(e.EngramHome, "*.rec"))
	fmt.Fprintf(&b, "recollection files: %q\n", append(files, more...))
	return b.String()
}

// logEngramLogs copies engram's own log files into the test log.
func logEngramLogs(t *testing.T, e *Env) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(e.EngramHome, "logs", "*"))
	for _, p := range logs {
		if b, err := os.ReadFile(p); err == nil {
			t.Logf("%s:\n%s", p, b)
		}
	}
}
