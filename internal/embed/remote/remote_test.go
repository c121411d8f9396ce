package remote

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/engram-memory/engram/internal/embed"
)

// newTestEmbedder returns an Embedder on s with fast retries.
func newTestEmbedder(t *testing.T, s *stub, cfg Config) *Embedder {
	t.Helper()
	cfg.BaseURL = s.url()
	if cfg.Model == "" {
		cfg.Model = "test-embed"
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = time.Millisecond
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return e
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func normalised(v []float32) []float32 {
	v = slices.Clone(v)
	normalise(v)
	return v
}

// checkVectors fails unless got[i] is the normalised stub vector of in[i].
func checkVectors(t *testing.T, in []string, got [][]float32, dim int) {
	t.Helper()
	if len(got) != len(in) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(in))
	}
	for i, text := range in {
		want := normalised(stubVector(text, dim))
		if len(got[i]) != dim {
			t.Fatalf("vector %d: len %d, want %d", i, len(got[i]), dim)
		}
		for j := range want {
			if math.Abs(float64(got[i][j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d (%q) is not that text's embedding: [%d]=%v, want %v", i, text, j, got[i][j], want[j])
			}
		}
	}
}

func TestBatching(t *testing.T) {
	tests := []struct {
		name      string
		n, batch  int
		wantSizes []int
	}{
		{"default batch of 64", 150, 0, []int{64, 64, 22}},
		{"exact multiple", 20, 10, []int{10, 10}},
		{"one text", 1, 0, []int{1}},
		{"batch of one", 3, 1, []int{1, 1, 1}},
		{"no texts", 0, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 8)
			e := newTestEmbedder(t, s, Config{BatchSize: tt.batch})
			in := texts(tt.n)
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			checkVectors(t, in, got, 8)
			var sizes []int
			var sent []string
			for _, r := range s.requests() {
				sizes = append(sizes, len(r.Input))
				sent = append(sent, r.Input...)
			}
			if !slices.Equal(sizes, tt.wantSizes) {
				t.Errorf("request sizes %v, want %v", sizes, tt.wantSizes)
			}
			if !slices.Equal(sent, in) {
				t.Errorf("texts sent out of order or missing: %d sent, %d given", len(sent), len(in))
			}
		})
	}
}

func TestOrdersByIndex(t *testing.T) {
	s := newStub(t, 4)
	perm := []int{2, 0, 3, 1}
	s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
		vs := vectorsFor(req.Input, 4)
		items := make([]item, len(vs))
		for k, i := range perm {
			items[k] = item{"embedding", i, vs[i]}
		}
		writeItems(w, req.Model, items)
		return true
	}
	e := newTestEmbedder(t, s, Config{})
	in := []string{"alpha", "beta", "gamma", "delta"}
	got, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
}

func TestNormalised(t *testing.T) {
	s := newStub(t, 16)
	e := newTestEmbedder(t, s, Config{})
	got, err := e.Embed(context.Background(), []string{"one", "two"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		var sum float64
		for _, x := range v {
			sum += float64(x) * float64(x)
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("vector %d: squared norm %v, want 1", i, sum)
		}
	}
	if c := embed.Cosine(got[0], got[0]); math.Abs(float64(c)-1) > 1e-5 {
		t.Errorf("self cosine %v", c)
	}
}

func TestDimensions(t *testing.T) {
	tests := []struct {
		name       string
		configured int
		serverDims []int // dimension the server answers with, per call
		wantErr    []bool
	}{
		{"learned from first response", 0, []int{8, 8}, []bool{false, false}},
		{"configured and honoured", 8, []int{8}, []bool{false}},
		{"configured and ignored by the server", 8, []int{16}, []bool{true}},
		{"changes between calls", 0, []int{8, 16}, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 0)
			s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
				writeEmbeddings(w, req.Model, vectorsFor(req.Input, tt.serverDims[n-1]), false)
				return true
			}
			e := newTestEmbedder(t, s, Config{Dimensions: tt.configured})
			for call, wantErr := range tt.wantErr {
				_, err := e.Embed(context.Background(), []string{"some text"})
				if wantErr != (err != nil) {
					t.Fatalf("call %d: err=%v, want error %v", call+1, err, wantErr)
				}
				if wantErr && !errors.Is(err, ErrDimension) {
					t.Errorf("call %d: err=%v, want ErrDimension", call+1, err)
				}
			}
			reqs := s.requests()
			if len(reqs) != len(tt.wantErr) {
				t.Errorf("%d requests, want %d (dimension errors are not retried)", len(reqs), len(tt.wantErr))
			}
			if reqs[0].HasDimensions != (tt.configured > 0) || reqs[0].Dimensions != tt.configured {
				t.Errorf("request sent dimensions=%d (present %v), want %d", reqs[0].Dimensions, reqs[0].HasDimensions, tt.configured)
			}
			if want := tt.serverDims[0]; tt.configured == 0 && e.Dim() != want {
				t.Errorf("Dim()=%d after the first response, want %d", e.Dim(), want)
			}
		})
	}
}

