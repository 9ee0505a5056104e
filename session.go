package hearth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/conversation"
	"github.com/hearth-agent/hearth/mcp"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/builtin"
)

// Session is what the runtime holds for one session besides its stored
// messages: the approvals the user gave ("allow always") and the live
// approval mode, the record of what the model has read (an edit checks a
// file has not changed since), the session's built-in tools with their
// private temp directory, its MCP attachment, and the lock that lets one
// turn run at a time. Every front end reaches it through the Agent, so a
// session behaves the same whichever one drives it.
type Session struct {
	a         *Agent
	id        string
	approvals agent.Approvals
	seen      *tool.Seen

	mu    sync.Mutex
	mode  Mode
	busy  bool
	turn  *Turn         // the running turn
	tools *sessionTools // built on the first turn, closed when idle
	idle  *time.Timer   // closes the tools of an idle session
}

// sessionTools is a session's tool set: its built-in tools, the registry
// the profile selected (sub-agents and MCP tools included) and the agent
// that runs its turns.
type sessionTools struct {
	seen   *tool.Seen // what the built-in tools record reads in
	set    *builtin.Set
	agent  *agent.Agent
	detach func()
	// withheld are the tools the workspace's trust keeps from the model.
	withheld []string
}

func (t *sessionTools) close() error {
	if t.detach != nil {
		t.detach()
	}
	if t.set != nil {
		return t.set.Close()
	}
	return nil
}

// Session returns the runtime's state of the session with this id, made on
// first use (the id need not be stored yet: its first turn creates it).
func (a *Agent) Session(id string) *Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[id]; s != nil {
		return s
	}
	s := &Session{a: a, id: id, seen: tool.NewSeen(), mode: a.mode}
	if a.sessions != nil { // nil once closed: the session is not kept
		a.sessions[id] = s
	}
	return s
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Mode returns the session's approval mode.
func (s *Session) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetMode switches the session's approval mode. It applies at once, to a
// running turn too: the calls that follow, and an approval that is waiting
// when the new mode no longer asks for it (it is answered by the mode).
func (s *Session) SetMode(m Mode) error {
	m, err := agent.ParseMode(string(m))
	if err != nil {
		return err
	}
	if err := allowedMode(s.a.c.Trust, m); err != nil {
		return fmt.Errorf("hearth: %w", err)
	}
	s.mu.Lock()
	s.mode = m
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.wakeAll()
	}
	return nil
}

// ForgetApprovals clears the session's "allow always" answers.
func (s *Session) ForgetApprovals() { s.approvals.Forget() }

// Busy reports whether a turn is running in the session.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy
}

// begin marks the session busy with t and returns its tools (built on
// first use).
func (s *Session) begin(t *Turn) (*sessionTools, error) {
	a := s.a
	a.mu.Lock()
	closed := a.closed
	a.mu.Unlock()
	if closed {
		return nil, errors.New("hearth: the agent is closed")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return nil, fmt.Errorf("hearth: session %s is running another turn: wait for it to end: %w", s.id, ErrBusy)
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if err := s.buildLocked(); err != nil {
		return nil, err
	}
	s.busy, s.turn = true, t
	return s.tools, nil
}

// end releases the session; its tools are closed once it has been idle
// for a while (the temp directory goes with them).
func (s *Session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy, s.turn = false, nil
	s.idleLocked()
}

// idleLocked (re)starts the countdown that closes the tools of a session
// nobody uses; s.mu is held.
func (s *Session) idleLocked() {
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if s.tools == nil || s.a.idleTools <= 0 {
		return
	}
	var timer *time.Timer
	timer = time.AfterFunc(s.a.idleTools, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.idle != timer || s.busy || s.tools == nil {
			return // used again since
		}
		if err := s.tools.close(); err != nil {
			s.a.log.Warn("closing an idle session's tools", "session", s.id, "error", err)
		}
		s.tools, s.idle = nil, nil
	})
	s.idle = timer
}

// closeTools releases the session's tools (Agent.Close).
func (s *Session) closeTools() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle != nil {
		s.idle.Stop()
	}
	if s.tools == nil {
		return nil
	}
	err := s.tools.close()
	s.tools = nil
	return err
}

