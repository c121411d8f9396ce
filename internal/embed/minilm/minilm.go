// Package minilm is an offline sentence embedder: all-MiniLM-L6-v2 (a
// 6-layer BERT encoder, 384 dimensions, Apache-2.0) in plain Go, without
// cgo. It owns the whole path from a Hugging Face model directory to a
// vector: Verify checks the published files against pinned digests,
// Convert turns them once into a runtime file laid out for the kernels
// here, Open maps that file read-only (a fresh process pays only for the
// pages it touches), and a Model tokenizes (WordPiece, as tokenizer.json
// says), runs the encoder, mean-pools over the tokens and L2-normalises,
// as sentence-transformers does for this model.
//
// The kernels are Go assembly, chosen at start-up by what the CPU has, in
// every build (no GOEXPERIMENT): on amd64 AVX2 and FMA (else plain Go),
// and batches (the worker's) multiply in bfloat16 when it also has
// AVX512-BF16 (bf16.go), their feed-forward products in int8 when it has
// AVX512-VNNI as well (int8.go). On arm64 the matrix products run in NEON
// assembly in every build (kernels_neon.go).
package minilm

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/engram-memory/engram/internal/embed"
)

const (
	// Dim is the dimension of the vectors.
	Dim = 384
	// Name identifies the embedder and its output in stored vectors.
	Name = "minilm-l6-v2-384"
	// DefaultMaxTokens is the token limit of sentence-transformers for
	// this model, [CLS] and [SEP] included; longer texts are truncated.
	DefaultMaxTokens = 256
)

// Model is an opened runtime file. It is safe for concurrent use; Close
// must not race with other calls.
type Model struct {
	h      *header
	data   []byte // the mapped file
	unmap  func([]byte) error
	tok    tokenizer
	w      []float32 // the weights section
	w16    []uint16  // the same bytes as float16, in a version-2 file; else nil
	lay    layout
	closed atomic.Bool
	// use is read-held by every embedding and Check, and taken by Close:
	// the file is never unmapped under a computation still reading it (a
	// prompt hook past its deadline returns while its embedding runs).
	use sync.RWMutex

	pool sync.Pool // *work

	bfOnce [2]sync.Once
	bf     [2]*bfWeights // see bf16Weights
}

var _ embed.Embedder = (*Model)(nil)

// Open maps dir/RuntimeFile, written by Convert. A missing file gives an
// error wrapping os.ErrNotExist; one that is truncated, foreign, of another
// format version or inconsistent gives an error, never a panic. The
// weights themselves are checked only by Check (a full read).
func Open(dir string) (*Model, error) {
	if !littleEndian() {
		return nil, errors.New("minilm: big-endian machines are not supported")
	}
	path := filepath.Join(dir, RuntimeFile)
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("minilm: %w", err)
	}
	m, err := newModel(data, unmap)
	if err != nil {
		unmap(data)
		return nil, fmt.Errorf("minilm: %s: %w", path, err)
	}
	return m, nil
}

func newModel(data []byte, unmap func([]byte) error) (*Model, error) {
	h, err := decodeHeader(data)
	if err != nil {
		return nil, err
	}
	if h.Hidden != Dim {
		return nil, fmt.Errorf("%w: hidden size %d, this package embeds in %d", errFormat, h.Hidden, Dim)
	}
	if crc32.ChecksumIEEE(data[h.VocabOff:h.WeightsOff]) != h.VocabCRC {
		return nil, fmt.Errorf("%w: vocabulary checksum mismatch", errFormat)
	}
	m := &Model{h: h, data: data, unmap: unmap, lay: h.layout()}
	m.tok = tokenizer{
		vocab:    data[h.VocabOff : h.VocabOff+h.VocabLen],
		offs:     u32s(data[h.OffsOff:], int(h.Vocab)+1),
		slots:    u32s(data[h.SlotsOff:], int(h.HashSlots)),
		cls:      int32(h.CLS),
		sep:      int32(h.SEP),
		unk:      int32(h.UNK),
		maxChars: int(h.MaxChars),
	}
	m.w = f32s(data[h.WeightsOff:], int(m.lay.total))
	if h.Version == versionF16 {
		m.w16 = u16s(data[h.WeightsOff:], int(2*m.lay.total))
	}
	return m, nil
}

// Check reads every weight and compares their checksum with the one
// Convert recorded: a full read of the file, for doctor-style checks.
func (m *Model) Check() error {
	m.use.RLock()
	defer m.use.RUnlock()
	if m.closed.Load() {
		return errClosed
	}
	if crc32.ChecksumIEEE(m.data[m.h.WeightsOff:]) != m.h.WeightsCRC {
		return fmt.Errorf("minilm: %w: weights checksum mismatch", errFormat)
	}
	return nil
}

