package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/hearth-agent/hearth/llm"
)

// request is what every model call of the agent sends for the conversation
// msgs: the system prompt, the messages, the tools and the options, in an
// order that never changes. Servers that keep a cache of the previous
// prompt (Ollama, llama.cpp) reuse it when a request begins with exactly the
// tokens of the one before, so everything here must render the same
// conversation the same way every time: the turn's next call, the next
// turn, a side request (Ask) and a later process resuming the session all
// begin with the same bytes.
func (a *Agent) request(model string, msgs []llm.Message) *llm.Request {
	req := &llm.Request{Model: model, Think: a.Think, ContextLength: a.ContextLength}
	if a.System != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: a.System})
	}
	req.Messages = append(req.Messages, alternate(msgs)...)
	if a.Tools != nil {
		req.Tools = a.Tools.Specs()
	}
	return req
}

// compactArgs returns a call's arguments in compact JSON, as the session
// store keeps them (without HTML escaping): the reply is then the same
// bytes in the turn that made it and sent back from the store, and a
// server's prompt cache holds across the two. Arguments that are not JSON
// are kept as they are.
func compactArgs(args json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if len(args) == 0 || json.Compact(&b, args) != nil || b.Len() == len(args) {
		return args
	}
	return b.Bytes()
}

// AskOptions shape a side request (Ask).
type AskOptions struct {
	// Model answers instead of the agent's model ("": the agent's).
	Model string
	// MaxTokens bounds the reply (0: the server's default).
	MaxTokens int
	// NoThink asks a model that reasons not to, for a short reply; a
	// server that refuses the setting is asked again without it.
	NoThink bool
	// OnUsage, if set, is given the server's token count of each model
	// call Ask makes (none when the server sent none), a failed call's
	// too, so that a caller can record what the question cost.
	OnUsage func(u llm.Usage)
}

// ErrNoAnswer is returned by Ask when the model replied without text (it
// called a tool instead, or said nothing), or was cut off at MaxTokens.
var ErrNoAnswer = errors.New("the model gave no text answer")

// Ask puts a side question to the model about the conversation history (a
// title, say) and returns its text answer. The request is the one the
// agent's next turn would send — system prompt, tools, options, history —
// with question appended as a user message, so that a server that caches
// the previous prompt evaluates only the question: a side request that
// began differently would evict the conversation from a server with one
// slot, and the user's next turn would be evaluated whole again. No tool
// runs: a tool call in the reply is ignored (ErrNoAnswer when there is no
// text).
func (a *Agent) Ask(ctx context.Context, history []llm.Message, question string, o AskOptions) (string, error) {
	model := o.Model
	if model == "" {
		model = a.Model
	}
	msgs := append(append([]llm.Message(nil), history...), llm.Message{Role: llm.RoleUser, Content: question})
	req := a.request(model, msgs)
	req.NoStream, req.MaxTokens = true, o.MaxTokens
	if o.NoThink {
		req.Think = &llm.Think{Enabled: false}
	}
	res, err := llm.Collect(a.Provider.Chat(ctx, req))
	o.usage(res)
	if err != nil && o.NoThink && ctx.Err() == nil && llm.CodeOf(err) == llm.CodeInvalidRequest {
		// A model that cannot reason refuses think=false on some
		// servers (Ollama): it answers without thinking anyway.
		req.Think = a.Think
		res, err = llm.Collect(a.Provider.Chat(ctx, req))
		o.usage(res)
	}
	if err != nil {
		return "", err
	}
	if res.Done != nil && res.Done.Reason == llm.FinishLength {
		// Cut off at MaxTokens: not the short answer asked for (a model
		// that reasoned at length, its reasoning given back as text when
		// the block never closed).
		return "", ErrNoAnswer
	}
	text := strings.TrimSpace(res.Message.Content)
	if text == "" {
		return "", ErrNoAnswer
	}
	return text, nil
}

// usage hands a call's token count to OnUsage, if the server sent one.
func (o AskOptions) usage(res *llm.Response) {
	if o.OnUsage != nil && res != nil && res.Usage != nil {
		o.OnUsage(*res.Usage)
	}
}
