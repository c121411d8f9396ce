package main

import (
	"cmp"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/hookio"
)

// The entirecontext records: sessions/<id>/meta.json and
// sessions/<id>/transcript.jsonl, one JSON object per turn.
type ecMeta struct {
	ID          string `json:"id"`
	ProjectID   string `json:"project_id"`
	SessionType string `json:"session_type"`
	StartedAt   string `json:"started_at"`
	Cwd         string `json:"cwd"` // not in the records seen so far; used when present
}

type ecTurn struct {
	ID               string `json:"id"`
	SessionID        string `json:"session_id"`
	TurnNumber       int    `json:"turn_number"`
	UserMessage      string `json:"user_message"`
	AssistantSummary string `json:"assistant_summary"`
	Timestamp        string `json:"timestamp"`
}

// ConvertStats is what the converter did.
type ConvertStats struct {
	Sessions      int               `json:"sessions"`       // sessions converted
	Turns         int               `json:"turns"`          // user lines written
	Replies       int               `json:"replies"`        // assistant lines written (turns with a summary)
	SkippedTypes  map[string]int    `json:"skipped_types"`  // sessions of other types
	SkippedTurns  int               `json:"skipped_turns"`  // turns without a user message or a time
	EmptySessions int               `json:"empty_sessions"` // sessions left without a turn
	Projects      map[string]string `json:"projects"`       // project_id -> cwd given to its sessions
}

// ConvertEntireContext turns the records of dir/sessions/*/ (or dir/*/)
// whose session_type is in types into Claude Code transcripts under out,
// one <session>.jsonl each: per turn a user line (the user_message, at the
// turn's timestamp) and, when the record has an assistant_summary, an
// assistant line with it as text one second later (or halfway to the next
// turn, when that is sooner). A session's cwd is its meta's cwd when it has
// one; else the sessions of the project with the most sessions (of any type)
// get cwd, and those of any other project a sibling directory
// project-<first 8 characters of its id>.
func ConvertEntireContext(dir, out, cwd string, types []string) (ConvertStats, error) {
	st := ConvertStats{SkippedTypes: map[string]int{}, Projects: map[string]string{}}
	root := filepath.Join(dir, "sessions")
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		root = dir
	}
	metas, err := filepath.Glob(filepath.Join(root, "*", "meta.json"))
	if err != nil {
		return st, err
	}
	slices.Sort(metas)
	type session struct {
		meta  ecMeta
		turns []ecTurn
	}
	var sessions []session
	perProject := map[string]int{}
	for _, mp := range metas {
		var m ecMeta
		b, err := os.ReadFile(mp)
		if err != nil {
			return st, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return st, fmt.Errorf("%s: %w", mp, err)
		}
		if m.ID == "" {
			m.ID = filepath.Base(filepath.Dir(mp))
		}
		perProject[m.ProjectID]++ // every session counts towards the main project
		if !slices.Contains(types, m.SessionType) {
			st.SkippedTypes[cmp.Or(m.SessionType, "(none)")]++
			continue
		}
		if hookio.ValidSessionID(m.ID) != nil {
			return st, fmt.Errorf("%s: session id %q cannot name a transcript", mp, m.ID)
		}
		data, err := os.ReadFile(filepath.Join(filepath.Dir(mp), "transcript.jsonl"))
		if err != nil && !os.IsNotExist(err) {
			return st, err
		}
		var turns []ecTurn
		for i, l := range splitLines(data) {
			var t ecTurn
			if err := json.Unmarshal(l, &t); err != nil {
				return st, fmt.Errorf("%s line %d: %w", filepath.Join(filepath.Dir(mp), "transcript.jsonl"), i+1, err)
			}
			turns = append(turns, t)
		}
		slices.SortStableFunc(turns, func(a, b ecTurn) int { return cmp.Compare(a.TurnNumber, b.TurnNumber) })
		sessions = append(sessions, session{m, turns})
	}
	main := ""
	for p, n := range perProject {
		if n > perProject[main] || n == perProject[main] && p < main {
			main = p
		}
	}
	cwdOf := func(m ecMeta) string {
		if m.Cwd != "" {
			return m.Cwd
		}
		if m.ProjectID == main {
			st.Projects[m.ProjectID] = cwd
			return cwd
		}
		c := filepath.Join(filepath.Dir(cwd), "project-"+shortID(m.ProjectID))
		st.Projects[m.ProjectID] = c
		return c
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return st, err
	}
	for _, s := range sessions {
		c := cwdOf(s.meta)
		w := &ccWriter{sid: s.meta.ID, cwd: c}
		for i, t := range s.turns {
			at, err := parseTime(t.Timestamp)
			if err != nil || strings.TrimSpace(t.UserMessage) == "" {
				st.SkippedTurns++
				continue
			}
			w.user(t, at)
			st.Turns++
			if strings.TrimSpace(t.AssistantSummary) == "" {
				continue
			}
			reply := at.Add(time.Second)
			if i+1 < len(s.turns) {
				if next, err := parseTime(s.turns[i+1].Timestamp); err == nil && next.After(at) && next.Sub(at) < 2*time.Second {
					reply = at.Add(next.Sub(at) / 2)
				}
			}
			w.assistant(t, reply)
			st.Replies++
		}
		if len(w.lines) == 0 {
			st.EmptySessions++
			continue
		}
		if err := os.WriteFile(filepath.Join(out, s.meta.ID+".jsonl"), []byte(strings.Join(w.lines, "\n")+"\n"), 0o600); err != nil {
			return st, err
		}
		st.Sessions++
	}
	return st, nil
}

