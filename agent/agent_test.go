package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/tool"
)

// wire is one dialect the agent is tested over.
type wire struct {
	name   string
	path   string
	new    func(srv *llmtest.Server) llm.Provider
	stream func(model string, parts ...llmtest.Part) llmtest.Scenario
}

var wires = []wire{
	{"ollama", "/api/chat", func(s *llmtest.Server) llm.Provider {
		return ollama.New(ollama.Options{BaseURL: s.URL, Model: "m", NumCtx: 8192, MaxRetries: -1})
	}, llmtest.OllamaStream},
	{"openai", "/v1/chat/completions", func(s *llmtest.Server) llm.Provider {
		return openai.New(openai.Options{BaseURL: s.OpenAIURL(), Model: "m", MaxRetries: -1})
	}, llmtest.OpenAIStream},
}

// recorder collects a run's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) types() string {
	var s []string
	for _, e := range r.events {
		if e.Type == EventTextDelta || e.Type == EventThinkingDelta || e.Type == EventUsage || e.Type == EventToolOutput {
			if len(s) > 0 && s[len(s)-1] == string(e.Type) {
				continue
			}
		}
		s = append(s, string(e.Type))
	}
	return strings.Join(s, " ")
}

func (r *recorder) results() []Event {
	var out []Event
	for _, e := range r.events {
		if e.Type == EventToolResult {
			out = append(out, e)
		}
	}
	return out
}

// tools used by the tests.
type pathArgs struct {
	Path string `json:"path"`
}

