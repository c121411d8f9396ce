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

// TestReviewScreenInTmux: the review screen against a real store, driven
// in tmux as a person would: every belief by level, a belief opened with
// its evidence and history and Esc back, a core belief found with the
// level filter, edited in place with the cursor keys (its CLAUDE.md block
// follows), a search, two beliefs denied at once after a question, a pin
// into a read-only CLAUDE.md refused then made, an edit cancelled, a
// forget asked and answered, and q. Each step is checked on the screen
// and in the store.
func TestReviewScreenInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; the review screen is tested in tmux")
	}
	h := newHome(t)
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
		bl("bl_0000000000c1", "Invoices live in Postgres.", 9, ""),
		// Long-term, not ready for core memory (evidence 3 of 5).
		strings.Replace(bl("bl_0000000000d1", "The staging cache is Redis.", 8, ""), `"evidence_count":5`, `"evidence_count":3`, 1),
		`{"kind":"level","belief_id":"bl_0000000000c1","level":"core","since":"2026-01-12T10:00:00Z"}`,
		`{"kind":"level","belief_id":"bl_0000000000d1","level":"long_term","since":"2026-01-11T10:00:00Z"}`,
		`{"kind":"event","at":"2026-01-10T10:05:00Z","memory_id":"bl_0000000000b1","action":"formed","cause":"ep_0000000000a1","detail":"stated by the user"}`,
	}
	file := filepath.Join(h.home, "memories.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := h.run(t, "", "import", file); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	claudeMD := filepath.Join(h.claude, "CLAUDE.md")
	if err := os.MkdirAll(h.claude, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeMD, []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s := &tmuxScreen{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	t.Cleanup(func() { exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	env := []string{"env", "-i", "HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8"}
	s.tmux(append([]string{"new-session", "-d", "-x", "140", "-y", "45", "-s", "rv"},
		append(env, workerBin, "review")...)...)
	running := func() {
		t.Helper()
		if exec.Command("tmux", "-S", s.socket, "has-session", "-t", "rv").Run() != nil {
			t.Fatal("the screen quit")
		}
	}

	// Every belief, by level: what waits (best first), long-term, core.
	got := s.wait([]string{"engram review: 4 waiting · 1 long-term · 1 core · 0 denied · 0 pinned · 0 pending (ENGRAM_REVIEW=uncertain)",
		"waiting for review (4)", "> [ ] bl_0000000000b1  0.82  ev 5   pending -> long-term  global", "Replies should be short and plain.",
		"long-term memory (1)", "The staging cache is Redis.", "core memory (1)", "Invoices live in Postgres."})
	order := []string{"waiting for review", "bl_0000000000b1", "bl_0000000000b2", "bl_0000000000b4", "long-term memory", "bl_0000000000d1",
		"core memory", "bl_0000000000c1"}
	for i := 1; i < len(order); i++ {
		if strings.Index(got, order[i-1]) > strings.Index(got, order[i]) {
			t.Fatalf("%s is not before %s:\n%s", order[i-1], order[i], got)
		}
	}
	// Open the first: its evidence and history; Esc goes back to the list.
	s.keys("Enter")
	s.wait([]string{"bl_0000000000b1 · pending, waits for review to become long-term", "supporting episodes (2):",
		"ep_0000000000a1  2026-01-10  The user asked for shorter replies", "history (1):", "formed", "stated by the user"})
	s.keys("Escape")
	s.wait([]string{"waiting for review (4)", "> [ ] bl_0000000000b1"}, "supporting episodes")
	running()

	// Approve it: it leaves what waits for long-term memory.
	s.keys("a")
	s.wait([]string{"bl_0000000000b1 approve: pending -> long-term", "3 waiting · 2 long-term", "> [ ] bl_0000000000b2"})
	if b := levelOf(t, h, "bl_0000000000b1"); b.Level != store.LevelLongTerm {
		t.Fatalf("approved belief is %s", b.Level)
	}

	// Browse to the core belief with the level filter, open it, and edit
	// its statement in place with the cursor keys.
	s.keys("Tab")
	s.wait([]string{"level: waiting for review (3 shown)"})
	s.keys("Tab")
	s.wait([]string{"level: long-term memory (2 shown)"})
	s.keys("Tab")
	s.wait([]string{"level: core memory (1 shown)", "> [ ] bl_0000000000c1"}, "bl_0000000000b2")
	s.keys("Enter")
	s.wait([]string{"bl_0000000000c1 · core since 2026-01-12", "Invoices live in Postgres."})
	s.keys("e")
	s.wait([]string{"edit: Invoices live in Postgres."})
	s.keys("Left") // before the full stop
	s.keys("-l", ", one schema per tenant")
	s.wait([]string{"edit: Invoices live in Postgres, one schema per tenant."})
	s.keys("Home")
	s.keys("C-Right", "C-Right") // after "Invoices live"
	s.keys("-l", " only")
	s.wait([]string{"edit: Invoices live only in Postgres, one schema per tenant."})
	s.keys("End")
	s.keys("BSpace")
	s.keys("-l", "!")
	s.wait([]string{"edit: Invoices live only in Postgres, one schema per tenant!"})
	s.keys("Enter")
	const edited = "Invoices live only in Postgres, one schema per tenant!"
	s.wait([]string{`bl_0000000000c1 edited: now "` + edited + `"`, "bl_0000000000c1 · core since", "  " + edited, "edited"})
	if b := levelOf(t, h, "bl_0000000000c1"); b.Statement != edited || b.Level != store.LevelCore || !b.Stated {
		t.Fatalf("edited core belief: %q %s stated=%v", b.Statement, b.Level, b.Stated)
	}
	if data, _ := os.ReadFile(claudeMD); !strings.Contains(string(data), "- "+edited+"\n") || !strings.HasPrefix(string(data), "# mine\n") {
		t.Fatalf("CLAUDE.md's core block does not hold the edited statement:\n%s", data)
	}
	if vec, name := vectorOf(t, h, "bl_0000000000c1"); name != embed.NewLocal().Name() || !slices.Equal(vec, embed.NewLocal().EmbedText(edited)) {
		t.Fatalf("the edited belief's vector is not the new statement's lexical one (embedder %q)", name)
	}
	// Esc: back to the filtered list, then the filter goes.
	s.keys("Escape")
	s.wait([]string{"level: core memory (1 shown)", "> [ ] bl_0000000000c1"}, "history (")
	s.keys("Escape")
	s.wait([]string{"waiting for review (3)", "core memory (1)"}, "level: core memory")
	running()

	// A search narrows the list; Esc clears it.
	s.keys("/")
	s.wait([]string{"search:", "(enter: keep · esc: clear)"})
	s.keys("-l", "fridays")
	s.wait([]string{`search: "fridays" (1 shown)`, "bl_0000000000b2"}, "bl_0000000000b3")
	s.keys("Enter")
	s.keys("Escape")
	s.wait([]string{"waiting for review (3)", "bl_0000000000b3"}, `search: "fridays"`)

	// Deny two at once: select them, d, and the question says how many.
	s.keys("Home")
	s.wait([]string{"> [ ] bl_0000000000b2"})
	s.keys("Space")
	s.wait([]string{"[x] bl_0000000000b2", "> [ ] bl_0000000000b3", "1 selected"})
	s.keys("Space")
	s.wait([]string{"[x] bl_0000000000b3", "2 selected"})
	s.keys("d")
	s.wait([]string{"deny 2 beliefs (bl_0000000000b2, bl_0000000000b3)? y/n"})
	if b := levelOf(t, h, "bl_0000000000b2"); b.Level != store.LevelPending {
		t.Fatalf("denied before the answer: %s", b.Level)
	}
	s.keys("y")
	s.wait([]string{"bl_0000000000b2 deny: pending -> denied; bl_0000000000b3 deny: pending -> denied",
		"1 waiting · 2 long-term · 1 core · 2 denied", "denied (2)"}, "selected")
	for _, id := range []string{"bl_0000000000b2", "bl_0000000000b3"} {
		if b := levelOf(t, h, id); b.Level != store.LevelDenied {
			t.Fatalf("%s is %s, want denied", id, b.Level)
		}
	}

	// Choose a core target, then pin: into the global CLAUDE.md, which is
	// read-only at first — refused on the screen, nothing decided or
	// written — then writable.
	s.keys("Home")
	s.wait([]string{"> [ ] bl_0000000000b4"})
	if err := os.Chmod(claudeMD, 0o444); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(claudeMD)
	s.keys("t")
	s.wait([]string{"core target: claude"}, "core target: claude (the setting)")
	s.keys("p")
	s.wait([]string{"not decided: " + claudeMD + ": is read-only", "1 waiting"})
	if b := levelOf(t, h, "bl_0000000000b4"); b.Level != store.LevelPending {
		t.Fatalf("a refused pin decided: %s", b.Level)
	}
	if data, _ := os.ReadFile(claudeMD); string(data) != string(before) {
		t.Fatalf("a refused pin wrote CLAUDE.md: %q", data)
	}
	if err := os.Chmod(claudeMD, 0o644); err != nil {
		t.Fatal(err)
	}
	s.keys("p")
	s.wait([]string{"bl_0000000000b4 pin: pending -> pinned", "0 waiting", "pinned (1)"})
	if b := levelOf(t, h, "bl_0000000000b4"); b.Level != store.LevelPinned || b.CoreTarget != "claude" {
		t.Fatalf("pinned belief: %s %q", b.Level, b.CoreTarget)
	}
	if data, _ := os.ReadFile(claudeMD); !strings.Contains(string(data), "- Use tabs in Makefiles.\n") {
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
	s.wait([]string{"edit: Replies should be short and plain."})
	s.keys("Escape")
	s.wait([]string{"edit cancelled"})
	running()

	// Forget asks first, even for one belief; n keeps it, y forgets it.
	s.keys("Home")
	s.wait([]string{"> [ ] bl_0000000000b1"})
	s.keys("f")
	s.wait([]string{"forget bl_0000000000b1 for good (Replies should be short and plain.)? y/n — it cannot be undone"})
	s.keys("n")
	s.wait([]string{"nothing done"})
	s.keys("f")
	s.wait([]string{"forget bl_0000000000b1 for good"})
	s.keys("y")
	s.wait([]string{"forgot bl_0000000000b1", "1 long-term"}, "Replies should be short and plain.")
	if out, _, code := h.run(t, "", "expand", "bl_0000000000b1"); code == 0 {
		t.Fatalf("the forgotten belief is still in the store:\n%s", out)
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
	out, _, _ := h.run(t, "", "expand", "bl_0000000000c1")
	if !strings.Contains(out, "by user: edit, core -> core (was: Invoices live in Postgres.)") {
		t.Fatalf("expand after the screen:\n%s", out)
	}
}
