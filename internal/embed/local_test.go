package embed

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/local-golden.txt")

// features lists what tokenize makes of text: "w:word" for each (stemmed)
// word, "c:identifier" for each multi-part identifier and "b" for each
// bigram.
func features(text string) []string {
	sc := scratchPool.New().(*scratch) // not from the pool: trace must not leak
	var got []string
	sc.trace = func(kind byte, b []byte) {
		if kind == kindBigram {
			got = append(got, "b")
			return
		}
		got = append(got, string(kind)+":"+string(b))
	}
	tokenize(sc, text)
	return got
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"empty", "", nil},
		{"stop words only", "I would have been there, and it is not.", nil},
		{"punctuation only", "... -- // !!", nil},
		{"hyphenated identifier", "I prefer table-driven tests",
			[]string{"w:prefer", "c:table-driven", "w:tabl", "b", "w:driven", "b", "w:test", "b"}},
		{"snake case", "table_driven", []string{"c:table_driven", "w:tabl", "w:driven", "b"}},
		{"module path and version", "sashabaranov/go-openai v1.43.0",
			[]string{"c:sashabaranov/go-openai", "w:sashabaranov", "w:go", "b", "w:openai", "b",
				"c:v1.43.0", "w:v1", "b", "w:43", "b", "w:0", "b"}},
		{"camel case", "CreateEmbeddings", []string{"c:createembeddings", "w:creat", "w:embed", "b"}},
		{"acronym stays whole", "HTTPServer", []string{"w:httpserver"}},
		{"trailing joiner is punctuation", "go- test_ file.", []string{"w:go", "w:test", "b", "w:fil", "b"}},
		{"contractions", "Don't use mocks, it's slow", []string{"w:us", "w:mock", "b", "w:slow", "b"}},
		{"sentence end breaks bigrams", "deploy billing. Fly machines",
			[]string{"w:deploy", "w:bill", "b", "w:fly", "w:machin", "b"}},
		{"numbers are not stemmed", "1990s 2025 100",
			[]string{"w:1990", "w:2025", "b", "w:100", "b"}},
		{"unicode letters lower-cased", "Ünïcödé STRASSE Øresund",
			[]string{"w:ünïcödé", "w:strass", "b", "w:øresund", "b"}},
		{"cyrillic", "Тесты проходят", []string{"w:тесты", "w:проходят", "b"}},
		{"CJK characters are words", "日本語のテスト",
			[]string{"w:日", "w:本", "b", "w:語", "b", "w:の", "b", "w:テ", "b", "w:ス", "b", "w:ト", "b"}},
		{"CJK next to latin", "Go言語", []string{"w:go", "w:言", "b", "w:語", "b"}},
		{"repeated word makes no self bigram", "test tests testing", []string{"w:test", "w:test", "w:test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := features(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("features(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"test", "test"}, {"tests", "test"}, {"testing", "test"}, {"tested", "test"},
		{"use", "us"}, {"uses", "us"}, {"using", "us"}, {"used", "us"},
		{"embed", "embed"}, {"embeds", "embed"}, {"embedded", "embed"}, {"embedding", "embed"}, {"embeddings", "embed"},
		{"run", "run"}, {"runs", "run"}, {"running", "run"},
		{"add", "add"}, {"added", "add"}, {"adding", "add"},
		{"query", "query"}, {"queries", "query"},
		{"process", "process"}, {"processes", "process"}, {"processing", "process"},
		{"need", "need"}, {"needed", "need"}, {"speed", "speed"},
		{"cache", "cach"}, {"caches", "cach"}, {"cached", "cach"}, {"caching", "cach"},
		{"status", "status"}, {"analysis", "analysis"},
		{"string", "string"}, {"strings", "string"}, {"thing", "thing"},
		{"falling", "fall"}, {"missed", "miss"}, {"stopped", "stop"},
		{"go", "go"}, {"going", "go"}, {"red", "red"}, {"bed", "bed"},
	}
	for _, tt := range tests {
		if got := string(stem([]byte(tt.in))); got != tt.want {
			t.Errorf("stem(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

func embedOne(t testing.TB, e Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return vs[0]
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestLocalNameAndDim(t *testing.T) {
	l := NewLocal()
	if got, want := l.Name(), fmt.Sprintf("local-v%d-%d", localVersion, LocalDim); got != want {
		t.Errorf("Name()=%q, want %q", got, want)
	}
	if l.Dim() != LocalDim {
		t.Errorf("Dim()=%d, want %d", l.Dim(), LocalDim)
	}
	if v := embedOne(t, l, "hello world"); len(v) != LocalDim {
		t.Errorf("len(vector)=%d, want %d", len(v), LocalDim)
	}
}

func TestLocalDeterministicAndNormalised(t *testing.T) {
	texts := []string{"I prefer table-driven tests", "deploy the billing service to Fly", "x", "日本語のテスト",
		strings.Repeat("the same sentence repeated many times. ", 200)}
	a, b := NewLocal(), NewLocal()
	for _, text := range texts {
		v1, v2 := embedOne(t, a, text), embedOne(t, b, text)
		if !slices.Equal(v1, v2) {
			t.Errorf("%.20q: two embedders gave different vectors", text)
		}
		if v3 := a.EmbedText(text); !slices.Equal(v1, v3) {
			t.Errorf("%.20q: EmbedText differs from Embed", text)
		}
		if n := norm(v1); math.Abs(n-1) > 1e-5 {
			t.Errorf("%.20q: norm %v, want 1", text, n)
		}
		if c := Cosine(v1, v2); math.Abs(float64(c)-1) > 1e-5 {
			t.Errorf("%.20q: self cosine %v, want 1", text, c)
		}
	}
}

func TestLocalEmptyTextIsZero(t *testing.T) {
	l := NewLocal()
	other := l.EmbedText("anything at all")
	for _, text := range []string{"", "   \n\t", "the and of", "?!…"} {
		v := l.EmbedText(text)
		if len(v) != LocalDim {
			t.Fatalf("%q: len %d, want %d", text, len(v), LocalDim)
		}
		if n := norm(v); n != 0 {
			t.Errorf("%q: norm %v, want the zero vector", text, n)
		}
		if c := Cosine(v, other); c != 0 {
			t.Errorf("%q: Cosine with a zero vector = %v, want 0", text, c)
		}
	}
}

func TestLocalBatch(t *testing.T) {
	l := NewLocal()
	texts := []string{"first text", "", "third text"}
	vs, err := l.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors, want %d", len(vs), len(texts))
	}
	for i, text := range texts {
		if !slices.Equal(vs[i], l.EmbedText(text)) {
			t.Errorf("vector %d (%q) differs from EmbedText", i, text)
		}
	}
	// Vectors share one backing array: appending to one must not clobber the next.
	_ = append(vs[0], 42)
	if !slices.Equal(vs[1], l.EmbedText("")) {
		t.Error("append to vector 0 changed vector 1")
	}
	if vs, err := l.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
		t.Errorf("Embed(nil)=%v, %v; want no vectors, no error", vs, err)
	}
}

func TestLocalCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewLocal().Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err=%v, want context.Canceled", err)
	}
}

// TestLocalRelatedness checks orderings a memory needs, on hand-made
// triples: the anchor must be closer to related than to unrelated.
func TestLocalRelatedness(t *testing.T) {
	tests := []struct {
		name, anchor, related, unrelated string
	}{
		{"paraphrase", "I prefer table-driven tests", "use table driven testing in Go", "deploy the billing service to Fly"},
		{"morphology", "tests", "testing", "deploy"},
		{"past tense", "the migration failed", "migrations fail on startup", "the sidebar collapses"},
		{"typo (insertion)", "embedding dimension", "embeding dimesion", "billing invoice"},
		{"typo (doubled letter)", "database locked", "databasse lockked", "react form"},
		{"identifier parts", "go-openai client", "the openai client for Go", "postgres index"},
		{"camel case", "CreateEmbeddings call", "create embeddings", "rename the branch"},
		{"path", "internal/embed/local.go", "the local embedder in internal/embed", "docker build cache"},
		{"shared compound word", "sqlite busy_timeout", "set busy_timeout on sqlite", "sqlite schema migration"},
		{"cyrillic morphology", "тестирование сервиса", "тестировать сервис", "развернуть базу"},
		{"japanese", "日本語のテスト", "テストを書く", "請求書の合計"},
	}
	l := NewLocal()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := l.EmbedText(tt.anchor)
			rel := Cosine(a, l.EmbedText(tt.related))
			unrel := Cosine(a, l.EmbedText(tt.unrelated))
			if rel <= unrel {
				t.Errorf("cos(%q, %q)=%.3f not above cos(%q, %q)=%.3f",
					tt.anchor, tt.related, rel, tt.anchor, tt.unrelated, unrel)
			}
			if rel < 0.15 {
				t.Errorf("cos(%q, %q)=%.3f, want at least 0.15", tt.anchor, tt.related, rel)
			}
		})
	}
}

