package responses

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/openai"
)

func collect(t *testing.T, p *Provider, req *llm.Request) (*llm.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return llm.Collect(p.Chat(ctx, req))
}

func user(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

// TestRequestShape: the whole conversation goes out as input items, with
// store false; tools as top-level function tools, strict false; the
// reasoning effort from Think.
func TestRequestShape(t *testing.T) {
	srv := llmtest.New(t)
	srv.Always("/v1/responses", llmtest.ResponsesStream("m", llmtest.Text("ok")))
	p := New(Options{BaseURL: srv.OpenAIURL(), APIKey: "sk-test", Model: "m"})
	png := []byte("\x89PNG\r\n\x1a\n0000")
	temp := 0.2
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "what is this?", Images: [][]byte{png}},
			{Role: llm.RoleAssistant, Content: "Let me look.", Thinking: "hmm", ToolCalls: []llm.ToolCall{
				{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
				{ID: "call_2", Name: "get_time"},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "18C"},
			{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "get_time", Content: ""},
		},
		Tools:       []llm.ToolSpec{{Name: "get_weather", Description: "weather", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "get_time"}},
		ToolChoice:  "get_weather",
		Think:       &llm.Think{Enabled: true, Level: "low"},
		MaxTokens:   50,
		Temperature: &temp,
		Seed:        new(int),
	}
	if _, err := collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	r := srv.RequestsTo("/v1/responses")[0]
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
	var body map[string]json.RawMessage
	r.JSON(t, &body)
	want := map[string]string{
		"model":  `"m"`,
		"stream": `true`,
		"store":  `false`,
		"input": `[{"type":"message","role":"system","content":"be brief"},` +
			`{"type":"message","role":"user","content":[{"type":"input_text","text":"what is this?"},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgowMDAw"}]},` +
			`{"type":"message","role":"assistant","content":"Let me look."},` +
			`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
			`{"type":"function_call","call_id":"call_2","name":"get_time","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"18C"},` +
			`{"type":"function_call_output","call_id":"call_2","output":""}]`,
		"tools": `[{"type":"function","name":"get_weather","description":"weather","parameters":{"type":"object"},"strict":false},` +
			`{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}},"strict":false}]`,
		"tool_choice":       `{"name":"get_weather","type":"function"}`,
		"reasoning":         `{"effort":"low","summary":"auto"}`,
		"max_output_tokens": `50`,
		"temperature":       `0.2`,
	}
	for k, v := range want {
		if got := string(body[k]); !jsonSame(got, v) {
			t.Errorf("%s = %s\nwant %s", k, got, v)
		}
	}
	for _, k := range []string{"seed", "previous_response_id", "instructions", "stop"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent: not part of a stateless Responses request", k)
		}
	}

	tests := []struct {
		name   string
		choice llm.ToolChoice
		think  *llm.Think
		want   map[string]string // "" means absent
	}{
		{"auto", llm.ToolChoiceAuto, nil, map[string]string{"tool_choice": "", "reasoning": ""}},
		{"none", llm.ToolChoiceNone, &llm.Think{Enabled: false}, map[string]string{"tool_choice": `"none"`, "reasoning": ""}},
		{"required", llm.ToolChoiceRequired, &llm.Think{Enabled: true}, map[string]string{"tool_choice": `"required"`, "reasoning": `{"summary":"auto"}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv.Enqueue("/v1/responses", llmtest.ResponsesWhole("m", llmtest.Text("ok")))
			if _, err := collect(t, p, &llm.Request{Messages: user("hi"), Tools: req.Tools, ToolChoice: tc.choice, Think: tc.think, NoStream: true}); err != nil {
				t.Fatal(err)
			}
			reqs := srv.RequestsTo("/v1/responses")
			var b map[string]json.RawMessage
			reqs[len(reqs)-1].JSON(t, &b)
			if string(b["stream"]) != "false" {
				t.Errorf("stream = %s", b["stream"])
			}
			for k, v := range tc.want {
				if got := string(b[k]); !jsonSame(got, v) && !(v == "" && got == "") {
					t.Errorf("%s = %s, want %s", k, got, v)
				}
			}
		})
	}
}

func jsonSame(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// sse renders events as an SSE body, one chunk each.
func sse(events ...string) llmtest.Scenario {
	sc := llmtest.Scenario{Header: http.Header{"Content-Type": {"text/event-stream"}}}
	for _, e := range events {
		sc.Chunks = append(sc.Chunks, llmtest.Chunk{Data: "data: " + e + "\n\n"})
	}
	return sc
}

const completed = `{"type":"response.completed","response":{"status":"completed","output":[],"usage":{"input_tokens":5,"output_tokens":3}}}`

// TestStreams reads event sequences servers send, each into the one
// normalised reply.
func TestStreams(t *testing.T) {
	tests := []struct {
		name     string
		events   []string
		tools    []string
		thinking string
		text     string
		calls    []string // name(args)
		ids      []string
		finish   llm.FinishReason
		code     llm.Code
	}{
		{
			name: "a call without output_item.added, keyed by output_index",
			events: []string{
				`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"a\":"}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"1}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"c1","name":"f"}}`,
				completed},
			calls: []string{`f({"a":1})`}, ids: []string{"c1"}, finish: llm.FinishToolCalls,
		},
		{
			name: "Ollama: a message and the call after it share output_index 0",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","content":[]}}`,
				`{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":"Looking."}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1_0","type":"function_call","call_id":"call_a","name":"f","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc_1_0","output_index":0,"delta":"{}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1_0","type":"function_call","call_id":"call_a","name":"f","arguments":"{}"}}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_2_0","type":"function_call","call_id":"call_b","name":"g","arguments":""}}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_2_0","type":"function_call","call_id":"call_b","name":"g","arguments":"{\"x\":2}"}}`,
				completed},
			text: "Looking.", calls: []string{`f({})`, `g({"x":2})`}, ids: []string{"call_a", "call_b"}, finish: llm.FinishToolCalls,
		},
		{
			name: "arguments done replaces the deltas",
			events: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","call_id":"c","name":"f"}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{\"a\":"}`,
				`{"type":"response.function_call_arguments.done","item_id":"fc","arguments":"{\"a\":true}"}`,
				completed},
			calls: []string{`f({"a":true})`}, finish: llm.FinishToolCalls,
		},
		{
			name: "arguments sent as an object",
			events: []string{
				`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc","type":"function_call","call_id":"c","name":"f","arguments":{"a":1}}}`,
				completed},
			calls: []string{`f({"a":1})`}, finish: llm.FinishToolCalls,
		},
		{
			name: "summaries of two parts are set apart",
			events: []string{
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":0,"delta":"One."}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs","summary_index":1,"delta":"Two."}`,
				`{"type":"response.output_text.delta","item_id":"m","delta":"Hi"}`,
				completed},
			thinking: "One.\n\nTwo.", text: "Hi", finish: llm.FinishStop,
		},
		{
			name: "raw reasoning wins over its summary",
			events: []string{
				`{"type":"response.reasoning_text.delta","item_id":"rs","delta":"raw"}`,
				`{"type":"response.reasoning_summary_text.delta","item_id":"rs","delta":"summary"}`,
				completed},
			thinking: "raw", finish: llm.FinishStop,
		},
		{
			name: "old vLLM reasoning delta as an object",
			events: []string{
				`{"type":"response.reasoning.delta","item_id":"rs","delta":{"content":"We think"}}`,
				`{"type":"response.output_text.delta","item_id":"m","delta":"ok"}`,
				completed},
			thinking: "We think", text: "ok", finish: llm.FinishStop,
		},
		{
			name: "items sent whole, without deltas",
			events: []string{
				`{"type":"response.output_item.done","item":{"id":"rs","type":"reasoning","summary":[{"type":"summary_text","text":"S"}]}}`,
				`{"type":"response.output_item.done","item":{"id":"m","type":"message","content":[{"type":"output_text","text":"A"},{"type":"refusal","refusal":"B"}]}}`,
				completed},
			thinking: "S", text: "AB", finish: llm.FinishStop,
		},
		{
			name: "an item done after its deltas is not read twice",
			events: []string{
				`{"type":"response.output_text.delta","item_id":"m","delta":"A"}`,
				`{"type":"response.output_item.done","item":{"id":"m","type":"message","content":[{"type":"output_text","text":"A"}]}}`,
				completed},
			text: "A", finish: llm.FinishStop,
		},
		{
			name:   "the answer only in response.completed",
			events: []string{`{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"late"}]}]}}`},
			text:   "late", finish: llm.FinishStop,
		},
		{
			name: "a refusal is shown as the answer",
			events: []string{
				`{"type":"response.refusal.delta","item_id":"m","delta":"I can't help with that."}`,
				completed},
			text: "I can't help with that.", finish: llm.FinishStop,
		},
		{
			name: "incomplete for content_filter is not length",
			events: []string{
				`{"type":"response.output_text.delta","item_id":"m","delta":"a"}`,
				`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"}}}`},
			text: "a", finish: llm.FinishStop,
		},
		{
			name: "a call cut by the length limit is refused, not repaired",
			events: []string{
				`{"type":"response.output_item.added","item":{"id":"fc","type":"function_call","call_id":"c","name":"write_file"}}`,
				`{"type":"response.function_call_arguments.delta","item_id":"fc","delta":"{\"path\":\"a\",\"content\":\"x"}`,
				`{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}}`},
			calls: []string{`write_file({})`}, finish: llm.FinishLength,
		},
		{
			name:   "an error event with an error object",
			events: []string{`{"type":"error","error":{"message":"model 'x' not found","type":"not_found_error"}}`},
			code:   llm.CodeModelNotFound,
		},
		{
			name:   "a plain error object in the stream",
			events: []string{`{"error":{"message":"upstream failed","type":"server_error"}}`},
			code:   llm.CodeServer,
		},
		{
			name:   "rate limited inside the stream",
			events: []string{`{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached for o4-mini"}}}`},
			code:   llm.CodeRateLimited,
		},
		{
			name:   "an invalid prompt is the request's fault",
			events: []string{`{"type":"response.failed","response":{"status":"failed","error":{"code":"invalid_prompt","message":"Invalid prompt: flagged"}}}`},
			code:   llm.CodeInvalidRequest,
		},
		{
			name:   "a failure without its error",
			events: []string{`{"type":"response.failed","response":{"status":"failed"}}`},
			code:   llm.CodeServer,
		},
		{
			name:   "a stream that ends before completing",
			events: []string{`{"type":"response.output_text.delta","item_id":"m","delta":"part"}`},
			text:   "part", code: llm.CodeBadResponse,
		},
		{
			name:   "a chunk that is not JSON",
			events: []string{`{"type":"response.output_text.delta",`},
			code:   llm.CodeBadResponse,
		},
		{
			name:   "text tool calls when tools are offered",
			events: []string{`{"type":"response.output_text.delta","item_id":"m","delta":"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"}`, completed},
			tools:  []string{"f"}, calls: []string{`f({})`}, finish: llm.FinishToolCalls,
		},
		{
			name: "unknown events are skipped",
			events: []string{`{"type":"response.created","response":{"status":"in_progress"}}`, `{"type":"response.output_text.annotation.added","annotation":{}}`,
				`{"type":"response.web_search_call.in_progress"}`, `{"type":"response.output_text.delta","item_id":"m","delta":"x"}`, `[DONE]`, completed},
			text: "x", finish: llm.FinishStop,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue("/v1/responses", sse(tc.events...))
			p := New(Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1})
			req := &llm.Request{Messages: user("hi")}
			for _, name := range tc.tools {
				req.Tools = append(req.Tools, llm.ToolSpec{Name: name})
			}
			res, err := collect(t, p, req)
			if tc.code != "" {
				if llm.CodeOf(err) != tc.code {
					t.Fatalf("error %v (code %q), want code %q", err, llm.CodeOf(err), tc.code)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if res.Message.Thinking != tc.thinking || res.Message.Content != tc.text {
				t.Errorf("thinking %q text %q, want %q %q", res.Message.Thinking, res.Message.Content, tc.thinking, tc.text)
			}
			var calls []string
			for i, c := range res.Message.ToolCalls {
				calls = append(calls, c.Name+"("+string(c.Args)+")")
				if i < len(tc.ids) && c.ID != tc.ids[i] {
					t.Errorf("call %d has id %q, want %q (the call_id, which its output must name)", i, c.ID, tc.ids[i])
				}
			}
			if strings.Join(calls, " ") != strings.Join(tc.calls, " ") {
				t.Errorf("calls %v, want %v (%+v)", calls, tc.calls, res.Message.ToolCalls)
			}
			if tc.code == "" && (res.Done == nil || res.Done.Reason != tc.finish) {
				t.Errorf("done %+v, want %s", res.Done, tc.finish)
			}
			if tc.code == "" && len(srv.RequestsTo("/v1/responses")) != 1 {
				t.Errorf("%d requests, want 1", len(srv.RequestsTo("/v1/responses")))
			}
		})
	}
}