func testTools(t *testing.T, log *[]string) *tool.Registry {
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		*log = append(*log, s)
		mu.Unlock()
	}
	reg, err := tool.NewRegistry(
		tool.MustFunc("read_file", "read", tool.ReadOnly, func(ctx context.Context, a pathArgs) (string, error) {
			note("read " + a.Path)
			if a.Path == "missing.txt" {
				return "", errors.New("missing.txt does not exist")
			}
			return "content of " + a.Path, nil
		}),
		tool.MustFunc("write_file", "write", tool.Edit, func(ctx context.Context, a pathArgs) (string, error) {
			note("write " + a.Path)
			return "wrote " + a.Path, nil
		}),
		tool.MustFunc("run_shell_command", "run", tool.Execute, func(ctx context.Context, a struct {
			Command string `json:"command"`
		}) (string, error) {
			note("run " + a.Command)
			if a.Command == "sleep" {
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "ok: " + a.Command, nil
		}),
		tool.MustFunc("crash", "crash", tool.ReadOnly, func(ctx context.Context, a struct{}) (string, error) {
			panic("boom")
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func user(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

func TestMultiStepRunBothWires(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(w.path,
				w.stream("m", llmtest.Thinking("I should read it."), llmtest.Call("read_file", `{"path":"a.txt"}`)),
				w.stream("m", llmtest.Text("Two changes."), llmtest.Call("write_file", `{"path":"a.txt"}`), llmtest.Call("run_shell_command", `{"command":"go test"}`)),
				w.stream("m", llmtest.Text("Done: "), llmtest.Text("tests pass."), llmtest.Usage(300, 9)),
			)
			var log []string
			rec := &recorder{}
			a := &Agent{Provider: w.new(srv), Model: "m", System: "be good", Tools: testTools(t, &log), Mode: ModeYolo}
			res := a.Run(context.Background(), user("fix a.txt"), rec.emit)
			if res.Reason != DoneStop || res.Text != "Done: tests pass." || res.Err != nil {
				t.Fatalf("result: %+v", res)
			}
			if strings.Join(log, "|") != "read a.txt|write a.txt|run go test" {
				t.Errorf("tools ran: %v", log)
			}
			want := "thinking_start thinking_delta thinking_end tool_call usage tool_result text_delta tool_call tool_call usage tool_result tool_result text_delta usage done"
			if got := rec.types(); got != want {
				t.Errorf("events:\n got %s\nwant %s", got, want)
			}
			// 1 assistant+1 result, 1 assistant+2 results, 1 final answer.
			if len(res.Messages) != 6 || res.Usage.InputTokens < 300 || res.LastInputTokens != 300 {
				t.Errorf("messages %d usage %+v", len(res.Messages), res.Usage)
			}
			// The third request carries the whole history, every result paired with its call.
			reqs := srv.RequestsTo(w.path)
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			var body struct {
				Messages []map[string]any `json:"messages"`
				Tools    []any            `json:"tools"`
			}
			reqs[2].JSON(t, &body)
			roles := []string{}
			for _, m := range body.Messages {
				roles = append(roles, m["role"].(string))
			}
			if strings.Join(roles, ",") != "system,user,assistant,tool,assistant,tool,tool" || len(body.Tools) != 4 {
				t.Fatalf("history roles %v, %d tools", roles, len(body.Tools))
			}
			asst := body.Messages[4]
			calls := asst["tool_calls"].([]any)
			if len(calls) != 2 {
				t.Fatalf("assistant calls: %v", asst)
			}
			for i, res := range body.Messages[5:] {
				id := calls[i].(map[string]any)["id"]
				if res["tool_call_id"] != id {
					t.Errorf("result %d paired with %v, want %v", i, res["tool_call_id"], id)
				}
				if w.name == "ollama" && res["tool_name"] == nil {
					t.Errorf("ollama result %d lacks tool_name", i)
				}
			}
			if !strings.Contains(fmt.Sprint(body.Messages[6]["content"]), "ok: go test") {
				t.Errorf("result content: %v", body.Messages[6])
			}
		})
	}
}

func TestBadCallsGoBackToTheModel(t *testing.T) {
	tests := []struct {
		name    string
		call    llmtest.Part
		errHas  string
		ranTool bool
	}{
		{"unknown tool", llmtest.Call("delete_everything", `{}`), `unknown tool "delete_everything"; the tools are: crash, read_file`, false},
		{"schema violation", llmtest.Call("read_file", `{"file":"a"}`), "arguments do not match the schema", false},
		{"tool error", llmtest.Call("read_file", `{"path":"missing.txt"}`), "missing.txt does not exist", true},
		{"tool panic", llmtest.Call("crash", `{}`), "the tool crashed (boom)", false},
		{"needs approval, non-interactive", llmtest.Call("write_file", `{"path":"x"}`), "needs the user's approval", false},
	}
	for _, w := range wires {
		for _, tc := range tests {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Enqueue(w.path, w.stream("m", tc.call), w.stream("m", llmtest.Call("read_file", `{"path":"a.txt"}`)), w.stream("m", llmtest.Text("recovered")))
				var log []string
				rec := &recorder{}
				a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
				res := a.Run(context.Background(), user("go"), rec.emit)
				if res.Reason != DoneStop || res.Text != "recovered" {
					t.Fatalf("did not recover: %+v", res)
				}
				first := rec.results()[0]
				if first.OK || !strings.Contains(first.Error, tc.errHas) {
					t.Errorf("result: %+v, want error with %q", first, tc.errHas)
				}
				var body struct {
					Messages []map[string]any `json:"messages"`
				}
				srv.RequestsTo(w.path)[1].JSON(t, &body)
				if got := fmt.Sprint(body.Messages[2]["content"]); !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, tc.errHas) {
					t.Errorf("the model was told %q", got)
				}
			})
		}
	}
}

func TestRepeatedFailingCallsAreCutOff(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Always(w.path, w.stream("m", llmtest.Call("read_file", `{"path":"missing.txt"}`)))
	var log []string
	rec := &recorder{}
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Reason != DoneError || len(log) != DefaultMaxRepeats || !strings.Contains(res.Err.Error(), "same failing call 3 times") {
		t.Fatalf("%+v after %d calls", res, len(log))
	}
	last := rec.events[len(rec.events)-2]
	if last.Type != EventError || last.Code != "tool_loop" {
		t.Errorf("error event: %+v", last)
	}
}

