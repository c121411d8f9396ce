// Package capture turns the new bytes of a session transcript into stored
// captures, one per turn: read from the session's stored offset to the last
// complete line, keep the conversation, redact it, and store the captures
// with the new offset in one transaction. The Stop hook, the worker's sweep
// and backfill all capture through Session, so a line is captured once
// whichever of them reads it first.
package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/redact"
	"github.com/engram-memory/engram/internal/store"
	"github.com/engram-memory/engram/internal/transcript"
)

// Sources of a capture.
const (
	SourceStop     = "stop"
	SourceSweep    = "sweep"
	SourceBackfill = "backfill"
	SourceSpool    = "spool"
)

// ErrTranscript marks a failure to read the transcript (as opposed to the store).
var ErrTranscript = errors.New("capture: transcript")

// Request asks for one capture pass over a session's transcript.
type Request struct {
	SessionID      string
	TranscriptPath string
	CWD            string
	// LastAssistantMessage is the Stop input's final reply. The transcript
	// may not hold it yet when the hook runs; it is captured from here then,
	// and its late copy in the file is skipped by a later pass.
	LastAssistantMessage string
	// PromptID is the Stop input's prompt_id: the promptId of the prompt
	// that started the turn LastAssistantMessage ends.
	PromptID string
	Source   string
	Now      time.Time
}

// Options bound a pass.
type Options struct {
	Transcript transcript.Options
	// CaptureMax bounds the rendered text of one capture.
	CaptureMax int
}

// Pass is the outcome of reading a transcript, ready to commit or to spool.
type Pass struct {
	Request  Request
	From     int64                // offset the read started at
	End      int64                // offset just past the last complete line read
	Messages []transcript.Message // kept, redacted messages (a late final reply last)
	Replies  replyState           // reply state after this pass
	// CopiedBefore carries transcript.Result.CopiedBefore to the next pass.
	CopiedBefore time.Time
	Skipped      int // lines skipped by the parser
	Redacted     int // secrets replaced
}

// Read performs the file part of a pass: everything but the commit. prev is
// the session's stored state (zero when it has none).
func Read(req Request, prev store.Session, opt Options) (Pass, error) {
	p := Pass{Request: req, From: prev.Offset, End: prev.Offset, Replies: stateOf(prev), CopiedBefore: prev.CopiedBefore}
	topt := opt.Transcript
	topt.CopiedBefore = prev.CopiedBefore
	res, err := transcript.ReadFile(req.TranscriptPath, prev.Offset, topt)
	if err != nil {
		return p, fmt.Errorf("%w: %s: %w", ErrTranscript, req.TranscriptPath, err)
	}
	p.End, p.Skipped, p.CopiedBefore = res.End, res.Skipped, res.CopiedBefore
	msgs := res.Messages
	for i := range msgs {
		for j := range msgs[i].Blocks {
			var n int
			msgs[i].Blocks[j].Text, n = redact.String(msgs[i].Blocks[j].Text)
			p.Redacted += n
		}
	}
	reply, n := redact.String(strings.TrimSpace(req.LastAssistantMessage))
	p.Redacted += n
	msgs, p.Replies = settleReply(msgs, p.Replies, reply, req.PromptID, p.End, req.Now)
	p.Messages = msgs
	return p, nil
}

// replyState is what a pass needs to know, and leaves behind, about the
// session's final replies.
type replyState struct {
	Pending string // reply captured from a Stop input, its copy not yet read from the file
	Last    string // last assistant text captured, from either source
	Prompt  string // promptId of the latest prompt read from the file
	// Deferred are final replies from Stop inputs whose prompt the file did
	// not hold yet, oldest first: each waits for its prompt.
	Deferred []deferredReply
}

// deferredReply is a final reply waiting for the prompt of its turn.
type deferredReply struct {
	PromptID string    `json:"prompt_id"`
	Text     string    `json:"text"` // redacted
	At       time.Time `json:"at"`
}

// maxDeferred bounds the replies a session keeps waiting. The file lags
// behind by a turn at most in practice; past this many the oldest is
// attached where it would have been without a prompt id.
const maxDeferred = 8

// maxDeferAge is how long a reply waits for its prompt to reach the file.
const maxDeferAge = time.Hour

func stateOf(s store.Session) replyState {
	return replyState{Pending: s.PendingReplyHash, Last: s.LastReplyHash, Prompt: s.LastPromptID,
		Deferred: decodeDeferred(s.DeferredReplies)}
}

func (st replyState) equal(o replyState) bool {
	return st.Pending == o.Pending && st.Last == o.Last && st.Prompt == o.Prompt &&
		encodeDeferred(st.Deferred) == encodeDeferred(o.Deferred)
}

