// Package turngen generates Claude Code transcript turns for benchmarks. It
// takes the shape of a real turn from a recorded transcript (the last one:
// queue operations, the user's prompt, attachments, api-request lines,
// assistant tool_use lines, user tool_result lines, the final reply and the
// bookkeeping lines after it) and renders copies of it in which every uuid,
// message id, tool id, the prompt, the tool's output and the final reply are
// unique to the copy. Rendering is a concatenation of pre-split segments, so
// a hundred megabytes of turns take well under a second.
package turngen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
)

// Template is one turn of a recorded transcript, split at the strings that
// make a turn unique.
type Template struct {
	head      []byte // the transcript before the template turn (the session's start)
	segs      []segment
	prompt    string
	reply     string
	sessionID string
	size      int // bytes of the recorded turn
}

type slotKind int

const (
	literal slotKind = iota
	uuidSlot
	sessionSlot
	idSlot // msg_… and toolu_… ids
	promptSlot
	replySlot
	toolOutputSlot
)

type segment struct {
	kind slotKind
	text []byte // the literal, or the recorded value of the slot
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	idRe   = regexp.MustCompile(`\b(?:msg|toolu)_[A-Za-z0-9]+`)
)

type rawLine struct {
	Type      string `json:"type"`
	IsMeta    bool   `json:"isMeta"`
	SessionID string `json:"sessionId"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type rawBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// Parse takes the last turn of a transcript as the template: from the last
// user line whose content is a plain string (a prompt), together with the
// queue-operation lines just before it, to the end of the file. The turn
// must hold a final assistant text and a tool_result whose content is a
// string (its output is what a big tool result replaces).
func Parse(transcript []byte) (*Template, error) {
	if len(transcript) == 0 || transcript[len(transcript)-1] != '\n' {
		return nil, errors.New("turngen: transcript is empty or does not end with a newline")
	}
	var lines [][]byte
	var types []string
	prompt := -1
	t := &Template{}
	for rest := transcript; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		line := rest[:i+1]
		rest = rest[i+1:]
		var l rawLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("turngen: line %d: %w", len(lines)+1, err)
		}
		if l.Type == "user" && !l.IsMeta && bytes.HasPrefix(bytes.TrimSpace(l.Message.Content), []byte(`"`)) {
			prompt = len(lines)
			json.Unmarshal(l.Message.Content, &t.prompt)
			t.sessionID = l.SessionID
		}
		lines = append(lines, line)
		types = append(types, l.Type)
	}
	if prompt < 0 {
		return nil, errors.New("turngen: no prompt line in the transcript")
	}
	start := prompt
	for start > 0 && types[start-1] == "queue-operation" {
		start--
	}
	headLen := 0
	for _, l := range lines[:start] {
		headLen += len(l)
	}
	t.head = transcript[:headLen]
	turn := transcript[headLen:]
	t.size = len(turn)

	var toolOutput string
	for _, line := range lines[start:] {
		var l rawLine
		json.Unmarshal(line, &l)
		var blocks []rawBlock
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case l.Type == "assistant" && b.Type == "text":
				t.reply = b.Text
			case l.Type == "user" && b.Type == "tool_result" && toolOutput == "":
				json.Unmarshal(b.Content, &toolOutput)
			}
		}
	}
	if t.reply == "" || toolOutput == "" || t.sessionID == "" {
		return nil, errors.New("turngen: the last turn lacks a final reply, a string tool result or a session id")
	}

	type span struct {
		start, end int
		kind       slotKind
	}
	var spans []span
	for _, m := range uuidRe.FindAllIndex(turn, -1) {
		k := uuidSlot
		if string(turn[m[0]:m[1]]) == t.sessionID {
			k = sessionSlot
		}
		spans = append(spans, span{m[0], m[1], k})
	}
	for _, m := range idRe.FindAllIndex(turn, -1) {
		spans = append(spans, span{m[0], m[1], idSlot})
	}
	for _, lit := range []struct {
		s    string
		kind slotKind
	}{{t.prompt, promptSlot}, {t.reply, replySlot}, {toolOutput, toolOutputSlot}} {
		enc := Escape([]byte(lit.s))
		found := false
		for off := 0; ; {
			i := bytes.Index(turn[off:], enc)
			if i < 0 {
				break
			}
			spans = append(spans, span{off + i, off + i + len(enc), lit.kind})
			off += i + len(enc)
			found = true
		}
		if !found {
			return nil, fmt.Errorf("turngen: %q not found verbatim in the turn", lit.s)
		}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	pos := 0
	for _, s := range spans {
		if s.start < pos {
			continue // inside a slot already taken
		}
		if s.start > pos {
			t.segs = append(t.segs, segment{literal, turn[pos:s.start]})
		}
		t.segs = append(t.segs, segment{s.kind, turn[s.start:s.end]})
		pos = s.end
	}
	if pos < len(turn) {
		t.segs = append(t.segs, segment{literal, turn[pos:]})
	}
	return t, nil
}

