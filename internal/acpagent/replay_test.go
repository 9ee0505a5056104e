package acpagent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

func TestReplay(t *testing.T) {
	msg := func(role llm.Role, content string) session.Message {
		return session.Message{Message: llm.Message{Role: role, Content: content}}
	}
	assistant := msg(llm.RoleAssistant, "Let me look.")
	assistant.Thinking = "I should read it."
	assistant.ToolCalls = []llm.ToolCall{
		{ID: "p", Name: "update_plan", Args: json.RawMessage(`{"steps":[]}`)},
		{ID: "r", Name: "read_file", Args: json.RawMessage(`{"file_path":"a.txt"}`)},
		{ID: "w", Name: "write_file", Args: json.RawMessage(`{"file_path":"b.txt","content":"B"}`)},
		{ID: "x", Name: "run_shell_command", Args: json.RawMessage(`{"command":"make"}`)},
	}
	tool := func(id, name, content string) session.Message {
		m := msg(llm.RoleTool, content)
		m.ToolCallID, m.ToolName = id, name
		return m
	}
	compressed := msg(llm.RoleUser, "Summary of the earlier turns")
	compressed.Summary = true
	reminder := msg(llm.RoleUser, "Your plan still has open steps")
	reminder.Reminder = true
	partial := msg(llm.RoleAssistant, "Once upon")
	partial.Partial = true
	failure := msg(llm.RoleAssistant, "Provider request failed: the server is down")
	failure.Failure = true
	msgs := []session.Message{
		compressed,
		msg(llm.RoleUser, "what is in a.txt?"),
		assistant,
		tool("p", "update_plan", "Plan saved"),
		tool("r", "read_file", "hello\n"),
		tool("w", "write_file", "the user denied it"),
		reminder,
		msg(llm.RoleAssistant, "It says hello."),
		msg(llm.RoleUser, "tell a story"),
		partial,
		msg(llm.RoleUser, "again"),
		failure,
	}
	runs := []session.ToolRun{
		{CallID: "r", Name: "read_file", OK: true, Output: "hello\n"},
		{CallID: "w", Name: "write_file", OK: false, Error: "the user denied it"},
	}
	plan := &hearth.Plan{Steps: []hearth.PlanStep{{Step: "Read", Status: hearth.PlanDone}}}
	var got []string
	for _, u := range replay(newTurnMapper("/w", nil), msgs, runs, plan) {
		got = append(got, summary(t, u))
	}
	want := []string{
		"user_message_chunk what is in a.txt?",
		"agent_thought_chunk I should read it.",
		"agent_message_chunk Let me look.",
		"tool_call toolCallId=r kind=read status=pending title=read_file",
		"tool_call toolCallId=w kind=edit status=pending title=write_file diff(/w/b.txt B)",
		"tool_call toolCallId=x kind=execute status=pending title=run_shell_command",
		"tool_call_update toolCallId=r status=completed text(```\nhello\n```)",
		"tool_call_update toolCallId=w status=failed text(the user denied it)",
		"agent_message_chunk It says hello.",
		"user_message_chunk tell a story",
		"agent_message_chunk Once upon",
		"user_message_chunk again",
		"agent_message_chunk Provider request failed: the server is down",
		"tool_call_update toolCallId=x status=failed text(the call did not finish: its turn was stopped)",
		"plan [completed Read]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replay:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
