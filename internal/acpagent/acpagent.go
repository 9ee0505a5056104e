// Package acpagent is Hearth as an Agent Client Protocol agent
// (https://agentclientprotocol.com, protocol version 1): the front end that
// editors — Zed, JetBrains IDEs, Neovim through plugins — start as a
// program and talk to over its standard input and output (hearth acp).
//
// It is an adapter over the same runtime as every other front end: each
// ACP session is a Hearth session of the agent of its folder (Workspaces),
// each prompt a turn whose events (docs/events.md) become session/update
// notifications, whose approvals become session/request_permission
// requests, and whose file tools read and write through the editor's own
// file system when it offers one (tool.WithFiles), every path still checked
// against the workspace's rules. docs/acp.md says what maps to what.
package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// Options configure the agent.
type Options struct {
	// Workspaces builds the agent of each session's folder. Required.
	Workspaces *Workspaces
	// Version is Hearth's, for the editor (agentInfo).
	Version string
	// Log receives what goes wrong (nil: nothing). It must not write to
	// standard output, which is the protocol's.
	Log *slog.Logger
	// StopWait bounds how long Serve waits, once the editor is gone, for
	// the turns still running to end and be stored (0: 10 seconds).
	StopWait time.Duration
}

// Agent is Hearth's side of one ACP connection. Serve makes one.
type Agent struct {
	o    Options
	conn *acp.AgentSideConnection
	log  *slog.Logger
	// stop is Serve's context: when it ends (Ctrl-C, SIGTERM), so do the
	// turns, as when the editor leaves.
	stop context.Context

	mu       sync.Mutex
	client   acp.ClientCapabilities
	sessions map[acp.SessionId]*acpSession
	running  sync.WaitGroup // the prompts being answered
}

// acpSession is an ACP session: a Hearth session of the agent of its
// folder.
type acpSession struct {
	id acp.SessionId
	// cwd and servers are what the editor opened it with: each prompt
	// takes the folder's agent as its trust now stands (a trust lowered
	// meanwhile applies from the next prompt).
	cwd     string
	servers []acp.McpServer

	mu   sync.Mutex
	bot  *hearth.Agent // the agent its prompts run in (current)
	idle chan struct{} // closed when no prompt runs (nil: none ever did)
	// prompts are the cancel functions of the session's prompts running
	// or waiting to run: session/cancel calls them (the connection's own
	// cancel handle of a prompt is lost when an earlier one returns).
	prompts map[*context.CancelFunc]struct{}
}

// current returns the agent the session's prompts run in.
func (s *acpSession) current() *hearth.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bot
}

// use makes bot the session's agent.
func (s *acpSession) use(bot *hearth.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bot = bot
}

// track registers a prompt's cancel function until untrack.
func (s *acpSession) track(cancel *context.CancelFunc) (untrack func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prompts == nil {
		s.prompts = map[*context.CancelFunc]struct{}{}
	}
	s.prompts[cancel] = struct{}{}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.prompts, cancel)
	}
}

// cancelAll cancels the session's prompts.
func (s *acpSession) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.prompts {
		(*c)()
	}
}

var (
	_ acp.Agent       = (*Agent)(nil)
	_ acp.AgentLoader = (*Agent)(nil)
)

// Serve answers the editor on in and out until it closes the connection
// (or ctx ends), then waits for the turns still running to be stored.
// Nothing but the protocol is written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if o.Workspaces == nil {
		return errors.New("acpagent: no Workspaces")
	}
	if o.StopWait <= 0 {
		o.StopWait = 10 * time.Second
	}
	a := &Agent{o: o, log: o.Log, stop: ctx, sessions: map[acp.SessionId]*acpSession{}}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	// Requests are handled only once conn is set: the connection reads
	// from in as soon as it is made.
	gate := &gatedReader{r: in, open: make(chan struct{})}
	a.conn = acp.NewAgentSideConnection(a, out, gate)
	a.conn.SetLogger(a.log)
	close(gate.open)
	select {
	case <-a.conn.Done():
	case <-ctx.Done():
	}
	// The turns end with the connection (their requests' contexts are
	// the connection's), or with ctx: give them time to store what they
	// said.
	done := make(chan struct{})
	go func() {
		a.running.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(o.StopWait):
		a.log.Warn("turns were still running when hearth acp stopped; what they said so far is stored")
	}
	return ctx.Err()
}

