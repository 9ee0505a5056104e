// Package mcp is Hearth's Model Context Protocol client: it starts the
// configured MCP servers (stdio, streamable HTTP or SSE, with the official
// SDK github.com/modelcontextprotocol/go-sdk), discovers their tools,
// resources and prompts, and offers the tools to the agent as ordinary
// Hearth tools named server__tool. Calls go through the agent like any
// other tool's, approvals included: a server's tool is an Execute tool
// unless the server marks it read-only.
//
// A Manager runs the servers of one session. Start launches them all in
// parallel and returns at once; Prepare (for the agent's first turn) waits
// for the ones still starting, so that the model sees their tools. A server
// that fails to start, crashes or stops answering is reported by Status,
// never takes the agent down, and is started again on the next use.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/tool"
)

// State is where a server is in its life.
type State string

// The states of a server.
const (
	// StateIdle: not started yet.
	StateIdle State = "idle"
	// StateStarting: being started (launch, handshake, lists).
	StateStarting State = "starting"
	// StateReady: connected; its tools are offered.
	StateReady State = "ready"
	// StateFailed: the last start failed (Error says why); the next use,
	// or the next turn, tries again.
	StateFailed State = "failed"
	// StateCrashed: it was ready, then exited or stopped answering (Error
	// says how); the next call starts it again.
	StateCrashed State = "crashed"
	// StateClosed: the Manager is closed.
	StateClosed State = "closed"
)

// ServerStatus is what is known of one server, for `hearth mcp list`, the
// terminal UI's /mcp and the API's health.
type ServerStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Target is the command line or URL (no header values).
	Target string `json:"target"`
	State  State  `json:"state"`
	// Error says why a server failed or crashed, and what to do.
	Error string `json:"error,omitempty"`
	// Warnings are problems that did not stop the server.
	Warnings []string `json:"warnings,omitempty"`
	// Server is the name and version the server reports.
	Server string `json:"server,omitempty"`
	// Tools are the names the tools are offered under (after the config's
	// include and exclude); Resources and Prompts count what it offers.
	Tools     []string `json:"tools"`
	Resources int      `json:"resources"`
	Prompts   []string `json:"prompts,omitempty"`
	// Since is when the server entered its state; StartMS is how long its
	// last successful start took, in milliseconds.
	Since   time.Time `json:"since"`
	StartMS int64     `json:"start_ms,omitempty"`
	// Starts counts successful starts (more than one: it was restarted).
	Starts int `json:"starts"`
	// PID is a running stdio server's process id.
	PID int `json:"pid,omitempty"`
}

// Options configure a Manager.
type Options struct {
	Servers []ServerConfig
	// Dir is the workspace: relative cwd settings are taken from it.
	Dir string
	// Roots, when set, are offered to servers as the client's roots
	// (absolute directories). Servers such as server-filesystem then work
	// in them instead of the directories their command line names, so the
	// default is none.
	Roots []string
	// ImageDir, when set, is where images that tools return are saved, so
	// that the model's answer can point at them; otherwise they are
	// described only. CallTool always returns their bytes.
	ImageDir string
	// Getenv expands $VAR in env and header values (nil: os.Getenv).
	Getenv func(string) string
	Logger *slog.Logger
	// RetryAfter is the least time between automatic restarts of a server
	// that failed to start (0: 30s). A call of one of its tools does not
	// wait for it.
	RetryAfter time.Duration
	// PrepareWait bounds how long the first turn waits for servers still
	// starting (0: 10s; each server's start timeout bounds it too). A
	// server still starting then goes on; its tools join the turn at the
	// next model call after it is ready.
	PrepareWait time.Duration
}

// Manager runs the MCP servers of a session. Its methods are safe for
// concurrent use.
type Manager struct {
	opts    Options
	log     *slog.Logger
	servers []*server
	byName  map[string]*server

	ctx    context.Context // the Manager's life: cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	started  bool
	prepared bool
	sinks    []*sink
}

// sink is a registry that wants the servers' tools.
type sink struct {
	reg   *tool.Registry
	allow func(t tool.Tool) bool
	added map[string]bool
}

