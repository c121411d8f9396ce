package anthropicstub

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	Name string
	Data map[string]any
}

// parseSSE parses a server-sent event stream strictly: every event is an
// "event:" line and one "data:" line holding JSON whose "type" equals the
// event name, terminated by a blank line.
func parseSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var haveData bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name == "" || !haveData {
				t.Fatalf("event %d: blank line before event and data lines", len(out))
			}
			if got := cur.Data["type"]; got != cur.Name {
				t.Fatalf("event %d: name %q but data type %v", len(out), cur.Name, got)
			}
			out = append(out, cur)
			cur, haveData = sseEvent{}, false
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if haveData {
				t.Fatalf("event %q: two data lines", cur.Name)
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data); err != nil {
				t.Fatalf("event %q: data is not JSON: %v", cur.Name, err)
			}
			haveData = true
		default:
			t.Fatalf("unexpected line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur.Name != "" || haveData {
		t.Fatalf("stream ended inside event %q", cur.Name)
	}
	return out
}

// streamed is a response message reassembled from its events the way a
// client does.
type streamed struct {
	Names      []string
	ID         string
	Blocks     []map[string]any
	Texts      []string // per block: text deltas or partial JSON, joined
	StopReason string
}

func reassemble(t *testing.T, evs []sseEvent) streamed {
	t.Helper()
	var s streamed
	open := -1
	for _, ev := range evs {
		s.Names = append(s.Names, ev.Name)
		switch ev.Name {
		case "message_start":
			m := ev.Data["message"].(map[string]any)
			s.ID, _ = m["id"].(string)
			if m["role"] != "assistant" || m["type"] != "message" {
				t.Fatalf("message_start message = %v", m)
			}
		case "content_block_start":
			idx := int(ev.Data["index"].(float64))
			if open != -1 || idx != len(s.Blocks) {
				t.Fatalf("content_block_start index %d with block %d open and %d blocks seen", idx, open, len(s.Blocks))
			}
			open = idx
			s.Blocks = append(s.Blocks, ev.Data["content_block"].(map[string]any))
			s.Texts = append(s.Texts, "")
		case "content_block_delta":
			idx := int(ev.Data["index"].(float64))
			if idx != open {
				t.Fatalf("delta for block %d while %d is open", idx, open)
			}
			d := ev.Data["delta"].(map[string]any)
			want := map[string]string{"text": "text_delta", "tool_use": "input_json_delta"}[s.Blocks[idx]["type"].(string)]
			if d["type"] != want {
				t.Fatalf("block %d of type %v got delta %v, want %s", idx, s.Blocks[idx]["type"], d["type"], want)
			}
			if want == "text_delta" {
				s.Texts[idx] += d["text"].(string)
			} else {
				s.Texts[idx] += d["partial_json"].(string)
			}
		case "content_block_stop":
			if int(ev.Data["index"].(float64)) != open {
				t.Fatalf("content_block_stop %v while %d is open", ev.Data["index"], open)
			}
			open = -1
		case "message_delta":
			d := ev.Data["delta"].(map[string]any)
			s.StopReason, _ = d["stop_reason"].(string)
			if _, ok := ev.Data["usage"].(map[string]any)["output_tokens"]; !ok {
				t.Fatalf("message_delta without usage.output_tokens: %v", ev.Data)
			}
		}
	}
	return s
}

func post(t *testing.T, srv *Server, path string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// conversation builds a request body like Claude Code's: a system prompt
// as blocks, the prompt with a system reminder, and n tool rounds.
func conversation(prompt string, rounds int, stream bool) map[string]any {
	msgs := []any{
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>"},
			map[string]any{"type": "text", "text": prompt},
		}},
		map[string]any{"role": "system", "content": "SessionStart hook success: x"},
	}
	for i := 0; i < rounds; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": map[string]any{"command": "true"}}}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": id, "content": []any{
					map[string]any{"type": "text", "text": fmt.Sprintf("result %d", i)}}}}},
		)
	}
	return map[string]any{
		"model":      "claude-test",
		"max_tokens": 32000,
		"stream":     stream,
		"system": []any{
			map[string]any{"type": "text", "text": "You are a test agent."},
			map[string]any{"type": "text", "text": "Second block \"quoted\"."},
		},
		"messages": msgs,
		"tools":    []any{map[string]any{"name": "Bash", "input_schema": map[string]any{}}, map[string]any{"name": "Write"}},
	}
}

