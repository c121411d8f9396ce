package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// Unique words of the memories the test forgets, and of one it keeps. The
// porter stemmer leaves each as it is, so the full-text index holds them
// verbatim (lower case).
const (
	forgetCaptured  = "Zorbliquat" // said in a session: capture, episode, index, recollection
	forgetGraduated = "Vexmardun"  // an important global episode: the global MEMORY.md
	forgetGlobal    = "Plinthorax" // a global belief shown in the global MEMORY.md, forgotten by memory_forget
	forgetProject   = "Quibzonk"   // a project belief shown in the project's auto-memory
	keptWord        = "Wombatrix"  // kept: it must still be found, so the search itself works
)

// forgetHome is an installation without the client: engram's programs, a
// store, MEMORY.md files, and a transcript outside both directories
// searched (it is Claude Code's record of the session, not engram's).
type forgetHome struct {
	t                          *testing.T
	bins                       Binaries
	base, home, engram, claude string
	project, transcripts       string
}

func (h *forgetHome) environ() []string {
	return []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "ENGRAM_HOME=" + h.engram,
		"CLAUDE_CONFIG_DIR=" + h.claude, "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1", "TMPDIR=" + filepath.Join(h.base, "tmp")}
}

func (h *forgetHome) run(bin, stdin string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = h.environ(), h.project
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		h.t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// session writes a transcript of one turn and runs the Stop hook on it.
func (h *forgetHome) session(id, prompt, reply string) {
	h.t.Helper()
	path := filepath.Join(h.transcripts, id+".jsonl")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	line := func(v map[string]any) string {
		b, _ := json.Marshal(v)
		return string(b) + "\n"
	}
	promptID := id[:8] + "-prompt"
	data := line(map[string]any{"type": "user", "promptId": promptID, "uuid": id + "-u1", "timestamp": now, "cwd": h.project,
		"sessionId": id, "message": map[string]any{"role": "user", "content": prompt}}) +
		line(map[string]any{"type": "assistant", "uuid": id + "-a1", "timestamp": now, "cwd": h.project, "sessionId": id,
			"message": map[string]any{"id": "msg_" + id[:8], "role": "assistant", "content": []map[string]any{{"type": "text", "text": reply}}}})
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		h.t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"session_id": id, "transcript_path": path, "cwd": h.project, "prompt_id": promptID,
		"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": reply})
	if out := h.run(h.bins.HookStop, string(in)); out != "" {
		h.t.Fatalf("the Stop hook printed %q", out)
	}
}

// newForgetHome makes the installation, with a git repository for the
// project, and runs a first cycle (the store exists then).
func newForgetHome(t *testing.T) *forgetHome {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &forgetHome{t: t, bins: buildBinaries(t), base: base, home: filepath.Join(base, "home"), project: filepath.Join(base, "work", "proj"),
		transcripts: filepath.Join(base, "transcripts")}
	h.engram, h.claude = filepath.Join(h.home, ".claude-memory"), filepath.Join(h.home, ".claude")
	for _, d := range []string{h.claude, h.project, h.transcripts, filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = h.project, h.environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git: %v\n%s", err, out)
		}
	}
	h.run(h.bins.Worker, "", "run")
	return h
}

