package agent

import (
	"context"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/tool"
)

// BenchmarkTurnOverhead measures what the loop adds to a turn beyond the
// model server's time: the same scripted replies are fetched once through
// the agent (events, approvals, validation, tool dispatch, history) and once
// with bare provider calls. The difference of the two, per model call, is the
// loop's overhead.
func BenchmarkTurnOverhead(b *testing.B) {
	srv := llmtest.NewServer()
	defer srv.Close()
	call := llmtest.OllamaStream("m", llmtest.Thinking("look first"), llmtest.Text("Reading."), llmtest.Call("read_file", `{"path":"a.txt"}`))
	answer := llmtest.OllamaStream("m", llmtest.Text("The file says hello."), llmtest.Usage(400, 12))
	p := ollama.New(ollama.Options{BaseURL: srv.URL, Model: "m", NumCtx: 8192, MaxRetries: -1})
	read := tool.MustFunc("read_file", "read", tool.ReadOnly, func(ctx context.Context, a pathArgs) (string, error) {
		return "hello", nil
	})
	reg, _ := tool.NewRegistry(read)
	history := user("what does a.txt say?")
	ctx := context.Background()

	b.Run("bare provider calls", func(b *testing.B) {
		for b.Loop() {
			srv.Enqueue("/api/chat", call, answer)
			req := &llm.Request{Messages: history, Tools: reg.Specs()}
			r1, err := llm.Collect(p.Chat(ctx, req))
			if err != nil {
				b.Fatal(err)
			}
			req.Messages = append(append(req.Messages, r1.Message), llm.Message{Role: llm.RoleTool, Content: "hello", ToolCallID: r1.Message.ToolCalls[0].ID})
			if _, err := llm.Collect(p.Chat(ctx, req)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("agent turn", func(b *testing.B) {
		a := &Agent{Provider: p, Model: "m", Tools: reg, Mode: ModeYolo, System: "be brief"}
		events := 0
		for b.Loop() {
			srv.Enqueue("/api/chat", call, answer)
			res := a.Run(ctx, history, func(Event) { events++ })
			if res.Reason != DoneStop {
				b.Fatal(res.Err)
			}
		}
	})
}
