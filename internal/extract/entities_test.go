package extract

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func extractEntities(t testing.TB, in Input) []string {
	t.Helper()
	d, err := NewLocal().Extract(context.Background(), in)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return d.Entities
}

func TestEntities(t *testing.T) {
	bash := func(cmd string) Input {
		return Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "run it"},
			{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: cmd},
		}}
	}
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{"bash command", bash("ls -la \u2014 List files"), []string{"Bash", "ls"}},
		{"subcommands", bash("cd /repo && go test ./... -run TestX | tail -20"), []string{"Bash", "go test", "tail"}},
		{"npm install", bash("npm install @tanstack/react-query zod@^3 --save"),
			[]string{"Bash", "npm install", "@tanstack/react-query", "zod"}},
		{"pip install", bash("pip install requests==2.31 'httpx[http2]'"), []string{"Bash", "pip install", "requests", "httpx"}},
		{"go get", bash("go get github.com/stretchr/testify@v1.9.0"), []string{"Bash", "go get", "github.com/stretchr/testify"}},
		{"env and sudo", bash("CGO_ENABLED=0 sudo make build"), []string{"Bash", "make build"}},
		{"python -m", bash("python3 -m pytest -q tests/test_api.py"), []string{"Bash", "python3 -m pytest", "tests/test_api.py"}},
		{"write", Input{Blocks: []Block{{Role: "assistant", Kind: "tool_use", Tool: "Write", Text: "/home/dev/proj/health.go (51 bytes)"}}},
			[]string{"Write", "/home/dev/proj/health.go"}},
		{"unknown tool json", Input{Blocks: []Block{{Role: "assistant", Kind: "tool_use", Tool: "mcp__fs__read", Text: `{"path":"/srv/app/main.py","n":3}`}}},
			[]string{"mcp__fs__read", "/srv/app/main.py"}},
		{"paths in text", userInput("See internal/store/store.go and /home/x/y.go, also README.md."),
			[]string{"internal/store/store.go", "/home/x/y.go", "README.md"}},
		{"line numbers", userInput("it fails at internal/x/y.go:42:3"), []string{"internal/x/y.go"}},
		{"identifiers", userInput("Use `context.WithTimeout` in HealthHandler, not http.DefaultClient or max_tokens"),
			[]string{"context.WithTimeout", "HealthHandler", "http.DefaultClient", "max_tokens"}},
		{"calls", userInput("call health() then store.Open(path)"), []string{"health", "store.Open"}},
		{"urls", userInput("read https://pkg.go.dev/net/http). and http://localhost:8080/health"),
			[]string{"https://pkg.go.dev/net/http", "http://localhost:8080/health"}},
		{"modules", userInput("we import golang.org/x/sync/errgroup and @types/node"),
			[]string{"golang.org/x/sync/errgroup", "@types/node"}},
		{"install in prose", userInput("just run npm install left-pad first"), []string{"left-pad"}},
		{"proper nouns", userInput("I prefer Postgres over MySQL. Docker is fine."), []string{"Postgres", "MySQL"}},
		{"backticked phrase", userInput("run `go test ./...` before pushing"), []string{"go test ./..."}},
		{"not entities", userInput("e.g. version 1.2.3 and/or the file(s), I think so. It works."), []string{}},
		{"tool result: paths only", Input{Blocks: []Block{
			{Role: "assistant", Kind: "tool_use", Tool: "Bash", Text: "go build ./..."},
			{Role: "user", Kind: "tool_result", IsError: true, Text: "internal/x/y.go:42:3: undefined: FooBar\nsee https://go.dev/ref/spec"},
		}}, []string{"Bash", "go build", "internal/x/y.go", "https://go.dev/ref/spec"}},
		{"code fence: paths only", userInput("```go\nfunc NewServer() {}\n// see cmd/main.go\n```"), []string{"cmd/main.go"}},
		{"dedupe", userInput("health.go, Health.go and health.go; Bash and bash"), []string{"health.go", "Bash"}},
		{"bare name after path", Input{Blocks: []Block{
			{Role: "user", Kind: "text", Text: "fix health.go"},
			{Role: "assistant", Kind: "tool_use", Tool: "Edit", Text: "/home/dev/proj/health.go"},
		}}, []string{"Edit", "/home/dev/proj/health.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := extractEntities(t, tt.in)
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Extract(%s).Entities=%q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestEntitiesBounded(t *testing.T) {
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "internal/pkg%d/file%d.go ", i, i)
	}
	b.WriteString(strings.Repeat("x", 500) + ".go")
	got := extractEntities(t, userInput(b.String()))
	if len(got) != maxEntities {
		t.Errorf("len(Entities)=%d, want %d", len(got), maxEntities)
	}
	for _, e := range got {
		if len(e) > maxEntityLen {
			t.Errorf("entity of %d bytes, want ≤ %d", len(e), maxEntityLen)
		}
	}
}