// findWord lists the files under dirs whose bytes hold word, in any case.
func findWord(t *testing.T, word string, dirs ...string) []string {
	t.Helper()
	var hits []string
	w := bytes.ToLower([]byte(word))
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(bytes.ToLower(data), w) {
				hits = append(hits, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return hits
}

// After forget — from the command line and through memory_forget — a
// forgotten memory's text is in no byte under $ENGRAM_HOME or Claude Code's
// directory: not in the captures, the episodes, the FTS5 tables, freed
// pages or the WAL, the search index, recollection files, injected-context
// logs, the spool, nor in any MEMORY.md; and a promoted belief has left its
// MEMORY.md at once, before any worker run.
func TestForgetLeavesNoTrace(t *testing.T) {
	h := newForgetHome(t)
	bins := h.bins

	// A session says the first word; another one says the kept word.
	h.session("5a0e8c61-1111-4c1e-9d5a-0f6b2c3d4e5f", "Our invoices table moves to the "+forgetCaptured+" cluster next week.",
		"Noted: invoices move to the "+forgetCaptured+" cluster.")
	h.session("5a0e8c61-2222-4c1e-9d5a-0f6b2c3d4e5f", "The staging cache runs on "+keptWord+" now.",
		"Noted: the staging cache runs on "+keptWord+".")
	// An important global episode and two trusted beliefs.
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(h.engram, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local := embed.NewLocal()
	now := time.Now()
	grad := "Never put emoji in commit messages, says the " + forgetGraduated + " style guide"
	err = db.Import(ctx, []episode.Episode{{ID: "ep_00000000f001", Summary: grad, Context: "User: " + grad, Type: "preference",
		Scope: episode.ScopeGlobal, ContentHash: "f001", Importance: 0.95, Embedding: local.EmbedText(grad), Embedder: local.Name(),
		OccurredAt: now, CreatedAt: now, UpdatedAt: now}},
		[]belief.Belief{
			{ID: "bl_00000000f002", Statement: "User prefers the " + forgetGlobal + " formatter.", Timeframe: "current", Alpha: 9, Beta: 1,
				Scope: "global", Status: "active", EvidenceCount: 4, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
			{ID: "bl_00000000f003", Statement: "Project proj deploys with " + forgetProject + ".", Timeframe: "current", Alpha: 9, Beta: 1,
				Scope: "project", Project: "proj", ProjectPath: h.project, Status: "active", EvidenceCount: 4, Stability: 1,
				CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
			{ID: "bl_00000000f004", Statement: "User prefers " + keptWord + " for caches.", Timeframe: "current", Alpha: 9, Beta: 1,
				Scope: "global", Status: "active", EvidenceCount: 4, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
		})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Logf("engram-worker run: %s", h.run(bins.Worker, "", "run"))

	// The prompt hook recalls the first memory (its injected-context log
	// and the access log get its id).
	in, _ := json.Marshal(map[string]any{"session_id": "5a0e8c61-3333-4c1e-9d5a-0f6b2c3d4e5f", "cwd": h.project,
		"hook_event_name": "UserPromptSubmit", "prompt": "Which cluster do the invoices move to, " + forgetCaptured + "?"})
	if out := h.run(bins.HookUserPrompt, string(in)); !strings.Contains(out, forgetCaptured) {
		t.Fatalf("the prompt hook did not recall the memory: %q", out)
	}

	db, err = store.Open(ctx, filepath.Join(h.engram, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var capturedID string
	eps, _ := db.EpisodesAfter(ctx, 0, 100)
	for _, e := range eps {
		if strings.Contains(e.Context, forgetCaptured) {
			capturedID = e.ID
		}
	}
	db.Close()
	if capturedID == "" {
		t.Fatalf("no episode holds %s", forgetCaptured)
	}
	globalMD := filepath.Join(h.engram, "MEMORY.md")
	projectMD := filepath.Join(h.claude, "projects", sanitizePath(h.project), "memory", "MEMORY.md")
	dirs := []string{h.engram, h.claude}
	// Before: every word is somewhere, so the search below can fail.
	for word, where := range map[string]string{forgetCaptured: "", forgetGraduated: globalMD, forgetGlobal: globalMD,
		forgetProject: projectMD, keptWord: globalMD} {
		hits := findWord(t, word, dirs...)
		t.Logf("before forget, %s is in %d files: %v", word, len(hits), hits)
		if len(hits) == 0 || where != "" && !contains(hits, where) {
			t.Fatalf("before forget, %s is not where it should be (%s): %v", word, where, hits)
		}
	}

	// The command line forgets the captured episode, the graduated one and
	// the project belief; memory_forget the global belief.
	t.Logf("forget: %s", h.run(bins.Worker, "", "forget", capturedID, "ep_00000000f001", "bl_00000000f003"))
	mcpForget(t, h, "bl_00000000f002")

	for _, word := range []string{forgetCaptured, forgetGraduated, forgetGlobal, forgetProject} {
		if hits := findWord(t, word, dirs...); len(hits) > 0 {
			t.Errorf("after forget, %s is still in %v", word, hits)
		}
	}
	if hits := findWord(t, keptWord, dirs...); !contains(hits, globalMD) || !contains(hits, filepath.Join(h.engram, "memory.db")) {
		t.Errorf("the kept memory is not in the global MEMORY.md and the store any more: %v", hits)
	}
	if fi, err := os.Stat(filepath.Join(h.engram, "memory.db-wal")); err == nil && fi.Size() != 0 {
		t.Errorf("the WAL holds %d bytes after forget", fi.Size())
	}
	// The store still works, and the next cycle brings nothing back.
	t.Logf("engram-worker run: %s", h.run(bins.Worker, "", "run"))
	for _, word := range []string{forgetCaptured, forgetGraduated, forgetGlobal, forgetProject} {
		if hits := findWord(t, word, dirs...); len(hits) > 0 {
			t.Errorf("after the next run, %s is in %v", word, hits)
		}
	}
	db, err = store.Open(ctx, filepath.Join(h.engram, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.QuickCheck(ctx); err != nil || res != "ok" {
		t.Errorf("quick_check after forget: %q %v", res, err)
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// mcpForget calls memory_forget through `engram-worker mcp`, run the way
// Claude Code runs it.
func mcpForget(t *testing.T, h *forgetHome, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(h.bins.Worker, "mcp")
	cmd.Env, cmd.Dir = append(h.environ(), "CLAUDE_CODE_SESSION_ID=5a0e8c61-4444-4c1e-9d5a-0f6b2c3d4e5f"), h.project
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_forget", Arguments: map[string]any{"id": id}})
	if err != nil || res.IsError {
		t.Fatalf("memory_forget %s: %v %s", id, err, fmt.Sprint(res.Content))
	}
	t.Logf("memory_forget: %s", res.Content[0].(*mcp.TextContent).Text)
}

// After forget --matching WORD, no memory that held the word leaves a byte
// of it anywhere under $ENGRAM_HOME or Claude Code's directory: two
// captured sessions that said it, an important global episode shown in the
// global MEMORY.md, a global belief there and a project belief in the
// project's auto-memory; a memory without the word stays. Asked first and
// answered no, nothing goes.
func TestForgetMatchingLeavesNoTrace(t *testing.T) {
	const word = "Quorvantic" // the porter stemmer leaves it as it is
	h := newForgetHome(t)
	bins := h.bins
	h.session("6b1f9d72-1111-4c1e-9d5a-0f6b2c3d4e5f", "The billing exports go to the "+word+" bucket from now on.",
		"Noted: billing exports go to the "+word+" bucket.")
	h.session("6b1f9d72-2222-4c1e-9d5a-0f6b2c3d4e5f", "Ask the "+word+" team before changing the export format.",
		"Understood: the "+word+" team signs off on format changes.")
	h.session("6b1f9d72-3333-4c1e-9d5a-0f6b2c3d4e5f", "The staging cache runs on "+keptWord+" now.",
		"Noted: the staging cache runs on "+keptWord+".")
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(h.engram, "memory.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	local := embed.NewLocal()
	now := time.Now()
	grad := "Exports always go through " + word + ", never by mail"
	err = db.Import(ctx, []episode.Episode{{ID: "ep_00000000f101", Summary: grad, Context: "User: " + grad, Type: "preference",
		Scope: episode.ScopeGlobal, ContentHash: "f101", Importance: 0.95, Embedding: local.EmbedText(grad), Embedder: local.Name(),
		OccurredAt: now, CreatedAt: now, UpdatedAt: now}},
		[]belief.Belief{
			{ID: "bl_00000000f102", Statement: "User sends exports through " + word + ".", Timeframe: "current", Alpha: 9, Beta: 1,
				Scope: "global", Status: "active", EvidenceCount: 4, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
			{ID: "bl_00000000f103", Statement: "Project proj exports to " + strings.ToLower(word) + " storage.", Timeframe: "current",
				Alpha: 9, Beta: 1, Scope: "project", Project: "proj", ProjectPath: h.project, Status: "active", EvidenceCount: 4,
				Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
			{ID: "bl_00000000f104", Statement: "User prefers " + keptWord + " for caches.", Timeframe: "current", Alpha: 9, Beta: 1,
				Scope: "global", Status: "active", EvidenceCount: 4, Stability: 1, CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now},
		})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	t.Logf("engram-worker run: %s", h.run(bins.Worker, "", "run"))
	in, _ := json.Marshal(map[string]any{"session_id": "6b1f9d72-4444-4c1e-9d5a-0f6b2c3d4e5f", "cwd": h.project,
		"hook_event_name": "UserPromptSubmit", "prompt": "Which bucket do the billing exports go to, " + word + "?"})
	if out := h.run(bins.HookUserPrompt, string(in)); !strings.Contains(out, word) {
		t.Fatalf("the prompt hook did not recall the memory: %q", out)
	}
	globalMD := filepath.Join(h.engram, "MEMORY.md")
	projectMD := filepath.Join(h.claude, "projects", sanitizePath(h.project), "memory", "MEMORY.md")
	dirs := []string{h.engram, h.claude}
	hits := findWord(t, word, dirs...)
	t.Logf("before forget, %s is in %d files: %v", word, len(hits), hits)
	for _, f := range []string{globalMD, projectMD, filepath.Join(h.engram, "memory.db")} {
		if !contains(hits, f) {
			t.Fatalf("before forget, %s is not in %s: %v", word, f, hits)
		}
	}

	forget := func(stdin string, args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(bins.Worker, append([]string{"forget"}, args...)...)
		cmd.Env, cmd.Dir, cmd.Stdin = h.environ(), h.project, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	// Asked, and answered no: the list, and nothing forgotten.
	out, code := forget("n\n", "--matching", strings.ToLower(word))
	if code != 1 || !strings.Contains(out, "3 episodes and 2 beliefs hold \""+strings.ToLower(word)+"\":") ||
		!strings.Contains(out, "forget these 3 episodes and 2 beliefs? [y/N]") || !strings.Contains(out, "nothing was forgotten") ||
		strings.Contains(out, "forgot ") || strings.Contains(out, keptWord) {
		t.Fatalf("forget --matching, answered no: exit %d\n%s", code, out)
	}
	if hits := findWord(t, word, dirs...); !contains(hits, globalMD) || !contains(hits, projectMD) {
		t.Fatalf("a refused forget removed the word: %v", hits)
	}
	// Answered yes.
	out, code = forget("y\n", "--matching", strings.ToLower(word))
	t.Logf("forget --matching: %s", out)
	if code != 0 || strings.Count(out, "forgot ") != 5 {
		t.Fatalf("forget --matching, answered yes: exit %d\n%s", code, out)
	}
	if hits := findWord(t, word, dirs...); len(hits) > 0 {
		t.Errorf("after forget --matching, %s is still in %v", word, hits)
	}
	if hits := findWord(t, keptWord, dirs...); !contains(hits, globalMD) || !contains(hits, filepath.Join(h.engram, "memory.db")) {
		t.Errorf("the kept memory is not in the global MEMORY.md and the store any more: %v", hits)
	}
	if fi, err := os.Stat(filepath.Join(h.engram, "memory.db-wal")); err == nil && fi.Size() != 0 {
		t.Errorf("the WAL holds %d bytes after forget", fi.Size())
	}
	// Nothing matches any more; the next cycle brings nothing back.
	if out, code := forget("", "--matching", word, "--yes"); code != 1 || !strings.Contains(out, `no memory holds "`+word+`"; nothing was forgotten`) {
		t.Errorf("a second forget --matching: exit %d\n%s", code, out)
	}
	t.Logf("engram-worker run: %s", h.run(bins.Worker, "", "run"))
	if hits := findWord(t, word, dirs...); len(hits) > 0 {
		t.Errorf("after the next run, %s is in %v", word, hits)
	}
}
