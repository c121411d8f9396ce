// Package transcript reads Claude Code session transcripts (JSONL): from a
// byte offset to the last complete line, keeping the conversation only and
// dropping everything Claude Code adds around it.
package transcript

import "time"

// Block kinds of a Message.
const (
	KindText       = "text"
	KindToolUse    = "tool_use"
	KindToolResult = "tool_result"
)

// Message is one conversational line of a transcript (or, for assistant
// messages, several consecutive lines sharing message.id).
type Message struct {
	Offset    int64  // byte offset of its first line
	End       int64  // byte offset just past its last line's newline
	Role      string // "user" or "assistant"
	Prompt    bool   // a real user prompt: the start of a turn
	MessageID string // assistant message.id
	// PromptID is a prompt's promptId: the prompt_id of the Stop hook
	// input of its turn (Claude Code 2.1.330; empty in older versions).
	PromptID string `json:",omitempty"`
	// Origin says who wrote a user line the client did not take from the
	// user's keyboard: the kind of its "origin" ("peer": another session's
	// message, "task-notification": a background task's) or "system" for
	// a "promptSource" of system; "" for the user's own (and for clients
	// that record neither).
	Origin    string    `json:",omitempty"`
	UUID      string    // uuid of its first line
	Timestamp time.Time // timestamp of its first line
	CWD       string
	Blocks    []Block
}

// Block is one kept piece of a message.
type Block struct {
	Kind      string `json:"kind"`           // text, tool_use or tool_result
	Text      string `json:"text,omitempty"` // text; rendered tool input; truncated tool result
	Tool      string `json:"tool,omitempty"` // tool name for tool_use
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Options bound what the parser keeps.
type Options struct {
	MaxToolResult int   // bytes of a tool result kept (head and tail); default 2000
	MaxToolInput  int   // bytes of a rendered tool input kept; default 300
	MaxLine       int64 // longer lines are skipped without being buffered; default 32 MiB
	// CopiedBefore is Result.CopiedBefore of the read before this one.
	CopiedBefore time.Time
}

// Result is what one read produced.
type Result struct {
	Messages []Message
	// End is the offset just past the last complete line read: the next
	// read starts there. A half-written last line is left for next time.
	End int64
	// Skipped counts complete lines dropped because they were over MaxLine
	// or not valid JSON.
	Skipped int
	// CopiedBefore is set while the file may still hold lines copied from
	// the session it was forked from: a session continued with --resume
	// and --fork-session (and, in some versions, a plain --resume) starts
	// its file with the old conversation, copied line for line with the
	// old timestamps, right after the queue-operation of its first prompt.
	// A conversation line older than that queue-operation, before the
	// file's first prompt of its own, is such a copy: it was captured in
	// its own session and is skipped here, as is an assistant line whose
	// requestSessionId names another session. Pass it to the next read.
	CopiedBefore time.Time
	// Copied counts the copied lines skipped.
	Copied int
}
