package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// How long a stdio server gets to exit after its input is closed, then after
// SIGTERM, before its process group is killed.
const (
	exitGrace = 300 * time.Millisecond
	termGrace = time.Second
)

// conn is one live connection to a server: one MCP session, and for stdio
// one process (group).
type conn struct {
	sess      *sdk.ClientSession
	transport Transport
	proc      *process           // stdio only
	httpT     *http.Transport    // HTTP only: its idle connections are closed with it
	cancel    context.CancelFunc // SSE only: ends the stream

	// done is closed when the session has ended, for whatever reason;
	// endErr says why (set before done is closed).
	done   chan struct{}
	endErr error

	closeOnce sync.Once
}

// catalog is what a server offers.
type catalog struct {
	info      *sdk.Implementation
	tools     []*sdk.Tool
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
	prompts   []*sdk.Prompt
	// warnings are problems that did not stop the server (a list that
	// failed).
	warnings []string
}

// dialer is what dial needs besides the config.
type dialer struct {
	dir    string
	getenv func(string) string
	client func() *sdk.Client
}

// dial connects to the server and lists what it offers. ctx bounds the
// whole start; the connection itself lives until close.
func (d dialer) dial(ctx context.Context, cfg ServerConfig) (*conn, *catalog, error) {
	var c *conn
	var err error
	switch t := cfg.transport(); t {
	case TransportStdio:
		c, err = d.dialStdio(ctx, cfg)
	case TransportHTTP, TransportSSE:
		c, err = d.dialHTTP(ctx, cfg, t)
	default: // a URL of unknown kind: streamable HTTP, else SSE
		c, err = d.dialHTTP(ctx, cfg, TransportHTTP)
		if err != nil && ctx.Err() == nil {
			var err2 error
			if c, err2 = d.dialHTTP(ctx, cfg, TransportSSE); err2 != nil {
				if err2.Error() != err.Error() {
					err = fmt.Errorf("%w (and over SSE: %v)", err, err2)
				}
			} else {
				err = nil
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	cat, err := list(ctx, c.sess)
	if err != nil {
		c.close()
		return nil, nil, fmt.Errorf("listing its tools: %w", err)
	}
	return c, cat, nil
}

// list asks the server for its tools, resources and prompts, at once. Only
// the tools are essential: a failed list of resources or prompts is a
// warning.
func list(ctx context.Context, s *sdk.ClientSession) (*catalog, error) {
	cat := &catalog{}
	var caps *sdk.ServerCapabilities
	if ir := s.InitializeResult(); ir != nil {
		cat.info, caps = ir.ServerInfo, ir.Capabilities
	}
	if caps == nil {
		caps = &sdk.ServerCapabilities{}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var toolsErr error
	warn := func(what string, err error) {
		mu.Lock()
		cat.warnings = append(cat.warnings, "listing "+what+": "+err.Error())
		mu.Unlock()
	}
	if caps.Tools != nil {
		wg.Go(func() {
			for t, err := range s.Tools(ctx, nil) {
				if err != nil {
					toolsErr = err
					return
				}
				cat.tools = append(cat.tools, t)
			}
		})
	}
	if caps.Resources != nil {
		wg.Go(func() {
			for r, err := range s.Resources(ctx, nil) {
				if err != nil {
					warn("resources", err)
					return
				}
				cat.resources = append(cat.resources, r)
			}
		})
		wg.Go(func() {
			for r, err := range s.ResourceTemplates(ctx, nil) {
				if err != nil {
					warn("resource templates", err)
					return
				}
				cat.templates = append(cat.templates, r)
			}
		})
	}
	if caps.Prompts != nil {
		wg.Go(func() {
			for p, err := range s.Prompts(ctx, nil) {
				if err != nil {
					warn("prompts", err)
					return
				}
				cat.prompts = append(cat.prompts, p)
			}
		})
	}
	wg.Wait()
	if toolsErr != nil {
		return nil, toolsErr
	}
	return cat, nil
}

// connect runs the MCP handshake over t and watches the session.
func (d dialer) connect(ctx context.Context, t sdk.Transport, c *conn) error {
	sess, err := d.client().Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	c.sess = sess
	c.done = make(chan struct{})
	go func() {
		err := sess.Wait()
		if c.proc != nil {
			// The process's end says more than a closed pipe.
			select {
			case <-c.proc.exited:
			case <-time.After(termGrace):
				c.proc.kill()
				<-c.proc.exited
			}
			err = c.proc.exitError("the server exited")
		}
		c.endErr = err
		close(c.done)
	}()
	return nil
}

// close ends the connection: the session, then the process, gently then
// not. It returns when both are gone.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		closed := make(chan struct{})
		go func() {
			if c.sess != nil {
				_ = c.sess.Close()
			}
			close(closed)
		}()
		if c.proc != nil {
			c.proc.stop()
		}
		select {
		case <-closed:
		case <-time.After(2 * termGrace):
			// A session stuck on a dead peer; its transport is closed
			// and it ends on its own.
		}
		if c.cancel != nil {
			c.cancel()
		}
		if c.httpT != nil {
			c.httpT.CloseIdleConnections()
		}
	})
	if c.done != nil {
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			// A session that will not end; its transport is closed,
			// and nothing of it is used again.
		}
	}
}