func TestSameCallForeverIsCutOff(t *testing.T) {
	w := wires[1]
	srv := llmtest.New(t)
	srv.Always(w.path, w.stream("m", llmtest.Call("read_file", `{"path":"a.txt"}`)))
	var log []string
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log), MaxTurns: 100}
	res := a.Run(context.Background(), user("go"), func(Event) {})
	if res.Reason != DoneError || len(log) != 2*DefaultMaxRepeats {
		t.Fatalf("%+v after %d calls", res, len(log))
	}
}

func TestMaxTurns(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	for i := range 10 {
		srv.Enqueue(w.path, w.stream("m", llmtest.Call("read_file", fmt.Sprintf(`{"path":"f%d"}`, i))))
	}
	var log []string
	rec := &recorder{}
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log), MaxTurns: 3}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Reason != DoneMaxTurns || len(log) != 3 || len(srv.RequestsTo(w.path)) != 3 {
		t.Fatalf("%+v, %d calls", res, len(log))
	}
	if last := rec.events[len(rec.events)-1]; last.Type != EventDone || last.DoneReason != DoneMaxTurns {
		t.Errorf("last event %+v", last)
	}
}

func TestApprovalModes(t *testing.T) {
	calls := map[tool.Kind]llmtest.Part{
		tool.ReadOnly: llmtest.Call("read_file", `{"path":"a"}`),
		tool.Edit:     llmtest.Call("write_file", `{"path":"a"}`),
		tool.Execute:  llmtest.Call("run_shell_command", `{"command":"ls"}`),
	}
	// What happens to each kind in each mode: "run" (no question), "ask",
	// "refuse" (plan mode).
	want := map[Mode]map[tool.Kind]string{
		ModeDefault:  {tool.ReadOnly: "run", tool.Edit: "ask", tool.Execute: "ask"},
		ModeAutoEdit: {tool.ReadOnly: "run", tool.Edit: "run", tool.Execute: "ask"},
		ModeYolo:     {tool.ReadOnly: "run", tool.Edit: "run", tool.Execute: "run"},
		ModePlan:     {tool.ReadOnly: "run", tool.Edit: "refuse", tool.Execute: "refuse"},
	}
	w := wires[0]
	for mode, kinds := range want {
		for kind, outcome := range kinds {
			t.Run(fmt.Sprintf("%s/%s", mode, kind), func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Enqueue(w.path, w.stream("m", calls[kind]), w.stream("m", llmtest.Text("ok")))
				var log []string
				asked := 0
				a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log), Mode: mode}
				o := RunOptions{Approver: ApproverFunc(func(ctx context.Context, r Request) (Answer, error) {
					asked++
					return Answer{Decision: Allow}, nil
				})}
				rec := &recorder{}
				a.RunWith(context.Background(), user("go"), o, rec.emit)
				got := "run"
				switch {
				case asked > 0:
					got = "ask"
				case len(log) == 0:
					got = "refuse"
				}
				if got != outcome {
					t.Errorf("got %s, want %s (events %s)", got, outcome, rec.types())
				}
				if outcome == "ask" && !strings.Contains(rec.types(), "approval_required tool_result") {
					t.Errorf("events: %s", rec.types())
				}
			})
		}
	}
}

func TestApprovalAnswers(t *testing.T) {
	w := wires[1]
	srv := llmtest.New(t)
	write := w.stream("m", llmtest.Call("write_file", `{"path":"a"}`))
	srv.Enqueue(w.path, write, write, write, write, w.stream("m", llmtest.Text("done")))
	answers := []Answer{{Decision: Deny, Message: "not that file"}, {Decision: Allow}, {Decision: AllowAlways}}
	var log []string
	var reqs []Request
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
	o := RunOptions{Approver: ApproverFunc(func(ctx context.Context, r Request) (Answer, error) {
		reqs = append(reqs, r)
		ans := answers[0]
		answers = answers[1:]
		return ans, nil
	})}
	rec := &recorder{}
	a.RunWith(context.Background(), user("go"), o, rec.emit)
	// Denied, allowed, always, then not asked again.
	if len(reqs) != 3 || len(log) != 3 {
		t.Fatalf("asked %d times, ran %d times", len(reqs), len(log))
	}
	if r := rec.results()[0]; r.OK || r.Error != "the user denied this call: not that file" {
		t.Errorf("denial result: %+v", r)
	}
	if reqs[0].Kind != tool.Edit || reqs[0].Tool != "write_file" || reqs[0].Reason == "" {
		t.Errorf("request: %+v", reqs[0])
	}
}

