// Package recall finds the memories and beliefs that matter for a prompt.
// The worker precomputes recollection files (per project, one for global
// scope, and per active session) in a compact binary format; the prompt
// hook loads them in microseconds, adds one selective FTS5 query over the
// store, scores everything with one blend, and formats the bites. The CLI's
// recall and the MCP server use the same ranking.
package recall

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Item kinds.
const (
	KindEpisode = 'E'
	KindBelief  = 'B'
)

// Item is one candidate memory: an episode or a belief.
type Item struct {
	Kind byte
	ID   string
	Text string // an episode's summary or a belief's statement
	// Detail is an episode's full context when it is short enough to be
	// the bite itself (a conversational exchange); empty otherwise.
	Detail      string
	Project     string
	ProjectPath string
	At          time.Time // when it happened (episodes) or was last reinforced (beliefs)
	Importance  float32
	Confidence  float32 // beliefs
	Evidence    int32   // beliefs
	AccessCount int32
	LastAccess  time.Time
	Stability   float32
	// Vec is the local embedder's vector (nil when unknown). It is stored
	// quantised to int8 with one scale per vector: a quarter of the bytes
	// to read on every prompt, at a cosine error far below what ranking
	// can notice.
	Vec   []float32
	q8    []int8
	scale float32
}

// File is one recollection file.
type File struct {
	Embedder    string // name of the embedder the vectors come from
	CreatedAt   time.Time
	Scope       string // "project", "global" or "session"
	ProjectPath string
	SessionID   string
	Items       []Item
	// StopTerms are the terms so common in the store that an FTS query
	// should not use them: bm25 scores every match before LIMIT applies.
	StopTerms []string
}

const magic = "ENGRAMRC"

// version of the binary format; a reader treats any other as empty.
const version = 2

// MaxFileSize bounds what a reader accepts.
const MaxFileSize = 64 << 20

// ErrFormat marks a file that is not a valid recollection file.
var ErrFormat = errors.New("recall: bad recollection file")

// Encode serialises f.
func (f *File) Encode() []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	w := writer{&b}
	w.uvarint(version)
	w.str(f.Embedder)
	w.varint(ms(f.CreatedAt))
	w.str(f.Scope)
	w.str(f.ProjectPath)
	w.str(f.SessionID)
	w.uvarint(uint64(len(f.StopTerms)))
	for _, t := range f.StopTerms {
		w.str(t)
	}
	w.uvarint(uint64(len(f.Items)))
	for _, it := range f.Items {
		b.WriteByte(it.Kind)
		w.str(it.ID)
		w.str(it.Text)
		w.str(it.Detail)
		w.str(it.Project)
		w.str(it.ProjectPath)
		w.varint(ms(it.At))
		w.f32(it.Importance)
		w.f32(it.Confidence)
		w.varint(int64(it.Evidence))
		w.varint(int64(it.AccessCount))
		w.varint(ms(it.LastAccess))
		w.f32(it.Stability)
		q, scale := quantize(it.Vec)
		w.uvarint(uint64(len(q)))
		w.f32(scale)
		for _, v := range q {
			w.b.WriteByte(byte(v))
		}
	}
	return b.Bytes()
}

// Decode parses a recollection file.
func Decode(data []byte) (*File, error) {
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: no magic", ErrFormat)
	}
	r := reader{b: data[len(magic):]}
	if v := r.uvarint(); v != version {
		return nil, fmt.Errorf("%w: version %d", ErrFormat, v)
	}
	f := &File{}
	f.Embedder = r.str()
	f.CreatedAt = fromMS(r.varint())
	f.Scope = r.str()
	f.ProjectPath = r.str()
	f.SessionID = r.str()
	n := r.count(1)
	f.StopTerms = make([]string, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		f.StopTerms = append(f.StopTerms, r.str())
	}
	n = r.count(16)
	f.Items = make([]Item, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		var it Item
		it.Kind = r.byte()
		it.ID = r.str()
		it.Text = r.str()
		it.Detail = r.str()
		it.Project = r.str()
		it.ProjectPath = r.str()
		it.At = fromMS(r.varint())
		it.Importance = r.f32()
		it.Confidence = r.f32()
		it.Evidence = int32(r.varint())
		it.AccessCount = int32(r.varint())
		it.LastAccess = fromMS(r.varint())
		it.Stability = r.f32()
		d := r.count(1)
		it.scale = r.f32()
		if d > 0 && r.err == nil {
			if d > len(r.b) {
				r.fail("vector")
				break
			}
			it.q8 = make([]int8, d)
			for j := range it.q8 {
				it.q8[j] = int8(r.b[j])
			}
			r.b = r.b[d:]
		}
		f.Items = append(f.Items, it)
	}
	if r.err != nil {
		return nil, r.err
	}
	return f, nil
}

