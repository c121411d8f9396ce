package transcript

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engram-memory/engram/internal/inject"
)

type parser struct {
	opt Options
	// head is true while the lines read may still be copies from a forked
	// session (see Result.CopiedBefore); copiedBefore is the time of the
	// file's first queue-operation then.
	head         bool
	copiedBefore time.Time
	copied       int
}

// line adds what one transcript line contributes to msgs. ok is false when
// the line is not JSON; lines that are JSON but not conversation are fine.
func (p *parser) line(msgs []Message, b []byte, off, end int64) ([]Message, bool) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return msgs, true
	}
	if !valid(b) {
		return msgs, false
	}
	var typ, uuid, ts, cwd, message, promptID, sessionID, requestSessionID, origin, promptSource []byte
	var skip bool
	eachField(b, func(k, v []byte) {
		switch string(k) {
		case "type":
			typ = v
		case "uuid":
			uuid = v
		case "timestamp":
			ts = v
		case "cwd":
			cwd = v
		case "message":
			message = v
		case "promptId":
			promptID = v
		case "sessionId":
			sessionID = v
		case "requestSessionId":
			requestSessionID = v
		case "origin":
			origin = v
		case "promptSource":
			promptSource = v
		// Sidechains are sub-agent traffic, meta lines are text Claude Code
		// (or a hook) put in the user's name, compact summaries restate the
		// conversation: none of them is something the user or the model said.
		case "isSidechain", "isMeta", "isCompactSummary":
			skip = skip || isTrue(v)
		}
	})
	role := str(typ)
	if p.head && role == "queue-operation" && p.copiedBefore.IsZero() {
		if t, err := time.Parse(time.RFC3339, str(ts)); err == nil {
			p.copiedBefore = t
		}
	}
	if role != "user" && role != "assistant" || skip {
		return msgs, true
	}
	if rs := str(requestSessionID); rs != "" && rs != str(sessionID) {
		p.copied++ // the model answered this in another session
		return msgs, true
	}
	if p.head {
		if p.copiedBefore.IsZero() {
			p.head = false // conversation before any queue-operation: not a forked file
		} else if t, err := time.Parse(time.RFC3339, str(ts)); err == nil && t.Before(p.copiedBefore) {
			p.copied++
			return msgs, true
		}
	}
	var id, content []byte
	eachField(message, func(k, v []byte) {
		switch string(k) {
		case "id":
			id = v
		case "content":
			content = v
		}
	})
	m := Message{Offset: off, End: end, Role: role}
	if role == "assistant" {
		m.Blocks = p.assistantBlocks(content)
	} else {
		m.Blocks = p.userBlocks(content)
		for _, b := range m.Blocks {
			if b.Kind == KindText {
				m.Prompt = true
				break
			}
		}
	}
	if len(m.Blocks) == 0 {
		return msgs, true
	}
	if role == "assistant" {
		m.MessageID = str(id)
	} else if m.Prompt {
		m.PromptID = str(promptID)
		m.Origin = originOf(origin, promptSource)
		if p.head {
			// The file's first prompt of its own: no copies after it.
			p.head, p.copiedBefore = false, time.Time{}
		}
	}
	m.UUID, m.CWD = str(uuid), str(cwd)
	if t, err := time.Parse(time.RFC3339, str(ts)); err == nil {
		m.Timestamp = t
	}
	return appendMessage(msgs, m), true
}

// appendMessage adds m to msgs, merging it into the last message when both
// are lines of one assistant message: Claude Code may write each content
// block of a reply as its own line. A block a later line repeats is kept
// once, so that a client writing a message cumulatively does not double it.
// Read and a caller joining two reads merge the same way.
func appendMessage(msgs []Message, m Message) []Message {
	if len(msgs) == 0 || m.Role != "assistant" || m.MessageID == "" {
		return append(msgs, m)
	}
	last := &msgs[len(msgs)-1]
	if last.Role != "assistant" || last.MessageID != m.MessageID {
		return append(msgs, m)
	}
	for _, b := range m.Blocks {
		if !hasBlock(last.Blocks, b) {
			last.Blocks = append(last.Blocks, b)
		}
	}
	last.End = m.End
	return msgs
}

func hasBlock(blocks []Block, b Block) bool {
	for _, o := range blocks {
		if o.Kind != b.Kind {
			continue
		}
		if b.Kind == KindToolUse && b.ToolUseID != "" {
			if o.ToolUseID == b.ToolUseID {
				return true
			}
			continue
		}
		if o == b {
			return true
		}
	}
	return false
}

// rawBlock holds the fields of a content block that some kind of block
// uses, still raw: each is decoded only by the kind that needs it.
type rawBlock struct {
	typ, text, id, name, input, toolUseID, content, isError []byte
}

// eachBlock calls fn for each block of an array content.
func eachBlock(content []byte, fn func(*rawBlock)) {
	eachElem(content, func(e []byte) {
		var b rawBlock
		eachField(e, func(k, v []byte) {
			switch string(k) {
			case "type":
				b.typ = v
			case "text":
				b.text = v
			case "id":
				b.id = v
			case "name":
				b.name = v
			case "input":
				b.input = v
			case "tool_use_id":
				b.toolUseID = v
			case "content":
				b.content = v
			case "is_error":
				b.isError = v
			}
		})
		fn(&b)
	})
}

