package openai

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

func TestNormalizeBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                           DefaultBaseURL,
		"http://localhost:8000":      "http://localhost:8000/v1",
		"http://localhost:1234/":     "http://localhost:1234/v1",
		"localhost:8080":             "http://localhost:8080/v1",
		"http://localhost:8000/v1/":  "http://localhost:8000/v1",
		"https://gw.example.com/api": "https://gw.example.com/api",
	} {
		if got := NormalizeBaseURL(in); got != want {
			t.Errorf("NormalizeBaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func collect(t *testing.T, p *Provider, req *llm.Request) *llm.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := llm.Collect(p.Chat(ctx, req))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRequestShape(t *testing.T) {
	srv := llmtest.New(t)
	srv.Always("/v1/chat/completions", llmtest.OpenAIStream("m", llmtest.Text("ok")))
	p := New(Options{BaseURL: srv.OpenAIURL(), APIKey: "sk-test", Model: "m"})
	png := []byte("\x89PNG\r\n\x1a\n0000")
	req := &llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "what is this?", Images: [][]byte{png}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "18C"},
		},
		Tools:      []llm.ToolSpec{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice: "get_weather",
		Think:      &llm.Think{Enabled: true, Level: "low"},
		MaxTokens:  50,
	}
	collect(t, p, req)
	r := srv.RequestsTo("/v1/chat/completions")[0]
	if r.Header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
	var body struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		ToolChoice         map[string]any  `json:"tool_choice"`
		ReasoningEffort    string          `json:"reasoning_effort"`
		ChatTemplateKwargs map[string]bool `json:"chat_template_kwargs"`
		MaxTokens          int             `json:"max_tokens"`
	}
	r.JSON(t, &body)
	if !body.Stream || !body.StreamOptions.IncludeUsage {
		t.Errorf("stream %v include_usage %v", body.Stream, body.StreamOptions.IncludeUsage)
	}
	if !strings.Contains(string(body.Messages[0].Content), `"image_url":{"url":"data:image/png;base64,`) {
		t.Errorf("image not sent as a data URL: %s", body.Messages[0].Content)
	}
	tc := body.Messages[1].ToolCalls
	if len(tc) != 1 || tc[0].Type != "function" || tc[0].Function.Arguments != `{"city":"Paris"}` || tc[0].ID != "call_1" {
		t.Errorf("tool call = %+v (arguments must be a JSON string)", tc)
	}
	if body.Messages[2].Role != "tool" || body.Messages[2].ToolCallID != "call_1" {
		t.Errorf("tool result = %+v", body.Messages[2])
	}
	if body.ToolChoice["type"] != "function" || body.ReasoningEffort != "low" || !body.ChatTemplateKwargs["enable_thinking"] || body.MaxTokens != 50 {
		t.Errorf("tool_choice %v reasoning_effort %q kwargs %v max_tokens %d", body.ToolChoice, body.ReasoningEffort, body.ChatTemplateKwargs, body.MaxTokens)
	}
	for _, tc := range []struct {
		choice llm.ToolChoice
		want   string
	}{{llm.ToolChoiceAuto, "null"}, {llm.ToolChoiceNone, `"none"`}, {llm.ToolChoiceRequired, `"required"`}} {
		collect(t, p, &llm.Request{Tools: req.Tools, ToolChoice: tc.choice})
		reqs := srv.RequestsTo("/v1/chat/completions")
		var b map[string]json.RawMessage
		reqs[len(reqs)-1].JSON(t, &b)
		got := string(b["tool_choice"])
		if got == "" {
			got = "null"
		}
		if got != tc.want {
			t.Errorf("tool_choice %q sent as %s, want %s", tc.choice, got, tc.want)
		}
	}
}