// TestModeAllowing: the mode a refused call's message names is the least
// permissive one that runs it, by the same rules as the approvals.
func TestModeAllowing(t *testing.T) {
	for k, want := range map[tool.Kind]Mode{tool.ReadOnly: ModeDefault, tool.Edit: ModeAutoEdit, tool.Execute: ModeYolo} {
		if got := ModeAllowing(k); got != want {
			t.Errorf("%s: %s, want %s", k, got, want)
		}
	}
}

// TestRefusedWithoutApprover: a run that cannot ask refuses what needs
// approval, and tells the model which mode would allow it, by its kind.
func TestRefusedWithoutApprover(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Call("write_file", `{"path":"a"}`), llmtest.Call("run_shell_command", `{"command":"ls"}`)), w.stream("m", llmtest.Text("ok")))
	var log []string
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
	rec := &recorder{}
	a.Run(context.Background(), user("go"), rec.emit)
	res := rec.results()
	if len(log) != 0 || len(res) != 2 {
		t.Fatalf("ran %v; results %+v", log, res)
	}
	if !strings.Contains(res[0].Error, "(--approval-mode auto_edit or yolo)") || !strings.Contains(res[1].Error, "(--approval-mode yolo)") {
		t.Errorf("refusals: %q, %q", res[0].Error, res[1].Error)
	}
	if got := rec.types(); !strings.Contains(got, "approval_required tool_result approval_required tool_result") {
		t.Errorf("events: %s", got)
	}
}

func TestHooks(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Call("read_file", `{"path":"secret.env"}`), llmtest.Call("read_file", `{"path":"a"}`)), w.stream("m", llmtest.Text("ok")))
	var log, after []string
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log)}
	o := RunOptions{Hooks: Hooks{
		Before: func(ctx context.Context, c tool.Call, name string) error {
			if strings.Contains(string(c.Args), ".env") {
				return errors.New("reading .env files is not allowed")
			}
			return nil
		},
		After: func(ctx context.Context, c tool.Call, name string, res tool.Result, err error) {
			after = append(after, name+":"+res.Output)
		},
	}}
	rec := &recorder{}
	a.RunWith(context.Background(), user("go"), o, rec.emit)
	if len(log) != 1 || len(after) != 1 || after[0] != "read_file:content of a" {
		t.Errorf("ran %v, after %v", log, after)
	}
	if r := rec.results()[0]; r.OK || !strings.Contains(r.Error, "not allowed") {
		t.Errorf("%+v", r)
	}
}

func TestCancelDuringStream(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.New(t)
			sc := w.stream("m", llmtest.Text("partial answer"))
			sc.Chunks = sc.Chunks[:1]
			sc.Hang = true
			srv.Enqueue(w.path, sc)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec := &recorder{}
			a := &Agent{Provider: w.new(srv), Model: "m"}
			res := a.Run(ctx, user("go"), func(e Event) {
				rec.emit(e)
				if e.Type == EventTextDelta {
					cancel()
				}
			})
			if res.Reason != DoneCancelled || len(res.Messages) != 1 || res.Messages[0].Content != "partial answer" {
				t.Fatalf("%+v", res)
			}
			if rec.types() != "text_delta done" {
				t.Errorf("events: %s", rec.types())
			}
		})
	}
}

