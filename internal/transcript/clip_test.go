package transcript

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		name       string
		writes     []string
		head, tail int
		want       string
	}{
		{"fits", []string{"hello"}, 3, 3, "hello"},
		{"fits exactly in pieces", []string{"ab", "c", "def"}, 3, 3, "abcdef"},
		{"head and tail", []string{"0123456789"}, 3, 3, "012" + truncMarker(4) + "789"},
		{"many small writes", strings.Split("0123456789abcdefghij", ""), 4, 5, "0123" + truncMarker(11) + "fghij"},
		{"head only", []string{"0123456789"}, 4, 0, "0123" + truncMarker(6)},
		{"cuts on rune boundaries", []string{"aé€😀xyz😀€éb"}, 5, 5, "aé" + truncMarker(17) + "éb"},
		{"empty", nil, 3, 3, ""},
	} {
		c := clip{headMax: tt.head, tailMax: tt.tail}
		for _, w := range tt.writes {
			c.write([]byte(w))
		}
		if got := c.String(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly 10", 10, "exactly 10"},
		{"a bit longer", 10, "a bit l…"}, {"a b  longer", 8, "a b…"},
		{"ééééé", 8, "éé…"},
		{"abc", 2, "ab"},
		{"éa", 1, ""},
	} {
		got := truncate(tt.in, tt.max)
		if got != tt.want || len(got) > tt.max || !utf8.ValidString(got) {
			t.Errorf("truncate(%q, %d)=%q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, lit := range []string{
		`""`, `"plain"`, `"\n\t\r\b\f\/\\\""`, `"\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\uD83D\uDE00"`,
		`"\ud800"`, `"\ud800x"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"é😀"`, "\"\xff \xe2\x82 \xed\xa0\x80\"",
	} {
		checkUnquote(t, lit)
	}
}

func checkUnquote(t *testing.T, lit string) {
	t.Helper()
	var want string
	if err := json.Unmarshal([]byte(lit), &want); err != nil {
		return
	}
	c := clip{headMax: len(lit) * 4}
	unquoteTo([]byte(lit), &c)
	if got := c.String(); got != want {
		t.Errorf("unquote(%s)=%q, encoding/json says %q", lit, got, want)
	}
	if c.total != len(c.head) {
		t.Errorf("unquote(%s): total %d, kept %d", lit, c.total, len(c.head))
	}
}

// FuzzUnquote holds the hand-written JSON string decoder to encoding/json on
// every literal encoding/json accepts.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800\u0041"`, `"x\\y\"z"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		// The walker hands over string values exactly, without the
		// whitespace json.Valid allows around them.
		if !json.Valid([]byte(lit)) || len(lit) == 0 || lit[0] != '"' || lit[len(lit)-1] != '"' {
			return
		}
		checkUnquote(t, lit)
		// Any clip of it is valid UTF-8 and within bounds.
		c := clip{headMax: 5, tailMax: 4}
		unquoteTo([]byte(lit), &c)
		if s := c.String(); !utf8.ValidString(s) || len(s) > 9+len(truncMarker(len(lit)*4)) {
			t.Errorf("clip of %s = %q", lit, s)
		}
	})
}
