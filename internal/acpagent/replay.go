package acpagent

import (
	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// replay returns the updates that show a stored conversation in the
// editor (session/load), as its turns showed it: the user's messages, the
// reasoning and answers, each tool call with its result, a failed turn's
// reason, and at the end the plan the session keeps. Hearth's own
// messages to the model (the summaries of compressed turns, a strict
// plan's reminders) are not the conversation's and are left out; the
// messages they replaced are shown.
func replay(m *turnMapper, msgs []session.Message, runs []session.ToolRun, plan *hearth.Plan) []acp.SessionUpdate {
	ran := map[string]session.ToolRun{}
	for _, r := range runs {
		ran[r.CallID] = r
	}
	var out []acp.SessionUpdate
	open := map[string]bool{} // calls shown without a result yet
	var order []string
	for _, msg := range msgs {
		if msg.Summary || msg.Reminder {
			continue
		}
		switch msg.Role {
		case llm.RoleUser:
			if msg.Content != "" {
				out = append(out, acp.UpdateUserMessageText(msg.Content))
			}
		case llm.RoleAssistant:
			if msg.Thinking != "" {
				out = append(out, acp.UpdateAgentThoughtText(msg.Thinking))
			}
			if msg.Content != "" {
				out = append(out, acp.UpdateAgentMessageText(msg.Content))
			}
			for _, c := range msg.ToolCalls {
				if c.Name == agent.PlanToolName {
					m.hidden[c.ID] = true
					continue
				}
				out = append(out, m.announce(c.ID, c.Name, c.Args))
				open[c.ID] = true
				order = append(order, c.ID)
			}
		case llm.RoleTool:
			id := msg.ToolCallID
			if m.hidden[id] || !open[id] {
				continue
			}
			delete(open, id)
			r, known := ran[id]
			ok, output, errText := true, msg.Content, ""
			if known && !r.OK {
				ok, errText = false, r.Error
				if errText == "" {
					errText = msg.Content
				}
			}
			out = append(out, m.result(id, msg.ToolName, nil, ok, output, errText))
		}
	}
	// A call whose result the session does not hold did not finish (the
	// process stopped mid-turn).
	for _, id := range order {
		if open[id] {
			out = append(out, m.result(id, "", nil, false, "", "the call did not finish: its turn was stopped"))
		}
	}
	if plan != nil {
		out = append(out, acp.UpdatePlan(planEntries(plan)...))
	}
	return out
}
