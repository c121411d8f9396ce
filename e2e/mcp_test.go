package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-memory/engram/internal/anthropicstub"
)

// The conversation of the MCP test. mcpFact is the distinctive fact of
// session 1; the model only ever learns it again through engram's tools.
const (
	mcpFact         = "ledger-eu-4417"
	mcpPromptFact   = "Remember: the ledger service deploys to Fly with `flyctl deploy --app " + mcpFact + "`"
	mcpReplyFact    = "Noted: the ledger service deploys to Fly."
	mcpPromptRecall = "What did we decide about deploying the ledger service? Look it up in engram's memory."
	mcpPromptForget = "That note about deploying the ledger service is obsolete: forget it."
	mcpRecallQuery  = "ledger service deploy Fly"

	mcpToolRecall = "mcp__engram__memory_recall"
	mcpToolForget = "mcp__engram__memory_forget"
)

var episodeIDPattern = regexp.MustCompile(`ID: (ep_[0-9a-f]+)`)

// mcpModel is the stand-in model of the MCP test. MCP tools are deferred in
// Claude Code 2.1.330, so each use takes two steps, as a real model's
// would: ToolSearch with "select:<tool>", then the call. It keeps what the
// tools answered.
type mcpModel struct {
	mu        sync.Mutex
	problems  []string
	recalls   []string // memory_recall results, in order
	forgets   []string // memory_forget results
	searches  []string // the tools each ToolSearch answer loaded
	episodeID string   // the fact's episode, from the first recall
}

// seen is a copy of what the model has been told so far.
func (m *mcpModel) seen() mcpModel {
	m.mu.Lock()
	defer m.mu.Unlock()
	return mcpModel{problems: slices.Clone(m.problems), recalls: slices.Clone(m.recalls), forgets: slices.Clone(m.forgets),
		searches: slices.Clone(m.searches), episodeID: m.episodeID}
}

// problem records a request the model could not answer as scripted; the
// caller holds m.mu.
func (m *mcpModel) problem(format string, a ...any) {
	m.problems = append(m.problems, fmt.Sprintf(format, a...))
}

// lastResult is the text of the last tool result of the request, and
// whether the client marked it as an error.
func lastResult(r *anthropicstub.Request) (string, bool) {
	res := r.LastToolResults()
	if len(res) == 0 {
		return "", false
	}
	return res[len(res)-1].Content, res[len(res)-1].IsError
}

func (m *mcpModel) respond(r *anthropicstub.Request) anthropicstub.Reply {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := r.Prompt()
	round := r.ToolRounds()
	result, isErr := lastResult(r)
	if round > 0 && isErr {
		m.problem("request #%d: the client reports a tool error: %s", r.Seq, result)
		return anthropicstub.Text("The tool failed.")
	}
	// loaded checks that the ToolSearch answer just received loaded name.
	loaded := func(name string) bool {
		var refs []string
		for _, b := range r.LastToolResults() {
			refs = append(refs, b.References...)
		}
		m.searches = append(m.searches, strings.Join(refs, ","))
		if !slices.Contains(refs, name) {
			m.problem("request #%d: ToolSearch answered with tool references %q, not %s", r.Seq, refs, name)
			return false
		}
		return true
	}
	recall := anthropicstub.Call(mcpToolRecall, map[string]any{"query": mcpRecallQuery})
	switch {
	case strings.Contains(p, mcpPromptForget):
		switch round {
		case 0:
			return anthropicstub.LoadTools(mcpToolForget)
		case 1:
			if !loaded(mcpToolForget) {
				return anthropicstub.Text("The tool did not load.")
			}
			if m.episodeID == "" {
				m.problem("request #%d: asked to forget, but no episode id was recalled before", r.Seq)
				return anthropicstub.Text("I have nothing to forget.")
			}
			return anthropicstub.Call(mcpToolForget, map[string]string{"id": m.episodeID})
		case 2:
			m.forgets = append(m.forgets, result)
			return anthropicstub.LoadTools(mcpToolRecall)
		case 3:
			if !loaded(mcpToolRecall) {
				return anthropicstub.Text("The tool did not load.")
			}
			return recall
		default:
			m.recalls = append(m.recalls, result)
			return anthropicstub.Text("Forgotten.")
		}
	case strings.Contains(p, mcpPromptRecall):
		switch round {
		case 0:
			return anthropicstub.LoadTools(mcpToolRecall)
		case 1:
			if !loaded(mcpToolRecall) {
				return anthropicstub.Text("The tool did not load.")
			}
			return recall
		default:
			m.recalls = append(m.recalls, result)
			if sub := episodeIDPattern.FindStringSubmatch(result); sub != nil && strings.Contains(result, mcpFact) {
				m.episodeID = sub[1]
				// The reply names the id only: the fact must reach later
				// sessions through engram's tools, never through this text.
				return anthropicstub.Text("engram has a note on it: " + sub[1] + ".")
			}
			return anthropicstub.Text("engram has no note on it.")
		}
	case strings.Contains(p, "Remember: the ledger service"):
		return anthropicstub.Text(mcpReplyFact)
	}
	m.problem("request #%d: unexpected prompt %q (round %d)", r.Seq, p, round)
	return anthropicstub.Text("OK.")
}