var errClosed = errors.New("minilm: model is closed")

// Close unmaps the file once the embeddings under way have finished. The
// Model must not be used afterwards: an embedding started after Close
// panics with an error.
func (m *Model) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.use.Lock()
	defer m.use.Unlock()
	m.tok = tokenizer{}
	m.w = nil
	m.bf = [2]*bfWeights{}
	return m.unmap(m.data)
}

// Name is Name.
func (m *Model) Name() string { return Name }

// Dim is Dim.
func (m *Model) Dim() int { return Dim }

// Embed embeds texts, truncated to DefaultMaxTokens tokens, on all of
// GOMAXPROCS: one text per goroutine at a time (each sequence runs alone,
// so there is no padding to compute), or a single text split across
// them. It stops between texts when ctx is done.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedBatch(ctx, texts, DefaultMaxTokens)
}

// EmbedBatch is Embed with a token limit (at least 2; [CLS] and [SEP]
// count). Where the bf16 kernel runs, its matrix products take bfloat16
// inputs (weights packed on the first batch): the vectors differ from
// EmbedText's by a cosine distance of about 1e-5; where the feed-forward
// products are int8 too (AVX512-VNNI), by up to about 5e-4.
func (m *Model) EmbedBatch(ctx context.Context, texts []string, maxTokens int) ([][]float32, error) {
	if m.closed.Load() {
		return nil, errClosed
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dim)
	for i := range out {
		out[i] = flat[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	bf := m.batchWeights()
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	if workers <= 1 {
		for i, t := range texts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			m.embedInto(out[i], t, maxTokens, runtime.GOMAXPROCS(0), bf)
		}
		return out, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) || ctx.Err() != nil {
					return
				}
				m.embedInto(out[i], texts[i], maxTokens, 1, bf)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// batchWeights is the bf16 weights batches use, packed on the first
// batch, or nil for the float32 kernels (no AVX512-BF16).
func (m *Model) batchWeights() *bfWeights {
	if !useBF16 {
		return nil
	}
	m.use.RLock()
	defer m.use.RUnlock()
	if m.closed.Load() {
		return nil
	}
	return m.bf16Weights()
}

// EmbedText embeds one text, truncated to maxTokens tokens (≤ 0 means
// DefaultMaxTokens), splitting its matrix products across GOMAXPROCS. It
// allocates only the returned vector: the prompt hook's fast path.
func (m *Model) EmbedText(text string, maxTokens int) []float32 {
	v := make([]float32, Dim)
	m.EmbedInto(v, text, maxTokens)
	return v
}

// EmbedInto is EmbedText writing into v (len Dim).
func (m *Model) EmbedInto(v []float32, text string, maxTokens int) {
	if len(v) != Dim {
		panic("minilm: EmbedInto needs a vector of length Dim")
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	m.embedInto(v, text, maxTokens, runtime.GOMAXPROCS(0), nil)
}

// Tokens returns the token ids of text as the model sees them, [CLS] and
// [SEP] included, at most maxTokens of them.
func (m *Model) Tokens(text string, maxTokens int) []int32 {
	m.use.RLock()
	defer m.use.RUnlock()
	if m.closed.Load() {
		panic(errClosed)
	}
	ids, _ := m.tok.encode(nil, nil, text, m.clampTokens(maxTokens))
	return ids
}

func (m *Model) clampTokens(n int) int {
	if n <= 0 {
		n = DefaultMaxTokens
	}
	return max(2, min(n, int(m.h.MaxPos)))
}

func (m *Model) embedInto(v []float32, text string, maxTokens, threads int, bf *bfWeights) {
	m.use.RLock()
	defer m.use.RUnlock()
	if m.closed.Load() {
		panic(errClosed)
	}
	wk, _ := m.pool.Get().(*work)
	if wk == nil {
		wk = &work{}
	}
	wk.ids, wk.word = m.tok.encode(wk.ids, wk.word, text, m.clampTokens(maxTokens))
	m.forward(wk, v, threads, bf)
	m.pool.Put(wk)
}

func u32s(b []byte, n int) []uint32 {
	if n == 0 {
		return nil
	}
	_ = b[4*n-1]
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
}

func u16s(b []byte, n int) []uint16 {
	if n == 0 {
		return nil
	}
	_ = b[2*n-1]
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
}

func f32s(b []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	_ = b[4*n-1]
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// readFile is the fallback of mapFile where mmap is unavailable.
func readFile(path string) ([]byte, func([]byte) error, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func([]byte) error { return nil }, nil
}
