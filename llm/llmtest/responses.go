package llmtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// ---- OpenAI Responses API: POST /v1/responses ----

// ResponsesDialect varies the Responses wire the way real servers do.
// The zero value is shaped on what Ollama 0.17.4 sends (the transcripts
// ollama-responses-* under testdata) and OpenAI's API reference.
type ResponsesDialect struct {
	// ReasoningText sends reasoning as response.reasoning_text.delta
	// (vLLM, LM Studio: the reasoning itself) instead of
	// response.reasoning_summary_text.delta (OpenAI, Ollama).
	ReasoningText bool
	// ArgPieces cuts each call's arguments into deltas of this many bytes
	// (0: one delta, as Ollama sends them).
	ArgPieces int
	// ErrorEvent reports a StreamError as an `error` event instead of
	// response.failed.
	ErrorEvent bool
	// FinalOnly streams no deltas and no items: the answer is only in the
	// output of response.completed (a gateway that buffers).
	FinalOnly bool
	// Empty streams nothing of the answer at all, not even in the final
	// output (a server whose stream is broken; the client then asks
	// again without streaming).
	Empty bool
	// NoUsage leaves the usage out.
	NoUsage bool
}

// ResponsesStream renders parts as a /v1/responses SSE stream in the
// default dialect.
func ResponsesStream(model string, parts ...Part) Scenario {
	return ResponsesDialect{}.Stream(model, parts...)
}

// ResponsesWhole renders parts as a non-streaming /v1/responses answer.
func ResponsesWhole(model string, parts ...Part) Scenario {
	return ResponsesDialect{}.Whole(model, parts...)
}

// responsesBuilder renders one reply's events and output items.
type responsesBuilder struct {
	d      ResponsesDialect
	model  string
	seq    int
	output []map[string]any
	// open is the item being streamed ("reasoning" or "message"), its id
	// and its text so far.
	open, openID string
	openText     strings.Builder
	index        int
}

func (b *responsesBuilder) event(typ string, data map[string]any) string {
	data["type"] = typ
	data["sequence_number"] = b.seq
	b.seq++
	return "event: " + typ + "\ndata: " + mustJSON(data) + "\n\n"
}

func (b *responsesBuilder) response(status string, s script, parts []Part) map[string]any {
	r := map[string]any{"id": "resp_166570", "object": "response", "created_at": 1795721391, "status": status,
		"model": b.model, "output": b.output, "error": nil, "incomplete_details": nil, "store": false}
	if b.output == nil {
		r["output"] = []any{}
	}
	if status == "in_progress" {
		r["output"], r["usage"] = []any{}, nil
		return r
	}
	if status == "incomplete" {
		r["incomplete_details"] = map[string]string{"reason": "max_output_tokens"}
	}
	if !b.d.NoUsage {
		in, out := 26, len(parts)
		if s.usage != nil {
			in, out = s.usage.in, s.usage.out
		}
		r["usage"] = map[string]any{"input_tokens": in, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": out, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": in + out}
	}
	return r
}

// closeItem ends the item being streamed, and returns its events.
func (b *responsesBuilder) closeItem() []string {
	var evs []string
	text := b.openText.String()
	switch b.open {
	case "reasoning":
		item := map[string]any{"id": b.openID, "type": "reasoning", "summary": []any{map[string]string{"type": "summary_text", "text": text}}}
		if b.d.ReasoningText {
			item["summary"] = []any{}
			item["content"] = []any{map[string]string{"type": "reasoning_text", "text": text}}
			evs = append(evs, b.event("response.reasoning_text.done", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0, "text": text}))
		} else {
			evs = append(evs, b.event("response.reasoning_summary_text.done", map[string]any{"item_id": b.openID, "output_index": b.index, "summary_index": 0, "text": text}))
		}
		evs = append(evs, b.event("response.output_item.done", map[string]any{"output_index": b.index, "item": item}))
		b.output = append(b.output, item)
	case "message":
		part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
		item := map[string]any{"id": b.openID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part}}
		evs = append(evs,
			b.event("response.output_text.done", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0, "text": text, "logprobs": []any{}}),
			b.event("response.content_part.done", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0, "part": part}),
			b.event("response.output_item.done", map[string]any{"output_index": b.index, "item": item}))
		b.output = append(b.output, item)
	default:
		return nil
	}
	b.open, b.openID = "", ""
	b.openText.Reset()
	b.index++
	return evs
}

