package responses

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/valyala/fastjson"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/argjson"
	"github.com/hearth-agent/hearth/llm/internal/norm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// Wire types of POST /responses.

type request struct {
	Model           string     `json:"model"`
	Input           []any      `json:"input"`
	Tools           []tool     `json:"tools,omitempty"`
	ToolChoice      any        `json:"tool_choice,omitempty"`
	Stream          bool       `json:"stream"`
	Store           bool       `json:"store"`
	Temperature     *float64   `json:"temperature,omitempty"`
	TopP            *float64   `json:"top_p,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoning `json:"reasoning,omitempty"`
}

// message is an input message; Content is a string, or parts when the
// message carries images.
type message struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is sent as false: OpenAI's Responses API makes function
	// tools strict by default, which refuses any schema that is not
	// closed (additionalProperties false, every property required), as
	// most tools' are not.
	Strict bool `json:"strict"`
}

type reasoning struct {
	Effort string `json:"effort,omitempty"`
	// Summary asks OpenAI for reasoning summaries ("auto"), which it
	// streams only when asked; local servers send their reasoning anyway.
	Summary string `json:"summary,omitempty"`
}

// wireRequest builds the request: the whole conversation as input items.
func wireRequest(req *llm.Request, model string) *request {
	w := &request{Model: model, Stream: !req.NoStream, Temperature: req.Temperature, TopP: req.TopP,
		MaxOutputTokens: req.MaxTokens, Input: make([]any, 0, len(req.Messages))}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleTool:
			w.Input = append(w.Input, functionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: m.Content})
		case llm.RoleAssistant:
			// The reasoning is not sent back: OpenAI takes only its own
			// encrypted reasoning items, which a stateless client does
			// not keep.
			if m.Content != "" {
				w.Input = append(w.Input, message{Type: "message", Role: "assistant", Content: m.Content})
			}
			for _, tc := range m.ToolCalls {
				args := string(tc.Args)
				if args == "" {
					args = "{}"
				}
				w.Input = append(w.Input, functionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: args})
			}
		default:
			wm := message{Type: "message", Role: string(m.Role), Content: m.Content}
			if len(m.Images) > 0 {
				parts := []contentPart{{Type: "input_text", Text: m.Content}}
				for _, img := range m.Images {
					parts = append(parts, contentPart{Type: "input_image",
						ImageURL: "data:" + http.DetectContentType(img) + ";base64," + base64.StdEncoding.EncodeToString(img)})
				}
				wm.Content = parts
			}
			w.Input = append(w.Input, wm)
		}
	}
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			params := t.Parameters
			if len(params) == 0 {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			w.Tools = append(w.Tools, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
		}
		switch req.ToolChoice {
		case llm.ToolChoiceAuto:
		case llm.ToolChoiceNone, llm.ToolChoiceRequired:
			w.ToolChoice = string(req.ToolChoice)
		default:
			w.ToolChoice = map[string]string{"type": "function", "name": string(req.ToolChoice)}
		}
	}
	if t := req.Think; t != nil && t.Enabled {
		// Thinking off has no portable spelling (effort "none" and
		// "minimal" are refused by the models that do not know them):
		// the server's default applies.
		w.Reasoning = &reasoning{Effort: t.Level, Summary: "auto"}
	}
	return w
}

// Chat streams POST /responses (or, with req.NoStream, makes one call and
// yields the same events from its answer). A stream that completes without
// anything in it, not even in the final response's output, is asked again
// once without streaming, and that answer is used: some servers and
// gateways stream nothing but the end.
func (p *Provider) Chat(ctx context.Context, req *llm.Request) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		model := p.model(req.Model)
		if model == "" {
			yield(llm.Event{}, &llm.Error{Provider: kind, Op: "chat", Code: llm.CodeInvalidRequest,
				Message: "no model given", Hint: "choose one with --model (`hearth models` lists them)"})
			return
		}
		w := wireRequest(req, model)
		body, err := json.Marshal(w)
		if err != nil {
			yield(llm.Event{}, &llm.Error{Provider: kind, Op: "chat", Code: llm.CodeInvalidRequest, Message: "encoding the request: " + err.Error(), Err: err})
			return
		}
		opts := norm.Options{ImplicitThink: p.implicitThink(model), OnLoneClose: func() { p.sawLoneClose(model) }}
		if req.ToolChoice != llm.ToolChoiceNone {
			for _, t := range req.Tools {
				opts.Tools = append(opts.Tools, t.Name)
			}
		}
		lim := limits{promptMin: promptBound(req), window: req.ContextLength}
		var n *norm.Normalizer
		attempt := func(body []byte, whole bool, prior *llm.Usage) error {
			return p.client.Do(ctx, func() (bool, error) {
				n = norm.New(opts, yield)
				b, err := p.client.Open(ctx, "chat", http.MethodPost, p.url("/responses"), body, p.client.StreamTimeouts(len(opts.Tools) > 0))
				if err != nil {
					return false, p.withModels(ctx, err)
				}
				defer b.Close()
				d := &decoder{p: p, n: n, lim: lim, prior: prior, readErr: b.Err}
				if whole {
					err = d.whole(b)
				} else {
					err = d.stream(b)
				}
				return n.Emitted(), err
			})
		}
		err = attempt(body, req.NoStream, nil)
		if e, ok := errors.AsType[*emptyStream](err); ok {
			if p.opts.Logger != nil {
				p.opts.Logger.Debug("the stream carried no answer: asking again without streaming", "provider", kind, "model", model)
			}
			w.Stream = false
			if body, err = json.Marshal(w); err == nil {
				err = attempt(body, true, e.usage)
			}
		}
		if err != nil && !n.Stopped() && !errors.Is(err, wire.ErrStopped) {
			n.Abort() // a partial answer is kept, not dropped
			if !n.Stopped() {
				yield(llm.Event{}, err)
			}
		}
	}
}

// emptyStream is what stream returns for a stream that completed with
// nothing in it: Chat then asks again without streaming.
type emptyStream struct {
	usage *llm.Usage
}

func (e *emptyStream) Error() string { return "the stream carried no answer" }

// limits tell a prompt the server cut: fewer input tokens than the prompt
// can possibly hold, or the whole window.
type limits struct {
	promptMin, window int
}

func (l limits) truncated(in int) bool {
	return in > 0 && (in < l.promptMin || (l.window > 0 && in >= l.window))
}

// promptBound is the fewest tokens the prompt can be: a token is rarely
// more than six bytes.
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

// decoder turns one response, streamed or whole, into the normaliser's
// input.
type decoder struct {
	p   *Provider
	n   *norm.Normalizer
	lim limits
	// prior is the usage of a stream that carried nothing, before this
	// non-streamed answer: both were computed, and both count.
	prior *llm.Usage
	// readErr maps a failure to read the body (wire.Body.Err).
	readErr func(error) *llm.Error

	calls calls
	// fed is set once anything of the answer came: text, reasoning or a
	// call.
	fed bool
	// deltas holds the items some delta came for (noIDDeltas: a delta
	// without an item id), whose done events are then not read again.
	deltas     map[string]bool
	noIDDeltas bool
	// thinkPart is the reasoning part the last reasoning delta belonged
	// to; rawThinking is set once reasoning came as reasoning_text, after
	// which summaries (of the same reasoning) are not shown again.
	thinkPart   thinkPart
	rawThinking bool
}

// thinkPart names a part of the reasoning: an item's summary or text,
// by its index.
type thinkPart struct {
	set   bool
	item  string
	kind  byte
	index int
}

// Event types the decoder reads. Every other type (response.created,
// content_part.added, output_text.done, …) says nothing the deltas and the
// final response do not.
const (
	evTextDelta      = "response.output_text.delta"
	evRefusalDelta   = "response.refusal.delta"
	evSummaryDelta   = "response.reasoning_summary_text.delta"
	evReasoningDelta = "response.reasoning_text.delta"
	// evOldReasoning is what vLLM sent before it followed OpenAI's
	// reasoning_text (its delta a string, or an object with content).
	evOldReasoning = "response.reasoning.delta"
	evItemAdded    = "response.output_item.added"
	evItemDone     = "response.output_item.done"
	evArgsDelta    = "response.function_call_arguments.delta"
	evArgsDone     = "response.function_call_arguments.done"
	evCompleted    = "response.completed"
	evIncomplete   = "response.incomplete"
	evFailed       = "response.failed"
	evError        = "error"
)

// stream reads the SSE stream. Events are parsed with a reusable parser,
// reading only the fields Hearth uses: this is the hot path.
func (d *decoder) stream(r io.Reader) error {
	sse := wire.NewSSE(r)
	var parser fastjson.Parser
	for {
		ev, err := sse.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return d.p.client.Truncated("chat")
			}
			return d.readErr(err)
		}
		if len(ev.Error) > 0 {
			msg, code := wire.ParseErrorBody(ev.Error)
			return d.streamError(msg, code)
		}
		data := ev.Data
		if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
			continue
		}
		v, err := parser.ParseBytes(data)
		if err != nil {
			return d.p.client.Malformed("chat", data, err)
		}
		typ := v.GetStringBytes("type")
		if len(typ) == 0 {
			typ = ev.Event
		}
		done, err := d.event(typ, v, data)
		if err != nil || done {
			return err
		}
	}
}

// event applies one streamed event; done says the response ended well.
func (d *decoder) event(typ []byte, v *fastjson.Value, data []byte) (done bool, err error) {
	switch string(typ) {
	case evTextDelta, evRefusalDelta:
		d.streamed(v)
		return false, d.content(string(v.GetStringBytes("delta")))
	case evSummaryDelta:
		d.streamed(v)
		if d.rawThinking {
			return false, nil
		}
		return false, d.reasoning(v.GetStringBytes("item_id"), 's', v.GetInt("summary_index"), string(v.GetStringBytes("delta")))
	case evReasoningDelta, evOldReasoning:
		d.streamed(v)
		d.rawThinking = true
		delta := v.GetStringBytes("delta")
		if delta == nil {
			delta = v.GetStringBytes("delta", "content")
		}
		return false, d.reasoning(v.GetStringBytes("item_id"), 'r', v.GetInt("content_index"), string(delta))
	case evItemAdded:
		if it := v.Get("item"); string(it.GetStringBytes("type")) == "function_call" {
			d.call(v, it).update(it, false)
		}
	case evArgsDelta:
		d.call(v, nil).args.Write(v.GetStringBytes("delta"))
	case evArgsDone:
		c := d.call(v, nil)
		if a := v.Get("arguments"); a != nil && a.Type() == fastjson.TypeString {
			c.args.Reset()
			c.args.Write(a.GetStringBytes())
		}
		if name := v.GetStringBytes("name"); len(name) > 0 {
			c.name = string(name)
		}
	case evItemDone:
		it := v.Get("item")
		switch string(it.GetStringBytes("type")) {
		case "function_call":
			d.call(v, it).update(it, true)
		case "message", "reasoning":
			// A server that streamed no deltas of the item sends it whole.
			if !d.noIDDeltas && !d.deltas[string(it.GetStringBytes("id"))] {
				return false, d.item(it)
			}
		}
	case evCompleted, evIncomplete:
		return true, d.finish(v.Get("response"), true, string(typ) == evIncomplete)
	case evFailed:
		msg, code := "the server says the response failed", ""
		if e := v.Get("response", "error"); e != nil && e.Type() == fastjson.TypeObject {
			msg, code = errorOf(e)
		}
		return false, d.streamError(msg, code)
	case evError:
		msg, code := wire.ParseErrorBody(data)
		return false, d.streamError(msg, code)
	default:
		if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull && !bytes.HasPrefix(typ, []byte("response.")) {
			// A server's plain error object inside the 200 stream.
			msg, code := wire.ParseErrorBody(data)
			return false, d.streamError(msg, code)
		}
	}
	return false, nil
}

// streamed notes that a delta of an item came.
func (d *decoder) streamed(v *fastjson.Value) {
	id := v.GetStringBytes("item_id")
	if len(id) == 0 {
		d.noIDDeltas = true
		return
	}
	if d.deltas[string(id)] {
		return
	}
	if d.deltas == nil {
		d.deltas = map[string]bool{}
	}
	d.deltas[string(id)] = true
}

// call returns the call an event (with its item, if it has one) is about.
func (d *decoder) call(v, item *fastjson.Value) *partialCall {
	d.fed = true
	id := item.GetStringBytes("id")
	if len(id) == 0 {
		id = v.GetStringBytes("item_id")
	}
	index := -1
	if x := v.Get("output_index"); x != nil && x.Type() == fastjson.TypeNumber {
		index = x.GetInt()
	}
	return d.calls.get(string(id), index)
}

func errorOf(e *fastjson.Value) (msg, code string) {
	msg = string(e.GetStringBytes("message"))
	code = string(e.GetStringBytes("code"))
	if code == "" {
		code = string(e.GetStringBytes("type"))
	}
	if msg == "" {
		msg = "the server says the response failed"
	}
	return msg, code
}

// streamError maps an error the server reported inside a 200 response
// (response.failed, an error event): by its message as for any server,
// and by the codes OpenAI gives such failures.
func (d *decoder) streamError(msg, code string) error {
	e := d.p.client.FromStream("chat", msg, code)
	if e.Code != llm.CodeServer {
		return e // the context length, a missing model
	}
	switch code {
	case "rate_limit_exceeded":
		e.Code, e.Retryable, e.Hint = llm.CodeRateLimited, true, ""
	case "insufficient_quota":
		e.Code, e.Retryable = llm.CodeRateLimited, false
		e.Hint = "the account's quota is used up: check its plan and billing"
	case "invalid_prompt", "invalid_request_error", "invalid_image", "invalid_image_format", "invalid_image_url", "image_too_large", "empty_image_file":
		e.Code, e.Retryable, e.Hint = llm.CodeInvalidRequest, false, ""
	}
	return e
}

func (d *decoder) content(s string) error {
	if s == "" {
		return nil
	}
	d.fed = true
	if !d.n.Content(s) {
		return wire.ErrStopped
	}
	return nil
}

// reasoning feeds a piece of reasoning: of an item, its summary part
// (kind 's') or reasoning text (kind 'r') number index. A new part
// (another summary, the reasoning of another item) is set apart from the
// one before.
func (d *decoder) reasoning(item []byte, kind byte, index int, s string) error {
	if s == "" {
		return nil
	}
	if k := &d.thinkPart; !k.set || string(item) != k.item || kind != k.kind || index != k.index {
		if k.set {
			s = "\n\n" + s
		}
		*k = thinkPart{set: true, item: string(item), kind: kind, index: index}
	}
	d.fed = true
	if !d.n.Reasoning(s) {
		return wire.ErrStopped
	}
	return nil
}

// item feeds one whole output item: reasoning, a message, or a call.
func (d *decoder) item(it *fastjson.Value) error {
	id := it.GetStringBytes("id")
	switch string(it.GetStringBytes("type")) {
	case "reasoning":
		// The reasoning itself where the server gives it (vLLM, LM
		// Studio), else its summary (OpenAI, Ollama).
		raw := false
		for i, c := range it.GetArray("content") {
			if string(c.GetStringBytes("type")) == "reasoning_text" {
				raw = true
				if err := d.reasoning(id, 'r', i, string(c.GetStringBytes("text"))); err != nil {
					return err
				}
			}
		}
		if raw || d.rawThinking {
			return nil
		}
		for i, s := range it.GetArray("summary") {
			if err := d.reasoning(id, 's', i, string(s.GetStringBytes("text"))); err != nil {
				return err
			}
		}
	case "message":
		for _, c := range it.GetArray("content") {
			switch string(c.GetStringBytes("type")) {
			case "output_text":
				if err := d.content(string(c.GetStringBytes("text"))); err != nil {
					return err
				}
			case "refusal":
				if err := d.content(string(c.GetStringBytes("refusal"))); err != nil {
					return err
				}
			}
		}
	case "function_call":
		d.fed = true
		d.calls.get(string(id), -1).update(it, true)
	}
	return nil
}

// finish ends the response r (the object of response.completed or
// response.incomplete, or a whole answer): a stream that carried nothing
// takes its output, then the calls, usage and done are yielded.
func (d *decoder) finish(r *fastjson.Value, streamed, incomplete bool) error {
	if r != nil && r.Type() == fastjson.TypeObject && !d.fed {
		for _, it := range r.GetArray("output") {
			if err := d.item(it); err != nil {
				return err
			}
		}
	}
	incomplete = incomplete || string(r.GetStringBytes("status")) == "incomplete"
	u := usageOf(r)
	if streamed && !d.fed && !incomplete {
		return &emptyStream{usage: u}
	}
	if d.prior != nil {
		if u == nil {
			u = &llm.Usage{}
		}
		u.InputTokens += d.prior.InputTokens
		u.OutputTokens += d.prior.OutputTokens
		u.CachedInputTokens += d.prior.CachedInputTokens
	}
	reason := llm.FinishStop
	if incomplete && string(r.GetStringBytes("incomplete_details", "reason")) != "content_filter" {
		reason = llm.FinishLength // max_output_tokens, or no reason given
	}
	truncated := u != nil && d.lim.truncated(u.InputTokens-priorInput(d.prior))
	if !d.calls.flush(d.n, reason == llm.FinishLength) || !d.n.Finish(reason, u, truncated) {
		return wire.ErrStopped
	}
	return nil
}

func priorInput(u *llm.Usage) int {
	if u == nil {
		return 0
	}
	return u.InputTokens
}

// whole reads a non-streamed answer: one response object.
func (d *decoder) whole(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return d.readErr(err)
	}
	var parser fastjson.Parser
	v, err := parser.ParseBytes(data)
	if err != nil {
		return d.p.client.Malformed("chat", data, err)
	}
	if v.Type() != fastjson.TypeObject {
		return d.p.client.Malformed("chat", data, errors.New("not a response object"))
	}
	if e := v.Get("error"); e != nil && e.Type() == fastjson.TypeObject {
		msg, code := errorOf(e)
		return d.streamError(msg, code)
	} else if e != nil && e.Type() == fastjson.TypeString {
		return d.streamError(string(e.GetStringBytes()), "")
	}
	switch string(v.GetStringBytes("status")) {
	case "failed":
		return d.streamError("the server says the response failed", "")
	case "queued", "in_progress":
		return d.p.client.Malformed("chat", data, errors.New("the response is not finished (a background response?)"))
	}
	if v.Get("output") == nil {
		return d.p.client.Malformed("chat", data, errors.New("no output"))
	}
	return d.finish(v, false, false)
}

func usageOf(r *fastjson.Value) *llm.Usage {
	u := r.Get("usage")
	if u == nil || u.Type() != fastjson.TypeObject {
		return nil
	}
	in := u.GetInt("input_tokens")
	// The prompt cache's share of the input: a part of it, never more.
	cached := min(max(u.GetInt("input_tokens_details", "cached_tokens"), 0), max(in, 0))
	return &llm.Usage{InputTokens: in, OutputTokens: u.GetInt("output_tokens"), CachedInputTokens: cached}
}

// calls assembles function calls, in the order they began. A call is
// known by its item's id, else by its output_index: servers differ in which
// they send with each event, and Ollama gives a call the output_index of
// the message before it.
type calls struct {
	list    []*partialCall
	byID    map[string]*partialCall
	byIndex map[int]*partialCall
}

type partialCall struct {
	id, callID, name string
	args             bytes.Buffer
}

// get returns the call of an item (index -1: none known), starting it if
// new. An index names the call already there only if their ids agree.
func (cs *calls) get(id string, index int) *partialCall {
	if c := cs.byID[id]; id != "" && c != nil {
		return c
	}
	if c := cs.byIndex[index]; index >= 0 && c != nil && (c.id == "" || id == "") {
		if c.id == "" && id != "" {
			c.id = id
			cs.byID[id] = c
		}
		return c
	}
	if cs.byID == nil {
		cs.byID, cs.byIndex = map[string]*partialCall{}, map[int]*partialCall{}
	}
	c := &partialCall{id: id}
	cs.list = append(cs.list, c)
	if id != "" {
		cs.byID[id] = c
	}
	if index >= 0 {
		cs.byIndex[index] = c
	}
	return c
}

// update takes what a function_call item says. The arguments of a done
// item are the whole of them; those of a new one, a start.
func (c *partialCall) update(it *fastjson.Value, done bool) {
	if id := it.GetStringBytes("call_id"); len(id) > 0 {
		c.callID = string(id)
	}
	if name := it.GetStringBytes("name"); len(name) > 0 {
		c.name = string(name)
	}
	switch a := it.Get("arguments"); {
	case a == nil:
	case a.Type() == fastjson.TypeString:
		if s := a.GetStringBytes(); len(s) > 0 && (done || c.args.Len() == 0) {
			c.args.Reset()
			c.args.Write(s)
		}
	case a.Type() == fastjson.TypeObject:
		// Some servers send the arguments as an object.
		c.args.Reset()
		c.args.Write(a.MarshalTo(nil))
	}
}

// flush yields the calls. cut says the reply was cut by the length limit:
// arguments that are not complete JSON are then refused, not repaired,
// because the model had not finished writing them.
func (cs *calls) flush(n *norm.Normalizer, cut bool) bool {
	for _, c := range cs.list {
		if c.name == "" && c.args.Len() == 0 {
			continue
		}
		tc := llm.ToolCall{ID: c.callID, Name: c.name}
		args, repaired, err := argjson.Normalize(c.args.Bytes())
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
	cs.list, cs.byID, cs.byIndex = nil, nil, nil
	return true
}
