package anthropicstub

import (
	"fmt"
	"strings"
	"sync"
)

// Script is a Responder built from turns: "for the prompt containing X,
// call Bash with Y, then Write Z, then reply W".
//
// It is stateless with respect to the conversation: the turn is chosen by
// the text of the request's current prompt (the last user message that is
// not a tool result), and the step within the turn by how many tool
// results have come back since that prompt. A retried or repeated request
// therefore gets the same answer, and auxiliary requests never advance it.
//
//	sc := anthropicstub.NewScript()
//	sc.On("WORD1").Bash("echo hi > out.txt", "Write a file").Reply("Done WORD2.")
//	srv := anthropicstub.Start(t, sc.Respond)
type Script struct {
	mu       sync.Mutex
	turns    []*Turn
	problems []string

	// Default answers a prompt that no turn matches. Nil answers "OK."
	// and records a problem.
	Default Responder
}

// Turn is the scripted answer to one prompt: a list of steps, one per
// request of the turn.
type Turn struct {
	match string
	steps []Reply
}

// NewScript returns an empty script.
func NewScript() *Script { return &Script{} }

// On adds a turn for the prompt containing match. Turns are tried in the
// order they were added; the first whose match occurs in the prompt wins.
func (s *Script) On(match string) *Turn {
	t := &Turn{match: match}
	s.mu.Lock()
	s.turns = append(s.turns, t)
	s.mu.Unlock()
	return t
}

// Step appends an arbitrary reply.
func (t *Turn) Step(r Reply) *Turn {
	t.steps = append(t.steps, r)
	return t
}

// Bash appends a step that calls the Bash tool.
func (t *Turn) Bash(command, description string) *Turn { return t.Step(Bash(command, description)) }

// Write appends a step that calls the Write tool.
func (t *Turn) Write(path, content string) *Turn { return t.Step(Write(path, content)) }

// Tool appends a step that calls any tool.
func (t *Turn) Tool(name string, input any) *Turn { return t.Step(Call(name, input)) }

// Reply appends the final text step of the turn.
func (t *Turn) Reply(text string) *Turn { return t.Step(Text(text)) }

// Respond is the Script's Responder.
func (s *Script) Respond(r *Request) Reply {
	prompt := r.Prompt()
	s.mu.Lock()
	var turn *Turn
	for _, t := range s.turns {
		if strings.Contains(prompt, t.match) {
			turn = t
			break
		}
	}
	def := s.Default
	s.mu.Unlock()

	if turn == nil {
		if def != nil {
			return def(r)
		}
		s.problem("request #%d: no scripted turn matches prompt %q", r.Seq, trimForLog(prompt, 300))
		return Text("OK.")
	}
	step := r.ToolRounds()
	if step >= len(turn.steps) {
		s.problem("request #%d: turn %q has %d steps, client asked for step %d", r.Seq, turn.match, len(turn.steps), step+1)
		return Text("OK.")
	}
	return turn.steps[step]
}

func (s *Script) problem(format string, args ...any) {
	s.mu.Lock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
	s.mu.Unlock()
}

// Problems lists requests the script could not answer as written: prompts
// no turn matched, turns asked for more steps than they have. A test
// should fail when it is not empty.
func (s *Script) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}
