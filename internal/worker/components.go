package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-memory/engram/internal/claudellm"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/embed/minilm"
	"github.com/engram-memory/engram/internal/embed/remote"
	"github.com/engram-memory/engram/internal/extract"
	"github.com/engram-memory/engram/internal/llm"
	"github.com/engram-memory/engram/internal/reading"
)

// NewComponents picks the extractor and embedder the configuration asks
// for: the local ones by default; the LLM extractor (with the local one as
// its fallback) with ENGRAM_LLM=claude (the user's claude binary) or when
// an endpoint or key is set; the remote embedder when
// ENGRAM_EMBED_MODEL is set; else the local sentence embedder when its model
// is installed (ENGRAM_SENTENCE_EMBEDDER, on by default); else the lexical
// one.
func NewComponents(ctx context.Context, cfg config.Config, log *slog.Logger) (Components, error) {
	local := extract.NewLocal()
	c := Components{Extractor: local, Embedder: embed.NewLocal(), Judge: consolidate.Local{}, Concurrency: 1, Close: func() {},
		ReembedBudget: cfg.ReembedBudget}
	if cfg.ClaudeEnabled() {
		// The user's claude binary: batched extraction, the judge only where
		// the local one cannot answer, one process at a time.
		client := claudellm.New(claudellm.Config{Bin: cfg.ClaudeBin, Model: cfg.ClaudeModel, Timeout: cfg.ClaudeTimeout,
			DailyCalls: cfg.LLMDailyCalls, DailyTokens: cfg.LLMDailyTokens, Home: cfg.Home})
		c.Extractor = extract.NewLLM(client, client.Model()).WithStated().WithBatch(cfg.ClaudeBatch)
		c.Judge = claudellm.Judge{Model: consolidate.NewLLM(client, cfg.ClaudeTimeout)}
		c.Fallback = local
	} else if cfg.LLMEnabled() {
		client := llm.New(llmConfig(cfg, cfg.LLMModel))
		c.Extractor = extract.NewLLM(client, cfg.LLMModel).WithStated()
		c.Judge = consolidate.NewLLM(client, 10*time.Second)
		c.Fallback = local
		c.Concurrency = cfg.LLMConcurrency
	}
	if cfg.EmbedModel != "" {
		r, err := remote.New(remote.Config{BaseURL: embedBaseURL(cfg), APIKey: cfg.LLMAPIKey, Model: cfg.EmbedModel,
			Timeout: cfg.LLMTimeout})
		if err != nil {
			return Components{}, fmt.Errorf("embedder: %w", err)
		}
		if err := r.Probe(ctx); err != nil {
			return Components{}, fmt.Errorf("embedder %s at %s: %w", cfg.EmbedModel, embedBaseURL(cfg), err)
		}
		c.Embedder = r
		return c, nil
	}
	m, err := OpenModel(cfg)
	if err != nil {
		// Recall keeps working with the lexical embedder: say why, don't fail
		// the cycle.
		log.Warn("sentence embedder unavailable; using the lexical one", "err", err)
		return c, nil
	}
	if m != nil {
		c.Embedder = minilm.Documents{Model: m}
		c.Close = func() { m.Close() }
		// The local extractor reads sentences with their vectors too.
		reader := extract.NewReading(reading.MiniLM(), func(s string) []float32 { return m.EmbedText(s, reading.VecTokens) })
		if c.Extractor == extract.Extractor(local) {
			c.Extractor = reader
		}
		if c.Fallback == extract.Extractor(local) {
			c.Fallback = reader
		}
	}
	return c, nil
}

func llmConfig(cfg config.Config, model string) llm.Config {
	return llm.Config{BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: model, Timeout: cfg.LLMTimeout,
		Concurrency: cfg.LLMConcurrency, MaxCalls: cfg.LLMMaxCalls}
}

func embedBaseURL(cfg config.Config) string {
	if cfg.EmbedBaseURL != "" {
		return cfg.EmbedBaseURL
	}
	return cfg.LLMBaseURL
}

// Describe names the extractor and embedder the configuration selects,
// without contacting anything (for status).
func Describe(cfg config.Config) (extractor, embedder string) {
	extractor, embedder = "local", embed.NewLocal().Name()
	if cfg.ClaudeEnabled() {
		extractor = "llm:claude:" + cfg.ClaudeModel + " (the claude binary"
		if cfg.ClaudeBin != "" {
			extractor += " " + cfg.ClaudeBin
		}
		extractor += ")"
	} else if cfg.LLMEnabled() {
		extractor = "llm:" + cfg.LLMModel
		if cfg.LLMBaseURL != "" {
			extractor += " at " + cfg.LLMBaseURL
		}
	}
	if cfg.EmbedModel != "" {
		embedder = "remote:" + cfg.EmbedModel + " at " + embedBaseURL(cfg)
	} else if st := Model(cfg); st.Enabled && (st.Installed || st.Source != "") {
		embedder = minilm.Name
	}
	return extractor, embedder
}

// StatementEmbedder is the embedder the worker would use, for embedding a
// statement outside a cycle (an edit in review) when that is cheap: the
// installed sentence embedder (mapped, not installed or converted) or else
// the lexical one; nil when a remote embedder is configured (no network
// call outside a cycle: the next cycle embeds what is left without a
// vector). close releases it.
func StatementEmbedder(cfg config.Config) (emb embed.Embedder, close func()) {
	if cfg.EmbedModel != "" {
		return nil, func() {}
	}
	if m := minilm.OpenInstalled(cfg.ModelDir(), cfg.SentenceEmbedder); m != nil {
		return minilm.Documents{Model: m}, func() { m.Close() }
	}
	return embed.NewLocal(), func() {}
}
