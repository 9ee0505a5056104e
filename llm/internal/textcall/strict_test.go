package textcall

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// piece is one thing a strict extractor passed on, in order.
type piece struct {
	Kind string // "text", "call", "bad"
	Text string // the text, or the capture of a malformed call
	Name string
	Args string // canonical JSON of a call's arguments
	Why  Reason
}

func strictExtract(chunks []string) []piece {
	var out []piece
	x := NewStrict(offeredTools, func(s string) {
		if s == "" {
			panic("empty text emitted")
		}
		if n := len(out); n > 0 && out[n-1].Kind == "text" {
			out[n-1].Text += s
			return
		}
		out = append(out, piece{Kind: "text", Text: s})
	}, func(tc llm.ToolCall) {
		var v any
		if err := json.Unmarshal(tc.Args, &v); err != nil {
			panic(fmt.Sprintf("call args not JSON: %s", tc.Args))
		}
		if tc.ID == "" || !tc.FromText {
			panic("call without id or FromText")
		}
		b, _ := json.Marshal(v)
		out = append(out, piece{Kind: "call", Name: tc.Name, Args: string(b)})
	}, func(m Malformed) {
		out = append(out, piece{Kind: "bad", Text: m.Text, Name: m.Name, Why: m.Reason})
	})
	for _, c := range chunks {
		x.Feed(c)
	}
	x.Flush()
	return out
}

func txt(s string) piece { return piece{Kind: "text", Text: s} }
func cl(name, args string) piece {
	return piece{Kind: "call", Name: name, Args: args}
}
func bad(text, name string, why Reason) piece {
	return piece{Kind: "bad", Text: text, Name: name, Why: why}
}

const readCall = `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`

var strictCases = []struct {
	name string
	in   string
	want []piece
}{
	{"plain", "Hello.", []piece{txt("Hello.")}},
	{"one call", readCall, []piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"text around", "Let me look.\n" + readCall + "\nDone?", []piece{txt("Let me look.\n"), cl("read_file", `{"path":"a.txt"}`), txt("Done?")}},
	{"two calls", readCall + "\n" + `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`,
		[]piece{cl("read_file", `{"path":"a.txt"}`), cl("get_weather", `{"city":"Paris"}`)}},
	{"no closing tag at the end", `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}` + "\n",
		[]piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"repaired", `<tool_call>{"name": "read_file", "arguments": {'path': 'a.txt',}}</tool_call>`, []piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"list in one tag", `<tool_call>[{"name": "read_file", "arguments": {"path": "a.txt"}}, {"name": "nope", "arguments": {}}]</tool_call>`,
		[]piece{cl("read_file", `{"path":"a.txt"}`), bad(`{"name": "nope", "arguments": {}}`, "nope", ReasonUnknown)}},
	{"not json", "<tool_call>read the file</tool_call> ok", []piece{bad("<tool_call>read the file</tool_call>", "", ReasonJSON), txt("ok")}},
	{"cut-off json keeps the name", `<tool_call>{"name": "read_file", "arguments": {"path": "a.t</tool_call>`,
		[]piece{bad(`<tool_call>{"name": "read_file", "arguments": {"path": "a.t</tool_call>`, "read_file", ReasonJSON)}},
	{"empty", "<tool_call></tool_call>", []piece{bad("<tool_call></tool_call>", "", ReasonJSON)}},
	{"no name", `<tool_call>{"arguments": {"path": "a"}}</tool_call>`, []piece{bad(`<tool_call>{"arguments": {"path": "a"}}</tool_call>`, "", ReasonNoName)}},
	{"unknown tool", `<tool_call>{"name": "launch", "arguments": {}}</tool_call>`, []piece{bad(`<tool_call>{"name": "launch", "arguments": {}}</tool_call>`, "launch", ReasonUnknown)}},
	{"unclosed garbage at the end", "Sure. <tool_call>hmm", []piece{txt("Sure. "), bad("<tool_call>hmm", "", ReasonJSON)}},
	// The other forms are read as New reads them.
	{"fenced", "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\n", []piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"fenced not a tool stays text", "```json\n{\"name\": \"Alice\"}\n```", []piece{txt("```json\n{\"name\": \"Alice\"}\n```")}},
	{"mistral", `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a.txt"}}]`, []piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"bare", `{"name": "read_file", "arguments": {"path": "a.txt"}}`, []piece{cl("read_file", `{"path":"a.txt"}`)}},
	{"bare json not a call", `{"name": "Alice", "age": 3}`, []piece{txt(`{"name": "Alice", "age": 3}`)}},
	{"markers in prose", "a < b and c[0] and `x`", []piece{txt("a < b and c[0] and `x`")}},
}

func TestStrictEverySplit(t *testing.T) {
	for _, tc := range strictCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := strictExtract([]string{tc.in}); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("whole:\n got %+v\nwant %+v", got, tc.want)
			}
			for i := 0; i <= len(tc.in); i++ {
				for j := i; j <= len(tc.in); j += 3 {
					got := strictExtract([]string{tc.in[:i], tc.in[i:j], tc.in[j:]})
					if !reflect.DeepEqual(got, tc.want) {
						t.Fatalf("split at %d,%d:\n got %+v\nwant %+v", i, j, got, tc.want)
					}
				}
			}
		})
	}
}