// kill ends the connection at once (a hung server).
func (c *conn) kill() {
	if c.proc != nil {
		c.proc.kill()
	}
	c.close()
}

// ended reports whether the session is over.
func (c *conn) ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// ---- stdio ----

// process is a stdio server's process. Hearth manages it itself rather
// than with the SDK's CommandTransport so that the whole process group
// (npx and the node it starts) is ended on close, the exit status and the
// end of stderr can be reported, and closing never waits seconds.
type process struct {
	cmd    *exec.Cmd
	stderr *tail
	// our ends of the pipes
	stdin, stdout *os.File
	exited        chan struct{}
	waitErr       error
}

// exitReported is how long a server whose connection failed at start-up
// is given to be seen exiting, so that its exit status is what the user is
// told: one that closed its output is usually gone at once, but on a busy
// machine it may take a while to be reaped (100 ms was too short at times).
// It is waited only on a failed start.
const exitReported = 2 * time.Second

func (d dialer) dialStdio(ctx context.Context, cfg ServerConfig) (*conn, error) {
	p, err := d.startProcess(cfg)
	if err != nil {
		return nil, err
	}
	c := &conn{transport: TransportStdio, proc: p}
	if err := d.connect(ctx, &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, c); err != nil {
		select {
		case <-p.exited:
			// It ended by itself: how it ended is the story.
			return nil, p.exitError("it exited during start-up")
		case <-time.After(exitReported):
		}
		p.kill()
		<-p.exited
		return nil, p.explain(err)
	}
	return c, nil
}

