package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-agent/hearth/tool"
)

// errClosed is what a closed Manager's tools say.
var errClosed = errors.New("the MCP servers were shut down with the session")

// errSilent ends a call the server stopped answering.
var errSilent = errors.New("no answer")

// pingTimeout bounds the check of a server whose call timed out (or the
// call timeout, if shorter).
const pingTimeout = 5 * time.Second

// server is one configured server and its current connection.
type server struct {
	m   *Manager
	cfg ServerConfig

	mu       sync.Mutex
	state    State
	errText  string
	warnings []string
	since    time.Time
	conn     *conn
	attempt  *attempt // the start under way
	cat      *catalog // what it offered at its last start
	startDur time.Duration
	starts   int
	proxies  map[string]*proxy
	order    []tool.Tool // proxies, then the resource reader, as offered
	reader   bool
	progress map[string]func(string)
	nextTok  int
}

// attempt is one start; done is closed when it has succeeded or failed.
type attempt struct {
	done chan struct{}
	err  error
}

// begin starts the server unless it is ready or already starting. It
// returns the start to wait on: nil when the server is ready or closed.
func (s *server) begin() *attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateClosed {
		return nil
	}
	if s.attempt != nil && s.state == StateStarting {
		return s.attempt
	}
	if c := s.conn; c != nil {
		if !c.ended() {
			return nil
		}
		s.conn = nil // it died and the watcher has not said so yet
		s.m.goFunc(c.close)
	}
	at := &attempt{done: make(chan struct{})}
	s.attempt = at
	s.state, s.since = StateStarting, time.Now()
	if !s.m.goFunc(func() { s.start(at) }) {
		s.attempt = nil
		s.state = StateClosed
		at.err = errClosed
		close(at.done)
	}
	return at
}

// start connects, lists, and makes the server's tools.
func (s *server) start(at *attempt) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(s.m.ctx, s.cfg.startTimeout())
	d := dialer{dir: s.m.opts.Dir, getenv: s.m.opts.Getenv, client: func() *sdk.Client { return s.m.client(s) }}
	c, cat, err := d.dial(ctx, s.cfg)
	switch {
	case err == nil:
	case s.m.ctx.Err() != nil:
		err = errClosed
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		err = fmt.Errorf("it did not finish starting within %s (%v): check that it runs by hand, or raise timeout in [mcp_servers.%s]", s.cfg.startTimeout(), err, s.cfg.Name)
	}
	cancel()
	s.mu.Lock()
	if s.state == StateClosed && err == nil {
		err = errClosed
		s.mu.Unlock()
		c.close()
		s.mu.Lock()
	}
	now := time.Now()
	if err != nil {
		if s.state != StateClosed {
			s.state, s.since, s.errText = StateFailed, now, err.Error()
		}
	} else {
		s.conn, s.cat = c, cat
		s.state, s.since, s.errText = StateReady, now, ""
		s.warnings = append([]string(nil), cat.warnings...)
		s.startDur = now.Sub(t0)
		s.starts++
		s.makeTools()
	}
	at.err = err
	if err != nil {
		s.attempt = nil
		s.mu.Unlock()
		if err != errClosed {
			s.m.log.Warn("mcp server did not start", "server", s.cfg.Name, "error", err)
		}
		close(at.done)
		return
	}
	s.mu.Unlock()
	s.m.log.Debug("mcp server ready", "server", s.cfg.Name, "tools", len(cat.tools), "took", s.startDur)
	// Its tools are in the registries before anyone waiting hears that
	// it is ready: the attempt stays current until then, so that Wait,
	// which looks for it, waits for them too.
	s.m.publish(s)
	s.mu.Lock()
	if s.attempt == at {
		s.attempt = nil
	}
	s.mu.Unlock()
	close(at.done)
	s.m.goFunc(func() { s.watch(c) })
}

