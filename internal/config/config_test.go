package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("ENGRAM_HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("OPENAI_API_KEY", "")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".claude-memory"); c.Home != want {
		t.Errorf("Home=%q, want %q", c.Home, want)
	}
	if want := filepath.Join(home, ".claude"); c.ClaudeConfigDir != want {
		t.Errorf("ClaudeConfigDir=%q, want %q", c.ClaudeConfigDir, want)
	}
	if c.LLMModel != "gpt-4.1-mini" || c.StopHookDeadline != 3*time.Second || c.LLMEnabled() {
		t.Errorf("unexpected defaults: %+v", c)
	}
}

func TestVariablesAreRead(t *testing.T) {
	t.Setenv("ENGRAM_HOME", "/data/engram")
	t.Setenv("CLAUDE_CONFIG_DIR", "/cfg/claude")
	t.Setenv("ENGRAM_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
	t.Setenv("ENGRAM_LLM_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "sk-fallback")
	t.Setenv("ENGRAM_TOOL_RESULT_MAX", "123")
	t.Setenv("ENGRAM_PROMPT_HOOK_DEADLINE", "80ms")
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if c.Home != "/data/engram" || c.ClaudeConfigDir != "/cfg/claude" {
		t.Errorf("paths: %q %q", c.Home, c.ClaudeConfigDir)
	}
	if c.LLMBaseURL != "http://127.0.0.1:11434/v1" || c.LLMAPIKey != "sk-fallback" || !c.LLMEnabled() {
		t.Errorf("llm: %q %q", c.LLMBaseURL, c.LLMAPIKey)
	}
	if c.ToolResultMax != 123 || c.PromptHookDeadline != 80*time.Millisecond {
		t.Errorf("numbers: %d %v", c.ToolResultMax, c.PromptHookDeadline)
	}
}

func TestInvalidValuesNameTheVariable(t *testing.T) {
	for _, tt := range []struct{ key, val, want string }{
		{"ENGRAM_TOOL_RESULT_MAX", "lots", `ENGRAM_TOOL_RESULT_MAX="lots"`},
		{"ENGRAM_TOOL_RESULT_MAX", "-5", `ENGRAM_TOOL_RESULT_MAX=-5`},
		{"ENGRAM_STOP_HOOK_DEADLINE", "soon", `ENGRAM_STOP_HOOK_DEADLINE="soon"`},
		{"ENGRAM_HOME", "relative/dir", `ENGRAM_HOME="relative/dir"`},
		{"ENGRAM_LOG_LEVEL", "loud", `ENGRAM_LOG_LEVEL="loud"`},
		{"ENGRAM_LLM_BASE_URL", "localhost:11434", `ENGRAM_LLM_BASE_URL="localhost:11434"`},
		{"ENGRAM_LLM", "anthropic", `ENGRAM_LLM="anthropic"`},
		{"ENGRAM_CLAUDE_BATCH", "0", `ENGRAM_CLAUDE_BATCH=0`},
		{"ENGRAM_LLM_DAILY_CALLS", "-1", `ENGRAM_LLM_DAILY_CALLS=-1`},
		{"ENGRAM_LLM_DAILY_TOKENS", "many", `ENGRAM_LLM_DAILY_TOKENS="many"`},
		{"ENGRAM_CLAUDE_MODEL", "--dangerously-skip-permissions", `ENGRAM_CLAUDE_MODEL="--dangerously-skip-permissions"`},
	} {
		t.Run(tt.key+"="+tt.val, func(t *testing.T) {
			t.Setenv("HOME", t.TempDir())
			t.Setenv(tt.key, tt.val)
			_, err := Load()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load() error = %v, want it to contain %s", err, tt.want)
			}
		})
	}
}

// ENGRAM_LLM picks the backend over whatever endpoint or key is set.
func TestBackendChoice(t *testing.T) {
	for _, tt := range []struct {
		llm, key      string
		openai, claud bool
	}{
		{"", "", false, false},
		{"", "sk-x", true, false},
		{"off", "sk-x", false, false},
		{"claude", "sk-x", false, true},
		{"openai", "", true, false},
	} {
		t.Setenv("HOME", t.TempDir())
		t.Setenv("ENGRAM_HOME", "")
		t.Setenv("ENGRAM_LLM", tt.llm)
		t.Setenv("OPENAI_API_KEY", tt.key)
		c, err := Load()
		if err != nil {
			t.Fatal(err)
		}
		if c.LLMEnabled() != tt.openai || c.ClaudeEnabled() != tt.claud {
			t.Errorf("ENGRAM_LLM=%q key=%q: openai=%v claude=%v", tt.llm, tt.key, c.LLMEnabled(), c.ClaudeEnabled())
		}
		if c.ClaudeModel != "haiku" || c.LLMDailyCalls != 100 || c.ClaudeBatch != 8 {
			t.Errorf("defaults: %+v", c)
		}
	}
}

func TestShareURL(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("ENGRAM_SHARE_URL", "mysql://root:hunter2@db/x")
	_, err := Load()
	if err == nil || !strings.Contains(err.Error(), "ENGRAM_SHARE_URL: must start with postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("a bad URL: %v", err)
	}
	t.Setenv("ENGRAM_SHARE_URL", "postgresql://ann:pw@db/engram")
	t.Setenv("ENGRAM_SHARE_PERSONAL", "true")
	c, err := Load()
	if err != nil || c.ShareURL != "postgresql://ann:pw@db/engram" || !c.SharePersonal {
		t.Fatalf("%+v %v", c, err)
	}
}
