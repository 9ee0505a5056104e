package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// transcriptKinds lists the transcript's items after the banner, each with
// its text: what the user reads, in order.
func transcriptKinds(f *fixture) []string {
	var out []string
	for _, e := range f.m.tr.entries {
		switch it := e.it.(type) {
		case *userItem:
			out = append(out, "user "+it.text)
		case *thinkingItem:
			out = append(out, fmt.Sprintf("thinking %q", it.text.String()))
		case *answerItem:
			out = append(out, fmt.Sprintf("answer %q", it.md.Text()))
		case *toolItem:
			out = append(out, "tool "+it.name)
		}
	}
	return out
}

// TestReclassifiedTextBecomesThinking: the answer item the reply's text
// made turns into a thinking item in its place, open for more reasoning
// until the answer, which gets an item of its own.
func TestReclassifiedTextBecomesThinking(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.busyTurn()
	f.events(agent.Event{Type: agent.EventTextDelta, Text: "The user "},
		agent.Event{Type: agent.EventTextDelta, Text: "asks.\n"})
	if got := strings.Join(transcriptKinds(f), " | "); got != `answer "The user asks.\n"` {
		t.Fatalf("before: %s", got)
	}
	f.events(agent.Event{Type: agent.EventThinkingReclassified, Text: "The user asks.\n"})
	th := lastItem[*thinkingItem](t, f.m)
	if th.done || !strings.Contains(f.screen(), "Thinking") || !strings.Contains(f.screen(), "The user asks.") {
		t.Errorf("not live thinking: done=%v\n%s", th.done, f.screen())
	}
	f.events(agent.Event{Type: agent.EventThinkingDelta, Text: "Say hi."},
		agent.Event{Type: agent.EventThinkingEnd},
		agent.Event{Type: agent.EventTextDelta, Text: "Hi."},
		agent.Event{Type: agent.EventDone, DoneReason: agent.DoneStop, Text: "Hi."})
	if got, want := strings.Join(transcriptKinds(f), " | "), `thinking "The user asks.\nSay hi." | answer "Hi."`; got != want {
		t.Errorf("after:\n got %s\nwant %s", got, want)
	}
	if s := f.screen(); !strings.Contains(s, "Thought for") || strings.Contains(s, "The user asks") || !strings.Contains(s, "Hi.") || f.m.lastAnswer != "Hi." {
		t.Errorf("screen (last answer %q):\n%s", f.m.lastAnswer, s)
	}
}

// TestReclassifiedAfterACall: text after a tool call is a new answer item;
// only that one is taken back.
func TestReclassifiedAfterACall(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.busyTurn()
	f.events(agent.Event{Type: agent.EventTextDelta, Text: "Reading it."},
		agent.Event{Type: agent.EventToolCall, ID: "c1", Name: "read_file"},
		agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "read_file", OK: true, Output: "x"},
		agent.Event{Type: agent.EventTextDelta, Text: "It holds x.\n"},
		agent.Event{Type: agent.EventThinkingReclassified, Text: "It holds x.\n"},
		agent.Event{Type: agent.EventThinkingEnd},
		agent.Event{Type: agent.EventTextDelta, Text: "x."})
	if got, want := strings.Join(transcriptKinds(f), " | "), `answer "Reading it." | tool read_file | thinking "It holds x.\n" | answer "x."`; got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// TestLoneCloseTurnFinalState runs a real turn whose reply streams its
// reasoning as text until a lone </think>: the transcript ends as the
// stored session shows it when resumed, reasoning folded, the answer alone.
func TestLoneCloseTurnFinalState(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m",
		llmtest.Text("The user says hello."), llmtest.Text("\n</th"), llmtest.Text("ink>\n\n"), llmtest.Text("Hello! "), llmtest.Text("How can I help?")))
	// Any later model call (the session's title) gets a plain answer.
	f.srv.Always("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Greeting")))
	f.typeText("hello")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	want := `user hello | thinking "The user says hello.\n" | answer "Hello! How can I help?"`
	if got := strings.Join(transcriptKinds(f), " | "); got != want {
		t.Errorf("live:\n got %s\nwant %s", got, want)
	}
	if s := f.screen(); strings.Contains(s, "</think>") || strings.Contains(s, "The user says") || !strings.Contains(s, "Thought for") || f.m.lastAnswer != "Hello! How can I help?" {
		t.Errorf("screen (last answer %q):\n%s", f.m.lastAnswer, s)
	}
	id := f.m.sessionID
	f.slash("/session new")
	f.slash("/session switch " + id)
	if got := strings.Join(transcriptKinds(f), " | "); got != want {
		t.Errorf("resumed:\n got %s\nwant %s", got, want)
	}
}
