// Command backfillgen writes a history of Claude Code sessions for
// measuring `engram-worker run --backfill`: N turns spread over sessions
// and projects, under a Claude Code config directory, as the client writes
// its transcripts (one user line with the prompt, one assistant line with
// the reply per turn). Prompts are varied task requests made from word
// lists, so that near-duplicate merging keeps most of them apart; about
// one turn in thirty states a preference, a convention or a project fact,
// so that consolidation has beliefs to form. The same flags give the same
// bytes.
//
//	go run ./bench/backfillgen -dir /tmp/bf/claude -turns 20000 -sessions 400 -projects 8
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

var (
	verbs   = strings.Fields("fix add refactor rename review explain document test debug profile speed-up simplify remove migrate split merge validate log cache retry paginate")
	things  = strings.Fields("handler parser config loader scheduler client server router middleware cache queue worker migration schema index query template renderer tokenizer lexer encoder decoder exporter importer watcher poller limiter")
	places  = strings.Fields("api auth billing search users orders payments reports admin storage events metrics notifications gateway ingest export")
	details = []string{"it fails when the input is empty", "the tests are flaky on CI", "it is too slow on large inputs",
		"the error message is unclear", "it leaks a goroutine", "it ignores the timeout", "the output is not sorted",
		"it breaks on unicode input", "it panics on nil", "the retry never stops", "the log is too noisy",
		"it reads the whole file into memory", "the config flag is not honoured", "the cache is never invalidated"}
	statements = []string{"I prefer table-driven tests", "never add emoji to commit messages", "we use pnpm in this repo, not npm",
		"this service deploys to Fly.io", "the test command in this repo is `make check`", "I prefer short answers",
		"don't use testify", "we're a pnpm shop", "always run gofmt before committing", "our database is Postgres",
		"I'm on macOS", "please keep your answers short", "we use conventional commits in this repo", "I hate long functions",
		"avoid global state", "the API listens on port 9090", "we switched from Jest to Vitest", "I like early returns"}
)

func main() {
	dir := flag.String("dir", "", "Claude Code config directory to write projects/ under (required)")
	turns := flag.Int("turns", 20000, "turns in all")
	sessions := flag.Int("sessions", 400, "sessions")
	projects := flag.Int("projects", 8, "projects")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if *dir == "" || *turns < 1 || *sessions < 1 || *projects < 1 || *sessions > *turns {
		fmt.Fprintln(os.Stderr, "backfillgen: -dir is required; -turns ≥ -sessions ≥ 1, -projects ≥ 1")
		os.Exit(2)
	}
	if err := generate(*dir, *turns, *sessions, *projects, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "backfillgen:", err)
		os.Exit(1)
	}
}

func generate(dir string, turns, sessions, projects int, seed uint64) error {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	per := turns / sessions
	n := 0
	for s := range sessions {
		proj := fmt.Sprintf("/home/dev/proj%02d", s%projects)
		sid := uuid(r)
		pdir := filepath.Join(dir, "projects", strings.ReplaceAll(proj, "/", "-"))
		if err := os.MkdirAll(pdir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(pdir, sid+".jsonl"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<16)
		k := per
		if s == sessions-1 {
			k = turns - n
		}
		at := start.Add(time.Duration(s) * 6 * time.Hour)
		parent := ""
		for range k {
			n++
			prompt := fmt.Sprintf("%s the %s %s in %s: %s (case %d)", pick(r, verbs), pick(r, places), pick(r, things),
				pick(r, places)+"/"+pick(r, things)+".go", pick(r, details), n)
			if r.IntN(30) == 0 {
				prompt = pick(r, statements)
			}
			reply := fmt.Sprintf("Done: I changed %s in %s and ran the tests; %s is fixed (%d).", pick(r, things),
				pick(r, places)+"/"+pick(r, things)+".go", pick(r, details), n)
			uu, ua := uuid(r), uuid(r)
			line := func(v map[string]any) error {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				_, err = w.Write(append(b, '\n'))
				return err
			}
			common := func(v map[string]any) map[string]any {
				v["isSidechain"], v["userType"], v["cwd"], v["sessionId"], v["version"] = false, "external", proj, sid, "2.1.330"
				return v
			}
			if err := line(common(map[string]any{"parentUuid": nilIfEmpty(parent), "type": "user", "uuid": uu,
				"timestamp": at.Format(time.RFC3339Nano), "message": map[string]any{"role": "user", "content": prompt}})); err != nil {
				return err
			}
			at = at.Add(20 * time.Second)
			if err := line(common(map[string]any{"parentUuid": uu, "type": "assistant", "uuid": ua,
				"timestamp": at.Format(time.RFC3339Nano), "message": map[string]any{"id": fmt.Sprintf("msg_%08d", n),
					"type": "message", "role": "assistant", "model": "claude-opus-5-5",
					"content": []map[string]any{{"type": "text", "text": reply}}, "stop_reason": "end_turn"}})); err != nil {
				return err
			}
			parent = ua
			at = at.Add(time.Duration(30+r.IntN(600)) * time.Second)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

func uuid(r *rand.Rand) string {
	a, b := r.Uint64(), r.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>52&0xfff, b&0xffffffffffff)
}
