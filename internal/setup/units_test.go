package setup

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeWorker creates an executable engram-worker (systemd-analyze checks
// that ExecStart exists) in a directory whose name needs quoting and
// specifier escaping.
func fakeWorker(t *testing.T) (bin, home string) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "my bin%d")
	home = filepath.Join(root, "engram home")
	mkdirs(t, dir, home)
	bin = filepath.Join(dir, WorkerBinary)
	writeFile(t, bin, "#!/bin/sh\nexit 0\n", 0o755)
	return bin, home
}

// verifyUnits runs systemd-analyze verify --user on unit files and returns
// its exit error and stderr.
func verifyUnits(t *testing.T, files ...string) (error, string) {
	t.Helper()
	runtimeDir := filepath.Join(t.TempDir(), "runtime")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-analyze", append([]string{"verify", "--user"}, files...)...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir, "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	return err, stderr.String()
}

func TestSystemdUnitsVerify(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not found: install Debian's systemd package (apt-get install -y systemd) to verify the units")
	}
	bin, home := fakeWorker(t)
	service, timer := SystemdUnits(bin, home, "CLAUDE_CONFIG_DIR=/home/u/my claude")
	dir := filepath.Join(t.TempDir(), "units")
	mkdirs(t, dir)
	sp, tp := filepath.Join(dir, ServiceName), filepath.Join(dir, TimerName)
	writeFile(t, sp, service, 0o644)
	writeFile(t, tp, timer, 0o644)

	if err, stderr := verifyUnits(t, sp, tp); err != nil || stderr != "" {
		t.Errorf("systemd-analyze verify --user: err=%v, stderr:\n%s\nservice:\n%s\ntimer:\n%s", err, stderr, service, timer)
	}

	// The check is real: a warning shows on stderr, a missing binary fails.
	// (Both files of a pair must share a directory: verify finds a unit by
	// name in the directories of the files given, the first one winning.)
	t.Run("control: unknown key warns", func(t *testing.T) {
		dir := t.TempDir()
		sp, bad := filepath.Join(dir, ServiceName), filepath.Join(dir, TimerName)
		writeFile(t, sp, service, 0o644)
		writeFile(t, bad, timer+"Bogus=1\n", 0o644)
		if _, stderr := verifyUnits(t, sp, bad); !strings.Contains(stderr, "Bogus") {
			t.Errorf("verify did not warn about an unknown key: stderr %q", stderr)
		}
	})
	t.Run("control: missing ExecStart fails", func(t *testing.T) {
		s, _ := SystemdUnits(filepath.Join(t.TempDir(), "nothing"), home)
		dir := t.TempDir()
		bad, tp := filepath.Join(dir, ServiceName), filepath.Join(dir, TimerName)
		writeFile(t, bad, s, 0o644)
		writeFile(t, tp, timer, 0o644)
		if err, _ := verifyUnits(t, bad, tp); err == nil {
			t.Errorf("verify accepted a missing ExecStart binary")
		}
	})
}

func TestSystemdUnitsContent(t *testing.T) {
	service, timer := SystemdUnits("/opt/my bin%x/engram-worker", "/home/u/.claude-memory")
	for _, want := range []string{
		"Type=oneshot\n",
		"Environment=ENGRAM_HOME=/home/u/.claude-memory\n",
		"EnvironmentFile=-/home/u/.claude-memory/env\n",
		`ExecStart="/opt/my bin%%x/engram-worker" run --quiet` + "\n",
		"Nice=10\n", "IOSchedulingClass=idle\n",
	} {
		if !strings.Contains(service, want) {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	for _, bad := range []string{"User=", "Group=", "[Install]"} {
		if strings.Contains(service, bad) {
			t.Errorf("service has %q:\n%s", bad, service)
		}
	}
	for _, want := range []string{
		"OnStartupSec=2min\n", "OnUnitActiveSec=15min\n", "RandomizedDelaySec=60\n",
		"AccuracySec=1min\n", "Unit=engram-worker.service\n", "[Install]\nWantedBy=timers.target\n",
	} {
		if !strings.Contains(timer, want) {
			t.Errorf("timer lacks %q:\n%s", want, timer)
		}
	}
	if strings.Contains(timer, "Persistent=") || strings.Contains(timer, "OnBootSec") {
		t.Errorf("timer has a setting that does nothing in a user monotonic timer:\n%s", timer)
	}
}

// plistValue is a property list value decoded generically, keeping its type.
type plistValue struct {
	typ  string // string, integer, true, false, array, dict, …
	text string
	arr  []plistValue
	dict map[string]plistValue
	keys []string
}

func decodePlist(t *testing.T, doc string) plistValue {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("plist: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "plist" {
				t.Fatalf("plist: root element %s", se.Name.Local)
			}
			v, end, err := plistNext(d)
			if err != nil || end {
				t.Fatalf("plist: no value (%v)", err)
			}
			return v
		}
	}
}