// buildTools makes a session's tools: the built-in ones bound to its record
// of what the model read, the host tools, the sub-agents, what the profile
// selects of them, and the MCP servers' tools as they arrive.
func (a *Agent) buildTools(seen *tool.Seen) (_ *sessionTools, err error) {
	ts := &sessionTools{seen: seen}
	defer func() {
		if err != nil {
			ts.close()
		}
	}()
	all, err := tool.NewRegistry()
	if err != nil {
		return nil, err
	}
	if a.ws != nil {
		if ts.set, err = builtin.New(builtin.Options{Workspace: a.ws, Seen: seen, Shell: a.shell, Fixer: a.fixer(), Log: a.log}); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
		for _, t := range ts.set.Tools {
			if err := all.Add(t); err != nil {
				return nil, fmt.Errorf("hearth: %w", err)
			}
		}
	}
	for _, t := range a.c.Tools {
		if err := all.Add(t); err != nil {
			return nil, fmt.Errorf("hearth: host tool %s: %w", t.Spec().Name, err)
		}
	}
	run := conversation.SubAgentRunner(a.store, a.log, a.rates, a.Workspace())
	if a.ws != nil {
		inv, err := agent.CodebaseInvestigator(agent.InvestigatorOptions{Tools: all, Root: a.ws.Root(), Runner: run})
		if err != nil {
			return nil, err
		}
		if err := all.Add(inv); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
	}
	// The plan is offered where the profile selects it (by name, "*" or
	// "@read-only"), unless a host tool has its name: the host's stays.
	if _, taken := all.Get(agent.PlanToolName); taken {
		a.log.Info("a host tool is named " + agent.PlanToolName + ": Hearth's plan tool is not offered")
	} else if err := all.Add(agent.NewPlanTool()); err != nil {
		return nil, fmt.Errorf("hearth: %w", err)
	}
	var subs []*agent.SubAgent
	for _, spec := range a.c.SubAgents {
		// A placeholder registry for now: the real one is bound once the
		// profile has selected the tools.
		placeholder, _ := tool.NewRegistry()
		sa, err := spec.SubAgent(placeholder, nil, run)
		if err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
		if err := all.Add(sa); err != nil {
			return nil, fmt.Errorf("hearth: sub-agent %s: %w", spec.Name, err)
		}
		subs = append(subs, sa)
	}
	pats := a.patterns
	if a.mcp != nil {
		// Patterns that can only name MCP servers' tools match nothing
		// yet: those tools are filtered as they arrive.
		pats = builtinPatterns(pats, a.c.MCPServers)
	}
	reg, err := all.Select(tool.Profile{Name: a.c.Profile.Name, Tools: pats})
	if err != nil {
		return nil, fmt.Errorf("hearth: %w", err)
	}
	if allow := a.c.Profile.Allow; allow != nil || a.c.Trust == TrustReadOnly {
		keep := []string{}
		for _, n := range reg.Names() {
			if t, _ := reg.Get(n); (allow == nil || allow(t)) && a.trustAllows(t) {
				keep = append(keep, n)
			}
		}
		if reg, err = reg.Select(tool.Profile{Name: a.c.Profile.Name, Tools: keep}); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
	}
	for _, n := range all.Names() {
		if t, _ := all.Get(n); !a.trustAllows(t) {
			ts.withheld = append(ts.withheld, n)
		}
	}
	bindSubAgents(subs, a.c.SubAgents, reg)
	if a.mcp != nil {
		ts.detach = a.mcp.Attach(reg, a.offers)
	}
	core := a.core
	core.Tools = reg
	ts.agent = &core
	return ts, nil
}

// bindSubAgents lets the configured sub-agents choose among the tools the
// profile enabled (MCP tools included, as they arrive).
func bindSubAgents(subs []*agent.SubAgent, specs []SubAgentSpec, reg *tool.Registry) {
	for i, s := range subs {
		s.Tools = reg
		if len(specs[i].Tools) == 0 {
			s.Select = agent.DefaultSubAgentSelect(reg)
			if len(s.Select) == 0 {
				s.Tools = nil
			}
		}
	}
}

// builtinPatterns drops from a profile's tool patterns those that can only
// name MCP servers' tools: the servers' tools are not there yet when the
// profile selects the others (they are filtered as they arrive).
func builtinPatterns(pats []string, servers []MCPServer) []string {
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		names = append(names, s.Name)
	}
	var out []string
	for _, p := range pats {
		if !mcp.IsServerPattern(p, names) {
			out = append(out, p)
		}
	}
	return out
}

// offers reports whether the profile offers a tool that arrives late (an
// MCP server's): its patterns select it, by name or kind, and Allow keeps
// it.
func (a *Agent) offers(t tool.Tool) bool {
	return tool.Allows(a.patterns, t) && (a.c.Profile.Allow == nil || a.c.Profile.Allow(t)) && a.trustAllows(t)
}

