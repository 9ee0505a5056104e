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

// Response chunks: only the fields Hearth uses are decoded.

type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type choice struct {
	Index        int    `json:"index"`
	Delta        delta  `json:"delta"`
	Message      delta  `json:"message"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content          string      `json:"content"`
	Reasoning        string      `json:"reasoning"`
	ReasoningContent string      `json:"reasoning_content"`
	ToolCalls        []deltaCall `json:"tool_calls"`
}

type deltaCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// reset clears c for the next chunk, keeping the choices' storage.
// encoding/json leaves fields absent from (or null in) the input untouched.
func (c *chunk) reset() {
	ch := c.Choices[:cap(c.Choices)]
	clear(ch)
	*c = chunk{Choices: ch[:0]}
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
		opts := norm.Options{ImplicitThink: p.opts.Models[model].ImplicitThink || (req.Think != nil && req.Think.Enabled)}
		if req.ToolChoice != llm.ToolChoiceNone {
			for _, t := range req.Tools {
				opts.Tools = append(opts.Tools, t.Name)
			}
		}
		var n *norm.Normalizer
		err = p.client.Do(ctx, func() (bool, error) {
			n = norm.New(opts, yield)
			b, err := p.client.Open(ctx, "chat", http.MethodPost, p.url("/chat/completions"), body)
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
			yield(llm.Event{}, err)
		}
	}
}

// calls assembles streamed tool-call deltas.
type calls struct {
	list []*partialCall
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
	if cur == nil || (d.ID != "" && cur.id != "" && d.ID != cur.id && d.Function.Name != "") ||
		(d.Function.Name != "" && cur.name != "" && cur.args.Len() > 0 && d.ID == "" && idx == -1) {
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
	if d.Function.Name != "" {
		if cur.name == "" || cur.args.Len() == 0 {
			cur.name = d.Function.Name
		}
	}
	raw := d.Function.Arguments
	if s, ok := jsonString(raw); ok {
		cur.args.WriteString(s)
	} else if len(raw) > 0 && string(raw) != "null" {
		// An object (llama.cpp, some gateways): a whole value, not a piece.
		cur.args.Reset()
		cur.args.Write(raw)
	}
}

func (cs *calls) flush(n *norm.Normalizer) bool {
	for _, c := range cs.list {
		if c.name == "" && c.args.Len() == 0 {
			continue
		}
		tc := llm.ToolCall{ID: c.id, Name: c.name}
		args, repaired, err := argjson.Normalize([]byte(c.args.String()))
		if err != nil {
			tc.Args, tc.ArgsError = json.RawMessage(`{}`), err.Error()
		} else {
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
	var c chunk
	var cs calls
	var finish string
	var u *llm.Usage
	end := func() error {
		if !cs.flush(n) || !n.Finish(norm.FinishReason(finish), u, false) {
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
		c.reset()
		if err := json.Unmarshal(data, &c); err != nil {
			return p.client.Malformed("chat", data, err)
		}
		if len(c.Error) > 0 && string(c.Error) != "null" {
			msg, code := wire.ParseErrorBody(data)
			return p.client.FromStream("chat", msg, code)
		}
		if c.Usage != nil {
			u = &llm.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
		}
		for i := range c.Choices {
			ch := &c.Choices[i]
			if ch.Index != 0 {
				continue
			}
			if !n.Reasoning(reasoningOf(&ch.Delta)) || !n.Content(ch.Delta.Content) {
				return wire.ErrStopped
			}
			for j := range ch.Delta.ToolCalls {
				cs.add(&ch.Delta.ToolCalls[j])
			}
			if ch.FinishReason != "" {
				finish = ch.FinishReason
			}
		}
	}
}

func (p *Provider) decodeWhole(b *wire.Body, n *norm.Normalizer) error {
	data, err := io.ReadAll(io.LimitReader(b, 64<<20))
	if err != nil {
		return b.Err(err)
	}
	var c chunk
	if err := json.Unmarshal(data, &c); err != nil {
		return p.client.Malformed("chat", data, err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		msg, code := wire.ParseErrorBody(data)
		return p.client.FromStream("chat", msg, code)
	}
	if len(c.Choices) == 0 {
		return p.client.Malformed("chat", data, errors.New("no choices"))
	}
	ch := &c.Choices[0]
	m := &ch.Message
	if !n.Reasoning(reasoningOf(m)) || !n.Content(m.Content) {
		return wire.ErrStopped
	}
	var cs calls
	for j := range m.ToolCalls {
		tc := &m.ToolCalls[j]
		if tc.Index == nil {
			i := j
			tc.Index = &i
		}
		cs.add(tc)
	}
	var u *llm.Usage
	if c.Usage != nil {
		u = &llm.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	if !cs.flush(n) || !n.Finish(norm.FinishReason(ch.FinishReason), u, false) {
		return wire.ErrStopped
	}
	return nil
}

// reasoningOf returns the reasoning a delta carries, under either name.
func reasoningOf(d *delta) string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
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