func TestMalformedResponses(t *testing.T) {
	tests := []struct {
		name    string
		items   func(vs [][]float32) []item
		wantErr error
		wantMsg string
	}{
		{"too few", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}}
		}, ErrBadResponse, "1 embeddings for 2 inputs"},
		{"too many", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}, {"embedding", 1, vs[1]}, {"embedding", 2, vs[1]}}
		}, ErrBadResponse, "3 embeddings for 2 inputs"},
		{"index out of range", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}, {"embedding", 2, vs[1]}}
		}, ErrBadResponse, "index 2"},
		{"negative index", func(vs [][]float32) []item {
			return []item{{"embedding", -1, vs[0]}, {"embedding", 1, vs[1]}}
		}, ErrBadResponse, "index -1"},
		{"duplicate index", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}, {"embedding", 0, vs[1]}}
		}, ErrBadResponse, "index 0 appears twice"},
		{"empty embedding", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}, {"embedding", 1, nil}}
		}, ErrBadResponse, "empty embedding"},
		{"mixed lengths", func(vs [][]float32) []item {
			return []item{{"embedding", 0, vs[0]}, {"embedding", 1, vs[1][:3]}}
		}, ErrDimension, "3 dimensions, others 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 4)
			s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
				writeItems(w, req.Model, tt.items(vectorsFor(req.Input, 4)))
				return true
			}
			e := newTestEmbedder(t, s, Config{})
			_, err := e.Embed(context.Background(), []string{"a", "b"})
			if !errors.Is(err, tt.wantErr) || !strings.Contains(fmt.Sprint(err), tt.wantMsg) {
				t.Errorf("err=%v, want %v mentioning %q", err, tt.wantErr, tt.wantMsg)
			}
			if n := len(s.requests()); n != 1 {
				t.Errorf("%d requests, want 1 (malformed answers are not retried)", n)
			}
			if e.Dim() != 0 && tt.wantErr == ErrBadResponse {
				t.Errorf("Dim()=%d learned from a rejected response", e.Dim())
			}
		})
	}
}

func TestRetries(t *testing.T) {
	rateLimited := func(w http.ResponseWriter) { openAIError(w, http.StatusTooManyRequests, "Rate limit reached") }
	tests := []struct {
		name       string
		failures   int // the first failures requests fail with fail
		fail       func(w http.ResponseWriter)
		maxRetries int
		wantReqs   int
		wantStatus int // 0: success
	}{
		{"429 then success", 1, rateLimited, 0, 2, 0},
		{"500 then success", 1, func(w http.ResponseWriter) { openAIError(w, 500, "internal error") }, 0, 2, 0},
		{"502 plain body then success", 2, func(w http.ResponseWriter) { plainError(w, 502, "bad gateway") }, 0, 3, 0},
		{"503 until retries run out", 100, func(w http.ResponseWriter) { plainError(w, 503, "overloaded") }, 2, 3, 503},
		{"429 with retries disabled", 100, rateLimited, -1, 1, 429},
		{"400 not retried", 100, func(w http.ResponseWriter) { openAIError(w, 400, "bad input") }, 0, 1, 400},
		{"401 not retried", 100, func(w http.ResponseWriter) { openAIError(w, 401, "invalid api key") }, 0, 1, 401},
		{"404 plain body not retried", 100, func(w http.ResponseWriter) { plainError(w, 404, "no such model") }, 0, 1, 404},
		{"422 not retried", 100, func(w http.ResponseWriter) { openAIError(w, 422, "unprocessable") }, 0, 1, 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 4)
			s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
				if n <= tt.failures {
					tt.fail(w)
					return true
				}
				return false
			}
			e := newTestEmbedder(t, s, Config{MaxRetries: tt.maxRetries})
			in := []string{"x", "y"}
			got, err := e.Embed(context.Background(), in)
			if n := len(s.requests()); n != tt.wantReqs {
				t.Errorf("%d requests, want %d", n, tt.wantReqs)
			}
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("err=%v, want success after retries", err)
				}
				checkVectors(t, in, got, 4)
				return
			}
			if err == nil {
				t.Fatalf("no error, want status %d", tt.wantStatus)
			}
			if st := statusCode(err); st != tt.wantStatus {
				t.Errorf("status in error %d, want %d (err=%v)", st, tt.wantStatus, err)
			}
			var apiErr *openai.APIError
			var reqErr *openai.RequestError
			if !errors.As(err, &apiErr) && !errors.As(err, &reqErr) {
				t.Errorf("err=%v does not unwrap to a go-openai error", err)
			}
		})
	}
}

