// Package config owns engram's settings: every ENGRAM_* environment variable,
// their defaults, and the validation that turns a bad value into an error
// naming the variable.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// WorkerInterval is how often a scheduler (systemd timer, launchd agent,
// crontab line) runs the worker.
const WorkerInterval = 15 * time.Minute

// Config is the whole of engram's configuration. Field names map to
// ENGRAM_<SPLIT_WORDS>; none carries an envconfig tag, because a tagged field
// silently falls back to the unprefixed variable of the same name.
type Config struct {
	// Home is the data directory (database, logs, spool, recollections).
	Home string `split_words:"true"`
	// ClaudeConfigDir is Claude Code's own directory; read from
	// CLAUDE_CONFIG_DIR, not from an ENGRAM_ variable.
	ClaudeConfigDir string `ignored:"true"`

	LogLevel string `split_words:"true" default:"info"`

	// StopHookDeadline bounds the whole Stop hook; past it the capture is
	// spooled instead of stored.
	StopHookDeadline time.Duration `split_words:"true" default:"3s"`
	// SelfSchedule lets the Stop hook start a worker run in the background
	// when no scheduler has run one for longer than twice WorkerInterval.
	SelfSchedule bool `split_words:"true" default:"true"`
	// PromptHookDeadline bounds the UserPromptSubmit hook.
	PromptHookDeadline time.Duration `split_words:"true" default:"150ms"`
	// ToolResultMax is how many bytes of one tool result a capture keeps.
	ToolResultMax int `split_words:"true" default:"2000"`
	// ToolInputMax is how many bytes of a tool call's rendered input a capture keeps.
	ToolInputMax int `split_words:"true" default:"300"`
	// CaptureMax bounds the text of one capture (one turn).
	CaptureMax int `split_words:"true" default:"65536"`
	// MaxLine is the longest transcript line parsed; longer lines are skipped.
	MaxLine int64 `split_words:"true" default:"33554432"`

	// LLM settings; no base URL and no key means the offline extractor.
	LLMBaseURL     string        `split_words:"true"`
	LLMAPIKey      string        `split_words:"true"`
	LLMModel       string        `split_words:"true" default:"gpt-4.1-mini"`
	LLMTimeout     time.Duration `split_words:"true" default:"30s"`
	LLMConcurrency int           `split_words:"true" default:"4"`
	LLMMaxCalls    int           `split_words:"true" default:"200"`
	// LLM picks the model backend: "" (the OpenAI-compatible endpoint when
	// a base URL or key is set, else none), "off", "openai", or "claude"
	// (the user's own claude binary in print mode, see ClaudeBin).
	LLM string `split_words:"true"`
	// ClaudeBin is the claude binary; empty finds it on PATH.
	ClaudeBin string `split_words:"true"`
	// ClaudeModel is the model the claude backend asks for (an alias).
	ClaudeModel string `split_words:"true" default:"haiku"`
	// ClaudeTimeout bounds one run of the claude binary.
	ClaudeTimeout time.Duration `split_words:"true" default:"120s"`
	// ClaudeBatch is how many captures one extraction call handles.
	ClaudeBatch int `split_words:"true" default:"8"`
	// LLMDailyCalls and LLMDailyTokens bound the claude backend's calls and
	// estimated input tokens per day (0: no bound); past them the local
	// path works until the next day.
	LLMDailyCalls  int    `split_words:"true" default:"100"`
	LLMDailyTokens int64  `split_words:"true" default:"500000"`
	EmbedModel     string `split_words:"true"`
	EmbedBaseURL   string `split_words:"true"`
	// RecallPolicy is a recall policy file (the fitted gates; see
	// internal/recall/gate.json) used instead of the built-in one: for
	// benchmarks that sweep a policy without a new build.
	RecallPolicy string `split_words:"true"`

	// SentenceEmbedder turns on the local sentence embedder (all-MiniLM-L6-v2)
	// when its model is installed under ModelDir: the worker embeds
	// memories with it and the prompt hook embeds prompts, so that memories
	// are found by meaning. A remote embedder (EmbedModel) takes precedence
	// in the worker.
	SentenceEmbedder bool `split_words:"true" default:"true"`
	// EmbedModelDir is a directory in the Hugging Face layout
	// (tokenizer.json, config.json, model.safetensors or
	// model.fp16.safetensors) that the worker installs the model from when
	// none is installed yet or it changed.
	EmbedModelDir string `split_words:"true"`
	// ReembedBudget bounds the time a cycle spends giving existing
	// memories the sentence embedder's vectors (0: no bound).
	ReembedBudget time.Duration `split_words:"true" default:"2m"`

	// DedupSimilarity is the cosine above which a new episode is merged into
	// an existing one of the same scope and project.
	DedupSimilarity float64 `split_words:"true" default:"0.95"`

	// SweepWindow is how recently a session must have been active for the
	// worker to sweep its transcript for late lines.
	SweepWindow time.Duration `split_words:"true" default:"72h"`

	// Belief consolidation: a cycle runs when BeliefEpisodeThreshold new
	// episodes arrived or BeliefInterval passed since the last one;
	// episodes cluster at BeliefClusterSimilarity.
	BeliefEpisodeThreshold  int           `split_words:"true" default:"20"`
	BeliefInterval          time.Duration `split_words:"true" default:"4h"`
	BeliefClusterSimilarity float64       `split_words:"true" default:"0.70"`

	// CommitmentDays: a commitment ("I'll send the plan") that names no
	// date after it was stored decays this many days after; one that
	// names a date decays after that date.
	CommitmentDays int `split_words:"true" default:"30"`

	// Promote turns on writing the MEMORY.md files Claude Code loads
	// (promoted beliefs, graduated episodes).
	Promote bool `split_words:"true" default:"true"`
	// Review is how beliefs reach long-term and core memory: "off" (the
	// numeric gates alone), "uncertain" (explicit statements and
	// high-confidence beliefs pass, the others wait for review), or "all"
	// (everything waits for review).
	Review string `split_words:"true" default:"uncertain"`
	// CoreTarget is where a belief approved for core memory goes when it
	// has no target of its own: "claude" (CLAUDE.md), "agents"
	// (AGENTS.md), "both", or "off" (it stays in MEMORY.md).
	CoreTarget string `split_words:"true" default:"claude"`
	// GraduateImportance is the importance from which a global episode
	// graduates into $ENGRAM_HOME/MEMORY.md.
	GraduateImportance float64 `split_words:"true" default:"0.7"`
	// CompressAfter is how long an episode must have gone unchanged and
	// never recalled before its full context is dropped.
	CompressAfter time.Duration `split_words:"true" default:"2160h"`

	// ShareURL names the PostgreSQL database memories are shared through
	// (postgres://…; its roles and TLS settings apply). Empty: nothing is
	// shared. It belongs in $ENGRAM_HOME/env (0600): engram stores its
	// password nowhere else and never prints it.
	ShareURL string `split_words:"true"`
	// SharePersonal shares this person's global memory too (personal sync
	// between their machines), in a space only their database role reads.
	SharePersonal bool `split_words:"true" default:"false"`
}

