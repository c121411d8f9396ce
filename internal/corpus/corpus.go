// Package corpus measures how well the local extractor and judge turn what
// people say in coding sessions into beliefs, against a labelled corpus of
// short user utterances (internal/extract/testdata/speech). Each utterance
// is extracted as a one-message exchange from the user, its signals are
// reduced to the claims the local judge would make (consolidate.Claims),
// and those are compared with the labels: kind, subject, polarity and
// scope must all match for a claim to count.
//
// The corpus has two parts: tune.txt, on which the heuristics may be tuned,
// and heldout.txt, written before any tuning and kept out of it: only its
// totals are checked.
package corpus

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/engram-memory/engram/internal/consolidate"
	"github.com/engram-memory/engram/internal/episode"
	"github.com/engram-memory/engram/internal/extract"
)

// Label is one belief an utterance should yield.
type Label struct {
	Kind     string   // consolidate.ClaimPreference, ClaimFact, ClaimCorrection
	Polarity int      // +1 / -1
	Global   bool     // scope g
	Subjects []string // alternatives, normalised by Norm
	Values   []string // a fact's value alternatives, normalised
	Belief   string   // the belief as it should read ("Never put emoji in commit messages."), or ""
}

// Item is one labelled utterance.
type Item struct {
	Source string // "GROUP/ID" from the last @source line, or ""
	Line   int
	Text   string
	Labels []Label // empty: the utterance yields no belief
}

// Load reads a corpus file.
func Load(path string) ([]Item, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads corpus lines from r; name is used in errors.
func Parse(r io.Reader, name string) ([]Item, error) {
	var out []Item
	sc := bufio.NewScanner(r)
	n := 0
	source := ""
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if src, ok := strings.CutPrefix(line, "@source "); ok {
			source = strings.TrimSpace(src)
			if g, id, ok := strings.Cut(source, "/"); !ok || g == "" || id == "" || strings.ContainsAny(source, " \t") {
				return nil, fmt.Errorf("%s:%d: source %q is not GROUP/ID", name, n, source)
			}
			continue
		}
		text, labels, ok := strings.Cut(line, " => ")
		if !ok {
			return nil, fmt.Errorf("%s:%d: no \" => \" in %q", name, n, line)
		}
		it := Item{Source: source, Line: n, Text: strings.TrimSpace(text)}
		if labels = strings.TrimSpace(labels); labels != "none" {
			for _, l := range strings.Split(labels, " ; ") {
				lb, err := parseLabel(l)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, n, err)
				}
				it.Labels = append(it.Labels, lb)
			}
		}
		out = append(out, it)
	}
	return out, sc.Err()
}

func parseLabel(s string) (Label, error) {
	s, belief, _ := strings.Cut(s, " :: ")
	f := strings.SplitN(strings.TrimSpace(s), " ", 4)
	if len(f) != 4 {
		return Label{}, fmt.Errorf("label %q: want KIND POLARITY SCOPE SUBJECT", s)
	}
	l := Label{Belief: strings.TrimSpace(belief)}
	switch f[0] {
	case consolidate.ClaimPreference, consolidate.ClaimFact, consolidate.ClaimCorrection:
		l.Kind = f[0]
	default:
		return Label{}, fmt.Errorf("label %q: kind %q is not pref, fact or corr", s, f[0])
	}
	switch f[1] {
	case "+":
		l.Polarity = 1
	case "-":
		l.Polarity = -1
	default:
		return Label{}, fmt.Errorf("label %q: polarity %q is not + or -", s, f[1])
	}
	switch f[2] {
	case "g":
		l.Global = true
	case "p":
	default:
		return Label{}, fmt.Errorf("label %q: scope %q is not g or p", s, f[2])
	}
	subj := f[3]
	if l.Kind == consolidate.ClaimFact || l.Kind == consolidate.ClaimCorrection && strings.Contains(subj, "=") {
		name, val, ok := strings.Cut(subj, "=")
		if !ok {
			return Label{}, fmt.Errorf("label %q: a fact is NAME=VALUE", s)
		}
		subj = name
		for _, v := range strings.Split(val, "|") {
			l.Values = append(l.Values, Norm(v))
		}
	}
	for _, a := range strings.Split(subj, "|") {
		l.Subjects = append(l.Subjects, Norm(a))
	}
	return l, nil
}

// Norm folds a subject or value for comparison: lower case, hyphens and
// underscores as spaces, articles dropped, plurals made singular, a
// leading "is" dropped.
func Norm(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("-", " ", "_", " ", "`", "").Replace(s)
	var out []string
	for _, w := range strings.Fields(s) {
		w = strings.Trim(w, ".,;:!?\"'()")
		switch w {
		case "", "a", "an", "the":
			continue
		}
		switch {
		case strings.ContainsAny(w, "./"):
		case len(w) > 4 && strings.HasSuffix(w, "ies"):
			w = w[:len(w)-3] + "y"
		case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") ||
			strings.HasSuffix(w, "shes")):
			w = w[:len(w)-2]
		case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	// A fact about the user keeps its verb ("is on macOS"); the label may
	// leave "is" out.
	if len(out) > 1 && (out[0] == "is" || out[0] == "am") {
		out = out[1:]
	}
	return strings.Join(out, " ")
}

// Claims extracts text as one user message and returns its claims.
func Claims(ctx context.Context, x extract.Extractor, text string) ([]consolidate.Claim, error) {
	in := extract.Input{
		SessionID:   "corpus",
		Project:     "corpus",
		ProjectPath: "/corpus",
		TurnAt:      time.Unix(0, 0).UTC(),
		Content:     "user: " + text,
		Blocks:      []extract.Block{{Role: "user", Kind: "text", Text: text}},
	}
	d, err := x.Extract(ctx, in)
	if err != nil {
		return nil, err
	}
	// A tentative correction stands only against a memory that holds what
	// it retires, which a sentence read alone has none of.
	e := episode.Episode{Signals: episode.Sure(d.Signals), Scope: d.Scope}
	return consolidate.Claims(&e), nil
}

// matches reports whether claim c is what label l says.
func matches(l Label, c consolidate.Claim) bool {
	if l.Kind != c.Kind || l.Polarity != c.Polarity || l.Global != c.Global {
		return false
	}
	if !slices.Contains(l.Subjects, Norm(c.Subject)) {
		return false
	}
	return l.Kind != consolidate.ClaimFact || slices.Contains(l.Values, Norm(c.Value))
}

// Counts are true positives, false positives and false negatives.
type Counts struct{ TP, FP, FN int }

// Precision is TP/(TP+FP), 1 when nothing was predicted.
func (c Counts) Precision() float64 {
	if c.TP+c.FP == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FP)
}