func TestLocalMorphologicalOverlap(t *testing.T) {
	l := NewLocal()
	forms := []string{"test", "tests", "testing", "tested"}
	for _, a := range forms {
		for _, b := range forms {
			if c := Cosine(l.EmbedText(a), l.EmbedText(b)); c < 0.99 {
				t.Errorf("cos(%q, %q)=%.3f, want ~1 (same stem)", a, b, c)
			}
		}
	}
	// Different words sharing a stem prefix overlap through n-grams only.
	pairs := []struct {
		a, b     string
		min, max float32
	}{
		{"tester", "testing", 0.2, 0.9},
		{"configuration", "configure", 0.2, 0.9},
		{"test", "billing", -0.2, 0.2},
	}
	for _, p := range pairs {
		if c := Cosine(l.EmbedText(p.a), l.EmbedText(p.b)); c < p.min || c > p.max {
			t.Errorf("cos(%q, %q)=%.3f, want in [%.1f, %.1f]", p.a, p.b, c, p.min, p.max)
		}
	}
}

// TestLocalRecallSet is the end-to-end check on testdata/recall.json with
// the production hashing: every query finds a relevant note in its top 3
// on most of the set, and the mean reciprocal rank stays where it was.
func TestLocalRecallSet(t *testing.T) {
	st := newStudy(loadRecallSet(t))
	s := st.scoreLocal(NewLocal())
	t.Logf("MRR %.3f top1 %.3f top3 %.3f pairOrder %.4f", s.mrr, s.top1, s.top3, s.pairOrder)
	if s.mrr < 0.85 || s.top3 < 0.9 || s.pairOrder < 0.95 {
		t.Errorf("MRR %.3f, top3 %.3f, pair order %.4f; want ≥ 0.85, ≥ 0.9, ≥ 0.95", s.mrr, s.top3, s.pairOrder)
	}
}

