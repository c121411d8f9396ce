package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/store"
)

// The lagging Stop hook: the test binary itself, run by a wrapper script
// with these variables set. It shows engram-hook-stop a transcript that
// lags behind the real one the way Claude Code's does, by more or less
// depending on the turn: it keeps a copy of the real transcript, named like
// it, in another directory, grows it to a cut of the real file, and hands
// the real Stop input to engram-hook-stop with transcript_path pointing at
// the copy. The copy only ever grows, as a transcript does.
const (
	lagHookEnv = "ENGRAM_E2E_LAG_HOOK" // the engram-hook-stop binary to run
	lagDirEnv  = "ENGRAM_E2E_LAG_DIR"  // the copies; the file "mode" says how far to cut
)

// Lag modes, read from LAG_DIR/mode at each Stop.
const (
	lagPrompt = "prompt" // the copy ends before the line of the turn's prompt
	lagReply  = "reply"  // the copy ends just after the prompt's line
	lagNone   = "none"   // the copy is the whole real file
)

func runLagHook() int {
	err := lagHook()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lag hook:", err)
		if dir := os.Getenv(lagDirEnv); dir != "" {
			f, ferr := os.OpenFile(filepath.Join(dir, "errors"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if ferr == nil {
				fmt.Fprintln(f, err)
				f.Close()
			}
		}
	}
	return 0
}

func lagHook() error {
	dir := os.Getenv(lagDirEnv)
	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var in map[string]any
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	real, _ := in["transcript_path"].(string)
	promptID, _ := in["prompt_id"].(string)
	data, err := os.ReadFile(real)
	if err != nil {
		return err
	}
	mode, _ := os.ReadFile(filepath.Join(dir, "mode"))
	cut := len(data)
	if m := strings.TrimSpace(string(mode)); m != lagNone {
		at := bytes.Index(data, []byte(`"promptId":"`+promptID+`","type":"user"`))
		if at >= 0 {
			start := bytes.LastIndexByte(data[:at], '\n') + 1
			cut = start
			if m == lagReply {
				cut = at + bytes.IndexByte(data[at:], '\n') + 1
			}
		}
	}
	view := filepath.Join(dir, filepath.Base(real))
	if old, err := os.ReadFile(view); err == nil && len(old) > cut {
		cut = len(old)
	}
	if err := os.WriteFile(view, data[:cut], 0o600); err != nil {
		return err
	}
	in["transcript_path"] = view
	body, _ := json.Marshal(in)
	log, _ := os.OpenFile(filepath.Join(dir, "stops"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if log != nil {
		fmt.Fprintf(log, "mode=%s prompt=%s real=%d view=%d reply=%q\n", strings.TrimSpace(string(mode)), promptID, len(data), cut, in["last_assistant_message"])
		log.Close()
	}
	cmd := exec.Command(os.Getenv(lagHookEnv))
	cmd.Stdin = bytes.NewReader(body)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// resumeTurn is one prompt of a resumed session and its reply's word.
type resumeTurn struct {
	prompt, reply string
	lag           string
	fork          bool // --fork-session: the turn starts a new session holding a copy of the old one
	runAfter      bool // run the worker after this turn, before the copy catches up
	script        func(t *anthropicstub.Turn, reply, project string)
}

// A session continued with --resume four times, with tool calls, and a
// transcript that lags behind the Stop hook — by the turn's prompt line
// itself in most turns. Every turn must be captured exactly once, each
// reply with its own prompt, in the captures and in the episodes.
func TestResumedSessionWithRealClient(t *testing.T) {
	turns := []resumeTurn{
		{prompt: "RESUMEP1-wren", reply: "RESUMER1-finch", lag: lagPrompt, script: func(t *anthropicstub.Turn, r, _ string) {
			t.Bash("echo resume-tool-one | tr a-z A-Z", "Print").Reply("Printed it, " + r + ".")
		}},
		{prompt: "RESUMEP2-crane", reply: "RESUMER2-stork", lag: lagPrompt, runAfter: true},
		{prompt: "RESUMEP3-egret", reply: "RESUMER3-ibis", lag: lagReply, script: func(t *anthropicstub.Turn, r, project string) {
			t.Write(filepath.Join(project, "plan.txt"), "plan\n").Bash("cat plan.txt", "Show").Reply("Added plan.txt, " + r + ".")
		}},
		{prompt: "RESUMEP4-swift", reply: "RESUMER4-lark", lag: lagPrompt},
		{prompt: "RESUMEP5-robin", reply: "RESUMER5-thrush", lag: lagNone, script: func(t *anthropicstub.Turn, r, _ string) {
			t.Bash("echo resume-tool-five | tr a-z A-Z", "Print").Reply("Done, " + r + ".")
		}},
	}
	tools := map[string]int{"RESUME-TOOL-ONE": 0, "echo resume-tool-one": 0, "cat plan.txt": 2, "echo resume-tool-five": 4, "RESUME-TOOL-FIVE": 4}
	runResumeScenario(t, turns, tools)
}

// A session forked with --resume --fork-session starts a new file with a
// copy of the old conversation. The copy is not captured again, and the
// new turns — also when resumed again, with tool calls and a lagging
// transcript — are captured once each, with their own prompts.
func TestForkedSessionWithRealClient(t *testing.T) {
	turns := []resumeTurn{
		{prompt: "FORKP1-heron", reply: "FORKR1-gull", lag: lagNone, script: func(t *anthropicstub.Turn, r, _ string) {
			t.Bash("echo fork-tool-one | tr a-z A-Z", "Print").Reply("Printed it, " + r + ".")
		}},
		{prompt: "FORKP2-tern", reply: "FORKR2-auk", lag: lagReply},
		{prompt: "FORKP3-kite", reply: "FORKR3-shrike", lag: lagPrompt, fork: true, script: func(t *anthropicstub.Turn, r, _ string) {
			t.Bash("echo fork-tool-three | tr a-z A-Z", "Print").Reply("Done, " + r + ".")
		}},
		{prompt: "FORKP4-rail", reply: "FORKR4-coot", lag: lagPrompt},
		{prompt: "FORKP5-dove", reply: "FORKR5-jay", lag: lagPrompt, fork: true},
	}
	tools := map[string]int{"FORK-TOOL-ONE": 0, "echo fork-tool-one": 0, "echo fork-tool-three": 2, "FORK-TOOL-THREE": 2}
	runResumeScenario(t, turns, tools)
}

// runResumeScenario runs the turns with the real client, each resuming the
// session of the turn before (a fork turn starts a new session from it),
// behind the lagging Stop hook; then the copies catch up and the worker
// runs. It checks that every prompt and reply is captured exactly once,
// in its own turn, and is in exactly one episode, with its prompt; and
// that the tool lines (a word of each, mapped to its turn's index) are in
// their turn's episode.
func runResumeScenario(t *testing.T, turns []resumeTurn, tools map[string]int) {
	claudeBin(t)
	bins := buildBinaries(t)
	sc := anthropicstub.NewScript()
	e := NewEnv(t, sc.Respond, Hooks{})
	lagDir := filepath.Join(e.Base, "lagging", "projects", "-lag")
	if err := os.MkdirAll(lagDir, 0o700); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hook := e.WriteScript("lagging-stop.sh", fmt.Sprintf("%s=%s %s=%s exec %s\n", lagHookEnv, bins.HookStop, lagDirEnv, lagDir, self))
	e.SetHooks(Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{hook}})
	for _, tr := range turns {
		turn := sc.On(tr.prompt)
		if tr.script == nil {
			turn.Reply("Understood, " + tr.reply + ".")
			continue
		}
		tr.script(turn, tr.reply, e.Project)
	}

	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	session := ""
	sessions := map[string]bool{}
	forks := 0
	for _, tr := range turns {
		if err := os.WriteFile(filepath.Join(lagDir, "mode"), []byte(tr.lag), 0o600); err != nil {
			t.Fatal(err)
		}
		var flags []string
		if tr.fork {
			flags = []string{"--fork-session"}
		}
		res := e.PromptWith(e.Project, session, flags, "Next step, "+tr.prompt)
		switch {
		case tr.fork && res.SessionID == session:
			t.Fatalf("--fork-session continued session %s", session)
		case tr.fork:
			forks++
		case session != "" && res.SessionID != session:
			t.Fatalf("--resume %s continued as session %s", session, res.SessionID)
		}
		session = res.SessionID
		sessions[session] = true
		if !strings.Contains(res.Result, tr.reply) {
			t.Fatalf("client result %q, want %s", res.Result, tr.reply)
		}
		if tr.runAfter {
			t.Logf("engram-worker run (transcript copy lagging): %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
		}
	}
	if p := sc.Problems(); len(p) > 0 {
		t.Fatalf("stub script problems: %q\nrequests:\n%s", p, e.Stub.Summary())
	}
	if b, err := os.ReadFile(filepath.Join(lagDir, "errors")); err == nil {
		t.Fatalf("the lagging hook failed:\n%s", b)
	}
	stops, _ := os.ReadFile(filepath.Join(lagDir, "stops"))
	t.Logf("Stops:\n%s", stops)
	if n := strings.Count(string(stops), "\n"); n != len(turns) {
		t.Fatalf("%d Stops ran, want %d", n, len(turns))
	}
	if len(sessions) != forks+1 {
		t.Fatalf("%d sessions for %d forks", len(sessions), forks)
	}

	// The copies catch up; the worker's cycle sweeps them and makes episodes.
	for id := range sessions {
		real, err := os.ReadFile(e.TranscriptPath(id))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lagDir, id+".jsonl"), real, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))

	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	caps, err := db.Captures(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("captures:\n%s", describeCaptures(caps))
	var probs []string
	// A capture belongs to the turn of its prompt; a continuation to the
	// turn of the capture before it in its session.
	turnOf := make([]int, len(caps))
	cur, curSession := -1, ""
	var all strings.Builder
	for i, c := range caps {
		all.WriteString(c.Content + "\n")
		if c.Status != store.CaptureDone {
			probs = append(probs, fmt.Sprintf("capture %d is %s (%s)", c.ID, c.Status, c.Error))
		}
		if c.SessionID != curSession {
			cur, curSession = -1, c.SessionID
		}
		if !c.Continuation {
			cur = -1
			for k, tr := range turns {
				if strings.Contains(c.Content, tr.prompt) {
					cur = k
				}
			}
		}
		turnOf[i] = cur
	}
	for k, tr := range turns {
		for _, w := range []string{tr.prompt, tr.reply} {
			n := 0
			for i, c := range caps {
				if m := strings.Count(c.Content, w); m > 0 {
					n += m
					if turnOf[i] != k {
						probs = append(probs, fmt.Sprintf("%s is in capture %d, of turn %d, not %d", w, c.ID, turnOf[i]+1, k+1))
					}
				}
			}
			if n != 1 {
				probs = append(probs, fmt.Sprintf("%s occurs %d times in the captures, want 1", w, n))
			}
		}
	}
	for w := range tools {
		if n := strings.Count(all.String(), w); n != 1 {
			probs = append(probs, fmt.Sprintf("%s occurs %d times in the captures, want 1", w, n))
		}
	}

	// Episodes: each reply in exactly one, the one that holds its prompt.
	eps, err := db.EpisodesAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var desc strings.Builder
	for _, ep := range eps {
		fmt.Fprintf(&desc, "  %s %q\n", ep.ID, ep.Context)
	}
	t.Logf("episodes:\n%s", desc.String())
	for _, tr := range turns {
		var with []string
		for _, ep := range eps {
			if strings.Contains(ep.Summary+"\n"+ep.Context, tr.reply) {
				with = append(with, ep.ID)
				if !strings.Contains(ep.Summary+"\n"+ep.Context, tr.prompt) {
					probs = append(probs, fmt.Sprintf("episode %s holds %s but not its prompt %s", ep.ID, tr.reply, tr.prompt))
				}
				if n := strings.Count(ep.Context, tr.reply); n > 1 {
					probs = append(probs, fmt.Sprintf("episode %s holds %s %d times", ep.ID, tr.reply, n))
				}
			}
		}
		if len(with) != 1 {
			probs = append(probs, fmt.Sprintf("%s is in %d episodes %v, want 1", tr.reply, len(with), with))
		}
	}
	// The tool calls and results of a turn are in its episode too.
	for word, k := range tools {
		for _, ep := range eps {
			if strings.Contains(ep.Context, word) && !strings.Contains(ep.Context, turns[k].prompt) {
				probs = append(probs, fmt.Sprintf("episode %s holds %q of turn %d without its prompt", ep.ID, word, k+1))
			}
		}
	}
	if len(probs) > 0 {
		t.Fatalf("resumed session captured wrongly:\n  %s", strings.Join(probs, "\n  "))
	}
	for id := range sessions {
		s, _, err := db.GetSession(ctx, id)
		if err != nil || s.DeferredReplies != "" || s.PendingReplyHash != "" {
			t.Errorf("session state after the last cycle: %+v, %v", s, err)
		}
	}
}
