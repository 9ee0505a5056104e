package responses

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/norm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// stepReader returns at most step bytes a read: a body cut anywhere.
type stepReader struct {
	s    string
	step int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.s)
	r.s = r.s[n:]
	return n, nil
}

// FuzzDecode feeds anything, cut anywhere, to the stream decoder and to the
// whole-answer decoder: neither panics, and what they yield keeps the
// stream contract (see checkContract).
func FuzzDecode(f *testing.F) {
	trs, err := llmtest.LoadTranscripts("../llmtest/testdata/transcripts")
	if err != nil {
		f.Fatal(err)
	}
	for _, tr := range trs {
		if strings.HasSuffix(tr.Path, "/responses") {
			f.Add(tr.Response.Body(), uint8(7))
		}
	}
	f.Add(llmtest.ResponsesStream("m", llmtest.Thinking("a"), llmtest.Text("b"), llmtest.Call("f", `{"x":1}`), llmtest.Usage(3, 4)).Body(), uint8(1))
	f.Add(llmtest.ResponsesDialect{ArgPieces: 2, ReasoningText: true}.Stream("m", llmtest.Call("f", `{"x":"é"}`), llmtest.Finish("length")).Body(), uint8(3))
	f.Add("data: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":0,\"delta\":\"{\"}\n\ndata: {\"type\":\"response.completed\"}\n\n", uint8(5))
	f.Add("event: error\ndata: {\"message\":\"x\"}\n\n", uint8(2))
	f.Fuzz(func(t *testing.T, body string, step uint8) {
		p := New(Options{Model: "m"})
		readErr := func(err error) *llm.Error { return &llm.Error{Code: llm.CodeBadResponse, Message: err.Error()} }
		for _, whole := range []bool{false, true} {
			var evs []llm.Event
			var yieldErr error
			n := norm.New(norm.Options{Tools: []string{"f"}}, func(ev llm.Event, err error) bool {
				if err != nil {
					yieldErr = err
					return false
				}
				evs = append(evs, ev)
				return true
			})
			d := &decoder{p: p, n: n, lim: limits{promptMin: 1}, readErr: readErr}
			r := &stepReader{s: body, step: max(int(step), 1)}
			if whole {
				err = d.whole(r)
			} else {
				err = d.stream(r)
			}
			if _, empty := errors.AsType[*emptyStream](err); empty {
				if len(evs) != 0 {
					t.Fatalf("an empty stream yielded %v", evs)
				}
				continue
			}
			if err != nil {
				if _, ok := errors.AsType[*llm.Error](err); !ok {
					t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
				}
				n.Abort()
			}
			if yieldErr != nil {
				t.Fatalf("the normaliser yielded an error: %v", yieldErr)
			}
			checkContract(t, evs, err)
		}
	})
}

// checkContract checks the llm.Stream order: deltas and calls, then at most
// one usage, then one done, last, unless the stream failed; every call with
// an id and arguments that are a JSON object.
func checkContract(t *testing.T, evs []llm.Event, err error) {
	t.Helper()
	done, usage := 0, 0
	for i, ev := range evs {
		switch ev.Kind {
		case llm.EventThinking, llm.EventText, llm.EventThinkingReclassified:
			if ev.Text == "" {
				t.Fatalf("event %d: empty %v", i, ev.Kind)
			}
			if usage+done > 0 {
				t.Fatalf("event %d: %v after usage or done", i, ev.Kind)
			}
		case llm.EventToolCall:
			tc := ev.ToolCall
			var obj map[string]any
			if tc == nil || tc.ID == "" || json.Unmarshal(tc.Args, &obj) != nil || obj == nil {
				t.Fatalf("event %d: call %+v", i, tc)
			}
			if usage+done > 0 {
				t.Fatalf("event %d: a call after usage or done", i)
			}
		case llm.EventUsage:
			usage++
		case llm.EventDone:
			done++
			if i != len(evs)-1 {
				t.Fatalf("event %d: done is not last", i)
			}
		}
	}
	if usage > 1 || (err == nil && done != 1) || (err != nil && done != 0) {
		t.Fatalf("%d usage, %d done events, error %v", usage, done, err)
	}
}