func TestListensOnLoopback(t *testing.T) {
	srv := Start(t, nil)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" {
		t.Fatalf("URL %s, want host 127.0.0.1", srv.URL)
	}
}

func TestStreamText(t *testing.T) {
	srv := Start(t, func(*Request) Reply { return Text("Hello — streamed reply with ünïcode.") })
	resp := post(t, srv, "/v1/messages?beta=true", conversation("hi", 0, true))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	s := reassemble(t, parseSSE(t, resp.Body))
	wantNames := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta",
		"content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(s.Names, wantNames) {
		t.Fatalf("events %v, want %v", s.Names, wantNames)
	}
	if len(s.Blocks) != 1 || s.Blocks[0]["type"] != "text" || s.Blocks[0]["text"] != "" {
		t.Fatalf("blocks %v, want one empty text block at start", s.Blocks)
	}
	if s.Texts[0] != "Hello — streamed reply with ünïcode." {
		t.Fatalf("text %q", s.Texts[0])
	}
	if s.StopReason != "end_turn" {
		t.Fatalf("stop_reason %q, want end_turn", s.StopReason)
	}
	if !strings.HasPrefix(s.ID, "msg_") {
		t.Fatalf("message id %q", s.ID)
	}
}

func TestStreamToolUse(t *testing.T) {
	input := map[string]any{"command": `echo "hi there" > out.txt`, "description": "Write a file"}
	srv := Start(t, func(*Request) Reply {
		return Reply{Text: "Let me run it.", ToolUses: []ToolUse{{Name: "Bash", Input: input}, {Name: "Write", Input: json.RawMessage(`{"file_path":"/x","content":"y"}`)}}}
	})
	resp := post(t, srv, "/v1/messages?beta=true", conversation("hi", 0, true))
	s := reassemble(t, parseSSE(t, resp.Body))
	if s.StopReason != "tool_use" {
		t.Fatalf("stop_reason %q, want tool_use", s.StopReason)
	}
	if len(s.Blocks) != 3 {
		t.Fatalf("%d blocks, want text + 2 tool_use: %v", len(s.Blocks), s.Blocks)
	}
	if s.Texts[0] != "Let me run it." {
		t.Fatalf("text %q", s.Texts[0])
	}
	ids := map[string]bool{}
	for i, name := range []string{"Bash", "Write"} {
		b := s.Blocks[i+1]
		if b["type"] != "tool_use" || b["name"] != name {
			t.Fatalf("block %d = %v, want tool_use %s", i+1, b, name)
		}
		if in, ok := b["input"].(map[string]any); !ok || len(in) != 0 {
			t.Fatalf("block %d starts with input %v, want {}", i+1, b["input"])
		}
		id, _ := b["id"].(string)
		if !strings.HasPrefix(id, "toolu_") || ids[id] {
			t.Fatalf("tool_use id %q not unique or malformed", id)
		}
		ids[id] = true
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(s.Texts[1]), &got); err != nil {
		t.Fatalf("partial_json deltas %q do not join to JSON: %v", s.Texts[1], err)
	}
	if !reflect.DeepEqual(got, input) {
		t.Fatalf("tool input %v, want %v", got, input)
	}
	if s.Texts[2] != `{"file_path":"/x","content":"y"}` {
		t.Fatalf("raw input %q", s.Texts[2])
	}
}

