// Package remote embeds text through any OpenAI-compatible embeddings
// endpoint (OpenAI, Ollama, llama.cpp, vLLM, LiteLLM …) with go-openai.
//
// It lives apart from package embed on purpose: binaries that only need
// the local embedder — the prompt hook above all — import embed and so do
// not link go-openai (start-up time and attack surface; see deps_test.go
// in package embed).
package remote

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/engram-memory/engram/internal/embed"
)

// Defaults for the zero values of Config.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultBatchSize   = 64
	DefaultMaxRetries  = 3
	DefaultBackoffBase = 500 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
	DefaultBaseURL     = "https://api.openai.com/v1"
)

// Errors callers act on. Both mean a configuration or server problem that
// retrying will not fix.
var (
	// ErrDimension: the server returned vectors of another length than
	// configured or than it returned before (a different model behind the
	// same name, or a server that ignores "dimensions"). Stored vectors
	// and new ones would not be comparable.
	ErrDimension = errors.New("remote embeddings: unexpected dimension")
	// ErrBadResponse: the response does not match the request (count,
	// indexes, empty vectors).
	ErrBadResponse = errors.New("remote embeddings: malformed response")
)

// Config configures an Embedder. Only Model is required.
type Config struct {
	// BaseURL of the OpenAI-compatible API, including the version path:
	// "https://api.openai.com/v1" (the default), Ollama
	// "http://127.0.0.1:11434/v1", llama.cpp "http://127.0.0.1:8080/v1".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends no
	// Authorization header (local servers).
	APIKey string
	Model  string
	// Dimensions, when positive, is sent as "dimensions" (honoured by
	// OpenAI's text-embedding-3 models and some servers, ignored by
	// others) and every vector must have exactly that length. When zero,
	// the first response fixes the dimension.
	Dimensions int
	// Timeout bounds each HTTP request; default DefaultTimeout. A request
	// that times out is not retried: each attempt could take as long
	// again. The caller's context bounds the whole Embed call.
	Timeout time.Duration
	// BatchSize is the number of texts per request; default
	// DefaultBatchSize.
	BatchSize int
	// MaxRetries is how many times a request answered 429 or 5xx is
	// retried; default DefaultMaxRetries, negative for none. Other 4xx
	// answers, malformed responses and transport errors are not retried.
	MaxRetries int
	// BackoffBase is the wait before the first retry, doubled for each
	// later one, with jitter (uniform in [d/2, d]); default
	// DefaultBackoffBase.
	BackoffBase time.Duration
	// MaxBackoff caps one wait; default DefaultMaxBackoff. A server that
	// asks (Retry-After) to wait longer than this gets no retry: the call
	// fails at once and the caller's next run tries again.
	MaxBackoff time.Duration
	// HTTPClient replaces the default client (one with a timeout slightly
	// above Timeout, as a backstop to the per-request context).
	HTTPClient *http.Client
}