// promptMCP runs `claude -p` with prompt in dir, allowing engram's MCP
// tools, and returns the run with its session id.
func (e *Env) promptMCP(dir, prompt string) RunResult {
	e.t.Helper()
	args := []string{"-p", "--output-format", "json", "--allowedTools", "mcp__engram", "--", prompt}
	res, err := e.runClient(dir, args)
	if err != nil {
		e.t.Fatalf("%v\n%s\nstub requests:\n%s", err, res, e.Stub.Summary())
	}
	var out struct {
		IsError   bool   `json:"is_error"`
		Result    string `json:"result"`
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(lastJSONLine(res.Stdout)), &out); err != nil || out.IsError || out.SessionID == "" {
		e.t.Fatalf("client output (%v):\n%s\nstub requests:\n%s", err, res, e.Stub.Summary())
	}
	res.SessionID, res.Result = out.SessionID, out.Result
	e.t.Logf("claude %s: session %s in %v", strings.Join(args, " "), res.SessionID, res.Duration.Round(1e6))
	return res
}

// TestMCPWithRealClient: engram-worker setup registers the MCP server where
// the real client reads user-level servers; in a later session the model
// loads memory_recall (ToolSearch, then the call) and the tool result that
// reaches it holds the memory of an earlier session; memory_forget then
// removes the memory and a second recall no longer finds it. What the tools
// showed is not captured back as a memory, and uninstall takes the
// registration out again.
func TestMCPWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	model := &mcpModel{}
	e := NewEnv(t, model.respond, Hooks{})
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
			if b, err := os.ReadFile(filepath.Join(e.EngramHome, "logs", "mcp.log")); err == nil {
				t.Logf("mcp.log:\n%s", b)
			}
		}
	}()

	// Setup installs the hooks and registers the server at user level.
	out := e.Worker(bins.Worker, "setup")
	t.Logf("engram-worker setup:\n%s", out)
	userConfig := filepath.Join(e.Home, ".claude.json")
	reg := readMCPServer(t, userConfig)
	if reg.Command != bins.Worker || len(reg.Args) != 1 || reg.Args[0] != "mcp" {
		t.Fatalf("%s: mcpServers.engram = %+v, want %s mcp", userConfig, reg, bins.Worker)
	}

	// Session 1 states the fact; the worker turns it into an episode.
	s1 := e.Prompt("", mcpPromptFact)
	if !strings.Contains(s1.Result, mcpReplyFact) {
		t.Fatalf("session 1: result %q", s1.Result)
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if eps := readEpisodes(t, e); !hasEpisode(eps, mcpFact, e.Project) {
		t.Fatalf("no episode of %s holds %s after engram-worker run:\n%s", e.Project, mcpFact, describeEpisodes(eps))
	}
	doctor := e.Worker(bins.Worker, "doctor")
	if !regexp.MustCompile(`(?m)^ok +mcp server +`).MatchString(doctor) {
		t.Errorf("doctor does not find the MCP server registered:\n%s", doctor)
	}

	// Session 2: the model recalls through the MCP tool.
	before := len(e.Stub.Requests())
	s2 := e.promptMCP(e.Project, mcpPromptRecall)
	seen := model.seen()
	reqs := e.Stub.Requests()[before:]
	if !offersDeferred(reqs, mcpToolRecall) {
		t.Errorf("session 2: no request names %s (the client did not load engram's server?)", mcpToolRecall)
	}
	if len(seen.recalls) != 1 {
		t.Fatalf("session 2: the model got %d memory_recall results, want 1; ToolSearch answered: %q", len(seen.recalls), seen.searches)
	}
	first := seen.recalls[0]
	t.Logf("ToolSearch loaded: %q", seen.searches)
	t.Logf("memory_recall result:\n%s", first)
	if !strings.Contains(first, mcpFact) || !strings.Contains(first, "[E] (") || seen.episodeID == "" {
		t.Fatalf("session 2: the memory_recall result that reached the model lacks the fact %s as an [E] line with its ID:\n%s", mcpFact, first)
	}
	if !strings.Contains(s2.Result, seen.episodeID) {
		t.Errorf("session 2: client result %q, want the model's answer naming %s", s2.Result, seen.episodeID)
	}

	// Session 3: forget it, then recall again.
	s3 := e.promptMCP(e.Project, mcpPromptForget)
	seen = model.seen()
	if len(seen.forgets) != 1 || len(seen.recalls) != 2 {
		t.Fatalf("session 3: %d forget and %d recall results, want 1 and 2 in all; ToolSearch answered: %q",
			len(seen.forgets), len(seen.recalls), seen.searches)
	}
	t.Logf("memory_forget result: %s", seen.forgets[0])
	if !strings.Contains(seen.forgets[0], "Forgot episode "+seen.episodeID) {
		t.Errorf("session 3: memory_forget answered %q", seen.forgets[0])
	}
	second := seen.recalls[1]
	t.Logf("second memory_recall result:\n%s", second)
	if strings.Contains(second, mcpFact) || strings.Contains(second, seen.episodeID) {
		t.Errorf("session 3: the memory still comes back after memory_forget:\n%s", second)
	}
	if !strings.Contains(s3.Result, "Forgotten.") {
		t.Errorf("session 3: client result %q", s3.Result)
	}
	for _, ep := range readEpisodes(t, e) {
		if ep.ID == seen.episodeID {
			t.Errorf("episode %s is still in the store after memory_forget", ep.ID)
		}
	}

	// What the tools showed comes back in the transcripts; capture must
	// leave it out, or engram would re-learn the forgotten memory.
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	caps, err := readCaptures(e)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range caps {
		if c.SessionID != s2.SessionID && c.SessionID != s3.SessionID {
			continue
		}
		n++
		if strings.Contains(c.Content, mcpFact) {
			t.Errorf("capture %d of session %s holds what engram's tool showed (%s):\n%s", c.ID, c.SessionID, mcpFact, c.Content)
		}
	}
	if n == 0 {
		t.Errorf("sessions 2 and 3 have no captures: the check above proves nothing\n%s", describeCaptures(caps))
	}
	for _, ep := range readEpisodes(t, e) {
		if strings.Contains(ep.Summary+ep.Context, mcpFact) {
			t.Errorf("episode %s holds the forgotten fact again:\n%s", ep.ID, ep.Context)
		}
	}
	if p := model.seen().problems; len(p) > 0 {
		t.Errorf("stand-in model problems: %q", p)
	}

	// The client ended the server at each session's end: the log says so,
	// and holds no ERROR line (a session's end is not a failure).
	if b, err := os.ReadFile(filepath.Join(e.EngramHome, "logs", "mcp.log")); err != nil {
		t.Errorf("mcp.log: %v", err)
	} else if strings.Count(string(b), `"msg":"mcp server end"`) < 2 || strings.Contains(string(b), `"level":"ERROR"`) {
		t.Errorf("mcp.log after three sessions, want an end per session and no ERROR line:\n%s", b)
	}

	// Uninstall takes the registration out of the file the client rewrote
	// meanwhile, and leaves the client's own keys.
	clientKeys := userConfigWithoutEngram(t, userConfig)
	if len(clientKeys) == 0 {
		t.Errorf("%s holds nothing of the client's own: the check below proves nothing", userConfig)
	}
	t.Logf("engram-worker uninstall:\n%s", e.Worker(bins.Worker, "uninstall"))
	if reg := readMCPServer(t, userConfig); reg.Command != "" {
		t.Errorf("after uninstall, %s still registers %+v", userConfig, reg)
	}
	if after := userConfigWithoutEngram(t, userConfig); !reflect.DeepEqual(after, clientKeys) {
		t.Errorf("uninstall changed more of %s than engram's entry:\nbefore %v\nafter  %v", userConfig, clientKeys, after)
	}
	// And leaves no backup of its own behind.
	for _, dir := range []string{e.Home, filepath.Join(e.Home, ".claude")} {
		if found, _ := filepath.Glob(filepath.Join(dir, "*.engram-backup-*")); len(found) > 0 {
			t.Errorf("backups left after uninstall: %v", found)
		}
	}
}

// userConfigWithoutEngram decodes the user configuration file without
// mcpServers.engram (and an mcpServers left empty).
func userConfigWithoutEngram(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	if s, ok := v["mcpServers"].(map[string]any); ok {
		delete(s, "engram")
		if len(s) == 0 {
			delete(v, "mcpServers")
		}
	}
	return v
}

type mcpServerEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// readMCPServer decodes mcpServers.engram of the user configuration file.
func readMCPServer(t *testing.T, path string) mcpServerEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	var v struct {
		MCPServers map[string]mcpServerEntry `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s is not valid JSON: %v", path, err)
	}
	return v.MCPServers["engram"]
}

// offersDeferred reports whether a conversation request names a tool,
// among its tools or in its text (deferred tools are listed by name).
func offersDeferred(reqs []anthropicstub.Request, name string) bool {
	for _, r := range reqs {
		if r.Path == "/v1/messages" && !r.Aux && (r.HasTool(name) || r.Contains(name)) {
			return true
		}
	}
	return false
}