// quantize maps a vector to int8 with a scale: v[i] ≈ q[i] * scale.
func quantize(v []float32) ([]int8, float32) {
	var maxAbs float32
	for _, x := range v {
		if x < 0 {
			x = -x
		}
		if x > maxAbs {
			maxAbs = x
		}
	}
	if maxAbs == 0 {
		return nil, 0
	}
	scale := maxAbs / 127
	q := make([]int8, len(v))
	for i, x := range v {
		q[i] = int8(math.Round(float64(x / scale)))
	}
	return q, scale
}

// HasVec reports whether the item carries a vector.
func (it *Item) HasVec() bool { return len(it.Vec) > 0 || len(it.q8) > 0 }

// Cos is the cosine between the item's vector and q (an L2-normalised
// vector of the same embedder); 0 when either is missing or sizes differ.
func (it *Item) Cos(q []float32) float32 {
	if len(it.Vec) > 0 {
		return dot(it.Vec, q)
	}
	if len(it.q8) == 0 || len(it.q8) != len(q) {
		return 0
	}
	var s, norm float32
	for i, x := range it.q8 {
		f := float32(x)
		s += f * q[i]
		norm += f * f
	}
	if norm == 0 {
		return 0
	}
	// Renormalise: quantisation shifts the length slightly.
	return s / float32(math.Sqrt(float64(norm)))
}

func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Load reads a recollection file. A missing, unreadable or corrupt file is
// an error the caller treats as empty.
func Load(path string) (*File, error) {
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > MaxFileSize {
		return nil, fmt.Errorf("%w: %s is not a regular file under %d bytes", ErrFormat, path, MaxFileSize)
	}
	data := make([]byte, st.Size())
	if _, err := fd.ReadAt(data, 0); err != nil {
		return nil, err
	}
	return Decode(data)
}

// Save writes f atomically (temp file in the same directory, fsync, rename)
// with mode 0600 in a 0700 directory.
func Save(path string, f *File) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".rec-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(f.Encode()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Dir is where recollection files live under the data directory.
func Dir(home string) string { return filepath.Join(home, "recall") }

// ProjectPath is the recollection file of a project (its git root).
func ProjectPath(home, projectPath string) string {
	sum := sha256.Sum256([]byte(projectPath))
	return filepath.Join(Dir(home), "project-"+hex.EncodeToString(sum[:8])+".rec")
}

// GlobalPath is the recollection file of global scope.
func GlobalPath(home string) string { return filepath.Join(Dir(home), "global.rec") }

// SessionPath is the neighbours file of a session (its id is validated by
// the caller: letters, digits, '-' and '_').
func SessionPath(home, sessionID string) string {
	return filepath.Join(Dir(home), "session-"+sessionID+".rec")
}

type writer struct{ b *bytes.Buffer }

func (w writer) uvarint(v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}

func (w writer) varint(v int64) {
	var tmp [binary.MaxVarintLen64]byte
	w.b.Write(tmp[:binary.PutVarint(tmp[:], v)])
}

func (w writer) str(s string) {
	w.uvarint(uint64(len(s)))
	w.b.WriteString(s)
}

func (w writer) f32(f float32) {
	var tmp [4]byte
	binary.LittleEndian.PutUint32(tmp[:], math.Float32bits(f))
	w.b.Write(tmp[:])
}

type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: truncated at %s", ErrFormat, what)
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("uvarint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a length that must fit in what is left, given a minimum size per element.
func (r *reader) count(minSize int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/minSize) {
		r.fail("count")
		return 0
	}
	return int(v)
}

func (r *reader) str() string {
	n := r.count(1)
	if r.err != nil {
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail("byte")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) f32() float32 {
	if len(r.b) < 4 {
		r.fail("float")
		return 0
	}
	f := math.Float32frombits(binary.LittleEndian.Uint32(r.b))
	r.b = r.b[4:]
	return f
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}
