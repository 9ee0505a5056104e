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
//
// At most once in a reply, after EventText deltas and before any
// EventThinking or EventToolCall, an EventThinkingReclassified can say that
// those deltas were reasoning after all (the model closed with a lone
// </think> a block its chat template had opened in the prompt); the events
// that follow go on as above, the reasoning first.
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
	// EventThinkingReclassified says that every EventText of the reply so
	// far was reasoning: Text is their text, joined. A consumer moves it
	// from the reply's answer to its thinking (Collect does).
	EventThinkingReclassified
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
	case EventThinkingReclassified:
		return "thinking_reclassified"
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

// Provider talks to one model server. Chat is all a provider must do.
//
// A provider whose server can do more says so by implementing the optional
// interfaces, as an io.Writer may be an io.StringWriter: ModelLister (list
// the server's models), ModelDescriber (describe one model), Embedder
// (compute embeddings) and HealthChecker (check the server answers).
// llm/ollama, llm/openai and llm/responses implement all four. Callers reach them through
// Models, Describe, Embed and Health, which use the ability when the
// provider has it and otherwise return an *Error with CodeInvalidRequest, the
// provider's Kind, the operation, a message saying the provider cannot do
// it, and Err set to errors.ErrUnsupported, so that
// errors.Is(err, errors.ErrUnsupported) tells that case apart.
//
// A wrapper that embeds a Provider (to log or count calls, say) hides the
// wrapped provider's optional methods: it must declare the ones it passes on.
//
// Implementations are safe for concurrent use.
type Provider interface {
	// Kind names the provider, for errors and logs: the wire dialect
	// ("ollama", "openai" or "responses") for Hearth's own providers.
	Kind() string
	// Chat sends req and streams the reply.
	Chat(ctx context.Context, req *Request) Stream
}
