package ollama

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

func TestHostFromEnv(t *testing.T) {
	tests := []struct{ env, want string }{
		{"", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://127.0.0.1:11434"},
		{"0.0.0.0:11555", "http://127.0.0.1:11555"},
		{":11555", "http://127.0.0.1:11555"},
		{"localhost", "http://localhost:11434"},
		{"gpu-box:9000", "http://gpu-box:9000"},
		{"http://gpu-box", "http://gpu-box:80"},
		{"https://ollama.example.com", "https://ollama.example.com:443"},
		{"https://example.com:8443/ollama", "https://example.com:8443/ollama"},
		{"[::1]:11434", "http://[::1]:11434"},
		{"::1", "http://[::1]:11434"},
		{`"127.0.0.1:11555"`, "http://127.0.0.1:11555"},
		{"host:notaport", "http://host:11434"}, // as ollama itself reads it
	}
	for _, tc := range tests {
		got := HostFromEnv(func(string) string { return tc.env })
		if got != tc.want {
			t.Errorf("OLLAMA_HOST=%q: got %s, want %s", tc.env, got, tc.want)
		}
	}
}

// sent returns the body of the n-th /api/chat request.
func sent(t *testing.T, srv *llmtest.Server, n int) map[string]any {
	t.Helper()
	reqs := srv.RequestsTo("/api/chat")
	if len(reqs) <= n {
		t.Fatalf("only %d chat requests", len(reqs))
	}
	var body map[string]any
	reqs[n].JSON(t, &body)
	return body
}

func run(t *testing.T, p *Provider, req *llm.Request) *llm.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := llm.Collect(p.Chat(ctx, req))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestContextWindow(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "big", ContextLength: 131072})
	srv.AddModel(llmtest.Model{Name: "small", ContextLength: 4096})
	srv.AddModel(llmtest.Model{Name: "tuned", ContextLength: 131072, NumCtx: 32768})
	srv.Always("/api/chat", llmtest.OllamaStream("x", llmtest.Text("ok")))
	tests := []struct {
		name  string
		opts  Options
		model string
		req   int
		want  float64
	}{
		{"trained maximum capped", Options{}, "big", 0, DefaultMaxContext},
		{"small model uses its own", Options{}, "small", 0, 4096},
		{"Modelfile num_ctx respected", Options{}, "tuned", 0, 32768},
		{"configured wins", Options{NumCtx: 65536}, "tuned", 0, 65536},
		{"cap configurable", Options{MaxContext: 65536}, "big", 0, 65536},
		{"request wins", Options{NumCtx: 65536}, "big", 2048, 2048},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.BaseURL = srv.URL
			p := New(tc.opts)
			run(t, p, &llm.Request{Model: tc.model, ContextLength: tc.req, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
			body := sent(t, srv, i)
			opts, _ := body["options"].(map[string]any)
			if opts["num_ctx"] != tc.want {
				t.Errorf("num_ctx = %v, want %v", opts["num_ctx"], tc.want)
			}
			if body["truncate"] != false {
				t.Errorf("truncate = %v, want false (an overlong prompt must fail, not lose its front)", body["truncate"])
			}
			info, err := p.ModelInfo(context.Background(), tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if tc.req == 0 && float64(info.ContextLength) != tc.want {
				t.Errorf("ModelInfo.ContextLength = %d, want %v", info.ContextLength, tc.want)
			}
		})
	}
}

func TestPromptTruncationFlagged(t *testing.T) {
	srv := llmtest.New(t)
	p := New(Options{BaseURL: srv.URL, Model: "m", NumCtx: 2048})
	long := make([]byte, 60000) // ≥ 10,000 tokens by any tokenizer
	for i := range long {
		long[i] = 'a' + byte(i%26)
	}
	tests := []struct {
		name    string
		content string
		evalled int
		want    bool
	}{
		{"fits", "hello", 30, false},
		{"front dropped", string(long), 1500, true},
		{"window filled", "hello", 2048, true},
	}
	for _, tc := range tests {
		srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok"), llmtest.Usage(tc.evalled, 2)))
		res := run(t, p, &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: tc.content}}})
		if res.Done.PromptTruncated != tc.want {
			t.Errorf("%s: PromptTruncated = %v, want %v", tc.name, res.Done.PromptTruncated, tc.want)
		}
	}
}

