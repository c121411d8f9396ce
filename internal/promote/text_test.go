package promote

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain  text\nover\tlines", "plain text over lines"},
		{"see @README.md first", "see `@README.md` first"},
		{"@~/.ssh/id_rsa", "`@~/.ssh/id_rsa`"},
		{"mail me at a@b.c", "mail me at a@b.c"},                         // not a token start
		{"already `@scoped/pkg` quoted", "already `@scoped/pkg` quoted"}, // inside a code span
		{"odd ` backtick @x", "odd ` backtick `@x`"},                     // an unmatched backtick is literal
		{"tick @a`b", "tick ＠a`b"},
		{"lone @ sign", "lone @ sign"},
		{"<!-- ENGRAM:BELIEFS:END -->", "<!- ENGRAM:BELIEFS:END ->"},
		{"<!<!---->", "<!<!->"},
		{"token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ", "token [REDACTED:anthropic]"},
	} {
		if got := oneLine(tt.in, 300); got != tt.want {
			t.Errorf("oneLine(%q)=%q, want %q", tt.in, got, tt.want)
		}
		if got := oneLine(tt.in, 300); strings.Contains(got, "<!--") || strings.Contains(got, "-->") {
			t.Errorf("oneLine(%q)=%q still holds a comment marker", tt.in, got)
		}
	}
}

func TestCut(t *testing.T) {
	s := strings.Repeat("word ", 100)
	got := cut(s, 50)
	if n := utf8.RuneCountInString(got); n > 50 || !strings.HasSuffix(got, "word…") {
		t.Errorf("cut=%q (%d runes), want at most 50 ending at a word with …", got, n)
	}
	if got := cut("short", 50); got != "short" {
		t.Errorf("cut(short)=%q", got)
	}
	long := strings.Repeat("é", 80)
	if got := cut(long, 10); utf8.RuneCountInString(got) != 10 || !utf8.ValidString(got) {
		t.Errorf("cut without spaces = %q", got)
	}
}
