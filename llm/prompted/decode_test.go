package prompted

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

var offered = []llm.ToolSpec{readFile, getWeather}

// item is an inner stream's event, or its error.
type item struct {
	ev  llm.Event
	err error
}

func fromItems(items []item) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		for _, it := range items {
			if !yield(it.ev, it.err) {
				return
			}
		}
	}
}

func textEv(s string) item  { return item{ev: llm.Event{Kind: llm.EventText, Text: s}} }
func thinkEv(s string) item { return item{ev: llm.Event{Kind: llm.EventThinking, Text: s}} }
func doneEv(r llm.FinishReason) item {
	return item{ev: llm.Event{Kind: llm.EventDone, Done: &llm.Done{Reason: r}}}
}
func usageEv() item {
	return item{ev: llm.Event{Kind: llm.EventUsage, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4}}}
}

// got is what Decode yielded, made comparable: consecutive text and
// thinking joined, calls without their random ids.
type got struct {
	Kinds    []string
	Text     string
	Thinking string
	Calls    []string // name args [error]
	Reason   llm.FinishReason
	Err      error
}

func decode(t *testing.T, items []item) got {
	t.Helper()
	var g got
	for ev, err := range Decode(offered, fromItems(items)) {
		if err != nil {
			g.Err = err
			g.Kinds = append(g.Kinds, "error")
			break
		}
		k := ev.Kind.String()
		if n := len(g.Kinds); (ev.Kind == llm.EventText || ev.Kind == llm.EventThinking) && n > 0 && g.Kinds[n-1] == k {
			// joined
		} else {
			g.Kinds = append(g.Kinds, k)
		}
		switch ev.Kind {
		case llm.EventText:
			if ev.Text == "" {
				t.Fatal("an empty text event")
			}
			g.Text += ev.Text
		case llm.EventThinking:
			g.Thinking += ev.Text
		case llm.EventThinkingReclassified:
			g.Thinking += g.Text
			g.Text = ""
		case llm.EventToolCall:
			tc := ev.ToolCall
			if !tc.FromText || !strings.HasPrefix(tc.ID, "call_") || !json.Valid(tc.Args) {
				t.Fatalf("call %+v: not FromText, no fresh id, or args not JSON", tc)
			}
			c := tc.Name + " " + string(tc.Args)
			if tc.ArgsError != "" {
				c += " ! " + tc.ArgsError
			}
			g.Calls = append(g.Calls, c)
		case llm.EventDone:
			g.Reason = ev.Done.Reason
		}
	}
	return g
}

// chunked sends s as text events cut at the given offsets.
func chunked(s string, cuts ...int) []item {
	var out []item
	prev := 0
	for _, c := range cuts {
		if c > prev && c < len(s) {
			out = append(out, textEv(s[prev:c]))
			prev = c
		}
	}
	return append(out, textEv(s[prev:]))
}

func TestDecodeEverySplit(t *testing.T) {
	readA := `read_file {"path": "a.txt"}`
	badForm := `write exactly <tool_call>{"name": "read_file", "arguments": {"path": "…"}}</tool_call>`
	cases := []struct {
		name, in string
		text     string
		calls    []string
		reason   llm.FinishReason
	}{
		{"plain", "Just an answer.", "Just an answer.", nil, llm.FinishStop},
		{"one call", `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`, "", []string{readA}, llm.FinishToolCalls},
		{"text around calls", "I will look.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>\n" +
			"<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>\nWaiting.",
			"I will look.\nWaiting.", []string{readA, `get_weather {"city": "Oslo"}`}, llm.FinishToolCalls},
		{"missing closing tag at the end", "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n", "", []string{readA}, llm.FinishToolCalls},
		{"invalid JSON", `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt</tool_call>`, "",
			[]string{`read_file {} ! your tool call could not be read (invalid JSON): ` + badForm}, llm.FinishToolCalls},
		{"prose in the tags", `<tool_call>read a.txt please</tool_call>`, "",
			[]string{` {} ! your tool call could not be read (invalid JSON): ` + badForm}, llm.FinishToolCalls},
		{"no name", `<tool_call>{"arguments": {"path": "a.txt"}}</tool_call>`, "",
			[]string{` {} ! your tool call could not be read (it has no "name"): ` + badForm}, llm.FinishToolCalls},
		{"unknown tool", `<tool_call>{"name": "cat", "arguments": {"path": "a.txt"}}</tool_call>`, "",
			[]string{`cat {} ! there is no tool "cat"; the tools are read_file, get_weather: ` + badForm}, llm.FinishToolCalls},
		{"a missing brace is repaired", `<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}</tool_call>`, "",
			[]string{`get_weather {"city": "Oslo"}`}, llm.FinishToolCalls},
		{"fenced call", "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```", "", []string{readA}, llm.FinishToolCalls},
		{"mistral", `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.txt"}}]`, "", []string{readA}, llm.FinishToolCalls},
		{"bare", `{"name": "read_file", "arguments": {"path": "a.txt"}}`, "", []string{readA}, llm.FinishToolCalls},
		{"json that is not a call", "```json\n{\"a\": 1}\n```", "```json\n{\"a\": 1}\n```", nil, llm.FinishStop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var wantCalls []string
			for _, cl := range c.calls {
				// Args come out compact.
				name, rest, _ := strings.Cut(cl, " ")
				args, errText, _ := strings.Cut(rest, " ! ")
				var v any
				json.Unmarshal([]byte(args), &v)
				b, _ := json.Marshal(v)
				s := name + " " + string(b)
				if errText != "" {
					s += " ! " + errText
				}
				wantCalls = append(wantCalls, s)
			}
			for i := 0; i <= len(c.in); i++ {
				for j := i; j <= len(c.in); j += 5 {
					g := decode(t, append(chunked(c.in, i, j), usageEv(), doneEv(llm.FinishStop)))
					for k := range g.Calls {
						name, rest, _ := strings.Cut(g.Calls[k], " ")
						args, errText, _ := strings.Cut(rest, " ! ")
						var v any
						json.Unmarshal([]byte(args), &v)
						b, _ := json.Marshal(v)
						g.Calls[k] = name + " " + string(b)
						if errText != "" {
							g.Calls[k] += " ! " + errText
						}
					}
					if g.Text != c.text || !reflect.DeepEqual(g.Calls, wantCalls) || g.Reason != c.reason || g.Err != nil {
						t.Fatalf("split at %d,%d: text %q, calls %q, reason %s, err %v;\nwant %q, %q, %s", i, j, g.Text, g.Calls, g.Reason, g.Err, c.text, wantCalls, c.reason)
					}
					if n := len(g.Kinds); n < 2 || g.Kinds[n-2] != "usage" || g.Kinds[n-1] != "done" {
						t.Fatalf("split at %d,%d: the stream does not end with usage and done: %v", i, j, g.Kinds)
					}
				}
			}
		})
	}
}