// gatedReader holds reads until open is closed.
type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// Initialize answers the editor's first request with what Hearth does.
func (a *Agent) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	a.mu.Lock()
	a.client = p.ClientCapabilities
	a.mu.Unlock()
	title := "Hearth"
	return acp.InitializeResponse{
		// Version 1 is the only one Hearth speaks: an editor that asked
		// for another decides whether it speaks 1.
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{EmbeddedContext: true},
			McpCapabilities:     acp.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}},
		},
		AgentInfo:   &acp.Implementation{Name: "hearth", Title: &title, Version: a.o.Version},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

// Authenticate is not needed: Hearth's model servers are configured in
// Hearth, not in the editor.
func (a *Agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, acp.NewMethodNotFound(acp.AgentMethodAuthenticate)
}

// NewSession starts a session in the editor's folder (cwd), with the MCP
// servers it passes.
func (a *Agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	bot, err := a.agent(ctx, p.Cwd, p.McpServers)
	if err != nil {
		return acp.NewSessionResponse{}, err
	}
	id := acp.SessionId(session.NewID())
	s := a.add(id, bot, p.Cwd, p.McpServers)
	return acp.NewSessionResponse{SessionId: id, Modes: modes(bot, bot.Session(string(s.id)).Mode())}, nil
}

// LoadSession continues one of Hearth's stored sessions: its conversation
// is replayed as session/update notifications, then the editor can prompt
// it.
func (a *Agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	store := a.o.Workspaces.Store()
	if store == nil {
		// No agent yet: the one of cwd opens the store.
		if _, err := a.agent(ctx, p.Cwd, nil); err != nil {
			return acp.LoadSessionResponse{}, err
		}
		store = a.o.Workspaces.Store()
	}
	stored, err := store.Get(ctx, string(p.SessionId))
	if errors.Is(err, session.ErrNotFound) {
		return acp.LoadSessionResponse{}, &acp.RequestError{Code: -32002, Message: fmt.Sprintf("Hearth has no session %s: `hearth sessions list` lists them (a session is stored once it has a prompt)", p.SessionId)}
	}
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	if stored.ParentID != "" {
		return acp.LoadSessionResponse{}, invalidParams(fmt.Sprintf("session %s is a sub-agent's (of %s): load %s", p.SessionId, stored.ParentID, stored.ParentID))
	}
	if !filepath.IsAbs(p.Cwd) {
		return acp.LoadSessionResponse{}, invalidParams(fmt.Sprintf("cwd %q is not an absolute path: ACP paths are absolute", p.Cwd))
	}
	cwd, err := loader.WorkspaceRoot(p.Cwd)
	if err != nil {
		return acp.LoadSessionResponse{}, invalidParams(fmt.Sprintf("cwd %s: %v", p.Cwd, err))
	}
	if stored.Workspace != "" && stored.Workspace != cwd {
		return acp.LoadSessionResponse{}, invalidParams(fmt.Sprintf("session %s belongs to the workspace %s, not %s: open %s in the editor to continue it", p.SessionId, stored.Workspace, cwd, stored.Workspace))
	}
	bot, err := a.agent(ctx, cwd, p.McpServers)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	msgs, err := store.Messages(ctx, stored.ID)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	runs, err := store.ToolRuns(ctx, stored.ID)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	hs := bot.Session(stored.ID)
	plan, err := hs.Plan(ctx)
	if err != nil {
		return acp.LoadSessionResponse{}, err
	}
	s := a.add(p.SessionId, bot, cwd, p.McpServers)
	m := newTurnMapper(bot.Workspace(), a.describer(hs))
	for _, u := range replay(m, msgs, runs, plan) {
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: s.id, Update: u}); err != nil {
			return acp.LoadSessionResponse{}, err
		}
	}
	return acp.LoadSessionResponse{Modes: modes(bot, hs.Mode())}, nil
}

