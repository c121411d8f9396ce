// Package openaistub is a stand-in for an OpenAI-compatible API (OpenAI,
// Ollama, llama.cpp, vLLM) for tests: an HTTP server on 127.0.0.1 that
// answers POST /v1/chat/completions and POST /v1/embeddings with scripted
// replies — JSON content, error statuses with Retry-After, malformed
// bodies, slow replies — and records every request (model, messages,
// response_format, Authorization) so that a test can assert what reached
// the model. Point a real client at BaseURL().
//
//	srv := openaistub.Start(t, openaistub.Options{})
//	srv.Enqueue(openaistub.RateLimited("1"), openaistub.JSON(map[string]any{"ok": true}))
package openaistub

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Options configure a Server.
type Options struct {
	// Chat answers a chat completion when the chat queue is empty. It is
	// called concurrently. Nil answers Content("{}") and counts the request
	// as unscripted.
	Chat func(*Request) Reply
	// Embed returns one vector per input for an embeddings request whose
	// reply (queued or default) carries no Vectors. Nil means
	// HashVectors(16).
	Embed func(model string, inputs []string) [][]float32
	// Logf receives one line per request. Nil discards them.
	Logf func(format string, args ...any)
}

// Server is a running stub. Its methods are safe for concurrent use.
type Server struct {
	// URL is the server's root, e.g. http://127.0.0.1:41234; BaseURL adds
	// the /v1 an OpenAI client expects.
	URL string

	opt     Options
	srv     *httptest.Server
	closing chan struct{}

	mu          sync.Mutex
	reqs        []Request
	chatQ       []Reply
	embedQ      []Reply
	unscripted  int
	inFlight    int
	maxInFlight int
	nextID      int
	closed      bool
}

// New starts a stub listening on 127.0.0.1 on a free port.
func New(opt Options) (*Server, error) {
	if opt.Embed == nil {
		opt.Embed = HashVectors(16)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("openaistub: listen on 127.0.0.1: %w", err)
	}
	s := &Server{opt: opt, closing: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Listener.Close()
	s.srv.Listener = ln
	s.srv.Start()
	s.URL = s.srv.URL
	return s, nil
}

// Start starts a stub that logs to tb and closes when the test ends.
func Start(tb testing.TB, opt Options) *Server {
	tb.Helper()
	if opt.Logf == nil {
		opt.Logf = tb.Logf
	}
	s, err := New(opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// BaseURL is the base URL to configure an OpenAI client with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server: delayed replies are abandoned, then in-flight
// handlers are waited for. Logging stops first, so a late request cannot
// log into a finished test.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.closing)
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Enqueue appends replies to the chat queue. Queued replies answer chat
// completions first, in order; Options.Chat answers once it is empty.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQ = append(s.chatQ, replies...)
}

// EnqueueEmbeddings appends replies to the embeddings queue.
func (s *Server) EnqueueEmbeddings(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedQ = append(s.embedQ, replies...)
}

// Pending returns how many queued chat replies are still unused.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.chatQ)
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count returns how many requests have arrived (any path).
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// ChatRequests returns the chat completion requests.
func (s *Server) ChatRequests() []Request { return s.byPath("/v1/chat/completions") }

// EmbeddingRequests returns the embeddings requests.
func (s *Server) EmbeddingRequests() []Request { return s.byPath("/v1/embeddings") }

func (s *Server) byPath(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// MaxInFlight returns the largest number of requests that were being
// handled at the same time.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Unscripted returns how many chat requests found neither a queued reply
// nor an Options.Chat.
func (s *Server) Unscripted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unscripted
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if s.opt.Logf != nil && !closed {
		s.opt.Logf("openaistub: "+format, args...)
	}
}

func (s *Server) enter() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

// record stores the request and returns its sequence number.
func (s *Server) record(r *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, *r)
}

func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%s-stub%06d", prefix, s.nextID)
}

// next pops the head of a queue, if any.
func (s *Server) next(q *[]Reply) (Reply, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(*q) == 0 {
		return Reply{}, false
	}
	r := (*q)[0]
	*q = (*q)[1:]
	return r, true
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	s.enter()
	defer s.leave()
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	r := &Request{Method: hr.Method, Path: hr.URL.Path, Header: hr.Header.Clone(), Body: body}
	known := hr.Method == http.MethodPost && (r.Path == "/v1/chat/completions" || r.Path == "/v1/embeddings")
	if !known {
		s.record(r)
		s.logf("#%d unknown request %s %s", r.Seq, hr.Method, r.Path)
		writeJSON(w, http.StatusNotFound, Status(http.StatusNotFound, "openaistub: no handler for "+hr.Method+" "+r.Path).errorBody())
		return
	}
	if err := r.decode(); err != nil {
		s.record(r)
		s.logf("#%d %s: %v", r.Seq, r.Path, err)
		writeJSON(w, http.StatusBadRequest, Status(http.StatusBadRequest, "openaistub: "+err.Error()).errorBody())
		return
	}
	s.record(r)

	var reply Reply
	if r.Path == "/v1/chat/completions" {
		var ok bool
		if reply, ok = s.next(&s.chatQ); !ok {
			if s.opt.Chat != nil {
				reply = s.opt.Chat(r)
			} else {
				s.mu.Lock()
				s.unscripted++
				s.mu.Unlock()
				reply = Content("{}")
			}
		}
	} else {
		reply, _ = s.next(&s.embedQ)
	}
	s.logf("#%d %s model=%s status=%d delay=%v", r.Seq, r.Path, r.Model, reply.status(), reply.Delay)

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-hr.Context().Done():
			return
		case <-s.closing:
			return
		}
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	status := reply.status()
	switch {
	case reply.Body != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, reply.Body)
	case status < 200 || status > 299:
		writeJSON(w, status, reply.errorBody())
	case r.Path == "/v1/chat/completions":
		model := r.Model
		if model == "" {
			model = "stub-model"
		}
		writeJSON(w, status, reply.chatBody(s.newID("chatcmpl"), model, r))
	default:
		vecs := reply.Vectors
		if vecs == nil {
			vecs = s.opt.Embed(r.Model, r.Input)
		}
		writeJSON(w, status, embeddingsBody(r.Model, vecs, r.EncodingFormat == "base64", r))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
