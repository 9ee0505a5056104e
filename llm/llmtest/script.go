package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Part is one step of a scripted reply, rendered into any dialect by
// OllamaStream, OllamaWhole, OpenAIStream, OpenAIWhole, ResponsesStream and
// ResponsesWhole.
type Part struct {
	kind   string
	text   string
	id     string
	name   string
	args   string
	in     int
	out    int
	reason string
	delay  time.Duration
}

// Text is a piece of answer text (one chunk).
func Text(s string) Part { return Part{kind: "text", text: s} }

// Thinking is a piece of reasoning sent in the dialect's reasoning field.
func Thinking(s string) Part { return Part{kind: "thinking", text: s} }

// Call is a native tool call; args is its JSON object. The id is
// "call_<n>" with n counting calls from 1.
func Call(name, args string) Part { return Part{kind: "call", name: name, args: args} }

// CallID is a native tool call with a given id ("" sends none).
func CallID(id, name, args string) Part {
	return Part{kind: "call", id: id, name: name, args: args, reason: "id"}
}

// Usage sets the token counts reported at the end.
func Usage(in, out int) Part { return Part{kind: "usage", in: in, out: out} }

// Finish sets the finish reason the server reports (default: "stop", or
// "tool_calls" on the OpenAI wire when there were calls).
func Finish(reason string) Part { return Part{kind: "finish", reason: reason} }

// StreamError makes the server report an error inside the 200 stream, and
// end it there.
func StreamError(msg string) Part { return Part{kind: "error", text: msg} }

// Pause delays the next chunk.
func Pause(d time.Duration) Part { return Part{kind: "pause", delay: d} }

// Cut ends the body at this point without the final chunk (a server that
// died mid-answer); the connection is dropped.
func Cut() Part { return Part{kind: "cut"} }

type script struct {
	parts  []Part
	usage  *Part
	finish string
	calls  int
}

func parse(parts []Part) script {
	s := script{parts: parts}
	for i := range parts {
		switch parts[i].kind {
		case "usage":
			s.usage = &parts[i]
		case "finish":
			s.finish = parts[i].reason
		case "call":
			s.calls++
		}
	}
	return s
}

func callID(p Part, n int) string {
	if p.reason == "id" {
		return p.id
	}
	return fmt.Sprintf("call_%d", n)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// ---- Ollama /api/chat ----

const ollamaTime = "2026-11-21T16:25:58.403011544Z"

func ollamaLine(model string, msg map[string]any, done bool, extra map[string]any) string {
	m := map[string]any{"model": model, "created_at": ollamaTime, "message": msg, "done": done}
	for k, v := range extra {
		m[k] = v
	}
	return mustJSON(m) + "\n"
}

func ollamaCall(p Part, n int) map[string]any {
	fn := map[string]any{"index": n - 1, "name": p.name, "arguments": json.RawMessage(p.args)}
	c := map[string]any{"function": fn}
	if id := callID(p, n); id != "" {
		c["id"] = id
	}
	return c
}

func ollamaDone(s script) map[string]any {
	reason := s.finish
	if reason == "" {
		reason = "stop"
	}
	in, out := 26, len(s.parts)
	if s.usage != nil {
		in, out = s.usage.in, s.usage.out
	}
	return map[string]any{"done_reason": reason, "total_duration": 20896685, "load_duration": 2706837,
		"prompt_eval_count": in, "prompt_eval_duration": 2330672, "eval_count": out, "eval_duration": 10351947}
}

// OllamaStream renders parts as an /api/chat NDJSON stream, shaped on
// Ollama 0.17 (see ../shared/ollama-peer/transcripts 04 and 32).
func OllamaStream(model string, parts ...Part) Scenario {
	s := parse(parts)
	sc := Scenario{Header: http.Header{"Content-Type": {"application/x-ndjson"}}}
	var delay time.Duration
	add := func(data string) {
		sc.Chunks = append(sc.Chunks, Chunk{Data: data, Delay: delay})
		delay = 0
	}
	n := 0
	for _, p := range parts {
		switch p.kind {
		case "text":
			add(ollamaLine(model, map[string]any{"role": "assistant", "content": p.text}, false, nil))
		case "thinking":
			add(ollamaLine(model, map[string]any{"role": "assistant", "content": "", "thinking": p.text}, false, nil))
		case "call":
			n++
			add(ollamaLine(model, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{ollamaCall(p, n)}}, false, nil))
		case "error":
			add(mustJSON(map[string]string{"error": p.text}) + "\n")
			return sc
		case "pause":
			delay += p.delay
		case "cut":
			sc.Disconnect = true
			return sc
		}
	}
	add(ollamaLine(model, map[string]any{"role": "assistant", "content": ""}, true, ollamaDone(s)))
	return sc
}

