package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/argjson"
	"github.com/hearth-agent/hearth/llm/internal/norm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
	"github.com/valyala/fastjson"
)

// Wire types of /api/chat.

type chatRequest struct {
	Model     string         `json:"model"`
	Messages  []message      `json:"messages"`
	Tools     []tool         `json:"tools,omitempty"`
	Stream    bool           `json:"stream"`
	Think     any            `json:"think,omitempty"`
	KeepAlive string         `json:"keep_alive,omitempty"`
	Options   map[string]any `json:"options,omitempty"`
	Truncate  *bool          `json:"truncate,omitempty"`
}

type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	Images     [][]byte   `json:"images,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     *int            `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Chat streams /api/chat (or, with req.NoStream, makes one call and yields
// the same events from its answer).
func (p *Provider) Chat(ctx context.Context, req *llm.Request) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		model := p.model(req.Model)
		if model == "" {
			yield(llm.Event{}, &llm.Error{Provider: "ollama", Op: "chat", Code: llm.CodeInvalidRequest,
				Message: "no model given", Hint: "choose one with --model (`hearth models` lists them)"})
			return
		}
		numCtx := req.ContextLength
		if numCtx == 0 {
			numCtx = p.opts.NumCtx
		}
		// What /api/show said of the model, if it was asked already: it is
		// not asked only to read the template.
		meta := p.cached(model)
		if numCtx == 0 {
			// Best effort: without /api/show the server's default applies.
			if m, err := p.show(ctx, model); err == nil {
				meta, numCtx = m, p.window(m)
			}
		}
		body, err := json.Marshal(p.wireRequest(req, model, numCtx))
		if err != nil {
			yield(llm.Event{}, &llm.Error{Provider: "ollama", Op: "chat", Code: llm.CodeInvalidRequest, Message: "encoding the request: " + err.Error(), Err: err})
			return
		}
		// Tools refused with ToolChoiceNone are not sent, and a call the
		// model writes as text anyway stays text.
		var tools []string
		if req.ToolChoice != llm.ToolChoiceNone {
			for _, t := range req.Tools {
				tools = append(tools, t.Name)
			}
		}
		opts := norm.Options{Tools: tools, ImplicitThink: p.implicitThink(model, meta),
			OnLoneClose: func() { p.sawLoneClose(model) }}
		var n *norm.Normalizer
		err = p.client.Do(ctx, func() (bool, error) {
			n = norm.New(opts, yield)
			b, err := p.client.Open(ctx, "chat", http.MethodPost, p.url("/api/chat"), body, p.client.StreamTimeouts(len(tools) > 0))
			if err != nil {
				return false, p.withModels(ctx, err, model)
			}
			defer b.Close()
			err = p.decode(b, n, promptBound(req), numCtx)
			return n.Emitted(), err
		})
		if err != nil && !n.Stopped() && !errors.Is(err, wire.ErrStopped) {
			n.Abort() // a partial answer is kept, not dropped
			if !n.Stopped() {
				yield(llm.Event{}, err)
			}
		}
	}
}

// decode reads the NDJSON stream (or the one JSON object of a
// non-streamed answer) into n. Lines are read with a reusable parser and only
// the fields Hearth uses: this is the hot path, one call per streamed chunk.
func (p *Provider) decode(b *wire.Body, n *norm.Normalizer, promptMin, numCtx int) error {
	dec := wire.NewNDJSON(b)
	var parser fastjson.Parser
	for {
		line, err := dec.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return p.client.Truncated("chat")
			}
			return b.Err(err)
		}
		v, err := parser.ParseBytes(line)
		if err != nil {
			return p.client.Malformed("chat", line, err)
		}
		if e := v.GetStringBytes("error"); len(e) > 0 {
			return p.client.FromStream("chat", string(e), "")
		}
		if m := v.Get("message"); m != nil {
			if t := m.GetStringBytes("thinking"); len(t) > 0 && !n.Reasoning(string(t)) {
				return wire.ErrStopped
			}
			if c := m.GetStringBytes("content"); len(c) > 0 && !n.Content(string(c)) {
				return wire.ErrStopped
			}
			for _, tc := range m.GetArray("tool_calls") {
				if !n.ToolCall(convertCall(tc)) {
					return wire.ErrStopped
				}
			}
		}
		if v.GetBool("done") {
			in, out := v.GetInt("prompt_eval_count"), v.GetInt("eval_count")
			var usage *llm.Usage
			if in > 0 || out > 0 {
				usage = &llm.Usage{InputTokens: in, OutputTokens: out}
			}
			truncated := in > 0 && (in < promptMin || (numCtx > 0 && in >= numCtx))
			if !n.Finish(norm.FinishReason(string(v.GetStringBytes("done_reason"))), usage, truncated) {
				return wire.ErrStopped
			}
			return nil
		}
	}
}

