package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestTurnStreamsThinkingReclassified: a reply that streams its reasoning
// as text until a lone </think> reaches the SSE stream with the event that
// takes the text back, done.text and the stored message hold the answer
// only, and a client following the turn later gets the same events.
func TestTurnStreamsThinkingReclassified(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m",
		llmtest.Text("The user greets me."), llmtest.Text("\n</th"), llmtest.Text("ink>\n\n"), llmtest.Text("Hello!"), llmtest.Usage(90, 12)))
	st := f.turn(id, map[string]any{"message": "hi"})
	turnID := st.resp.Header.Get("Hearth-Turn-Id")
	frs := st.rest()
	want := []string{"session", "text_delta", "text_delta", "thinking_reclassified", "thinking_end", "text_delta", "usage", "done"}
	if !slices.Equal(types(frs), want) {
		t.Fatalf("events %v\nwant   %v", types(frs), want)
	}
	if got := frs[3].Data; got != `{"type":"thinking_reclassified","text":"The user greets me.\n"}` {
		t.Errorf("reclassified: %s", got)
	}
	if got := frs[7].Data; got != `{"type":"done","reason":"stop","text":"Hello!"}` {
		t.Errorf("done: %s", got)
	}
	var d sessionDetail
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if len(d.Messages) != 2 || d.Messages[1].Content != "Hello!" || d.Messages[1].Thinking != "The user greets me.\n" {
		t.Errorf("stored: %+v", d.Messages)
	}
	// Reconnecting from the first event replays the correction too.
	again := f.follow(id, turnID+".1").rest()
	if got := strings.Join(types(again), " "); got != strings.Join(want[1:], " ") {
		t.Errorf("replayed: %s", got)
	}
}
