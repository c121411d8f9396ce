package remote

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// stub is an OpenAI-compatible embeddings server on 127.0.0.1. By default
// it answers every request with stubVector(input, dim) for each input, the
// items in reverse order (their "index" fields are right), so that a client
// that ignores index gets the order wrong. script overrides the answer to
// request n (1-based); returning false falls back to the default.
type stub struct {
	t      *testing.T
	srv    *httptest.Server
	dim    int
	script func(n int, req stubRequest, w http.ResponseWriter) bool

	mu   sync.Mutex
	reqs []stubRequest
}

// stubRequest is one request as the server saw it.
type stubRequest struct {
	Path          string
	Authorization string
	HasAuth       bool
	Model         string
	Input         []string
	Dimensions    int
	HasDimensions bool
}

func newStub(t *testing.T, dim int) *stub {
	t.Helper()
	s := &stub{t: t, dim: dim}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// url is the base URL to configure, with the /v1 prefix real servers have.
func (s *stub) url() string { return s.srv.URL + "/v1" }

func (s *stub) requests() []stubRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *stub) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var raw map[string]json.RawMessage
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
		return
	}
	_, hasDims := raw["dimensions"]
	auth, hasAuth := r.Header["Authorization"]
	sr := stubRequest{
		Path: r.URL.Path, HasAuth: hasAuth, Model: req.Model, Input: req.Input,
		Dimensions: req.Dimensions, HasDimensions: hasDims,
	}
	if hasAuth {
		sr.Authorization = auth[0]
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, sr)
	n := len(s.reqs)
	s.mu.Unlock()

	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		openAIError(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
		return
	}
	for _, in := range req.Input {
		if in == "" {
			openAIError(w, http.StatusBadRequest, "'$.input' is invalid: empty string")
			return
		}
	}
	if s.script != nil && s.script(n, sr, w) {
		return
	}
	writeEmbeddings(w, req.Model, vectorsFor(req.Input, s.dim), true)
}

// stubVector is the stub's embedding of text: deterministic, not
// normalised, different for different texts.
func stubVector(text string, dim int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	x := h.Sum64()
	v := make([]float32, dim)
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v[i] = float32(int64(x%2001)-1000) / 100
	}
	return v
}

func vectorsFor(inputs []string, dim int) [][]float32 {
	vs := make([][]float32, len(inputs))
	for i, in := range inputs {
		vs[i] = stubVector(in, dim)
	}
	return vs
}

type item struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// writeEmbeddings answers 200 with vs at indexes 0…, reversed in the list
// when reverse is set.
func writeEmbeddings(w http.ResponseWriter, model string, vs [][]float32, reverse bool) {
	items := make([]item, len(vs))
	for i, v := range vs {
		items[i] = item{"embedding", i, v}
	}
	if reverse {
		slices.Reverse(items)
	}
	writeItems(w, model, items)
}

func writeItems(w http.ResponseWriter, model string, items []item) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   items,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": len(items), "total_tokens": len(items)},
	})
}

// openAIError answers in OpenAI's error format (go-openai: *APIError).
func openAIError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error","code":null}}`, msg)
}

// plainError answers with a non-JSON body, as proxies do (go-openai:
// *RequestError).
func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}
