package conversation

import (
	"context"
	"log/slog"
	"strings"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// SubAgentRunner runs sub-agents' turns (agent.SubAgent.Runner) as stored
// turns of a child session: the child's session is created on its first
// turn with ParentID and ParentCall linking it to the caller's session and
// tool call, and every message, tool run and token count is kept as for
// any turn. A sub-agent called outside a stored turn (its caller's run has
// no RunOptions.SessionID) runs unstored.
//
// The child's model calls are priced at prices, as its caller's are, and
// count in the calling turn's Outcome (Cost, Unpriced) as well as in the
// child's session. The child's session is in workspace, the folder the
// caller's tools work in ("" for none).
func SubAgentRunner(store session.Store, log *slog.Logger, prices map[string]pricing.Rates, workspace string) agent.Runner {
	return func(ctx context.Context, run agent.ChildRun, emit func(agent.Event)) (*agent.Result, string, error) {
		if run.ParentSession == "" && run.SessionID == "" {
			return agent.RunChild(ctx, run, emit)
		}
		t := &Turn{
			Store:   store,
			Agent:   run.Agent,
			Options: run.Options,
			Session: session.Session{ID: run.SessionID, Title: childTitle(run), Model: run.Agent.Model,
				Workspace: workspace, ParentID: run.ParentSession, ParentCall: run.ParentCall},
			Prompt: llm.Message{Role: llm.RoleUser, Content: run.Prompt},
			Log:    log,
			Prices: prices,
			// The calling turn's meter (its tool call's ctx carries it).
			parent: meterOf(ctx),
		}
		if run.Agent.Provider != nil {
			t.Session.Provider = run.Agent.Provider.Kind()
		}
		out, err := t.Run(ctx, emit)
		if out == nil {
			return nil, "", err
		}
		return out.Result, out.SessionID, err
	}
}

func childTitle(run agent.ChildRun) string {
	task := strings.TrimSpace(run.Prompt)
	if i := strings.IndexByte(task, '\n'); i >= 0 {
		task = task[:i]
	}
	if r := []rune(task); len(r) > 60 {
		task = string(r[:60]) + "…"
	}
	return run.Name + ": " + task
}
