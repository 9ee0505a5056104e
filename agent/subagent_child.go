package agent

import (
	"context"
	"errors"

	"github.com/hearth-agent/hearth/tool"
)

// A sub-agent's child: what it takes from the agent that calls it, its
// tools, the agent it runs as, and where its events go.

// scope is what a tool call that runs a sub-agent knows of the turn that
// called it. The run hands it to the call (safeRun), so that the child nests
// its events under the call and takes the caller's settings.
type scope struct {
	r        *run
	id, name string
}

// delegate is a tool that runs another agent: the run calls runFrom with
// its scope instead of Run. *SubAgent is one. A wrapper that embeds
// tool.Tool does not pass runFrom on: a wrapped delegate would run as a
// plain tool, without its caller (a child's tools, the only ones wrapped,
// never include a sub-agent: see childTools).
type delegate interface {
	runFrom(ctx context.Context, c tool.Call, parent *scope) (tool.Result, error)
}

// inherited is the calling agent's configuration for a child to start
// from: a copy of it, so that every setting (reasoning, window,
// compression, limits, logger, approval mode, and any field added to Agent
// later) passes to the child unless the sub-agent sets its own; it
// answers with the calling run's model. Prepare is left out: it ran at the
// start of the caller's turn, before this call.
func (sc *scope) inherited() Agent {
	a := *sc.r.a
	a.Model = sc.r.model()
	a.Prepare = nil
	return a
}

// options are the options of the child's run: of the caller's run, it
// shares who answers approvals (the approver, the live mode, the
// approvals). Its hooks, message and compaction callbacks and session stay
// the caller's; the child's Runner gives it its own session.
func (sc *scope) options() RunOptions {
	return RunOptions{Approver: sc.r.o.Approver, Mode: sc.r.o.Mode, Approvals: sc.r.approvals}
}

// childTools is the child's own toolset (without submit and scratchpad).
func (s *SubAgent) childTools() (*tool.Registry, error) {
	if s.Tools == nil {
		return tool.NewRegistry()
	}
	reg := s.Tools
	if len(s.Select) > 0 {
		var err error
		if reg, err = s.Tools.Select(tool.Profile{Name: "of sub-agent " + s.Name, Tools: s.Select}); err != nil {
			return nil, err
		}
	}
	out, _ := tool.NewRegistry()
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		if _, nested := t.(*SubAgent); nested {
			continue
		}
		if _, plan := t.(planTool); plan {
			continue // the plan is the main agent's
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// child builds the child agent and the options of its run. With a caller,
// the child starts from the caller's configuration (scope.inherited) and
// shares its approvals (scope.options). The sub-agent's own settings
// replace the caller's: System, Tools, MaxTurns, and Provider or Model when
// set (a Provider of its own comes with its own Model).
func (s *SubAgent) child(sc *scope, st *childState) (*Agent, RunOptions, error) {
	var opts RunOptions
	reg, err := s.childTools()
	if err != nil {
		return nil, opts, err
	}
	if s.Scratchpad > 0 {
		gated, _ := tool.NewRegistry()
		for _, n := range reg.Names() {
			t, _ := reg.Get(n)
			if err := gated.Add(&padGate{Tool: t, st: st}); err != nil {
				return nil, opts, err
			}
		}
		if err := gated.Add(&padTool{st: st}); err != nil {
			return nil, opts, err
		}
		reg = gated
	}
	if s.OutputSchema != nil {
		if err := reg.Add(&submitTool{s: s, st: st}); err != nil {
			return nil, opts, err
		}
	}
	var a Agent
	if sc != nil {
		a, opts = sc.inherited(), sc.options()
	}
	a.System, a.Tools, a.MaxTurns = s.System, reg, s.MaxTurns
	if a.MaxTurns <= 0 {
		a.MaxTurns = DefaultSubAgentTurns
	}
	switch {
	case s.Provider != nil:
		a.Provider, a.Model = s.Provider, s.Model
	case s.Model != "":
		a.Model = s.Model
	}
	if a.Provider == nil {
		return nil, opts, errors.New("no model provider: set SubAgent.Provider, or call it from an agent")
	}
	return &a, opts, nil
}

// forward nests the child's events under the calling tool call, as
// tool_output events carrying the child's event; without a calling agent,
// their one-line renderings go to the call's Progress. The child's
// approval_required events are addressed to the user, through the same
// approver as the caller's: they go out as they are, not nested, so that
// every surface that answers approvals sees them.
func (s *SubAgent) forward(sc *scope, c tool.Call, st *childState) func(Event) {
	return func(ev Event) {
		if ev.Type == EventDone && ev.DoneReason == DoneCancelled && st.reported() {
			ev.DoneReason = DoneStop // ended by its accepted report
		}
		line := renderEvent(ev)
		switch {
		case sc != nil && ev.Type == EventApprovalRequired:
			sc.r.emit(ev)
		case sc != nil:
			nested := ev
			sc.r.emit(Event{Type: EventToolOutput, ID: sc.id, Name: sc.name, Text: line, Nested: &nested})
		case c.Progress != nil && line != "":
			c.Progress(line)
		}
	}
}