// Head is the part of the recorded transcript before the template turn: the
// start of the session, with its (large) first turn.
func (t *Template) Head() []byte { return t.head }

// SessionID is the recorded session's id.
func (t *Template) SessionID() string { return t.sessionID }

// Size is the size of the recorded turn in bytes.
func (t *Template) Size() int { return t.size }

// Options change a rendered turn.
type Options struct {
	// SessionID replaces the recorded session id (empty: keep it).
	SessionID string
	// ToolOutput, when set, replaces the output of the turn's first tool
	// call, already JSON-escaped (see Escape). Claude Code writes a tool's
	// output twice on its tool_result line (the block's content and
	// toolUseResult.stdout), so the line grows by twice its size.
	ToolOutput []byte
}

func suffix(n int) string { return " (turn " + strconv.Itoa(n) + ")" }

// Prompt is the prompt of turn n.
func (t *Template) Prompt(n int) string { return t.prompt + suffix(n) }

// Reply is the final assistant reply of turn n: what the Stop hook's input
// carries as last_assistant_message.
func (t *Template) Reply(n int) string { return t.reply + suffix(n) }

// Append renders turn n at the end of dst.
func (t *Template) Append(dst []byte, n int, o Options) []byte {
	for _, s := range t.segs {
		switch s.kind {
		case literal:
			dst = append(dst, s.text...)
		case uuidSlot:
			// Keep the recorded uuid's first 24 characters, so distinct
			// uuids stay distinct, and number the rest with the turn.
			dst = append(dst, s.text[:24]...)
			dst = fmt.Appendf(dst, "%012x", n)
		case sessionSlot:
			if o.SessionID != "" {
				dst = append(dst, o.SessionID...)
			} else {
				dst = append(dst, s.text...)
			}
		case idSlot:
			dst = append(dst, s.text...)
			dst = append(dst, '_')
			dst = strconv.AppendInt(dst, int64(n), 10)
		case promptSlot, replySlot:
			dst = append(dst, s.text...)
			dst = append(dst, suffix(n)...)
		case toolOutputSlot:
			if o.ToolOutput != nil {
				dst = append(dst, o.ToolOutput...)
			} else {
				dst = append(dst, s.text...)
				dst = fmt.Appendf(dst, `\n-rw-r--r-- 1 dev dev 0 Nov 22 00:54 turn-%d.txt`, n)
			}
		}
	}
	return dst
}

// Turn renders turn n.
func (t *Template) Turn(n int, o Options) []byte { return t.Append(nil, n, o) }

// WriteTurns writes the head and then turns first, first+1, … until at
// least size bytes are written, in large writes. It returns the number of
// the next turn and the bytes written.
func (t *Template) WriteTurns(w io.Writer, size int64, first int, o Options) (next int, written int64, err error) {
	bw := bufio.NewWriterSize(w, 4<<20)
	n, err := bw.Write(t.head)
	written += int64(n)
	buf := make([]byte, 0, 2*t.size)
	next = first
	for err == nil && written < size {
		buf = t.Append(buf[:0], next, o)
		next++
		n, err = bw.Write(buf)
		written += int64(n)
	}
	if err == nil {
		err = bw.Flush()
	}
	return next, written, err
}

// Escape returns s JSON-escaped, without the surrounding quotes, the way
// Claude Code writes strings (no HTML escaping).
func Escape(s []byte) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(string(s))
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	return out[1 : len(out)-1]
}

// ToolOutput returns about size bytes of text shaped like a long command
// output (an `ls -la` of a big tree), newline-terminated lines.
func ToolOutput(size int) []byte {
	out := make([]byte, 0, size+128)
	for i := 0; len(out) < size; i++ {
		out = fmt.Appendf(out, "-rw-r--r-- 1 dev dev %7d Nov 22 %02d:%02d internal/pkg%03d/file_%06d.go\n",
			(i*7919)%1000000, i/60%24, i%60, i/1000, i)
	}
	return out
}