// whole gathers the parts of a non-streamed answer; call renders each tool
// call (n counts from 1). errMsg is set if the script fails.
func whole(parts []Part, call func(p Part, n int) any) (text, thinking string, calls []any, errMsg string) {
	var tb, th strings.Builder
	n := 0
	for _, p := range parts {
		switch p.kind {
		case "text":
			tb.WriteString(p.text)
		case "thinking":
			th.WriteString(p.text)
		case "call":
			n++
			calls = append(calls, call(p, n))
		case "error":
			return "", "", nil, p.text
		}
	}
	return tb.String(), th.String(), calls, ""
}

// OllamaWhole renders parts as a non-streaming /api/chat answer.
func OllamaWhole(model string, parts ...Part) Scenario {
	s := parse(parts)
	text, thinking, calls, errMsg := whole(parts, func(p Part, n int) any { return ollamaCall(p, n) })
	if errMsg != "" {
		return OllamaError(500, errMsg)
	}
	msg := map[string]any{"role": "assistant", "content": text}
	if thinking != "" {
		msg["thinking"] = thinking
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	return Scenario{Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
		Chunks: []Chunk{{Data: ollamaLine(model, msg, true, ollamaDone(s))}}}
}

// ---- OpenAI /v1/chat/completions ----

// Dialect varies the OpenAI wire the way real servers do.
type Dialect struct {
	// ReasoningField is "reasoning_content" (default: older vLLM,
	// llama.cpp) or "reasoning" (vLLM ≥ 0.11, Ollama /v1).
	ReasoningField string
	// ArgPieces cuts each call's argument string into pieces of this many
	// bytes (0: one piece).
	ArgPieces int
	// ArgsAsObject sends arguments as a JSON object, not a string.
	ArgsAsObject bool
	// AllIndexZero sends every parallel call as index 0 (Ollama /v1).
	AllIndexZero bool
	// NoDone omits the final "data: [DONE]".
	NoDone bool
	// NoUsage omits the usage chunk.
	NoUsage bool
}

// OpenAIStream renders parts as a /v1/chat/completions SSE stream in the
// default dialect, shaped on Ollama's /v1 and OpenAI's reference
// (../shared/ollama-peer/transcripts 22 and 33).
func OpenAIStream(model string, parts ...Part) Scenario {
	return Dialect{}.Stream(model, parts...)
}

func sseChunk(model string, delta map[string]any, finish any) string {
	return "data: " + mustJSON(map[string]any{"id": "chatcmpl-139", "object": "chat.completion.chunk", "created": 1795278358,
		"model": model, "system_fingerprint": "fp_ollama",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) + "\n\n"
}

// Stream renders parts as an SSE stream in dialect d.
func (d Dialect) Stream(model string, parts ...Part) Scenario {
	s := parse(parts)
	rf := d.ReasoningField
	if rf == "" {
		rf = "reasoning_content"
	}
	sc := Scenario{Header: http.Header{"Content-Type": {"text/event-stream"}}}
	var delay time.Duration
	add := func(data string) {
		sc.Chunks = append(sc.Chunks, Chunk{Data: data, Delay: delay})
		delay = 0
	}
	n := 0
	for _, p := range parts {
		switch p.kind {
		case "text":
			add(sseChunk(model, map[string]any{"role": "assistant", "content": p.text}, nil))
		case "thinking":
			add(sseChunk(model, map[string]any{"role": "assistant", rf: p.text}, nil))
		case "call":
			n++
			idx := n - 1
			if d.AllIndexZero {
				idx = 0
			}
			id := callID(p, n)
			if d.ArgsAsObject {
				add(sseChunk(model, map[string]any{"tool_calls": []any{map[string]any{"index": idx, "id": id, "type": "function",
					"function": map[string]any{"name": p.name, "arguments": json.RawMessage(p.args)}}}}, nil))
				continue
			}
			pieces := []string{p.args}
			if d.ArgPieces > 0 {
				pieces = nil
				// Cut on rune boundaries: a JSON string holds valid UTF-8,
				// so no server can send half a character in one delta.
				for i := 0; i < len(p.args); {
					j := min(i+d.ArgPieces, len(p.args))
					for j < len(p.args) && !utf8.RuneStart(p.args[j]) {
						j++
					}
					pieces = append(pieces, p.args[i:j])
					i = j
				}
			}
			add(sseChunk(model, map[string]any{"tool_calls": []any{map[string]any{"index": idx, "id": id, "type": "function",
				"function": map[string]any{"name": p.name, "arguments": ""}}}}, nil))
			for _, piece := range pieces {
				add(sseChunk(model, map[string]any{"tool_calls": []any{map[string]any{"index": idx,
					"function": map[string]any{"arguments": piece}}}}, nil))
			}
		case "error":
			add("data: " + mustJSON(map[string]any{"error": map[string]any{"message": p.text, "type": "server_error", "code": 500}}) + "\n\n")
			return sc
		case "pause":
			delay += p.delay
		case "cut":
			sc.Disconnect = true
			return sc
		}
	}
	finish := s.finish
	if finish == "" {
		finish = "stop"
		if s.calls > 0 {
			finish = "tool_calls"
		}
	}
	add(sseChunk(model, map[string]any{"role": "assistant", "content": ""}, finish))
	if !d.NoUsage {
		in, out := 26, len(parts)
		if s.usage != nil {
			in, out = s.usage.in, s.usage.out
		}
		add("data: " + mustJSON(map[string]any{"id": "chatcmpl-139", "object": "chat.completion.chunk", "created": 1795278358,
			"model": model, "choices": []any{}, "usage": map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}) + "\n\n")
	}
	if !d.NoDone {
		add("data: [DONE]\n\n")
	}
	return sc
}

// OpenAIWhole renders parts as a non-streaming chat.completion.
func OpenAIWhole(model string, parts ...Part) Scenario { return Dialect{}.Whole(model, parts...) }

// Whole renders parts as a non-streaming chat.completion in dialect d.
func (d Dialect) Whole(model string, parts ...Part) Scenario {
	s := parse(parts)
	rf := d.ReasoningField
	if rf == "" {
		rf = "reasoning_content"
	}
	text, thinking, calls, errMsg := whole(parts, func(p Part, n int) any {
		var args any = p.args
		if d.ArgsAsObject {
			args = json.RawMessage(p.args)
		}
		return map[string]any{"id": callID(p, n), "index": n - 1, "type": "function",
			"function": map[string]any{"name": p.name, "arguments": args}}
	})
	if errMsg != "" {
		return OpenAIError(500, errMsg, "server_error", "")
	}
	msg := map[string]any{"role": "assistant", "content": text}
	if thinking != "" {
		msg[rf] = thinking
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	finish := s.finish
	if finish == "" {
		finish = "stop"
		if s.calls > 0 {
			finish = "tool_calls"
		}
	}
	in, out := 26, len(parts)
	if s.usage != nil {
		in, out = s.usage.in, s.usage.out
	}
	return JSONResponse(200, map[string]any{"id": "chatcmpl-578", "object": "chat.completion", "created": 1795278359, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}})
}

// NDJSON is a stream of JSON lines as Ollama sends its streaming answers
// (/api/pull's progress, say): one object per line, each flushed on its own.
func NDJSON(lines ...string) Scenario {
	sc := Scenario{Header: map[string][]string{"Content-Type": {"application/x-ndjson"}}}
	for _, l := range lines {
		sc.Chunks = append(sc.Chunks, Chunk{Data: l + "\n"})
	}
	return sc
}
