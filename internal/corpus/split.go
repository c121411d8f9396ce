package corpus

import (
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/lexicon"
)

// The splits of the speech corpus. Items are split by their source (a
// session, a rule file, a repository, a batch of written sentences), never
// by sentence, so that no source has sentences on both sides.
const (
	Train = "train" // the model is fitted here
	Val   = "val"   // its decision thresholds are fitted here; tests hold figures here
	Test  = "test"  // only reported: never used to choose anything
)

// SplitOf returns the split of a source: the legacy tuning part is train
// and the legacy held-out part val; every other source goes by a hash of
// its name, 60% train, 20% val, 20% test.
func SplitOf(source string) string {
	group, _, _ := strings.Cut(source, "/")
	switch group {
	case "tune":
		return Train
	case "heldout":
		return Val
	}
	h := fnv.New32a()
	h.Write([]byte(source))
	switch b := h.Sum32() % 10; {
	case b < 6:
		return Train
	case b < 8:
		return Val
	}
	return Test
}

// LoadDir reads every *.txt file of dir, in name order.
func LoadDir(dir string) ([]Item, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Item
	for _, n := range names {
		items, err := Load(n)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	if len(names) == 0 {
		return nil, &os.PathError{Op: "load corpus", Path: dir, Err: os.ErrNotExist}
	}
	return dedupe(out), nil
}

// dedupe keeps the first of utterances with the same words: a template a
// session pasted many times is one utterance, in one split.
func dedupe(items []Item) []Item {
	seen := map[string]bool{}
	out := items[:0]
	for _, it := range items {
		k := strings.Join(strings.Fields(strings.ToLower(it.Text)), " ")
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, it)
	}
	return out
}

// Splits groups items by SplitOf their source.
func Splits(items []Item) map[string][]Item {
	out := map[string][]Item{}
	for _, it := range items {
		s := SplitOf(it.Source)
		out[s] = append(out[s], it)
	}
	return out
}

// content returns the content words of a normalised phrase.
func content(s string) []string {
	var out []string
	for _, w := range strings.Fields(Norm(s)) {
		if !lexicon.IsFunctionWord(w) {
			out = append(out, w)
		}
	}
	return out
}

func allIn(ws []string, set []string) bool {
	if len(ws) == 0 {
		return false
	}
	for _, w := range ws {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

// MeansLabel reports whether claim c says what label l says, in any
// words: kind, polarity and scope agree; a fact's value is one of the
// label's values (or holds one); and the claim is about the label's
// thing: every content word of one of the label's subjects (or values)
// is in the claim, or every content word of the claim is in one of them
// or in the label's belief as it should read (the subject is engram's
// own handle on a belief, not shown: "kebab case" and "resource name"
// are both handles on "Use kebab-case for resource names.").
func MeansLabel(l Label, c consolidate.Claim) bool {
	if l.Kind != c.Kind || l.Polarity != c.Polarity || l.Global != c.Global {
		return false
	}
	claim := content(c.Subject + " " + c.Value)
	if l.Kind == consolidate.ClaimFact {
		val := content(c.Value)
		ok := false
		for _, v := range l.Values {
			lv := content(v)
			if allIn(lv, val) || allIn(val, lv) {
				ok = true
				break
			}
		}
		return ok
	}
	if l.Belief != "" && allIn(claim, content(l.Belief)) {
		return true
	}
	for _, a := range append(slices.Clone(l.Subjects), l.Values...) {
		la := content(a)
		if allIn(la, claim) || allIn(claim, la) {
			return true
		}
	}
	return false
}
