package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// The mock model server answers the read-a-file task in every wire API the
// CLIs speak, without state: a request whose conversation holds no tool
// result yet gets a call of the run's read-file tool on a.txt; one that
// holds a tool result gets the final answer, if that result holds the
// file's text (otherwise an answer that says what went wrong, which the
// check then rejects). A request that offers no tools is a side request
// (a title, a classifier, a check of who speaks next): it gets a short
// text and is counted apart.
//
// Wire APIs: OpenAI chat completions (/v1/chat/completions, streamed or
// not), the OpenAI Responses API (/v1/responses, streamed), Gemini's
// generateContent (/v1beta/models/M:streamGenerateContent?alt=sse and
// :generateContent), Ollama's /api/chat (NDJSON) with /api/show,
// /api/tags and /api/version, and a model list at /v1/models.

// fileText is what a.txt holds; answer is what the model says once it has
// seen it.
const (
	fileText = "hello\n"
	answer   = "It says hello."
)

// toolPlan is the call the mock makes for one CLI: its read-file tool's
// name and arguments.
type toolPlan struct {
	Name string
	Args map[string]any
}

// record is one request the mock saw.
type record struct {
	// Time is when the request arrived (its headers were read).
	Time   time.Time
	Method string
	Path   string
	// Kind: "model" (a generation request with tools), "side" (a
	// generation request offering no tools), "other" (model lists,
	// Ollama's show, anything else).
	Kind string
	// Step: for model requests, "call" (answered with the tool call) or
	// "answer"; "" otherwise.
	Step string
	// Bytes is the request body as sent; Decoded after undoing a
	// Content-Encoding.
	Bytes, Decoded int
	// Problem says what was wrong with the request, if anything.
	Problem string
	// Body is the decoded body (kept to save the first request).
	Body []byte
}

type mock struct {
	mu   sync.Mutex
	plan toolPlan
	log  []record
	srv  *http.Server
	ln   net.Listener
	URL  string
	// verbose prints each request on stderr.
	verbose bool
	// dump, if set, is a directory where each request's body is written.
	dump string
	n    int
	// inflight counts the requests being answered: a request is logged
	// once answered, which can be after the client has its answer and
	// has sent the next request, or has exited.
	inflight int // under mu
}

func startMock(addr string) (*mock, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := &mock{ln: ln, URL: "http://" + ln.Addr().String()}
	m.srv = &http.Server{Handler: m}
	go m.srv.Serve(ln)
	return m, nil
}

func (m *mock) Close() { m.srv.Close() }

// reset starts a new run: the log is emptied and the tool plan set.
func (m *mock) reset(p toolPlan) {
	m.mu.Lock()
	m.plan, m.log = p, nil
	m.mu.Unlock()
}

// records returns the requests of this run in the order they arrived,
// once every request that arrived has been answered.
func (m *mock) records() []record {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		m.mu.Lock()
		n := m.inflight
		m.mu.Unlock()
		if n == 0 {
			break
		}
	}
	m.mu.Lock()
	recs := append([]record(nil), m.log...)
	m.mu.Unlock()
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
	return recs
}

