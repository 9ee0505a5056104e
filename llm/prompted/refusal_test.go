package prompted

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// TestRefusalWordings runs real error bodies through the providers' own
// error mapping, then asks whether each is a refusal of tools.
func TestRefusalWordings(t *testing.T) {
	ollama := wire.Target{Provider: "ollama", BaseURL: "http://127.0.0.1:11434"}
	openai := wire.Target{Provider: "openai", BaseURL: "http://127.0.0.1:8000/v1"}
	cases := []struct {
		name   string
		target wire.Target
		status int
		body   string
		want   bool
	}{
		// Ollama /api/chat, a model whose template has no tools (gemma3).
		{"ollama", ollama, 400, `{"error":"registry.ollama.ai/library/gemma3:latest does not support tools"}`, true},
		// Ollama's /v1 (ollama/ollama#6027).
		{"ollama v1", openai, 400, `{"error":{"message":"stablelm2:latest does not support tools","type":"api_error","param":null,"code":null}}`, true},
		// vLLM started without a tool parser (langchain4j/langchain4j#3475).
		{"vllm", openai, 400, `{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`, true},
		// vLLM, a required or named choice without a parser.
		{"vllm named", openai, 400, `{"error":{"message":"tool_choice=\"required\" requires --tool-call-parser to be set","type":"BadRequestError","code":400}}`, true},
		// llama.cpp's server without --jinja answers 500.
		{"llama.cpp", openai, 500, `{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}`, true},
		{"gateway", openai, 400, `{"error":{"message":"tools are not supported","type":"invalid_request_error"}}`, true},
		{"tool use", openai, 400, `{"error":{"message":"This model does not support tool use."}}`, true},
		// Not refusals of tools.
		{"thinking", ollama, 400, `{"error":"\"tiny\" does not support thinking"}`, false},
		{"context", openai, 400, `{"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`, false},
		{"not found", ollama, 404, `{"error":"model 'gemma3' not found"}`, false},
		{"auth", openai, 401, `{"error":{"message":"does not support tools without a key"}}`, false},
		{"other 400", openai, 400, `{"error":{"message":"messages: tool_call_id is missing"}}`, false},
		// Near misses: an error that quotes a refusal, another status,
		// another feature.
		{"ollama 500", ollama, 500, `{"error":"registry.ollama.ai/library/gemma3:latest does not support tools"}`, false},
		{"tool_choice", openai, 400, `{"error":{"message":"this model does not support tool_choice \"required\""}}`, false},
		{"tool_choice at the end", openai, 400, `{"error":{"message":"m does not support tool_choice"}}`, false},
		{"toolsets", openai, 400, `{"error":{"message":"m does not support toolsets"}}`, false},
		{"quoted in a validation error", openai, 400, `{"error":{"message":"messages[1].content: \"why does gemma3 say it does not support tools?\" is too long"}}`, false},
		{"echoed with more words", ollama, 400, `{"error":"invalid request: the user wrote that the model does not support tools"}`, false},
		{"vllm at 500", openai, 500, `{"error":{"message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"}}`, false},
		{"vllm quoted", openai, 400, `{"error":{"message":"unknown flag in \"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set\""}}`, false},
		{"vllm other parser error", openai, 400, `{"error":{"message":"--tool-call-parser hermes is not valid for this model"}}`, false},
		{"jinja quoted", openai, 500, `{"error":{"code":500,"message":"template error: tools param requires --jinja flag (see docs)","type":"server_error"}}`, false},
		{"jinja at 502", openai, 502, `{"error":{"message":"tools param requires --jinja flag"}}`, false},
		{"other 500", openai, 500, `{"error":{"message":"tools are not supported"}}`, false},
		{"jinja at 400", openai, 400, `{"error":{"message":"tools param requires --jinja flag"}}`, true},
		{"ollama quoted name", ollama, 400, `{"error":"\"gemma3\" does not support tools"}`, true},
	}
	for _, c := range cases {
		err := c.target.FromStatus("chat", c.status, nil, []byte(c.body))
		if strings.HasPrefix(err.Message, "{") {
			t.Fatalf("%s: the body is not valid JSON: %s", c.name, c.body)
		}
		if got := isToolsRefusal(err); got != c.want {
			t.Errorf("%s: %v (code %s) is a refusal: %v, want %v", c.name, err, err.Code, got, c.want)
		}
	}
	if isToolsRefusal(errors.New("does not support tools")) {
		t.Error("an error that is not an *llm.Error")
	}
	cancelled := &llm.Error{Code: llm.CodeCancelled, Message: "does not support tools", Err: context.Canceled}
	if isToolsRefusal(cancelled) {
		t.Error("a cancelled request")
	}
}
