package norm

import (
	"strings"
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

// feed runs content chunks (and reasoning, marked with a leading \x00)
// through a normalizer and returns its events.
func feed(opts Options, chunks ...string) []llm.Event {
	var got []llm.Event
	n := New(opts, func(ev llm.Event, err error) bool { got = append(got, ev); return true })
	for _, c := range chunks {
		if r, ok := strings.CutPrefix(c, "\x00"); ok {
			n.Reasoning(r)
		} else {
			n.Content(c)
		}
	}
	n.Finish(llm.FinishStop, nil, false)
	return got
}

func TestLoneCloseReclassifies(t *testing.T) {
	tests := []struct {
		name     string
		tools    []string
		chunks   []string
		moved    string // the reclassified event's text ("" for none)
		thinking string
		text     string
		calls    int
	}{
		{"text then a split lone close", nil, []string{"Okay", ", the user.\n", "</thi", "nk>\n\nParis."},
			"Okay, the user.\n", "Okay, the user.\n", "Paris.", 0},
		{"the close in the first chunk", nil, []string{"Hmm.\n</think>\n\n4"}, "", "Hmm.\n", "4", 0},
		{"held by the call extractor", []string{"read_file"}, []string{"I could use <tool_c", "all> maybe.\n</think>Answer"},
			"I could use ", "I could use <tool_call> maybe.\n", "Answer", 0},
		{"a call in the answer after it", []string{"read_file"}, []string{"think.\n</think>\n\n", `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`},
			"", "think.\n", "", 1},
		{"reasoning came apart", nil, []string{"\x00r", "a</think>b"}, "", "r", "a</think>b", 0},
		{"a call came first", []string{"read_file"}, []string{`<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`, "\n</think>ok"},
			"", "", "</think>ok", 1},
		{"shown, not used", nil, []string{"Write `</think>` to close."}, "", "", "Write `</think>` to close.", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			learned := 0
			evs := feed(Options{Tools: tc.tools, OnLoneClose: func() { learned++ }}, tc.chunks...)
			var moved []string
			var thinking, text strings.Builder
			calls := 0
			for i, ev := range evs {
				switch ev.Kind {
				case llm.EventThinkingReclassified:
					moved = append(moved, ev.Text)
					if text.String() != ev.Text || thinking.Len() > 0 {
						t.Errorf("reclassified %q after text %q, thinking %q", ev.Text, text.String(), thinking.String())
					}
					thinking.WriteString(text.String())
					text.Reset()
				case llm.EventThinking:
					thinking.WriteString(ev.Text)
				case llm.EventText:
					text.WriteString(ev.Text)
				case llm.EventToolCall:
					calls++
				case llm.EventDone:
					if i != len(evs)-1 {
						t.Error("done is not last")
					}
				}
			}
			if want := tc.moved; (want == "" && len(moved) > 0) || (want != "" && (len(moved) != 1 || moved[0] != want)) {
				t.Errorf("reclassified %q, want %q", moved, want)
			}
			if thinking.String() != tc.thinking || text.String() != tc.text || calls != tc.calls {
				t.Errorf("thinking %q, text %q, calls %d; want %q, %q, %d", thinking.String(), text.String(), calls, tc.thinking, tc.text, tc.calls)
			}
			closed := tc.thinking != "" && !strings.HasPrefix(tc.chunks[0], "\x00")
			if (learned == 1) != closed || learned > 1 {
				t.Errorf("OnLoneClose called %d times", learned)
			}
			// Collect agrees with the consumer above.
			res, _ := llm.Collect(func(yield func(llm.Event, error) bool) {
				for _, ev := range evs {
					if !yield(ev, nil) {
						return
					}
				}
			})
			if res.Message.Thinking != tc.thinking || res.Message.Content != tc.text {
				t.Errorf("Collect: thinking %q, content %q", res.Message.Thinking, res.Message.Content)
			}
		})
	}
}

func TestImplicitThinkIsNotWatched(t *testing.T) {
	for _, ev := range feed(Options{ImplicitThink: true, OnLoneClose: func() { t.Error("OnLoneClose called") }}, "r\n</think>\n\na") {
		if ev.Kind == llm.EventThinkingReclassified {
			t.Error("an implicit block was reclassified")
		}
	}
}
