package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/conversation"
	"github.com/hearth-agent/hearth/mcp"
	"github.com/hearth-agent/hearth/tool"
)

// This file adds what extends the built-in tools: the sub-agents
// (codebase_investigator and the configured ones) and the MCP servers.

// addSubAgents puts codebase_investigator and the configured sub-agents in
// all, before the profile selects from it, so that profiles can name them.
// The configured ones choose their tools from the selected registry when it
// exists (see bindSubAgents).
func (a *App) addSubAgents(o Options, all *tool.Registry) ([]*agent.SubAgent, error) {
	run := a.subAgentRunner(o.Log)
	inv, err := agent.CodebaseInvestigator(agent.InvestigatorOptions{Tools: all, Root: a.Workspace.Root(), Runner: run})
	if err != nil {
		return nil, err
	}
	if err := all.Add(inv); err != nil {
		return nil, err
	}
	var configured []*agent.SubAgent
	for _, spec := range o.SubAgents {
		// A placeholder registry for now: the real one is bound once the
		// profile has selected the tools.
		placeholder, _ := tool.NewRegistry()
		s, err := spec.SubAgent(placeholder, nil, run)
		if err != nil {
			return nil, ConfigError{err}
		}
		if err := all.Add(s); err != nil {
			return nil, ConfigError{fmt.Errorf("sub-agent %s: %w", spec.Name, err)}
		}
		configured = append(configured, s)
	}
	return configured, nil
}

// bindSubAgents lets the configured sub-agents choose among the tools the
// profile enabled (MCP tools included, as they arrive).
func bindSubAgents(subs []*agent.SubAgent, specs []agent.SubAgentSpec, reg *tool.Registry) {
	for i, s := range subs {
		s.Tools = reg
		if len(specs[i].Tools) == 0 {
			s.Select = nil
			for _, n := range agent.DefaultSubAgentTools {
				if _, ok := reg.Get(n); ok {
					s.Select = append(s.Select, n)
				}
			}
			if len(s.Select) == 0 {
				s.Tools = nil
			}
		}
	}
}

// subAgentRunner stores sub-agents' turns as child sessions once the store
// is open (it opens after the agent is assembled), and runs them unstored
// without one.
func (a *App) subAgentRunner(log *slog.Logger) agent.Runner {
	return func(ctx context.Context, run agent.ChildRun, emit func(agent.Event)) (*agent.Result, string, error) {
		if a.Store == nil {
			return agent.RunChild(ctx, run, emit)
		}
		return conversation.SubAgentRunner(a.Store, log)(ctx, run, emit)
	}
}

// builtinPatterns drops from a profile's tool patterns those that can only
// name MCP servers' tools: the servers' tools are not there yet when the
// profile selects the built-in ones (they are filtered as they arrive).
func builtinPatterns(pats []string, servers map[string]config.MCPServer) []string {
	var names []string
	for n := range servers {
		names = append(names, n)
	}
	var out []string
	for _, p := range pats {
		if !mcp.IsServerPattern(p, names) {
			out = append(out, p)
		}
	}
	return out
}

// startMCP starts the configured MCP servers in the background and offers
// their tools, as they become ready, in reg (as the profile allows). The
// agent's first turn waits for those still starting.
func (a *App) startMCP(o Options, prof config.Profile, reg *tool.Registry) error {
	if len(a.Config.MCPServers) == 0 || o.NoMCP {
		return nil
	}
	m, err := mcp.New(mcp.Options{Servers: mcp.FromConfig(a.Config.MCPServers), Dir: a.Workspace.Root(), Getenv: o.Getenv, Logger: o.Log})
	if err != nil {
		return ConfigError{err}
	}
	a.MCP = m
	pats := prof.Tools
	m.Attach(reg, func(name string) bool { return mcp.Allowed(pats, name) && prof.ProjectAllows(name) })
	m.Start()
	return nil
}
