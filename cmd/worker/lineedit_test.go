package main

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestLineEdit(t *testing.T) {
	runes := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	key := func(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }
	alt := func(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k, Alt: true} }
	tests := []struct {
		name, start string
		keys        []tea.KeyMsg
		want        string
		pos         int
	}{
		{"typing at the end", "Use tabs", []tea.KeyMsg{runes(" always"), key(tea.KeySpace), runes("!")}, "Use tabs always !", 17},
		{"left, then insert", "Use tabs.", []tea.KeyMsg{key(tea.KeyLeft), runes(" here")}, "Use tabs here.", 13},
		{"home, right, delete", "xUse tabs", []tea.KeyMsg{key(tea.KeyHome), key(tea.KeyDelete)}, "Use tabs", 0},
		{"ctrl+a and ctrl+e", "tabs", []tea.KeyMsg{key(tea.KeyCtrlA), runes("Use "), key(tea.KeyCtrlE), runes(".")}, "Use tabs.", 9},
		{"backspace in the middle", "Use tabbs", []tea.KeyMsg{key(tea.KeyLeft), key(tea.KeyBackspace)}, "Use tabs", 7},
		{"words: ctrl+left twice, ctrl+right", "one two three", []tea.KeyMsg{key(tea.KeyCtrlLeft), key(tea.KeyCtrlLeft),
			key(tea.KeyCtrlRight), runes("!")}, "one two! three", 8},
		{"alt+left", "one two", []tea.KeyMsg{alt(tea.KeyLeft), runes("_")}, "one _two", 5},
		{"ctrl+w deletes the word before", "one two three", []tea.KeyMsg{key(tea.KeyCtrlW)}, "one two ", 8},
		{"ctrl+u and ctrl+k", "one two three", []tea.KeyMsg{key(tea.KeyCtrlLeft), key(tea.KeyCtrlK), key(tea.KeyLeft),
			key(tea.KeyCtrlU)}, " ", 0},
		{"a paste on one line", "a", []tea.KeyMsg{runes("b\nc\td")}, "ab c d", 6},
		{"the cursor stays in the text", "ab", []tea.KeyMsg{key(tea.KeyRight), key(tea.KeyHome), key(tea.KeyLeft), key(tea.KeyBackspace)}, "ab", 0},
		{"runes of other writing", "café", []tea.KeyMsg{key(tea.KeyLeft), key(tea.KeyBackspace), runes("ﬀ")}, "caﬀé", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLineEdit(tt.start)
			for _, k := range tt.keys {
				if !l.key(k) {
					t.Fatalf("key %q not taken", k.String())
				}
			}
			if l.String() != tt.want || l.pos != tt.pos {
				t.Errorf("%q at %d, want %q at %d", l.String(), l.pos, tt.want, tt.pos)
			}
		})
	}
	l := newLineEdit("x")
	if l.key(key(tea.KeyEnter)) || l.key(alt(tea.KeyRunes)) {
		t.Error("enter or an alt+letter taken as an edit")
	}
}
