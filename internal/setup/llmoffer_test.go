package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/config"
)

func TestClaudeOffer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("PATH", dir)
	cfg := config.Config{ClaudeModel: "haiku", ClaudeBatch: 8, LLMDailyCalls: 100, LLMDailyTokens: 500000}
	got := ClaudeOffer(cfg)
	for _, want := range []string{bin, "haiku", "100 calls", "500000 input", "setup --llm claude", "stays off"} {
		if !strings.Contains(got, want) {
			t.Errorf("offer lacks %q:\n%s", want, got)
		}
	}
	for name, c := range map[string]config.Config{
		"chosen already": {LLM: "off", ClaudeModel: "haiku"},
		"openai set":     {LLMAPIKey: "sk-x", ClaudeModel: "haiku"},
	} {
		if s := ClaudeOffer(c); s != "" {
			t.Errorf("%s: offered %q", name, s)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if s := ClaudeOffer(cfg); s != "" {
		t.Errorf("offered without a claude binary: %q", s)
	}
}

func TestRecordLLM(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, EnvFileName)
	ch, err := RecordLLM(p, "claude")
	if err != nil || !ch.Created {
		t.Fatalf("%+v %v", ch, err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasPrefix(string(b), envTemplate) || !strings.HasSuffix(string(b), "\nENGRAM_LLM=claude\n") {
		t.Fatalf("new file:\n%s", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	res, err := loadEnvFile(p, func(string) (string, bool) { return "", false }, func(k, v string) error {
		if k == "ENGRAM_LLM" && v != "claude" {
			t.Errorf("%s=%s", k, v)
		}
		return nil
	})
	if err != nil || len(res.Set) != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	// Again: nothing changes. Then off replaces the line, nothing else.
	if ch, err := RecordLLM(p, "claude"); err != nil || ch.Changed {
		t.Fatalf("%+v %v", ch, err)
	}
	os.WriteFile(p, []byte("ENGRAM_LLM_MODEL=x\nexport ENGRAM_LLM=claude # mine\nOTHER=1"), 0o600)
	if _, err := RecordLLM(p, "off"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "ENGRAM_LLM_MODEL=x\nENGRAM_LLM=off\nOTHER=1" {
		t.Errorf("edited:\n%q", b)
	}
	if _, err := RecordLLM(p, "gpt"); err == nil || !strings.Contains(err.Error(), `"gpt"`) {
		t.Errorf("err=%v", err)
	}
}
