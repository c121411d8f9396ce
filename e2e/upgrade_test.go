package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/store"
)

// buildAt builds the three programs of an earlier commit of this
// repository (from git archive: the work tree is not touched) into a new
// directory and returns it.
func buildAt(t *testing.T, commit string) Binaries {
	t.Helper()
	root := repoRoot(t)
	src := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	archive := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", root, commit, src)
	if out, err := archive.CombinedOutput(); err != nil {
		t.Fatalf("git archive %s: %v\n%s", commit, err, out)
	}
	bin := filepath.Join(t.TempDir(), "bin")
	for _, b := range []string{"hook-stop", "hook-userprompt", "worker"} {
		cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags", "-X main.version=v0.0.0-previous",
			"-o", filepath.Join(bin, "engram-"+b), "./cmd/"+b)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build engram-%s at %s: %v\n%s", b, commit, err, out)
		}
	}
	return Binaries{
		HookStop:       filepath.Join(bin, "engram-hook-stop"),
		HookUserPrompt: filepath.Join(bin, "engram-hook-userprompt"),
		Worker:         filepath.Join(bin, "engram-worker"),
	}
}

// previousCommit is the last commit before the newest store migration was
// added: an engram whose store the current one must migrate.
func previousCommit(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "log", "--diff-filter=A", "--format=%H", "-1", "--", "internal/store/migrations").Output()
	added := strings.TrimSpace(string(out))
	if err != nil || added == "" {
		t.Skipf("no git history here to build the previous engram from (git log: %v)", err)
	}
	out, err = exec.Command("git", "-C", root, "rev-parse", "--short=12", added+"^").Output()
	if err != nil {
		t.Skipf("the commit before %s is not in this clone: %v", added, err)
	}
	return strings.TrimSpace(string(out))
}

// exportIDs runs engram-worker export and returns "kind id" for each record.
func exportIDs(t *testing.T, e *Env, worker string) []string {
	t.Helper()
	var ids []string
	sc := bufio.NewScanner(strings.NewReader(e.Worker(worker, "export")))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Kind     string `json:"kind"`
			ID       string `json:"id"`
			BeliefID string `json:"belief_id"` // a level record names its belief
			// A history event names its memory, a link its two beliefs.
			MemoryID string `json:"memory_id"`
			Action   string `json:"action"`
			At       string `json:"at"`
			From     string `json:"from"`
			To       string `json:"to"`
		}
		err := json.Unmarshal(sc.Bytes(), &r)
		switch r.Kind {
		case "level":
			r.ID = r.BeliefID
		case "event":
			r.ID = r.MemoryID + " " + r.Action + " " + r.At
		case "link":
			if r.From != "" && r.To != "" {
				r.ID = r.From + " " + r.To
			}
		}
		if err != nil || r.Kind == "" || r.ID == "" {
			t.Fatalf("export line %q: kind %q id %q, %v", sc.Text(), r.Kind, r.ID, err)
		}
		ids = append(ids, r.Kind+" "+r.ID)
	}
	sort.Strings(ids)
	return ids
}

// TestUpgradeKeepsStore: the engram of an earlier commit (one store
// migration behind) captures a session and writes its memories; the
// current engram installed over it migrates the store on its first run
// and keeps every record of the export (the previous engram forms no
// belief from this session: episodes only) and the settings file, and a new
// session recalls the memory the old version stored.
func TestUpgradeKeepsStore(t *testing.T) {
	claudeBin(t)
	old := buildAt(t, previousCommit(t))
	cur := buildBinaries(t)
	model := &recallModel{}
	e := NewEnv(t, model.respond, Hooks{UserPromptSubmit: []string{old.HookUserPrompt}, Stop: []string{old.HookStop}})
	defer func() {
		if t.Failed() {
			logEngramLogs(t, e)
		}
	}()
	envFile := filepath.Join(e.EngramHome, "env")
	if err := os.MkdirAll(e.EngramHome, 0o700); err != nil {
		t.Fatal(err)
	}
	settings := "# written before the upgrade\nENGRAM_LOG_LEVEL=debug\n"
	e.writeFile(envFile, settings, 0o600)

	s1, _ := e.runSession(e.Project, promptFact)
	if !strings.Contains(s1.Result, replyFact) {
		t.Fatalf("session 1: client result %q, want %q", s1.Result, replyFact)
	}
	t.Logf("previous engram-worker run: %s", strings.TrimSpace(e.Worker(old.Worker, "run")))
	before := exportIDs(t, e, old.Worker)
	if len(before) == 0 {
		t.Fatalf("the previous engram stored nothing to carry over")
	}
	t.Logf("the previous engram's store: %v", before)

	// The store is one schema behind: only a migration opens it.
	if db, err := store.Open(context.Background(), filepath.Join(e.EngramHome, "memory.db"), store.Options{ReadOnly: true}); err == nil {
		db.Close()
		t.Fatalf("the previous engram's store opens read-only under the current one without a migration: nothing to upgrade")
	} else if !errors.Is(err, store.ErrNotReady) {
		t.Fatalf("open the previous engram's store read-only: %v, want ErrNotReady (an older schema)", err)
	} else {
		t.Logf("before the upgrade: %v", err)
	}

	// The upgrade: the new binaries in the hooks, then the worker's run.
	e.SetHooks(Hooks{UserPromptSubmit: []string{cur.HookUserPrompt}, Stop: []string{cur.HookStop}})
	t.Logf("current engram-worker run: %s", strings.TrimSpace(e.Worker(cur.Worker, "run")))
	after := exportIDs(t, e, cur.Worker)
	kept := map[string]bool{}
	for _, id := range after {
		kept[id] = true
	}
	for _, id := range before {
		if !kept[id] {
			t.Errorf("%s of the previous engram is gone after the upgrade", id)
		}
	}
	if b, err := os.ReadFile(envFile); err != nil || string(b) != settings {
		t.Errorf("the settings file after the upgrade: %q, %v; want it as it was: %q", b, err, settings)
	}

	s2, reqs := e.runSession(e.Project, promptRelated)
	turn := promptRequest(reqs, promptRelated)
	if turn == nil {
		t.Fatalf("session 2: no request carries %q", promptRelated)
	}
	found := false
	for _, s := range recallSpans(*turn) {
		found = found || strings.Contains(s.Text, factApp)
	}
	if !found || !strings.Contains(s2.Result, replyRecalled) {
		t.Errorf("session 2 under the current engram does not recall %s stored by the previous one (result %q)\nprompt:\n%s",
			factApp, s2.Result, turn.Prompt())
	}
}