// watch marks the server crashed when its connection ends by itself.
func (s *server) watch(c *conn) {
	select {
	case <-c.done:
	case <-s.m.ctx.Done():
		return
	}
	s.mu.Lock()
	if s.conn != c {
		s.mu.Unlock()
		return // closed on purpose
	}
	s.conn = nil
	s.state, s.since = StateCrashed, time.Now()
	s.errText = describeEnd(c.endErr) + "; it is started again on the next call"
	s.mu.Unlock()
	s.m.log.Warn("mcp server stopped", "server", s.cfg.Name, "error", c.endErr)
	c.close()
}

func describeEnd(err error) string {
	if err == nil {
		return "the server closed the connection"
	}
	return err.Error()
}

// drop ends the connection c (nil: the current one). With why set the
// server is reported crashed for that reason; hard kills a stdio server at
// once.
func (s *server) drop(c *conn, why string, hard bool) {
	s.mu.Lock()
	cur := s.conn
	if cur == nil || (c != nil && c != cur) {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	if s.state != StateClosed {
		s.state, s.since = StateCrashed, time.Now()
		s.errText = why
		if why == "" {
			s.state = StateIdle
		}
	}
	s.mu.Unlock()
	if hard {
		cur.kill()
	} else {
		cur.close()
	}
}

// shutdown closes the server for good.
func (s *server) shutdown() {
	s.mu.Lock()
	s.state, s.since = StateClosed, time.Now()
	c := s.conn
	s.conn = nil
	at := s.attempt
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	if at != nil {
		<-at.done
	}
}

// ensure returns a live connection, starting the server if it is not
// running and waiting (within its start timeout, and ctx) for it.
func (s *server) ensure(ctx context.Context) (*conn, error) {
	for range 3 {
		s.mu.Lock()
		if s.state == StateClosed {
			s.mu.Unlock()
			return nil, errClosed
		}
		if c := s.conn; c != nil && !c.ended() {
			s.mu.Unlock()
			return c, nil
		}
		s.mu.Unlock()
		at := s.begin()
		if at == nil {
			continue
		}
		select {
		case <-at.done:
			if at.err != nil {
				return nil, at.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, errors.New("it stops as soon as it starts")
}

// unavailable says why a server cannot take a call.
func (s *server) unavailable(err error) error {
	if err == errClosed {
		return err
	}
	return fmt.Errorf("MCP server %s is not available: %v", s.cfg.Name, err)
}

// call calls a tool of the server. progress, if set, gets the server's
// progress notes. The call ends with an error when the server is silent
// for its call timeout (progress restarts the wait), crashes, or ctx ends.
func (s *server) call(ctx context.Context, name string, args json.RawMessage, progress func(string)) (*sdk.CallToolResult, error) {
	res, c, err := s.callOnce(ctx, name, args, progress)
	if err != nil && c != nil && rejected(err) && ctx.Err() == nil {
		// The request never ran (the server lost the session, or the
		// connection was refused): start again, and send it once more.
		s.drop(c, "", true)
		res, c, err = s.callOnce(ctx, name, args, progress)
	}
	if err != nil && c != nil {
		return nil, s.callError(ctx, c, err)
	}
	return res, err
}

// rejected reports whether err says the request was turned away before
// the server ran it.
func rejected(err error) bool {
	if errors.Is(err, sdk.ErrSessionMissing) {
		return true
	}
	found := false
	walkErrors(err, func(e error) {
		if we, ok := e.(*jsonrpc.Error); ok && we.Code == codeRejected {
			found = true
		}
	})
	return found
}

// The SDK's codes for errors of the transport, not of the server.
const (
	codeRejected      = -32005
	codeServerClosing = -32004
	codeClientClosing = -32003
)

// walkErrors calls f on err and everything it wraps.
func walkErrors(err error, f func(error)) {
	if err == nil {
		return
	}
	f(err)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		walkErrors(u.Unwrap(), f)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			walkErrors(e, f)
		}
	}
}

// serverError returns the server's own JSON-RPC error in err, if the
// server answered with one (and not the transport).
func serverError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	transport := false
	walkErrors(err, func(e error) {
		if w, ok := e.(*jsonrpc.Error); ok {
			switch w.Code {
			case codeRejected, codeServerClosing, codeClientClosing:
				transport = true
			default:
				if we == nil {
					we = w
				}
			}
		}
	})
	if transport || errors.Is(err, sdk.ErrSessionMissing) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return we
}

// callOnce makes one attempt; it returns the connection it used (nil when
// none could be had, err then says why).
func (s *server) callOnce(ctx context.Context, name string, args json.RawMessage, progress func(string)) (*sdk.CallToolResult, *conn, error) {
	c, err := s.ensure(ctx)
	if err != nil {
		return nil, nil, s.unavailable(err)
	}
	timeout := s.cfg.callTimeout()
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(timeout, func() { cancel(errSilent) })
	defer timer.Stop()
	tok := s.listen(func(msg string) {
		timer.Reset(timeout)
		if progress != nil {
			progress(msg)
		}
	})
	defer s.unlisten(tok)
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken(tok)
	res, err := c.sess.CallTool(cctx, params)
	if err != nil && context.Cause(cctx) == errSilent {
		err = &silentError{err: err, timeout: timeout}
	}
	return res, c, err
}

// silentError is a call the server did not answer in time.
type silentError struct {
	err     error
	timeout time.Duration
}

func (e *silentError) Error() string { return e.err.Error() }
func (e *silentError) Unwrap() error { return e.err }

// callError explains a failed request on c, and drops the connection when
// it is broken.
func (s *server) callError(ctx context.Context, c *conn, err error) error {
	var silent *silentError
	if errors.As(err, &silent) {
		return s.silent(c, silent.timeout)
	}
	if we := serverError(err); we != nil {
		return fmt.Errorf("MCP server %s refused the call: %s", s.cfg.Name, we.Message)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// The connection broke: wait a moment for the process's story.
	select {
	case <-c.done:
		if c.endErr != nil {
			err = c.endErr
		}
	case <-time.After(time.Second):
	}
	s.drop(c, describeEnd(err)+"; it is started again on the next call", true)
	return fmt.Errorf("MCP server %s failed during the call (%v). It is started again on the next call: repeat the call if it is safe to", s.cfg.Name, err)
}

// silent handles a server that did not answer a call in time: a live one
// (it answers a ping) keeps its connection; a dead one is stopped.
func (s *server) silent(c *conn, timeout time.Duration) error {
	wait := min(pingTimeout, timeout)
	pctx, pcancel := context.WithTimeout(context.Background(), wait)
	perr := c.sess.Ping(pctx, nil)
	pcancel()
	if perr != nil {
		why := fmt.Sprintf("it stopped answering (a call got no reply in %s, and a ping none in %s)", timeout, wait)
		s.drop(c, why+"; it is started again on the next call", true)
		return fmt.Errorf("MCP server %s did not answer within %s and does not answer pings: it was stopped, and is started again on the next call. Try once more, or do without it", s.cfg.Name, timeout)
	}
	return fmt.Errorf("MCP server %s did not finish the call within %s (no reply or progress); the call was abandoned. If it needs longer, raise timeout in [mcp_servers.%s]", s.cfg.Name, timeout, s.cfg.Name)
}

// request runs one request other than a tool call on a live connection,
// bounded by the call timeout, and explains its failure.
func (s *server) request(ctx context.Context, f func(context.Context, *conn) error) error {
	c, err := s.ensure(ctx)
	if err != nil {
		return s.unavailable(err)
	}
	timeout := s.cfg.callTimeout()
	rctx, cancel := context.WithTimeoutCause(ctx, timeout, errSilent)
	defer cancel()
	if err = f(rctx, c); err == nil {
		return nil
	}
	if context.Cause(rctx) == errSilent {
		err = &silentError{err: err, timeout: timeout}
	}
	return s.callError(ctx, c, err)
}

// listen registers a progress receiver and returns its token.
func (s *server) listen(f func(string)) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextTok++
	tok := "hearth-" + strconv.Itoa(s.nextTok)
	s.progress[tok] = f
	return tok
}

func (s *server) unlisten(tok string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.progress, tok)
}

