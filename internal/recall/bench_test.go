package recall_test

// Benchmarks of the prompt hook's recall, in process, on stores of 1k and
// 10k episodes with 5k beliefs. The stores come from bench/storegen (the
// generator of bench/prompt-hook.sh, built once per run), imported with
// store.Import and turned into recollection files by recollect.Build, in a
// temporary directory; the prompts are bench/storegen/prompts.json. The
// whole-process cost against a hello-world floor, and the targets, are in
// bench/prompt-hook.sh: timings are reported here, never asserted.
//
//	go test ./internal/recall -run '^$' -bench . -benchtime 20x -count 3
//
//	BenchmarkRecall       Recaller.Recall + Format with the store open read-only, as in the hook
//	BenchmarkRecallPhases the same work cut into the hook's phases (see phases below)
//	BenchmarkHookRun      prompthook.Run: the whole hook but process start-up
//	BenchmarkLoad         LoadView, Load and DecodeView of a file of 5k beliefs + 400 episodes
//
// ENGRAM_BENCH_SIZES (default "1k,10k") picks the generated stores;
// ENGRAM_BENCH_FTS_WINDOW sets Recaller.FTSWindow in BenchmarkRecallPhases;
// ENGRAM_BENCH_HOME=DIR benchmarks the store already imported in DIR (for
// example the 100k store of `KEEP=1 bash bench/prompt-hook.sh`, with the
// projects of storegen) as size "home", alone unless ENGRAM_BENCH_SIZES is
// set too. On a
// shared machine ns/op includes waiting for a CPU; cpu-ms/op is the
// process's CPU time (GC included) over the timed part only.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-memory/engram/bench/cputime"
	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/embed"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/portable"
	"github.com/engram-memory/engram/internal/prompthook"
	"github.com/engram-memory/engram/internal/recall"
	"github.com/engram-memory/engram/internal/recollect"
	"github.com/engram-memory/engram/internal/store"
)

// benchProject is the project the prompts come from: storegen's first
// (and largest) project, /srv/engram-bench/<name>.
const benchProject = "/srv/engram-bench/billing-api"

var (
	benchMu   sync.Mutex
	benchWork string // temporary directory of the generated stores
	storegen  string // the built bench/storegen
	stores    = map[string]*benchStore{}
)

var cosSink float32 // keeps the cosines of the embed phase alive

type benchStore struct {
	home string
	db   *store.DB // read-only, as the hook opens it
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range stores {
		s.db.Close()
	}
	if benchWork != "" {
		os.RemoveAll(benchWork)
	}
	os.Exit(code)
}

type benchPrompt struct {
	Kind   string `json:"kind"`
	Prompt string `json:"prompt"`
}

// prompts returns bench/storegen/prompts.json's prompts of the given kinds.
func prompts(b *testing.B, kinds ...string) []benchPrompt {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "bench", "storegen", "prompts.json"))
	if err != nil {
		b.Fatal(err)
	}
	var all []benchPrompt
	if err := json.Unmarshal(data, &all); err != nil {
		b.Fatal(err)
	}
	var out []benchPrompt
	for _, k := range kinds {
		for _, p := range all {
			if p.Kind == k {
				out = append(out, p)
			}
		}
	}
	if len(out) != len(kinds) {
		b.Fatalf("prompts.json lacks some of %v", kinds)
	}
	return out
}

// sizes are the stores to benchmark, by name ("1k", "10k", "home"):
// ENGRAM_BENCH_SIZES, else 1k and 10k, or only "home" when
// ENGRAM_BENCH_HOME is set.
func sizes() []string {
	var s []string
	if v := os.Getenv("ENGRAM_BENCH_SIZES"); v != "" {
		s = strings.Split(v, ",")
	} else if os.Getenv("ENGRAM_BENCH_HOME") == "" {
		s = []string{"1k", "10k"}
	}
	if os.Getenv("ENGRAM_BENCH_HOME") != "" {
		s = append(s, "home")
	}
	return s
}

func episodesOf(b *testing.B, size string) int {
	n, err := strconv.Atoi(strings.TrimSuffix(size, "k"))
	if err != nil || !strings.HasSuffix(size, "k") || n <= 0 {
		b.Fatalf("store size %q: want <n>k", size)
	}
	return n * 1000
}