func encodeDeferred(d []deferredReply) string {
	if len(d) == 0 {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	return string(b)
}

func decodeDeferred(s string) []deferredReply {
	if s == "" {
		return nil
	}
	var d []deferredReply
	if json.Unmarshal([]byte(s), &d) != nil {
		return nil
	}
	return d
}

// settleReply keeps each final reply exactly once, in the turn of its own
// prompt. The Stop input's reply belongs to the prompt its prompt_id names.
// When the file holds that prompt, the reply is found in its turn, or, when
// the file does not hold the reply yet, appended at the end of that turn
// and remembered as pending: a later pass drops its late copy when it meets
// it before the next prompt. When the file does not hold the prompt yet
// (it lags behind the hook), the reply is deferred: appending it to what the
// file holds would glue it to the turn before. A later pass that reads the
// prompt settles it the same way. A reply already captured (the hook
// running twice for one turn) is not appended again. Without a prompt id
// (older clients) the reply belongs to the last turn read.
func settleReply(msgs []transcript.Message, st replyState, reply, promptID string, end int64, now time.Time) ([]transcript.Message, replyState) {
	prevPrompt := st.Prompt
	prompted := false
	for _, m := range msgs {
		if m.Prompt {
			prompted = true
			st.Prompt = m.PromptID
		}
	}
	replyHash := ""
	if reply != "" {
		replyHash = hashText(reply)
	}
	// Without a new prompt in this pass the reply belongs to the turn the
	// session state describes, so a match there means it is captured.
	alreadyCaptured := !prompted && replyHash != "" && (replyHash == st.Pending || replyHash == st.Last)
	if st.Pending != "" {
		out := msgs[:0:0]
		found, seenPrompt := false, false
		for _, m := range msgs {
			if m.Prompt {
				seenPrompt = true
			}
			if !found && !seenPrompt && m.Role == "assistant" {
				kept := m.Blocks[:0:0]
				for _, b := range m.Blocks {
					if !found && b.Kind == transcript.KindText && hashText(strings.TrimSpace(b.Text)) == st.Pending {
						found = true
						continue
					}
					kept = append(kept, b)
				}
				if len(kept) == 0 {
					continue
				}
				m.Blocks = kept
			}
			out = append(out, m)
		}
		msgs = out
		if found || seenPrompt {
			st.Pending = ""
		}
	}

	// Replies waiting for their prompt, then this Stop's reply.
	waiting := st.Deferred
	st.Deferred = nil
	if reply != "" && promptID != "" && !(prevPrompt == promptID && !prompted) {
		dup := false
		for _, d := range waiting {
			dup = dup || d.PromptID == promptID
		}
		if !dup {
			waiting = append(waiting, deferredReply{PromptID: promptID, Text: reply, At: now})
		}
		reply = "" // settled below with the waiting ones
	}
	oldPending, oldLast := st.Pending, st.Last
	for _, d := range waiting {
		i, j := promptIndex(msgs, d.PromptID), 0
		switch {
		case i >= 0:
			j = i + 1
		case d.PromptID == prevPrompt && prompted:
			// A late Stop: its prompt was read by an earlier pass and a
			// newer prompt is already in the file. Its turn is what comes
			// before that prompt.
			if h := hashText(d.Text); h == oldPending || h == oldLast {
				continue
			}
			i = 0
		case now.Sub(d.At) > maxDeferAge:
			// Its prompt never reached the file: keep the reply rather
			// than lose it, where it would have gone without a prompt id.
			msgs = append(msgs, transcript.Message{Offset: end, End: end, Role: "assistant", Timestamp: d.At,
				Blocks: []transcript.Block{{Kind: transcript.KindText, Text: d.Text}}})
			continue
		default:
			st.Deferred = append(st.Deferred, d)
			continue
		}
		for j < len(msgs) && !msgs[j].Prompt {
			j++
		}
		if lastTurnHasReply(msgs[i:j], d.Text) {
			continue
		}
		at := end
		if j > 0 {
			at = msgs[j-1].End
		} else if len(msgs) > 0 {
			at = msgs[0].Offset
		}
		m := transcript.Message{Offset: at, End: at, Role: "assistant", Timestamp: d.At,
			Blocks: []transcript.Block{{Kind: transcript.KindText, Text: d.Text}}}
		msgs = append(msgs[:j:j], append([]transcript.Message{m}, msgs[j:]...)...)
		if j == len(msgs)-1 {
			st.Pending = hashText(d.Text) // the file's copy is still to come
		}
	}
	if len(st.Deferred) > maxDeferred {
		// Never lose a reply: the oldest goes where it would have gone
		// without a prompt id.
		old := st.Deferred[0]
		st.Deferred = st.Deferred[1:]
		msgs = append(msgs, transcript.Message{Offset: end, End: end, Role: "assistant", Timestamp: old.At,
			Blocks: []transcript.Block{{Kind: transcript.KindText, Text: old.Text}}})
	}

	if reply != "" && !alreadyCaptured && !lastTurnHasReply(msgs, reply) {
		msgs = append(msgs, transcript.Message{Offset: end, End: end, Role: "assistant", Timestamp: now,
			Blocks: []transcript.Block{{Kind: transcript.KindText, Text: reply}}})
		st.Pending = replyHash
	}
	if h := lastAssistantText(msgs); h != "" {
		st.Last = h
	}
	return msgs, st
}

// promptIndex is the index of the last prompt with the given promptId in
// msgs, or -1. The last: a session forked from another one (--resume with
// --fork-session) starts its file with a copy of the old conversation,
// whose prompts carry the promptId of the new session's first prompt.
func promptIndex(msgs []transcript.Message, id string) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Prompt && m.PromptID == id {
			return i
		}
	}
	return -1
}