// onProgress routes a progress notification to its call.
func (s *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	s.mu.Lock()
	f := s.progress[fmt.Sprint(p.ProgressToken)]
	s.mu.Unlock()
	if f == nil {
		return
	}
	msg := "progress " + strconv.FormatFloat(p.Progress, 'f', -1, 64)
	if p.Total > 0 {
		msg += "/" + strconv.FormatFloat(p.Total, 'f', -1, 64)
	}
	if p.Message != "" {
		msg += ": " + p.Message
	}
	f(msg + "\n")
}

// refreshTools lists the tools again after the server said they changed.
func (s *server) refreshTools() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.m.ctx, s.cfg.startTimeout())
	defer cancel()
	var tools []*sdk.Tool
	for t, err := range c.sess.Tools(ctx, nil) {
		if err != nil {
			s.warn("listing changed tools: " + err.Error())
			return
		}
		tools = append(tools, t)
	}
	s.mu.Lock()
	if s.conn != c || s.cat == nil {
		s.mu.Unlock()
		return
	}
	cat := *s.cat
	cat.tools = tools
	s.cat = &cat
	s.makeTools()
	s.mu.Unlock()
	s.m.publish(s)
}

// makeTools makes proxies for tools not seen before; s.mu is held. A tool
// keeps its proxy across restarts, so registries hold one object per name.
func (s *server) makeTools() {
	for _, t := range s.cat.tools {
		if !s.cfg.wants(t.Name) {
			continue
		}
		name := ToolName(s.cfg.Name, t.Name)
		if _, ok := s.proxies[name]; ok {
			continue
		}
		p, err := newProxy(s, t, name)
		if err != nil {
			s.warnings = append(s.warnings, err.Error())
			continue
		}
		s.proxies[name] = p
		s.order = append(s.order, p)
	}
	if !s.reader && len(s.cat.resources)+len(s.cat.templates) > 0 {
		name := ToolName(s.cfg.Name, "read_resource")
		if _, taken := s.proxies[name]; taken {
			s.warnings = append(s.warnings, "resources not offered: the server has a tool named read_resource")
			return
		}
		s.reader = true
		s.order = append(s.order, newResourceTool(s, name, s.cat))
	}
}