func TestRequestShape(t *testing.T) {
	srv := llmtest.New(t)
	srv.Always("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	p := New(Options{BaseURL: srv.URL, Model: "m", NumCtx: 4096, KeepAlive: 10 * time.Minute})
	temp, seed := 0.2, 7
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "old question"},
			{Role: llm.RoleAssistant, Content: "old answer", Thinking: "old reasoning"},
			{Role: llm.RoleUser, Content: "weather in Paris?"},
			{Role: llm.RoleAssistant, Thinking: "I should look it up", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "18C"},
		},
		Tools:       []llm.ToolSpec{{Name: "get_weather", Description: "weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		Think:       &llm.Think{Enabled: true, Level: "high"},
		Temperature: &temp, Seed: &seed, MaxTokens: 100, Stop: []string{"END"},
	}
	run(t, p, req)
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			Thinking  string `json:"thinking"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Index     int            `json:"index"`
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolName   string `json:"tool_name"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools     []map[string]any `json:"tools"`
		Think     any              `json:"think"`
		KeepAlive string           `json:"keep_alive"`
		Options   map[string]any   `json:"options"`
		Stream    bool             `json:"stream"`
	}
	srv.RequestsTo("/api/chat")[0].JSON(t, &body)
	m := body.Messages
	if body.Model != "m" || !body.Stream || len(m) != 6 {
		t.Fatalf("body = %+v", body)
	}
	if m[2].Thinking != "old reasoning" {
		t.Errorf("reasoning of an earlier turn not sent back (the template decides what to show): %q", m[2].Thinking)
	}
	if m[4].Thinking != "I should look it up" {
		t.Errorf("reasoning of the turn in progress not sent: %q", m[4].Thinking)
	}
	tc := m[4].ToolCalls
	if len(tc) != 1 || tc[0].ID != "call_1" || tc[0].Function.Name != "get_weather" || tc[0].Function.Arguments["city"] != "Paris" {
		t.Errorf("tool call not sent as Ollama wants it (object arguments): %+v", tc)
	}
	if m[5].Role != "tool" || m[5].ToolName != "get_weather" || m[5].ToolCallID != "call_1" {
		t.Errorf("tool result = %+v, want tool_name and tool_call_id", m[5])
	}
	if len(body.Tools) != 1 || body.Think != "high" || body.KeepAlive != "10m0s" {
		t.Errorf("tools %v think %v keep_alive %v", body.Tools, body.Think, body.KeepAlive)
	}
	o := body.Options
	if o["num_ctx"] != 4096.0 || o["temperature"] != 0.2 || o["seed"] != 7.0 || o["num_predict"] != 100.0 {
		t.Errorf("options = %v", o)
	}
	for _, tc := range []struct {
		think *llm.Think
		want  any
	}{{&llm.Think{Enabled: false}, false}, {&llm.Think{Enabled: true}, true}, {nil, nil}} {
		run(t, p, &llm.Request{Think: tc.think})
		reqs := srv.RequestsTo("/api/chat")
		var b map[string]any
		reqs[len(reqs)-1].JSON(t, &b)
		if b["think"] != tc.want {
			t.Errorf("think %+v sent as %v, want %v", tc.think, b["think"], tc.want)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 40960})
	srv.AddModel(llmtest.Model{Name: "llava:7b", Capabilities: []string{"completion", "vision"}, ContextLength: 4096})
	p := New(Options{BaseURL: srv.URL})
	models, err := p.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 || models[0].Name != "llava:7b" || !models[0].Has(llm.CapVision) || models[0].Has(llm.CapTools) {
		t.Fatalf("models = %+v", models)
	}
	q := models[1]
	if !q.Has(llm.CapTools) || !q.Has(llm.CapThinking) || q.ContextLength != DefaultMaxContext || q.TrainedContextLength != 40960 || !q.CapabilitiesKnown {
		t.Errorf("qwen3 = %+v", q)
	}
	h, err := p.Health(context.Background())
	if err != nil || h.Version != "0.17.4" || h.Kind != "ollama" {
		t.Errorf("health = %+v, %v", h, err)
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/embed", llmtest.JSONResponse(200, map[string]any{"model": "e", "embeddings": [][]float32{{0.1, 0.2}, {0.3, 0.4}}}))
	srv.Enqueue("/api/embed", llmtest.JSONResponse(200, map[string]any{"model": "e", "embeddings": [][]float32{{0.1}}}))
	p := New(Options{BaseURL: srv.URL, Model: "e"})
	v, err := p.Embed(context.Background(), "", []string{"a", "b"})
	if err != nil || len(v) != 2 || v[1][1] != 0.4 {
		t.Fatalf("%v %v", v, err)
	}
	var body map[string]any
	srv.RequestsTo("/api/embed")[0].JSON(t, &body)
	if body["model"] != "e" || len(body["input"].([]any)) != 2 {
		t.Errorf("body = %v", body)
	}
	if _, err := p.Embed(context.Background(), "", []string{"a", "b"}); llm.CodeOf(err) != llm.CodeBadResponse {
		t.Errorf("short answer: %v", err)
	}
}