// lastAssistantText is the hash of the last assistant text block in msgs.
func lastAssistantText(msgs []transcript.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		for j := len(msgs[i].Blocks) - 1; j >= 0; j-- {
			if b := msgs[i].Blocks[j]; b.Kind == transcript.KindText {
				return hashText(strings.TrimSpace(b.Text))
			}
		}
	}
	return ""
}

// lastTurnHasReply reports whether the messages after the last prompt hold
// the reply as one text block or as the text of one assistant message.
func lastTurnHasReply(msgs []transcript.Message, reply string) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "assistant" {
			var all []string
			for _, b := range m.Blocks {
				if b.Kind == transcript.KindText {
					t := strings.TrimSpace(b.Text)
					if t == reply {
						return true
					}
					all = append(all, t)
				}
			}
			if strings.Join(all, "\n\n") == reply || strings.Join(all, "\n") == reply || strings.Join(all, "") == reply {
				return true
			}
		}
		if m.Prompt {
			return false
		}
	}
	return false
}

// Commit builds the captures of a pass and the session's new state.
func (p Pass) Commit(prev store.Session, opt Options) store.CaptureCommit {
	req := p.Request
	cwd := req.CWD
	if cwd == "" {
		for _, m := range p.Messages {
			if m.CWD != "" {
				cwd = m.CWD
				break
			}
		}
	}
	if cwd == "" {
		cwd = prev.CWD
	}
	root, _ := gitroot.Find(cwd)
	sess := store.Session{
		ID: req.SessionID, TranscriptPath: req.TranscriptPath, CWD: cwd,
		Project: gitroot.Name(root), ProjectPath: root,
		Offset: p.End, PendingReplyHash: p.Replies.Pending, LastReplyHash: p.Replies.Last,
		LastPromptID: p.Replies.Prompt, DeferredReplies: encodeDeferred(p.Replies.Deferred), CopiedBefore: p.CopiedBefore,
		LastActivity: req.Now,
	}
	var caps []store.Capture
	for _, turn := range transcript.Turns(p.Messages) {
		if len(turn) == 0 {
			continue
		}
		content := clip(transcript.Render(turn), opt.CaptureMax)
		if strings.TrimSpace(content) == "" {
			continue
		}
		at := turn[0].Timestamp
		if at.IsZero() {
			at = req.Now
		}
		caps = append(caps, store.Capture{
			SessionID: req.SessionID, Project: sess.Project, ProjectPath: root, CWD: cwd,
			TranscriptPath: req.TranscriptPath,
			ByteStart:      turn[0].Offset, ByteEnd: turn[len(turn)-1].End,
			TurnAt: at, Content: content, Messages: messagesJSON(turn),
			ContentHash:  hashText(content),
			Continuation: !turn[0].Prompt, Source: req.Source,
		})
	}
	return store.CaptureCommit{From: p.From, Session: sess, Captures: caps}
}

// Session runs one capture pass over a session and commits it. It retries
// once when another writer moved the session's offset in between. It returns
// the number of captures stored.
func Session(ctx context.Context, db *store.DB, req Request, opt Options) (int, error) {
	if req.Now.IsZero() {
		req.Now = time.Now()
	}
	for attempt := 0; ; attempt++ {
		prev, _, err := db.GetSession(ctx, req.SessionID)
		if err != nil {
			return 0, err
		}
		p, err := Read(req, prev, opt)
		if err != nil {
			return 0, err
		}
		if prev.ID != "" && p.End == prev.Offset && len(p.Messages) == 0 &&
			p.Replies.equal(stateOf(prev)) && p.CopiedBefore.Equal(prev.CopiedBefore) {
			return 0, nil // nothing new
		}
		n, err := db.CommitCaptures(ctx, p.Commit(prev, opt))
		if errors.Is(err, store.ErrOffsetMoved) && attempt == 0 {
			continue
		}
		return n, err
	}
}

func messagesJSON(turn []transcript.Message) string {
	type block struct {
		Role string `json:"role"`
		transcript.Block
		Origin string `json:"origin,omitempty"`
	}
	var out []block
	for _, m := range turn {
		for _, b := range m.Blocks {
			out = append(out, block{Role: m.Role, Block: b, Origin: m.Origin})
		}
	}
	data, err := json.Marshal(out)
	if err != nil {
		return "[]"
	}
	return string(data)
}

func hashText(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// clip bounds a capture's text, keeping its head and tail.
func clip(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	marker := fmt.Sprintf("\n…[%d bytes omitted]…\n", len(s)-max)
	head := max * 2 / 3
	tail := max - head
	for head > 0 && !utf8Start(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !utf8Start(s[start]) {
		start++
	}
	return s[:head] + marker + s[start:]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