// convertCall reads one of Ollama's tool calls: arguments are an object
// (older servers send no id and no index; the normaliser makes an id).
func convertCall(tc *fastjson.Value) llm.ToolCall {
	fn := tc.Get("function")
	out := llm.ToolCall{ID: string(tc.GetStringBytes("id")), Name: string(fn.GetStringBytes("name"))}
	var raw []byte
	if a := fn.Get("arguments"); a != nil {
		if a.Type() == fastjson.TypeString {
			raw = a.GetStringBytes()
		} else {
			raw = a.MarshalTo(nil)
		}
	}
	args, repaired, err := argjson.Normalize(raw)
	if err != nil {
		out.Args, out.ArgsError = json.RawMessage(`{}`), err.Error()
	} else {
		out.Args, out.Repaired = append(json.RawMessage(nil), args...), repaired
	}
	return out
}

// promptBound is a lower bound on the tokens the prompt takes: no tokenizer
// packs more than about six bytes of text into a token. A server that reports
// evaluating fewer tokens than this dropped part of the prompt.
func promptBound(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n / 6
}

func (p *Provider) wireRequest(req *llm.Request, model string, numCtx int) *chatRequest {
	w := &chatRequest{Model: model, Stream: !req.NoStream, Messages: make([]message, 0, len(req.Messages))}
	// Reasoning is sent back with every message that had it, and the
	// model's template decides what to show of it: reasoning models'
	// templates (Qwen3, DeepSeek-R1, gpt-oss) keep that of the turn in
	// progress only, as the models were trained. Leaving it out here
	// instead would change how a message is sent once the next user
	// message comes, and so, for a template that shows it all, the prompt
	// Ollama caches would no longer begin the next request.
	for _, m := range req.Messages {
		wm := message{Role: string(m.Role), Content: m.Content, Images: m.Images, ToolName: m.ToolName, ToolCallID: m.ToolCallID, Thinking: m.Thinking}
		for j, tc := range m.ToolCalls {
			var c toolCall
			c.ID = tc.ID
			idx := j
			c.Function.Index = &idx
			c.Function.Name = tc.Name
			c.Function.Arguments = tc.Args
			if len(c.Function.Arguments) == 0 {
				c.Function.Arguments = json.RawMessage(`{}`)
			}
			wm.ToolCalls = append(wm.ToolCalls, c)
		}
		w.Messages = append(w.Messages, wm)
	}
	if req.ToolChoice != llm.ToolChoiceNone {
		for _, t := range req.Tools {
			var wt tool
			wt.Type = "function"
			wt.Function.Name, wt.Function.Description, wt.Function.Parameters = t.Name, t.Description, t.Parameters
			if len(wt.Function.Parameters) == 0 {
				wt.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			w.Tools = append(w.Tools, wt)
		}
	}
	if t := req.Think; t != nil {
		switch {
		case !t.Enabled:
			w.Think = false
		case t.Level != "":
			w.Think = t.Level
		default:
			w.Think = true
		}
	}
	ka := req.KeepAlive
	if ka == 0 {
		ka = p.opts.KeepAlive
	}
	if ka != 0 {
		w.KeepAlive = ka.String()
	}
	opts := map[string]any{}
	if numCtx > 0 {
		opts["num_ctx"] = numCtx
	}
	if req.Temperature != nil {
		opts["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		opts["top_p"] = *req.TopP
	}
	if req.Seed != nil {
		opts["seed"] = *req.Seed
	}
	if req.MaxTokens > 0 {
		opts["num_predict"] = req.MaxTokens
	}
	if len(req.Stop) > 0 {
		opts["stop"] = req.Stop
	}
	if len(opts) > 0 {
		w.Options = opts
	}
	if !p.opts.AllowTruncation {
		f := false
		w.Truncate = &f
	}
	return w
}
