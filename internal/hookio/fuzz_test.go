package hookio

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	matches, _ := filepath.Glob("../../../shared/fixtures/claude-code-2.1.330/hook-input-*.json")
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"session_id":"a","stop_hook_active":"true","last_assistant_message":"\ud800"}`))
	f.Add([]byte(`{"session_id":["x"],"cwd":null}`))
	f.Add([]byte("\xff\xfe{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := Parse(data)
		if err != nil {
			return
		}
		for _, s := range []string{in.SessionID, in.TranscriptPath, in.CWD, in.Prompt, in.LastAssistantMessage} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 out of Parse: %q", s)
			}
		}
		if ValidSessionID(in.SessionID) == nil {
			for _, r := range in.SessionID {
				if r == '/' || r == '.' || r == 0 {
					t.Fatalf("unsafe session id accepted: %q", in.SessionID)
				}
			}
		}
		// Validation must not panic on anything Parse returns.
		_ = ValidTranscriptPath(in.TranscriptPath, in.SessionID)
	})
}