func TestNonStreaming(t *testing.T) {
	srv := Start(t, func(*Request) Reply { return Bash("ls", "List") })
	resp := post(t, srv, "/v1/messages", conversation("hi", 0, false))
	var m struct {
		Type       string `json:"type"`
		Role       string `json:"role"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string            `json:"type"`
			Name  string            `json:"name"`
			Input map[string]string `json:"input"`
		} `json:"content"`
		Usage map[string]int `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	if m.Type != "message" || m.Role != "assistant" || m.Model != "claude-test" || m.StopReason != "tool_use" {
		t.Fatalf("message %+v", m)
	}
	if len(m.Content) != 1 || m.Content[0].Name != "Bash" || m.Content[0].Input["command"] != "ls" {
		t.Fatalf("content %+v", m.Content)
	}
	if _, ok := m.Usage["output_tokens"]; !ok {
		t.Fatalf("usage %v", m.Usage)
	}
}

func TestCountTokensAndUnknownPaths(t *testing.T) {
	srv := Start(t, nil)
	resp := post(t, srv, "/v1/messages/count_tokens?beta=true", conversation("hi", 0, false))
	var ct map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&ct); err != nil || ct["input_tokens"] <= 0 {
		t.Fatalf("count_tokens = %v, %v", ct, err)
	}
	resp = post(t, srv, "/api/something/new", map[string]string{"a": "b"})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown path status %d, want 404", resp.StatusCode)
	}
	if got := srv.UnknownPaths(); !reflect.DeepEqual(got, []string{"POST /api/something/new"}) {
		t.Fatalf("UnknownPaths() = %v", got)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests recorded, want 2", n)
	}
	if n := len(srv.MessageRequests()); n != 0 {
		t.Fatalf("%d message requests, want 0", n)
	}
}

func TestRecording(t *testing.T) {
	srv := Start(t, nil)
	post(t, srv, "/v1/messages?beta=true", conversation("prompt with MARKER-1", 1, false))
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Seq != 1 || r.Path != "/v1/messages" || r.Query != "beta=true" || r.Method != "POST" {
		t.Fatalf("request %d %s %s?%s", r.Seq, r.Method, r.Path, r.Query)
	}
	if r.System != "You are a test agent.\nSecond block \"quoted\"." {
		t.Fatalf("System = %q", r.System)
	}
	if r.Model != "claude-test" || r.MaxTokens != 32000 || r.Stream || !r.HasTool("Write") || r.Aux {
		t.Fatalf("decoded %+v", r)
	}
	if got := r.Prompt(); !strings.HasSuffix(got, "\nprompt with MARKER-1") {
		t.Fatalf("Prompt() = %q", got)
	}
	if got := r.LastToolResults(); len(got) != 1 || got[0].Content != "result 0" {
		t.Fatalf("LastToolResults() = %+v", got)
	}
	for _, s := range []string{"MARKER-1", `Second block "quoted".`, "result 0", "SessionStart hook success"} {
		if !srv.ContainsInAnyRequest(s) {
			t.Errorf("ContainsInAnyRequest(%q) = false", s)
		}
	}
	if srv.ContainsInAnyRequest("MARKER-2") {
		t.Error(`ContainsInAnyRequest("MARKER-2") = true`)
	}
	if !srv.SystemContains("test agent") || srv.SystemContains("MARKER-1") {
		t.Error("SystemContains looks beyond the system prompt or misses it")
	}
}