func TestCancelDuringTool(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Call("run_shell_command", `{"command":"sleep"}`), llmtest.Call("read_file", `{"path":"a"}`)))
	ctx, cancel := context.WithCancel(context.Background())
	var log []string
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: testTools(t, &log), Mode: ModeYolo}
	go func() {
		for len(srv.RequestsTo(w.path)) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	res := a.Run(ctx, user("go"), func(Event) {})
	if res.Reason != DoneCancelled {
		t.Fatalf("%+v", res)
	}
	// The assistant message and a result for each of its two calls.
	if len(res.Messages) != 3 || !strings.Contains(res.Messages[2].Content, "not run") || len(log) != 1 {
		t.Errorf("messages %+v, ran %v", res.Messages, log)
	}
}

func TestProviderErrors(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Text("half"), llmtest.Cut()))
	rec := &recorder{}
	a := &Agent{Provider: w.new(srv), Model: "m"}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Reason != DoneError || len(res.Messages) != 1 || res.Messages[0].Content != "half" {
		t.Fatalf("%+v", res)
	}
	ev := rec.events[len(rec.events)-2]
	if ev.Type != EventError || ev.Code != "provider_bad_response" {
		t.Errorf("error event %+v", ev)
	}
}

func TestEventJSON(t *testing.T) {
	tests := []struct {
		ev   Event
		want string
	}{
		{Event{Type: EventSession, SessionID: "s1", Provider: "ollama", Model: "qwen3:4b"}, `{"type":"session","session_id":"s1","provider":"ollama","model":"qwen3:4b"}`},
		{Event{Type: EventThinkingStart}, `{"type":"thinking_start"}`},
		{Event{Type: EventThinkingDelta, Text: "hm"}, `{"type":"thinking_delta","text":"hm"}`},
		{Event{Type: EventThinkingEnd}, `{"type":"thinking_end"}`},
		{Event{Type: EventTextDelta, Text: "hi"}, `{"type":"text_delta","text":"hi"}`},
		{Event{Type: EventToolCall, ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)}, `{"type":"tool_call","id":"call_1","name":"read_file","args":{"path":"a.txt"}}`},
		{Event{Type: EventApprovalRequired, ID: "call_2", Name: "run_shell_command", Args: json.RawMessage(`{"command":"ls"}`), Reason: "run ls"}, `{"type":"approval_required","id":"call_2","name":"run_shell_command","args":{"command":"ls"},"reason":"run ls"}`},
		{Event{Type: EventToolResult, ID: "call_1", Name: "read_file", OK: true, Output: "x"}, `{"type":"tool_result","id":"call_1","name":"read_file","ok":true,"output":"x"}`},
		{Event{Type: EventToolResult, ID: "call_2", Name: "run_shell_command", Error: "refused"}, `{"type":"tool_result","id":"call_2","name":"run_shell_command","ok":false,"error":"refused"}`},
		{Event{Type: EventUsage, InputTokens: 123, OutputTokens: 45}, `{"type":"usage","input_tokens":123,"output_tokens":45}`},
		{Event{Type: EventError, Code: "provider_unreachable", Error: "down", Retryable: true}, `{"type":"error","code":"provider_unreachable","message":"down","retryable":true}`},
		{Event{Type: EventDone, DoneReason: DoneStop, Text: "the final answer"}, `{"type":"done","reason":"stop","text":"the final answer"}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.ev)
		if err != nil || string(b) != tc.want {
			t.Errorf("got %s, want %s (%v)", b, tc.want, err)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": ModeDefault, "auto-edit": ModeAutoEdit, "YOLO": ModeYolo, "plan": ModePlan} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseMode("reckless"); err == nil {
		t.Error("bad mode accepted")
	}
}

func TestEmptyReplyEndsTheTurn(t *testing.T) {
	for _, w := range wires {
		srv := llmtest.New(t)
		srv.Enqueue(w.path, w.stream("m"))
		res := (&Agent{Provider: w.new(srv), Model: "m"}).Run(context.Background(), user("go"), func(Event) {})
		if res.Reason != DoneStop || len(res.Messages) != 1 || res.Messages[0].Role != llm.RoleAssistant {
			t.Errorf("%s: %+v", w.name, res)
		}
	}
}
