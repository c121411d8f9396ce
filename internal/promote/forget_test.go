package promote

import "testing"

func TestDropArchiveLines(t *testing.T) {
	forget := map[string]bool{"- Lunch was at noon": true, "- The disk is encrypted": true}
	in := "# engram archive 2026-10\n\n## 2026-10-01\n\n- Lunch was at noon\n- No emoji in commits\n\n" +
		"## 2026-10-02\n\n- The disk is encrypted\n\n## 2026-10-03\n\n- Tabs, not spaces\n\n"
	want := "# engram archive 2026-10\n\n## 2026-10-01\n\n- No emoji in commits\n\n## 2026-10-03\n\n- Tabs, not spaces\n\n"
	if got := dropArchiveLines(in, forget); got != want {
		t.Errorf("dropArchiveLines:\n%q\nwant\n%q", got, want)
	}
	if got := dropArchiveLines(want, forget); got != want {
		t.Errorf("a file without forgotten bullets changed:\n%q", got)
	}
	// Windows line ends are matched too.
	crlf := "## 2026-10-01\r\n\r\n- Lunch was at noon\r\n- Kept\r\n\r\n"
	if got := dropArchiveLines(crlf, forget); got != "## 2026-10-01\r\n\r\n- Kept\r\n\r\n" {
		t.Errorf("CRLF: %q", got)
	}
}

func TestDropForgotten(t *testing.T) {
	secs := []section{{date: "2026-10-01", bullets: []string{"- a", "- b"}}, {date: "2026-10-02", bullets: []string{"- c"}}}
	got := dropForgotten(secs, map[string]bool{"- a": true, "- c": true})
	if len(got) != 1 || len(got[0].bullets) != 1 || got[0].bullets[0] != "- b" || len(secs[0].bullets) != 2 {
		t.Errorf("dropForgotten: %+v (input now %+v)", got, secs)
	}
}
