package recall

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// randomFile is a file of every kind of content: common terms, a
// vocabulary, deletions, items with and without local and dense vectors,
// dense vectors of another length.
func randomFile(r *rand.Rand, dense string) *File {
	words := []string{"deploy", "deploys", "billing", "fly", "chrony", "x86_64", "café", "user's", "term1", "term2", "term3"}
	text := func(n int) string {
		var s []string
		for range n {
			s = append(s, words[r.IntN(len(words))])
		}
		return strings.Join(s, " ")
	}
	f := &File{Embedder: "local-v1-16", Dense: dense, CreatedAt: time.UnixMilli(1234567), Scope: "search",
		Docs: r.IntN(100), StopDocs: r.IntN(10), Common: []TermDocs{{"deploy", 3}, {"fly", 2}}, Dels: []int64{3, 9}}
	if r.IntN(2) == 0 {
		f.Vocab = NewBloom(10)
		f.Vocab.Add(TermHash("deploy"))
	}
	for i := range r.IntN(40) {
		it := Item{Kind: KindEpisode, ID: fmt.Sprint("ep", i), Text: text(5), Detail: text(r.IntN(10)), Terms: text(r.IntN(20)),
			Seq: int64(i + 1), Stated: r.IntN(2) == 0, Importance: r.Float32(), At: time.UnixMilli(int64(r.IntN(1e9)))}
		if r.IntN(3) > 0 {
			it.Vec = randUnit(r, 16)
		}
		if r.IntN(3) > 0 {
			it.Dense = randUnit(r, 24)
		}
		if r.IntN(10) == 0 {
			it.Dense = randUnit(r, 8)
		}
		f.Items = append(f.Items, it)
	}
	return f
}

// A builder knows the size of its file exactly, after every item.
func TestBuilderSizeIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 60 {
		f := randomFile(r, []string{"", testDense}[round%2])
		b := NewBuilder(f)
		if got := len(b.Bytes()); got != b.Size() {
			t.Fatalf("round %d, empty: %d bytes, Size %d", round, got, b.Size())
		}
		for i, it := range f.Items {
			b.Add(it)
			if got := len(b.Bytes()); got != b.Size() {
				t.Fatalf("round %d, item %d: %d bytes, Size %d", round, i, got, b.Size())
			}
		}
		back, err := Decode(b.Bytes())
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(back.Items) != len(f.Items) || !slices.Equal(back.Dels, f.Dels) {
			t.Fatalf("round %d: %d items, dels %v", round, len(back.Items), back.Dels)
		}
	}
}

// sizedItem is an item whose file, alone under head, is exactly size bytes
// (its ID takes up the room).
func sizedItem(t *testing.T, head *File, size int) Item {
	t.Helper()
	item := func(idLen int) Item {
		return Item{Kind: KindEpisode, ID: strings.Repeat("x", idLen), Text: "chrony steps the clock", Seq: 7}
	}
	b := NewBuilder(head)
	b.Add(item(0))
	base := b.Size()
	// The ID's length, and the lengths that hold its and the records'
	// length, take up to 2×9 bytes more.
	for k := max(0, size-base-20); k <= size-base; k++ {
		b := NewBuilder(head)
		b.Add(item(k))
		if b.Size() == size {
			return item(k)
		}
	}
	t.Fatalf("no item makes a file of exactly %d bytes", size)
	return Item{}
}

// TryAdd takes an item that brings the file to exactly its limit, and
// refuses one byte more, leaving the file as it was.
func TestBuilderTryAddAtTheLimit(t *testing.T) {
	head := &File{Embedder: "local-v1-16", Scope: SegmentScope}
	for _, limit := range []int{1000, 70000, 1 << 21} {
		it := sizedItem(t, head, limit)
		b := NewBuilder(head)
		if !b.TryAdd(it, "", limit) || b.Size() != limit || b.Len() != 1 {
			t.Fatalf("limit %d: refused an item that fits exactly (size %d)", limit, b.Size())
		}
		b = NewBuilder(head)
		before := b.Size()
		it.ID += "x"
		if b.TryAdd(it, "", limit) {
			t.Fatalf("limit %d: took an item one byte too large", limit)
		}
		if b.Size() != before || b.Len() != 0 || len(b.Bytes()) != before {
			t.Fatalf("limit %d: a refused item changed the file: %d bytes, %d items", limit, b.Size(), b.Len())
		}
	}
}

