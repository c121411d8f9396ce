// Command claudellm runs the labelled statement corpus through the claude
// backend (ENGRAM_LLM=claude): the real claude binary, in batches as the
// worker sends them, against a stand-in API that answers every exchange
// with exactly the signals its labels name. It proves the plumbing (prompt,
// structured output through the client, validation, claims) and measures
// what the backend costs per captured turn: calls per 100 turns and
// estimated input tokens per turn. It does not measure the quality of a
// real model's answers: the stand-in answers as labelled.
//
//	go run ./bench/claudellm [-bin node_modules/@anthropic-ai/claude-code-linux-x64/claude] [-batch 8]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/corpus"
	"github.com/engram-memory/engram/internal/extract"
)

func main() {
	bin := flag.String("bin", "node_modules/@anthropic-ai/claude-code-linux-x64/claude", "the claude binary")
	dir := flag.String("dir", "internal/extract/testdata/speech", "directory of tune.txt and heldout.txt")
	batch := flag.Int("batch", 8, "captures per call (ENGRAM_CLAUDE_BATCH)")
	flag.Parse()
	if err := run(*bin, *dir, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "claudellm:", err)
		os.Exit(1)
	}
}

var exchangeRE = regexp.MustCompile(`(?s)Exchange (\d+)[^\n]*:\n<transcript>\nuser: (.*?)\n</transcript>`)

func run(bin, dir string, batch int) error {
	parts := map[string][]corpus.Item{}
	labels := map[string][]corpus.Label{}
	for _, part := range []string{"tune", "heldout"} {
		items, err := corpus.Load(filepath.Join(dir, part+".txt"))
		if err != nil {
			return err
		}
		parts[part] = items
		for _, it := range items {
			labels[it.Text] = it.Labels
		}
	}
	var unknown atomic.Int32
	stub, err := anthropicstub.New(anthropicstub.Options{IsAux: func(*anthropicstub.Request) bool { return false },
		Responder: func(r *anthropicstub.Request) anthropicstub.Reply {
			var recs []any
			for _, m := range exchangeRE.FindAllStringSubmatch(r.Prompt(), -1) {
				n, _ := strconv.Atoi(m[1])
				ls, ok := labels[m[2]]
				if !ok {
					unknown.Add(1)
				}
				recs = append(recs, record(n, m[2], ls))
			}
			return anthropicstub.Call("StructuredOutput", map[string]any{"records": recs})
		}})
	if err != nil {
		return err
	}
	defer stub.Close()
	tmp, err := os.MkdirTemp("", "engram-claudellm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "home")
	os.MkdirAll(home, 0o700)
	client := claudellm.New(claudellm.Config{Bin: bin, Home: filepath.Join(tmp, "engram"), Timeout: 2 * time.Minute,
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + stub.URL,
			"ANTHROPIC_API_KEY=sk-ant-bench", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}})
	x := extract.NewLLM(client, client.Model()).WithBatch(batch)
	ctx := context.Background()
	turns := 0
	start := time.Now()
	for _, part := range []string{"tune", "heldout"} {
		items := parts[part]
		drafts := map[string]extract.Draft{}
		for lo := 0; lo < len(items); lo += batch {
			hi := min(lo+batch, len(items))
			var ins []extract.Input
			for _, it := range items[lo:hi] {
				ins = append(ins, input(it.Text))
			}
			ds, errs := x.ExtractBatch(ctx, ins)
			for i, in := range ins {
				if errs[i] != nil {
					return fmt.Errorf("%s item %d: %w", part, lo+i+1, errs[i])
				}
				drafts[in.Content] = ds[i]
			}
		}
		turns += len(items)
		r, err := corpus.Evaluate(ctx, cached(drafts), items)
		if err != nil {
			return err
		}
		corpus.Report(os.Stdout, part+" (stand-in answering as labelled)", r)
	}
	u := client.Usage()
	fmt.Printf("\n%d turns, batches of %d: %d calls (%.1f per 100 turns), about %d input tokens (%.0f per turn), %d output tokens, in %v\n",
		turns, batch, u.Calls, 100*float64(u.Calls)/float64(turns), u.EstTokens, float64(u.EstTokens)/float64(turns),
		u.OutputTokens, time.Since(start).Round(time.Second))
	fmt.Printf("fell back: %d; utterances the stand-in did not recognise: %d\n", u.FellBack(), unknown.Load())
	fmt.Println("Token counts are the client's own usage figures against the stand-in, which counts 4 bytes a token; quality with a real model is not measured here.")
	return nil
}

// input is an utterance as corpus.Claims extracts it.
func input(text string) extract.Input {
	return extract.Input{SessionID: "corpus", Project: "corpus", ProjectPath: "/corpus", TurnAt: time.Unix(0, 0).UTC(),
		Content: "user: " + text, Blocks: []extract.Block{{Role: "user", Kind: "text", Text: text}}}
}

// record is the extraction record a model that agrees with the labels would
// return.
func record(n int, text string, ls []corpus.Label) map[string]any {
	sigs := []any{}
	for _, l := range ls {
		s := map[string]any{"text": text, "subject": l.Subjects[0], "object": "", "polarity": l.Polarity, "global": l.Global}
		switch l.Kind {
		case consolidate.ClaimFact:
			s["kind"] = "fact"
			s["object"] = l.Values[0]
		case consolidate.ClaimCorrection:
			s["kind"] = "correction"
		default:
			s["kind"] = "preference"
			if l.Polarity < 0 {
				s["kind"] = "avoid"
			}
		}
		sigs = append(sigs, s)
	}
	typ := "event"
	if len(sigs) > 0 {
		typ = "preference"
	}
	scope := "project"
	for _, l := range ls {
		if l.Global {
			scope = "global"
		}
	}
	return map[string]any{"exchange": n, "skip": false, "summary": strings.TrimSpace(text), "type": typ, "importance": 0.5,
		"scope": scope, "entities": []string{}, "signals": sigs}
}

// cached is an extractor that returns the drafts the batches made.
type cached map[string]extract.Draft

func (cached) Name() string { return "cached" }

func (c cached) Extract(_ context.Context, in extract.Input) (extract.Draft, error) {
	d, ok := c[in.Content]
	if !ok {
		return extract.Draft{}, fmt.Errorf("no draft for %q", in.Content)
	}
	return d, nil
}
