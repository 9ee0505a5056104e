package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/argjson"
	"github.com/hearth-agent/hearth/llm/internal/norm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
	"github.com/valyala/fastjson"
)

// Wire types of /chat/completions.

type chatRequest struct {
	Model              string          `json:"model"`
	Messages           []message       `json:"messages"`
	Tools              []tool          `json:"tools,omitempty"`
	ToolChoice         any             `json:"tool_choice,omitempty"`
	Stream             bool            `json:"stream"`
	StreamOptions      *streamOptions  `json:"stream_options,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"top_p,omitempty"`
	Seed               *int            `json:"seed,omitempty"`
	MaxTokens          int             `json:"max_tokens,omitempty"`
	Stop               []string        `json:"stop,omitempty"`
	ReasoningEffort    string          `json:"reasoning_effort,omitempty"`
	ChatTemplateKwargs map[string]bool `json:"chat_template_kwargs,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type tool struct {
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// deltaCall is one tool-call delta as the wire sent it.
type deltaCall struct {
	// Index is nil when the server sent none (old Ollama /v1).
	Index *int
	ID    string
	Name  string
	// Args is a piece of the arguments string, or a whole arguments object
	// when ArgsObject is set (llama.cpp and some gateways send objects).
	Args       string
	ArgsObject bool
}

// readDelta applies a delta (streamed) or message (whole) object to n and
// the call assembly. Only the fields Hearth uses are read, with a reusable
// parser: this is the hot path, one call per streamed chunk.
func readDelta(d *fastjson.Value, n *norm.Normalizer, cs *calls) bool {
	if d == nil || d.Type() != fastjson.TypeObject {
		return true
	}
	r := d.GetStringBytes("reasoning_content")
	if len(r) == 0 {
		r = d.GetStringBytes("reasoning")
	}
	if len(r) > 0 && !n.Reasoning(string(r)) {
		return false
	}
	if c := d.GetStringBytes("content"); len(c) > 0 && !n.Content(string(c)) {
		return false
	}
	for i, tc := range d.GetArray("tool_calls") {
		var dc deltaCall
		if iv := tc.Get("index"); iv != nil && iv.Type() == fastjson.TypeNumber {
			idx := iv.GetInt()
			dc.Index = &idx
		} else if cs.whole {
			dc.Index = &i
		}
		dc.ID = string(tc.GetStringBytes("id"))
		fn := tc.Get("function")
		if fn != nil {
			dc.Name = string(fn.GetStringBytes("name"))
			switch a := fn.Get("arguments"); {
			case a == nil:
			case a.Type() == fastjson.TypeString:
				dc.Args = string(a.GetStringBytes())
			case a.Type() == fastjson.TypeObject:
				dc.Args, dc.ArgsObject = string(a.MarshalTo(nil)), true
			}
		}
		cs.add(&dc)
	}
	return true
}

// streamError returns the error a chunk carries, if any.
func (p *Provider) streamError(v *fastjson.Value, data []byte) error {
	if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
		msg, code := wire.ParseErrorBody(data)
		return p.client.FromStream("chat", msg, code)
	}
	return nil
}

func usageOf(v *fastjson.Value) *llm.Usage {
	u := v.Get("usage")
	if u == nil || u.Type() != fastjson.TypeObject {
		return nil
	}
	in := u.GetInt("prompt_tokens")
	// The prompt cache's share of the input (OpenAI, vLLM with prefix
	// caching): a part of prompt_tokens, priced apart. A server that
	// says more cached tokens than input ones is not believed beyond
	// the input.
	cached := min(max(u.GetInt("prompt_tokens_details", "cached_tokens"), 0), max(in, 0))
	return &llm.Usage{InputTokens: in, OutputTokens: u.GetInt("completion_tokens"), CachedInputTokens: cached}
}

// Chat streams /chat/completions (or, with req.NoStream, makes one call and
// yields the same events from its answer).
func (p *Provider) Chat(ctx context.Context, req *llm.Request) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		model := p.model(req.Model)
		if model == "" {
			yield(llm.Event{}, &llm.Error{Provider: "openai", Op: "chat", Code: llm.CodeInvalidRequest,
				Message: "no model given", Hint: "choose one with --model (`hearth models` lists them)"})
			return
		}
		body, err := json.Marshal(p.wireRequest(req, model))
		if err != nil {
			yield(llm.Event{}, &llm.Error{Provider: "openai", Op: "chat", Code: llm.CodeInvalidRequest, Message: "encoding the request: " + err.Error(), Err: err})
			return
		}
		// Whether the template opened <think> in the prompt cannot be seen
		// in the stream until the lone </think>: configuration, the
		// template (llama.cpp's /props) or an earlier reply says.
		opts := norm.Options{ImplicitThink: p.implicitThink(model, req.Think),
			OnLoneClose: func() { p.sawLoneClose(model) }}
		var tools []string
		if req.ToolChoice != llm.ToolChoiceNone {
			for _, t := range req.Tools {
				tools = append(tools, t.Name)
			}
		}
		opts.Tools = tools
		var n *norm.Normalizer
		err = p.client.Do(ctx, func() (bool, error) {
			n = norm.New(opts, yield)
			b, err := p.client.Open(ctx, "chat", http.MethodPost, p.url("/chat/completions"), body, p.client.StreamTimeouts(len(tools) > 0))
			if err != nil {
				return false, p.withModels(ctx, err)
			}
			defer b.Close()
			if req.NoStream {
				err = p.decodeWhole(b, n)
			} else {
				err = p.decodeStream(b, n)
			}
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

// calls assembles streamed tool-call deltas.
type calls struct {
	// whole is set for a non-streamed message, whose calls may lack an
	// index because they are not pieces.
	whole bool
	list  []*partialCall
	// byIndex maps a delta's index to the call it continues.
	byIndex map[int]*partialCall
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// add applies one delta. A delta starts a new call when its index has not
// been seen, or when it brings a different id together with a name (servers
// that send every parallel call as index 0). A different id without a name
// continues the call: some servers change the id between one call's deltas.
func (cs *calls) add(d *deltaCall) {
	idx := -1
	if d.Index != nil {
		idx = *d.Index
	}
	cur := cs.byIndex[idx]
	if cur == nil && idx == -1 && len(cs.list) > 0 {
		cur = cs.list[len(cs.list)-1]
	}
	if cur == nil || (d.ID != "" && cur.id != "" && d.ID != cur.id && d.Name != "") ||
		(d.Name != "" && cur.name != "" && cur.args.Len() > 0 && d.ID == "" && idx == -1) {
		cur = &partialCall{id: d.ID}
		cs.list = append(cs.list, cur)
		if cs.byIndex == nil {
			cs.byIndex = map[int]*partialCall{}
		}
		cs.byIndex[idx] = cur
	}
	if cur.id == "" {
		cur.id = d.ID
	}
	if d.Name != "" && (cur.name == "" || cur.args.Len() == 0) {
		cur.name = d.Name
	}
	if d.ArgsObject {
		// A whole value, not a piece.
		cur.args.Reset()
	}
	cur.args.WriteString(d.Args)
}

// flush yields the assembled calls. cut says the reply was cut by the
// length limit: arguments that are not complete JSON are then refused, not
// repaired, because the model had not finished writing them.
func (cs *calls) flush(n *norm.Normalizer, cut bool) bool {
	for _, c := range cs.list {
		if c.name == "" && c.args.Len() == 0 {
			continue
		}
		tc := llm.ToolCall{ID: c.id, Name: c.name}
		args, repaired, err := argjson.Normalize([]byte(c.args.String()))
		switch {
		case err != nil:
			tc.Args, tc.ArgsError = json.RawMessage(`{}`), err.Error()
		case repaired && cut:
			tc.Args, tc.ArgsError = json.RawMessage(`{}`), "the reply hit the length limit while writing this call's arguments: make the call again, with shorter arguments"
		default:
			tc.Args, tc.Repaired = args, repaired
		}
		if !n.ToolCall(tc) {
			return false
		}
	}
	cs.list, cs.byIndex = nil, nil
	return true
}

func (p *Provider) decodeStream(b *wire.Body, n *norm.Normalizer) error {
	sse := wire.NewSSE(b)
	var parser fastjson.Parser
	var cs calls
	var finish string
	var u *llm.Usage
	end := func() error {
		if !cs.flush(n, finish == "length") || !n.Finish(norm.FinishReason(finish), u, false) {
			return wire.ErrStopped
		}
		return nil
	}
	for {
		ev, err := sse.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if finish != "" {
					return end() // some servers omit [DONE]
				}
				return p.client.Truncated("chat")
			}
			return b.Err(err)
		}
		if len(ev.Error) > 0 {
			msg, code := wire.ParseErrorBody(ev.Error)
			return p.client.FromStream("chat", msg, code)
		}
		data := ev.Data
		if len(data) == 0 {
			continue
		}
		if string(ev.Event) == "error" {
			msg, code := wire.ParseErrorBody(data)
			return p.client.FromStream("chat", msg, code)
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			return end()
		}
		v, err := parser.ParseBytes(data)
		if err != nil {
			return p.client.Malformed("chat", data, err)
		}
		if err := p.streamError(v, data); err != nil {
			return err
		}
		if x := usageOf(v); x != nil {
			u = x
		}
		for _, ch := range v.GetArray("choices") {
			if ch.GetInt("index") != 0 {
				continue
			}
			if !readDelta(ch.Get("delta"), n, &cs) {
				return wire.ErrStopped
			}
			if fr := ch.GetStringBytes("finish_reason"); len(fr) > 0 {
				finish = string(fr)
			}
		}
	}
}

func (p *Provider) decodeWhole(b *wire.Body, n *norm.Normalizer) error {
	data, err := io.ReadAll(io.LimitReader(b, 64<<20))
	if err != nil {
		return b.Err(err)
	}
	var parser fastjson.Parser
	v, err := parser.ParseBytes(data)
	if err != nil {
		return p.client.Malformed("chat", data, err)
	}
	if err := p.streamError(v, data); err != nil {
		return err
	}
	choices := v.GetArray("choices")
	if len(choices) == 0 {
		return p.client.Malformed("chat", data, errors.New("no choices"))
	}
	cs := calls{whole: true}
	if !readDelta(choices[0].Get("message"), n, &cs) {
		return wire.ErrStopped
	}
	finish := string(choices[0].GetStringBytes("finish_reason"))
	if !cs.flush(n, finish == "length") || !n.Finish(norm.FinishReason(finish), usageOf(v), false) {
		return wire.ErrStopped
	}
	return nil
}

func (p *Provider) wireRequest(req *llm.Request, model string) *chatRequest {
	w := &chatRequest{Model: model, Stream: !req.NoStream, Temperature: req.Temperature, TopP: req.TopP,
		Seed: req.Seed, MaxTokens: req.MaxTokens, Stop: req.Stop}
	if w.Stream {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		wm := message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		if len(m.Images) > 0 {
			parts := []contentPart{{Type: "text", Text: m.Content}}
			for _, img := range m.Images {
				parts = append(parts, contentPart{Type: "image_url", ImageURL: &imageURL{
					URL: "data:" + http.DetectContentType(img) + ";base64," + base64.StdEncoding.EncodeToString(img)}})
			}
			wm.Content = parts
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Args)
			if args == "" {
				args = "{}"
			}
			wm.ToolCalls = append(wm.ToolCalls, toolCall{ID: tc.ID, Type: "function", Function: function{Name: tc.Name, Arguments: args}})
		}
		w.Messages = append(w.Messages, wm)
	}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			w.Tools = append(w.Tools, tool{Type: "function", Function: toolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
		}
		switch req.ToolChoice {
		case llm.ToolChoiceAuto:
		case llm.ToolChoiceNone, llm.ToolChoiceRequired:
			w.ToolChoice = string(req.ToolChoice)
		default:
			w.ToolChoice = map[string]any{"type": "function", "function": map[string]string{"name": string(req.ToolChoice)}}
		}
	}
	if t := req.Think; t != nil {
		if t.Enabled && t.Level != "" {
			w.ReasoningEffort = t.Level
		}
		if !p.openai {
			// vLLM, llama.cpp and SGLang pass this to the chat template
			// (Qwen3, DeepSeek); other servers ignore it.
			w.ChatTemplateKwargs = map[string]bool{"enable_thinking": t.Enabled}
		}
	}
	return w
}
