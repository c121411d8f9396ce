// Package anthropicstub is a stand-in for the Anthropic Messages API for
// tests: an HTTP server on 127.0.0.1 that answers POST /v1/messages with
// scripted replies, streamed as server-sent events exactly as the real API
// frames them, and records every request so that a test can assert what
// reached the model. Pointing Claude Code at it (ANTHROPIC_BASE_URL) makes
// the real client run offline, tools and hooks included.
package anthropicstub

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Responder decides the reply to one request of the conversation. It is
// called with the decoded request and must be safe for concurrent use.
type Responder func(*Request) Reply

// Options configure a Server.
type Options struct {
	// Responder answers the main conversation. Nil answers "OK.".
	Responder Responder
	// Aux answers auxiliary requests (see IsAux). Nil answers a short
	// plain text.
	Aux Responder
	// IsAux classifies a /v1/messages request as auxiliary. Nil means
	// DefaultIsAux.
	IsAux func(*Request) bool
	// Logf receives one line per request and every unknown path. Nil
	// discards them.
	Logf func(format string, args ...any)
}

// Server is a running stub. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give the client, e.g. http://127.0.0.1:41234.
	URL string

	opt  Options
	srv  *http.Server
	ln   net.Listener
	done chan struct{}

	mu      sync.Mutex
	reqs    []Request
	unknown []string
	nextID  int
	closed  bool
}

// DefaultIsAux treats a request as auxiliary unless it offers the Bash
// tool: Claude Code's conversation requests always carry its tool set,
// while its side requests (quota probe, title and topic detection) carry
// none.
func DefaultIsAux(r *Request) bool {
	return !r.HasTool("Bash")
}

// New starts a stub listening on 127.0.0.1 on a free port.
func New(opt Options) (*Server, error) {
	if opt.Responder == nil {
		opt.Responder = func(*Request) Reply { return Text("OK.") }
	}
	if opt.Aux == nil {
		opt.Aux = func(*Request) Reply { return Text("Stub reply") }
	}
	if opt.IsAux == nil {
		opt.IsAux = DefaultIsAux
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("anthropicstub: listen on 127.0.0.1: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), opt: opt, ln: ln, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP)}
	go func() {
		defer close(s.done)
		s.srv.Serve(ln)
	}()
	return s, nil
}

// Start starts a stub whose conversation is answered by responder, logs to
// tb, and closes it when the test ends.
func Start(tb testing.TB, responder Responder) *Server {
	tb.Helper()
	s, err := New(Options{Responder: responder, Logf: tb.Logf})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and waits for it to finish. Logging stops first,
// so a late request cannot log into a finished test.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.srv.Close()
	<-s.done
}

func (s *Server) logf(format string, args ...any) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if s.opt.Logf != nil && !closed {
		s.opt.Logf("anthropicstub: "+format, args...)
	}
}

func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%sstub%06d", prefix, s.nextID)
}

// record stores a copy of the request and returns its sequence number.
func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, r)
	return r.Seq
}

// Requests returns every request received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// MessageRequests returns the POST /v1/messages requests (main and
// auxiliary).
func (s *Server) MessageRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == "/v1/messages" {
			out = append(out, r)
		}
	}
	return out
}

// MainRequests returns the /v1/messages requests of the conversation.
func (s *Server) MainRequests() []Request {
	var out []Request
	for _, r := range s.MessageRequests() {
		if !r.Aux {
			out = append(out, r)
		}
	}
	return out
}

// AuxRequests returns the auxiliary /v1/messages requests.
func (s *Server) AuxRequests() []Request {
	var out []Request
	for _, r := range s.MessageRequests() {
		if r.Aux {
			out = append(out, r)
		}
	}
	return out
}

// RequestsContaining returns the requests whose body contains str (see
// Request.Contains).
func (s *Server) RequestsContaining(str string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Contains(str) {
			out = append(out, r)
		}
	}
	return out
}

