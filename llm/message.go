// Package llm holds the provider-neutral vocabulary Hearth uses to talk to
// models: messages, tool calls and tool specs, requests, the normalised stream
// of events a chat produces, model information, and the typed errors every
// provider maps its failures to.
//
// Everything specific to one server's wire format stops in the provider
// packages (llm/ollama, llm/openai, llm/responses). Above them a tool call is always
// {ID, Name, Args} with Args as parsed JSON, reasoning is always a separate
// stream of EventThinking, and every failure is an *Error with a stable Code.
package llm

import (
	"encoding/json"
	"time"
)

// Role says who wrote a message.
type Role string

// The roles a message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
//
// An assistant message that asked for tools carries them in ToolCalls; the
// answer to each comes back as a RoleTool message whose ToolCallID (and
// ToolName, which Ollama needs) pair it with its call.
type Message struct {
	Role Role `json:"role"`
	// Content is the visible text of the message.
	Content string `json:"content,omitempty"`
	// Thinking is the model's reasoning, kept apart from Content.
	Thinking string `json:"thinking,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID pairs a RoleTool message with the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName names the tool a RoleTool message answers for.
	ToolName string `json:"tool_name,omitempty"`
	// Images are raw image bytes for vision models.
	Images [][]byte `json:"images,omitempty"`
}

// ToolCall is one call of a tool the model asked for.
type ToolCall struct {
	// ID identifies the call; providers that send none get one generated, so
	// that every result can be paired with its call.
	ID string `json:"id"`
	// Name is the tool's name as offered in the request.
	Name string `json:"name"`
	// Args is the call's arguments as a JSON object. It is always valid JSON
	// ("{}" when the model sent none).
	Args json.RawMessage `json:"args"`
	// Repaired is set when Args had to be repaired from slightly malformed
	// JSON (trailing commas, single quotes, a missing closing brace).
	Repaired bool `json:"repaired,omitempty"`
	// ArgsError is set when the arguments could not be read even after
	// repair; Args is then {} and the message says what was wrong, for the
	// model to correct.
	ArgsError string `json:"args_error,omitempty"`
	// FromText is set when the call was written by the model as text
	// (<tool_call>…</tool_call>, a fenced JSON block) rather than sent as a
	// native tool call.
	FromText bool `json:"from_text,omitempty"`
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's argument object.
	Parameters json.RawMessage `json:"parameters"`
}

// ToolChoice says whether and which tool the model must call.
type ToolChoice string

// Tool choices understood by every provider; any other value names the one
// tool the model must call.
const (
	ToolChoiceAuto     ToolChoice = ""
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Think asks a model to reason before it answers.
//
// A nil *Think leaves the server's default. Level, where set, is "low",
// "medium" or "high" (servers that take only on/off treat any level as on).
type Think struct {
	Enabled bool
	Level   string
}

// Request is one chat call.
type Request struct {
	// Model names the model; empty means the provider's configured default.
	Model    string
	Messages []Message
	Tools    []ToolSpec
	// ToolChoice is sent only when Tools is not empty.
	ToolChoice ToolChoice
	Think      *Think
	// Temperature, TopP, Seed and MaxTokens are sent only when non-nil/non-zero.
	Temperature *float64
	TopP        *float64
	Seed        *int
	MaxTokens   int
	Stop        []string
	// ContextLength, when non-zero, is the context window to ask the server
	// for (Ollama's num_ctx). Providers fill it from the model when zero.
	ContextLength int
	// KeepAlive is how long the server should keep the model loaded after
	// the call (Ollama); zero leaves the server's default.
	KeepAlive time.Duration
	// NoStream asks the server for one complete response instead of a
	// stream. The events yielded are the same either way.
	NoStream bool
}

// Usage counts the tokens of one call.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CachedInputTokens are the input tokens the server served from its
	// prompt cache (OpenAI's prompt_tokens_details.cached_tokens): a part
	// of InputTokens, not more of them. 0 when the server does not say.
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
}

// Capability is something a model can do.
type Capability string

// Capabilities a model may have.
const (
	CapTools     Capability = "tools"
	CapThinking  Capability = "thinking"
	CapVision    Capability = "vision"
	CapEmbedding Capability = "embedding"
)

// ModelInfo is what a server says about one model.
type ModelInfo struct {
	Name string `json:"name"`
	// Capabilities lists what the server says the model can do. Where the
	// server says nothing (most OpenAI-compatible servers) it holds what
	// configuration says, and CapabilitiesKnown is false when neither did.
	Capabilities      []Capability `json:"capabilities,omitempty"`
	CapabilitiesKnown bool         `json:"capabilities_known"`
	// ContextLength is the context window, in tokens, that Hearth uses
	// with this model (what it asks the server for); 0 if unknown.
	ContextLength int `json:"context_length,omitempty"`
	// TrainedContextLength is the model's own maximum where the server
	// says (Ollama's model_info), which may be larger than ContextLength.
	TrainedContextLength int `json:"trained_context_length,omitempty"`
	// Family, ParameterSize, Quantization and Size describe the model where
	// the server says (Ollama).
	Family        string    `json:"family,omitempty"`
	ParameterSize string    `json:"parameter_size,omitempty"`
	Quantization  string    `json:"quantization,omitempty"`
	Size          int64     `json:"size,omitempty"`
	ModifiedAt    time.Time `json:"modified_at,omitzero"`
}

// Has reports whether the model has capability c.
func (m ModelInfo) Has(c Capability) bool {
	for _, x := range m.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// ServerInfo is what a health check learns about a server.
type ServerInfo struct {
	// Kind is the provider kind: "ollama", "openai" or "responses".
	Kind string `json:"kind"`
	// BaseURL is the address that answered.
	BaseURL string `json:"base_url"`
	// Version is the server's version where it says (Ollama).
	Version string `json:"version,omitempty"`
	// Latency is how long the check took.
	Latency time.Duration `json:"latency"`
}
