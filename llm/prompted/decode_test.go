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
	// A call before the lone </think> was written while reasoning: it is
	// reasoning too, never run.
	g = decode(t, []item{textEv(`Hm. <tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`),
		{ev: llm.Event{Kind: llm.EventThinkingReclassified, Text: "x"}}, textEv("more"), doneEv(llm.FinishStop)})
	if g.Thinking != `Hm. <tool_call>{"name": "read_file", "arguments": {"path":"a"}}</tool_call>` || g.Text != "more" || len(g.Calls) != 0 || g.Reason != llm.FinishStop {
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

// calls writes n calls of read_file, each in its own tag.
func calls(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"%d\"}}</tool_call>\n", i)
	}
	return b.String()
}

func TestDecodeCapsTheCallsOfAReply(t *testing.T) {
	tooManyCall := " {} ! " + tooMany
	cases := []struct {
		name string
		in   string
		want int // calls yielded, tooMany's included
		last string
	}{
		{"at the limit", calls(maxCalls), maxCalls, `read_file {"path": "31"}`},
		{"past the limit", calls(100), maxCalls + 1, tooManyCall},
		{"malformed calls", strings.Repeat("<tool_call>cat a.txt</tool_call>\n", 100), maxCalls + 1, tooManyCall},
		{"a list of objects in one tag", "<tool_call>[" + strings.TrimSuffix(strings.Repeat(`{"name": "read_file", "arguments": {}},`, 50), ",") + "]</tool_call>",
			maxCalls + 1, tooManyCall},
		// Review 19, item 1: a list holding anything but objects is one
		// malformed call, not one per element.
		{"a list of numbers in one tag", "<tool_call>[" + strings.TrimSuffix(strings.Repeat("1,", 20000), ",") + "]</tool_call>", 1,
			` {} ! your tool call could not be read (invalid JSON): write exactly <tool_call>{"name": "read_file", "arguments": {"path": "…"}}</tool_call>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, items := range [][]item{{textEv(c.in + "Done."), doneEv(llm.FinishStop)}, append(chunked(c.in+"Done.", splitEvery(len(c.in)+5, 7)...), doneEv(llm.FinishStop))} {
				g := decode(t, items)
				if len(g.Calls) != c.want || g.Calls[len(g.Calls)-1] != c.last || g.Reason != llm.FinishToolCalls || g.Text != "Done." {
					t.Fatalf("%d calls, the last %q, reason %s, text %q", len(g.Calls), g.Calls[len(g.Calls)-1], g.Reason, g.Text)
				}
			}
		})
	}
}

// splitEvery returns the offsets 0, step, 2*step, … below n.
func splitEvery(n, step int) []int {
	var out []int
	for i := step; i < n; i += step {
		out = append(out, i)
	}
	return out
}

// tracked is a stream of items that records how far it was read and whether
// its reader stopped (which, for a provider, closes the request).
type tracked struct {
	items   []item
	read    int
	stopped bool
}

func (s *tracked) stream(yield func(llm.Event, error) bool) {
	for _, it := range s.items {
		s.read++
		if !yield(it.ev, it.err) {
			s.stopped = true
			return
		}
	}
}

func TestDecodeEndsTheReplyAtAToolResponse(t *testing.T) {
	readA := `read_file {"path": "a"}`
	result := "<tool_response name=\"read_file\">\nhello\n</tool_response>\nThe file says hello."
	cases := []struct {
		name     string
		tools    []llm.ToolSpec
		before   []item // what comes before the model writes a result
		text     string
		thinking string
		calls    []string
		reason   llm.FinishReason
	}{
		{"after a call", offered, []item{textEv("Reading.\n"), textEv(`<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`), textEv("\n")},
			"Reading.\n", "", []string{readA}, llm.FinishToolCalls},
		{"without a call", offered, []item{textEv("I think ")}, "I think ", "", nil, llm.FinishStop},
		{"without tools", nil, []item{textEv("A <tool_call>{}</tool_call> ")}, "A <tool_call>{}</tool_call> ", "", nil, llm.FinishStop},
		// Reasoning is never cut, nor a call's argument.
		{"in reasoning", offered, []item{thinkEv("I must not write <tool_response> myself. "), thinkEv("<tool_response")},
			"", "I must not write <tool_response> myself. <tool_response", nil, llm.FinishStop},
		{"in an argument", offered, []item{textEv(`<tool_call>{"name": "read_file", "arguments": {"path": "<tool_response.txt"}}</tool_call>`), textEv("Then ")},
			"Then ", "", []string{`read_file {"path": "<tool_response.txt"}`}, llm.FinishToolCalls},
	}
	for _, c := range cases {
		for _, split := range []bool{false, true} {
			var items []item
			items = append(items, c.before...)
			if split {
				for i := range result {
					items = append(items, textEv(result[i:i+1]))
				}
			} else {
				items = append(items, textEv(result))
			}
			items = append(items, textEv("More text."), usageEv(), doneEv(llm.FinishStop))
			s := &tracked{items: items}
			var g got
			for ev, err := range Decode(c.tools, s.stream) {
				if err != nil {
					t.Fatal(err)
				}
				g.Kinds = append(g.Kinds, ev.Kind.String())
				switch ev.Kind {
				case llm.EventText:
					g.Text += ev.Text
				case llm.EventThinking:
					g.Thinking += ev.Text
				case llm.EventToolCall:
					g.Calls = append(g.Calls, ev.ToolCall.Name+" "+string(ev.ToolCall.Args))
				case llm.EventDone:
					g.Reason = ev.Done.Reason
				}
			}
			// The stream is not read past the start of the result.
			wantRead := len(c.before) + 1
			if split {
				wantRead = len(c.before) + len("<tool_response")
			}
			if g.Text != c.text || g.Thinking != c.thinking || !reflect.DeepEqual(g.Calls, c.calls) || g.Reason != c.reason ||
				g.Kinds[len(g.Kinds)-1] != "done" || s.read != wantRead || !s.stopped {
				t.Errorf("%s (split %v): %+v; read %d items (want %d), stopped %v", c.name, split, g, s.read, wantRead, s.stopped)
			}
		}
	}
}

func TestDecodeHoldsCallsWhileTheReplyMayBeReasoning(t *testing.T) {
	reclassified := item{ev: llm.Event{Kind: llm.EventThinkingReclassified, Text: "(the provider's)"}}
	call := `<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`
	bad := `<tool_call>{"name": "cat"}</tool_call>`
	readA := `read_file {"path": "a"}`

	// Reasoning streamed as text, with calls in it, then a lone </think>.
	var items []item
	for _, tok := range []string{"The user wants a. Maybe ", call, "? Or ", bad, "? No."} {
		items = append(items, chunked(tok, 3, 9)...)
	}
	items = append(items, reclassified, textEv("It says "), textEv(call), doneEv(llm.FinishStop))
	g := decode(t, items)
	if g.Thinking != `The user wants a. Maybe <tool_call>{"name": "read_file", "arguments": {"path":"a"}}</tool_call>? Or `+bad+`? No.` ||
		g.Text != "It says " || len(g.Calls) != 1 || g.Calls[0] != readA || g.Reason != llm.FinishToolCalls {
		t.Fatalf("got %+v", g)
	}
	// Nothing but the answer before the lone </think> was yielded as text.
	if want := []string{"text", "thinking_reclassified", "thinking", "text", "tool_call", "done"}; !reflect.DeepEqual(g.Kinds, want) {
		t.Fatalf("kinds %v", g.Kinds)
	}

	// No lone </think>: the calls come at the end of the reply, the text
	// in order around them.
	g = decode(t, []item{textEv("A "), textEv(call), textEv(" B "), textEv(bad), textEv(" C"), usageEv(), doneEv(llm.FinishStop)})
	if want := []string{"text", "tool_call", "text", "tool_call", "text", "usage", "done"}; !reflect.DeepEqual(g.Kinds, want) || g.Text != "A B C" || len(g.Calls) != 2 {
		t.Fatalf("got %+v", g)
	}

	// Reasoning that came apart: the text cannot become reasoning, calls
	// are not held.
	var kinds []string
	for ev := range Decode(offered, fromItems([]item{thinkEv("hm"), textEv(call), textEv("x"), doneEv(llm.FinishStop)})) {
		kinds = append(kinds, ev.Kind.String())
	}
	if want := []string{"thinking", "tool_call", "text", "done"}; !reflect.DeepEqual(kinds, want) {
		t.Fatalf("kinds %v", kinds)
	}
	// Nor when the server parsed a call.
	native := item{ev: llm.Event{Kind: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: "call_1", Name: "get_weather", Args: []byte(`{}`), FromText: true}}}
	g = decode(t, []item{textEv(call), native, reclassified, textEv("y"), doneEv(llm.FinishStop)})
	if want := []string{"tool_call", "tool_call", "text", "done"}; !reflect.DeepEqual(g.Kinds, want) || g.Thinking != "" {
		t.Fatalf("got %+v", g)
	}

	// A failed stream: the calls held come out before the error, as
	// before; what the parser held is text.
	boom := &llm.Error{Code: llm.CodeServer, Message: "boom"}
	g = decode(t, []item{textEv(call), textEv("<tool_call>{\"name\""), {err: boom}})
	if want := []string{"tool_call", "text", "error"}; !reflect.DeepEqual(g.Kinds, want) || g.Text != "<tool_call>{\"name\"" {
		t.Fatalf("got %+v", g)
	}

	// Calls past the limit in reasoning do not count once it is reasoning.
	g = decode(t, []item{textEv(calls(40)), reclassified, textEv(call), doneEv(llm.FinishStop)})
	if len(g.Calls) != 1 || g.Calls[0] != readA || !strings.Contains(g.Thinking, `"path":"39"`) {
		t.Fatalf("got %d calls %q", len(g.Calls), g.Calls)
	}
}

// TestDecodeCallAfterAFence: a <tool_call> wrapped in a fence, or written
// after a code block, is a call, token by token and in one chunk (review
// 19, item 3).
func TestDecodeCallAfterAFence(t *testing.T) {
	call := `{"name": "read_file", "arguments": {"path": "a"}}`
	cases := []struct {
		name   string
		tokens []string
		text   string
	}{
		{"in a bare fence", []string{"```", "\n", "<tool_call>", call, "</tool_call>", "\n", "```"}, "```\n```"},
		{"in a json fence", []string{"```json", "\n", "<tool_call>", call, "</tool_call>", "\n", "```"}, "```json\n```"},
		{"after a code block", []string{"Run:\n", "```bash", "\n", "ls", "\n", "```", "\n", "<tool_call>", call, "</tool_call>"}, "Run:\n```bash\nls\n```\n"},
		{"fenced, after a code block", []string{"```bash\nls\n```\n", "```json\n", call, "\n```\n"}, "```bash\nls\n```\n"},
	}
	for _, c := range cases {
		var tokens []item
		for _, tok := range c.tokens {
			tokens = append(tokens, textEv(tok))
		}
		one := []item{textEv(strings.Join(c.tokens, ""))}
		for _, items := range [][]item{tokens, one} {
			g := decode(t, append(items, doneEv(llm.FinishStop)))
			if len(g.Calls) != 1 || g.Calls[0] != `read_file {"path": "a"}` || g.Text != c.text || g.Reason != llm.FinishToolCalls {
				t.Errorf("%s (%d chunks): %+v", c.name, len(items), g)
			}
		}
	}
}