func TestLocalConcurrent(t *testing.T) {
	l := NewLocal()
	texts := []string{"I prefer table-driven tests", "deploy the billing service to Fly", episodeText}
	want := make([][]float32, len(texts))
	for i, text := range texts {
		want[i] = l.EmbedText(text)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % len(texts)
				if got := l.EmbedText(texts[k]); !slices.Equal(got, want[k]) {
					t.Errorf("goroutine %d: text %d differs under concurrency", g, k)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLocalHugeTextDoesNotBloatPool(t *testing.T) {
	var b strings.Builder
	for i := range 9000 {
		fmt.Fprintf(&b, "w%dx ", i) // 9,000 distinct words and as many bigrams: > maxPooledSlots/2 entries
	}
	huge := b.String()
	if n := norm(NewLocal().EmbedText(huge)); math.Abs(n-1) > 1e-4 {
		t.Fatalf("norm %v", n)
	}
	sc := scratchPool.New().(*scratch)
	sc.reset()
	tokenize(sc, huge)
	sc.finish()
	if len(sc.slots) <= maxPooledSlots {
		t.Fatalf("table has %d slots, want the test text to grow it past %d", len(sc.slots), maxPooledSlots)
	}
	sc.release()
	if len(sc.slots) != initialSlots || len(sc.used) != 0 {
		t.Errorf("after release: %d slots, %d used; want %d, 0", len(sc.slots), len(sc.used), initialSlots)
	}
	for i, e := range sc.slots {
		if e != (entry{}) {
			t.Fatalf("slot %d not cleared: %+v", i, e)
		}
	}
}

func TestLocalAllocations(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts differ under coverage and the race detector")
	}
	l := NewLocal()
	l.EmbedText(promptText) // fill the pool
	if n := testing.AllocsPerRun(100, func() { l.EmbedText(promptText) }); n > 1 {
		t.Errorf("EmbedText allocates %v times per call, want 1 (the vector)", n)
	}
	texts := []string{promptText, episodeText}
	if n := testing.AllocsPerRun(100, func() { l.Embed(context.Background(), texts) }); n > 2 {
		t.Errorf("Embed allocates %v times per call, want 2", n)
	}
}

// TestLocalGolden pins the output of Local: any change to tokenisation,
// stemming, weights or hashing changes stored vectors' meaning, so it must
// come with a new localVersion (hence a new Name). After such a deliberate
// change: bump localVersion, then go test -run TestLocalGolden -update.
func TestLocalGolden(t *testing.T) {
	texts := []string{
		"I prefer table-driven tests",
		"Deployed sashabaranov/go-openai v1.43.0; CreateEmbeddings retries on 429.",
		"日本語のテスト and Ünïcödé",
	}
	l := NewLocal()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: index value for every non-zero component\n", l.Name())
	for _, text := range texts {
		fmt.Fprintf(&b, "text %s\n", strconv.Quote(text))
		for i, x := range l.EmbedText(text) {
			if x != 0 {
				fmt.Fprintf(&b, "%d %.6f\n", i, x)
			}
		}
	}
	const path = "testdata/local-golden.txt"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	// Compare with a tolerance: fused multiply-add on some architectures
	// may move the last digits.
	if diff := compareGolden(string(want), b.String()); diff != "" {
		t.Errorf("Local output changed (%s).\nIf deliberate: bump localVersion in local.go, then go test -run TestLocalGolden -update", diff)
	}
}

func compareGolden(want, got string) string {
	ws, gs := bufio.NewScanner(strings.NewReader(want)), bufio.NewScanner(strings.NewReader(got))
	for line := 1; ; line++ {
		wok, gok := ws.Scan(), gs.Scan()
		if !wok || !gok {
			if wok != gok {
				return fmt.Sprintf("line %d: one output is longer", line)
			}
			return ""
		}
		w, g := ws.Text(), gs.Text()
		if w == g {
			continue
		}
		wf, gf := strings.Fields(w), strings.Fields(g)
		if len(wf) == 2 && len(gf) == 2 && wf[0] == gf[0] {
			a, err1 := strconv.ParseFloat(wf[1], 64)
			b, err2 := strconv.ParseFloat(gf[1], 64)
			if err1 == nil && err2 == nil && math.Abs(a-b) <= 2e-6 {
				continue
			}
		}
		return fmt.Sprintf("line %d: got %q, want %q", line, g, w)
	}
}

// promptText is a typical prompt of 50 words.
const promptText = `Can you refactor the episode store so that embeddings are written in the same
transaction as the episode summary? I really prefer table-driven tests for this, and please keep the
go-openai client out of the hook binaries. Also check why TestIngestRetries is flaky on CI
when the worker runs twice.`

// episodeText is about 2 KB of episode: summary plus context.
var episodeText = strings.Repeat(`User asked to make the SQLite writes safe under concurrent
hooks. We switched the DSN to busy_timeout(5000) and WAL, moved every read-then-write into
BEGIN IMMEDIATE via _txlock=immediate, and added a test that runs four processes doing 200
transactions each; before the change 484 failed with SQLITE_BUSY, after it none did.
Decision: the store package owns every SQL statement; nothing else imports database/sql.
Files: internal/store/store.go, internal/store/migrations/0002_episodes.sql. `, 5)

func BenchmarkLocalEmbedPrompt(b *testing.B) {
	l := NewLocal()
	b.ReportAllocs()
	b.SetBytes(int64(len(promptText)))
	reportCPU(b, func() { l.EmbedText(promptText) })
}

func BenchmarkLocalEmbedEpisode2KB(b *testing.B) {
	l := NewLocal()
	text := episodeText[:2048]
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	reportCPU(b, func() { l.EmbedText(text) })
}

func BenchmarkCosine(b *testing.B) {
	l := NewLocal()
	x, y := l.EmbedText(promptText), l.EmbedText(episodeText)
	b.ReportAllocs()
	reportCPU(b, func() { Cosine(x, y) })
}