// The writer and the readers share one limit: a file of MaxFileSize bytes
// is written and read; one byte more is neither.
func TestFileSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes files of 64 MiB")
	}
	dir := t.TempDir()
	head := &File{Embedder: "local-v1-16", Scope: SegmentScope}
	it := sizedItem(t, head, MaxFileSize)
	at := NewBuilder(head)
	if !at.TryAdd(it, "", MaxFileSize) {
		t.Fatal("refused an item that fits exactly")
	}
	it.ID += "x"
	past := NewBuilder(head)
	if past.TryAdd(it, "", MaxFileSize) {
		t.Fatal("took an item one byte too large")
	}
	past.Add(it)
	path := filepath.Join(dir, "at.rec")
	if err := SaveBuilder(path, at); err != nil {
		t.Fatalf("a file of exactly MaxFileSize bytes: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != MaxFileSize {
		t.Fatalf("written: %v %v", fi, err)
	}
	v, err := LoadView(path)
	if err != nil {
		t.Fatalf("LoadView at the limit: %v", err)
	}
	if it, err := v.Item(0); err != nil || it.Text != "chrony steps the clock" {
		t.Fatalf("item at the limit: %+v %v", it.Text, err)
	}
	v.Close()
	if _, err := Load(path); err != nil {
		t.Fatalf("Load at the limit: %v", err)
	}

	pastPath := filepath.Join(dir, "past.rec")
	if err := SaveBuilder(pastPath, past); !errors.Is(err, ErrTooLarge) || past.Size() != MaxFileSize+1 {
		t.Fatalf("a file of %d bytes: %v, want ErrTooLarge", past.Size(), err)
	}
	if _, err := os.Stat(pastPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused file exists: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".rec-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	// The readers refuse such a file, whoever wrote it.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0})
	f.Close()
	if _, err := LoadView(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("LoadView past the limit: %v", err)
	}
	if _, err := Load(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("Load past the limit: %v", err)
	}
}

// Save refuses a File past the limit as SaveBuilder does.
func TestSaveRefusesTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a file of 64 MiB")
	}
	path := filepath.Join(t.TempDir(), "big.rec")
	f := &File{Embedder: "local-v1-16", Scope: "global",
		Items: []Item{{Kind: KindEpisode, ID: strings.Repeat("x", MaxFileSize), Text: "too large"}}}
	if err := Save(path, f); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Save: %v, want ErrTooLarge", err)
	}
}

// Without a name in the header, a file keeps the dense vectors of the
// embedder most of its items have; the others' are left out.
func TestBuilderDenseMajority(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	b := NewBuilder(&File{Embedder: "local-v1-16", Scope: SegmentScope})
	by := []string{"minilm-b", "minilm-a", "minilm-a", "", "minilm-b", "minilm-a"}
	for i, name := range by {
		it := Item{Kind: KindEpisode, ID: fmt.Sprint("ep", i), Text: "text", Seq: int64(i + 1)}
		if name != "" {
			it.Dense = randUnit(r, 12)
		}
		b.Add(it) // of the header's embedder: none
	}
	if f, err := Decode(b.Bytes()); err != nil || f.Dense != "" {
		t.Fatalf("no embedder named: %q %v", f.Dense, err)
	}
	b = NewBuilder(&File{Embedder: "local-v1-16", Scope: SegmentScope})
	for i, name := range by {
		it := Item{Kind: KindEpisode, ID: fmt.Sprint("ep", i), Text: "text", Seq: int64(i + 1)}
		if name != "" {
			it.Dense = randUnit(r, 12)
		}
		b.TryAdd(it, name, 0)
		if got := len(b.Bytes()); got != b.Size() {
			t.Fatalf("item %d: %d bytes, Size %d", i, got, b.Size())
		}
	}
	f, err := Decode(b.Bytes())
	if err != nil || f.Dense != "minilm-a" {
		t.Fatalf("dense embedder %q (%v), want minilm-a", f.Dense, err)
	}
	for i, it := range f.Items {
		if want := by[i] == "minilm-a"; it.HasDense() != want {
			t.Errorf("item %d (%q): dense vector %v", i, by[i], it.HasDense())
		}
	}
}

// The manifest's writer and reader share one limit too.
func TestManifestSizeLimit(t *testing.T) {
	home := t.TempDir()
	sized := func(size int) *Manifest {
		m := &Manifest{LastChange: 9, NextName: 3, Segments: []SegmentInfo{{Name: SegmentName(1), Items: 5}}}
		base := len(m.Encode())
		for k := max(0, size-base-10); k <= size-base; k++ {
			m.StoreID = strings.Repeat("s", k)
			if len(m.Encode()) == size {
				return m
			}
		}
		t.Fatalf("no manifest of %d bytes", size)
		return nil
	}
	if err := WriteManifest(home, sized(MaxManifestSize)); err != nil {
		t.Fatalf("a manifest of exactly MaxManifestSize bytes: %v", err)
	}
	if m, err := ReadManifest(home); err != nil || len(m.StoreID) == 0 {
		t.Fatalf("read at the limit: %v", err)
	}
	if err := WriteManifest(home, sized(MaxManifestSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a manifest one byte past the limit: %v, want ErrTooLarge", err)
	}
	if err := os.WriteFile(ManifestPath(home), sized(MaxManifestSize+1).Encode(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(home); err == nil {
		t.Fatal("read a manifest past the limit")
	}
}
