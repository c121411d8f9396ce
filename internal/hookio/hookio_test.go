package hookio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRealInputs(t *testing.T) {
	dir := "../../../shared/fixtures/claude-code-2.1.330"
	b, err := os.ReadFile(filepath.Join(dir, "hook-input-stop.json"))
	if err != nil {
		t.Skipf("fixtures not available: %v", err)
	}
	in, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if in.SessionID != "391c10cf-5281-4939-ba64-ee611dca86d4" || in.HookEventName != "Stop" ||
		in.LastAssistantMessage != "Understood." || in.CWD != "/home/dev/proj/sub/deeper" || in.StopHookActive {
		t.Errorf("stop input: %+v", in)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "hook-input-userprompt.json"))
	in, err = Parse(b)
	if err != nil || in.Prompt != "I prefer table-driven tests and never testify" {
		t.Errorf("userprompt input: %+v %v", in, err)
	}
}

func TestParseLenient(t *testing.T) {
	in, err := Parse([]byte(`{"session_id":"abc","cwd":42,"stop_hook_active":"true","new_field":{"x":[1]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.SessionID != "abc" || in.CWD != "" || !in.StopHookActive {
		t.Errorf("got %+v", in)
	}
	for _, bad := range []string{"", "null", "[]", "not json", `{"session_id":`} {
		if _, err := Parse([]byte(bad)); !errors.Is(err, ErrInput) {
			t.Errorf("Parse(%q) err=%v, want ErrInput", bad, err)
		}
	}
	if _, err := Read(strings.NewReader(strings.Repeat(" ", MaxInput+1))); !errors.Is(err, ErrInput) {
		t.Errorf("oversized input accepted: %v", err)
	}
}

func TestValidation(t *testing.T) {
	for _, tt := range []struct {
		id string
		ok bool
	}{
		{"391c10cf-5281-4939-ba64-ee611dca86d4", true},
		{"abc_DEF-1", true},
		{"", false},
		{"../etc", false},
		{"a/b", false},
		{"a.b", false},
		{"-leading", false},
		{strings.Repeat("a", 129), false},
		{"a\x00b", false},
	} {
		if err := ValidSessionID(tt.id); (err == nil) != tt.ok {
			t.Errorf("ValidSessionID(%q)=%v, want ok=%v", tt.id, err, tt.ok)
		}
	}
	dir := t.TempDir()
	id := "391c10cf-5281-4939-ba64-ee611dca86d4"
	good := filepath.Join(dir, id+".jsonl")
	os.WriteFile(good, nil, 0o600)
	os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o700)
	for _, tt := range []struct {
		p  string
		ok bool
	}{
		{good, true},
		{"relative/" + id + ".jsonl", false},
		{dir + "/x/../" + id + ".jsonl", false},
		{filepath.Join(dir, "other.jsonl"), false},
		{filepath.Join(dir, "missing", id+".jsonl"), false},
		{"/etc/passwd", false},
		{"", false},
	} {
		if err := ValidTranscriptPath(tt.p, id); (err == nil) != tt.ok {
			t.Errorf("ValidTranscriptPath(%q)=%v, want ok=%v", tt.p, err, tt.ok)
		}
	}
	if err := ValidTranscriptPath(filepath.Join(dir, "d.jsonl"), "d"); err == nil {
		t.Error("directory accepted as transcript")
	}
}
