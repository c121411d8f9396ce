package inject

import "testing"

func TestStrip(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{Wrap("[Memory] x"), ""},
		{"before " + Wrap("a") + " after", "before  after"},
		{"a" + Wrap("1") + "b" + Wrap("2") + "c", "abc"},
		{"keep " + Open + " unterminated", "keep"},
	} {
		if got := Strip(tt.in); got != tt.want {
			t.Errorf("Strip(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
	if Contains("x") || !Contains(Wrap("x")) {
		t.Error("Contains")
	}
}