// Stream renders parts as a /v1/responses SSE stream in dialect d.
func (d ResponsesDialect) Stream(model string, parts ...Part) Scenario {
	s := parse(parts)
	b := &responsesBuilder{d: d, model: model}
	sc := Scenario{Header: http.Header{"Content-Type": {"text/event-stream"}}}
	// The events of one part go out as one chunk (the first with the
	// response's head), as a server flushes what one token made, but the
	// pieces of a call's arguments each on its own.
	var delay time.Duration
	var pending strings.Builder
	flush := func() {
		if pending.Len() > 0 {
			sc.Chunks = append(sc.Chunks, Chunk{Data: pending.String(), Delay: delay})
			pending.Reset()
			delay = 0
		}
	}
	add := func(evs ...string) {
		if d.FinalOnly || d.Empty {
			return
		}
		for _, e := range evs {
			pending.WriteString(e)
		}
	}
	start := func(kind string, item map[string]any) {
		add(b.closeItem()...)
		b.open = kind
		b.openID = fmt.Sprintf("%s_%d", map[string]string{"reasoning": "rs", "message": "msg"}[kind], 100+b.index)
		item["id"] = b.openID
		add(b.event("response.output_item.added", map[string]any{"output_index": b.index, "item": item}))
	}
	pending.WriteString(b.event("response.created", map[string]any{"response": b.response("in_progress", s, parts)}))
	pending.WriteString(b.event("response.in_progress", map[string]any{"response": b.response("in_progress", s, parts)}))
	n := 0
	for _, p := range parts {
		switch p.kind {
		case "thinking":
			if b.open != "reasoning" {
				start("reasoning", map[string]any{"type": "reasoning", "summary": []any{}})
			}
			b.openText.WriteString(p.text)
			if d.ReasoningText {
				add(b.event("response.reasoning_text.delta", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0, "delta": p.text}))
			} else {
				add(b.event("response.reasoning_summary_text.delta", map[string]any{"item_id": b.openID, "output_index": b.index, "summary_index": 0, "delta": p.text}))
			}
		case "text":
			if b.open != "message" {
				start("message", map[string]any{"type": "message", "status": "in_progress", "role": "assistant", "content": []any{}})
				add(b.event("response.content_part.added", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0,
					"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}}))
			}
			b.openText.WriteString(p.text)
			add(b.event("response.output_text.delta", map[string]any{"item_id": b.openID, "output_index": b.index, "content_index": 0, "delta": p.text, "logprobs": []any{}}))
		case "call":
			add(b.closeItem()...)
			n++
			id := fmt.Sprintf("fc_%d_%d", 606227, n-1)
			item := map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": callID(p, n), "name": p.name, "arguments": ""}
			add(b.event("response.output_item.added", map[string]any{"output_index": b.index, "item": item}))
			for _, piece := range pieces(p.args, d.ArgPieces) {
				add(b.event("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": b.index, "delta": piece}))
				flush()
			}
			add(b.event("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": b.index, "arguments": p.args}))
			done := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": callID(p, n), "name": p.name, "arguments": p.args}
			add(b.event("response.output_item.done", map[string]any{"output_index": b.index, "item": done}))
			b.output = append(b.output, done)
			b.index++
		case "error":
			if d.ErrorEvent {
				pending.WriteString(b.event("error", map[string]any{"code": "server_error", "message": p.text, "param": nil}))
			} else {
				r := b.response("failed", s, parts)
				r["error"] = map[string]string{"code": "server_error", "message": p.text}
				pending.WriteString(b.event("response.failed", map[string]any{"response": r}))
			}
			flush()
			return sc
		case "pause":
			flush()
			delay += p.delay
			continue
		case "cut":
			flush()
			sc.Disconnect = true
			return sc
		}
		if p.kind != "usage" && p.kind != "finish" {
			flush()
		}
	}
	add(b.closeItem()...)
	status, typ := "completed", "response.completed"
	if s.finish == "length" {
		status, typ = "incomplete", "response.incomplete"
	}
	if d.Empty {
		b.output = nil
	}
	pending.WriteString(b.event(typ, map[string]any{"response": b.response(status, s, parts)}))
	flush()
	return sc
}

// pieces cuts s into pieces of k bytes (0: one piece) on rune boundaries:
// a JSON string holds valid UTF-8, so no server sends half a character.
func pieces(s string, k int) []string {
	if k <= 0 {
		return []string{s}
	}
	var out []string
	for i := 0; i < len(s); {
		j := min(i+k, len(s))
		for j < len(s) && !utf8.RuneStart(s[j]) {
			j++
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// Whole renders parts as a non-streaming /v1/responses answer in dialect d.
func (d ResponsesDialect) Whole(model string, parts ...Part) Scenario {
	s := parse(parts)
	b := &responsesBuilder{d: d, model: model}
	n := 0
	for _, p := range parts {
		switch p.kind {
		case "thinking":
			if b.open != "reasoning" {
				b.closeItem()
				b.open, b.openID = "reasoning", fmt.Sprintf("rs_%d", 100+b.index)
			}
			b.openText.WriteString(p.text)
		case "text":
			if b.open != "message" {
				b.closeItem()
				b.open, b.openID = "message", fmt.Sprintf("msg_%d", 100+b.index)
			}
			b.openText.WriteString(p.text)
		case "call":
			b.closeItem()
			n++
			b.output = append(b.output, map[string]any{"id": fmt.Sprintf("fc_resp_220887_%d", n-1), "type": "function_call", "status": "completed",
				"call_id": callID(p, n), "name": p.name, "arguments": p.args})
			b.index++
		case "error":
			return OpenAIError(500, p.text, "server_error", "")
		}
	}
	b.closeItem()
	status := "completed"
	if s.finish == "length" {
		status = "incomplete"
	}
	return JSONResponse(200, b.response(status, s, parts))
}
