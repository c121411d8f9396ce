package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/store"
)

// resumedSession is a session of Claude Code 2.1.330 continued three times
// with `claude -p --resume` (turns 1 and 3 call Bash), with the prompt_id and
// last_assistant_message of each turn's Stop input.
type resumedSession struct {
	data  []byte
	id    string
	turns []resumedTurn
}

type resumedTurn struct {
	PromptID string `json:"prompt_id"`
	Reply    string `json:"last_assistant_message"`
	prompt   string // a word of the prompt
	start    int    // offset of the prompt's line
	end      int    // offset past the turn's last line
}

func loadResumed(t *testing.T) resumedSession {
	t.Helper()
	s := resumedSession{data: fixture(t, "resumed-1.jsonl"), id: "35971115-5622-4f97-9040-8d5cdf6a6c81"}
	if err := json.Unmarshal(fixture(t, "resumed-1.stops.json"), &s.turns); err != nil {
		t.Fatal(err)
	}
	words := []string{"T1-alpha", "T2-beta", "T3-gamma", "T4-delta"}
	for i := range s.turns {
		tr := &s.turns[i]
		tr.prompt = words[i]
		at := bytes.Index(s.data, []byte(`"promptId":"`+tr.PromptID+`","type":"user"`))
		if at < 0 {
			t.Fatalf("prompt %s not in the fixture", tr.PromptID)
		}
		tr.start = bytes.LastIndexByte(s.data[:at], '\n') + 1
	}
	for i := range s.turns {
		if i+1 < len(s.turns) {
			s.turns[i].end = s.turns[i+1].start
		} else {
			s.turns[i].end = len(s.data)
		}
	}
	return s
}

// lineEnds are the offsets just past each line of data within [from, to].
func lineEnds(data []byte, from, to int) []int {
	var out []int
	if from == 0 || data[from-1] == '\n' {
		out = append(out, from)
	}
	for i := from; i < to; i++ {
		if data[i] == '\n' {
			out = append(out, i+1)
		}
	}
	return out
}

// checkResumed checks that every prompt and reply of the session was
// captured exactly once, each reply in its own prompt's turn: in the
// capture of its prompt, or in a continuation capture that follows it
// before the next prompt.
func checkResumed(t *testing.T, db *store.DB, s resumedSession) string {
	t.Helper()
	caps, err := db.Captures(context.Background(), s.id)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	turnOf := make([]int, len(caps)) // the turn whose prompt a capture follows
	cur := -1
	for i, c := range caps {
		fmt.Fprintf(&all, "#%d [%d,%d) cont=%v %q\n", i, c.ByteStart, c.ByteEnd, c.Continuation, c.Content)
		if !c.Continuation {
			cur = -1
			for k, tr := range s.turns {
				if strings.Contains(c.Content, tr.prompt) {
					cur = k
				}
			}
		}
		turnOf[i] = cur
	}
	var probs []string
	for k, tr := range s.turns {
		for _, w := range []string{tr.prompt, tr.Reply} {
			n := 0
			for i, c := range caps {
				if c := strings.Count(c.Content, w); c > 0 {
					n += c
					if turnOf[i] != k {
						probs = append(probs, fmt.Sprintf("%q is in capture #%d, which belongs to turn %d, not %d", w, i, turnOf[i]+1, k+1))
					}
				}
			}
			if n != 1 {
				probs = append(probs, fmt.Sprintf("%q captured %d times", w, n))
			}
		}
	}
	// Tool calls and results once each (a result read after its call's
	// capture shows no tool name).
	for _, re := range []string{`echo one`, `echo three`, `Tool result[^:]*: one\b`, `Tool result[^:]*: three\b`} {
		if n := len(regexp.MustCompile(re).FindAllString(all.String(), -1)); n != 1 {
			probs = append(probs, fmt.Sprintf("%s captured %d times", re, n))
		}
	}
	if len(probs) > 0 {
		t.Errorf("captures are wrong:\n  %s\n%s", strings.Join(probs, "\n  "), all.String())
	}
	return all.String()
}

