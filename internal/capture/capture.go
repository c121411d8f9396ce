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
	Source               string
	Now                  time.Time
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
	Skipped  int                  // lines skipped by the parser
	Redacted int                  // secrets replaced
}

// Read performs the file part of a pass: everything but the commit. prev is
// the session's stored state (zero when it has none).
func Read(req Request, prev store.Session, opt Options) (Pass, error) {
	p := Pass{Request: req, From: prev.Offset, End: prev.Offset,
		Replies: replyState{Pending: prev.PendingReplyHash, Last: prev.LastReplyHash}}
	res, err := transcript.ReadFile(req.TranscriptPath, prev.Offset, opt.Transcript)
	if err != nil {
		return p, fmt.Errorf("%w: %s: %w", ErrTranscript, req.TranscriptPath, err)
	}
	p.End, p.Skipped = res.End, res.Skipped
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
	msgs, p.Replies = settleReply(msgs, p.Replies, reply, p.End, req.Now)
	p.Messages = msgs
	return p, nil
}

// replyState is what a pass needs to know, and leaves behind, about the
// session's final replies.
type replyState struct {
	Pending string // reply captured from a Stop input, its copy not yet read from the file
	Last    string // last assistant text captured, from either source
}

// settleReply keeps each final reply exactly once. A reply captured earlier
// from the Stop input (pending) is dropped when its late copy shows up in the
// file before the next prompt; a reply the file does not hold yet is appended
// from the Stop input and becomes pending; a reply already captured (the
// hook running twice for one turn) is not appended again.
func settleReply(msgs []transcript.Message, st replyState, reply string, end int64, now time.Time) ([]transcript.Message, replyState) {
	prompted := false
	for _, m := range msgs {
		if m.Prompt {
			prompted = true
			break
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
		Offset: p.End, PendingReplyHash: p.Replies.Pending, LastReplyHash: p.Replies.Last, LastActivity: req.Now,
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
			p.Replies == (replyState{prev.PendingReplyHash, prev.LastReplyHash}) {
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
	}
	var out []block
	for _, m := range turn {
		for _, b := range m.Blocks {
			out = append(out, block{Role: m.Role, Block: b})
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