func TestDecodeThinkingPassesThrough(t *testing.T) {
	g := decode(t, []item{thinkEv("Let me "), thinkEv("think."), textEv("<tool_call>{\"name\": \"read_file\", "),
		textEv("\"arguments\": {\"path\": \"a\"}}</tool_call>"), doneEv(llm.FinishStop)})
	want := []string{"thinking", "tool_call", "done"}
	if !reflect.DeepEqual(g.Kinds, want) || g.Thinking != "Let me think." || len(g.Calls) != 1 {
		t.Fatalf("got %+v", g)
	}
}

func TestDecodeStreamErrorMidCallGivesText(t *testing.T) {
	boom := &llm.Error{Code: llm.CodeServer, Message: "boom"}
	g := decode(t, []item{textEv("Reading.\n<tool_call>{\"name\": \"read_file\", "), textEv("\"arguments\": {\"path\": \"a\"}}"), {err: boom}})
	if len(g.Calls) != 0 || g.Text != "Reading.\n<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}" || !errors.Is(g.Err, boom) {
		t.Fatalf("got %+v", g)
	}
	if g.Kinds[len(g.Kinds)-1] != "error" {
		t.Fatalf("kinds %v", g.Kinds)
	}
}

func TestDecodeLengthCutCallIsText(t *testing.T) {
	g := decode(t, []item{textEv("<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}"), doneEv(llm.FinishLength)})
	if len(g.Calls) != 0 || g.Reason != llm.FinishLength || !strings.HasPrefix(g.Text, "<tool_call>") {
		t.Fatalf("got %+v", g)
	}
}

func TestDecodeReclassifiedTakesWhatIsHeld(t *testing.T) {
	// The provider found a lone </think>: the text so far was reasoning,
	// the partial marker held back included.
	g := decode(t, []item{textEv("I should read <tool_c"), {ev: llm.Event{Kind: llm.EventThinkingReclassified, Text: "I should read <tool_c"}},
		textEv(`<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`), doneEv(llm.FinishStop)})
	if g.Thinking != "I should read <tool_c" || g.Text != "" || len(g.Calls) != 1 {
		t.Fatalf("got %+v", g)
	}
	// After a call, the text stays the answer.
	g = decode(t, []item{textEv(`Hm. <tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`),
		{ev: llm.Event{Kind: llm.EventThinkingReclassified, Text: "x"}}, textEv("more"), doneEv(llm.FinishStop)})
	if g.Thinking != "" || g.Text != "Hm. more" || len(g.Calls) != 1 {
		t.Fatalf("got %+v", g)
	}
}

func TestDecodeWithoutToolsPassesTextOn(t *testing.T) {
	in := `<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`
	var text string
	var reason llm.FinishReason
	for ev, err := range Decode(nil, fromItems([]item{textEv(in), doneEv(llm.FinishStop)})) {
		if err != nil {
			t.Fatal(err)
		}
		text += ev.Text
		if ev.Done != nil {
			reason = ev.Done.Reason
		}
	}
	if text != in || reason != llm.FinishStop {
		t.Fatalf("text %q, reason %s", text, reason)
	}
}

func TestDecodeConsumerStops(t *testing.T) {
	in := []item{textEv("a "), textEv(`<tool_call>{"name": "read_file", "arguments": {}}</tool_call>`), textEv("b"), doneEv(llm.FinishStop)}
	for stopAt := 1; stopAt <= 3; stopAt++ {
		n := 0
		for range Decode(offered, fromItems(in)) {
			n++
			if n == stopAt {
				break
			}
		}
		if n != stopAt {
			t.Fatalf("stopAt %d: %d events", stopAt, n)
		}
	}
}

func TestCorrectionListsAtMostSomeTools(t *testing.T) {
	var tools []llm.ToolSpec
	for i := range 30 {
		tools = append(tools, llm.ToolSpec{Name: fmt.Sprintf("t%d", i)})
	}
	g := got{}
	for ev := range Decode(tools, fromItems([]item{textEv(`<tool_call>{"name": "x"}</tool_call>`), doneEv(llm.FinishStop)})) {
		if ev.ToolCall != nil {
			g.Calls = append(g.Calls, ev.ToolCall.ArgsError)
		}
	}
	if len(g.Calls) != 1 || !strings.Contains(g.Calls[0], "t19, …:") || strings.Contains(g.Calls[0], "t20") {
		t.Fatalf("got %q", g.Calls)
	}
}
