package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// loneThink is a reply whose chat template opened <think> in the prompt, as
// a server without a reasoning parser streams it: reasoning as content, a
// lone </think> (here cut across two chunks), then the rest.
func loneThink(reasoning string, rest ...llmtest.Part) []llmtest.Part {
	parts := []llmtest.Part{llmtest.Text(reasoning[:len(reasoning)/2]), llmtest.Text(reasoning[len(reasoning)/2:] + "\n</thi"), llmtest.Text("nk>\n\n")}
	return append(parts, rest...)
}

// TestLoneCloseMovesTheTextToThinking: the first reply of a run streams its
// reasoning as text, then a lone </think> and a call; the second (the
// provider now knows) reasons from its first byte, then answers. The answer,
// the stored messages and done hold the answer only; the event stream says
// what was reclassified, right after the text it takes back.
func TestLoneCloseMovesTheTextToThinking(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			var log []string
			srv := llmtest.New(t)
			srv.Enqueue(w.path,
				w.stream("m", loneThink("I should read a.txt.", llmtest.Call("read_file", `{"path":"a.txt"}`))...),
				w.stream("m", loneThink("It holds content.", llmtest.Text("It says "), llmtest.Text("content."))...))
			var rec recorder
			var stored []llm.Message
			a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
			res := a.RunWith(context.Background(), user("what is in a.txt?"), RunOptions{
				OnMessage: func(m llm.Message, partial bool) { stored = append(stored, m) },
			}, rec.emit)

			if res.Reason != DoneStop || res.Text != "It says content." {
				t.Fatalf("reason %s, text %q", res.Reason, res.Text)
			}
			if done := rec.events[len(rec.events)-1]; done.Type != EventDone || done.Text != "It says content." {
				t.Errorf("done = %+v", done)
			}
			if len(stored) != 3 {
				t.Fatalf("stored %d messages", len(stored))
			}
			first, last := stored[0], stored[2]
			if first.Content != "" || first.Thinking != "I should read a.txt.\n" || len(first.ToolCalls) != 1 {
				t.Errorf("first reply stored as content %q, thinking %q, %d calls", first.Content, first.Thinking, len(first.ToolCalls))
			}
			if last.Content != "It says content." || last.Thinking != "It holds content.\n" {
				t.Errorf("answer stored as content %q, thinking %q", last.Content, last.Thinking)
			}
			if want := "text_delta thinking_reclassified thinking_end tool_call usage tool_result " +
				"thinking_start thinking_delta thinking_end text_delta usage done"; rec.types() != want {
				t.Errorf("events:\n got %s\nwant %s", rec.types(), want)
			}
			// The event takes back exactly the text_delta events before it.
			var text strings.Builder
			for _, ev := range rec.events {
				switch ev.Type {
				case EventTextDelta:
					text.WriteString(ev.Text)
				case EventThinkingReclassified:
					if ev.Text != "I should read a.txt.\n" || text.String() != ev.Text {
						t.Errorf("reclassified %q after the text %q", ev.Text, text.String())
					}
					text.Reset()
				case EventToolResult:
					text.Reset()
				}
			}
		})
	}
}

// TestLoneCloseInAFailedReply: the reply breaks off after the answer began;
// what is kept is the reasoning as thinking and the partial answer.
func TestLoneCloseInAFailedReply(t *testing.T) {
	for _, w := range wires {
		srv := llmtest.New(t)
		srv.Enqueue(w.path, w.stream("m", loneThink("Hmm, 2+2.", llmtest.Text("It is"), llmtest.Cut())...))
		var stored []llm.Message
		var rec recorder
		res := (&Agent{Provider: w.new(srv), Model: "m"}).RunWith(context.Background(), user("2+2?"), RunOptions{
			OnMessage: func(m llm.Message, partial bool) {
				if !partial {
					t.Errorf("%s: not marked partial", w.name)
				}
				stored = append(stored, m)
			},
		}, rec.emit)
		if res.Reason != DoneError || len(stored) != 1 || stored[0].Content != "It is" || stored[0].Thinking != "Hmm, 2+2.\n" {
			t.Errorf("%s: reason %s, stored %+v", w.name, res.Reason, stored)
		}
		if done := rec.events[len(rec.events)-1]; done.Text != "It is" {
			t.Errorf("%s: done.text %q", w.name, done.Text)
		}
	}
}

