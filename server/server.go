// Package server is Hearth's HTTP API, the backend of the web UI and of any
// program that drives Hearth over HTTP. Under /v1 it serves sessions
// (create, list, search, show, rename, archive, delete, fork), turns whose
// events stream as Server-Sent Events in the event contract of
// docs/events.md (with reconnection by Last-Event-ID), cancellation,
// undo, redo and rewind of what the agent changed, approvals, the model list,
// provider health, token usage and its cost, and the workspaces the store
// knows; outside /v1 it serves the web UI's static
// files. The OpenAPI document (openapi.json, served at /v1/openapi.json) is
// the reference for every route; docs/api.md explains how to use them.
//
// It is safe by default: every /v1 request needs the bearer token; the Host
// header must name the loopback interface (or a configured name) with the
// listening port, which defeats DNS rebinding; requests from other origins
// are refused; request bodies are size-limited; and a session runs one turn
// at a time (a second gets 409 Conflict, it never interleaves).
//
// Turns do not belong to the connection that started them: a client that
// goes away can reconnect and get every event it missed. A turn ends when the
// model has answered, when it is cancelled (POST /v1/sessions/{id}/cancel),
// when an approval waits longer than Options.ApprovalTimeout, or when the
// server is closed.
package server

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/session"
)

// Defaults for Options.
const (
	DefaultMaxBodyBytes    = 1 << 20
	DefaultApprovalTimeout = 15 * time.Minute
	DefaultKeepEvents      = 5 * time.Minute
	DefaultMaxTurnEvents   = 4 << 20
	// DefaultHeartbeat is how often an idle event stream gets a comment
	// line, so that proxies keep it open and a vanished client is noticed.
	DefaultHeartbeat = 15 * time.Second
)

// Options configure a Server. The agent it serves (New's first argument)
// decides the rest: the model, the API profile's tools and approval mode,
// the workspace, the session store, titles and the MCP servers.
type Options struct {
	// Token is the bearer token every /v1 request must carry. Required.
	Token string
	// AllowedHosts are names accepted in the Host header besides
	// localhost, 127.0.0.1 and [::1] ("hearth.lan", or "hearth.lan:443"
	// for a name served on another port, behind a proxy). A name without a
	// port must come with the listening port.
	AllowedHosts []string
	// AllowedOrigins are origins other than the server's own allowed to
	// call the API from a browser ("https://app.example",
	// "wails://wails"); they get CORS headers.
	AllowedOrigins []string
	// MaxBodyBytes bounds a request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// ProviderURL is the model server's address, reported by
	// GET /v1/health when the server cannot be reached.
	ProviderURL string
	// ApprovalTimeout is how long a turn waits for an answer to an
	// approval before the call is denied (0: DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// KeepEvents is how long a finished turn's events stay available to
	// clients that reconnect (0: DefaultKeepEvents).
	KeepEvents time.Duration
	// MaxTurnEvents bounds the bytes of events kept per turn for
	// reconnection; past it the oldest are dropped (0:
	// DefaultMaxTurnEvents).
	MaxTurnEvents int
	// Heartbeat is how often an idle event stream gets a keep-alive
	// comment (0: DefaultHeartbeat).
	Heartbeat time.Duration
	// Assets are the web UI's files (nil: the UI embedded in the binary).
	Assets fs.FS
	// Version is reported by GET /v1/health.
	Version string
	// Currency labels costs in GET /v1/usage (the user's [pricing]
	// currency, "USD"; nothing is converted). Empty: none.
	Currency string
	Log      *slog.Logger
	// Workspaces, if set, gives the server an agent per workspace, so
	// that it serves every workspace the store knows: each session runs in
	// its own workspace's agent (its file tools and commands confined to
	// that folder), sessions are made in any known workspace (POST
	// /v1/sessions with "workspace"), and a folder added with POST
	// /v1/workspaces is checked by it. Nil: the server's agent runs every
	// session, in its own workspace.
	Workspaces Workspaces
}

// Workspaces gives a server that serves many workspaces their agents
// (hearth serve's is loader.Agents).
type Workspaces interface {
	// Agent returns the agent of the workspace path ("": the server's
	// own), as its trust now stands; an error wrapping
	// session.ErrNotFound for a workspace the store does not know. The
	// server does not close it.
	Agent(ctx context.Context, path string) (*hearth.Agent, error)
	// Check says why a folder cannot be a workspace (the filesystem
	// root, the home directory), nil when it can.
	Check(path string) error
	// Override returns the trust in force for path when it is not the
	// store's (hearth serve --trust, for the server's own workspace), and
	// where it came from ("--trust"); "" when the store's applies.
	Override(ctx context.Context, path string) (session.Trust, string)
	// TrustChanged says the user chose path's trust through the API:
	// --trust no longer holds there.
	TrustChanged(path string)
}