// ContainsInAnyRequest reports whether any request body contains str.
func (s *Server) ContainsInAnyRequest(str string) bool {
	return len(s.RequestsContaining(str)) > 0
}

// SystemContains reports whether the system prompt of any main request
// contains str.
func (s *Server) SystemContains(str string) bool {
	for _, r := range s.MainRequests() {
		if strings.Contains(r.System, str) {
			return true
		}
	}
	return false
}

// UnknownPaths returns "METHOD /path" of every request the stub had no
// handler for.
func (s *Server) UnknownPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// Summary describes every request on one line each, for failure messages.
func (s *Server) Summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		fmt.Fprintf(&b, "#%d %s %s", r.Seq, r.Method, r.Path)
		if r.Path == "/v1/messages" {
			kind := "main"
			if r.Aux {
				kind = "aux"
			}
			fmt.Fprintf(&b, " %s model=%s max_tokens=%d stream=%v tools=%d messages=%d prompt=%q",
				kind, r.Model, r.MaxTokens, r.Stream, len(r.Tools), len(r.Messages), trimForLog(lastLine(r.Prompt()), 80))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	body, err := io.ReadAll(hr.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	r := Request{Method: hr.Method, Path: hr.URL.Path, Query: hr.URL.RawQuery, Header: hr.Header.Clone(), Body: body}

	switch {
	case hr.Method == http.MethodPost && r.Path == "/v1/messages":
		s.serveMessages(w, r)
	case hr.Method == http.MethodPost && r.Path == "/v1/messages/count_tokens":
		s.record(r)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]int{"input_tokens": estimateTokens(body)})
	case hr.Method == http.MethodHead || (hr.Method == http.MethodGet && (r.Path == "/" || r.Path == "")):
		// Connectivity checks.
		s.record(r)
		w.WriteHeader(http.StatusOK)
	default:
		s.record(r)
		line := hr.Method + " " + r.Path
		s.mu.Lock()
		s.unknown = append(s.unknown, line)
		s.mu.Unlock()
		s.logf("unknown request %s?%s body=%s", line, r.Query, trimForLog(string(body), 200))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(errorBody("not_found_error", "anthropicstub: no handler for "+line))
	}
}

func (s *Server) serveMessages(w http.ResponseWriter, r Request) {
	if err := r.decode(); err != nil {
		s.record(r)
		s.logf("undecodable /v1/messages body: %v", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(errorBody("invalid_request_error", "anthropicstub: "+err.Error()))
		return
	}
	r.Aux = s.opt.IsAux(&r)
	respond := s.opt.Responder
	if r.Aux {
		respond = s.opt.Aux
	}
	r.Seq = s.record(r)
	reply := respond(&r)

	bs, err := reply.blocks(s.newID)
	if err != nil {
		s.logf("request #%d: %v", r.Seq, err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		json.NewEncoder(w).Encode(errorBody("api_error", err.Error()))
		return
	}
	kind := "main"
	if r.Aux {
		kind = "aux"
	}
	var tools []string
	for _, t := range reply.ToolUses {
		tools = append(tools, t.Name)
	}
	s.logf("#%d %s stream=%v model=%s max_tokens=%d msgs=%d prompt=%q -> text=%q tools=%v",
		r.Seq, kind, r.Stream, r.Model, r.MaxTokens, len(r.Messages), trimForLog(lastLine(r.Prompt()), 60),
		trimForLog(reply.Text, 60), tools)

	id := s.newID("msg_")
	model := r.Model
	if model == "" {
		model = "claude-stub"
	}
	in := estimateTokens(r.Body)
	w.Header().Set("request-id", s.newID("req_"))
	if !r.Stream {
		writeJSONMessage(w, id, model, bs, reply.StopReason(), in)
		return
	}
	if err := writeStream(w, id, model, bs, reply.StopReason(), in); err != nil {
		s.logf("request #%d: writing stream: %v", r.Seq, err)
	}
}
