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
	// From the end: "done" 6 tokens, the result 105 (111), the call 12
	// (123), "read it" 6 (129).
	if cut := cutPoint(msgs, 125); cut != 3 {
		t.Errorf("keep 125: cut %d, want 3 (the call and its result kept together)", cut)
	}
	if cut := cutPoint(msgs, 115); cut != 5 {
		t.Errorf("keep 115: cut %d, want 5 (the call and its result summarised together)", cut)
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
			a := &Agent{Provider: w.new(srv), Model: "m", ContextLength: 1000}
			o := RunOptions{OnCompact: func(cut int, s llm.Message) { compacted = cut },
				OnMessage: func(m llm.Message, partial bool) { got = append(got, string(m.Role)+":"+m.Content) }}
			rec := &recorder{}
			res := a.RunWith(context.Background(), history, o, rec.emit)
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
			want := len(history) - compacted + 1
			if history[compacted].Role == llm.RoleUser {
				want++ // the "(no reply)" between the summary and the next request
			}
			if !strings.HasPrefix(first, SummaryPrefix+"- the user asked") || len(chat.Messages) != want {
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
	a := &Agent{Provider: w.new(srv), Model: "m"}
	o := RunOptions{OnMessage: func(m llm.Message, p bool) { partial = append(partial, p) }}
	a.RunWith(context.Background(), user("go"), o, func(Event) {})
	if len(partial) != 1 || !partial[0] {
		t.Errorf("%v", partial)
	}
}

func TestAlternate(t *testing.T) {
	u := func(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }
	a := func(s string) llm.Message { return llm.Message{Role: llm.RoleAssistant, Content: s} }
	got := alternate([]llm.Message{u("failed turn"), u("summary"), u("next"), a("ok"), u("last")})
	var roles []string
	for _, m := range got {
		roles = append(roles, string(m.Role)[:1])
	}
	if strings.Join(roles, "") != "uauauau" || got[1].Content != noReply {
		t.Errorf("%v", roles)
	}
	in := []llm.Message{u("a"), a("b")}
	if out := alternate(in); &out[0] != &in[0] {
		t.Error("alternating input was copied")
	}
}

func TestSummaryRequestFitsTheWindow(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat", llmtest.OllamaWhole("m", llmtest.Text("- short")))
	huge := strings.Repeat("log line that goes on ", 20000) // ~110k tokens
	a := &Agent{Provider: wires[0].new(srv), Model: "m", ContextLength: 4096}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: huge}, {Role: llm.RoleAssistant, Content: "ok"}, {Role: llm.RoleUser, Content: "next"}}
	if _, _, err := a.Compress(context.Background(), msgs, 100); err != nil {
		t.Fatal(err)
	}
	body := srv.RequestsTo("/api/chat")[0].Body
	if tokens := len(body) / 4; tokens > 4096 {
		t.Errorf("the summary request is ~%d tokens for a 4096-token window", tokens)
	}
}
