package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the replay's store, read for when each memory came to be

	"github.com/engram-memory/engram/bench/internal/benchkit"
	"github.com/engram-memory/engram/internal/gitroot"
	"github.com/engram-memory/engram/internal/recall"
)

// Real coding prompts of their own project's store (source "own"): the
// store a bench/replay run left (-replay DIR: its home/ and fs/), asked
// each prompt of the same input (-replay-prompts: bench/replay -prompts)
// as the store was when the prompt was typed: every memory that came to be
// at or after the prompt's time is excluded (an episode by when it
// happened, a belief by its first evidence), the prompt's own turn among
// them.
//
// Labels: a memory is relevant when a hand label (-replay-labels, the
// label-sample files of bench/replay, labels/*.jsonl) calls a bite of it
// useful for the prompt; every other memory is not. That default is what
// the labels measured: of 200 injected bites of a replay of these sessions,
// 196 were noise and 1 stale, and a candidate the gate did not pass is
// less likely to help than one it did.

type ownPrompt struct {
	session, text, cwd string
	at                 time.Time
	fit                bool
}

// promptLine is one line of bench/replay -prompts.
type promptLine struct {
	Session, Prompt, Cwd string
	At                   time.Time
}

func loadOwnPrompts(path string) ([]ownPrompt, error) {
	lines, err := benchkit.ReadJSONL[promptLine](path)
	if err != nil {
		return nil, err
	}
	var out []ownPrompt
	for _, l := range lines {
		p := strings.TrimSpace(l.Prompt)
		if p == "" || recall.Trivial(p) {
			continue
		}
		if l.Cwd == "" {
			return nil, fmt.Errorf("%s: a prompt without its cwd (bench/replay -prompts of this tree writes it)", path)
		}
		out = append(out, ownPrompt{session: l.Session, text: p, cwd: l.Cwd, at: l.At, fit: sessionFit(l.Session)})
	}
	return out, nil
}

// sessionFit is the split of coding prompts: by a hash of their session.
func sessionFit(session string) bool {
	h := fnv.New32a()
	h.Write([]byte(session))
	return h.Sum32()%2 == 0
}

// usefulLabels maps a prompt to the normalised text of the bites labelled
// useful for it.
func usefulLabels(files string) (map[string][]string, int, error) {
	out := map[string][]string{}
	n := 0
	for _, path := range strings.Split(files, ",") {
		if path == "" {
			continue
		}
		lines, err := benchkit.ReadJSONL[struct{ Prompt, Bite, Label string }](path)
		if err != nil {
			return nil, 0, err
		}
		for _, l := range lines {
			if l.Label == "useful" {
				p := strings.TrimSpace(l.Prompt)
				out[p] = append(out[p], benchkit.Normalize(l.Bite))
				n++
			}
		}
	}
	return out, n, nil
}

// born is when each memory of a store came to be, in Unix milliseconds.
func born(ctx context.Context, dbPath string) (map[string]int64, error) {
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	out := map[string]int64{}
	rows, err := db.QueryContext(ctx, "SELECT id, occurred_at FROM episodes")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = at
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	brows, err := db.QueryContext(ctx, "SELECT id, supporting_episodes, created_at FROM beliefs")
	if err != nil {
		return nil, err
	}
	defer brows.Close()
	for brows.Next() {
		var id, sup string
		var created int64
		if err := brows.Scan(&id, &sup, &created); err != nil {
			return nil, err
		}
		var eps []string
		_ = json.Unmarshal([]byte(sup), &eps)
		first := int64(0)
		for _, e := range eps {
			if at, ok := out[e]; ok && (first == 0 || at < first) {
				first = at
			}
		}
		if first == 0 {
			first = created
		}
		out[id] = first
	}
	return out, brows.Err()
}

// askOwn asks every prompt of its own project's store in the replay dir.
func askOwn(ctx context.Context, dir, promptsPath, labelFiles string, ask func(engram, project, source, id, text string, fit bool,
	exclude map[string]bool, label func(c *recall.Candidate) bool)) error {
	if promptsPath == "" {
		return errors.New("-replay wants -replay-prompts (bench/replay -prompts of the same input)")
	}
	ps, err := loadOwnPrompts(promptsPath)
	if err != nil {
		return err
	}
	useful, n, err := usefulLabels(labelFiles)
	if err != nil {
		return err
	}
	engram := filepath.Join(dir, "home", ".claude-memory")
	at, err := born(ctx, filepath.Join(engram, "memory.db"))
	if err != nil {
		return fmt.Errorf("the replay's store: %w", err)
	}
	fmt.Fprintf(os.Stderr, "own: %d prompts, %d memories, %d useful labels\n", len(ps), len(at), n)
	for i, p := range ps {
		mapped := filepath.Join(dir, "fs", filepath.FromSlash(strings.TrimPrefix(filepath.ToSlash(p.cwd), "/")))
		root, ok := gitroot.Find(mapped)
		if !ok || root == "" {
			return fmt.Errorf("prompt %d: no project at %s (the replay dir and the prompts must be of one input)", i, mapped)
		}
		exclude := map[string]bool{}
		t := p.at.UnixMilli()
		for id, b := range at {
			if b >= t {
				exclude[id] = true
			}
		}
		good := useful[p.text]
		ask(engram, root, "own", fmt.Sprintf("own/%d", i), p.text, p.fit, exclude, func(c *recall.Candidate) bool {
			head := benchkit.PrefixRunes(benchkit.Normalize(c.Text), benchkit.LenientPrefix)
			for _, g := range good {
				if head != "" && strings.Contains(g, head) {
					return true
				}
			}
			return false
		})
	}
	return nil
}
