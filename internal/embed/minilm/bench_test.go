package minilm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// textOf returns a text of exactly n tokens, [CLS] and [SEP] included.
func textOf(tb testing.TB, m *Model, n int) string {
	tb.Helper()
	words := strings.Fields("which restaurants in rome would you suggest for a dinner with friends " +
		"who avoid gluten and prefer quiet places near the station with outdoor tables in summer")
	var b strings.Builder
	for i := 0; len(m.Tokens(b.String(), 1000)) < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[i%len(words)])
	}
	if got := len(m.Tokens(b.String(), 1000)); got != n {
		tb.Fatalf("text of %d tokens, want %d", got, n)
	}
	return b.String()
}

// BenchmarkQuery is the prompt hook's case: one text, all of GOMAXPROCS
// (run with -cpu 1,2).
func BenchmarkQuery(b *testing.B) {
	m := testModel(b)
	for _, n := range []int{20, 64} {
		text := textOf(b, m, n)
		v := make([]float32, Dim)
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				m.EmbedInto(v, text, 0)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkWorker is the worker's case: batches of texts of about 60
// tokens; texts/s is the throughput on GOMAXPROCS cores (divide by -cpu
// for a figure per core).
func BenchmarkWorker(b *testing.B) {
	m := testModel(b)
	r := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 32)
	for i := range texts {
		texts[i] = textOf(b, m, 50+r.IntN(20))
	}
	n := 0
	var wall, cpu time.Duration
	for b.Loop() {
		start, cpu0 := time.Now(), processCPU()
		if _, err := m.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += processCPU() - cpu0
		n += len(texts)
	}
	b.ReportMetric(float64(n)/wall.Seconds(), "texts/s")
	b.ReportMetric(float64(n)/cpu.Seconds(), "texts/cpu-s")
}

// BenchmarkMatmul is the feed-forward products for T tokens on one
// goroutine; MMAC/s is millions of multiply-adds per second (cpu-ns/op
// counts this thread only). Throughput flat in T from a few tokens on is
// why texts run unpadded one by one rather than padded into batches.
func BenchmarkMatmul(b *testing.B) { benchMatmul(b, matmul) }

// BenchmarkMatmulGo is BenchmarkMatmul with the plain Go kernel, for
// comparison with the one in use.
func BenchmarkMatmulGo(b *testing.B) { benchMatmul(b, matmulGo) }

func benchMatmul(b *testing.B, mm func(dst, x []float32, T, K, N int, w, b []float32, p0, p1 int)) {
	for _, tc := range []struct{ T, K, N int }{{4, 384, 1536}, {20, 384, 1536}, {64, 384, 1536}, {256, 384, 1536}, {64, 1536, 384}} {
		x, w, bias, dst := randMat(tc.T*tc.K), randMat(tc.K*tc.N), randMat(tc.N), make([]float32, tc.T*tc.N)
		b.Run(fmt.Sprintf("%dx%dx%d", tc.T, tc.K, tc.N), func(b *testing.B) {
			reportCPU(b, func() { mm(dst, x, tc.T, tc.K, tc.N, w, bias, 0, tc.N/panel) })
			b.ReportMetric(float64(tc.T*tc.K*tc.N)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
		})
	}
}

func randMat(n int) []float32 {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// BenchmarkMatmulBF16 is BenchmarkMatmul with the bf16 kernel (the input
// converted to bfloat16 in each call, as linearBF16 does), where the CPU
// has it.
func BenchmarkMatmulBF16(b *testing.B) {
	if !useBF16 {
		b.Skipf("kernel %s: no bf16 kernel", kernel)
	}
	for _, tc := range []struct{ T, K, N int }{{4, 384, 1536}, {20, 384, 1536}, {64, 384, 1536}, {256, 384, 1536}, {64, 1536, 384}} {
		x, bias, dst := randMat(tc.T*tc.K), randMat(tc.N), make([]float32, tc.T*tc.N)
		w := packBF16(randMat(tc.K*tc.N), tc.K, tc.N)
		var xb []uint32
		b.Run(fmt.Sprintf("%dx%dx%d", tc.T, tc.K, tc.N), func(b *testing.B) {
			reportCPU(b, func() { xb = linearBF16(dst, x, xb, tc.T, tc.K, tc.N, w, bias, 1) })
			b.ReportMetric(float64(tc.T*tc.K*tc.N)*float64(b.N)/b.Elapsed().Seconds()/1e6, "MMAC/s")
		})
	}
}

// BenchmarkQueryBF16 is BenchmarkQuery with the bf16 kernel, its weights
// already packed: what a prompt would cost in a process that had packed
// them (EmbedText keeps the float32 kernels: a fresh hook process would
// pay BenchmarkPackBF16 first).
func BenchmarkQueryBF16(b *testing.B) {
	if !useBF16 {
		b.Skipf("kernel %s: no bf16 kernel", kernel)
	}
	m := testModel(b)
	bf := m.bf16Weights()
	for _, n := range []int{20, 64} {
		text := textOf(b, m, n)
		v := make([]float32, Dim)
		b.Run(fmt.Sprintf("tokens=%d", n), func(b *testing.B) {
			cpu := processCPU()
			for b.Loop() {
				m.embedInto(v, text, 0, runtime.GOMAXPROCS(0), bf)
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPackBF16 is the one-off cost of a model's bf16 weights, from
// the mapped file (its pages already resident).
func BenchmarkPackBF16(b *testing.B) {
	if !useBF16 {
		b.Skipf("kernel %s: no bf16 kernel", kernel)
	}
	m := testModel(b)
	m.Check() // reads the whole file: its pages resident
	reportCPU(b, func() {
		m.bfOnce = [2]sync.Once{}
		m.bf16Weights()
	})
}
