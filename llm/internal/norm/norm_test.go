package norm

import (
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

func TestFinish(t *testing.T) {
	tests := []struct {
		name   string
		server string
		calls  int
		want   llm.FinishReason
	}{
		{"stop", "stop", 0, llm.FinishStop},
		{"Ollama says stop after calls", "stop", 1, llm.FinishToolCalls},
		{"tool_calls without calls", "tool_calls", 0, llm.FinishStop},
		{"length with a call stays length", "length", 1, llm.FinishLength},
		{"max_tokens", "max_tokens", 0, llm.FinishLength},
		{"none given", "", 0, llm.FinishStop},
		{"unknown", "content_filter", 0, llm.FinishStop},
	}
	for _, tc := range tests {
		var got []llm.Event
		n := New(Options{}, func(ev llm.Event, err error) bool { got = append(got, ev); return true })
		for range tc.calls {
			n.ToolCall(llm.ToolCall{Name: "f"})
		}
		n.Finish(FinishReason(tc.server), &llm.Usage{InputTokens: 1}, false)
		last := got[len(got)-1]
		if last.Kind != llm.EventDone || last.Done.Reason != tc.want {
			t.Errorf("%s: %+v", tc.name, last.Done)
		}
		if got[len(got)-2].Kind != llm.EventUsage {
			t.Errorf("%s: usage must come just before done", tc.name)
		}
	}
}

func TestStopsYieldingWhenConsumerStops(t *testing.T) {
	calls := 0
	n := New(Options{}, func(llm.Event, error) bool { calls++; return false })
	if n.Content("a") || n.Content("b") || n.Finish(llm.FinishStop, nil, false) {
		t.Error("kept going after the consumer stopped")
	}
	if calls != 1 || !n.Stopped() || !n.Emitted() {
		t.Errorf("yielded %d times", calls)
	}
}

func TestCallsGetIDsAndArgs(t *testing.T) {
	var tc *llm.ToolCall
	n := New(Options{}, func(ev llm.Event, err error) bool {
		if ev.Kind == llm.EventToolCall {
			tc = ev.ToolCall
		}
		return true
	})
	n.ToolCall(llm.ToolCall{Name: "f"})
	if tc == nil || tc.ID == "" || string(tc.Args) != "{}" {
		t.Errorf("call = %+v", tc)
	}
}

func TestDuplicateCallIDsAreReplaced(t *testing.T) {
	var ids []string
	n := New(Options{}, func(ev llm.Event, err error) bool {
		if ev.Kind == llm.EventToolCall {
			ids = append(ids, ev.ToolCall.ID)
		}
		return true
	})
	n.ToolCall(llm.ToolCall{ID: "call_0", Name: "a"})
	n.ToolCall(llm.ToolCall{ID: "call_0", Name: "b"})
	if len(ids) != 2 || ids[0] != "call_0" || ids[1] == "call_0" || ids[1] == "" {
		t.Errorf("%v", ids)
	}
}
