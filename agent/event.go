// Package agent runs Hearth's think-act loop: it sends the conversation and
// the enabled tools to a model, streams the reply as Events, runs the tool
// calls the model makes (through approvals and hooks), feeds the results back,
// and repeats until the model answers, a turn limit is hit, the context is
// cancelled, or an error ends it.
package agent

import (
	"encoding/json"
	"errors"

	"github.com/hearth-agent/hearth/llm"
)

// EventType names an event. The set and the JSON form of each are Hearth's
// public contract (docs/events.md): fields may be added, none renamed or
// removed.
type EventType string

// The event types, in the order a turn can produce them.
const (
	EventSession       EventType = "session"
	EventThinkingStart EventType = "thinking_start"
	EventThinkingDelta EventType = "thinking_delta"
	EventThinkingEnd   EventType = "thinking_end"
	EventTextDelta     EventType = "text_delta"
	// EventThinkingReclassified says that the answer text of the current
	// model reply so far, its text_delta events (which come just before it,
	// nothing between them), was reasoning: the model closed with a lone
	// </think> a block its chat template opened in the prompt. Text is that
	// text. A front end takes it out of the answer it shows and shows it as
	// reasoning, as if thinking_start and a thinking_delta of Text had come
	// in place of those deltas: more thinking_delta may follow, then
	// thinking_end. The final answer (done, Result.Text) and the stored
	// message hold the answer only.
	EventThinkingReclassified EventType = "thinking_reclassified"
	EventToolCall             EventType = "tool_call"
	EventApprovalRequired     EventType = "approval_required"
	// EventToolOutput carries output a running tool streams (a shell
	// command's lines), before its EventToolResult.
	EventToolOutput EventType = "tool_output"
	EventToolResult EventType = "tool_result"
	EventUsage      EventType = "usage"
	// EventCompressed says older turns were summarised to fit the context
	// window; Text holds the summary.
	EventCompressed EventType = "compressed"
	// EventCheckpoint says the workspace's files were snapshotted before
	// the call ID (of the tool Name) runs, outside the workspace: undo and
	// rewind can bring them back to this state. Checkpoint says which.
	EventCheckpoint EventType = "checkpoint"
	// EventRestore says files (and perhaps the conversation) were brought
	// back: an undo, a redo or a rewind. Restore says what. It comes from
	// the restore, not from a turn.
	EventRestore EventType = "restore"
	// EventPlan carries the model's whole plan (Plan) each time it
	// changes: after its call ID of the plan tool, before the call's
	// tool_result. With Reminder set, it says instead that the model
	// answered with steps open and was sent back (Agent.StrictPlan):
	// Reminder is what it was told.
	EventPlan  EventType = "plan"
	EventError EventType = "error"
	EventDone  EventType = "done"
)

// CheckpointInfo is what an EventCheckpoint says.
type CheckpointInfo struct {
	// ID is the checkpoint's number in the session store (rewind to it
	// with hearth sessions rewind --checkpoint).
	ID int64 `json:"checkpoint"`
	// Seq is the seq of the last message before it.
	Seq int `json:"seq"`
	// Files counts the files kept; Stored is the bytes this checkpoint
	// added to the store (the files that changed).
	Files  int   `json:"files"`
	Stored int64 `json:"stored"`
	// TooLarge lists files over the size cap: not kept, not restorable.
	TooLarge []string `json:"too_large,omitempty"`
}

// RestoreInfo is what an EventRestore says.
type RestoreInfo struct {
	// Op is "undo", "redo" or "rewind".
	Op string `json:"op"`
	// Checkpoint is the restore's own checkpoint: the files as they were
	// just before it (nothing a restore overwrites is lost).
	Checkpoint int64 `json:"checkpoint,omitempty"`
	// Turn is the turn undone or redone (the seq of its user message).
	Turn int `json:"turn,omitempty"`
	// Through is the message rewound to (its seq).
	Through int `json:"through,omitempty"`
	// Files lists each path restored and what the restore did to it.
	Files []FileChange `json:"files"`
	// Kept lists paths left as the user had changed them.
	Kept []string `json:"kept,omitempty"`
	// Failed lists paths that could not be restored, and why.
	Failed []FileProblem `json:"failed,omitempty"`
	// Conversation says how the conversation was rewound (nil: it was
	// not).
	Conversation *ConversationRewind `json:"conversation,omitempty"`
}