func TestModelsAndHealth(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/v1/models", llmtest.JSONResponse(200, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": "Qwen/Qwen3-8B", "object": "model", "created": 1795278356, "owned_by": "vllm", "max_model_len": 32768},
		map[string]any{"id": "ggml-org/gemma", "object": "model", "meta": map[string]any{"n_ctx_train": 8192}},
	}}))
	p := New(Options{BaseURL: srv.URL, Models: map[string]ModelConfig{"Qwen/Qwen3-8B": {Capabilities: []llm.Capability{llm.CapTools, llm.CapThinking}}}})
	models, err := p.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 2 {
		t.Fatalf("models = %+v", models)
	}
	q, g := models[0], models[1]
	if q.Name != "Qwen/Qwen3-8B" || q.ContextLength != 32768 || !q.Has(llm.CapThinking) || !q.CapabilitiesKnown {
		t.Errorf("vllm model = %+v", q)
	}
	if g.TrainedContextLength != 8192 || g.CapabilitiesKnown || len(g.Capabilities) != 0 {
		t.Errorf("llama.cpp model = %+v (capabilities must not be guessed)", g)
	}
	srv.Enqueue("/v1/models", llmtest.JSONResponse(401, map[string]string{"error": "Unauthorized"}))
	if _, err := p.Health(context.Background()); llm.CodeOf(err) != llm.CodeAuth || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("health with a bad key: %v", err)
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/v1/embeddings", llmtest.JSONResponse(200, map[string]any{"object": "list", "data": []any{
		map[string]any{"index": 1, "embedding": []float32{0.3}},
		map[string]any{"index": 0, "embedding": []float32{0.1}},
	}}))
	p := New(Options{BaseURL: srv.OpenAIURL(), Model: "e"})
	v, err := p.Embed(context.Background(), "", []string{"a", "b"})
	if err != nil || len(v) != 2 || v[0][0] != 0.1 || v[1][0] != 0.3 {
		t.Fatalf("%v %v", v, err)
	}
}

// TestToolCallAssembly checks the rules for telling one streamed call from
// the next, on delta sequences real servers send.
func TestToolCallAssembly(t *testing.T) {
	i := func(n int) *int { return &n }
	d := func(idx *int, id, name, args string) deltaCall {
		c := deltaCall{Index: idx, ID: id, Name: name}
		switch {
		case strings.HasPrefix(args, "{"):
			c.Args, c.ArgsObject = args, true
		case args != "" && args != "null":
			json.Unmarshal([]byte(args), &c.Args)
		}
		return c
	}
	tests := []struct {
		name   string
		deltas []deltaCall
		want   []string // name(args)
	}{
		{"openai parallel by index", []deltaCall{
			d(i(0), "a", "f", `""`), d(i(1), "b", "g", `""`), d(i(0), "", "", `"{\"x\":"`), d(i(1), "", "", `"{}"`), d(i(0), "", "", `"1}"`),
		}, []string{`f({"x":1})`, `g({})`}},
		{"all index 0, new id and name", []deltaCall{
			d(i(0), "a", "f", `"{\"x\":1}"`), d(i(0), "b", "g", `"{\"y\":2}"`),
		}, []string{`f({"x":1})`, `g({"y":2})`}},
		{"id changes mid-call without a name", []deltaCall{
			d(i(0), "a", "f", `""`), d(i(0), "b", "", `"{\"x\""`), d(i(0), "b", "", `":1}"`),
		}, []string{`f({"x":1})`}},
		{"no index at all (old Ollama)", []deltaCall{
			d(nil, "", "f", `"{\"x\":1}"`), d(nil, "", "g", `"{}"`),
		}, []string{`f({"x":1})`, `g({})`}},
		{"object arguments", []deltaCall{
			d(i(0), "a", "f", `{"x":1}`),
		}, []string{`f({"x":1})`}},
		{"null arguments on the first delta", []deltaCall{
			d(i(0), "a", "f", `null`), d(i(0), "", "", `"{}"`),
		}, []string{`f({})`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var cs calls
			for k := range tc.deltas {
				cs.add(&tc.deltas[k])
			}
			var got []string
			for _, c := range cs.list {
				got = append(got, c.name+"("+c.args.String()+")")
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLlamaCppWindowFromProps(t *testing.T) {
	srv := llmtest.New(t)
	list := llmtest.JSONResponse(200, map[string]any{"object": "list", "data": []any{
		map[string]any{"id": "gemma.gguf", "object": "model", "meta": map[string]any{"n_ctx_train": 131072}}}})
	srv.Always("/v1/models", list)
	srv.Enqueue("/props", llmtest.JSONResponse(200, map[string]any{"default_generation_settings": map[string]any{"n_ctx": 4096}}))
	p := New(Options{BaseURL: srv.OpenAIURL()})
	mi, err := p.ModelInfo(context.Background(), "gemma.gguf")
	if err != nil || mi.ContextLength != 4096 || mi.TrainedContextLength != 131072 {
		t.Fatalf("%+v %v", mi, err)
	}
}
