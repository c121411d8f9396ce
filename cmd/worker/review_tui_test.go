package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/store"
)

// tmuxScreen is engram-worker review running in a tmux pane, driven as a
// person would: keys in, the screen's text out.
type tmuxScreen struct {
	t      *testing.T
	socket string
}

func (s *tmuxScreen) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxScreen) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "rv"}, keys...)...)
}

// screen is the pane's text now.
func (s *tmuxScreen) screen() string {
	s.t.Helper()
	return s.tmux("capture-pane", "-p", "-t", "rv")
}

// wait returns the screen once it holds every one of want (and none of
// not), or fails the test after a few seconds with the last screen.
func (s *tmuxScreen) wait(want []string, not ...string) string {
	s.t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		got = s.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(got, w)
		}
		for _, n := range not {
			ok = ok && !strings.Contains(got, n)
		}
		if ok {
			return got
		}
	}
	s.t.Fatalf("the screen never showed %q (nor lost %q):\n%s", want, not, got)
	return ""
}

func levelOf(t *testing.T, h testHome, id string) store.ReviewBelief {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(h.engram, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b, err := db.ReviewBelief(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// vectorOf reads a belief's vector and its embedder's name.
func vectorOf(t *testing.T, h testHome, id string) ([]float32, string) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(h.engram, "memory.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var vec []float32
	var name string
	err = db.Beliefs(context.Background(), func(tx *store.BeliefTx) error {
		b, err := tx.Get(id)
		vec, name = b.Embedding, b.Embedder
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return vec, name
}

// TestReviewEditEmbeds: review edit gives the belief the vector of its
// new statement at once (the lexical embedder's, no model being
// installed); with a remote embedder configured, which the command does
// not call, it leaves none, for the next cycle, rather than the old
// statement's.
func TestReviewEditEmbeds(t *testing.T) {
	h := newHome(t)
	file := filepath.Join(t.TempDir(), "b.jsonl")
	rec := `{"kind":"belief","id":"bl_0000000000e1","statement":"Use tabs in Makefiles.","timeframe":"current","confidence_alpha":5,"confidence_beta":1,"scope":"global","status":"active","evidence_count":5,"stability":1,"created_at":"2026-01-10T10:05:00Z","updated_at":"2026-01-10T10:05:00Z"}` + "\n"
	if err := os.WriteFile(file, []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := h.run(t, "", "import", file); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	local := embed.NewLocal()
	if _, errOut, code := h.run(t, "", "review", "edit", "bl_0000000000e1", "Makefiles need tabs, never spaces."); code != 0 {
		t.Fatalf("edit: %d %s", code, errOut)
	}
	if vec, name := vectorOf(t, h, "bl_0000000000e1"); name != local.Name() || !slices.Equal(vec, local.EmbedText("Makefiles need tabs, never spaces.")) {
		t.Fatalf("after review edit: a vector of %q (%d dims), want the new statement's lexical vector", name, len(vec))
	}
	cmd := h.command("review", "edit", "bl_0000000000e1", "Recipes in Makefiles are indented with tabs.")
	cmd.Env = append(cmd.Env, "ENGRAM_EMBED_MODEL=text-embedding-3-small", "ENGRAM_LLM_BASE_URL=http://127.0.0.1:9/v1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("edit with a remote embedder configured: %v %s", err, out)
	}
	if vec, name := vectorOf(t, h, "bl_0000000000e1"); len(vec) != 0 || name != "" {
		t.Fatalf("after an edit with a remote embedder configured: a vector of %q (%d dims), want none", name, len(vec))
	}
}

// TestReviewScreenInTmux: list, expand, approve, deny, pin, edit and quit
// on the review screen, against a real store; each step is checked on the
// screen and in the store.
func TestReviewScreenInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the review screen is tested in tmux")
	}
	h := newHome(t)
	proj := filepath.Join(h.home, "work", "billing")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	ep := func(id, summary string) string {
		return fmt.Sprintf(`{"kind":"episode","id":"%s","summary":%q,"context":%q,"entities":[],"signals":[],"importance":0.5,"type":"fact","scope":"global","project":"","project_path":"","session_id":"s1","session_ids":["s1"],"content_hash":"%s","embedder":"","extractor":"local","occurred_at":"2026-01-10T10:00:00Z","created_at":"2026-01-10T10:05:00Z","updated_at":"2026-01-10T10:05:00Z","access_count":0,"stability":1,"compressed":false}`,
			id, summary, "User: "+summary, id)
	}
	bl := func(id, statement string, alpha float64, eps string) string {
		return fmt.Sprintf(`{"kind":"belief","id":"%s","statement":%q,"timeframe":"current","confidence_alpha":%v,"confidence_beta":1,"scope":"global","status":"active","evidence_count":5,"stability":1,"supporting_episodes":[%s],"created_at":"2026-01-10T10:05:00Z","updated_at":"2026-01-10T10:05:00Z"}`,
			id, statement, alpha, eps)
	}
	lines := []string{
		ep("ep_0000000000a1", "The user asked for shorter replies in the billing review"),
		ep("ep_0000000000a2", "Again: keep the replies short, no preamble"),
		bl("bl_0000000000b1", "Replies should be short and plain.", 4.5, `"ep_0000000000a1","ep_0000000000a2"`),
		bl("bl_0000000000b2", "The team deploys on Fridays.", 4, ""),
		bl("bl_0000000000b3", "Releases are cut on Tuesdays.", 3.5, ""),
		bl("bl_0000000000b4", "Use tabs in Makefiles.", 3, ""),
	}
	file := filepath.Join(h.home, "memories.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := h.run(t, "", "import", file); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}

	s := &tmuxScreen{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	env := []string{"env", "-i", "HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	s.tmux(append([]string{"new-session", "-d", "-x", "140", "-y", "45", "-s", "rv"},
		append(env, workerBin, "review")...)...)

	// The list, best first.
	got := s.wait([]string{"engram review: 4 beliefs wait (ENGRAM_REVIEW=uncertain)", "> bl_0000000000b1  0.82  ev 5",
		"Replies should be short and plain.", "a approve · d deny · p pin · e edit"})
	if strings.Index(got, "bl_0000000000b1") > strings.Index(got, "bl_0000000000b2") ||
		strings.Index(got, "bl_0000000000b2") > strings.Index(got, "bl_0000000000b4") {
		t.Fatalf("not best first:\n%s", got)
	}
	// Expand: the episodes behind it.
	s.keys("Enter")
	s.wait([]string{"episodes:", "ep_0000000000a1  2026-01-10  The user asked for shorter replies", "ep_0000000000a2"})
	s.keys("Enter")
	s.wait(nil, "episodes:")

	// Approve the first: it leaves the list.
	s.keys("a")
	s.wait([]string{"bl_0000000000b1 approve: pending -> long-term", "3 beliefs wait", "> bl_0000000000b2"})
	if b := levelOf(t, h, "bl_0000000000b1"); b.Level != store.LevelLongTerm {
		t.Fatalf("approved belief is %s", b.Level)
	}
	// Deny the next.
	s.keys("d")
	s.wait([]string{"bl_0000000000b2 deny: pending -> denied", "2 beliefs wait"}, "The team deploys on Fridays.")
	if b := levelOf(t, h, "bl_0000000000b2"); b.Level != store.LevelDenied {
		t.Fatalf("denied belief is %s", b.Level)
	}
	// Choose a core target, then pin: into the global CLAUDE.md, which is
	// read-only at first — refused on the screen, nothing decided or
	// written — then writable.
	claudeMD := filepath.Join(h.claude, "CLAUDE.md")
	if err := os.MkdirAll(h.claude, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeMD, []byte("# mine\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	s.keys("t")
	s.wait([]string{"core target: claude"}, "core target: claude (the setting)") // applied before the next key
	s.keys("p")
	s.wait([]string{"not decided: " + claudeMD + ": is read-only", "2 beliefs wait"})
	if b := levelOf(t, h, "bl_0000000000b3"); b.Level != store.LevelPending {
		t.Fatalf("a refused pin decided: %s", b.Level)
	}
	if data, _ := os.ReadFile(claudeMD); string(data) != "# mine\n" {
		t.Fatalf("a refused pin wrote CLAUDE.md: %q", data)
	}
	if err := os.Chmod(claudeMD, 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys("p")
	s.wait([]string{"bl_0000000000b3 pin: pending -> pinned", "1 belief waits"})
	if b := levelOf(t, h, "bl_0000000000b3"); b.Level != store.LevelPinned || b.CoreTarget != "claude" {
		t.Fatalf("pinned belief: %s %q", b.Level, b.CoreTarget)
	}
	if data, _ := os.ReadFile(claudeMD); !strings.Contains(string(data), "- Releases are cut on Tuesdays.\n") {
		t.Fatalf("the pinned belief is not in CLAUDE.md:\n%s", data)
	}
	// A global belief has no AGENTS.md: choosing agents (or both) says
	// where it goes instead.
	s.keys("t")
	s.wait([]string{"core target: agents", "(a global belief has no AGENTS.md to go to: it goes to " + claudeMD + " instead)"})
	s.keys("t")
	s.wait([]string{"core target: both", "(a global belief has no AGENTS.md to go to: it goes to " + claudeMD + " only)"})
	s.keys("t")
	s.wait([]string{"core target: claude (the setting)"}, "no AGENTS.md")
	// Esc cancels an edit.
	s.keys("e")
	s.wait([]string{"edit: Use tabs in Makefiles._"})
	s.keys("Escape")
	s.wait([]string{"edit cancelled", "1 belief waits"})
	// Edit the last: the user's own words, which pass review by themselves
	// (ENGRAM_REVIEW=uncertain), so nothing waits any more.
	s.keys("e")
	s.wait([]string{"edit: Use tabs in Makefiles._"})
	s.keys("C-u")
	s.keys("-l", "Makefiles need tabs, never spaces.")
	s.wait([]string{"edit: Makefiles need tabs, never spaces._"})
	s.keys("Enter")
	s.wait([]string{`bl_0000000000b4 edited: now "Makefiles need tabs, never spaces."`, "engram review: nothing waits"})
	if b := levelOf(t, h, "bl_0000000000b4"); b.Statement != "Makefiles need tabs, never spaces." || b.Level != store.LevelPending || !b.Stated {
		t.Fatalf("edited belief: %q %s stated=%v", b.Statement, b.Level, b.Stated)
	}
	// Its vector is the new statement's (no sentence embedder here: the
	// lexical one's).
	if vec, name := vectorOf(t, h, "bl_0000000000b4"); name != embed.NewLocal().Name() ||
		!slices.Equal(vec, embed.NewLocal().EmbedText("Makefiles need tabs, never spaces.")) {
		t.Fatalf("the edited belief's vector is not the new statement's lexical one (embedder %q)", name)
	}

	// Quit.
	s.keys("q")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("tmux", "-S", s.socket, "has-session", "-t", "rv").Run() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", s.screen())
		}
	}
	out, _, _ := h.run(t, "", "expand", "bl_0000000000b4")
	if !strings.Contains(out, "decided ") || !strings.Contains(out, "by user: edit, pending -> pending (was: Use tabs in Makefiles.)") {
		t.Fatalf("expand after the screen:\n%s", out)
	}
}