func (d dialer) startProcess(cfg ServerConfig) (*process, error) {
	cmd := exec.Command(cfg.Command, cfg.Args...)
	if cmd.Err != nil {
		if errors.Is(cmd.Err, exec.ErrNotFound) {
			return nil, fmt.Errorf("command %q is not installed or not on PATH: install it, or give its full path in command", cfg.Command)
		}
		return nil, cmd.Err
	}
	cmd.Env = os.Environ()
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+os.Expand(v, d.getenv))
	}
	if cfg.Cwd != "" {
		cmd.Dir = cfg.Cwd
		if !filepath.IsAbs(cmd.Dir) && d.dir != "" {
			cmd.Dir = filepath.Join(d.dir, cmd.Dir)
		}
		if fi, err := os.Stat(cmd.Dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("cwd %q is not a directory: fix cwd in the server's config", cmd.Dir)
		}
	}
	cmd.SysProcAttr = procAttr()
	cmd.WaitDelay = termGrace
	p := &process{cmd: cmd, stderr: &tail{max: 8 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", cfg.Command, err)
	}
	p.stdin, p.stdout = inW, outR
	go func() {
		p.waitErr = cmd.Wait()
		// What the process started goes with it, and the session sees
		// the end at once.
		signalGroup(cmd.Process, true)
		p.closePipes()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) closePipes() {
	p.stdin.Close()
	p.stdout.Close()
}

// stop closes the server's input, then signals its group: TERM, then KILL.
func (p *process) stop() {
	p.stdin.Close()
	select {
	case <-p.exited:
		return
	case <-time.After(exitGrace):
	}
	signalGroup(p.cmd.Process, false)
	select {
	case <-p.exited:
		return
	case <-time.After(termGrace):
	}
	p.kill()
	<-p.exited
}

func (p *process) kill() { signalGroup(p.cmd.Process, true) }

// exitError says how the process ended, with the end of its stderr. Call
// it after exited is closed.
func (p *process) exitError(what string) error {
	if p.waitErr != nil {
		what += " (" + p.waitErr.Error() + ")"
	}
	if s := p.stderr.lastLines(5); s != "" {
		what += "; its last output: " + s
	}
	return errors.New(what)
}

// explain adds the end of stderr to a start error.
func (p *process) explain(err error) error {
	if s := p.stderr.lastLines(5); s != "" {
		return fmt.Errorf("%w; its last output: %s", err, s)
	}
	return err
}

// tail keeps the end of what is written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// lastLines returns the last n non-empty lines, joined by " | ".
func (t *tail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(t.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	s := strings.Join(out, " | ")
	if len(s) > 1000 {
		s = "…" + s[len(s)-1000:]
	}
	return s
}

// ---- HTTP ----

func (d dialer) dialHTTP(ctx context.Context, cfg ServerConfig, t Transport) (*conn, error) {
	ht := http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: &headers{base: ht, h: expandAll(cfg.Headers, d.getenv)}}
	c := &conn{transport: t, httpT: ht}
	var st sdk.Transport
	if t == TransportSSE {
		// The SSE stream lives as long as the context its Connect gets:
		// give it the connection's, and bound only the start by ctx.
		life, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		st = &detached{Transport: &sdk.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc}, life: life, cancel: cancel}
	} else {
		st = &sdk.StreamableClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxRetries: 2}
	}
	if err := d.connect(ctx, st, c); err != nil {
		if c.cancel != nil {
			c.cancel()
		}
		ht.CloseIdleConnections()
		return nil, explainHTTP(cfg, err)
	}
	return c, nil
}

// detached connects a transport with a context of its own, so that the
// connection outlives the start's deadline; the start's context still
// bounds the wait.
type detached struct {
	sdk.Transport
	life   context.Context
	cancel context.CancelFunc
}

func (d *detached) Connect(ctx context.Context) (sdk.Connection, error) {
	type result struct {
		c   sdk.Connection
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := d.Transport.Connect(d.life)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		d.cancel()
		if r := <-ch; r.c != nil {
			r.c.Close()
		}
		return nil, ctx.Err()
	}
}

// explainHTTP turns the commonest HTTP start failures into what to do.
func explainHTTP(cfg ServerConfig, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"):
		return fmt.Errorf("nothing answers at %s (connection refused): start the server, or fix url in [mcp_servers.%s]", cfg.Target(), cfg.Name)
	case strings.Contains(msg, "no such host"):
		return fmt.Errorf("the host of %s is unknown: fix url in [mcp_servers.%s]", cfg.Target(), cfg.Name)
	case strings.Contains(msg, "Unauthorized") || strings.Contains(msg, "Forbidden"):
		return fmt.Errorf("%s refused the credentials (%v): check the headers in [mcp_servers.%s]", cfg.Target(), err, cfg.Name)
	}
	return err
}

// headers adds the configured headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

func expandAll(m map[string]string, getenv func(string) string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.Expand(v, getenv)
	}
	return out
}

var _ io.Writer = (*tail)(nil)