// New returns a Manager for the servers; none is started until Start (or a
// use). A config that cannot work (two commands, a bad URL) is an error
// here, before anything runs.
func New(o Options) (*Manager, error) {
	if o.Getenv == nil {
		o.Getenv = osGetenv
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = 30 * time.Second
	}
	if o.PrepareWait <= 0 {
		o.PrepareWait = 10 * time.Second
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{opts: o, log: log, byName: map[string]*server{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, c := range o.Servers {
		if err := c.Validate(); err != nil {
			return nil, err
		}
		if _, dup := m.byName[c.Name]; dup {
			return nil, fmt.Errorf("mcp server %q is configured twice", c.Name)
		}
		s := &server{m: m, cfg: c, state: StateIdle, since: time.Now(), proxies: map[string]*proxy{}, progress: map[string]func(string){}}
		m.servers = append(m.servers, s)
		m.byName[c.Name] = s
	}
	return m, nil
}

// Start launches every server in parallel and returns at once.
func (m *Manager) Start() {
	m.mu.Lock()
	if m.started || m.closed {
		m.mu.Unlock()
		return
	}
	m.started = true
	m.mu.Unlock()
	for _, s := range m.servers {
		s.begin()
	}
}

// Wait blocks until no server is starting (each is ready or has failed), or
// ctx is done. It starts the servers if Start was not called.
func (m *Manager) Wait(ctx context.Context) error {
	m.Start()
	for _, s := range m.servers {
		s.mu.Lock()
		at := s.attempt
		s.mu.Unlock()
		if at == nil {
			continue
		}
		select {
		case <-at.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Prepare is the agent's hook before a turn (agent.Agent.Prepare): the
// first time it waits for the servers still starting (within each one's
// start timeout, and PrepareWait), so that the first prompt sees their
// tools; later it starts again, in the background, servers that failed or
// crashed (at most once per RetryAfter), without waiting.
func (m *Manager) Prepare(ctx context.Context) {
	m.mu.Lock()
	first := !m.prepared
	m.prepared = true
	m.mu.Unlock()
	if first {
		wctx, cancel := context.WithTimeout(ctx, m.opts.PrepareWait)
		defer cancel()
		if m.Wait(wctx) != nil && ctx.Err() == nil {
			for _, s := range m.Status() {
				if s.State == StateStarting {
					m.log.Warn("mcp server still starting: its tools join when it is ready", "server", s.Name, "waited", m.opts.PrepareWait)
				}
			}
		}
		return
	}
	for _, s := range m.servers {
		s.mu.Lock()
		retry := (s.state == StateFailed || s.state == StateCrashed) && time.Since(s.since) >= m.opts.RetryAfter
		s.mu.Unlock()
		if retry {
			s.begin()
		}
	}
}

// Attach offers the servers' tools in reg: those ready now at once, others
// as they become ready. allow filters them (nil: all), for a profile's
// patterns (tool.Allows: names and kinds). A name already taken in reg (a
// built-in tool) is skipped with a warning in the server's status. Detach
// (the function returned) stops offering tools to reg: call it when the
// registry's session ends.
func (m *Manager) Attach(reg *tool.Registry, allow func(t tool.Tool) bool) (detach func()) {
	sk := &sink{reg: reg, allow: allow, added: map[string]bool{}}
	m.mu.Lock()
	m.sinks = append(m.sinks, sk)
	m.mu.Unlock()
	for _, s := range m.servers {
		m.publishTo(s, sk)
	}
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for i, x := range m.sinks {
			if x == sk {
				m.sinks = append(m.sinks[:i], m.sinks[i+1:]...)
				return
			}
		}
	}
}

// publish offers a server's current tools to every attached registry.
func (m *Manager) publish(s *server) {
	m.mu.Lock()
	sinks := append([]*sink(nil), m.sinks...)
	m.mu.Unlock()
	for _, sk := range sinks {
		m.publishTo(s, sk)
	}
}

// publishTo adds the server's tools that sk has not seen. The Manager's
// lock keeps two publications to one registry apart.
func (m *Manager) publishTo(s *server, sk *sink) {
	tools := s.tools()
	var failed []string
	m.mu.Lock()
	for _, t := range tools {
		name := t.Spec().Name
		if sk.added[name] || (sk.allow != nil && !sk.allow(t)) {
			continue
		}
		sk.added[name] = true
		if err := tool.CheckSchema(t.Spec().Parameters); err != nil {
			failed = append(failed, fmt.Sprintf("tool %s not offered: %v", name, err))
			continue
		}
		if err := sk.reg.Add(t); err != nil {
			failed = append(failed, fmt.Sprintf("tool %s not offered: %v", name, err))
		}
	}
	m.mu.Unlock()
	for _, f := range failed {
		s.warn(f)
		m.log.Warn("mcp tool not offered", "server", s.cfg.Name, "problem", f)
	}
}

// Tools returns the tools of the servers that are, or were, ready, sorted
// by name.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	for _, s := range m.servers {
		out = append(out, s.tools()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	return out
}

// Status reports every server, in the config's order (by name).
func (m *Manager) Status() []ServerStatus {
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// Names lists the configured servers.
func (m *Manager) Names() []string {
	out := make([]string, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.cfg.Name
	}
	return out
}

// Restart stops a server (if running) and starts it again, waiting until it
// is ready or has failed.
func (m *Manager) Restart(ctx context.Context, name string) error {
	s, err := m.server(name)
	if err != nil {
		return err
	}
	s.drop(nil, "", false)
	at := s.begin()
	if at == nil {
		return errors.New("the MCP servers are closed")
	}
	select {
	case <-at.done:
		return at.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (m *Manager) server(name string) (*server, error) {
	s, ok := m.byName[name]
	if !ok {
		return nil, fmt.Errorf("no MCP server %q (configured: %s)", name, strings.Join(m.Names(), ", "))
	}
	return s, nil
}

// Close stops every server and waits for them to be gone. Tools of a closed
// Manager fail with a clear error.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	for _, s := range m.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	wg.Wait()
	m.wg.Wait()
	return nil
}

// client makes the SDK client for one connection of s.
func (m *Manager) client(s *server) *sdk.Client {
	c := sdk.NewClient(&sdk.Implementation{Name: "hearth", Version: buildinfo.Version}, &sdk.ClientOptions{
		Logger:                      m.log,
		ProgressNotificationHandler: s.onProgress,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				s.refreshTools()
			}()
		},
	})
	for _, r := range m.opts.Roots {
		// Roots are deprecated by the protocol's 2026-07-28 version but
		// still part of it, and servers of earlier versions ask for them:
		// Hearth offers them until the SDK drops them.
		//lint:ignore SA1019 roots stay offered during the deprecation window
		c.AddRoots(&sdk.Root{URI: fileURI(r), Name: r})
	}
	return c
}