func (p *parser) userBlocks(content []byte) []Block {
	if len(content) > 0 && content[0] == '"' {
		if t, ok := userText(str(content)); ok {
			return []Block{{Kind: KindText, Text: t}}
		}
		return nil
	}
	var out []Block
	eachBlock(content, func(rb *rawBlock) {
		switch str(rb.typ) {
		case "text":
			if t, ok := userText(str(rb.text)); ok {
				out = append(out, Block{Kind: KindText, Text: t})
			}
		case "tool_result":
			t := p.toolResultText(rb.content)
			if inject.Contains(t) {
				if t = inject.Strip(t); t == "" {
					return
				}
			}
			out = append(out, Block{Kind: KindToolResult, Text: t, ToolUseID: str(rb.toolUseID), IsError: isTrue(rb.isError)})
		}
	})
	return out
}

func (p *parser) assistantBlocks(content []byte) []Block {
	if len(content) > 0 && content[0] == '"' {
		if t, ok := assistantText(str(content)); ok {
			return []Block{{Kind: KindText, Text: t}}
		}
		return nil
	}
	var out []Block
	eachBlock(content, func(rb *rawBlock) {
		switch str(rb.typ) {
		case "text":
			if t, ok := assistantText(str(rb.text)); ok {
				out = append(out, Block{Kind: KindText, Text: t})
			}
		case "tool_use":
			name := str(rb.name)
			t := renderToolInput(name, rb.input, p.opt.MaxToolInput)
			if inject.Contains(t) {
				t = inject.Strip(t)
			}
			out = append(out, Block{Kind: KindToolUse, Text: t, Tool: name, ToolUseID: str(rb.id)})
		}
		// thinking and redacted_thinking are the model's scratch work, not
		// what it told the user; unknown types are not conversation we know.
	})
	return out
}

// toolResultText decodes a tool_result's content (a string or blocks)
// keeping at most MaxToolResult bytes of it, head and tail.
func (p *parser) toolResultText(content []byte) string {
	head := p.opt.MaxToolResult / 2
	c := clip{headMax: head, tailMax: p.opt.MaxToolResult - head}
	if len(content) > 0 && content[0] == '"' {
		unquoteTo(content, &c)
		return stripReminders(c.String())
	}
	n := 0
	eachElem(content, func(e []byte) {
		var typ, text, toolName []byte
		eachField(e, func(k, v []byte) {
			switch string(k) {
			case "type":
				typ = v
			case "text":
				text = v
			case "tool_name":
				toolName = v
			}
		})
		var piece string
		switch str(typ) {
		case "text":
		case "image":
			piece = "[image]"
		case "tool_reference":
			piece = "[tool " + str(toolName) + "]"
		default:
			return
		}
		if n > 0 {
			c.writeByte('\n')
		}
		n++
		if piece != "" {
			c.write([]byte(piece))
		} else {
			unquoteTo(text, &c)
		}
	})
	return stripReminders(c.String())
}

// localCommandPrefixes start the user lines Claude Code writes around a
// slash command or a "!" shell escape run locally: the user did not say them
// to the model.
var localCommandPrefixes = []string{
	"<command-name>",
	"<command-message>",
	"<command-args>",
	"<local-command-stdout>",
	"<local-command-stderr>",
	"<local-command-caveat>",
	"Caveat: The messages below were generated by the user while running local commands",
}

// userText cleans the text of a user line; ok is false when nothing of it
// is the user's own words.
func userText(s string) (string, bool) {
	s = strings.TrimSpace(stripReminders(inject.Strip(s)))
	if s == "" {
		return "", false
	}
	if strings.HasPrefix(s, "[Request interrupted by user") {
		return "", false
	}
	for _, p := range localCommandPrefixes {
		if strings.HasPrefix(s, p) {
			return "", false
		}
	}
	if isHookOutput(s) {
		return "", false
	}
	return s, true
}

func assistantText(s string) (string, bool) {
	s = strings.TrimSpace(inject.Strip(s))
	// Some Claude Code versions write "(no content)" for a reply that had
	// only thinking or only tool calls: it is nothing the model said.
	if s == "" || s == "(no content)" {
		return "", false
	}
	return s, true
}

// isHookOutput reports text that is a hook's output as Claude Code frames it
// for the model ("UserPromptSubmit hook success: …", "SessionStart:startup
// hook success: …"): some versions record it as a user line, and it may be
// engram's own injected context.
func isHookOutput(s string) bool {
	for _, ev := range []string{"UserPromptSubmit", "SessionStart"} {
		rest, ok := strings.CutPrefix(s, ev)
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, ":") { // SessionStart:startup
			if i := strings.IndexByte(rest, ' '); i > 0 {
				rest = rest[i:]
			}
		}
		if strings.HasPrefix(rest, " hook success:") || strings.HasPrefix(rest, " hook additional context:") {
			return true
		}
	}
	return false
}

const (
	reminderOpen  = "<system-reminder>"
	reminderClose = "</system-reminder>"
)

// stripReminders removes the <system-reminder> spans Claude Code appends to
// user text and tool results (file-change notes, rendered hook context): they
// are the client talking to the model. An unterminated span is kept: unlike
// engram's framing it may be a truncation artefact of real output.
func stripReminders(s string) string {
	if !strings.Contains(s, reminderOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, reminderOpen)
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], reminderClose)
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+len(reminderClose):]
	}
	b.WriteString(s)
	return strings.TrimSpace(b.String())
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// originOf reads who wrote a user line: "" for the user (an origin of kind
// "human", or none), else the origin's kind, or "system" for a line whose
// promptSource is "system".
func originOf(origin, promptSource []byte) string {
	var kind string
	eachField(origin, func(k, v []byte) {
		if string(k) == "kind" {
			kind = str(v)
		}
	})
	switch {
	case kind != "" && kind != "human":
		return kind
	case kind == "" && str(promptSource) == "system":
		return "system"
	}
	return ""
}