// TestEmptyStreamFallback: a stream that completes with nothing in it is
// asked again once without streaming; both calls' tokens count.
func TestEmptyStreamFallback(t *testing.T) {
	srv := llmtest.New(t)
	p := New(Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1})
	srv.Enqueue("/v1/responses", llmtest.ResponsesDialect{Empty: true}.Stream("m", llmtest.Text("lost"), llmtest.Usage(10, 1)),
		llmtest.ResponsesWhole("m", llmtest.Thinking("t"), llmtest.Text("found"), llmtest.Usage(10, 4)))
	res, err := collect(t, p, &llm.Request{Messages: user("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Message.Content != "found" || res.Message.Thinking != "t" || res.Usage == nil || *res.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 5}) {
		t.Errorf("%+v usage %+v", res.Message, res.Usage)
	}
	reqs := srv.RequestsTo("/v1/responses")
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var first, second struct {
		Stream bool  `json:"stream"`
		Input  []any `json:"input"`
	}
	reqs[0].JSON(t, &first)
	reqs[1].JSON(t, &second)
	if !first.Stream || second.Stream || len(second.Input) != 1 {
		t.Errorf("first stream=%v, then stream=%v with %d items", first.Stream, second.Stream, len(second.Input))
	}

	// A stream cut by the length limit before any answer is not asked again.
	srv.Enqueue("/v1/responses", llmtest.ResponsesDialect{Empty: true}.Stream("m", llmtest.Finish("length")))
	res, err = collect(t, p, &llm.Request{Messages: user("hi")})
	if err != nil || res.Done.Reason != llm.FinishLength || len(srv.RequestsTo("/v1/responses")) != 3 {
		t.Errorf("%v %+v, %d requests", err, res.Done, len(srv.RequestsTo("/v1/responses")))
	}

	// The fallback's own failure is the error.
	srv.Enqueue("/v1/responses", llmtest.ResponsesDialect{Empty: true}.Stream("m"), llmtest.OpenAIError(500, "boom", "server_error", ""))
	if _, err := collect(t, p, &llm.Request{Messages: user("hi")}); llm.CodeOf(err) != llm.CodeServer || !strings.Contains(err.Error(), "boom") {
		t.Errorf("fallback failure: %v", err)
	}
}

// TestPromptTruncated: fewer input tokens than the prompt can hold, or the
// whole window, says the server cut the prompt (Ollama's /v1 does, silently).
func TestPromptTruncated(t *testing.T) {
	long := strings.Repeat("word ", 3000) // 15000 bytes: 2500 tokens at least
	tests := []struct {
		name   string
		in     int
		window int
		want   bool
	}{
		{"whole", 3500, 0, false},
		{"fewer than the prompt can be", 2048, 0, true},
		{"the whole window", 8192, 8192, true},
	}
	for _, tc := range tests {
		srv := llmtest.New(t)
		srv.Enqueue("/v1/responses", llmtest.ResponsesStream("m", llmtest.Text("x"), llmtest.Usage(tc.in, 1)))
		p := New(Options{BaseURL: srv.OpenAIURL(), Model: "m"})
		res, err := collect(t, p, &llm.Request{Messages: user(long), ContextLength: tc.window})
		if err != nil || res.Done.PromptTruncated != tc.want {
			t.Errorf("%s: %v, PromptTruncated %v, want %v", tc.name, err, res.Done, tc.want)
		}
	}
}

// TestDialects: the same script over the ways servers vary the wire.
func TestDialects(t *testing.T) {
	parts := []llmtest.Part{llmtest.Thinking("Let me "), llmtest.Thinking("see."), llmtest.Text("It is "), llmtest.Text("sunny."),
		llmtest.Call("get_weather", `{"city":"Paris","note":"ünïcode"}`), llmtest.Call("get_time", `{}`), llmtest.Usage(7, 9)}
	for _, d := range []llmtest.ResponsesDialect{{}, {ReasoningText: true}, {ArgPieces: 1}, {ArgPieces: 4, ReasoningText: true}, {FinalOnly: true}, {NoUsage: true}} {
		t.Run(strings.Trim(strings.ReplaceAll(fmtDialect(d), " ", ","), "{}"), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue("/v1/responses", d.Stream("m", parts...))
			p := New(Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1})
			res, err := collect(t, p, &llm.Request{Messages: user("hi"), Tools: []llm.ToolSpec{{Name: "get_weather"}, {Name: "get_time"}}})
			if err != nil {
				t.Fatal(err)
			}
			m := res.Message
			if m.Thinking != "Let me see." || m.Content != "It is sunny." || len(m.ToolCalls) != 2 ||
				m.ToolCalls[0].ID != "call_1" || string(m.ToolCalls[0].Args) != `{"city":"Paris","note":"ünïcode"}` || m.ToolCalls[1].Name != "get_time" {
				t.Errorf("%+v", m)
			}
			if (res.Usage == nil) != d.NoUsage {
				t.Errorf("usage %+v", res.Usage)
			}
		})
	}
}

