// Package prompthook is engram-hook-userprompt: Claude Code's
// UserPromptSubmit hook. It is on the user's critical path, so it only reads
// what the worker precomputed (the recollection files and the search index),
// under a hard deadline; past the deadline, or on any error, it prints
// nothing. It does not open the database: the binary does not even link
// SQLite, which alone would cost more than the rest of a prompt.
package prompthook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/hookio"
	"github.com/engram-memory/engram/internal/notice"
	"github.com/engram-memory/engram/internal/recall"
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
	in, err := hookio.Read(stdin)
	if err != nil {
		return err
	}
	return Answer(ctx, cfg, in, start, stdout, log)
}

// Skip reports whether an input gets nothing: a trivial prompt ("yes",
// "go on"). The hook's main asks before loading its configuration.
func Skip(in hookio.Input) bool { return recall.Trivial(in.Prompt) }

// Answer is Run for an input already read, at start.
func Answer(ctx context.Context, cfg config.Config, in hookio.Input, start time.Time, stdout io.Writer, log *slog.Logger) error {
	if Skip(in) {
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(cfg.PromptHookDeadline))
	defer cancel()
	session := in.SessionID
	if hookio.ValidSessionID(session) != nil {
		session = "" // still recall, without the session's files
	}
	done := make(chan answer, 1)
	go func() { done <- guarded(func() answer { return compose(ctx, cfg, in, session, start) }) }()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		return fmt.Errorf("deadline of %v passed; printed nothing", cfg.PromptHookDeadline)
	}
	for _, p := range a.problems {
		log.Warn("recall degraded", "problem", p)
	}
	if a.err != nil {
		return a.err
	}
	// A worker that lags, once a day (the Stop hook leaves the notice).
	text, told := a.text, notice.Due(cfg.Home, start)
	if told != "" {
		if text != "" {
			text += "\n\n"
		}
		text += told
	}
	// Beliefs waiting for the user's review, once a day (the worker
	// leaves the count).
	reviewTold := notice.ReviewDue(cfg.Home, start)
	if reviewTold != "" {
		if text != "" {
			text += "\n\n"
		}
		text += reviewTold
	}
	if text == "" {
		return nil
	}
	var out Output
	out.HookSpecificOutput.HookEventName = "UserPromptSubmit"
	out.HookSpecificOutput.AdditionalContext = text
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if told != "" {
		if err := notice.Told(cfg.Home, start); err != nil {
			log.Warn("record the worker notice told", "err", err)
		}
	}
	if reviewTold != "" {
		if err := notice.ReviewTold(cfg.Home, start); err != nil {
			log.Warn("record the review notice told", "err", err)
		}
	}
	if err := recall.RecordInjected(cfg.Home, session, a.ids, start); err != nil {
		log.Warn("record injected ids", "err", err)
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
	ix := recall.OpenIndex(cfg.Home)
	defer ix.Close()
	r := recall.New(cfg.Home, ix)
	r.SkipUnknown = true
	var problems []string
	if err := r.UsePolicyFile(cfg.RecallPolicy); err != nil {
		problems = append(problems, err.Error())
	}
	if m := minilm.OpenInstalled(cfg.ModelDir(), cfg.SentenceEmbedder); m != nil {
		defer m.Close()
		r.Dense = m
	}
	res := r.Find(ctx, recall.Query{Text: in.Prompt, ProjectPath: root, SessionID: session, Now: now,
		Exclude: recall.Injected(cfg.Home, session)})
	text, ids := recall.Format(res, r.LimitsFor(res), now)
	return answer{text: text, ids: ids, problems: append(problems, res.Problems...)}
}

// guarded runs fn so that no bug of ours fails the prompt: a panic would
// end the process with exit code 2, which erases the user's prompt. The
// recollection files are mapped, so a fault reading them (a string left
// pointing into a file unmapped since, a file cut short under the mapping)
// is a panic too, not a crash (debug.SetPanicOnFault, which holds for the
// calling goroutine only: fn runs in it).
func guarded(fn func() answer) (a answer) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			a = answer{err: fmt.Errorf("recall panicked: %v", p)}
		}
	}()
	return fn()
}
