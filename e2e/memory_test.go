package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/belief"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/promote"
	"github.com/engram-memory/engram/internal/setup"
)

// What the memory test puts into the store. Each text is distinctive so
// that finding it in a request proves where it came from.
const (
	memProjectBelief = "The billing service deploys with flyctl to app billing-prod-5512"
	memGlobalBelief  = "The user wants table-driven tests with t.Run in every Go package"
	memLongBelief    = "The long-named project keeps its fixtures under testdata/golden-9931"
	memLowBelief     = "The user once tried Zig for the parser-4471"
	memGraduated     = "Decided to sign every release tag with the hardware key-6620"
	memoryPrompt     = "What do you know about this project?"
)

type memoryBeliefRecord struct {
	Kind string `json:"kind"`
	belief.Belief
}

type memoryEpisodeRecord struct {
	Kind string `json:"kind"`
	episode.Episode
}

// loadedFile is one file the client put into a request ("Contents of
// PATH (DESCRIPTION):" followed by its text).
type loadedFile struct {
	Description string
	Body        string
}

// loadedFiles finds every file the client loaded into a request, in the
// system prompt or any text block.
func loadedFiles(r anthropicstub.Request) map[string]loadedFile {
	out := map[string]loadedFile{}
	scan := func(text string) {
		const head = "Contents of "
		for {
			i := strings.Index(text, head)
			if i < 0 {
				return
			}
			text = text[i+len(head):]
			eol := strings.Index(text, "):\n")
			if eol < 0 {
				return
			}
			header := text[:eol]
			open := strings.LastIndex(header, " (")
			if open < 0 {
				continue
			}
			body := text[eol+3:]
			if j := strings.Index(body, "\n"+head); j >= 0 {
				body = body[:j]
			}
			if j := strings.Index(body, "</system-reminder>"); j >= 0 {
				body = body[:j]
			}
			out[header[:open]] = loadedFile{Description: header[open+2:], Body: body}
		}
	}
	scan(r.System)
	for _, m := range r.Messages {
		for _, b := range m.Content {
			scan(b.Text)
		}
	}
	return out
}