// recordSleeps replaces e's waits between attempts by a recorder.
func recordSleeps(e *Embedder) *[]time.Duration {
	var mu sync.Mutex
	var waits []time.Duration
	e.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return ctx.Err()
	}
	return &waits
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name      string
		header    string
		value     string
		wantWait  time.Duration // 0: the jittered backoff
		wantRetry bool
	}{
		{"seconds", "Retry-After", "2", 2 * time.Second, true},
		{"milliseconds", "Retry-After-Ms", "250", 250 * time.Millisecond, true},
		{"HTTP date", "Retry-After", time.Now().Add(4 * time.Second).UTC().Format(http.TimeFormat), 0, true},
		{"garbage falls back to backoff", "Retry-After", "soon", 0, true},
		{"longer than MaxBackoff: give up", "Retry-After", "120", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 4)
			s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
				if n > 1 {
					return false
				}
				w.Header().Set(tt.header, tt.value)
				openAIError(w, http.StatusTooManyRequests, "slow down")
				return true
			}
			e := newTestEmbedder(t, s, Config{BackoffBase: 100 * time.Millisecond, MaxBackoff: 10 * time.Second})
			waits := recordSleeps(e)
			_, err := e.Embed(context.Background(), []string{"x"})
			if tt.wantRetry != (err == nil) {
				t.Fatalf("err=%v, want retry %v", err, tt.wantRetry)
			}
			if !tt.wantRetry {
				if len(*waits) != 0 || len(s.requests()) != 1 || !strings.Contains(err.Error(), "retry after 2m0s") {
					t.Errorf("waits %v, %d requests, err=%v; want no wait, 1 request, an error naming the 2m0s asked", *waits, len(s.requests()), err)
				}
				return
			}
			if len(*waits) != 1 {
				t.Fatalf("waits %v, want one", *waits)
			}
			w := (*waits)[0]
			switch {
			case tt.name == "HTTP date":
				// HTTP dates have one-second resolution.
				if w < 2*time.Second || w > 4*time.Second {
					t.Errorf("wait %v, want about 3–4s", w)
				}
			case tt.wantWait == 0:
				if w < 50*time.Millisecond || w > 100*time.Millisecond {
					t.Errorf("wait %v, want the backoff in [50ms, 100ms]", w)
				}
			case w != tt.wantWait:
				t.Errorf("wait %v, want %v", w, tt.wantWait)
			}
		})
	}
}

// TestRetryAfterRealWait checks that a real wait happens between attempts
// (no recorder).
func TestRetryAfterRealWait(t *testing.T) {
	s := newStub(t, 4)
	var first time.Time
	var gap time.Duration
	s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
		if n == 1 {
			first = time.Now()
			w.Header().Set("Retry-After-Ms", "60")
			openAIError(w, http.StatusTooManyRequests, "slow down")
			return true
		}
		gap = time.Since(first)
		return false
	}
	e := newTestEmbedder(t, s, Config{})
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if gap < 60*time.Millisecond {
		t.Errorf("second attempt %v after the first, want ≥ 60ms (Retry-After-Ms)", gap)
	}
}