func TestScript(t *testing.T) {
	sc := NewScript()
	sc.On("WORD-A").Bash("echo a", "A").Write("/tmp/a", "a").Reply("done A")
	sc.On("WORD-B").Reply("done B")
	srv := Start(t, sc.Respond)

	tests := []struct {
		prompt     string
		rounds     int
		wantTool   string
		wantText   string
		wantAux    bool
		noBashTool bool
	}{
		{prompt: "please WORD-A", rounds: 0, wantTool: "Bash"},
		{prompt: "please WORD-A", rounds: 1, wantTool: "Write"},
		// An auxiliary request in the middle must not advance the script.
		{prompt: "title for WORD-A", rounds: 0, wantText: "Stub reply", wantAux: true, noBashTool: true},
		{prompt: "please WORD-A", rounds: 2, wantText: "done A"},
		// Retrying a request gets the same answer.
		{prompt: "please WORD-A", rounds: 2, wantText: "done A"},
		{prompt: "WORD-B now", rounds: 0, wantText: "done B"},
	}
	for i, tt := range tests {
		body := conversation(tt.prompt, tt.rounds, false)
		if tt.noBashTool {
			body["tools"] = []any{}
		}
		resp := post(t, srv, "/v1/messages", body)
		var m struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
				Name string `json:"name"`
			} `json:"content"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		if len(m.Content) != 1 {
			t.Fatalf("step %d: content %+v", i, m.Content)
		}
		c := m.Content[0]
		if tt.wantTool != "" && (c.Type != "tool_use" || c.Name != tt.wantTool) {
			t.Errorf("step %d (%q, %d rounds): got %+v, want tool %s", i, tt.prompt, tt.rounds, c, tt.wantTool)
		}
		if tt.wantText != "" && (c.Type != "text" || c.Text != tt.wantText) {
			t.Errorf("step %d (%q, %d rounds): got %+v, want text %q", i, tt.prompt, tt.rounds, c, tt.wantText)
		}
	}
	if n := len(srv.AuxRequests()); n != 1 {
		t.Errorf("%d aux requests, want 1", n)
	}
	if n := len(srv.MainRequests()); n != len(tests)-1 {
		t.Errorf("%d main requests, want %d", n, len(tests)-1)
	}
	if p := sc.Problems(); len(p) != 0 {
		t.Errorf("Problems() = %v", p)
	}

	// Unmatched prompts and exhausted turns are reported.
	post(t, srv, "/v1/messages", conversation("nothing scripted", 0, false))
	post(t, srv, "/v1/messages", conversation("WORD-B", 1, false))
	if p := sc.Problems(); len(p) != 2 {
		t.Errorf("Problems() = %q, want 2 entries", p)
	}
}

func TestConcurrentRequests(t *testing.T) {
	srv := Start(t, func(r *Request) Reply { return Text("reply to " + lastLine(r.Prompt())) })
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(conversation(fmt.Sprintf("p%d", i), 0, true))
			resp, err := http.Post(srv.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(string(b)))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
		}()
	}
	wg.Wait()
	reqs := srv.Requests()
	if len(reqs) != 20 {
		t.Fatalf("%d requests recorded, want 20", len(reqs))
	}
	for i, r := range reqs {
		if r.Seq != i+1 {
			t.Fatalf("request %d has Seq %d", i, r.Seq)
		}
	}
}

func TestChunks(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"ab", 3, []string{"a", "b"}},
		{"abcdefg", 3, []string{"abc", "def", "g"}},
		{"äöü", 2, []string{"äö", "ü"}},
	}
	for _, tt := range tests {
		if got := chunks(tt.in, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("chunks(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestToolReferences(t *testing.T) {
	srv := Start(t, func(r *Request) Reply {
		if len(r.LoadedTools()) == 0 {
			return LoadTools("mcp__x__a", "mcp__x__b")
		}
		return Text("loaded")
	})
	body := conversation("load the tools", 0, false)
	body["messages"] = append(body["messages"].([]any),
		map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "ToolSearch", "input": map[string]any{"query": "select:mcp__x__a,mcp__x__b"}}}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{
				map[string]any{"type": "tool_reference", "tool_name": "mcp__x__a"},
				map[string]any{"type": "tool_reference", "tool_name": "mcp__x__b"}}},
			map[string]any{"type": "text", "text": "Tool loaded."}}},
	)
	post(t, srv, "/v1/messages", body)
	r := srv.Requests()[0]
	if got := r.LoadedTools(); !reflect.DeepEqual(got, []string{"mcp__x__a", "mcp__x__b"}) {
		t.Fatalf("LoadedTools() = %q", got)
	}
	if res := r.LastToolResults(); len(res) != 1 || res[0].Content != "" || len(res[0].References) != 2 {
		t.Fatalf("LastToolResults() = %+v", res)
	}
	if r.ToolRounds() != 1 {
		t.Fatalf("ToolRounds() = %d", r.ToolRounds())
	}

	// The reply that loads them.
	first := conversation("load the tools", 0, false)
	resp := post(t, srv, "/v1/messages", first)
	var m struct {
		Content []struct {
			Type, Name string
			Input      map[string]string
		}
		StopReason string `json:"stop_reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	last := m.Content[len(m.Content)-1]
	if m.StopReason != "tool_use" || last.Name != "ToolSearch" || last.Input["query"] != "select:mcp__x__a,mcp__x__b" {
		t.Fatalf("LoadTools reply: %+v", m)
	}
}