func fmtDialect(d llmtest.ResponsesDialect) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// TestMetadataIsTheProvidersOwn: models, health and their errors come
// from the same server's OpenAI-compatible endpoints, in this provider's
// name.
func TestMetadataIsTheProvidersOwn(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "tiny:latest"})
	p := New(Options{BaseURL: srv.URL, MaxRetries: -1, Models: map[string]openai.ModelConfig{"tiny": {ContextLength: 2048}}})
	info, err := p.Health(context.Background())
	if err != nil || info.Kind != "responses" || info.BaseURL != srv.OpenAIURL() {
		t.Fatalf("%+v %v", info, err)
	}
	mi, err := p.ModelInfo(context.Background(), "tiny")
	if err != nil || mi.ContextLength != 2048 {
		t.Errorf("%+v %v", mi, err)
	}
	_, err = p.ModelInfo(context.Background(), "nope")
	var le *llm.Error
	if !errors.As(err, &le) || le.Provider != "responses" || le.Code != llm.CodeModelNotFound {
		t.Errorf("%#v", err)
	}
	srv.Enqueue("/v1/responses", llmtest.OpenAIError(404, "model 'nope' not found", "api_error", ""))
	_, err = collect(t, p, &llm.Request{Model: "nope", Messages: user("hi")})
	if !errors.As(err, &le) || le.Code != llm.CodeModelNotFound || strings.Join(le.Available, ",") != "tiny:latest" || le.Provider != "responses" {
		t.Errorf("%#v", err)
	}
	if _, err := collect(t, New(Options{BaseURL: srv.URL}), &llm.Request{Messages: user("hi")}); llm.CodeOf(err) != llm.CodeInvalidRequest {
		t.Errorf("no model: %v", err)
	}
}

