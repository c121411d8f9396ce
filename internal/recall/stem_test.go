package recall

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/store"
)

// stemWords exercises every rule of the stemmer: real words, and made-up
// ones from stems and suffixes.
func stemWords() []string {
	words := strings.Fields(`caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled
	sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional rational valenci hesitanci
	digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism
	decisiveness hopefulness callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti
	electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant
	replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize
	probate rate cease controll roll generalization generalizations oscillators ays ai aed bing ies eed eeds sses
	updated updating updates deploy deployment deployed deploying configuration configure configured config
	billing invoices testing tests flaky retries retry webhook webhooks migrations migrating abilities lgbtq
	adoption agencies painting painted sunrise camping museum counseling psychology running ran runs y yy yes
	a an go the by cry crying cried dying lying tying spying playing played plays player xyz hopping hoped hoping`)
	stems := strings.Fields(`pay hop tan fail sens relat condit configur gener bill deploy ceas control analog formal
	electr adjust depend activ adopt homolog commun effect bowdler angular oper predic hope good reviv allow infer`)
	suffixes := strings.Fields(`s es ies sses ed eed ing ational tional enci anci izer logi bli alli entli eli ousli
	ization ation ator alism iveness fulness ousness aliti iviti biliti icate ative alize iciti ical ful ness al ance
	ence er ic able ible ant ement ment ent ion ou ism ate iti ous ive ize e y ly ally fully ingly edly`)
	for _, s := range stems {
		for _, x := range suffixes {
			words = append(words, s+x)
		}
	}
	return words
}

// The stemmer and tokenizer give the very terms SQLite's FTS5 index holds
// (porter unicode61 remove_diacritics 2): the set of stems of a batch of
// words equals the index's vocabulary after inserting them.
func TestStemMatchesFTS5(t *testing.T) {
	ctx := context.Background()
	words := stemWords()
	// A few that need folding: case, diacritics, digits.
	words = append(words, "Café", "NAÏVE", "Übergröße", "façade", "Résumés", "MIXEDcase", "x86", "2024")
	const batch = 200
	for from := 0; from < len(words); from += batch {
		part := words[from:min(from+batch, len(words))]
		db, err := store.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(part, " ")
		if err := db.ImportEpisodes(ctx, []episode.Episode{{ID: "ep_000000000001", Summary: text, Type: "event",
			Scope: "global", ContentHash: "h", OccurredAt: now, CreatedAt: now, UpdatedAt: now}}); err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		_, err = db.EachTerm(ctx, func(term string, _ int) error {
			have[term] = true
			return nil
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		mine := map[string]string{} // stem → a word that gives it
		eachStem(text, nil, func(s []byte) { mine[string(s)] = "" })
		for _, w := range part {
			eachToken(w, nil, func(tok []byte) { mine[Stem(string(tok))] = w })
		}
		var wrong []string
		for s, w := range mine {
			if !have[s] {
				wrong = append(wrong, fmt.Sprintf("%s → %q", w, s))
			}
		}
		for s := range have {
			if _, ok := mine[s]; !ok {
				wrong = append(wrong, fmt.Sprintf("FTS5 has %q", s))
			}
		}
		slices.Sort(wrong)
		if len(wrong) > 0 {
			t.Errorf("stems that differ from FTS5's:\n%s", strings.Join(wrong, "\n"))
		}
	}
}

func TestStemExamples(t *testing.T) {
	for word, want := range map[string]string{
		"updated": "updat", "updates": "updat", "deployment": "deploy", "deploy": "deploi", "caresses": "caress",
		"ponies": "poni", "relational": "relat", "generalization": "gener", "hopping": "hop", "go": "go", "ays": "ai",
	} {
		if got := Stem(word); got != want {
			t.Errorf("Stem(%q)=%q want %q", word, got, want)
		}
	}
}