// A resumed session whose transcript lags behind every Stop: at each turn's
// Stop the file may end anywhere between what the previous Stop saw and the
// end of the turn, before the turn's own prompt line included. Each reply
// must be captured once, in its own turn, never glued to the turn before.
func TestResumedSessionLaggingTranscript(t *testing.T) {
	s := loadResumed(t)
	ctx := context.Background()
	run := func(t *testing.T, cuts []int, sweeps []bool) {
		db := openDB(t)
		path := transcriptFile(t, s.id, nil)
		now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
		for k, tr := range s.turns {
			os.WriteFile(path, s.data[:cuts[k]], 0o600)
			now = now.Add(time.Minute)
			req := Request{SessionID: s.id, TranscriptPath: path, CWD: "/home/dev/proj", Source: SourceStop,
				LastAssistantMessage: tr.Reply, PromptID: tr.PromptID, Now: now}
			if _, err := Session(ctx, db, req, Options{}); err != nil {
				t.Fatal(err)
			}
			if sweeps[k] { // the worker's sweep runs before the next turn
				if _, err := Session(ctx, db, Request{SessionID: s.id, TranscriptPath: path, Source: SourceSweep, Now: now}, Options{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		os.WriteFile(path, s.data, 0o600)
		for range 2 {
			if _, err := Session(ctx, db, Request{SessionID: s.id, TranscriptPath: path, Source: SourceSweep, Now: now}, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		if out := checkResumed(t, db, s); t.Failed() {
			t.Logf("cuts %v sweeps %v\n%s", cuts, sweeps, out)
		}
		st, _, _ := db.GetSession(ctx, s.id)
		if st.Offset != int64(len(s.data)) || st.PendingReplyHash != "" || st.DeferredReplies != "" {
			t.Errorf("session after the final sweep: offset %d of %d, pending %q, deferred %q",
				st.Offset, len(s.data), st.PendingReplyHash, st.DeferredReplies)
		}
	}
	n := len(s.turns)
	fixed := map[string]func(k int) int{
		// The Stop sees the file without the turn's own prompt.
		"prompt missing": func(k int) int { return s.turns[k].start },
		// The Stop sees the prompt but none of the model's lines.
		"reply missing": func(k int) int { return bytes.IndexByte(s.data[s.turns[k].start:], '\n') + s.turns[k].start + 1 },
		"no lag":        func(k int) int { return s.turns[k].end },
	}
	for name, cut := range fixed {
		t.Run(name, func(t *testing.T) {
			cuts := make([]int, n)
			for k := range cuts {
				cuts[k] = cut(k)
			}
			run(t, cuts, make([]bool, n))
		})
	}
	// Random lags, with and without a sweep between turns.
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 20))
		cuts, sweeps := make([]int, n), make([]bool, n)
		from := 0
		for k := range n {
			ends := lineEnds(s.data, from, s.turns[k].end)
			cuts[k] = ends[rng.IntN(len(ends))]
			from = cuts[k]
			sweeps[k] = rng.IntN(3) == 0
		}
		t.Run(fmt.Sprintf("random-%d", seed), func(t *testing.T) { run(t, cuts, sweeps) })
		if t.Failed() {
			break
		}
	}
}

// A session resumed with --fork-session (Claude Code 2.1.330): the new
// session's file starts with a copy of the old conversation — the old
// lines with the old uuids and timestamps, and the copied prompt carrying
// the promptId of the new session's first prompt — and at the first Stop
// the file may hold part of the copy and not the new prompt. The copy is
// not captured again, and the new reply goes to the new prompt, wherever
// the file ends at the Stop.
func TestForkedSession(t *testing.T) {
	ctx := context.Background()
	parent, child := fixture(t, "forked-parent.jsonl"), fixture(t, "forked-child.jsonl")
	const (
		parentID, parentPrompt = "99746ffd-e328-4c32-ab24-d6f43365ef30", "913f4729-63cd-4bd2-9694-9b6b05cb51e2"
		childID, childPrompt   = "414613a9-8bf0-4848-a3e0-e8abe86c9bd6", "c7da040c-165b-4eb2-b9a0-ede038d92b6f"
	)
	for _, cut := range lineEnds(child, 0, len(child)) {
		db := openDB(t)
		pp := transcriptFile(t, parentID, parent)
		if _, err := Session(ctx, db, Request{SessionID: parentID, TranscriptPath: pp, Source: SourceStop,
			PromptID: parentPrompt, LastAssistantMessage: "Reply one T1R-aaa."}, Options{}); err != nil {
			t.Fatal(err)
		}
		cp := transcriptFile(t, childID, child[:cut])
		if _, err := Session(ctx, db, Request{SessionID: childID, TranscriptPath: cp, Source: SourceStop,
			PromptID: childPrompt, LastAssistantMessage: "Reply two T2R-bbb."}, Options{}); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(cp, child, 0o600)
		if _, err := Session(ctx, db, Request{SessionID: childID, TranscriptPath: cp, Source: SourceSweep}, Options{}); err != nil {
			t.Fatal(err)
		}
		caps, _ := db.Captures(ctx, "")
		var all strings.Builder
		for _, c := range caps {
			fmt.Fprintf(&all, "%s [%d,%d) cont=%v %q\n", c.SessionID[:8], c.ByteStart, c.ByteEnd, c.Continuation, c.Content)
		}
		var probs []string
		for _, w := range []string{"first T1-alpha", "Reply one T1R-aaa.", "second T2-beta", "Reply two T2R-bbb."} {
			if n := strings.Count(all.String(), w); n != 1 {
				probs = append(probs, fmt.Sprintf("%q captured %d times", w, n))
			}
		}
		for i, c := range caps {
			if strings.Contains(c.Content, "Reply two") && !strings.Contains(c.Content, "second T2-beta") &&
				!(c.Continuation && i > 0 && strings.Contains(caps[i-1].Content, "second T2-beta")) {
				probs = append(probs, "the new reply is not in the new prompt's turn")
			}
		}
		if len(probs) > 0 {
			t.Fatalf("Stop with the child file cut at %d of %d:\n  %s\n%s", cut, len(child), strings.Join(probs, "\n  "), all.String())
		}
		st, _, _ := db.GetSession(ctx, childID)
		if st.DeferredReplies != "" || st.PendingReplyHash != "" || !st.CopiedBefore.IsZero() {
			t.Fatalf("cut %d: child session state after the sweep: %+v", cut, st)
		}
	}
}
