package llm

import (
	"context"
	"iter"
)

// EventKind says what an Event carries.
type EventKind uint8

// The kinds of event a chat stream yields, in the order they can appear:
// any number of EventThinking and EventText deltas, interleaved as the model
// produced them, then the EventToolCall of each completed call, then
// EventUsage where the server reported it, and last exactly one EventDone.
const (
	// EventThinking carries a piece of the model's reasoning in Text.
	EventThinking EventKind = iota + 1
	// EventText carries a piece of the answer in Text.
	EventText
	// EventToolCall carries one complete tool call in ToolCall.
	EventToolCall
	// EventUsage carries the call's token counts in Usage.
	EventUsage
	// EventDone ends a successful stream; Done says why it stopped.
	EventDone
)

// String returns the kind's name, for logs and test failures.
func (k EventKind) String() string {
	switch k {
	case EventThinking:
		return "thinking"
	case EventText:
		return "text"
	case EventToolCall:
		return "tool_call"
	case EventUsage:
		return "usage"
	case EventDone:
		return "done"
	}
	return "unknown"
}

// FinishReason says why the model stopped.
type FinishReason string

// Finish reasons, normalised across servers.
const (
	FinishStop      FinishReason = "stop"
	FinishLength    FinishReason = "length"
	FinishToolCalls FinishReason = "tool_calls"
)

// Done is the payload of EventDone.
type Done struct {
	Reason FinishReason `json:"reason"`
	// PromptTruncated is set when the server evaluated fewer prompt tokens
	// than the prompt can possibly hold, or filled the whole window: the
	// front of the prompt (system prompt, tool definitions) was likely cut.
	PromptTruncated bool `json:"prompt_truncated,omitempty"`
}

// Event is one item of a chat stream. Which fields are set depends on Kind.
type Event struct {
	Kind     EventKind
	Text     string
	ToolCall *ToolCall
	Usage    *Usage
	Done     *Done
}

// Stream is the result of Provider.Chat: a single-use sequence of events.
//
// Ranging over it performs the request. Each pair carries either an event or,
// last, a non-nil error (an *Error); a stream that ends without an error ended
// with EventDone. Breaking out of the loop closes the connection; no
// goroutine outlives the loop.
type Stream = iter.Seq2[Event, error]

// Provider talks to one model server.
//
// Implementations are safe for concurrent use.
type Provider interface {
	// Kind names the wire dialect: "ollama" or "openai".
	Kind() string
	// Chat sends req and streams the reply.
	Chat(ctx context.Context, req *Request) Stream
	// Models lists the models the server has.
	Models(ctx context.Context) ([]ModelInfo, error)
	// ModelInfo describes one model: capabilities and context length.
	ModelInfo(ctx context.Context, model string) (*ModelInfo, error)
	// Embed returns one embedding vector per input.
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
	// Health checks that the server answers and says what it is.
	Health(ctx context.Context) (*ServerInfo, error)
}
