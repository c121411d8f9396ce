package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptVersion is stamped into the binaries the scripts run, the way
// scripts/install.sh stamps the release.
const scriptVersion = "v0.0.0-script"

// TestScript runs the command line end to end, as a user does, from the
// scripts in testdata/script. Each script gets:
//
//   - $WORK/bin holding engram-worker, engram-hook-stop and
//     engram-hook-userprompt side by side, as scripts/install.sh puts them;
//     PATH is that directory alone, so no systemctl, launchctl or loginctl
//     of the machine is found and setup falls back to the crontab line
//     (a script that wants a scheduler puts a fake one in $WORK/bin);
//   - HOME=$WORK/home; testscript passes on none of the caller's
//     environment, so CLAUDE_CONFIG_DIR and ENGRAM_HOME are unset: Claude
//     Code's directory is $HOME/.claude and the data directory
//     $HOME/.claude-memory, as for most users.
//
// Commands added to testscript's own:
//
//	exitcode N prog args...   run prog; its exit code must be N
//	perm MODE path            path's permission bits must be MODE (octal)
//	ls dir                    print the names in dir, one per line, to stdout
//	json file|stdout [k=v...] the content must be one JSON value; each k=v
//	                          says top-level key k holds the JSON v
//	cpenv src dst             copy src to dst with $VARIABLES expanded
func TestScript(t *testing.T) {
	bin := buildForScripts(t)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			dir := filepath.Join(env.WorkDir, "bin")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			for _, name := range scriptBinaries {
				if err := linkOrCopy(filepath.Join(bin, name), filepath.Join(dir, name)); err != nil {
					return err
				}
			}
			home := filepath.Join(env.WorkDir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			env.Setenv("PATH", dir)
			env.Setenv("HOME", home)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"perm":     cmdPerm,
			"ls":       cmdLs,
			"json":     cmdJSON,
			"cpenv":    cmdCpenv,
		},
	})
}

var scriptBinaries = []string{"engram-worker", "engram-hook-stop", "engram-hook-userprompt"}

// buildForScripts builds the three binaries once, with the version stamped
// as the installer does.
func buildForScripts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range []struct{ name, pkg string }{
		{"engram-worker", "."}, {"engram-hook-stop", "../hook-stop"}, {"engram-hook-userprompt", "../hook-userprompt"},
	} {
		cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+scriptVersion, "-o", filepath.Join(dir, b.name), b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return dir
}

func linkOrCopy(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o755)
}

func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil || want < 0 {
		ts.Fatalf("exitcode: %q is not an exit code", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: perm MODE path")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("perm: mode %q: %v", args[0], err)
	}
	fi, err := os.Stat(ts.MkAbs(args[1]))
	ts.Check(err)
	if got := fi.Mode().Perm(); got != os.FileMode(want) {
		ts.Fatalf("%s: mode %#o, want %#o", args[1], got, want)
	}
}

func cmdLs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: ls dir")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintln(ts.Stdout(), n)
	}
}

func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: json file|stdout [key=json...]")
	}
	data := []byte(ts.ReadFile(args[0])) // "stdout": the last command's
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("%s: not JSON: %v", args[0], err)
	}
	if _, err := dec.Token(); err != io.EOF {
		ts.Fatalf("%s: more than one JSON value", args[0])
	}
	if len(args) == 1 {
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		ts.Fatalf("%s: not a JSON object", args[0])
	}
	for _, kv := range args[1:] {
		k, want, ok := strings.Cut(kv, "=")
		if !ok {
			ts.Fatalf("json: %q: want key=json", kv)
		}
		got, present := obj[k]
		if !present {
			ts.Fatalf("%s: no key %q", args[0], k)
		}
		var wantV any
		if err := json.Unmarshal([]byte(want), &wantV); err != nil {
			ts.Fatalf("json: %s: %v", kv, err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(wantV)
		if !bytes.Equal(g, w) {
			ts.Fatalf("%s: %s is %s, want %s", args[0], k, g, w)
		}
	}
}

func cmdCpenv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cpenv src dst")
	}
	text := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(text), 0o600))
}
