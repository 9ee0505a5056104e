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
	x.EndAt(endMarker)
	for _, c := range chunks {
		x.Feed(c)
	}
	x.Flush()
	if x.Ended() {
		out = append(out, piece{Kind: "end"})
	}
	return out
}

// endMarker is where the prompted protocol ends a reply.
const endMarker = "<tool_response"

// end is the end of the answer at endMarker.
var end = piece{Kind: "end"}

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
	// A list that is not all objects is one malformed call.
	{"list of numbers", "<tool_call>[1,1,1]</tool_call>", []piece{bad("<tool_call>[1,1,1]</tool_call>", "", ReasonJSON)}},
	{"list with a number", `<tool_call>[{"name": "read_file", "arguments": {"path": "a.txt"}}, 1]</tool_call>`,
		[]piece{bad(`<tool_call>[{"name": "read_file", "arguments": {"path": "a.txt"}}, 1]</tool_call>`, "read_file", ReasonJSON)}},
	// A <tool_call> after a fence line is a call (review 19, item 3).
	{"call in a bare fence", "```\n" + readCall + "\n```", []piece{txt("```\n"), cl("read_file", `{"path":"a.txt"}`), txt("```")}},
	{"call in a json fence", "```json\n" + readCall + "\n```\n", []piece{txt("```json\n"), cl("read_file", `{"path":"a.txt"}`), txt("```\n")}},
	{"call after a code block", "Run:\n```bash\nls\n```\n" + readCall, []piece{txt("Run:\n```bash\nls\n```\n"), cl("read_file", `{"path":"a.txt"}`)}},
	{"fenced call after a code block", "```bash\nls\n```\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\nok",
		[]piece{txt("```bash\nls\n```\n"), cl("read_file", `{"path":"a.txt"}`), txt("ok")}},
	{"a closing fence is not an opening", "```python\nx = 1\n```\n{\"name\": \"read_file\", \"arguments\": {}}\n```\n",
		[]piece{txt("```python\nx = 1\n```\n{\"name\": \"read_file\", \"arguments\": {}}\n```\n")}},
	{"call after a long fence line", "```" + strings.Repeat("x", 70) + "\n" + readCall, []piece{txt("```" + strings.Repeat("x", 70) + "\n"), cl("read_file", `{"path":"a.txt"}`)}},
	{"call on a long fence line", "```" + strings.Repeat("x", 70) + readCall, []piece{txt("```" + strings.Repeat("x", 70)), cl("read_file", `{"path":"a.txt"}`)}},
	{"call on a fence line", "```" + readCall + "\n```", []piece{txt("```"), cl("read_file", `{"path":"a.txt"}`), txt("```")}},
	{"call on the fence line of a code block", "```sh " + readCall + "\nls\n```\n", []piece{txt("```sh "), cl("read_file", `{"path":"a.txt"}`), txt("ls\n```\n")}},
	{"inline code at a line start", "```x``` then\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```",
		[]piece{txt("```x``` then\n"), cl("read_file", `{"path":"a.txt"}`)}},
	{"a bad closing line goes on with the block", "```json\n{\"a\": 1}\n```x\n```\n" + readCall,
		[]piece{txt("```json\n{\"a\": 1}\n```x\n```\n"), cl("read_file", `{"path":"a.txt"}`)}},
	// The answer ends where the model starts to write a result.
	{"a result ends the reply", "Done.\n<tool_response name=\"read_file\">\nhi\n</tool_response>\nmore", []piece{txt("Done.\n"), end}},
	{"a result after a call", readCall + "\n<tool_response>\nhi", []piece{cl("read_file", `{"path":"a.txt"}`), end}},
	{"a result marker in a call's string", `<tool_call>{"name": "read_file", "arguments": {"path": "<tool_response x"}}</tool_call>ok`,
		[]piece{cl("read_file", `{"path":"\u003ctool_response x"}`), txt("ok")}},
	{"a result marker cut short", "so <tool_respons", []piece{txt("so <tool_respons")}},
	{"a close tag is not the marker", "a </tool_response> b", []piece{txt("a </tool_response> b")}},
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

// clean drops what could open a capture that may hold a call's text (or
// end the reply), so that a call put after it is a call whatever the text
// around it. Backticks stay: a fence that does not hold a call object is
// read through.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("<[{", r) {
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
	f.Add("```\n<tool_call>{\"name\": \"read_file\"}</tool_call>\n```\n<tool_response>", uint64(5))
	f.Add("<tool_call>[1,{}]</tool_call>```json\n[1]\n```x\n", uint64(2))
	f.Fuzz(func(t *testing.T, in string, seed uint64) {
		whole := strictExtract([]string{in})
		got := strictExtract(splits(in, seed))
		if !reflect.DeepEqual(got, whole) {
			t.Fatalf("splitting changed the result for %q:\n%+v\n%+v", in, got, whole)
		}
		var passed []string
		captures := 0
		for i, p := range got {
			switch p.Kind {
			case "text", "bad":
				passed = append(passed, p.Text)
			case "end":
				if i != len(got)-1 {
					t.Fatalf("pieces after the end: %q -> %+v", in, got)
				}
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

func TestPlainEndsAtMarker(t *testing.T) {
	in := "a <tool_call>{}</tool_call> ```\n[TOOL_CALLS] b <tool_response>c"
	for i := 0; i <= len(in); i++ {
		var text strings.Builder
		x := NewPlain(func(s string) {
			if s == "" {
				t.Fatal("empty text emitted")
			}
			text.WriteString(s)
		})
		x.EndAt(endMarker)
		x.Feed(in[:i])
		x.Feed(in[i:])
		x.Feed("dropped")
		x.Flush()
		if want := "a <tool_call>{}</tool_call> ```\n[TOOL_CALLS] b "; text.String() != want || !x.Ended() {
			t.Fatalf("split at %d: %q, ended %v", i, text.String(), x.Ended())
		}
	}
	// Without the marker, all is text; a partial marker is text at the end.
	var text strings.Builder
	x := NewPlain(func(s string) { text.WriteString(s) })
	x.EndAt(endMarker)
	x.Feed(" lead <tool_resp")
	if text.String() != " lead " {
		t.Fatalf("passed on %q before the end", text.String())
	}
	x.Flush()
	if text.String() != " lead <tool_resp" || x.Ended() {
		t.Fatalf("%q", text.String())
	}
}

func TestStrictTooLargeToRepair(t *testing.T) {
	in := `<tool_call>{"name": "read_file", "arguments": {'path': '` + strings.Repeat("x", 70000) + `'}}</tool_call>ok`
	got := strictExtract(splits(in, 11))
	if len(got) != 2 || got[0].Kind != "bad" || got[0].Why != ReasonTooLarge || got[0].Name != "read_file" || got[1] != txt("ok") {
		t.Fatalf("got %.300s", fmt.Sprint(got))
	}
	// Under the limit, it is repaired.
	in = `<tool_call>{"name": "read_file", "arguments": {'path': '` + strings.Repeat("x", 60000) + `'}}</tool_call>`
	if got := strictExtract([]string{in}); len(got) != 1 || got[0].Kind != "call" {
		t.Fatalf("got %.300s", fmt.Sprint(got))
	}
}