// Embedder is an embed.Embedder backed by a remote embeddings endpoint.
// It is safe for concurrent use.
//
// Its Name, "remote:<model>:<dim>", is only complete once the dimension is
// known: from Config.Dimensions, or after the first successful request.
// Callers that record Name next to stored vectors (every caller should)
// either configure Dimensions, or call Probe once before Name, or read
// Name after Embed returned vectors.
type Embedder struct {
	client      *openai.Client
	model       string
	configured  int          // Config.Dimensions, 0 if none
	dim         atomic.Int64 // known dimension, 0 until then
	timeout     time.Duration
	batchSize   int
	maxRetries  int
	backoffBase time.Duration
	maxBackoff  time.Duration

	// sleep waits between attempts; tests replace it to record waits.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ embed.Embedder = (*Embedder)(nil)

// New checks cfg and returns an Embedder. It makes no request.
func New(cfg Config) (*Embedder, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("remote embeddings: no model configured")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("remote embeddings: base URL %q: want http(s)://host[:port]/path", cfg.BaseURL)
	}
	if cfg.Dimensions < 0 {
		return nil, fmt.Errorf("remote embeddings: negative dimensions %d", cfg.Dimensions)
	}
	if cfg.BatchSize < 0 || cfg.Timeout < 0 || cfg.BackoffBase < 0 || cfg.MaxBackoff < 0 {
		return nil, errors.New("remote embeddings: negative batch size, timeout or backoff")
	}
	e := &Embedder{
		model:       cfg.Model,
		configured:  cfg.Dimensions,
		timeout:     orDefault(cfg.Timeout, DefaultTimeout),
		batchSize:   orDefault(cfg.BatchSize, DefaultBatchSize),
		maxRetries:  orDefault(cfg.MaxRetries, DefaultMaxRetries),
		backoffBase: orDefault(cfg.BackoffBase, DefaultBackoffBase),
		maxBackoff:  orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
		sleep:       sleepCtx,
	}
	if e.maxRetries < 0 {
		e.maxRetries = 0
	}
	e.dim.Store(int64(cfg.Dimensions))
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.HTTPClient != nil {
		oc.HTTPClient = cfg.HTTPClient
	} else {
		oc.HTTPClient = &http.Client{Timeout: e.timeout + time.Second}
	}
	e.client = openai.NewClientWithConfig(oc)
	return e, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Name is "remote:<model>:<dim>", with dim 0 while the dimension is not
// known yet (see Embedder). A model name may itself contain ':' (Ollama
// tags): the dimension is after the last one.
func (e *Embedder) Name() string {
	return fmt.Sprintf("remote:%s:%d", e.model, e.Dim())
}

// Dim is the vector length, 0 until known.
func (e *Embedder) Dim() int { return int(e.dim.Load()) }

// Probe embeds one short text, which fixes the dimension if it was not
// known and checks it if it was (Dim and Name are complete afterwards).
// Use it before Name when no Dimensions is configured, and in health
// checks: it fails as Embed would (unreachable server, bad key, unknown
// model, dimension mismatch).
func (e *Embedder) Probe(ctx context.Context) error {
	_, err := e.embedBatch(ctx, []string{"dimension probe"}, 0)
	return err
}

// Embed returns one L2-normalised vector per text, in order, sending
// batches of BatchSize texts one after the other.
//
// The API rejects empty input strings, so texts that are empty or only
// white space are not sent: they get the zero vector, as with
// embed.Local, and embed.Cosine with it is 0.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	idx := make([]int, 0, len(texts)) // texts to send
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			idx = append(idx, i)
		}
	}
	batch := make([]string, 0, min(e.batchSize, len(idx)))
	for start := 0; start < len(idx); start += e.batchSize {
		end := min(start+e.batchSize, len(idx))
		batch = batch[:0]
		for _, i := range idx[start:end] {
			batch = append(batch, texts[i])
		}
		vecs, err := e.embedBatch(ctx, batch, idx[start])
		if err != nil {
			return nil, err
		}
		for k, i := range idx[start:end] {
			out[i] = vecs[k]
		}
	}
	if len(idx) == len(texts) {
		return out, nil
	}
	dim := e.Dim()
	if dim == 0 {
		// Only empty texts and nothing learned yet: ask the server.
		if err := e.Probe(ctx); err != nil {
			return nil, err
		}
		dim = e.Dim()
	}
	zeros := make([]float32, dim*(len(texts)-len(idx)))
	for i := range out {
		if out[i] == nil {
			out[i], zeros = zeros[:dim:dim], zeros[dim:]
		}
	}
	return out, nil
}

