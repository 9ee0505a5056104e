package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/llm/responses"
)

func TestVersionCheck(t *testing.T) {
	for v, want := range map[string]Status{"0.17.4": OK, "0.9.0": OK, "v1.2.3-rc1": OK, "0.6.8": Warn, "0.1": Warn, "banana": Warn} {
		if got := versionCheck(v).Status; got != want {
			t.Errorf("version %q: %s, want %s", v, got, want)
		}
	}
}

func find(r *Report, name string) Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return Check{}
}

func TestRun(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 40960})
	srv.AddModel(llmtest.Model{Name: "old:7b", Capabilities: []string{"completion"}, ContextLength: 2048})
	ctx := context.Background()
	p := ollama.New(ollama.Options{BaseURL: srv.URL})

	srv.Enqueue("/api/chat", llmtest.OllamaStream("qwen3:4b", llmtest.Text("ready")))
	r := Run(ctx, p, srv.URL, Options{Model: "qwen3:4b"})
	if !r.Ready || find(r, "tools").Status != OK || find(r, "thinking").Status != OK || find(r, "chat").Status != OK {
		t.Errorf("good model: %+v", r)
	}

	r = Run(ctx, p, srv.URL, Options{Model: "old:7b", SkipChat: true})
	if !r.Ready || find(r, "tools").Status != Warn || find(r, "context").Status != Warn {
		t.Errorf("weak model should be ready with warnings: %+v", r)
	}

	srv.Enqueue("/api/chat", llmtest.OllamaError(500, "llama runner process has terminated: out of memory"))
	srv.Enqueue("/api/chat", llmtest.OllamaError(500, "llama runner process has terminated: out of memory"))
	srv.Enqueue("/api/chat", llmtest.OllamaError(500, "llama runner process has terminated: out of memory"))
	r = Run(ctx, ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), srv.URL, Options{Model: "qwen3:4b"})
	if c := find(r, "chat"); r.Ready || c.Status != Fail || !strings.Contains(c.Detail, "out of memory") {
		t.Errorf("failing chat: %+v", c)
	}

	o := openai.New(openai.Options{BaseURL: srv.OpenAIURL()})
	r = Run(ctx, o, srv.OpenAIURL(), Options{Model: "qwen3:4b", SkipChat: true})
	if !r.Ready || find(r, "tools").Status != Warn || !strings.Contains(find(r, "tools").Fix, "--enable-auto-tool-choice") {
		t.Errorf("openai unknown capabilities: %+v", r)
	}

	empty := llmtest.JSONResponse(200, map[string]any{"object": "list", "data": []any{}})
	srv.Enqueue("/v1/models", empty, empty) // the health check lists models too
	r = Run(ctx, o, srv.OpenAIURL(), Options{Model: "x"})
	if r.Ready || find(r, "models").Status != Fail {
		t.Errorf("no models: %+v", r)
	}
}

// TestToolsCheck: the tools line says how the model will get its tools
// (docs/tool-protocol.md) and whether that works well.
func TestToolsCheck(t *testing.T) {
	withTools := &llm.ModelInfo{Name: "q", Capabilities: []llm.Capability{llm.CapTools}, CapabilitiesKnown: true}
	without := &llm.ModelInfo{Name: "g", Capabilities: []llm.Capability{}, CapabilitiesKnown: true}
	unknown := &llm.ModelInfo{Name: "u"}
	refused := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		mode   prompted.Mode
		m      *llm.ModelInfo
		at     time.Time
		status Status
		has    string
	}{
		{"native", prompted.Auto, withTools, time.Time{}, OK, "native: calls tools natively"},
		{"no tools: prompted", prompted.Auto, without, time.Time{}, Warn, "prompted (the server says this model cannot call tools)"},
		{"unknown: native, then prompted", prompted.Auto, unknown, time.Time{}, Warn, "native (the server does not say whether this model calls tools: native, and prompted if the server refuses them)"},
		{"refused before", prompted.Auto, unknown, refused, Warn, "prompted (the server refused tools for this model (2026-11-26); remembered)"},
		{"configured prompted", prompted.Prompted, withTools, time.Time{}, OK, "though it calls tools natively"},
		{"configured native, no tools", prompted.Native, without, time.Time{}, Fail, "it will refuse them"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := toolsCheck(tc.m, prompted.DecideFor(tc.mode, tc.m, tc.at))
			if c.Status != tc.status || !strings.Contains(c.Detail, tc.has) {
				t.Errorf("%+v", c)
			}
		})
	}
}

// TestResponsesCheck: for the OpenAI dialects the doctor says whether the
// server offers the Responses API: a failure for --provider responses when
// it does not, a note for chat completions.
func TestResponsesCheck(t *testing.T) {
	offered := llmtest.JSONResponse(400, map[string]any{"error": map[string]any{"message": "model is required", "type": "api_error"}})
	missing := llmtest.JSONResponse(404, map[string]any{"error": map[string]any{"code": 404, "message": "File Not Found", "type": "not_found_error"}})
	tests := []struct {
		name      string
		responses bool // the provider is llm/responses
		sc        llmtest.Scenario
		status    Status
		detail    string
		fix       string
	}{
		{"responses, offered", true, offered, OK, "the server offers the Responses API (POST ", ""},
		{"responses, not offered", true, missing, Fail, "does not offer the Responses API", "--provider openai"},
		{"openai, offered", false, offered, OK, "--provider responses speaks it", ""},
		{"openai, not offered", false, missing, OK, "chat completions only", ""},
		{"cannot tell", false, llmtest.OpenAIError(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key"), Skip, "cannot tell", "OPENAI_API_KEY"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.AddModel(llmtest.Model{Name: "m"})
			srv.Enqueue("/v1/responses", tc.sc)
			var p llm.Provider = openai.New(openai.Options{BaseURL: srv.OpenAIURL(), MaxRetries: -1})
			if tc.responses {
				p = responses.New(responses.Options{BaseURL: srv.OpenAIURL(), MaxRetries: -1})
			}
			r := Run(context.Background(), p, srv.OpenAIURL(), Options{Model: "m", SkipChat: true})
			c := find(r, "responses")
			if c.Status != tc.status || !strings.Contains(c.Detail, tc.detail) || !strings.Contains(c.Fix, tc.fix) {
				t.Errorf("%+v", c)
			}
			if r.Ready != (tc.status != Fail) {
				t.Errorf("ready %v with %s", r.Ready, c.Status)
			}
			if r.Checks[1].Name != "responses" {
				t.Errorf("the check is not right after the server's: %+v", r.Checks)
			}
		})
	}
	// Ollama's native API is not asked.
	srv := llmtest.New(t)
	r := Run(context.Background(), ollama.New(ollama.Options{BaseURL: srv.URL}), srv.URL, Options{SkipChat: true})
	if c := find(r, "responses"); c.Name != "" || len(srv.RequestsTo("/v1/responses")) != 0 {
		t.Errorf("native Ollama probed: %+v", c)
	}
}
