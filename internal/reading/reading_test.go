package reading

import (
	"bytes"
	"cmp"
	"strings"
	"testing"
)

// TestWriteParse: a model written and parsed back is the same model, and
// writes the same bytes again.
func TestWriteParse(t *testing.T) {
	for _, m := range []*Model{Lexical(), MiniLM()} {
		writeParse(t, m)
	}
}

func writeParse(t *testing.T, m *Model) {
	t.Helper()
	var a bytes.Buffer
	if err := m.Write(&a); err != nil {
		t.Fatal(err)
	}
	p, err := Parse(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("a model written, parsed and written again differs")
	}
	if (p.Deep == nil) != (m.Deep == nil) || p.Deep != nil && (p.Deep.H != m.Deep.H || len(p.Deep.In) != len(m.Deep.In)) {
		t.Fatalf("%s: the deep reading did not survive writing and parsing", m.Name)
	}
	if p.Drop != m.Drop || p.Add != m.Add || p.AddKind != m.AddKind || p.Scope != m.Scope || p.Rekind != m.Rekind ||
		p.Gate != m.Gate || p.VecScale != m.VecScale {
		t.Fatalf("settings %v/%v/%v/%v/%v/%v/%v, want %v/%v/%v/%v/%v/%v/%v", p.Drop, p.Add, p.AddKind, p.Scope, p.Rekind, p.Gate, p.VecScale,
			m.Drop, m.Add, m.AddKind, m.Scope, m.Rekind, m.Gate, m.VecScale)
	}
	for k := range kinds {
		if want := cmp.Or(m.AddKind[k], m.Add); p.AddFor(k) != want {
			t.Errorf("%s: AddFor(%s) = %v, want %v", m.Name, KindNames[k], p.AddFor(k), want)
		}
	}
}

// TestOlderFile: a model file written before the per-kind add, rekind and
// vector scale settings reads as before them: none, never, 1.
func TestOlderFile(t *testing.T) {
	var b bytes.Buffer
	if err := MiniLM().Write(&b); err != nil {
		t.Fatal(err)
	}
	var old []string
	for _, l := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(l, "addkind ") && !strings.HasPrefix(l, "rekind ") && !strings.HasPrefix(l, "vecscale ") {
			old = append(old, l)
		}
	}
	m, err := Parse(strings.NewReader(strings.Join(old, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if m.AddKind != [kinds]float64{} || m.Rekind <= 1 || m.VecScale != 1 || m.AddFor(Corr) != m.Add {
		t.Fatalf("addkind %v rekind %v vecscale %v", m.AddKind, m.Rekind, m.VecScale)
	}
}

// TestParseErrors: what is not a model names its line.
func TestParseErrors(t *testing.T) {
	good := func() string {
		var b bytes.Buffer
		Lexical().Write(&b)
		return b.String()
	}()
	for name, in := range map[string]string{
		"not a model":   "hello\n",
		"other buckets": strings.Replace(good, "buckets 4096", "buckets 8", 1),
		"other cues":    strings.Replace(good, "cues bias,", "cues nobias,", 1),
		"bad weight":    good + "pref 1 x\n",
		"out of range":  good + "pref 99999999 1\n",
		"unknown row":   good + "nothing 1 1\n",
		"no vecdim":     "engram-reading 1\nname x\n",
		"short addkind": strings.Replace(good, "addkind 0,", "addkind ", 1),
		"bad addkind":   strings.Replace(good, "addkind 0,", "addkind x,", 1),
	} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// TestCommittedModelsLoad: both committed models parse and read.
func TestCommittedModelsLoad(t *testing.T) {
	for _, m := range []*Model{Lexical(), MiniLM()} {
		var vec []float32
		if m.VecDim > 0 {
			vec = make([]float32, m.VecDim)
		}
		r := m.Read("in this repo we use pnpm, never npm", vec)
		var sum float64
		for _, p := range r.P {
			sum += p
		}
		if sum < 0.999 || sum > 1.001 {
			t.Errorf("%s: probabilities sum to %v", m.Name, sum)
		}
	}
}

// TestLexicalReads: the committed lexical model tells statements from
// what is not one, on sentences of the kinds the corpus teaches (these
// are not in it).
func TestLexicalReads(t *testing.T) {
	m := Lexical()
	for _, c := range []struct {
		s    string
		kind int
	}{
		{"from now on always write error messages in lowercase", Pref},
		{"never put emoji in commit messages", Pref},
		{"we're on postgres 15 in this service", Fact},
		{"we moved off mocha, it's vitest now", Corr},
		{"can you run the tests?", None},
		{"thanks, looks good", None},
		{"the build is red right now", None},
	} {
		r := m.Read(c.s, nil)
		got := None
		if r.Statement() >= 0.5 {
			got = r.Kind()
		}
		if got != c.kind {
			t.Errorf("%q: read as %s (P %v), want %s", c.s, KindNames[got], r.P, KindNames[c.kind])
		}
	}
}

// TestSpan: the taggers pick the words a statement is about.
func TestSpan(t *testing.T) {
	m := Lexical()
	if got := m.Span("never put emoji in commit messages", Pref, SpanSubject); !strings.Contains(got, "emoji") {
		t.Errorf("subject %q, want it to hold emoji", got)
	}
	if got := m.Span("we're on postgres 15 in this service", Fact, SpanValue); !strings.Contains(got, "15") {
		t.Errorf("value %q, want it to hold 15", got)
	}
}

// TestTokens: case and quotes are kept as flags, words lower-cased.
func TestTokens(t *testing.T) {
	ts := Tokens("We use `pnpm test` with Node.js and PostgreSQL")
	var got []string
	for _, x := range ts {
		s := x.W
		if x.Upper {
			s += "^"
		}
		if x.Code {
			s += "`"
		}
		got = append(got, s)
	}
	want := "we use pnpm` test` with node.js^ and postgresql^"
	if strings.Join(got, " ") != want {
		t.Errorf("Tokens = %q, want %q", strings.Join(got, " "), want)
	}
}