// Server serves the API. It is an http.Handler; Close it when done.
type Server struct {
	o       Options
	agent   *hearth.Agent
	store   session.Store
	log     *slog.Logger
	mux     *http.ServeMux
	assets  fs.FS
	hosts   map[string]bool // allowed Host names (lower case, with or without port)
	origins map[string]bool

	ctx     context.Context // ends when the server closes
	cancel  context.CancelFunc
	wg      sync.WaitGroup // running turns
	streams atomic.Int64   // open event streams

	mu     sync.Mutex
	closed bool
	turns  map[string]*turn // by session: the running or last kept turn
	// known holds sessions seen to exist (created, listed, read, run), so
	// that starting a turn need not ask the store first. A session deleted
	// by another process while listed here is created again by its next
	// turn, empty.
	known map[string]bool
	// wsOf holds the workspaces of the sessions seen, which never change:
	// a session runs in its own workspace's agent (Options.Workspaces).
	wsOf map[string]string

	// relay is the store's, when several processes share it: then remote
	// holds mirrors of their turns (by turn id), and replies the requests
	// waiting for an answer (relay.go).
	relay     session.Relay
	remote    map[string]*turn
	replies   map[string]chan relayMsg
	relayDone chan struct{}
	checking  atomic.Bool    // a check of the mirrors runs
	purging   atomic.Bool    // a purge of old turns runs
	bg        sync.WaitGroup // the relay's background work (relay.go)
}

// New returns a Server of the agent a (hearth.New), which it does not
// close.
func New(a *hearth.Agent, o Options) (*Server, error) {
	switch {
	case a == nil:
		return nil, errors.New("server: no agent")
	case len(o.Token) < 16:
		return nil, errors.New("server: the API token must be at least 16 characters (LoadOrCreateToken makes one)")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.ApprovalTimeout <= 0 {
		o.ApprovalTimeout = DefaultApprovalTimeout
	}
	if o.KeepEvents <= 0 {
		o.KeepEvents = DefaultKeepEvents
	}
	if o.MaxTurnEvents <= 0 {
		o.MaxTurnEvents = DefaultMaxTurnEvents
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, agent: a, store: a.Store(), log: o.Log, assets: o.Assets,
		turns: map[string]*turn{}, known: map[string]bool{}, wsOf: map[string]string{}}
	if s.assets == nil {
		s.assets = embeddedUI()
	}
	var err error
	if s.hosts, err = hostSet(o.AllowedHosts); err != nil {
		return nil, err
	}
	if s.origins, err = originSet(o.AllowedOrigins); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.relay = session.RelayOf(s.store); s.relay != nil {
		s.startRelay()
	}
	s.mux = http.NewServeMux()
	for _, rt := range routes {
		s.mux.HandleFunc(rt.Method+" "+rt.Path, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
	}
	s.mux.HandleFunc("/v1/", s.notFound)
	s.mux.HandleFunc("/", s.static)
	return s, nil
}

// ServeHTTP checks the request (Host, Origin, token, body size) and routes
// it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guard(s.mux).ServeHTTP(w, r)
}

// Close cancels the running turns, waits for them to finish (they save
// what they have, and their streams get their last events), then ends every
// event stream. New turns are refused from the start. The store and the
// agent are the caller's to close.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for _, t := range s.turns {
		t.cancel()
		if t.evict != nil {
			t.evict.Stop()
		}
	}
	for _, t := range s.remote {
		if t.evict != nil {
			t.evict.Stop()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	if s.relay != nil {
		// The turns' last events reach the store before it closes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		s.relay.Flush(ctx)
		cancel()
	}
	s.cancel()
	if s.relayDone != nil {
		<-s.relayDone
	}
	s.bg.Wait()
	return nil
}

// Running reports how many turns are running now: a desktop app asks
// before it quits during one.
func (s *Server) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, t := range s.turns {
		t.mu.Lock()
		if !t.done {
			n++
		}
		t.mu.Unlock()
	}
	return n
}

// route is one API endpoint.
type route struct {
	Method, Path string
	handle       func(s *Server, w http.ResponseWriter, r *http.Request)
}

// routes are the API's endpoints; openapi.json documents each (a test
// checks that they agree).
var routes = []route{
	{"GET", "/v1/sessions", (*Server).listSessions},
	{"POST", "/v1/sessions", (*Server).createSession},
	{"GET", "/v1/sessions/{id}", (*Server).getSession},
	{"PATCH", "/v1/sessions/{id}", (*Server).patchSession},
	{"DELETE", "/v1/sessions/{id}", (*Server).deleteSession},
	{"POST", "/v1/sessions/{id}/title", (*Server).titleSession},
	{"POST", "/v1/sessions/{id}/turns", (*Server).postTurn},
	{"GET", "/v1/sessions/{id}/events", (*Server).getEvents},
	{"POST", "/v1/sessions/{id}/cancel", (*Server).cancelTurn},
	{"POST", "/v1/sessions/{id}/undo", (*Server).undoSession},
	{"POST", "/v1/sessions/{id}/redo", (*Server).redoSession},
	{"POST", "/v1/sessions/{id}/rewind", (*Server).rewindSession},
	{"POST", "/v1/sessions/{id}/fork", (*Server).forkSession},
	{"GET", "/v1/sessions/{id}/checkpoints", (*Server).listCheckpoints},
	{"POST", "/v1/approvals/{id}", (*Server).answerApproval},
	{"GET", "/v1/models", (*Server).listModels},
	{"GET", "/v1/health", (*Server).health},
	{"GET", "/v1/usage", (*Server).usage},
	{"GET", "/v1/workspaces", (*Server).listWorkspaces},
	{"POST", "/v1/workspaces", (*Server).addWorkspace},
	{"PATCH", "/v1/workspaces", (*Server).patchWorkspace},
	{"DELETE", "/v1/workspaces", (*Server).deleteWorkspace},
	{"GET", "/v1/openapi.json", (*Server).openAPI},
}
