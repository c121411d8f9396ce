package corpus

import (
	"context"
	"testing"

	"github.com/engram-memory/engram/internal/extract"
)

// TestPhrasingValidation: on the validation split, beliefs read in the
// user's words keep more of what the belief should say (its qualifiers)
// than beliefs rendered from subject and predicate, and say little the
// user did not mean.
func TestPhrasingValidation(t *testing.T) {
	val := Splits(loadAll(t))[Val]
	words, err := EvaluatePhrasing(context.Background(), extract.NewLocal(), val, nil)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := EvaluatePhrasing(context.Background(), extract.NewLocal(), val, Rendered)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("val: %d beliefs met; in the user's words P %.3f R %.3f F1 %.3f; rendered P %.3f R %.3f F1 %.3f", words.N,
		words.Precision, words.Recall, words.F1(), rendered.Precision, rendered.Recall, rendered.F1())
	if words.N < 100 || words.N != rendered.N {
		t.Fatalf("%d and %d beliefs met, want the same 100 or more", words.N, rendered.N)
	}
	// The floors sit under the committed reading's figures (recall 0.733,
	// F1 0.699 on 512 beliefs met; 0.735 and 0.707 on 449 before the rules
	// the reading does better were dropped).
	if words.Recall < 0.70 || words.F1() < 0.69 {
		t.Errorf("in the user's words: recall %.3f F1 %.3f, want ≥ 0.70 and 0.69", words.Recall, words.F1())
	}
	if words.F1() < rendered.F1()+0.1 {
		t.Errorf("F1 in the user's words %.3f, rendered %.3f: want 0.1 better", words.F1(), rendered.F1())
	}
}