func (m *mock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	m.mu.Lock()
	m.inflight++
	m.mu.Unlock()
	raw, _ := io.ReadAll(r.Body)
	body := raw
	switch r.Header.Get("Content-Encoding") {
	case "gzip":
		if zr, err := gzip.NewReader(bytes.NewReader(raw)); err == nil {
			if b, err := io.ReadAll(zr); err == nil {
				body = b
			}
		}
	case "":
	default:
		// zstd and others: not decoded (the standard library has no zstd
		// decoder); Decoded stays the sent size and the request cannot be
		// read, which the run's check reports.
	}
	rec := record{Time: arrived, Method: r.Method, Path: r.URL.Path, Kind: "other", Bytes: len(raw), Decoded: len(body), Body: body}
	m.mu.Lock()
	plan := m.plan
	m.mu.Unlock()
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && (strings.HasSuffix(path, "/chat/completions")):
		m.openAIChat(w, body, plan, &rec)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		m.responses(w, body, plan, &rec)
	case r.Method == http.MethodPost && strings.Contains(path, "/models/") &&
		(strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent")):
		m.gemini(w, body, plan, strings.HasSuffix(path, ":streamGenerateContent"), &rec)
	case r.Method == http.MethodPost && path == "/api/chat":
		m.ollama(w, body, plan, &rec)
	case path == "/api/show":
		writeJSON(w, 200, map[string]any{"parameters": "", "capabilities": []string{"completion", "tools"},
			"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 32768},
			"details":    map[string]any{"format": "gguf", "family": "llama"}})
	case path == "/api/tags":
		writeJSON(w, 200, map[string]any{"models": []any{map[string]any{"name": "m", "model": "m"}}})
	case path == "/api/version":
		writeJSON(w, 200, map[string]any{"version": "0.12.0"})
	case strings.HasSuffix(path, "/models") && r.Method == http.MethodGet:
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "m", "object": "model", "owned_by": "bench"}}})
	default:
		rec.Problem = "unknown endpoint"
		writeJSON(w, 404, map[string]any{"error": map[string]any{"message": "mock: no such endpoint " + path, "code": 404}})
	}
	if m.verbose {
		fmt.Fprintf(os.Stderr, "mock: %s %s %s %s %d bytes %s\n", r.Method, r.URL.String(), rec.Kind, rec.Step, rec.Bytes, rec.Problem)
	}
	m.mu.Lock()
	m.log = append(m.log, rec)
	m.inflight--
	m.n++
	n := m.n
	m.mu.Unlock()
	if m.dump != "" {
		os.WriteFile(fmt.Sprintf("%s/%03d-%s.json", m.dump, n, strings.ReplaceAll(strings.Trim(path, "/"), "/", "_")), body, 0o644)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// decision is what to answer a model request with.
type decision struct {
	call bool   // the tool call; otherwise text
	text string // the text (the answer, a side answer, or a complaint)
}

// decide looks at what a request offers and holds: tools is the names of
// the tools offered, results the texts of the tool results in the
// conversation.
func decide(plan toolPlan, tools, results []string, rec *record) decision {
	if len(tools) == 0 {
		rec.Kind = "side"
		return decision{text: "Reading a.txt"}
	}
	rec.Kind = "model"
	if len(results) == 0 {
		rec.Step = "call"
		for _, t := range tools {
			if t == plan.Name {
				return decision{call: true}
			}
		}
		rec.Problem = fmt.Sprintf("tool %q not offered (offered: %s)", plan.Name, strings.Join(tools, ", "))
		return decision{text: "mock: " + rec.Problem}
	}
	rec.Step = "answer"
	for _, res := range results {
		if strings.Contains(res, strings.TrimSpace(fileText)) {
			return decision{text: answer}
		}
	}
	last := results[len(results)-1]
	if len(last) > 300 {
		last = last[:300] + "…"
	}
	rec.Problem = "the tool result does not hold the file's text: " + last
	return decision{text: "mock: " + rec.Problem}
}

func argsJSON(plan toolPlan) string {
	b, _ := json.Marshal(plan.Args)
	return string(b)
}

// text renders a JSON value as text for searching (a string as itself).
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sse(w http.ResponseWriter, event string, v any) {
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	b, _ := json.Marshal(v)
	fmt.Fprintf(w, "data: %s\n\n", b)
}

func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// openAIChat answers /v1/chat/completions.
func (m *mock) openAIChat(w http.ResponseWriter, body []byte, plan toolPlan, rec *record) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		rec.Kind, rec.Problem = "model", "undecodable body: "+err.Error()
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": rec.Problem}})
		return
	}
	var tools, results []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			results = append(results, text(msg.Content))
		}
	}
	d := decide(plan, tools, results, rec)
	model := req.Model
	id := "chatcmpl-bench"
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": d.text}
		finish := "stop"
		if d.call {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": plan.Name, "arguments": argsJSON(plan)}}}}
			finish = "tool_calls"
		}
		writeJSON(w, 200, map[string]any{"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]int{"prompt_tokens": 1500, "completion_tokens": 10, "total_tokens": 1510}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	finish := "stop"
	if d.call {
		sse(w, "", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": plan.Name, "arguments": ""}}}}, nil))
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0,
			"function": map[string]any{"arguments": argsJSON(plan)}}}}, nil))
		finish = "tool_calls"
	} else {
		sse(w, "", chunk(map[string]any{"role": "assistant", "content": d.text}, nil))
	}
	sse(w, "", chunk(map[string]any{}, finish))
	u := chunk(map[string]any{}, nil)
	u["choices"] = []any{}
	u["usage"] = map[string]int{"prompt_tokens": 1500, "completion_tokens": 10, "total_tokens": 1510}
	sse(w, "", u)
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush(w)
}