// TestOffersResponses: the probe tells a server with the endpoint from one
// without, by how it refuses an empty request.
func TestOffersResponses(t *testing.T) {
	tests := []struct {
		name string
		sc   llmtest.Scenario
		want bool
		err  bool
	}{
		{"Ollama 0.13.3+", llmtest.JSONResponse(400, map[string]any{"error": map[string]any{"message": "model is required", "type": "api_error"}}), true, false},
		{"vLLM validation", llmtest.JSONResponse(422, map[string]any{"detail": "field required"}), true, false},
		{"llama.cpp", llmtest.JSONResponse(404, map[string]any{"error": map[string]any{"code": 404, "message": "File Not Found", "type": "not_found_error"}}), false, false},
		{"older Ollama", llmtest.Scenario{Status: 404, Chunks: []llmtest.Chunk{{Data: "404 page not found"}}}, false, false},
		{"LM Studio without it", llmtest.JSONResponse(200, map[string]any{"error": "Unexpected endpoint or method. (POST /v1/responses)"}), false, false},
		{"a wrong key", llmtest.OpenAIError(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key"), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue("/v1/responses", tc.sc)
			got, err := New(Options{BaseURL: srv.OpenAIURL(), MaxRetries: -1}).OffersResponses(context.Background())
			if got != tc.want || (err != nil) != tc.err {
				t.Errorf("got %v %v, want %v (error: %v)", got, err, tc.want, tc.err)
			}
			if err != nil && !strings.Contains(err.Error(), "responses") {
				t.Errorf("error not in the provider's name: %v", err)
			}
		})
	}
}