// Load reads the configuration from the process environment.
func Load() (Config, error) {
	lookup := os.LookupEnv
	var c Config
	if err := envconfig.Process("engram", &c); err != nil {
		return Config{}, describe(err)
	}
	home, _ := lookup("HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	if c.Home == "" {
		if home == "" {
			return Config{}, errors.New("ENGRAM_HOME is not set and the home directory is unknown")
		}
		c.Home = filepath.Join(home, ".claude-memory")
	}
	if v, ok := lookup("CLAUDE_CONFIG_DIR"); ok && v != "" {
		c.ClaudeConfigDir = v
	} else {
		if home == "" {
			return Config{}, errors.New("CLAUDE_CONFIG_DIR is not set and the home directory is unknown")
		}
		c.ClaudeConfigDir = filepath.Join(home, ".claude")
	}
	if c.LLMAPIKey == "" {
		if v, ok := lookup("OPENAI_API_KEY"); ok {
			c.LLMAPIKey = v
		}
	}
	if err := c.validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) validate() error {
	var errs []error
	abs := func(name, v string) {
		if !filepath.IsAbs(v) {
			errs = append(errs, fmt.Errorf("%s=%q: must be an absolute path", name, v))
		}
	}
	abs("ENGRAM_HOME", c.Home)
	abs("CLAUDE_CONFIG_DIR", c.ClaudeConfigDir)
	c.Home = filepath.Clean(c.Home)
	c.ClaudeConfigDir = filepath.Clean(c.ClaudeConfigDir)
	switch strings.ToLower(c.LogLevel) {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("ENGRAM_LOG_LEVEL=%q: want debug, info, warn or error", c.LogLevel))
	}
	positive := func(name string, v int64) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s=%d: must be greater than zero", name, v))
		}
	}
	positive("ENGRAM_STOP_HOOK_DEADLINE", int64(c.StopHookDeadline))
	positive("ENGRAM_PROMPT_HOOK_DEADLINE", int64(c.PromptHookDeadline))
	positive("ENGRAM_TOOL_RESULT_MAX", int64(c.ToolResultMax))
	positive("ENGRAM_TOOL_INPUT_MAX", int64(c.ToolInputMax))
	positive("ENGRAM_CAPTURE_MAX", int64(c.CaptureMax))
	positive("ENGRAM_MAX_LINE", c.MaxLine)
	positive("ENGRAM_LLM_TIMEOUT", int64(c.LLMTimeout))
	positive("ENGRAM_LLM_CONCURRENCY", int64(c.LLMConcurrency))
	positive("ENGRAM_SWEEP_WINDOW", int64(c.SweepWindow))
	positive("ENGRAM_BELIEF_EPISODE_THRESHOLD", int64(c.BeliefEpisodeThreshold))
	positive("ENGRAM_BELIEF_INTERVAL", int64(c.BeliefInterval))
	positive("ENGRAM_COMMITMENT_DAYS", int64(c.CommitmentDays))
	positive("ENGRAM_COMPRESS_AFTER", int64(c.CompressAfter))
	if c.GraduateImportance <= 0 || c.GraduateImportance > 1 {
		errs = append(errs, fmt.Errorf("ENGRAM_GRADUATE_IMPORTANCE=%v: want a number in (0, 1]", c.GraduateImportance))
	}
	if c.BeliefClusterSimilarity <= 0 || c.BeliefClusterSimilarity > 1 {
		errs = append(errs, fmt.Errorf("ENGRAM_BELIEF_CLUSTER_SIMILARITY=%v: want a number in (0, 1]", c.BeliefClusterSimilarity))
	}
	if c.DedupSimilarity <= 0 || c.DedupSimilarity > 1 {
		errs = append(errs, fmt.Errorf("ENGRAM_DEDUP_SIMILARITY=%v: want a number in (0, 1]", c.DedupSimilarity))
	}
	if c.EmbedModelDir != "" {
		abs("ENGRAM_EMBED_MODEL_DIR", c.EmbedModelDir)
	}
	if c.ReembedBudget < 0 {
		errs = append(errs, fmt.Errorf("ENGRAM_REEMBED_BUDGET=%v: must not be negative", c.ReembedBudget))
	}
	switch c.Review {
	case "off", "uncertain", "all":
	default:
		errs = append(errs, fmt.Errorf("ENGRAM_REVIEW=%q: want off, uncertain or all", c.Review))
	}
	switch c.CoreTarget {
	case "claude", "agents", "both", "off":
	default:
		errs = append(errs, fmt.Errorf("ENGRAM_CORE_TARGET=%q: want claude, agents, both or off", c.CoreTarget))
	}
	switch c.LLM {
	case "", LLMOff, LLMOpenAI, LLMClaude:
	default:
		errs = append(errs, fmt.Errorf("ENGRAM_LLM=%q: must be off, openai or claude", c.LLM))
	}
	positive("ENGRAM_CLAUDE_TIMEOUT", int64(c.ClaudeTimeout))
	if c.ClaudeBatch < 1 || c.ClaudeBatch > 32 {
		errs = append(errs, fmt.Errorf("ENGRAM_CLAUDE_BATCH=%d: must be between 1 and 32", c.ClaudeBatch))
	}
	if c.LLMDailyCalls < 0 {
		errs = append(errs, fmt.Errorf("ENGRAM_LLM_DAILY_CALLS=%d: must not be negative", c.LLMDailyCalls))
	}
	if c.LLMDailyTokens < 0 {
		errs = append(errs, fmt.Errorf("ENGRAM_LLM_DAILY_TOKENS=%d: must not be negative", c.LLMDailyTokens))
	}
	if c.ClaudeModel == "" || strings.ContainsAny(c.ClaudeModel, " \t\n") || strings.HasPrefix(c.ClaudeModel, "-") {
		errs = append(errs, fmt.Errorf("ENGRAM_CLAUDE_MODEL=%q: not a model name", c.ClaudeModel))
	}
	if c.LLMMaxCalls < 0 {
		errs = append(errs, fmt.Errorf("ENGRAM_LLM_MAX_CALLS=%d: must not be negative", c.LLMMaxCalls))
	}
	for name, v := range map[string]string{"ENGRAM_LLM_BASE_URL": c.LLMBaseURL, "ENGRAM_EMBED_BASE_URL": c.EmbedBaseURL} {
		if v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			errs = append(errs, fmt.Errorf("%s=%q: must start with http:// or https://", name, v))
		}
	}
	if c.ShareURL != "" && !strings.HasPrefix(c.ShareURL, "postgres://") && !strings.HasPrefix(c.ShareURL, "postgresql://") {
		// The value may hold a password: it is not repeated.
		errs = append(errs, errors.New("ENGRAM_SHARE_URL: must start with postgres:// or postgresql://"))
	}
	return errors.Join(errs...)
}

