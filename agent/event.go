// Package agent runs Hearth's think-act loop: it sends the conversation and
// the enabled tools to a model, streams the reply as Events, runs the tool
// calls the model makes (through approvals and hooks), feeds the results back,
// and repeats until the model answers, a turn limit is hit, the context is
// cancelled, or an error ends it.
package agent

import (
	"encoding/json"
)

// EventType names an event. The set and the JSON form of each are Hearth's
// public contract (docs/events.md): fields may be added, none renamed or
// removed.
type EventType string

// The event types, in the order a turn can produce them.
const (
	EventSession          EventType = "session"
	EventThinkingStart    EventType = "thinking_start"
	EventThinkingDelta    EventType = "thinking_delta"
	EventThinkingEnd      EventType = "thinking_end"
	EventTextDelta        EventType = "text_delta"
	EventToolCall         EventType = "tool_call"
	EventApprovalRequired EventType = "approval_required"
	// EventToolOutput carries output a running tool streams (a shell
	// command's lines), before its EventToolResult.
	EventToolOutput EventType = "tool_output"
	EventToolResult EventType = "tool_result"
	EventUsage      EventType = "usage"
	// EventCompressed says older turns were summarised to fit the context
	// window; Text holds the summary.
	EventCompressed EventType = "compressed"
	EventError      EventType = "error"
	EventDone       EventType = "done"
)

// DoneReason says why a turn ended.
type DoneReason string

// Why a turn ends.
const (
	DoneStop      DoneReason = "stop"
	DoneMaxTurns  DoneReason = "max_turns"
	DoneCancelled DoneReason = "cancelled"
	DoneError     DoneReason = "error"
)

// Event is one item of a turn's stream. Which fields are set depends on
// Type; MarshalJSON writes exactly the contract's fields for each type.
type Event struct {
	Type EventType
	// session
	SessionID, Provider, Model string
	// thinking_delta, text_delta, tool_output, done
	Text string
	// tool_call, approval_required, tool_output, tool_result
	ID, Name string
	Args     json.RawMessage
	// approval_required: what the call will do, in a line
	Reason string
	// tool_result
	OK     bool
	Output string
	// Display is what a UI shows for a tool result (a diff); not part of
	// the JSON contract's required fields.
	Display string
	// tool_result (failed) and error
	Error string
	// error
	Code      string
	Retryable bool
	// usage
	InputTokens, OutputTokens int
	// done
	DoneReason DoneReason
	// Nested, on a tool_output event, is an event of a sub-agent that the
	// call runs (see SubAgent); Text then renders it in a line, or is
	// empty for events a plain UI need not show.
	Nested *Event
}

// MarshalJSON writes the event in the contract's shape, "type" first.
func (e Event) MarshalJSON() ([]byte, error) {
	f := fields{{"type", e.Type}}
	switch e.Type {
	case EventSession:
		f = append(f, kv{"session_id", e.SessionID}, kv{"provider", e.Provider}, kv{"model", e.Model})
	case EventThinkingDelta, EventTextDelta, EventCompressed:
		f = append(f, kv{"text", e.Text})
	case EventToolCall:
		f = append(f, kv{"id", e.ID}, kv{"name", e.Name}, kv{"args", rawOrEmpty(e.Args)})
	case EventApprovalRequired:
		f = append(f, kv{"id", e.ID}, kv{"name", e.Name}, kv{"args", rawOrEmpty(e.Args)}, kv{"reason", e.Reason})
	case EventToolOutput:
		f = append(f, kv{"id", e.ID}, kv{"name", e.Name}, kv{"text", e.Text})
		if e.Nested != nil {
			f = append(f, kv{"event", e.Nested})
		}
	case EventToolResult:
		f = append(f, kv{"id", e.ID}, kv{"name", e.Name}, kv{"ok", e.OK})
		if e.OK {
			f = append(f, kv{"output", e.Output})
		} else {
			f = append(f, kv{"error", e.Error})
		}
		if e.Display != "" {
			f = append(f, kv{"display", e.Display})
		}
	case EventUsage:
		f = append(f, kv{"input_tokens", e.InputTokens}, kv{"output_tokens", e.OutputTokens})
	case EventError:
		f = append(f, kv{"code", e.Code}, kv{"message", e.Error}, kv{"retryable", e.Retryable})
	case EventDone:
		f = append(f, kv{"reason", e.DoneReason}, kv{"text", e.Text})
	}
	return f.marshal()
}

type kv struct {
	k string
	v any
}

type fields []kv

func (f fields) marshal() ([]byte, error) {
	b := []byte{'{'}
	for i, x := range f {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(x.k)
		v, err := json.Marshal(x.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage(`{}`)
	}
	return r
}
