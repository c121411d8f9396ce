package main

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
)

// lineEdit is a one-line text field with a cursor, edited with the keys a
// shell's line editor takes: arrows, home and end (ctrl+a, ctrl+e),
// word moves (alt or ctrl with an arrow, alt+b, alt+f), backspace and
// delete, ctrl+w (the word before), ctrl+u (all before the cursor),
// ctrl+k (all after it); typed and pasted text goes in at the cursor.
type lineEdit struct {
	text []rune
	pos  int // 0..len(text)
}

func newLineEdit(s string) lineEdit {
	r := []rune(s)
	return lineEdit{text: r, pos: len(r)}
}

func (l *lineEdit) String() string { return string(l.text) }

// key applies one key; it reports whether the key was an editing key.
func (l *lineEdit) key(k tea.KeyMsg) bool {
	switch k.String() {
	case "left", "ctrl+b":
		l.pos = max(l.pos-1, 0)
	case "right", "ctrl+f":
		l.pos = min(l.pos+1, len(l.text))
	case "home", "ctrl+a":
		l.pos = 0
	case "end", "ctrl+e":
		l.pos = len(l.text)
	case "alt+left", "ctrl+left", "alt+b":
		l.pos = l.wordStart()
	case "alt+right", "ctrl+right", "alt+f":
		l.pos = l.wordEnd()
	case "backspace", "ctrl+h":
		if l.pos > 0 {
			l.text = append(l.text[:l.pos-1], l.text[l.pos:]...)
			l.pos--
		}
	case "delete", "ctrl+d":
		if l.pos < len(l.text) {
			l.text = append(l.text[:l.pos], l.text[l.pos+1:]...)
		}
	case "ctrl+w", "alt+backspace":
		start := l.wordStart()
		l.text = append(l.text[:start], l.text[l.pos:]...)
		l.pos = start
	case "ctrl+u":
		l.text = append([]rune(nil), l.text[l.pos:]...)
		l.pos = 0
	case "ctrl+k":
		l.text = l.text[:l.pos]
	default:
		var in []rune
		switch k.Type {
		case tea.KeySpace:
			in = []rune{' '}
		case tea.KeyRunes:
			if k.Alt {
				return false
			}
			// A paste may hold line breaks: a statement is one line.
			in = []rune(strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' || r == '\t' {
					return ' '
				}
				return r
			}, string(k.Runes)))
		default:
			return false
		}
		l.text = append(l.text[:l.pos], append(in, l.text[l.pos:]...)...)
		l.pos += len(in)
	}
	return true
}

// wordStart is where the word before the cursor starts (blanks before it
// skipped), wordEnd where the word after it ends.
func (l *lineEdit) wordStart() int {
	i := l.pos
	for i > 0 && unicode.IsSpace(l.text[i-1]) {
		i--
	}
	for i > 0 && !unicode.IsSpace(l.text[i-1]) {
		i--
	}
	return i
}

func (l *lineEdit) wordEnd() int {
	i := l.pos
	for i < len(l.text) && unicode.IsSpace(l.text[i]) {
		i++
	}
	for i < len(l.text) && !unicode.IsSpace(l.text[i]) {
		i++
	}
	return i
}

// view renders the text with the cursor as a reversed cell (a reversed
// blank at the end).
func (l *lineEdit) view() string {
	under := " "
	if l.pos < len(l.text) {
		under = string(l.text[l.pos])
	}
	after := ""
	if l.pos < len(l.text) {
		after = string(l.text[l.pos+1:])
	}
	return string(l.text[:l.pos]) + "\x1b[7m" + under + "\x1b[27m" + after
}