func (s *server) warn(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warnings = append(s.warnings, msg)
}

func (s *server) tools() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]tool.Tool(nil), s.order...)
}

func (s *server) status() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := ServerStatus{Name: s.cfg.Name, Transport: s.cfg.TransportName(), Target: s.cfg.Target(),
		State: s.state, Error: s.errText, Warnings: append([]string(nil), s.warnings...), Since: s.since,
		Starts: s.starts, Tools: []string{}}
	if s.conn != nil {
		st.Transport = string(s.conn.transport)
		if p := s.conn.proc; p != nil {
			st.PID = p.cmd.Process.Pid
		}
	}
	if s.starts > 0 {
		st.StartMS = s.startDur.Milliseconds()
	}
	for _, t := range s.order {
		st.Tools = append(st.Tools, t.Spec().Name)
	}
	if cat := s.cat; cat != nil {
		if cat.info != nil {
			st.Server = strings.TrimSpace(cat.info.Name + " " + cat.info.Version)
		}
		st.Resources = len(cat.resources) + len(cat.templates)
		for _, p := range cat.prompts {
			st.Prompts = append(st.Prompts, p.Name)
		}
	}
	return st
}

// goFunc runs f in a goroutine the Manager waits for on Close; it reports
// false (and runs nothing) once the Manager is closed.
func (m *Manager) goFunc(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

func fileURI(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
}

func osGetenv(k string) string { return os.Getenv(k) }