// ListSessions lists Hearth's stored sessions, newest first: those of the
// folder cwd when it is given.
func (a *Agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	store := a.o.Workspaces.Store()
	if store == nil {
		if p.Cwd == nil {
			return out, nil
		}
		if _, err := a.agent(ctx, *p.Cwd, nil); err != nil {
			return out, err
		}
		store = a.o.Workspaces.Store()
	}
	opts := session.ListOptions{Limit: 200}
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return out, invalidParams(fmt.Sprintf("cwd %q is not an absolute path: ACP paths are absolute", *p.Cwd))
		}
		root, err := loader.WorkspaceRoot(*p.Cwd)
		if err != nil {
			return out, invalidParams(fmt.Sprintf("cwd %s: %v", *p.Cwd, err))
		}
		opts.Workspace = &root
	}
	list, err := store.List(ctx, opts)
	if err != nil {
		return out, err
	}
	for _, s := range list {
		if s.Workspace == "" {
			continue // ACP needs the folder
		}
		info := acp.SessionInfo{SessionId: acp.SessionId(s.ID), Cwd: s.Workspace}
		if s.Title != "" {
			t := s.Title
			info.Title = &t
		}
		if !s.UpdatedAt.IsZero() {
			u := s.UpdatedAt.UTC().Format(time.RFC3339)
			info.UpdatedAt = &u
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}

// SetSessionMode switches the session's approval mode (the workspace's
// trust decides which it may take).
func (a *Agent) SetSessionMode(_ context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	if err := s.current().Session(string(s.id)).SetMode(hearth.Mode(p.ModeId)); err != nil {
		return acp.SetSessionModeResponse{}, invalidParams(err.Error())
	}
	return acp.SetSessionModeResponse{}, nil
}

// Prompt runs a turn of the session: its events stream to the editor as
// session updates, its approvals are asked of the editor, and its file
// tools go through the editor's file system when it offers one. The answer
// says why the turn ended; a turn that failed is an error saying why.
func (a *Agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	// The folder's agent as its trust now stands (the same one while
	// nothing changed).
	if bot, err := a.agent(ctx, s.cwd, s.servers); err == nil {
		s.use(bot)
	}
	bot := s.current()
	msg, err := promptText(p.Prompt, bot.Workspace())
	if err != nil {
		return acp.PromptResponse{}, invalidParams(err.Error())
	}
	a.running.Add(1)
	defer a.running.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(a.stop, cancel)()
	defer s.track(&cancel)()
	// A new prompt cancels the one running in the session (the
	// connection does): wait for it to be stored.
	release, err := s.begin(ctx)
	if err != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	defer release()

	a.mu.Lock()
	fsCaps := a.client.Fs
	a.mu.Unlock()
	tctx := ctx
	if fsCaps.ReadTextFile || fsCaps.WriteTextFile {
		tctx = tool.WithFiles(ctx, clientFiles{conn: a.conn, session: s.id, read: fsCaps.ReadTextFile, write: fsCaps.WriteTextFile})
	}
	// Updates are sent to the end, a cancelled turn's last ones
	// included: the editor waits for them before the answer.
	nctx := context.WithoutCancel(ctx)
	hs := bot.Session(string(s.id))
	m := newTurnMapper(bot.Workspace(), a.describer(hs))
	turn := bot.NewTurn(tctx, hearth.Request{SessionID: string(s.id), Message: msg})
	for ev := range turn.Events() {
		for _, u := range m.event(ev) {
			if err := a.conn.SessionUpdate(nctx, acp.SessionNotification{SessionId: s.id, Update: u}); err != nil {
				a.log.Debug("a session update was not sent", "session", s.id, "error", err)
			}
		}
		if ev.Type == hearth.EventApprovalRequired {
			a.approve(ctx, nctx, s, turn, m, ev)
		}
	}
	_, terr := turn.Result()
	switch m.reason {
	case hearth.DoneCancelled:
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case hearth.DoneMaxTurns:
		return acp.PromptResponse{StopReason: acp.StopReasonMaxTurnRequests}, nil
	case hearth.DoneStop:
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	why := m.errMsg
	if why == "" && terr != nil {
		why = terr.Error()
	}
	if why == "" {
		why = "the turn failed"
	}
	return acp.PromptResponse{}, &acp.RequestError{Code: -32603, Message: why}
}

// approve asks the editor about a call that needs approval, and answers
// the turn with what the user chose. A request that fails (the turn is
// being cancelled, the editor is gone) denies the call.
func (a *Agent) approve(ctx, nctx context.Context, s *acpSession, turn *hearth.Turn, m *turnMapper, ev hearth.Event) {
	resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: s.id,
		ToolCall:  m.permissionCall(ev),
		Options:   permissionOptions(ev.Name),
	})
	if err != nil {
		turn.Deny(ev.ID, "the user did not answer: "+describeErr(err))
		return
	}
	d, ok := decision(resp.Outcome)
	switch {
	case !ok:
		turn.Deny(ev.ID, "the user cancelled the turn")
		return
	case d == hearth.Deny:
		turn.Deny(ev.ID, "")
		return
	}
	if err := turn.Approve(ev.ID, d); err != nil {
		a.log.Debug("an approval was answered meanwhile", "call", ev.ID, "error", err)
		return
	}
	status := acp.ToolCallStatusInProgress
	if err := a.conn.SessionUpdate(nctx, acp.SessionNotification{SessionId: s.id,
		Update: acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{ToolCallId: acp.ToolCallId(ev.ID), Status: &status}}}); err != nil {
		a.log.Debug("a session update was not sent", "session", s.id, "error", err)
	}
}