func describeLoaded(files map[string]loadedFile) string {
	var names []string
	for p := range files {
		names = append(names, p)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, p := range names {
		b.WriteString("--- " + p + " (" + files[p].Description + ")\n" + files[p].Body + "\n")
	}
	return b.String()
}

// TestPromotedMemoryWithRealClient: beliefs and an episode imported into
// the store, then one engram-worker run; the next session's first request
// to the model carries the project belief inside the auto-memory
// MEMORY.md of the project's git root (the session starts in a
// subdirectory), the global belief and the graduated episode inside
// engram's MEMORY.md brought in by the CLAUDE.md import line, and the
// belief below the promotion threshold nowhere. A project whose path is
// longer than 200 characters gets the folder the client hashes it to.
// With autoMemoryDirectory set in settings.json, the project belief moves
// to that directory's MEMORY.md, which the client then loads. Without the
// import line, engram's global file is not loaded.
func TestPromotedMemoryWithRealClient(t *testing.T) {
	claudeBin(t)
	bins := buildBinaries(t)
	e := NewEnv(t, func(r *anthropicstub.Request) anthropicstub.Reply { return anthropicstub.Text("Noted.") }, Hooks{})
	defer func() {
		if t.Failed() {
			t.Logf("stub requests:\n%s", e.Stub.Summary())
			logEngramLogs(t, e)
		}
	}()

	// Promotion by the numeric gates alone: what is measured here is which
	// files the client loads, not review (e2e/review_test.go).
	e.Extra = []string{"ENGRAM_REVIEW=off"}
	// The import line engram-worker setup adds to CLAUDE.md.
	claudeMD := filepath.Join(e.ClaudeDir, "CLAUDE.md")
	if _, err := setup.AddImport(claudeMD, setup.ImportLine(e.EngramHome, e.Home)); err != nil {
		t.Fatal(err)
	}
	longProject := e.NewProject(strings.Repeat("a-long-project-name-", 11))
	if len(longProject) <= 200 {
		t.Fatalf("the long project path has %d characters, want more than 200", len(longProject))
	}

	now := time.Now()
	var lines []string
	add := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	bel := func(id, stmt string, conf float64, evidence int, projectPath string) {
		b := belief.Belief{ID: id, Statement: stmt, Timeframe: belief.TimeCurrent, Alpha: conf * 10, Beta: (1 - conf) * 10,
			Scope: episode.ScopeGlobal, Status: belief.StatusActive, EvidenceCount: evidence, Stability: 1, PeakConfidence: conf,
			CreatedAt: now, UpdatedAt: now, LastReinforcedAt: now}
		if projectPath != "" {
			b.Scope, b.ProjectPath, b.Project = episode.ScopeProject, projectPath, filepath.Base(projectPath)
		}
		add(memoryBeliefRecord{Kind: "belief", Belief: b})
	}
	add(memoryEpisodeRecord{Kind: "episode", Episode: episode.Episode{ID: "ep_00000000e2e1", Summary: memGraduated,
		Importance: 0.9, Type: episode.TypeDecision, Scope: episode.ScopeGlobal, ContentHash: "e2e-memory-graduated",
		CreatedAt: now, UpdatedAt: now, OccurredAt: now, Stability: 1}})
	bel("bl_00000000e2e1", memProjectBelief, 0.9, 5, e.Project)
	bel("bl_00000000e2e2", memGlobalBelief, 0.85, 7, "")
	bel("bl_00000000e2e3", memLongBelief, 0.8, 6, longProject)
	bel("bl_00000000e2e4", memLowBelief, 0.6, 9, e.Project)
	jsonl := filepath.Join(e.Base, "beliefs.jsonl")
	if err := os.WriteFile(jsonl, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("engram-worker import: %s", strings.TrimSpace(e.Worker(bins.Worker, "import", jsonl)))
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))

	projectFile := filepath.Join(e.ClaudeDir, "projects", sanitizePath(e.Project), "memory", "MEMORY.md")
	globalFile := filepath.Join(e.EngramHome, "MEMORY.md")
	for _, p := range []string{projectFile, globalFile} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("after engram-worker run: %v\n%s", err, e.Worker(bins.Worker, "status"))
		}
		t.Logf("%s:\n%s", p, b)
	}

	// A new session, started in a subdirectory of the project.
	sub := filepath.Join(e.Project, "services", "billing")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, reqs := e.runSession(sub, memoryPrompt)
	files := loadedFiles(reqs[0])
	proj, ok := files[projectFile]
	if !ok || !strings.Contains(proj.Description, "auto-memory") {
		t.Fatalf("the first request does not load %s as the auto-memory; it loads:\n%s", projectFile, describeLoaded(files))
	}
	if want := "- " + memProjectBelief + " (confidence: 0.90, evidence: 5)"; !strings.Contains(proj.Body, want) {
		t.Errorf("the auto-memory MEMORY.md content lacks %q:\n%s", want, proj.Body)
	}
	glob, ok := files[globalFile]
	if !ok {
		t.Fatalf("the first request does not load %s; it loads:\n%s", globalFile, describeLoaded(files))
	}
	if cm, ok := files[claudeMD]; !ok || !strings.Contains(cm.Body, "@~/.claude-memory/MEMORY.md") {
		t.Errorf("CLAUDE.md as loaded does not hold the import line:\n%s", describeLoaded(files))
	}
	for _, want := range []string{"- " + memGlobalBelief + " (confidence: 0.85, evidence: 7)", "- " + memGraduated} {
		if !strings.Contains(glob.Body, want) {
			t.Errorf("engram's global MEMORY.md as loaded lacks %q:\n%s", want, glob.Body)
		}
	}
	if strings.Contains(proj.Body, memGlobalBelief) || strings.Contains(glob.Body, memProjectBelief) {
		t.Errorf("a belief reached the wrong file:\n%s", describeLoaded(files))
	}
	for _, r := range reqs {
		if r.Contains(memLowBelief) {
			t.Errorf("request #%d holds the belief below the promotion threshold", r.Seq)
		}
		if r.Contains("(limit: 200)") {
			t.Errorf("request #%d tells the model a MEMORY.md is past its limit", r.Seq)
		}
	}

	// The long path: the folder name is cut and hashed as the client does.
	_, reqs = e.runSession(longProject, memoryPrompt)
	files = loadedFiles(reqs[0])
	longFile := filepath.Join(e.ClaudeDir, "projects", promote.Sanitize(longProject), "memory", "MEMORY.md")
	if f, ok := files[longFile]; !ok || !strings.Contains(f.Body, memLongBelief) {
		t.Errorf("the session in the long-named project does not load %s with its belief; it loads:\n%s", longFile, describeLoaded(files))
	}

	// autoMemoryDirectory moves every project's auto-memory to one place.
	settings := filepath.Join(e.ClaudeDir, "settings.json")
	if err := os.WriteFile(settings, []byte(`{"autoMemoryDirectory": "~/shared-memory"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	if b, _ := os.ReadFile(projectFile); strings.Contains(string(b), memProjectBelief) {
		t.Errorf("%s still holds the project belief after the move:\n%s", projectFile, b)
	}
	_, reqs = e.runSession(e.Project, memoryPrompt)
	files = loadedFiles(reqs[0])
	sharedFile := filepath.Join(e.Home, "shared-memory", "MEMORY.md")
	shared, ok := files[sharedFile]
	if !ok || !strings.Contains(shared.Description, "auto-memory") {
		t.Fatalf("with autoMemoryDirectory the first request does not load %s as the auto-memory; it loads:\n%s", sharedFile, describeLoaded(files))
	}
	if want := "- " + memProjectBelief + " (project: proj, confidence: 0.90, evidence: 5)"; !strings.Contains(shared.Body, want) {
		t.Errorf("the shared auto-memory lacks %q:\n%s", want, shared.Body)
	}

	// Without the import line the client does not load engram's global
	// file: the line is what brings it in.
	if _, err := setup.RemoveImport(claudeMD, setup.ImportLine(e.EngramHome, e.Home)); err != nil {
		t.Fatal(err)
	}
	_, reqs = e.runSession(e.Project, memoryPrompt)
	if files = loadedFiles(reqs[0]); files[globalFile].Body != "" || reqs[0].Contains(memGlobalBelief) {
		t.Errorf("without the import line the request still holds engram's global MEMORY.md:\n%s", describeLoaded(files))
	}

	// status reports every file within the client's limit.
	var st struct {
		MemoryFiles []promote.FileReport `json:"memory_files"`
	}
	out := e.Worker(bins.Worker, "status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	seen := map[string]bool{}
	for _, f := range st.MemoryFiles {
		seen[f.Path] = true
		if !f.WithinLimit || f.Problem != "" {
			t.Errorf("status: %s: %s", f.Path, f.Describe())
		}
	}
	for _, p := range []string{globalFile, projectFile, sharedFile, longFile} {
		if !seen[p] {
			t.Errorf("status does not report %s:\n%s", p, out)
		}
	}
	t.Logf("engram-worker status:\n%s", e.Worker(bins.Worker, "status"))
}
