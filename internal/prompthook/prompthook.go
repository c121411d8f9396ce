// Package prompthook is engram-hook-userprompt: Claude Code's
// UserPromptSubmit hook. It is on the user's critical path, so it only reads
// what the worker precomputed plus one selective FTS query, under a hard
// deadline; past the deadline, or on any error, it prints nothing. It never
// writes to the database.
package prompthook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/store"
)

// Output is the hook's JSON answer.
type Output struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Run handles one UserPromptSubmit invocation. It writes at most one JSON
// object to stdout and nothing else.
func Run(ctx context.Context, cfg config.Config, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.PromptHookDeadline)
	defer cancel()
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	if recall.Trivial(in.Prompt) {
		return nil
	}
	session := in.SessionID
	if hookio.ValidSessionID(session) != nil {
		session = "" // still recall, without the session's files
	}
	done := make(chan answer, 1)
	go func() { done <- compose(ctx, cfg, in, session, start) }()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		return fmt.Errorf("deadline of %v passed; printed nothing", cfg.PromptHookDeadline)
	}
	if a.err != nil || a.text == "" {
		return a.err
	}
	var out Output
	out.HookSpecificOutput.HookEventName = "UserPromptSubmit"
	out.HookSpecificOutput.AdditionalContext = a.text
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if err := recall.RecordInjected(cfg.Home, session, a.ids, start); err != nil {
		log.Warn("record injected ids", "err", err)
	}
	for _, p := range a.problems {
		log.Warn("recall degraded", "problem", p)
	}
	log.Debug("recalled", "ids", a.ids, "ms", time.Since(start).Milliseconds())
	return nil
}

type answer struct {
	text     string
	ids      []string
	problems []string
	err      error
}

func compose(ctx context.Context, cfg config.Config, in hookio.Input, session string, now time.Time) answer {
	root := ""
	if filepath.IsAbs(in.CWD) {
		root, _ = gitroot.Find(in.CWD)
	}
	var searcher recall.Searcher
	db, err := store.Open(ctx, cfg.DBPath(), store.Options{ReadOnly: true, BusyTimeout: 50 * time.Millisecond})
	var problems []string
	if err == nil {
		defer db.Close()
		searcher = db
	} else {
		problems = append(problems, "store: "+err.Error())
	}
	r := recall.New(cfg.Home, searcher)
	res := r.Recall(ctx, recall.Query{Text: in.Prompt, ProjectPath: root, SessionID: session, Now: now,
		Exclude: recall.Injected(cfg.Home, session)})
	text, ids := recall.Format(res, recall.DefaultLimits, now)
	return answer{text: text, ids: ids, problems: append(problems, res.Problems...)}
}