func TestThinkingReclassifiedJSON(t *testing.T) {
	b, err := json.Marshal(Event{Type: EventThinkingReclassified, Text: "The user asks.\n"})
	if want := `{"type":"thinking_reclassified","text":"The user asks.\n"}`; err != nil || string(b) != want {
		t.Errorf("got %s, want %s (%v)", b, want, err)
	}
	// Nested under a sub-agent's call, it is one of the events a plain UI
	// need not show in a line, like the deltas it corrects.
	if s := renderEvent(Event{Type: EventThinkingReclassified, Text: "x"}); s != "" {
		t.Errorf("rendered as %q", s)
	}
}

// TestLoneCloseInASubAgent: a sub-agent's reply reclassified comes nested
// under the calling call, renders no line, and its answer alone is the
// call's result.
func TestLoneCloseInASubAgent(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{})
	srv.Enqueue("/api/chat",
		stream(llmtest.CallID("p1", "probe", `{"task":"say hi"}`)),
		// the child (its template opens <think>, as the parent's does:
		// one model)
		stream(loneThink("The user wants a greeting.", llmtest.Text("Hi."))...),
		// the parent again, read as implicit from the start now
		stream(loneThink("The probe said hi.", llmtest.Text("It says hi."))...),
	)
	rec := &recorder{}
	res := a.Run(context.Background(), user("ask the probe"), rec.emit)
	if res.Reason != DoneStop || res.Text != "It says hi." {
		t.Fatalf("reason %s, text %q", res.Reason, res.Text)
	}
	if r := rec.results(); len(r) != 1 || r[0].Output != "Hi." {
		t.Fatalf("the call's result: %+v", r)
	}
	var seen bool
	for _, e := range rec.events {
		if e.Type == EventThinkingReclassified {
			t.Errorf("the parent's reply was reclassified: %q", e.Text)
		}
		if e.Type != EventToolOutput || e.Nested.Type != EventThinkingReclassified {
			continue
		}
		seen = true
		b, _ := json.Marshal(e)
		if e.Text != "" || e.Nested.Text != "The user wants a greeting.\n" ||
			!strings.Contains(string(b), `"event":{"type":"thinking_reclassified","text":"The user wants a greeting.\n"}`) {
			t.Errorf("nested: %s", b)
		}
	}
	if !seen {
		t.Error("no nested thinking_reclassified")
	}
}

// TestUnclosedImplicitBlockIsTheAnswer: once a lone </think> taught the
// provider that the model's template opens the block, a reply that never
// closes it is streamed as reasoning and then given again as the answer
// (the model did not think): the result and the stored reply hold it as the
// answer only, not twice.
func TestUnclosedImplicitBlockIsTheAnswer(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(w.path,
				w.stream("m", loneThink("Easy.", llmtest.Text("Hi."))...),
				w.stream("m", llmtest.Text("Just "), llmtest.Text("this.")))
			a := &Agent{Provider: w.new(srv), Model: "m"}
			if res := a.Run(context.Background(), user("hi"), func(Event) {}); res.Text != "Hi." {
				t.Fatalf("first reply %q", res.Text)
			}
			var stored []llm.Message
			res := a.RunWith(context.Background(), user("again"), RunOptions{
				OnMessage: func(m llm.Message, partial bool) { stored = append(stored, m) },
			}, func(Event) {})
			if res.Text != "Just this." || len(stored) != 1 || stored[0].Content != "Just this." || stored[0].Thinking != "" {
				t.Fatalf("text %q, stored %+v", res.Text, stored)
			}
		})
	}
}