func TestStrictAbortGivesTextNeverACall(t *testing.T) {
	for _, in := range []string{
		`Looking. <tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}`,
		`Looking. <tool_call>{"name": "read_fi`,
		"Looking. <tool_c",
	} {
		var text strings.Builder
		x := NewStrict(offeredTools, func(s string) { text.WriteString(s) },
			func(tc llm.ToolCall) { t.Errorf("%q: call %+v after Abort", in, tc) },
			func(m Malformed) { t.Errorf("%q: malformed %+v after Abort", in, m) })
		x.Feed(in)
		x.Abort()
		if text.String() != in {
			t.Errorf("Abort gave %q, want %q", text.String(), in)
		}
	}
}

func TestStrictTooLongIsReportedAndSkipped(t *testing.T) {
	body := `<tool_call>{"name": "read_file", "arguments": {"path": "` + strings.Repeat("x", 2*maxCaptured) + `"}}</tool_call>after`
	// Streamed: a capture waits at most maxCaptured bytes for its end.
	// The last step ends the first chunk inside the closing tag.
	for _, step := range []int{4096, 7, strings.Index(body, hermesClose) + 5} {
		var chunks []string
		for i := 0; i < len(body); i += step {
			chunks = append(chunks, body[i:min(i+step, len(body))])
		}
		got := strictExtract(chunks)
		if len(got) != 2 || got[0].Kind != "bad" || got[0].Why != ReasonTooLong || got[0].Name != "read_file" || got[1] != txt("after") {
			short := fmt.Sprint(got)
			t.Fatalf("step %d: got %.300s", step, short)
		}
	}
}

func TestStrictTakeKeepsStrictness(t *testing.T) {
	var bads int
	x := NewStrict(offeredTools, func(string) {}, func(llm.ToolCall) {}, func(Malformed) { bads++ })
	x.Feed("thinking <tool_c")
	if held := x.Take(); held != "<tool_c" {
		t.Fatalf("Take = %q", held)
	}
	x.Feed("<tool_call>nonsense</tool_call>")
	x.Flush()
	if bads != 1 {
		t.Fatalf("after Take, %d malformed calls reported, want 1", bads)
	}
}

// wellFormed is a call that must be found wherever the chunks split it.
const wellFormed = `<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>`

// splits cuts s into chunks at points drawn from seed.
func splits(s string, seed uint64) []string {
	var out []string
	for len(s) > 0 {
		seed = seed*6364136223846793005 + 1442695040888963407
		n := int(seed>>33)%9 + 1
		if seed&(1<<20) != 0 {
			n = int(seed>>40) % (len(s) + 1)
		}
		n = min(max(n, 1), len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// inOrder reports whether pieces occur in s in order, without overlapping:
// what the extractor passed on is taken from the input, never invented.
func inOrder(s string, pieces []string) bool {
	pos := 0
	for _, p := range pieces {
		i := strings.Index(s[pos:], p)
		if i < 0 {
			return false
		}
		pos += i + len(p)
	}
	return true
}

// clean drops what could open a capture, so that a call put after it is a
// call whatever the text around it.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("<[`{", r) {
			return -1
		}
		return r
	}, s)
}

// FuzzPromptedParse feeds the strict extractor (the prompted tool
// protocol's parser) arbitrary text, split at arbitrary points: it must not
// panic or hang, must give the same result however the text is split, must
// pass on only bytes of the input (text and malformed captures, in order),
// and must find a well-formed call wherever the splits fall.
func FuzzPromptedParse(f *testing.F) {
	for _, tc := range strictCases {
		f.Add(tc.in, uint64(len(tc.in)))
	}
	for _, tc := range cases {
		f.Add(tc.in, uint64(7))
	}
	f.Add("<tool_call><tool_call>{}</tool_call></tool_call>", uint64(3))
	f.Add("</tool_call><tool_call", uint64(1))
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		whole := strictExtract([]string{in})
		got := strictExtract(splits(in, seed))
		if !reflect.DeepEqual(got, whole) {
			t.Fatalf("splitting changed the result for %q:\n%+v\n%+v", in, got, whole)
		}
		var passed []string
		captures := 0
		for _, p := range got {
			switch p.Kind {
			case "text", "bad":
				passed = append(passed, p.Text)
			}
			if p.Kind != "text" {
				captures++
			}
		}
		if !inOrder(in, passed) {
			t.Fatalf("passed on bytes that are not the input's, in order: %q -> %+v", in, got)
		}
		if captures == 0 && strings.Join(passed, "") != in {
			// Without calls, text passes unchanged.
			t.Fatalf("no call found but text altered: %q -> %+v", in, got)
		}

		pre, post := clean(in), clean(in)
		doc := pre + wellFormed + post
		found := strictExtract(splits(doc, seed^0x9e3779b97f4a7c15))
		n := 0
		for _, p := range found {
			if p.Kind == "call" {
				if p.Name != "read_file" || p.Args != `{"path":"a.txt"}` {
					t.Fatalf("%q: wrong call %+v", doc, p)
				}
				n++
			} else if p.Kind == "bad" {
				t.Fatalf("%q: malformed %+v", doc, p)
			}
		}
		if n != 1 {
			t.Fatalf("%q: %d calls found, want 1: %+v", doc, n, found)
		}
	})
}