func TestBackoff(t *testing.T) {
	e, err := New(Config{Model: "m", BackoffBase: 100 * time.Millisecond, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		attempt  int
		min, max time.Duration
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{2, 200 * time.Millisecond, 400 * time.Millisecond},
		{4, 500 * time.Millisecond, time.Second}, // 1.6s capped at 1s
		{100, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := e.backoff(tt.attempt)
			if d < tt.min || d > tt.max {
				t.Fatalf("backoff(%d)=%v, want in [%v, %v]", tt.attempt, d, tt.min, tt.max)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("backoff(%d): %d distinct values in 200 draws, want jitter", tt.attempt, len(seen))
		}
	}
}

func TestTimeout(t *testing.T) {
	s := newStub(t, 4)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the server's Close
	s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
		select {
		case <-time.After(2 * time.Second):
		case <-release:
		}
		return false
	}
	e := newTestEmbedder(t, s, Config{Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := e.Embed(context.Background(), []string{"x"})
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err=%v, want one wrapping context.DeadlineExceeded", err)
	}
	if elapsed > 1500*time.Millisecond {
		t.Errorf("Embed returned after %v, want about the 100ms timeout (the server answers after 2s)", elapsed)
	}
	if n := len(s.requests()); n != 1 {
		t.Errorf("%d requests, want 1 (timeouts are not retried)", n)
	}
}

func TestCallerContext(t *testing.T) {
	t.Run("cancelled while waiting to retry", func(t *testing.T) {
		s := newStub(t, 4)
		s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
			openAIError(w, http.StatusServiceUnavailable, "down")
			return true
		}
		e := newTestEmbedder(t, s, Config{BackoffBase: 10 * time.Second, MaxBackoff: 20 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := e.Embed(ctx, []string{"x"})
		if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second {
			t.Errorf("err=%v after %v, want context.Canceled promptly", err, time.Since(start))
		}
	})
	t.Run("deadline sooner than the wait", func(t *testing.T) {
		s := newStub(t, 4)
		s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
			w.Header().Set("Retry-After", "5")
			openAIError(w, http.StatusTooManyRequests, "slow down")
			return true
		}
		e := newTestEmbedder(t, s, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := e.Embed(ctx, []string{"x"})
		if err == nil || !strings.Contains(err.Error(), "no time left") || time.Since(start) > 2*time.Second {
			t.Errorf("err=%v after %v, want an immediate 'no time left' error", err, time.Since(start))
		}
	})
}

func TestRequestHeadersAndBody(t *testing.T) {
	tests := []struct {
		name, key, wantAuth string
		hasAuth             bool
	}{
		{"with key", "sk-test-123", "Bearer sk-test-123", true},
		{"without key", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStub(t, 4)
			e := newTestEmbedder(t, s, Config{APIKey: tt.key, Model: "nomic-embed-text:latest"})
			if _, err := e.Embed(context.Background(), []string{"hello"}); err != nil {
				t.Fatal(err)
			}
			r := s.requests()[0]
			if r.HasAuth != tt.hasAuth || r.Authorization != tt.wantAuth {
				t.Errorf("Authorization %q (present %v), want %q (present %v)", r.Authorization, r.HasAuth, tt.wantAuth, tt.hasAuth)
			}
			if r.Model != "nomic-embed-text:latest" {
				t.Errorf("model %q, want nomic-embed-text:latest", r.Model)
			}
			if r.Path != "/v1/embeddings" {
				t.Errorf("path %q, want /v1/embeddings", r.Path)
			}
			if r.HasDimensions {
				t.Errorf("dimensions sent (%d) though none configured", r.Dimensions)
			}
		})
	}
}

func TestEmptyTexts(t *testing.T) {
	t.Run("skipped, zero vectors", func(t *testing.T) {
		s := newStub(t, 4)
		e := newTestEmbedder(t, s, Config{})
		in := []string{"", "real text", " \n\t", "more"}
		got, err := e.Embed(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		reqs := s.requests()
		if len(reqs) != 1 || !slices.Equal(reqs[0].Input, []string{"real text", "more"}) {
			t.Fatalf("requests %+v, want one with the two non-empty texts", reqs)
		}
		checkVectors(t, []string{"real text", "more"}, [][]float32{got[1], got[3]}, 4)
		for _, i := range []int{0, 2} {
			if !slices.Equal(got[i], make([]float32, 4)) {
				t.Errorf("vector %d = %v, want the zero vector of length 4", i, got[i])
			}
		}
	})
	t.Run("only empty texts, dimension unknown: one probe", func(t *testing.T) {
		s := newStub(t, 4)
		e := newTestEmbedder(t, s, Config{})
		got, err := e.Embed(context.Background(), []string{"", ""})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(s.requests()); n != 1 || len(got) != 2 || len(got[0]) != 4 || len(got[1]) != 4 {
			t.Errorf("%d requests, vectors %v; want one probe and two zero vectors of length 4", n, got)
		}
	})
	t.Run("only empty texts, dimension configured: no request", func(t *testing.T) {
		s := newStub(t, 4)
		e := newTestEmbedder(t, s, Config{Dimensions: 4})
		got, err := e.Embed(context.Background(), []string{""})
		if err != nil || len(got) != 1 || len(got[0]) != 4 {
			t.Fatalf("got %v, %v", got, err)
		}
		if n := len(s.requests()); n != 0 {
			t.Errorf("%d requests, want 0", n)
		}
	})
}

func TestNameAndProbe(t *testing.T) {
	s := newStub(t, 12)
	e := newTestEmbedder(t, s, Config{Model: "text-embedding-3-small"})
	if got, want := e.Name(), "remote:text-embedding-3-small:0"; got != want {
		t.Errorf("Name() before any call = %q, want %q", got, want)
	}
	if err := e.Probe(context.Background()); err != nil || e.Dim() != 12 {
		t.Fatalf("Probe()=%v, then Dim()=%d; want nil, 12", err, e.Dim())
	}
	if got, want := e.Name(), "remote:text-embedding-3-small:12"; got != want {
		t.Errorf("Name() after Probe = %q, want %q", got, want)
	}
	configured := newTestEmbedder(t, s, Config{Model: "m", Dimensions: 256})
	if got, want := configured.Name(), "remote:m:256"; got != want || configured.Dim() != 256 {
		t.Errorf("Name()=%q Dim()=%d, want %q, 256", got, configured.Dim(), want)
	}
	if err := configured.Probe(context.Background()); !errors.Is(err, ErrDimension) {
		t.Errorf("Probe with 256 configured, server answers 12: err=%v, want ErrDimension", err)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"defaults", Config{Model: "m"}, ""},
		{"no model", Config{BaseURL: "http://127.0.0.1:1/v1"}, "no model"},
		{"bad scheme", Config{Model: "m", BaseURL: "ftp://x/v1"}, "base URL"},
		{"no host", Config{Model: "m", BaseURL: "http:///v1"}, "base URL"},
		{"negative dimensions", Config{Model: "m", Dimensions: -1}, "negative dimensions"},
		{"negative batch", Config{Model: "m", BatchSize: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if e.batchSize != DefaultBatchSize || e.maxRetries != DefaultMaxRetries || e.timeout != DefaultTimeout {
					t.Errorf("defaults: batch %d, retries %d, timeout %v", e.batchSize, e.maxRetries, e.timeout)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err=%v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{"none", http.Header{}, 0},
		{"nil", nil, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"zero", http.Header{"Retry-After": {"0"}}, 0},
		{"negative", http.Header{"Retry-After": {"-3"}}, 0},
		{"date", http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{"ms wins", http.Header{"Retry-After": {"7"}, "Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{"fractional ms", http.Header{"Retry-After-Ms": {"2.5"}}, 2500 * time.Microsecond},
		{"garbage", http.Header{"Retry-After": {"later"}}, 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.header, now); got != tt.want {
			t.Errorf("%s: parseRetryAfter(%v)=%v, want %v", tt.name, tt.header, got, tt.want)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	s := newStub(t, 8)
	e := newTestEmbedder(t, s, Config{BatchSize: 3})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			in := []string{fmt.Sprintf("g%d a", g), fmt.Sprintf("g%d b", g), "", fmt.Sprintf("g%d c", g), fmt.Sprintf("g%d d", g)}
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				t.Error(err)
				return
			}
			checkVectors(t, []string{in[0], in[1], in[3], in[4]}, [][]float32{got[0], got[1], got[3], got[4]}, 8)
		})
	}
	wg.Wait()
	if e.Name() != "remote:test-embed:8" {
		t.Errorf("Name()=%q", e.Name())
	}
}

func TestProbeFailures(t *testing.T) {
	t.Run("bad key", func(t *testing.T) {
		s := newStub(t, 4)
		s.script = func(n int, req stubRequest, w http.ResponseWriter) bool {
			openAIError(w, http.StatusUnauthorized, "Incorrect API key provided")
			return true
		}
		e := newTestEmbedder(t, s, Config{APIKey: "wrong"})
		err := e.Probe(context.Background())
		if statusCode(err) != http.StatusUnauthorized || e.Dim() != 0 {
			t.Errorf("err=%v, Dim()=%d; want a 401 error and no dimension", err, e.Dim())
		}
	})
	t.Run("server down", func(t *testing.T) {
		s := newStub(t, 4)
		e := newTestEmbedder(t, s, Config{})
		s.srv.Close()
		if err := e.Probe(context.Background()); err == nil {
			t.Error("Probe against a closed server succeeded")
		}
	})
}
