package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/providers"
)

// exampleServer stands in for a local Ollama that thinks, answers and calls
// a tool.
func exampleServer() *httptest.Server {
	srv := llmtest.NewServer()
	srv.Enqueue("/api/chat", llmtest.OllamaStream("qwen3:4b",
		llmtest.Thinking("The user wants the weather."),
		llmtest.Text("Let me check."),
		llmtest.Call("get_weather", `{"city":"Paris"}`)))
	return srv.Server
}

func Example() {
	srv := exampleServer()
	defer srv.Close()

	p, err := providers.New(providers.Config{Kind: providers.KindOllama, BaseURL: srv.URL, Model: "qwen3:4b"})
	if err != nil {
		log.Fatal(err)
	}
	req := &llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "What's the weather in Paris?"}},
		Tools: []llm.ToolSpec{{Name: "get_weather", Description: "Weather for a city",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}
	for ev, err := range p.Chat(context.Background(), req) {
		if err != nil {
			log.Fatal(err) // an *llm.Error: Code, Retryable, the server's Message, a Hint
		}
		switch ev.Kind {
		case llm.EventThinking:
			fmt.Println("thinking:", ev.Text)
		case llm.EventText:
			fmt.Println("text:", ev.Text)
		case llm.EventToolCall:
			fmt.Println("call:", ev.ToolCall.Name, string(ev.ToolCall.Args))
		case llm.EventDone:
			fmt.Println("done:", ev.Done.Reason)
		}
	}
	// Output:
	// thinking: The user wants the weather.
	// text: Let me check.
	// call: get_weather {"city":"Paris"}
	// done: tool_calls
}
