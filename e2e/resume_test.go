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

// resumeTurn is one prompt of the resumed session and its reply's word.
type resumeTurn struct {
	prompt, reply string
	lag           string
	runAfter      bool // run the worker after this turn, before the copy catches up
}

// A session continued with --resume four times, with tool calls, and a
// transcript that lags behind the Stop hook — by the turn's prompt line
// itself in most turns. Every turn must be captured exactly once, each
// reply with its own prompt, in the captures and in the episodes.
func TestResumedSessionWithRealClient(t *testing.T) {
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

	turns := []resumeTurn{
		{prompt: "RESUMEP1-wren", reply: "RESUMER1-finch", lag: lagPrompt},
		{prompt: "RESUMEP2-crane", reply: "RESUMER2-stork", lag: lagPrompt, runAfter: true},
		{prompt: "RESUMEP3-egret", reply: "RESUMER3-ibis", lag: lagReply},
		{prompt: "RESUMEP4-swift", reply: "RESUMER4-lark", lag: lagPrompt},
		{prompt: "RESUMEP5-robin", reply: "RESUMER5-thrush", lag: lagNone},
	}
	sc.On(turns[0].prompt).Bash("echo resume-tool-one | tr a-z A-Z", "Print").Reply("Printed it, " + turns[0].reply + ".")
	sc.On(turns[1].prompt).Reply("Understood, " + turns[1].reply + ".")
	sc.On(turns[2].prompt).Write(filepath.Join(e.Project, "plan.txt"), "plan\n").
		Bash("cat plan.txt", "Show").Reply("Added plan.txt, " + turns[2].reply + ".")
	sc.On(turns[3].prompt).Reply("Understood, " + turns[3].reply + ".")
	sc.On(turns[4].prompt).Bash("echo resume-tool-five", "Print").Reply("Done, " + turns[4].reply + ".")

	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	session := ""
	for _, tr := range turns {
		if err := os.WriteFile(filepath.Join(lagDir, "mode"), []byte(tr.lag), 0o600); err != nil {
			t.Fatal(err)
		}
		res := e.Prompt(session, "Next step, "+tr.prompt)
		if session != "" && res.SessionID != session {
			t.Fatalf("--resume %s continued as session %s", session, res.SessionID)
		}
		session = res.SessionID
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
	for _, tr := range turns {
		if tr.lag == lagPrompt && !strings.Contains(string(stops), "mode=prompt") {
			t.Fatalf("no Stop saw a transcript without its prompt")
		}
	}

	// The copy catches up; the worker's cycle sweeps it and makes episodes.
	real, err := os.ReadFile(e.TranscriptPath(session))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lagDir, session+".jsonl"), real, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))

	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	caps, err := db.Captures(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("captures:\n%s", describeCaptures(caps))
	var probs []string
	// A capture belongs to the turn of its prompt; a continuation to the
	// turn of the capture before it.
	turnOf := make([]int, len(caps))
	cur := -1
	for i, c := range caps {
		if c.Status != store.CaptureDone {
			probs = append(probs, fmt.Sprintf("capture %d is %s (%s)", c.ID, c.Status, c.Error))
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
	for _, w := range []string{"RESUME-TOOL-ONE", "echo resume-tool-five", "cat plan.txt"} {
		all := ""
		for _, c := range caps {
			all += c.Content + "\n"
		}
		if n := strings.Count(all, w); n != 1 {
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
	for word, k := range map[string]int{"RESUME-TOOL-ONE": 0, "cat plan.txt": 2, "Tool result: resume-tool-five": 4, "Tool result (Bash): resume-tool-five": 4} {
		for _, ep := range eps {
			if strings.Contains(ep.Context, word) && !strings.Contains(ep.Context, turns[k].prompt) {
				probs = append(probs, fmt.Sprintf("episode %s holds %q of turn %d without its prompt", ep.ID, word, k+1))
			}
		}
	}
	if len(probs) > 0 {
		t.Fatalf("resumed session captured wrongly:\n  %s", strings.Join(probs, "\n  "))
	}
	s, _, err := db.GetSession(ctx, session)
	if err != nil || s.DeferredReplies != "" || s.PendingReplyHash != "" {
		t.Errorf("session state after the last cycle: %+v, %v", s, err)
	}
}