// generate runs bench/storegen and parses its output.
func generate(b *testing.B, args ...string) portable.Data {
	b.Helper()
	benchMu.Lock()
	if storegen == "" {
		dir, err := os.MkdirTemp("", "engram-recall-bench")
		if err != nil {
			benchMu.Unlock()
			b.Fatal(err)
		}
		benchWork = dir
		bin := filepath.Join(dir, "storegen")
		if out, err := exec.Command("go", "build", "-o", bin, "../../bench/storegen").CombinedOutput(); err != nil {
			benchMu.Unlock()
			b.Fatalf("build storegen: %v\n%s", err, out)
		}
		storegen = bin
	}
	benchMu.Unlock()
	cmd := exec.Command(storegen, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("storegen %v: %v\n%s", args, err, stderr.String())
	}
	d, err := portable.Read(bytes.NewReader(out))
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// getStore returns the store of a size, made on first use and kept for the
// rest of the run (b.N rounds and -count repeats reuse it).
func getStore(b *testing.B, size string) *benchStore {
	b.Helper()
	benchMu.Lock()
	s := stores[size]
	benchMu.Unlock()
	if s != nil {
		return s
	}
	ctx := context.Background()
	home := os.Getenv("ENGRAM_BENCH_HOME")
	if size != "home" {
		n := episodesOf(b, size)
		start := time.Now()
		d := generate(b, "-episodes", strconv.Itoa(n), "-beliefs", "5000", "-projects", "4", "-seed", "1")
		gen := time.Since(start)
		home = filepath.Join(benchWork, "home-"+size)
		db, err := store.Open(ctx, filepath.Join(home, "memory.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := db.Import(ctx, d.Episodes, d.Beliefs); err != nil {
			b.Fatal(err)
		}
		imp := time.Since(start)
		start = time.Now()
		st, err := recollect.Build(ctx, db, home, recollect.BuildOptions{}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("store %s: generated in %v, imported in %v, recollection files (%+v) in %v", size, gen.Round(time.Millisecond),
			imp.Round(time.Millisecond), st, time.Since(start).Round(time.Millisecond))
		db.Close()
	} else if !recall.IndexReady(home) {
		// A store made by an earlier version: migrated, and its index built.
		db, err := store.Open(ctx, filepath.Join(home, "memory.db"), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		st, err := recollect.Build(ctx, db, home, recollect.BuildOptions{}, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("store %s: recollection files and index (%+v) in %v", home, st, time.Since(start).Round(time.Millisecond))
		db.Close()
	}
	db, err := store.Open(ctx, filepath.Join(home, "memory.db"), store.Options{ReadOnly: true, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	s = &benchStore{home: home, db: db}
	benchMu.Lock()
	stores[size] = s
	benchMu.Unlock()
	return s
}

// ftsHits counts the episodes that match at least one of the terms (all
// matches, not only the newest window).
func ftsHits(b *testing.B, s *benchStore, terms []string) int {
	m, err := s.db.SearchTerms(context.Background(), terms, nil, 0, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	return len(m)
}

// cpuMeter reports the CPU time of the timed part per op.
type cpuMeter struct{ total, start time.Duration }

func (c *cpuMeter) on()  { c.start = cputime.Now() }
func (c *cpuMeter) off() { c.total += cputime.Now() - c.start }
func (c *cpuMeter) report(b *testing.B) {
	if c.total > 0 {
		b.ReportMetric(float64(c.total.Nanoseconds())/1e6/float64(b.N), "cpu-ms/op")
	}
}

// Recaller.Recall and Format, the store open read-only, one query per op,
// nothing excluded: what the hook computes once it has started.
func BenchmarkRecall(b *testing.B) {
	for _, size := range sizes() {
		for _, p := range prompts(b, "rare", "mid", "common", "unrelated") {
			b.Run(size+"/"+p.Kind, func(b *testing.B) {
				s := getStore(b, size)
				r := recall.New(s.home, recall.OpenIndex(s.home))
				q := recall.Query{Text: p.Prompt, ProjectPath: benchProject, Now: time.Now()}
				res := r.Recall(context.Background(), q) // warm the page cache
				b.ReportMetric(float64(ftsHits(b, s, res.Searched)), "fts-hits")
				var cpu cpuMeter
				b.ReportAllocs()
				for b.Loop() {
					cpu.on()
					ix := recall.OpenIndex(s.home) // as the hook: read anew
					r.DB = ix
					res := r.Recall(context.Background(), q)
					recall.Format(res, recall.DefaultSettings.Limits, q.Now)
					ix.Close()
					cpu.off()
				}
				cpu.report(b)
			})
		}
	}
}

// BenchmarkRecallPhases cuts the hook's work into phases, each timed
// alone with the inputs of the real query:
//
//	load      LoadView of the global and the project recollection files
//	embed     the prompt's terms and local vector
//	search    the search index opened anew and searched (the newest FTSWindow matches of each term searched)
//	fts       the same search by the store's FTS5 index on an open connection, for comparison
//	recall    the whole Recaller.Recall (the index opened anew)
//	format    Format of the ranked result
func BenchmarkRecallPhases(b *testing.B) {
	ctx := context.Background()
	for _, size := range sizes() {
		for _, p := range prompts(b, "rare", "mid", "common", "unrelated") {
			b.Run(size+"/"+p.Kind, func(b *testing.B) {
				s := getStore(b, size)
				r := recall.New(s.home, recall.OpenIndex(s.home))
				if w, err := strconv.Atoi(os.Getenv("ENGRAM_BENCH_FTS_WINDOW")); err == nil {
					r.FTSWindow = w
				}
				now := time.Now()
				q := recall.Query{Text: p.Prompt, ProjectPath: benchProject, Now: now}
				res := r.Recall(ctx, q)
				paths := []string{recall.GlobalPath(s.home), recall.ProjectPath(s.home, benchProject)}
				items := 0
				for _, path := range paths {
					v, err := recall.LoadView(path)
					if err != nil {
						b.Fatal(err)
					}
					items += v.Len()
				}
				b.Logf("%s/%s: terms %v (stop %v), searched %v: %d hits (window %d per term, limit %d), %d file items, %d candidates, %d+%d recalled",
					size, p.Kind, res.Terms, res.Stop, res.Searched, ftsHits(b, s, res.Searched), r.FTSWindow, r.FTSLimit, items,
					res.Candidates, len(res.Episodes), len(res.Beliefs))

				phase := func(name string, fn func()) {
					b.Run(name, func(b *testing.B) {
						var cpu cpuMeter
						b.ReportAllocs()
						for b.Loop() {
							cpu.on()
							fn()
							cpu.off()
						}
						cpu.report(b)
					})
				}
				phase("load", func() {
					for _, path := range paths {
						if _, err := recall.LoadView(path); err != nil {
							b.Fatal(err)
						}
					}
				})
				phase("embed", func() {
					recall.Terms(q.Text)
					cosSink += r.Embedder.EmbedText(q.Text)[0]
				})
				window := recall.TermWindow(r.FTSWindow, len(res.Searched))
				if len(res.Searched) > 0 {
					phase("search", func() {
						ix := recall.OpenIndex(s.home)
						if _, err := ix.Search(ctx, res.Searched, nil, window, r.FTSLimit, benchProject); err != nil {
							b.Fatal(err)
						}
						ix.Close()
					})
					phase("fts", func() {
						if _, err := s.db.SearchTerms(ctx, res.Searched, nil, r.FTSWindow, r.FTSLimit*2); err != nil {
							b.Fatal(err)
						}
					})
				}
				phase("recall", func() {
					ix := recall.OpenIndex(s.home)
					r.DB = ix
					r.Recall(ctx, q)
					ix.Close()
				})
				phase("format", func() { recall.Format(res, recall.DefaultSettings.Limits, now) })
			})
		}
	}
}

// countWriter counts what the hook prints.
type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// prompthook.Run in process: the whole hook (stdin decoding, store open,
// files, FTS, ranking, formatting, recording the injected ids) but the
// process's start-up. A fresh session per op, so nothing is excluded; the
// deadline is 5 s so that a slow op is timed, not cut. "printed" is the
// share of ops that printed an answer.
func BenchmarkHookRun(b *testing.B) {
	for _, size := range sizes() {
		for _, p := range prompts(b, "rare", "mid", "common", "unrelated", "trivial") {
			b.Run(size+"/"+p.Kind, func(b *testing.B) {
				s := getStore(b, size)
				b.Setenv("ENGRAM_HOME", s.home)
				b.Setenv("ENGRAM_PROMPT_HOOK_DEADLINE", "5s")
				cfg, err := config.Load()
				if err != nil {
					b.Fatal(err)
				}
				log := logx.Discard()
				var inputs [][]byte
				for i := range 64 {
					in, _ := json.Marshal(map[string]string{"session_id": fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i),
						"cwd": benchProject, "prompt": p.Prompt, "hook_event_name": "UserPromptSubmit"})
					inputs = append(inputs, in)
				}
				var cpu cpuMeter
				var out countWriter
				printed, i := 0, 0
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					if i%len(inputs) == 0 {
						// New sessions: nothing excluded.
						files, _ := filepath.Glob(filepath.Join(recall.Dir(s.home), "injected-bench-*.txt"))
						for _, f := range files {
							os.Remove(f)
						}
					}
					in := bytes.NewReader(inputs[i%len(inputs)])
					i++
					out.n = 0
					b.StartTimer()
					cpu.on()
					if err := prompthook.Run(context.Background(), cfg, in, &out, log); err != nil {
						b.Fatal(err)
					}
					cpu.off()
					if out.n > 0 {
						printed++
					}
				}
				cpu.report(b)
				b.ReportMetric(float64(printed)/float64(b.N), "printed")
				files, _ := filepath.Glob(filepath.Join(recall.Dir(s.home), "injected-bench-*.txt"))
				for _, f := range files {
					os.Remove(f)
				}
			})
		}
	}
}

// Load of a recollection file with 5k beliefs and 400 episodes (local
// vectors, int8 on disk): LoadView (what the hook does: one read, tables
// checked in place), Load (every item decoded), and DecodeView of the same
// bytes already in memory.
func BenchmarkLoad(b *testing.B) {
	d := generate(b, "-episodes", "400", "-beliefs", "5000", "-projects", "1", "-seed", "2")
	local := embed.NewLocal()
	f := &recall.File{Embedder: local.Name(), CreatedAt: time.Now(), Scope: "global"}
	for _, bl := range d.Beliefs {
		f.Items = append(f.Items, recall.Item{Kind: recall.KindBelief, ID: bl.ID, Text: bl.Statement, Project: bl.Project,
			ProjectPath: bl.ProjectPath, At: bl.LastReinforcedAt, Confidence: float32(bl.Confidence()),
			Evidence: int32(bl.EvidenceCount), AccessCount: int32(bl.AccessCount), LastAccess: bl.LastAccessedAt,
			Stability: float32(bl.Stability), Vec: bl.Embedding})
	}
	for _, e := range d.Episodes {
		it := recall.EpisodeItem(e)
		it.Vec = e.Embedding
		f.Items = append(f.Items, it)
	}
	path := filepath.Join(b.TempDir(), "global.rec")
	if err := recall.Save(path, f); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("file of %d items (%d beliefs, %d episodes): %d bytes", len(f.Items), len(d.Beliefs), len(d.Episodes), len(data))
	for _, c := range []struct {
		name string
		fn   func() (int, error)
	}{
		{"loadview", func() (int, error) { v, err := recall.LoadView(path); return lenOf(v), err }},
		{"load", func() (int, error) { g, err := recall.Load(path); return lenOfFile(g), err }},
		{"decodeview", func() (int, error) { v, err := recall.DecodeView(data); return lenOf(v), err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var cpu cpuMeter
			for b.Loop() {
				cpu.on()
				n, err := c.fn()
				cpu.off()
				if err != nil || n != len(f.Items) {
					b.Fatalf("%d items, %v", n, err)
				}
			}
			cpu.report(b)
		})
	}
}

func lenOf(v *recall.View) int {
	if v == nil {
		return 0
	}
	return v.Len()
}

func lenOfFile(f *recall.File) int {
	if f == nil {
		return 0
	}
	return len(f.Items)
}