// plistNext reads the next value; end is true at the parent's end tag.
func plistNext(d *xml.Decoder) (v plistValue, end bool, err error) {
	for {
		tok, err := d.Token()
		if err != nil {
			return v, false, err
		}
		switch tok := tok.(type) {
		case xml.EndElement:
			return v, true, nil
		case xml.CharData:
			if strings.TrimSpace(string(tok)) != "" {
				return v, false, fmt.Errorf("stray text %q", tok)
			}
		case xml.StartElement:
			v.typ = tok.Name.Local
			switch v.typ {
			case "array":
				for {
					e, end, err := plistNext(d)
					if err != nil {
						return v, false, err
					}
					if end {
						return v, false, nil
					}
					v.arr = append(v.arr, e)
				}
			case "dict":
				v.dict = map[string]plistValue{}
				for {
					k, end, err := plistNext(d)
					if err != nil {
						return v, false, err
					}
					if end {
						return v, false, nil
					}
					if k.typ != "key" {
						return v, false, fmt.Errorf("dict: want a key, got %s", k.typ)
					}
					e, end, err := plistNext(d)
					if err != nil || end {
						return v, false, fmt.Errorf("dict: key %s has no value", k.text)
					}
					if _, dup := v.dict[k.text]; dup {
						return v, false, fmt.Errorf("dict: key %s twice", k.text)
					}
					v.dict[k.text] = e
					v.keys = append(v.keys, k.text)
				}
			default: // a scalar: its text, then its end tag
				var s struct {
					Text string `xml:",chardata"`
				}
				if err := d.DecodeElement(&s, &tok); err != nil {
					return v, false, err
				}
				v.text = s.Text
				return v, false, nil
			}
		}
	}
}

func TestLaunchdPlist(t *testing.T) {
	bin := "/Users/Jane & Co/bin/<engram>-worker"
	home := "/Users/Jane & Co/.claude-memory"
	doc := LaunchdPlist(bin, home, DefaultLaunchdLabel, "CLAUDE_CONFIG_DIR=/Users/Jane & Co/claude")
	root := decodePlist(t, doc)
	if root.typ != "dict" {
		t.Fatalf("top level is %s, want dict", root.typ)
	}
	// Every key with the type launchd wants.
	types := map[string]string{
		"Label": "string", "ProgramArguments": "array", "EnvironmentVariables": "dict",
		"StartInterval": "integer", "RunAtLoad": "true", "ProcessType": "string",
		"LowPriorityIO": "true", "Nice": "integer",
		"StandardOutPath": "string", "StandardErrorPath": "string",
	}
	for _, k := range root.keys {
		want, known := types[k]
		if !known {
			t.Errorf("unexpected key %s", k)
		} else if got := root.dict[k].typ; got != want {
			t.Errorf("%s is <%s>, want <%s>", k, got, want)
		}
	}
	for k := range types {
		if _, ok := root.dict[k]; !ok {
			t.Errorf("key %s missing", k)
		}
	}
	if l := root.dict["Label"].text; l != DefaultLaunchdLabel {
		t.Errorf("Label %q", l)
	}
	var args []string
	for _, a := range root.dict["ProgramArguments"].arr {
		if a.typ != "string" {
			t.Errorf("ProgramArguments holds a <%s>", a.typ)
		}
		args = append(args, a.text)
	}
	if strings.Join(args, "|") != bin+"|run|--quiet" {
		t.Errorf("ProgramArguments %q", args)
	}
	if n, err := strconv.Atoi(root.dict["StartInterval"].text); err != nil || n != 900 {
		t.Errorf("StartInterval %q, want 900", root.dict["StartInterval"].text)
	}
	for _, k := range []string{"StandardOutPath", "StandardErrorPath"} {
		p := root.dict[k].text
		if !filepath.IsAbs(p) || filepath.Dir(p) != filepath.Join(home, "logs") {
			t.Errorf("%s %q: want an absolute path in %s/logs", k, p, home)
		}
	}
	env := root.dict["EnvironmentVariables"]
	for k, want := range map[string]string{"ENGRAM_HOME": home, "CLAUDE_CONFIG_DIR": "/Users/Jane & Co/claude"} {
		if v := env.dict[k]; v.typ != "string" || v.text != want {
			t.Errorf("EnvironmentVariables[%s] = <%s>%q, want <string>%q", k, v.typ, v.text, want)
		}
	}
	if strings.Contains(doc, "~") {
		t.Errorf("plist uses ~, which launchd does not expand:\n%s", doc)
	}
	// plutil, where there is one (macOS), must accept it too.
	if _, err := exec.LookPath("plutil"); err == nil {
		p := filepath.Join(t.TempDir(), "a.plist")
		writeFile(t, p, doc, 0o644)
		if out, err := exec.Command("plutil", "-lint", p).CombinedOutput(); err != nil {
			t.Errorf("plutil -lint: %v\n%s", err, out)
		}
	}
}

func TestCronLine(t *testing.T) {
	got := CronLine("/opt/a b/engram-worker", "/home/u/50%", "CLAUDE_CONFIG_DIR=/c")
	want := `*/15 * * * * ENGRAM_HOME='/home/u/50\%' CLAUDE_CONFIG_DIR=/c '/opt/a b/engram-worker' run --quiet >>'/home/u/50\%/logs/worker.cron.log' 2>&1`
	if got != want {
		t.Errorf("CronLine:\n got %s\nwant %s", got, want)
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		// What cron hands to sh (\% becomes %) must parse.
		cmd := strings.ReplaceAll(strings.SplitN(got, " ", 6)[5], `\%`, "%")
		if out, err := exec.Command(sh, "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v %s", err, out)
		}
	}
}