// Recall is TP/(TP+FN), 1 when nothing was expected.
func (c Counts) Recall() float64 {
	if c.TP+c.FN == 0 {
		return 1
	}
	return float64(c.TP) / float64(c.TP+c.FN)
}

func (c *Counts) add(o Counts) { c.TP += o.TP; c.FP += o.FP; c.FN += o.FN }

// Miss is an utterance where claims and labels differ.
type Miss struct {
	Item  Item
	Extra []consolidate.Claim // claimed, not labelled
	Lost  []Label             // labelled, not claimed
}

// Result is one part of the corpus measured.
type Result struct {
	Items  int
	All    Counts
	ByKind map[string]Counts
	// None: utterances labelled none, and how many of them yielded a claim.
	None, NoneClaimed int
	Misses            []Miss
}

// Evaluate measures extractor x on items. A claim counts as a false
// positive in the kind it was claimed as; a label not met counts as a
// false negative in its kind.
func Evaluate(ctx context.Context, x extract.Extractor, items []Item) (Result, error) {
	return evaluate(ctx, x, items, matches)
}

// EvaluateMeaning is Evaluate with the looser match of MeansLabel: the
// claim is about the same thing as the label, not necessarily in the
// label's words.
func EvaluateMeaning(ctx context.Context, x extract.Extractor, items []Item) (Result, error) {
	return evaluate(ctx, x, items, MeansLabel)
}

func evaluate(ctx context.Context, x extract.Extractor, items []Item, matches func(Label, consolidate.Claim) bool) (Result, error) {
	r := Result{Items: len(items), ByKind: map[string]Counts{}}
	for _, it := range items {
		claims, err := Claims(ctx, x, it.Text)
		if err != nil {
			return r, err
		}
		used := make([]bool, len(it.Labels))
		var m Miss
		for _, c := range claims {
			hit := false
			for i, l := range it.Labels {
				if !used[i] && matches(l, c) {
					used[i], hit = true, true
					break
				}
			}
			k := r.ByKind[c.Kind]
			if hit {
				k.TP++
			} else {
				k.FP++
				m.Extra = append(m.Extra, c)
			}
			r.ByKind[c.Kind] = k
		}
		for i, l := range it.Labels {
			if !used[i] {
				k := r.ByKind[l.Kind]
				k.FN++
				r.ByKind[l.Kind] = k
				m.Lost = append(m.Lost, l)
			}
		}
		if len(it.Labels) == 0 {
			r.None++
			if len(claims) > 0 {
				r.NoneClaimed++
			}
		}
		if len(m.Extra) > 0 || len(m.Lost) > 0 {
			m.Item = it
			r.Misses = append(r.Misses, m)
		}
	}
	for _, c := range r.ByKind {
		r.All.add(c)
	}
	return r, nil
}

// Report writes a result as a table: precision and recall per kind.
func Report(w io.Writer, name string, r Result) {
	fmt.Fprintf(w, "%s: %d utterances, %d labelled none (%d of them yielded a claim)\n", name, r.Items, r.None, r.NoneClaimed)
	fmt.Fprintf(w, "  %-6s %5s %5s %5s %9s %7s\n", "kind", "tp", "fp", "fn", "precision", "recall")
	kinds := make([]string, 0, len(r.ByKind))
	for k := range r.ByKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	row := func(k string, c Counts) {
		fmt.Fprintf(w, "  %-6s %5d %5d %5d %9.3f %7.3f\n", k, c.TP, c.FP, c.FN, c.Precision(), c.Recall())
	}
	for _, k := range kinds {
		row(k, r.ByKind[k])
	}
	row("all", r.All)
}

// WriteMisses lists the utterances where claims and labels differ.
func WriteMisses(w io.Writer, r Result) {
	for _, m := range r.Misses {
		fmt.Fprintf(w, "line %d: %s\n", m.Item.Line, m.Item.Text)
		for _, c := range m.Extra {
			fmt.Fprintf(w, "    extra: %s\n", fmtClaim(c))
		}
		for _, l := range m.Lost {
			fmt.Fprintf(w, "    lost:  %s %s %s %s\n", l.Kind, pol(l.Polarity), scope(l.Global),
				cmp.Or(strings.Join(l.Subjects, "|"), "?")+valSuffix(l.Values))
		}
	}
}

func fmtClaim(c consolidate.Claim) string {
	s := fmt.Sprintf("%s %s %s %s", c.Kind, pol(c.Polarity), scope(c.Global), c.Subject)
	if c.Value != "" {
		s += "=" + c.Value
	}
	return s
}

func valSuffix(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return "=" + strings.Join(v, "|")
}

func pol(p int) string {
	if p < 0 {
		return "-"
	}
	return "+"
}

func scope(g bool) string {
	if g {
		return "g"
	}
	return "p"
}