// Plan returns the plan the session's model keeps (update_plan) as its
// stored conversation holds it now: nil when it keeps none. A rewind or a
// fork takes the plan back with the conversation.
func (s *Session) Plan(ctx context.Context) (*Plan, error) {
	msgs, err := s.a.store.Messages(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("hearth: the plan of session %s: %w", s.id, err)
	}
	return conversation.Plan(msgs), nil
}

// Forget drops what the runtime holds for a session (its approvals, mode,
// tools and temp directory): for a session that was deleted. A turn running
// in it keeps its state until it ends.
func (a *Agent) Forget(id string) error {
	a.mu.Lock()
	s := a.sessions[id]
	a.mu.Unlock()
	if s == nil || s.Busy() {
		return nil
	}
	// Locks are taken one at a time: a session takes a.mu under its own
	// (buildLocked).
	a.mu.Lock()
	if a.sessions[id] == s {
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	return s.closeTools()
}

// buildLocked gives the session its tools, if it has none: the ones New
// built, when no session took them yet, else new ones. s.mu is held.
func (s *Session) buildLocked() error {
	if s.tools != nil {
		return nil
	}
	a := s.a
	a.mu.Lock()
	closed, spare := a.closed, a.spare
	a.spare = nil
	a.mu.Unlock()
	if closed {
		return errors.New("hearth: the agent is closed")
	}
	if spare != nil {
		// Nothing has read through this session's record yet: the
		// spare's record becomes the session's.
		s.tools, s.seen = spare, spare.seen
		return nil
	}
	ts, err := a.buildTools(s.seen)
	if err != nil {
		return err
	}
	s.tools = ts
	return nil
}

// toolSet returns the session's tools, built on first use.
func (s *Session) toolSet() (*sessionTools, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.buildLocked(); err != nil {
		return nil, err
	}
	if !s.busy {
		s.idleLocked() // used now: the countdown starts again
	}
	return s.tools, nil
}

// Tool returns the session's tool of this name, as the model would call it
// (the user's own shell command in the terminal UI runs the session's
// run_shell_command: the same checks, confinement and temp directory).
func (s *Session) Tool(name string) (Tool, bool) {
	ts, err := s.toolSet()
	if err != nil {
		return nil, false
	}
	return ts.agent.Tools.Get(name)
}

// Compress summarises the older part of the session's stored history, as
// a turn does on its own near the window's limit, so that what follows it
// takes about keep tokens. model answers (empty: the agent's). It waits
// for no turn: a session running one is busy (ErrBusy). The summary's
// model call is recorded in the session with its cost (Config.Prices).
func (s *Session) Compress(ctx context.Context, model string, keep int) error {
	ts, err := s.begin(nil)
	if err != nil {
		return err
	}
	defer s.end()
	a := *ts.agent
	if model != "" {
		a.Model = model
	}
	a.ContextLength = s.a.contextLength(ctx, a.Model)
	return conversation.Compress(ctx, s.a.store, &a, s.id, keep, s.a.rates)
}

// Title asks the model for a better title for the session, if it still
// has the one its first prompt gave it (the start of its first line), and
// keeps it; it returns the session's title, new or as it was. No turn
// waits for a title: an interactive front end calls Title in the
// background once a session has an answer (or when it shows one that was
// titled from its prompt); a headless run never does. The question is
// sent with the conversation as the session's next turn sends it, so that
// a server that caches prompts evaluates the question only, and keeps the
// conversation cached for that turn.
//
// model answers ("": the agent's): the one the session's turns use, so
// that the server has it loaded and the conversation cached. The
// question's model call is recorded in the session with its cost
// (Config.Prices); a failure to record it is returned with the title.
func (s *Session) Title(ctx context.Context, model string) (string, error) {
	ts, err := s.toolSet()
	if err != nil {
		return "", err
	}
	a := *ts.agent
	if model != "" {
		a.Model = model
	}
	a.ContextLength = s.a.contextLength(ctx, a.Model)
	return conversation.Title(ctx, s.a.store, &a, s.id, s.a.rates)
}

// ToolKind says what the tool of this name may do (false: no such tool).
func (a *Agent) ToolKind(name string) (Kind, bool) {
	if k, ok := a.kinds[name]; ok {
		return k, true
	}
	if a.mcp != nil {
		for _, t := range a.mcp.Tools() {
			if t.Spec().Name == name {
				return t.Kind(), true
			}
		}
	}
	return 0, false
}