func shortID(id string) string {
	id = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, id)
	return id[:min(8, len(id))]
}

// parseTime reads the records' times ("2026-07-10T15:25:45.803275+00:00",
// or without the zone, taken as UTC).
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q", s)
}

// ccWriter writes transcript lines in Claude Code's format (2.1.330's
// fields), with ids derived from the records so that a conversion is
// reproducible.
type ccWriter struct {
	sid, cwd, parent string
	lines            []string
}

// nameUUID is a version 5 style UUID of name.
func nameUUID(name string) string {
	h := sha1.Sum([]byte("engram-replay:" + name))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

func (w *ccWriter) add(uuid string, line map[string]any) {
	line["parentUuid"] = nil
	if w.parent != "" {
		line["parentUuid"] = w.parent
	}
	line["uuid"] = uuid
	line["isSidechain"] = false
	line["userType"] = "external"
	line["entrypoint"] = "cli"
	line["cwd"] = w.cwd
	line["sessionId"] = w.sid
	line["version"] = "2.1.330"
	b, _ := json.Marshal(line)
	w.lines = append(w.lines, string(b))
	w.parent = uuid
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func (w *ccWriter) user(t ecTurn, at time.Time) {
	key := cmp.Or(t.ID, fmt.Sprintf("%s/%d", w.sid, t.TurnNumber))
	w.add(nameUUID(key+"/user"), map[string]any{
		"type": "user", "promptId": nameUUID(key + "/prompt"),
		"message":   map[string]any{"role": "user", "content": t.UserMessage},
		"timestamp": stamp(at), "permissionMode": "default",
	})
}

func (w *ccWriter) assistant(t ecTurn, at time.Time) {
	key := cmp.Or(t.ID, fmt.Sprintf("%s/%d", w.sid, t.TurnNumber))
	w.add(nameUUID(key+"/assistant"), map[string]any{
		"type": "assistant",
		"message": map[string]any{
			"id": "msg_" + strings.ReplaceAll(nameUUID(key+"/msg"), "-", ""), "type": "message", "role": "assistant",
			"content":     []any{map[string]any{"type": "text", "text": t.AssistantSummary}},
			"stop_reason": "end_turn", "stop_sequence": nil,
		},
		"timestamp": stamp(at),
	})
}