// Values of ENGRAM_LLM.
const (
	LLMOff    = "off"
	LLMOpenAI = "openai"
	LLMClaude = "claude"
)

// LLMEnabled reports whether the OpenAI-compatible backend is in use: an
// endpoint or key is configured and ENGRAM_LLM does not pick another.
func (c Config) LLMEnabled() bool {
	switch c.LLM {
	case LLMOff, LLMClaude:
		return false
	case LLMOpenAI:
		return true
	}
	return c.LLMBaseURL != "" || c.LLMAPIKey != ""
}

// ClaudeEnabled reports whether the claude backend is in use
// (ENGRAM_LLM=claude).
func (c Config) ClaudeEnabled() bool { return c.LLM == LLMClaude }

// DBPath is the path of the SQLite database.
func (c Config) DBPath() string { return filepath.Join(c.Home, "memory.db") }

// SpoolDir holds captures that could not be stored by a hook.
func (c Config) SpoolDir() string { return filepath.Join(c.Home, "spool") }

// ModelDir is where the sentence embedder's runtime model is installed.
func (c Config) ModelDir() string { return filepath.Join(c.Home, "models", "minilm") }

// LogDir holds the log files.
func (c Config) LogDir() string { return filepath.Join(c.Home, "logs") }

// ProjectsDir is where Claude Code keeps transcripts and auto-memory.
func (c Config) ProjectsDir() string { return filepath.Join(c.ClaudeConfigDir, "projects") }

// describe rewrites envconfig's errors so that they name the variable.
func describe(err error) error {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s=%q: not a valid %s: %v", pe.KeyName, pe.Value, pe.TypeName, pe.Err)
	}
	return err
}
