package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

func TestCutPointNeverSplitsACallFromItsResult(t *testing.T) {
	big := strings.Repeat("x", 400) // ~100 tokens
	call := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Args: json.RawMessage(`{}`)}}}
	msgs := []llm.Message{
		{Role: llm.RoleUser, Content: big},
		{Role: llm.RoleAssistant, Content: big},
		{Role: llm.RoleUser, Content: "read it"},
		call,
		{Role: llm.RoleTool, ToolCallID: "c", Content: big},
		{Role: llm.RoleAssistant, Content: "done"},
	}
	for keep := 1; keep < 400; keep += 7 {
		cut := cutPoint(msgs, keep)
		if cut > 0 && msgs[cut].Role == llm.RoleTool {
			t.Fatalf("keep %d: cut at a tool result", keep)
		}
	}
	if cut := cutPoint(msgs, 120); cut != 3 {
		t.Errorf("keep 120: cut %d, want 3 (the call and its result kept together)", cut)
	}
	if cut := cutPoint(msgs, 110); cut != 5 {
		t.Errorf("keep 110: cut %d, want 5 (the call and its result summarised together)", cut)
	}
	if cut := cutPoint(msgs[:1], 10); cut != 0 {
		t.Errorf("one message: cut %d", cut)
	}
}

func TestRunCrossesTheCompressionThreshold(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.New(t)
			big := strings.Repeat("old detail ", 60) // ~165 tokens each
			var history []llm.Message
			for i := range 6 {
				history = append(history, llm.Message{Role: llm.RoleUser, Content: big}, llm.Message{Role: llm.RoleAssistant, Content: big})
				_ = i
			}
			history = append(history, llm.Message{Role: llm.RoleUser, Content: "and now?"})
			summary := llmtest.OpenAIWhole("m", llmtest.Text("- the user asked about old details"))
			if w.name == "ollama" {
				summary = llmtest.OllamaWhole("m", llmtest.Text("- the user asked about old details"))
			}
			srv.Enqueue(w.path, summary, w.stream("m", llmtest.Text("Now this.")))
			var compacted int
			var got []string
			a := &Agent{Provider: w.new(srv), Model: "m", ContextLength: 1000,
				OnCompact: func(cut int, s llm.Message) { compacted = cut },
				OnMessage: func(m llm.Message, partial bool) { got = append(got, string(m.Role)+":"+m.Content) }}
			rec := &recorder{}
			res := a.Run(context.Background(), history, rec.emit)
			if res.Reason != DoneStop || res.Text != "Now this." {
				t.Fatalf("%+v", res)
			}
			if compacted == 0 || !strings.Contains(rec.types(), "compressed") {
				t.Fatalf("no compression: cut %d, events %s", compacted, rec.types())
			}
			if strings.Join(got, "|") != "assistant:Now this." {
				t.Errorf("OnMessage got %v", got)
			}
			reqs := srv.RequestsTo(w.path)
			var sum, chat struct {
				Stream   bool             `json:"stream"`
				Tools    []any            `json:"tools"`
				Messages []map[string]any `json:"messages"`
			}
			reqs[0].JSON(t, &sum)
			reqs[1].JSON(t, &chat)
			if sum.Stream || len(sum.Tools) != 0 || !strings.Contains(sum.Messages[0]["content"].(string), "Summarise") {
				t.Errorf("summary request: %+v", sum)
			}
			first := chat.Messages[0]["content"].(string)
			if !strings.HasPrefix(first, SummaryPrefix+"- the user asked") || len(chat.Messages) != len(history)-compacted+1 {
				t.Errorf("chat after compression starts %q with %d messages (cut %d)", first, len(chat.Messages), compacted)
			}
			if last := chat.Messages[len(chat.Messages)-1]["content"]; last != "and now?" {
				t.Errorf("the user's question was lost: %v", last)
			}
		})
	}
}

func TestOnMessageSeesPartialReplies(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Text("half an ans"), llmtest.Cut()))
	var partial []bool
	a := &Agent{Provider: w.new(srv), Model: "m", OnMessage: func(m llm.Message, p bool) { partial = append(partial, p) }}
	a.Run(context.Background(), user("go"), func(Event) {})
	if len(partial) != 1 || !partial[0] {
		t.Errorf("%v", partial)
	}
}