// embedBatch sends one request, retrying 429 and 5xx answers, and returns
// the checked, normalised vectors in input order. first is the index of
// the batch's first text in the caller's slice, for error messages.
func (e *Embedder) embedBatch(ctx context.Context, batch []string, first int) ([][]float32, error) {
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := e.request(ctx, batch)
		if err == nil {
			return vecs, nil
		}
		err = fmt.Errorf("remote embeddings: %d texts from text %d, model %q, attempt %d: %w",
			len(batch), first, e.model, attempt+1, err)
		status := statusCode(err)
		if status != http.StatusTooManyRequests && (status < 500 || status > 599) {
			return nil, err
		}
		if attempt >= e.maxRetries {
			return nil, fmt.Errorf("%w (gave up after %d retries)", err, attempt)
		}
		wait := e.backoff(attempt)
		if retryAfter > 0 {
			if retryAfter > e.maxBackoff {
				return nil, fmt.Errorf("%w (server asks to retry after %v, more than the %v allowed)",
					err, retryAfter, e.maxBackoff)
			}
			wait = retryAfter
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, fmt.Errorf("%w (no time left to retry after %v)", err, wait)
		}
		if serr := e.sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry: %w)", err, serr)
		}
	}
}

// request makes one attempt. retryAfter is what the server asked for in
// Retry-After or retry-after-ms, 0 when nothing.
func (e *Embedder) request(ctx context.Context, batch []string) (vecs [][]float32, retryAfter time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	resp, err := e.client.CreateEmbeddings(actx, openai.EmbeddingRequestStrings{
		Input:      batch,
		Model:      openai.EmbeddingModel(e.model),
		Dimensions: e.configured,
	})
	if err != nil {
		// go-openai fills the response headers before it checks the
		// status, so Retry-After is readable on errors too.
		return nil, parseRetryAfter(resp.Header(), time.Now()), err
	}
	vecs, err = e.check(resp.Data, len(batch))
	return vecs, 0, err
}

// check validates a response for n inputs and returns its vectors in
// input order, L2-normalised.
func (e *Embedder) check(data []openai.Embedding, n int) ([][]float32, error) {
	if len(data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(data), n)
	}
	out := make([][]float32, n)
	dim := 0
	for k, d := range data {
		if d.Index < 0 || d.Index >= n {
			return nil, fmt.Errorf("%w: item %d has index %d, want 0 to %d", ErrBadResponse, k, d.Index, n-1)
		}
		if out[d.Index] != nil {
			return nil, fmt.Errorf("%w: index %d appears twice", ErrBadResponse, d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("%w: empty embedding at index %d", ErrBadResponse, d.Index)
		}
		if dim == 0 {
			dim = len(d.Embedding)
		} else if len(d.Embedding) != dim {
			return nil, fmt.Errorf("%w: embedding at index %d has %d dimensions, others %d",
				ErrDimension, d.Index, len(d.Embedding), dim)
		}
		out[d.Index] = d.Embedding
	}
	if err := e.fixDim(dim); err != nil {
		return nil, err
	}
	for _, v := range out {
		normalise(v)
	}
	return out, nil
}

// fixDim records the dimension on the first response and checks it on
// every later one.
func (e *Embedder) fixDim(got int) error {
	if e.dim.CompareAndSwap(0, int64(got)) {
		return nil
	}
	want := e.Dim()
	if got == want {
		return nil
	}
	if e.configured > 0 {
		return fmt.Errorf("%w: server returned %d dimensions, configured %d (does model %q honour \"dimensions\"?)",
			ErrDimension, got, want, e.model)
	}
	return fmt.Errorf("%w: server returned %d dimensions, earlier responses %d (did model %q change?)",
		ErrDimension, got, want, e.model)
}

func normalise(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range v {
		v[i] = float32(float64(x) * inv)
	}
}

// statusCode is the HTTP status behind a go-openai error, 0 if there was
// no HTTP answer (transport error, timeout).
func statusCode(err error) int {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return reqErr.HTTPStatusCode
	}
	return 0
}

// backoff is the jittered wait before retry number attempt+1: uniform in
// [d/2, d] with d = BackoffBase·2^attempt, capped at MaxBackoff.
func (e *Embedder) backoff(attempt int) time.Duration {
	d := e.maxBackoff
	if attempt < 30 {
		d = min(e.backoffBase<<attempt, e.maxBackoff)
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// parseRetryAfter reads retry-after-ms (OpenAI, Azure) or Retry-After
// (seconds or an HTTP date).
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