// Cancel stops the session's running turn (and a prompt waiting for it):
// the turn ends as cancelled, its partial reply stored, and the prompt
// answers "cancelled". The connection cancels a prompt's context too, but
// loses that handle when an earlier prompt of the session returns, so the
// session keeps its own.
func (a *Agent) Cancel(_ context.Context, n acp.CancelNotification) error {
	if s, err := a.session(n.SessionId); err == nil {
		s.cancelAll()
	}
	return nil
}

// CloseSession is not offered (sessionCapabilities.close).
func (a *Agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}

// ResumeSession is not offered (sessionCapabilities.resume): LoadSession
// does it, with the conversation.
func (a *Agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

// SetSessionConfigOption is not offered: Hearth's settings are its config
// files' (the approval mode is the session's mode).
func (a *Agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

// agent returns the agent of the folder cwd with the editor's MCP servers.
func (a *Agent) agent(ctx context.Context, cwd string, servers []acp.McpServer) (*hearth.Agent, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams(fmt.Sprintf("cwd %q is not an absolute path: ACP paths are absolute", cwd))
	}
	hs, lit, err := mcpServers(servers, nil)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	bot, err := a.o.Workspaces.Agent(ctx, cwd, hs, lit)
	if err != nil {
		var ce loader.ConfigError
		if errors.As(err, &ce) {
			return nil, invalidParams(err.Error())
		}
		return nil, err
	}
	return bot, nil
}

// add registers a session of the connection (one loaded again is the same
// session, unless its folder's agent changed).
func (a *Agent) add(id acp.SessionId, bot *hearth.Agent, cwd string, servers []acp.McpServer) *acpSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil && s.current() == bot {
		return s
	}
	s := &acpSession{id: id, bot: bot, cwd: cwd, servers: servers}
	a.sessions[id] = s
	return s
}

// session returns a session of the connection.
func (a *Agent) session(id acp.SessionId) (*acpSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, &acp.RequestError{Code: -32002, Message: fmt.Sprintf("no session %s on this connection: create one with session/new, or load it with session/load", id)}
	}
	return s, nil
}

// begin waits for the session's running prompt, if any, to end (until
// ctx does), then marks a prompt running; release marks it ended.
func (s *acpSession) begin(ctx context.Context) (release func(), err error) {
	for {
		s.mu.Lock()
		idle := s.idle
		if idle == nil || isClosed(idle) {
			ch := make(chan struct{})
			s.idle = ch
			s.mu.Unlock()
			return func() { close(ch) }, nil
		}
		s.mu.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// describer says in a line what a call of the session's tool does (the
// tool's own description), for a call's title.
func (a *Agent) describer(hs *hearth.Session) func(string, json.RawMessage) string {
	return func(name string, args json.RawMessage) string {
		t, ok := hs.Tool(name)
		if !ok {
			return ""
		}
		if d, ok := t.(tool.Describer); ok {
			return d.Describe(args)
		}
		return ""
	}
}

// modes are Hearth's approval modes as ACP session modes: those the
// workspace's trust allows, current the session's.
func modes(bot *hearth.Agent, current hearth.Mode) *acp.SessionModeState {
	all := []struct {
		mode        hearth.Mode
		name, about string
	}{
		{hearth.ModeDefault, "Ask", "Asks before every edit and command"},
		{hearth.ModeAutoEdit, "Auto-edit", "Edits files unasked; asks before commands"},
		{hearth.ModeYolo, "Yolo", "Asks for nothing (destructive commands and paths outside the workspace are still refused)"},
		{hearth.ModePlan, "Plan", "Reads only: no edits, no commands"},
	}
	if current == "" {
		current = hearth.ModeDefault
	}
	st := &acp.SessionModeState{CurrentModeId: acp.SessionModeId(current), AvailableModes: []acp.SessionMode{}}
	for _, m := range all {
		if bot.AllowsMode(m.mode) != nil {
			continue
		}
		about := m.about
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: acp.SessionModeId(m.mode), Name: m.name, Description: &about})
	}
	if !slices.ContainsFunc(st.AvailableModes, func(m acp.SessionMode) bool { return m.Id == st.CurrentModeId }) {
		st.AvailableModes = append(st.AvailableModes, acp.SessionMode{Id: st.CurrentModeId, Name: string(current)})
	}
	return st
}

// invalidParams is the error for a request Hearth cannot take as it is:
// msg says why, and what to do.
func invalidParams(msg string) *acp.RequestError {
	return &acp.RequestError{Code: -32602, Message: msg}
}