// responses answers the OpenAI Responses API, streamed.
func (m *mock) responses(w http.ResponseWriter, body []byte, plan toolPlan, rec *record) {
	var req struct {
		Model string            `json:"model"`
		Input []json.RawMessage `json:"input"`
		Tools []struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		rec.Kind, rec.Problem = "model", "undecodable body: "+err.Error()
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": rec.Problem}})
		return
	}
	var tools, results []string
	for _, t := range req.Tools {
		name := t.Name
		if name == "" {
			name = t.Function.Name
		}
		if name != "" {
			tools = append(tools, name)
		}
	}
	for _, raw := range req.Input {
		var item struct {
			Type   string `json:"type"`
			Output any    `json:"output"`
		}
		json.Unmarshal(raw, &item)
		if item.Type == "function_call_output" || item.Type == "custom_tool_call_output" {
			results = append(results, text(item.Output))
		}
	}
	d := decide(plan, tools, results, rec)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	resp := map[string]any{"id": "resp_bench", "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": req.Model, "output": []any{}}
	sse(w, "response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp})
	var item map[string]any
	if d.call {
		item = map[string]any{"type": "function_call", "id": "fc_bench", "call_id": "call_1", "name": plan.Name, "arguments": argsJSON(plan), "status": "completed"}
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
	} else {
		item = map[string]any{"type": "message", "id": "msg_bench", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": d.text, "annotations": []any{}}}}
		added := map[string]any{"type": "message", "id": "msg_bench", "role": "assistant", "status": "in_progress", "content": []any{}}
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": added})
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_bench", "output_index": 0, "content_index": 0, "delta": d.text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item})
	resp["status"] = "completed"
	resp["output"] = []any{item}
	resp["usage"] = map[string]any{"input_tokens": 1500, "input_tokens_details": map[string]int{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 1510}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "sequence_number": 4, "response": resp})
	flush(w)
}

// gemini answers generateContent and streamGenerateContent (SSE).
func (m *mock) gemini(w http.ResponseWriter, body []byte, plan toolPlan, stream bool, rec *record) {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					Name     string `json:"name"`
					Response any    `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		rec.Kind, rec.Problem = "model", "undecodable body: "+err.Error()
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "message": rec.Problem, "status": "INVALID_ARGUMENT"}})
		return
	}
	var tools, results []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			tools = append(tools, f.Name)
		}
	}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				results = append(results, text(p.FunctionResponse.Response))
			}
		}
	}
	d := decide(plan, tools, results, rec)
	part := map[string]any{"text": d.text}
	if d.call {
		part = map[string]any{"functionCall": map[string]any{"name": plan.Name, "args": plan.Args}}
	}
	out := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 1500, "candidatesTokenCount": 10, "totalTokenCount": 1510},
		"modelVersion":  "m",
		"responseId":    "bench",
	}
	if !stream {
		writeJSON(w, 200, out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	b, _ := json.Marshal(out)
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
	flush(w)
}

// ollama answers /api/chat as NDJSON.
func (m *mock) ollama(w http.ResponseWriter, body []byte, plan toolPlan, rec *record) {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		rec.Kind, rec.Problem = "model", "undecodable body: "+err.Error()
		writeJSON(w, 400, map[string]any{"error": rec.Problem})
		return
	}
	var tools, results []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			results = append(results, text(msg.Content))
		}
	}
	d := decide(plan, tools, results, rec)
	w.Header().Set("Content-Type", "application/x-ndjson")
	now := time.Now().UTC().Format(time.RFC3339Nano)
	msg := map[string]any{"role": "assistant", "content": d.text}
	if d.call {
		msg = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
			"function": map[string]any{"name": plan.Name, "arguments": plan.Args}}}}
	}
	line := func(v any) {
		b, _ := json.Marshal(v)
		w.Write(append(b, '\n'))
	}
	line(map[string]any{"model": req.Model, "created_at": now, "message": msg, "done": false})
	line(map[string]any{"model": req.Model, "created_at": now, "message": map[string]any{"role": "assistant", "content": ""},
		"done": true, "done_reason": "stop", "prompt_eval_count": 1500, "eval_count": 10})
	flush(w)
}