// TestStreamErrors: a failure inside the stream, as response.failed or as
// an error event, ends it with a retryable server error, and keeps what
// streamed before it; before any output, it is retried.
func TestStreamErrors(t *testing.T) {
	for _, d := range []llmtest.ResponsesDialect{{}, {ErrorEvent: true}} {
		t.Run(fmtDialect(d), func(t *testing.T) {
			srv := llmtest.New(t)
			p := New(Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: 1})
			srv.Enqueue("/v1/responses", d.Stream("m", llmtest.Thinking("hmm"), llmtest.Text("partial "), llmtest.StreamError("runner crashed")))
			res, err := collect(t, p, &llm.Request{Messages: user("hi")})
			var le *llm.Error
			if !errors.As(err, &le) || le.Code != llm.CodeServer || !le.Retryable || !strings.Contains(le.Message, "runner crashed") ||
				res.Message.Content != "partial " || res.Message.Thinking != "hmm" || len(srv.RequestsTo("/v1/responses")) != 1 {
				t.Fatalf("%#v %+v", err, res.Message)
			}
			srv.Enqueue("/v1/responses", d.Stream("m", llmtest.StreamError("model runner has unexpectedly stopped")), d.Stream("m", llmtest.Text("ok")))
			if res, err = collect(t, p, &llm.Request{Messages: user("hi")}); err != nil || res.Message.Content != "ok" {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}