// FileChange is one path a restore changes: Action is "create" (it comes
// back), "delete" (it goes), "modify", "chmod" or "retype" (a file
// becomes a link, a folder…).
type FileChange struct {
	Path   string `json:"path"`
	Action string `json:"action"`
}

// FileProblem is a path a restore could not bring back, and why.
type FileProblem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// ConversationRewind says how a rewind cut the conversation: the messages
// after Through were removed (Removed of them), and kept whole in the
// archived session Archived.
type ConversationRewind struct {
	Through  int    `json:"through"`
	Removed  int    `json:"removed"`
	Archived string `json:"archived,omitempty"`
}

// DoneReason says why a turn ended.
type DoneReason string

// Why a turn ends.
const (
	DoneStop      DoneReason = "stop"
	DoneMaxTurns  DoneReason = "max_turns"
	DoneCancelled DoneReason = "cancelled"
	DoneError     DoneReason = "error"
)

// ErrorCode classifies the failure an error event reports (Event.Code).
// The codes are part of the event contract (docs/events.md): none is
// renamed or removed.
type ErrorCode string

// The error codes. A provider's failure is "provider_" followed by its
// llm.Code (ProviderCode); the others are the agent's own, and the time
// limit's of a front end that runs turns under one.
const (
	// CodeProviderUnreachable: nothing answered at the server's address.
	CodeProviderUnreachable = "provider_" + ErrorCode(llm.CodeUnreachable)
	// CodeProviderAuth: the server refused the credentials.
	CodeProviderAuth = "provider_" + ErrorCode(llm.CodeAuth)
	// CodeProviderModelNotFound: the server does not have the model.
	CodeProviderModelNotFound = "provider_" + ErrorCode(llm.CodeModelNotFound)
	// CodeProviderContextLength: the prompt does not fit the model's window.
	CodeProviderContextLength = "provider_" + ErrorCode(llm.CodeContextLength)
	// CodeProviderRateLimited: the server asked the agent to slow down.
	CodeProviderRateLimited = "provider_" + ErrorCode(llm.CodeRateLimited)
	// CodeProviderServer: the server failed.
	CodeProviderServer = "provider_" + ErrorCode(llm.CodeServer)
	// CodeProviderBadResponse: the server's answer could not be understood.
	CodeProviderBadResponse = "provider_" + ErrorCode(llm.CodeBadResponse)
	// CodeProviderInvalidRequest: the server rejected the request itself.
	CodeProviderInvalidRequest = "provider_" + ErrorCode(llm.CodeInvalidRequest)
	// CodeProviderCancelled: the provider's call was cancelled.
	CodeProviderCancelled = "provider_" + ErrorCode(llm.CodeCancelled)
	// CodeToolLoop: the model repeated the same call until the agent
	// stopped the turn (Agent.MaxRepeats).
	CodeToolLoop ErrorCode = "tool_loop"
	// CodeUnreadableCalls: the model wrote tool calls that could not be
	// read (arguments that are not JSON, a call written as text in no
	// form Hearth reads) several times in a row, and the agent stopped the
	// turn.
	CodeUnreadableCalls ErrorCode = "unreadable_tool_calls"
	// CodeTimeout: the run's time limit stopped it (hearth run --timeout);
	// the agent never emits it, the front end that set the limit does.
	CodeTimeout ErrorCode = "timeout"
	// CodeUsage: the run could not start because of a flag, an
	// environment variable or the configuration (hearth run's JSON
	// output, exit code 2); the agent never emits it.
	CodeUsage ErrorCode = "usage"
	// CodeSessionBusy: the session was running another turn, so this one
	// could not start; the agent never emits it.
	CodeSessionBusy ErrorCode = "session_busy"
	// CodeAgentError: any other failure.
	CodeAgentError ErrorCode = "agent_error"
)

