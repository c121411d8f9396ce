// Package mcpserver is engram's MCP server (`engram-worker mcp`): the tools
// through which the model itself reaches the user's long-term memory, where
// the prompt hook decides for it. memory_recall searches episodes and
// beliefs with the prompt hook's ranking, memory_expand reads one in full
// (an access, as for the hook's bites), memory_forget deletes one,
// memory_save stores what the user asks to remember, memory_status reports
// the store and the installation.
//
// Claude Code starts the server over stdio in the session's working
// directory, which gives the project: its git root, as the hooks resolve
// it. Project-scoped memories are only ever recalled inside their project;
// global ones everywhere.
//
// The server lives as long as the session, next to the worker. It never
// creates or migrates the database, opens it lazily (a session may start
// before the first worker run), and gives writes a short busy timeout: its
// own write transactions are one statement long, and when the worker holds
// the lock the tool says so instead of waiting. Every tool failure is a
// tool error the model reads; a panic in a tool is one too, never a crashed
// server.
//
// What the tools show of memories comes back in the session's transcript
// as a tool result. It is framed like the prompt hook's injected context
// (package inject), so that capture leaves it out and engram does not
// re-learn its own output.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/engram-memory/engram/internal/config"
	"github.com/engram-memory/engram/internal/logx"
	"github.com/engram-memory/engram/internal/setup"
	"github.com/engram-memory/engram/internal/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's name in the MCP handshake.
const Name = "engram"

// Defaults of Options.
const (
	DefaultBusyTimeout = 2 * time.Second
	DefaultCallTimeout = 30 * time.Second
)

// Options configure a Server.
type Options struct {
	Config config.Config
	// Project is the git root of the directory the client started the
	// server in ("" when unknown: only global memories are recalled).
	Project string
	// SessionID is the Claude Code session the server serves (the client
	// sets CLAUDE_CODE_SESSION_ID for it); saved memories carry it, as
	// captured ones carry theirs. May be empty.
	SessionID string
	// UserConfig is Claude Code's user configuration file, where status
	// looks for the server's registration; empty: setup.UserConfigFor.
	UserConfig string
	// Version is reported in the MCP handshake.
	Version string
	Log     *slog.Logger
	// BusyTimeout is how long a write waits for the worker's lock.
	BusyTimeout time.Duration
	// CallTimeout bounds one tool call.
	CallTimeout time.Duration
	// Now is the clock (tests).
	Now func() time.Time
}

// Server is the MCP server and the store it opens on first use.
type Server struct {
	opts Options
	cfg  config.Config
	log  *slog.Logger
	srv  *mcp.Server

	mu sync.Mutex
	db *store.DB
}

// instructions reach the model with the server's tools.
const instructions = "engram is the user's long-term memory across Claude Code sessions. The notes that matter " +
	"for a prompt are injected automatically; use memory_recall to look further back, memory_expand to read a " +
	"memory in full, memory_save when the user asks you to remember something, memory_forget when the user asks " +
	"you to forget one, memory_status when something seems wrong with engram."

// New returns a server with the five tools.
func New(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = logx.Discard()
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.UserConfig == "" {
		opts.UserConfig = setup.UserConfigFor(opts.Config)
	}
	s := &Server{opts: opts, cfg: opts.Config, log: opts.Log}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: Name, Title: "engram long-term memory", Version: opts.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: opts.Log, Capabilities: &mcp.ServerCapabilities{}})
	s.addTools()
	return s
}

// MCP is the underlying SDK server (tests connect it to an in-memory
// transport).
func (s *Server) MCP() *mcp.Server { return s.srv }

// Run serves one client on t until it disconnects or ctx ends. A client
// that closes the connection ends it normally, and so does a canceled ctx
// (the client ending the process with a signal at the session's end):
// neither is an error, and neither is logged as one (the SDK's own
// Server.Run logs a canceled context at level ERROR).
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ss, err := s.srv.Connect(ctx, t, nil)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		s.log.Info("mcp session ended by a signal")
		return nil
	case err := <-ended:
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
}

// RunStdio serves the client on stdin and stdout.
func (s *Server) RunStdio(ctx context.Context) error { return s.Run(ctx, &mcp.StdioTransport{}) }

// Close closes the store.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db == nil {
		return nil
	}
	err := s.db.Close()
	s.db = nil
	return err
}

// errNoStore is the tool error for a database the worker has not created.
var errNoStore = errors.New("engram has no memory store yet: the worker creates it on its first run " +
	"(engram-worker run, which the scheduler set up by engram-worker setup runs every 15 minutes)")

// store opens the database on first use: never created or migrated here.
func (s *Server) store(ctx context.Context) (*store.DB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		return s.db, nil
	}
	db, err := store.Open(ctx, s.cfg.DBPath(), store.Options{MustExist: true, BusyTimeout: s.opts.BusyTimeout})
	if errors.Is(err, store.ErrNotReady) {
		return nil, fmt.Errorf("%w (%v)", errNoStore, err)
	}
	if err != nil {
		return nil, err
	}
	s.db = db
	return db, nil
}

// busy rewrites a lock timeout as something the model can act on.
func busy(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "database is locked") || strings.Contains(msg, "SQLITE_BUSY") {
		return fmt.Errorf("engram's store is busy (the worker is writing to it); try again in a moment (%v)", err)
	}
	return err
}

// tool registers a handler returning text. Its input schema is given as
// JSON (the SDK validates arguments against it before the handler runs);
// In is what the arguments decode into.
func tool[In any](s *Server, t *mcp.Tool, schema string, h func(ctx context.Context, in In) (string, error)) {
	t.InputSchema = json.RawMessage(schema)
	mcp.AddTool(s.srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, _ any, err error) {
		start := s.opts.Now()
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("tool panicked", "tool", t.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				res, err = nil, fmt.Errorf("%s failed inside engram (%v); the error is in engram's mcp.log", t.Name, p)
			}
		}()
		ctx, cancel := context.WithTimeout(ctx, s.opts.CallTimeout)
		defer cancel()
		text, err := h(ctx, in)
		if err != nil {
			err = busy(err)
			s.log.Warn("tool error", "tool", t.Name, "err", err, "ms", s.opts.Now().Sub(start).Milliseconds())
			return nil, nil, err
		}
		s.log.Info("tool", "tool", t.Name, "ms", s.opts.Now().Sub(start).Milliseconds())
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	})
}
