package textcall

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

type call struct {
	Name string
	Args string // canonical JSON
	Err  bool
}

type out struct {
	Text  string
	Calls []call
}

func offeredTools(name string) bool {
	return name == "get_weather" || name == "read_file"
}

func extract(chunks []string) out {
	var o out
	var text strings.Builder
	x := New(offeredTools, func(s string) {
		if s == "" {
			panic("empty text emitted")
		}
		text.WriteString(s)
	}, func(tc llm.ToolCall) {
		var v any
		if err := json.Unmarshal(tc.Args, &v); err != nil {
			panic(fmt.Sprintf("call args not JSON: %s", tc.Args))
		}
		b, _ := json.Marshal(v)
		if tc.ID == "" || !tc.FromText {
			panic("call without id or FromText")
		}
		o.Calls = append(o.Calls, call{tc.Name, string(b), tc.ArgsError != ""})
	})
	for _, c := range chunks {
		x.Feed(c)
	}
	x.Flush()
	o.Text = text.String()
	return o
}

var paris = call{"get_weather", `{"city":"Paris"}`, false}

var cases = []struct {
	name string
	in   string
	want out
}{
	{"plain", "The weather is nice.", out{Text: "The weather is nice."}},
	{"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", out{Calls: []call{paris}}},
	{"hermes after text", "Let me check.\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>", out{Text: "Let me check.\n", Calls: []call{paris}}},
	{"hermes two calls", "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}</tool_call>",
		out{Calls: []call{paris, {"read_file", `{"path":"a.txt"}`, false}}}},
	{"hermes no closing tag", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n", out{Calls: []call{paris}}},
	{"hermes unknown tool still a call", "<tool_call>{\"name\":\"launch\",\"arguments\":{}}</tool_call>", out{Calls: []call{{"launch", `{}`, false}}}},
	{"hermes arguments as string", `<tool_call>{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}</tool_call>`, out{Calls: []call{paris}}},
	{"hermes malformed repaired", `<tool_call>{"name": "get_weather", "arguments": {'city': 'Paris',}}</tool_call>`, out{Calls: []call{paris}}},
	{"hermes garbage stays text", "<tool_call>not json</tool_call> ok", out{Text: "<tool_call>not json</tool_call> ok"}},
	{"openai-shaped inside tag", `<tool_call>{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}}}</tool_call>`, out{Calls: []call{paris}}},
	{"mistral", `[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]`, out{Calls: []call{paris}}},
	{"fenced call", "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n", out{Calls: []call{paris}}},
	{"fenced call no lang, text around", "I'll call it:\n```\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\nDone.", out{Text: "I'll call it:\nDone.", Calls: []call{paris}}},
	{"fenced list", "```json\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]\n```", out{Calls: []call{paris}}},
	{"fenced unclosed at end", "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}", out{Calls: []call{paris}}},
	{"fenced json not a tool", "Here is a config:\n```json\n{\"name\": \"Alice\", \"age\": 30}\n```\n", out{Text: "Here is a config:\n```json\n{\"name\": \"Alice\", \"age\": 30}\n```\n"}},
	{"fenced json with extra keys", "```json\n{\"name\": \"get_weather\", \"arguments\": {}, \"note\": 1}\n```", out{Text: "```json\n{\"name\": \"get_weather\", \"arguments\": {}, \"note\": 1}\n```"}},
	{"fenced python", "```python\nprint({\"name\": \"get_weather\"})\n```", out{Text: "```python\nprint({\"name\": \"get_weather\"})\n```"}},
	{"inline backticks", "Use `x` and ```y``` here", out{Text: "Use `x` and ```y``` here"}},
	{"bare call llama style", `{"name": "get_weather", "parameters": {"city": "Paris"}}`, out{Calls: []call{paris}}},
	{"bare call leading space", "\n {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}", out{Calls: []call{paris}}},
	{"bare json not a tool", `{"name": "Alice", "age": 30}`, out{Text: `{"name": "Alice", "age": 30}`}},
	{"json mid text", `The object {"name": "get_weather", "arguments": {}} is an example.`, out{Text: `The object {"name": "get_weather", "arguments": {}} is an example.`}},
	{"angle brackets in text", "if a < b && c[0] > d {", out{Text: "if a < b && c[0] > d {"}},
	{"braces in strings", `{"name": "read_file", "arguments": {"path": "a}b.txt"}}`, out{Calls: []call{{"read_file", `{"path":"a}b.txt"}`, false}}}},
	{"hermes in a fence", "```\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>\n```", out{Text: "```\n```", Calls: []call{paris}}},
	{"hermes after a code block", "Run:\n```sh\nls\n```\n<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call>", out{Text: "Run:\n```sh\nls\n```\n", Calls: []call{paris}}},
	{"fenced call after a code block", "```sh\nls\n```\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n", out{Text: "```sh\nls\n```\n", Calls: []call{paris}}},
	{"cut-off arguments flagged", `<tool_call>{"name": "read_file", "arguments": "{\"path\": \"notes.t"}</tool_call>`, out{Calls: []call{{"read_file", `{}`, true}}}},
}

func TestExtractEveryOffset(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := extract([]string{tc.in}); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("whole:\n got %+v\nwant %+v", got, tc.want)
			}
			for i := 0; i <= len(tc.in); i++ {
				for j := i; j <= len(tc.in); j += 3 {
					got := extract([]string{tc.in[:i], tc.in[i:j], tc.in[j:]})
					if !reflect.DeepEqual(got, tc.want) {
						t.Fatalf("split at %d,%d:\n got %+v\nwant %+v", i, j, got, tc.want)
					}
				}
			}
		})
	}
}

func FuzzExtract(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in, uint8(5))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		n := int(step%13) + 1
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		got := extract(chunks)
		whole := extract([]string{in})
		if !reflect.DeepEqual(got, whole) {
			t.Fatalf("chunking changed the result for %q:\n%+v\n%+v", in, got, whole)
		}
		if len(got.Calls) == 0 && got.Text != in {
			t.Fatalf("no call found but text altered: %q -> %q", in, got.Text)
		}
	})
}

func TestTakeGivesBackWhatIsHeldAndStartsAfresh(t *testing.T) {
	tests := []struct {
		name       string
		fed        []string
		text, held string
	}{
		{"a call being captured", []string{"Let me think.\n", "```json\n{\"name\": \"read_f"}, "Let me think.\n", "```json\n{\"name\": \"read_f"},
		{"a partial marker", []string{"maybe <tool_c"}, "maybe ", "<tool_c"},
		{"leading white space", []string{"\n\n"}, "", "\n\n"},
		{"nothing held", []string{"plain"}, "plain", ""},
	}
	for _, tc := range tests {
		var text strings.Builder
		var calls []llm.ToolCall
		x := New(offeredTools, func(s string) { text.WriteString(s) }, func(c llm.ToolCall) { calls = append(calls, c) })
		for _, c := range tc.fed {
			x.Feed(c)
		}
		if held := x.Take(); text.String() != tc.text || held != tc.held {
			t.Errorf("%s: passed on %q, took %q; want %q, %q", tc.name, text.String(), held, tc.text, tc.held)
		}
		// What follows is a new answer: a call at its start is found.
		text.Reset()
		x.Feed(`{"name": "read_file", "arguments": {"path": "a"}}`)
		x.Flush()
		if len(calls) != 1 || calls[0].Name != "read_file" || text.Len() != 0 {
			t.Errorf("%s: after Take, calls %+v, text %q", tc.name, calls, text.String())
		}
	}
}
