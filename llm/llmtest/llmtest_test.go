package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const sample = `# source: https://example.com/capture
# server: test
# what: two events
# client: {"implicit_think":true}
# expect: {"text":"hi","finish":"stop","usage":{"input":3,"output":1}}
>>> POST /v1/chat/completions
>>> body: {"model":"m","stream":true}
>>> response (curl -i):
HTTP/1.1 200 OK
Content-Type: text/event-stream
Date: Sat, 21 Nov 2026 16:25:58 GMT
Transfer-Encoding: chunked

data: {"a":1}

data: [DONE]

`

func TestParseTranscript(t *testing.T) {
	tr, err := ParseTranscript(sample)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Source != "https://example.com/capture" || tr.Method != "POST" || tr.Path != "/v1/chat/completions" ||
		string(tr.RequestBody) != `{"model":"m","stream":true}` || !tr.Client.ImplicitThink {
		t.Errorf("header: %+v", tr)
	}
	if tr.Expect == nil || tr.Expect.Text != "hi" || tr.Expect.Usage.Input != 3 {
		t.Errorf("expect: %+v", tr.Expect)
	}
	r := tr.Response
	if r.Status != 200 || r.Header.Get("Date") != "" || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("response header: %d %v", r.Status, r.Header)
	}
	if len(r.Chunks) != 2 || r.Chunks[0].Data != "data: {\"a\":1}\n\n" {
		t.Errorf("chunks: %q", r.Chunks)
	}
	for _, bad := range []string{"no response", ">>> response\nHTTP/1.1 abc\n", "# expect: {nope\n>>> response\n"} {
		if _, err := ParseTranscript(bad); err == nil {
			t.Errorf("ParseTranscript(%q) accepted", bad)
		}
	}
}

func TestSplit(t *testing.T) {
	sc := Scenario{Chunks: []Chunk{{Data: "abc"}, {Data: "def"}}}
	got := sc.Split(4, 1, 99)
	var parts []string
	for _, c := range got.Chunks {
		parts = append(parts, c.Data)
	}
	if strings.Join(parts, "|") != "a|bcd|ef" || sc.Body() != got.Body() {
		t.Errorf("split: %q", parts)
	}
}

func TestArgPiecesKeepRunes(t *testing.T) {
	sc := Dialect{ArgPieces: 1}.Stream("m", Call("f", `{"a":"é"}`))
	if strings.Contains(sc.Body(), `\ufffd`) || strings.Contains(sc.Body(), "\ufffd") {
		t.Errorf("a rune was cut in two:\n%s", sc.Body())
	}
}

func TestRespond(t *testing.T) {
	// The chooser answers by what the request asks; the queue goes first,
	// and what the chooser declines goes to the fallback, then to the
	// built-in endpoints.
	s := New(t)
	s.AddModel(Model{Name: "m"})
	s.Enqueue("/api/chat", JSONResponse(200, "queued"))
	s.Always("/api/chat", JSONResponse(200, "fallback"))
	s.Respond("/api/chat", func(r Request) (Scenario, bool) {
		var body struct{ Say string }
		if json.Unmarshal(r.Body, &body) != nil || body.Say == "" {
			return Scenario{}, false
		}
		return JSONResponse(200, "chose "+body.Say), true
	})
	s.Respond("/api/tags", func(Request) (Scenario, bool) { return Scenario{}, false })
	tests := []struct {
		name, path, body string
		want             string
	}{
		{"queue first", "/api/chat", `{"say":"a"}`, `"queued"`},
		{"chosen", "/api/chat", `{"say":"a"}`, `"chose a"`},
		{"chosen by the request", "/api/chat", `{"say":"b"}`, `"chose b"`},
		{"declined goes to the fallback", "/api/chat", `{}`, `"fallback"`},
		{"declined goes to the built-in endpoints", "/api/tags", `{}`, `"name":"m"`},
		{"no chooser", "/api/other", `{}`, "no scenario left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(s.URL+tt.path, "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if !strings.Contains(string(got), tt.want) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	if n := len(s.RequestsTo("/api/chat")); n != 4 {
		t.Errorf("recorded %d requests to /api/chat, want 4", n)
	}
}

// TestResponsesShapes: the Responses renderer keeps runes whole in argument
// pieces, sends the answer only at the end with FinalOnly, and nothing at
// all with Empty.
func TestResponsesShapes(t *testing.T) {
	tests := []struct {
		name    string
		d       ResponsesDialect
		has     []string
		hasNot  []string
		chunks1 bool // the body is one chunk after the head
	}{
		{"default", ResponsesDialect{}, []string{"response.created", `"delta":"hi"`, "response.function_call_arguments.done", "response.completed", `"input_tokens"`}, nil, false},
		{"pieces", ResponsesDialect{ArgPieces: 1}, []string{`"delta":"é"`}, []string{`\ufffd`, "\ufffd"}, false},
		{"reasoning text", ResponsesDialect{ReasoningText: true}, []string{"response.reasoning_text.delta", `"type":"reasoning_text"`}, []string{"reasoning_summary_text"}, false},
		{"final only", ResponsesDialect{FinalOnly: true}, []string{`"text":"hi"`, "response.completed"}, []string{"output_text.delta", "output_item.added"}, true},
		{"empty", ResponsesDialect{Empty: true, NoUsage: true}, []string{`"output":[]`}, []string{"hi", `"f"`, "input_tokens"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.d.Stream("m", Thinking("t"), Text("hi"), Call("f", `{"a":"é"}`))
			body := sc.Body()
			for _, s := range tc.has {
				if !strings.Contains(body, s) {
					t.Errorf("no %s in\n%s", s, body)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(body, s) {
					t.Errorf("%s in\n%s", s, body)
				}
			}
			if tc.chunks1 != (len(sc.Chunks) <= 2) {
				t.Errorf("%d chunks", len(sc.Chunks))
			}
		})
	}
}
