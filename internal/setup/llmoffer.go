package setup

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	"github.com/engram-memory/engram/internal/config"
)

// ClaudeOffer is what setup says about the claude backend when the claude
// binary is found (ENGRAM_CLAUDE_BIN, or claude on PATH) and no model
// backend is configured (ENGRAM_LLM unset, no endpoint or key): how to turn
// it on and what it costs. It is "" otherwise. Nothing is turned on
// without the user's word (setup --llm claude).
func ClaudeOffer(cfg config.Config) string {
	if cfg.LLM != "" || cfg.LLMEnabled() {
		return ""
	}
	bin := cfg.ClaudeBin
	if bin == "" {
		p, err := exec.LookPath("claude")
		if err != nil {
			return ""
		}
		bin = p
	}
	return fmt.Sprintf(`Claude Code's own binary (%s) can extract memories and judge beliefs with a model,
instead of engram's offline heuristics. It runs "claude -p" with the %s model, no tools
and no saved session, %d captured turns per call, at most %d calls and about %d input
tokens a day (ENGRAM_LLM_DAILY_CALLS, ENGRAM_LLM_DAILY_TOKENS); past that the offline path
works until the next day, and "engram-worker status" shows the day's use. It spends your
Claude usage: on a subscription it counts against your plan's limits; billed by the token,
a full day's budget is about $0.50 of input and $0.60 of output at Haiku's list price
($1 and $5 per million tokens). It stays off unless you turn it on:
  engram-worker setup --llm claude   (records ENGRAM_LLM=claude in %s)
`, bin, cfg.ClaudeModel, cfg.ClaudeBatch, cfg.LLMDailyCalls, cfg.LLMDailyTokens, EnvFileName)
}

var llmLine = regexp.MustCompile(`(?m)^[ \t]*(export[ \t]+)?ENGRAM_LLM[ \t]*=.*$`)

// RecordLLM records the user's choice of model backend, ENGRAM_LLM=choice
// ("claude" or "off"), in the env file at path: an ENGRAM_LLM line is
// replaced (the last one, which is the one that counts), else one is
// appended; every other byte is kept. A missing file is created 0600 from
// the template.
func RecordLLM(path, choice string) (Change, error) {
	switch choice {
	case config.LLMClaude, config.LLMOff, config.LLMOpenAI:
	default:
		return Change{Path: path}, fmt.Errorf("--llm %q: must be claude, openai or off", choice)
	}
	f, err := openEditable(path)
	if err != nil {
		return Change{Path: path}, err
	}
	text := string(f.data)
	if !f.exists {
		text = envTemplate
	}
	line := "ENGRAM_LLM=" + choice
	var out string
	if locs := llmLine.FindAllStringIndex(text, -1); len(locs) > 0 {
		last := locs[len(locs)-1]
		if text[last[0]:last[1]] == line {
			return Change{Path: path}, nil
		}
		out = text[:last[0]] + line + text[last[1]:]
	} else {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		out = text + "\n# The model backend, as chosen at setup (claude: the claude binary, within\n# ENGRAM_LLM_DAILY_CALLS a day; off: offline heuristics only).\n" + line + "\n"
	}
	return f.commit([]byte(out), []string{"set " + line}, false)
}