// ProviderCode is the error code of a provider failure with code c.
func ProviderCode(c llm.Code) ErrorCode { return "provider_" + ErrorCode(c) }

// CodeOf is the code an error event carries for err: ProviderCode of a
// provider's error, the agent's own code for a turn it stopped, else
// CodeAgentError.
func CodeOf(err error) ErrorCode {
	var le *llm.Error
	var te *turnError
	switch {
	case errors.As(err, &le):
		return ProviderCode(le.Code)
	case errors.As(err, &te):
		return te.code
	}
	return CodeAgentError
}

// Event is one item of a turn's stream. Which fields are set depends on
// Type; MarshalJSON writes exactly the contract's fields for each type.
type Event struct {
	Type EventType
	// session
	SessionID, Provider, Model string
	// thinking_delta, text_delta, thinking_reclassified, tool_output, done
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
	Code      ErrorCode
	Retryable bool
	// usage
	InputTokens, OutputTokens int
	// CachedInputTokens (usage) are the input tokens the server served
	// from its prompt cache: a part of InputTokens.
	CachedInputTokens int
	// Cost (usage) is what the call cost, in micro-units (millionths) of
	// the user's currency: nil when its model has no price. The agent
	// knows no prices: the layer that records usage (a stored turn) sets
	// it before the event reaches the caller.
	Cost *int64
	// done
	DoneReason DoneReason
	// checkpoint
	Checkpoint *CheckpointInfo
	// restore
	Restore *RestoreInfo
	// plan
	Plan     *Plan
	Reminder string
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
	case EventThinkingDelta, EventTextDelta, EventThinkingReclassified, EventCompressed:
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
		if e.CachedInputTokens > 0 {
			f = append(f, kv{"cached_input_tokens", e.CachedInputTokens})
		}
		if e.Cost != nil {
			f = append(f, kv{"cost", *e.Cost})
		}
	case EventCheckpoint:
		c := e.Checkpoint
		if c == nil {
			c = &CheckpointInfo{}
		}
		f = append(f, kv{"id", e.ID}, kv{"name", e.Name}, kv{"checkpoint", c.ID}, kv{"seq", c.Seq}, kv{"files", c.Files}, kv{"stored", c.Stored})
		if len(c.TooLarge) > 0 {
			f = append(f, kv{"too_large", c.TooLarge})
		}
	case EventRestore:
		r := e.Restore
		if r == nil {
			r = &RestoreInfo{}
		}
		f = append(f, kv{"op", r.Op}, kv{"checkpoint", r.Checkpoint})
		if r.Turn > 0 {
			f = append(f, kv{"turn", r.Turn})
		}
		if r.Through > 0 {
			f = append(f, kv{"through", r.Through})
		}
		files := r.Files
		if files == nil {
			files = []FileChange{}
		}
		f = append(f, kv{"files", files})
		if len(r.Kept) > 0 {
			f = append(f, kv{"kept", r.Kept})
		}
		if len(r.Failed) > 0 {
			f = append(f, kv{"failed", r.Failed})
		}
		if r.Conversation != nil {
			f = append(f, kv{"conversation", r.Conversation})
		}
	case EventPlan:
		steps := []PlanStep{}
		if e.Plan != nil && e.Plan.Steps != nil {
			steps = e.Plan.Steps
		}
		if e.ID != "" {
			f = append(f, kv{"id", e.ID})
		}
		f = append(f, kv{"steps", steps})
		if e.Reminder != "" {
			f = append(f, kv{"reminder", e.Reminder})
		}
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
