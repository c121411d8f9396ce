// Package hookio reads the JSON that Claude Code gives a hook on stdin,
// leniently (fields come and go between client versions), and validates the
// values engram later uses in file names and paths.
package hookio

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// MaxInput bounds how much of stdin a hook reads: the Stop input carries the
// last reply in full, a prompt can be large, but neither needs more.
const MaxInput = 16 << 20

// Input is the subset of a hook's input engram uses.
type Input struct {
	SessionID            string
	TranscriptPath       string
	CWD                  string
	HookEventName        string
	Prompt               string
	PromptID             string
	StopHookActive       bool
	LastAssistantMessage string
}

// ErrInput marks input that is not usable (not JSON, missing or bad fields).
var ErrInput = errors.New("hook input")

// Read decodes one hook input from r. Unknown fields are ignored, and a
// known field of an unexpected type is treated as absent rather than failing
// the whole input.
func Read(r io.Reader) (Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return Input{}, fmt.Errorf("%w: read: %v", ErrInput, err)
	}
	if len(data) > MaxInput {
		return Input{}, fmt.Errorf("%w: larger than %d bytes", ErrInput, MaxInput)
	}
	return Parse(data)
}

// Parse decodes one hook input.
func Parse(data []byte) (Input, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		return Input{}, fmt.Errorf("%w: not a JSON object: %.200q", ErrInput, data)
	}
	str := func(k string) string {
		var s string
		if v, ok := raw[k]; ok && json.Unmarshal(v, &s) == nil {
			return s
		}
		return ""
	}
	in := Input{
		SessionID:            str("session_id"),
		TranscriptPath:       str("transcript_path"),
		CWD:                  str("cwd"),
		HookEventName:        str("hook_event_name"),
		Prompt:               str("prompt"),
		PromptID:             str("prompt_id"),
		LastAssistantMessage: str("last_assistant_message"),
	}
	if v, ok := raw["stop_hook_active"]; ok {
		var b bool
		if json.Unmarshal(v, &b) == nil {
			in.StopHookActive = b
		} else {
			in.StopHookActive = strings.EqualFold(strings.Trim(string(v), `"`), "true")
		}
	}
	return in, nil
}

// ValidSessionID accepts the ids Claude Code uses (UUIDs) and anything of
// the same safe alphabet: no dots, no separators, so that an id can be part
// of a file name.
func ValidSessionID(id string) error {
	// A loop, not a regexp: compiling one costs a hook process ~0.5 ms at start.
	ok := len(id) > 0 && len(id) <= 128 && id[0] != '-' && id[0] != '_'
	for i := 0; ok && i < len(id); i++ {
		c := id[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	if !ok {
		return fmt.Errorf("%w: session_id %q: want 1-128 letters, digits, '-' or '_'", ErrInput, id)
	}
	return nil
}

// ValidTranscriptPath checks that p names the session's transcript: an
// absolute, clean path to a regular file called <session_id>.jsonl. When
// the path is well-formed but the file does not exist (yet), the error
// wraps fs.ErrNotExist.
func ValidTranscriptPath(p, sessionID string) error {
	if p == "" {
		return fmt.Errorf("%w: transcript_path is empty", ErrInput)
	}
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return fmt.Errorf("%w: transcript_path %q: want a clean absolute path", ErrInput, p)
	}
	if filepath.Base(p) != sessionID+".jsonl" {
		return fmt.Errorf("%w: transcript_path %q: file name is not %s.jsonl", ErrInput, p, sessionID)
	}
	st, err := os.Stat(p)
	if err != nil {
		// %w twice: callers tell a transcript not written yet (fs.ErrNotExist)
		// from a bad input.
		return fmt.Errorf("%w: transcript_path %q: %w", ErrInput, p, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w: transcript_path %q: not a regular file", ErrInput, p)
	}
	return nil
}

// InternalCallEnv marks the environment of a Claude Code process that
// engram's worker started for its own model calls (ENGRAM_LLM=claude).
// engram's hooks do nothing in such a process: its exchange is engram's
// own work, never a memory.
const InternalCallEnv = "ENGRAM_INTERNAL_CALL"

// Internal reports whether this process runs inside one of engram's own
// model calls.
func Internal() bool { return os.Getenv(InternalCallEnv) != "" }
