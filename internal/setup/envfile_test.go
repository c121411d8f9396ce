package setup

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadEnvFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		mode    fs.FileMode
		preset  map[string]string
		want    map[string]string // the environment after
		ignored []string
		kept    []string
		wantErr string // substring; also: the error never shows a value
	}{
		{
			name: "forms",
			content: "# comment\n; also a comment\n\n" +
				"ENGRAM_LLM_BASE_URL=http://127.0.0.1:11434/v1\n" +
				"export ENGRAM_LLM_MODEL = \"qwen2.5:7b\"  # inline\n" +
				"ENGRAM_LLM_API_KEY='sk-abc#def \"x\"'\n" +
				"ENGRAM_LOG_LEVEL=debug # trailing comment\n" +
				"ENGRAM_A=\"line\\nnext \\\"q\\\" \\$HOME \\x\"\r\n" +
				"ENGRAM_B=a#b\n" +
				"ENGRAM_C=\n" +
				"OPENAI_API_KEY=sk-1\n" +
				"CLAUDE_CONFIG_DIR=/c\n",
			mode: 0o600,
			want: map[string]string{
				"ENGRAM_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
				"ENGRAM_LLM_MODEL":    "qwen2.5:7b",
				"ENGRAM_LLM_API_KEY":  `sk-abc#def "x"`,
				"ENGRAM_LOG_LEVEL":    "debug",
				"ENGRAM_A":            "line\nnext \"q\" $HOME \\x",
				"ENGRAM_B":            "a#b",
				"ENGRAM_C":            "",
				"OPENAI_API_KEY":      "sk-1",
				"CLAUDE_CONFIG_DIR":   "/c",
			},
		},
		{
			name:    "existing variables win, even empty ones",
			content: "ENGRAM_LLM_MODEL=file\nENGRAM_LOG_LEVEL=debug\nENGRAM_HOME=/x\n",
			mode:    0o400,
			preset:  map[string]string{"ENGRAM_LLM_MODEL": "shell", "ENGRAM_HOME": ""},
			want:    map[string]string{"ENGRAM_LLM_MODEL": "shell", "ENGRAM_HOME": "", "ENGRAM_LOG_LEVEL": "debug"},
			kept:    []string{"ENGRAM_LLM_MODEL", "ENGRAM_HOME"},
		},
		{
			name:    "unknown names ignored",
			content: "PATH=/evil\nLD_PRELOAD=/x.so\nENGRAMX=1\nENGRAM_OK=1\n",
			mode:    0o600,
			want:    map[string]string{"ENGRAM_OK": "1"},
			ignored: []string{"PATH", "LD_PRELOAD", "ENGRAMX"},
		},
		{
			name:    "last assignment wins",
			content: "ENGRAM_X=1\nENGRAM_X=2\n",
			mode:    0o600,
			want:    map[string]string{"ENGRAM_X": "2"},
		},
		{name: "readable by group", content: "ENGRAM_LLM_API_KEY=sk-secret\n", mode: 0o640, wantErr: "chmod 600"},
		{name: "readable by all", content: "ENGRAM_LLM_API_KEY=sk-secret\n", mode: 0o644, wantErr: "mode 0644"},
		{name: "no equals sign", content: "ENGRAM_X=1\nsk-secret\n", mode: 0o600, wantErr: "line 2: want NAME=value"},
		{name: "bad name", content: "1X=sk-secret\n", mode: 0o600, wantErr: "line 1"},
		{name: "unterminated quote", content: "ENGRAM_LLM_API_KEY=\"sk-secret\n", mode: 0o600, wantErr: "line 1 (ENGRAM_LLM_API_KEY): unterminated double quote"},
		{name: "text after quote", content: "ENGRAM_LLM_API_KEY='sk-secret' x\n", mode: 0o600, wantErr: "text after the closing quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "env")
			writeFile(t, p, tt.content, tt.mode)
			env := map[string]string{}
			for k, v := range tt.preset {
				env[k] = v
			}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			setenv := func(k, v string) error { env[k] = v; return nil }
			res, err := loadEnvFile(p, lookup, setenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err=%v, want one saying %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "sk-secret") {
					t.Errorf("the error shows the value: %v", err)
				}
				if strings.Contains(tt.wantErr, "mode") || strings.Contains(tt.wantErr, "chmod") {
					if !errors.Is(err, ErrEnvFileMode) {
						t.Errorf("not ErrEnvFileMode: %v", err)
					}
				}
				if len(env) != len(tt.preset) {
					t.Errorf("variables set despite the error: %v", env)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(env, tt.want) {
				t.Errorf("environment:\n got %q\nwant %q", env, tt.want)
			}
			if !reflect.DeepEqual(res.Ignored, tt.ignored) {
				t.Errorf("Ignored=%q, want %q", res.Ignored, tt.ignored)
			}
			if !reflect.DeepEqual(res.Kept, tt.kept) {
				t.Errorf("Kept=%q, want %q", res.Kept, tt.kept)
			}
		})
	}
}

func TestLoadEnvFileMissing(t *testing.T) {
	res, err := LoadEnvFile(filepath.Join(t.TempDir(), "env"))
	if err != nil || len(res.Set)+len(res.Kept)+len(res.Ignored) != 0 {
		t.Errorf("missing file: %+v, %v; want nothing and no error", res, err)
	}
}

func TestEnvTemplateIsInert(t *testing.T) {
	kvs, err := parseEnv(envTemplate)
	if err != nil || len(kvs) != 0 {
		t.Errorf("the template sets %v (err %v); want only comments", kvs, err)
	}
}
