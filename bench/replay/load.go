package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/transcript"
)

// Session is one Claude Code session as the replay writes it: its lines in
// file order, split into turns.
type Session struct {
	ID    string
	Cwd   string   // the cwd its lines name (the original machine's path)
	Files []string // the input files it came from
	Lines [][]byte // raw lines, without their newline
	Turns []*Turn
}

// Turn is one real user prompt and every line up to the next one.
type Turn struct {
	Session    *Session
	Index      int // within the session
	From, To   int // line range [From, To)
	PromptLine int
	Prompt     string // the prompt as the client hands it to UserPromptSubmit
	PromptID   string // the prompt line's promptId ("" in older clients)
	At         time.Time
	Reply      string // the turn's last assistant text: the Stop input's last_assistant_message
}

// Corpus is what was read from the input files.
type Corpus struct {
	Sessions []*Session
	Files    int // *.jsonl files found
	// Skipped counts files that are not Claude Code transcripts (no user or
	// assistant line with a sessionId: another agent's format, a compact
	// copy) by reason.
	Skipped map[string]int
	// Snapshots counts files dropped because another file of the same
	// session holds all their lines first (a transcript copied at several
	// points of its life); Merged counts files whose lines were not such a
	// prefix and were merged into the session by uuid.
	Snapshots, Merged int
}

// lineHead is what the loader reads of a line.
type lineHead struct {
	Type      string          `json:"type"`
	SessionID string          `json:"sessionId"`
	UUID      string          `json:"uuid"`
	Cwd       string          `json:"cwd"`
	Timestamp string          `json:"timestamp"`
	PromptID  string          `json:"promptId"`
	Message   json.RawMessage `json:"message"`
}

// LoadDir reads every *.jsonl under dir (recursively) as a Claude Code
// transcript. Files of the same session (snapshots of one transcript) are
// folded into one session.
func LoadDir(dir string) (*Corpus, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	c := &Corpus{Files: len(paths), Skipped: map[string]int{}}
	type file struct {
		path  string
		lines [][]byte
		cwd   string
	}
	bySession := map[string][]file{}
	var order []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		lines := splitLines(data)
		sid, cwd, ok := sessionOf(lines)
		if !ok {
			c.Skipped["not a Claude Code transcript"]++
			continue
		}
		if _, seen := bySession[sid]; !seen {
			order = append(order, sid)
		}
		bySession[sid] = append(bySession[sid], file{p, lines, cwd})
	}
	for _, sid := range order {
		files := bySession[sid]
		// Longest first; a file that is a prefix of it is an earlier
		// snapshot of the same transcript.
		slices.SortStableFunc(files, func(a, b file) int { return cmp.Compare(len(b.lines), len(a.lines)) })
		s := &Session{ID: sid, Cwd: files[0].cwd, Files: []string{files[0].path}, Lines: files[0].lines}
		for _, f := range files[1:] {
			s.Files = append(s.Files, f.path)
			if isPrefix(f.lines, s.Lines) {
				c.Snapshots++
				continue
			}
			c.Merged++
			s.Lines = mergeLines(s.Lines, f.lines)
		}
		if err := s.split(); err != nil {
			return nil, fmt.Errorf("session %s: %w", sid, err)
		}
		if len(s.Turns) == 0 {
			c.Skipped["no real user prompt"]++
			continue
		}
		c.Sessions = append(c.Sessions, s)
	}
	return c, nil
}

// splitLines splits a file into its non-blank lines (a last line without
// its newline included).
func splitLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// sessionOf names the session of a file: the sessionId most of its user
// and assistant lines carry, and the cwd of the first of them. ok is false
// for a file with none (not Claude Code's format).
func sessionOf(lines [][]byte) (sid, cwd string, ok bool) {
	count := map[string]int{}
	for _, l := range lines {
		var h lineHead
		if json.Unmarshal(l, &h) != nil || h.SessionID == "" || h.Type != "user" && h.Type != "assistant" {
			continue
		}
		count[h.SessionID]++
		if cwd == "" {
			cwd = h.Cwd
		}
		if count[h.SessionID] > count[sid] || count[h.SessionID] == count[sid] && h.SessionID < sid {
			sid = h.SessionID
		}
	}
	return sid, cwd, sid != ""
}

