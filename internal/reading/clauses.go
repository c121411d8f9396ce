package reading

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A sentence often says more than one thing ("queue is kafka, cache is
// redis", "coroutines for async, no rxjava please", "auth goes through the
// proxy, never expose the secret"): the model reads each clause of it on
// its own, so that each statement gets its own kind, polarity and scope,
// and what it is about is found in its own words. Clauses end at a
// comma, semicolon, colon, dash or bracket, and before "but", "so",
// "btw", "also", "then", "because" and "since"; a piece of fewer than
// two words ("ever", "tailwind" in a list) stays with the clause before
// it, so a list is one clause.

// maxClauses bounds the clauses a sentence is read as: the rest is the
// last one.
const maxClauses = 8

// clauseWords open a new clause where they follow a word.
var clauseWords = wordSet(`but so btw also then because since fyi`)

// Clauses returns the byte ranges [a, b) of the clauses of sentence, in
// order, each trimmed of spaces and separators; one range for a sentence
// with no break (or nil for a sentence with no word).
func Clauses(sentence string) [][2]int {
	type piece struct {
		a, b  int
		words int
	}
	var pieces []piece
	start := 0
	words := 0
	inWord := false
	cut := func(end, next int) {
		pieces = append(pieces, piece{start, end, words})
		start, words, inWord = next, 0, false
	}
	quoted := false
	for i := 0; i < len(sentence); {
		r, n := utf8.DecodeRuneInString(sentence[i:])
		switch {
		case r == '`' || r == '"':
			quoted = !quoted
			inWord = false
		case quoted:
		case r == ',' || r == ';' || r == '(' || r == ')' || r == '—' || r == '–':
			cut(i, i+n)
			i += n
			continue
		case r == ':' && (i+n == len(sentence) || sentence[i+n] == ' '):
			cut(i, i+n)
			i += n
			continue
		case r == '-' && i > 0 && sentence[i-1] == ' ' && (i+n == len(sentence) || sentence[i+n] == ' ' || sentence[i+n] == '-'):
			cut(i, i+n)
			i += n
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if !inWord {
				// A word that opens a clause: cut before it.
				if words > 0 {
					j := i
					for j < len(sentence) {
						r2, n2 := utf8.DecodeRuneInString(sentence[j:])
						if !(unicode.IsLetter(r2) || unicode.IsDigit(r2) || r2 == '\'') {
							break
						}
						j += n2
					}
					if clauseWords[strings.ToLower(sentence[i:j])] && (j == len(sentence) || sentence[j] == ' ' || sentence[j] == ',') {
						cut(i, i)
					}
				}
				words++
				inWord = true
			}
			i += n
			continue
		case r == '\'' || r == '.' || r == '/' || r == '_' || r == '+' || r == '#' || r == '@':
			// joiners inside a word
			i += n
			continue
		default:
			inWord = false
		}
		i += n
	}
	pieces = append(pieces, piece{start, len(sentence), words})
	// Pieces of fewer than two words join the clause before them (the
	// first one the clause after it).
	var out []piece
	for _, p := range pieces {
		if p.words == 0 {
			continue
		}
		if len(out) > 0 && (p.words < 2 || len(out) >= maxClauses) {
			out[len(out)-1].b = p.b
			out[len(out)-1].words += p.words
			continue
		}
		out = append(out, p)
	}
	if len(out) > 1 && out[0].words < 2 {
		out[1].a = out[0].a
		out[1].words += out[0].words
		out = out[1:]
	}
	rs := make([][2]int, 0, len(out))
	for _, p := range out {
		a, b := p.a, p.b
		for a < b {
			r, n := utf8.DecodeRuneInString(sentence[a:b])
			if !strings.ContainsRune(clauseTrim, r) {
				break
			}
			a += n
		}
		for b > a {
			r, n := utf8.DecodeLastRuneInString(sentence[a:b])
			if !strings.ContainsRune(clauseTrim, r) {
				break
			}
			b -= n
		}
		if a < b {
			rs = append(rs, [2]int{a, b})
		}
	}
	return rs
}

// clauseTrim is what a clause is trimmed of at its ends.
const clauseTrim = " \t\n\r,;:-–—()"

// ClauseTexts returns the clauses of sentence as strings.
func ClauseTexts(sentence string) []string {
	rs := Clauses(sentence)
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = sentence[r[0]:r[1]]
	}
	return out
}