func isPrefix(short, long [][]byte) bool {
	if len(short) > len(long) {
		return false
	}
	for i := range short {
		if !bytes.Equal(short[i], long[i]) {
			return false
		}
	}
	return true
}

// mergeLines appends to base the lines of other it lacks (by uuid, or the
// whole line for lines without one).
func mergeLines(base, other [][]byte) [][]byte {
	key := func(l []byte) string {
		var h lineHead
		if json.Unmarshal(l, &h) == nil && h.UUID != "" {
			return h.UUID
		}
		return string(l)
	}
	seen := map[string]bool{}
	for _, l := range base {
		seen[key(l)] = true
	}
	for _, l := range other {
		if k := key(l); !seen[k] {
			seen[k] = true
			base = append(base, l)
		}
	}
	return base
}

// split cuts the session into turns where engram's own transcript reader
// sees a real user prompt (a user line with text of the user's own: not a
// tool result, meta line, sidechain, local command, or a line copied from
// the session it was forked from). A turn begins at its prompt line, or at
// the queue-operation and file-history-snapshot lines just before it; the
// lines before the first prompt go with the first turn.
func (s *Session) split() error {
	var buf bytes.Buffer
	offsets := map[int64]int{}
	for i, l := range s.Lines {
		offsets[int64(buf.Len())] = i
		buf.Write(l)
		buf.WriteByte('\n')
	}
	res, err := transcript.Read(bytes.NewReader(buf.Bytes()), 0, transcript.Options{})
	if err != nil {
		return err
	}
	var turns []*Turn
	for _, m := range res.Messages {
		if m.Role == "assistant" && len(turns) > 0 {
			for _, b := range m.Blocks {
				if b.Kind == transcript.KindText {
					turns[len(turns)-1].Reply = b.Text
				}
			}
		}
		if !m.Prompt {
			continue
		}
		i, ok := offsets[m.Offset]
		if !ok {
			return fmt.Errorf("prompt at offset %d is not at a line start", m.Offset)
		}
		t := &Turn{Session: s, Index: len(turns), PromptLine: i, From: i}
		var h lineHead
		_ = json.Unmarshal(s.Lines[i], &h)
		t.Prompt, t.PromptID = promptText(h.Message), h.PromptID
		t.At = m.Timestamp
		if t.Index == 0 {
			t.From = 0
		} else {
			for t.From > turns[t.Index-1].PromptLine+1 && leadsPrompt(s.Lines[t.From-1]) {
				t.From--
			}
			turns[t.Index-1].To = t.From
			// A turn is not earlier than the one before it: the replay
			// keeps each session's file order.
			if t.At.Before(turns[t.Index-1].At) {
				t.At = turns[t.Index-1].At
			}
		}
		turns = append(turns, t)
	}
	if len(turns) > 0 {
		turns[len(turns)-1].To = len(s.Lines)
	}
	s.Turns = turns
	return nil
}

func leadsPrompt(line []byte) bool {
	var h lineHead
	if json.Unmarshal(line, &h) != nil {
		return false
	}
	return h.Type == "queue-operation" || h.Type == "file-history-snapshot"
}

// promptText is the text of a prompt line's message as the user sent it:
// a string content, or its text blocks joined by newlines.
func promptText(message json.RawMessage) string {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(message, &m) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Order is every turn of every session in the order of their prompts'
// times; each session's turns stay in file order (their times never go
// back), and ties go to the session read first.
func Order(sessions []*Session) []*Turn {
	rank := map[*Session]int{}
	var all []*Turn
	for i, s := range sessions {
		rank[s] = i
		all = append(all, s.Turns...)
	}
	slices.SortStableFunc(all, func(a, b *Turn) int {
		return cmp.Or(a.At.Compare(b.At), cmp.Compare(rank[a.Session], rank[b.Session]), cmp.Compare(a.Index, b.Index))
	})
	return all
}
