package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/tool"
)

var answerSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`)

// subSetup is a parent agent whose registry holds the test tools and a
// sub-agent "probe" that may use read_file only.
func subSetup(t *testing.T, probe *SubAgent) (*llmtest.Server, *Agent, *[]string) {
	t.Helper()
	srv := llmtest.New(t)
	var log []string
	reg := testTools(t, &log)
	probe.Name = "probe"
	probe.Description = "looks things up"
	probe.System = "you probe"
	probe.Tools = reg
	if probe.Select == nil {
		probe.Select = []string{"read_file"}
	}
	if err := reg.Add(probe); err != nil {
		t.Fatal(err)
	}
	p := ollama.New(ollama.Options{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
	return srv, &Agent{Provider: p, Model: "m", Tools: reg, Mode: ModeDefault}, &log
}

func stream(parts ...llmtest.Part) llmtest.Scenario { return llmtest.OllamaStream("m", parts...) }

func TestSubAgentReportNestedEvents(t *testing.T) {
	srv, a, log := subSetup(t, &SubAgent{OutputSchema: answerSchema, Scratchpad: 2})
	srv.Enqueue("/api/chat",
		stream(llmtest.CallID("p1", "probe", `{"task":"what is in a.txt?"}`)),
		// the child
		stream(llmtest.Call("scratchpad", `{"explored":"nothing yet","still_needed":"a.txt"}`)),
		stream(llmtest.Call("read_file", `{"path":"a.txt"}`)),
		stream(llmtest.Call("submit_report", `{"answer":"content of a.txt"}`), llmtest.Call("read_file", `{"path":"late.txt"}`)),
		// the parent again
		stream(llmtest.Text("It holds its content.")),
	)
	rec := &recorder{}
	res := a.Run(context.Background(), user("ask the probe"), rec.emit)
	if res.Reason != DoneStop || res.Text != "It holds its content." {
		t.Fatalf("%+v", res)
	}
	results := rec.results()
	if len(results) != 1 || !results[0].OK || results[0].Output != `{"answer":"content of a.txt"}` || results[0].ID != "p1" {
		t.Fatalf("the parent's result: %+v", results)
	}
	if !strings.Contains(results[0].Display, "content of a.txt") {
		t.Errorf("display: %q", results[0].Display)
	}
	if strings.Join(*log, "|") != "read a.txt" {
		t.Errorf("tools run: %v (a call after the accepted report must not run)", *log)
	}
	// The child's events came nested under the parent's call, in order.
	var nested []string
	var lines strings.Builder
	for _, e := range rec.events {
		if e.Type != EventToolOutput {
			continue
		}
		if e.ID != "p1" || e.Name != "probe" || e.Nested == nil {
			t.Fatalf("a tool_output not nested under the call: %+v", e)
		}
		nested = append(nested, string(e.Nested.Type))
		lines.WriteString(e.Text)
		if e.Nested.Type == EventDone && e.Nested.DoneReason != DoneStop {
			t.Errorf("the child's done says %s", e.Nested.DoneReason)
		}
	}
	got := strings.Join(nested, " ")
	if !strings.HasPrefix(got, "tool_call") || !strings.Contains(got, "tool_result") || !strings.HasSuffix(got, "done") {
		t.Errorf("nested events: %s", got)
	}
	if !strings.Contains(lines.String(), "→ read_file {\"path\":\"a.txt\"}") || !strings.Contains(lines.String(), "✓ submit_report") {
		t.Errorf("rendered lines:\n%s", lines.String())
	}
	// The JSON form carries the child's event.
	for _, e := range rec.events {
		if e.Type == EventToolOutput && e.Nested.Type == EventToolCall {
			b, _ := json.Marshal(e)
			if !strings.Contains(string(b), `"type":"tool_output","id":"p1","name":"probe","text":"→ scratchpad`) || !strings.Contains(string(b), `"event":{"type":"tool_call"`) {
				t.Errorf("json: %s", b)
			}
			break
		}
	}
	// The child had only its own tools, the scratchpad and submit.
	reqs := srv.RequestsTo("/api/chat")
	var body struct {
		Messages []llm.Message `json:"messages"`
		Tools    []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	reqs[1].JSON(t, &body)
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "read_file,scratchpad,submit_report" {
		t.Errorf("the child's tools: %v", names)
	}
	if body.Messages[0].Content != "you probe" || body.Messages[1].Content != "what is in a.txt?" {
		t.Errorf("the child's prompt: %+v", body.Messages)
	}
}

func TestSubAgentReportCorrected(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{OutputSchema: answerSchema, Scratchpad: 3,
		Check: func(r json.RawMessage) error {
			if strings.Contains(string(r), "guess") {
				return errString("do not guess")
			}
			return nil
		}})
	srv.Enqueue("/api/chat",
		stream(llmtest.Call("probe", `{"task":"q"}`)),
		stream(llmtest.Call("submit_report", `{"answer":"early"}`)), // no scratchpad yet
		stream(llmtest.Call("scratchpad", `{"explored":"x","still_needed":""}`)),
		stream(llmtest.Call("submit_report", `{"reply":"wrong field"}`)), // schema
		stream(llmtest.Call("submit_report", `{"answer":"a guess"}`)),    // Check
		stream(llmtest.Call("submit_report", `{"answer":"right"}`)),
		stream(llmtest.Text("ok")),
	)
	rec := &recorder{}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Reason != DoneStop {
		t.Fatalf("%+v", res)
	}
	var errs []string
	for _, e := range rec.events {
		if e.Type == EventToolOutput && e.Nested.Type == EventToolResult && !e.Nested.OK {
			errs = append(errs, e.Nested.Error)
		}
	}
	if len(errs) != 3 || !strings.Contains(errs[0], "update your scratchpad first") || !strings.Contains(errs[1], "answer") || !strings.Contains(errs[2], "do not guess") {
		t.Errorf("the child was told: %q", errs)
	}
	if r := rec.results(); len(r) != 1 || r[0].Output != `{"answer":"right"}` {
		t.Errorf("%+v", r)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

func TestSubAgentScratchpadOverdue(t *testing.T) {
	srv, a, log := subSetup(t, &SubAgent{Scratchpad: 1})
	srv.Enqueue("/api/chat",
		stream(llmtest.Call("probe", `{"task":"q"}`)),
		stream(llmtest.Call("read_file", `{"path":"a"}`)),
		stream(llmtest.Call("read_file", `{"path":"b"}`)), // overdue: refused
		stream(llmtest.Call("scratchpad", `{"explored":"a","still_needed":"b"}`)),
		stream(llmtest.Call("read_file", `{"path":"b"}`)),
		stream(llmtest.Text("a and b")),
		stream(llmtest.Text("done")),
	)
	rec := &recorder{}
	a.Run(context.Background(), user("go"), rec.emit)
	if strings.Join(*log, "|") != "read a|read b" {
		t.Errorf("ran %v", *log)
	}
	if r := rec.results(); len(r) != 1 || r[0].Output != "a and b" {
		t.Errorf("a sub-agent without a schema answers in text: %+v", r)
	}
}

func TestSubAgentAnswerAsTextAndRepair(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{OutputSchema: answerSchema})
	srv.Enqueue("/api/chat",
		stream(llmtest.Call("probe", `{"task":"q1"}`)),
		stream(llmtest.Text("Here:\n```json\n{\"answer\": \"in text\"}\n```")),
		stream(llmtest.Call("probe", `{"task":"q2"}`)),
		stream(llmtest.Text("I think it is 4.")),                // no report
		stream(llmtest.Call("submit_report", `{"answer":"4"}`)), // the repair turn
		stream(llmtest.Text("both done")),
	)
	rec := &recorder{}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Text != "both done" {
		t.Fatalf("%+v", res)
	}
	r := rec.results()
	if len(r) != 2 || r[0].Output != `{"answer":"in text"}` || r[1].Output != `{"answer":"4"}` {
		t.Fatalf("%+v", r)
	}
	var body struct{ Messages []llm.Message }
	srv.RequestsTo("/api/chat")[4].JSON(t, &body)
	last := body.Messages[len(body.Messages)-1]
	if last.Role != llm.RoleUser || !strings.Contains(last.Content, "You have not sent a valid report") || body.Messages[2].Content != "I think it is 4." {
		t.Errorf("the repair turn: %+v", body.Messages)
	}
}

func TestSubAgentOutOfTurns(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{OutputSchema: answerSchema, Scratchpad: 5, MaxTurns: 2, Repairs: -1})
	srv.Enqueue("/api/chat",
		stream(llmtest.Call("probe", `{"task":"q"}`)),
		stream(llmtest.Call("scratchpad", `{"explored":"the docs","still_needed":"the code"}`)),
		stream(llmtest.Call("read_file", `{"path":"a"}`)),
		stream(llmtest.Text("gave up")),
	)
	rec := &recorder{}
	a.Run(context.Background(), user("go"), rec.emit)
	r := rec.results()
	if len(r) != 1 || r[0].OK || !strings.Contains(r[0].Error, "turn limit") || !strings.Contains(r[0].Error, "explored: the docs; still needed: the code") {
		t.Fatalf("%+v", r)
	}
}

func TestSubAgentToolsAndKind(t *testing.T) {
	var log []string
	reg := testTools(t, &log)
	inner := &SubAgent{Name: "inner", Description: "d", Tools: reg, Select: []string{"read_file"}}
	reg.Add(inner)
	ro := &SubAgent{Name: "ro", Description: "d", Tools: reg, Select: []string{"*", "!write_file", "!run_shell_command"}}
	kids, err := ro.childTools()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(kids.Names(), ","); got != "read_file,crash" {
		t.Errorf("a child got %s (never another sub-agent)", got)
	}
	if ro.Kind() != tool.ReadOnly || inner.Kind() != tool.ReadOnly {
		t.Error("read-only sub-agents")
	}
	if (&SubAgent{Tools: reg, Select: []string{"write_file"}}).Kind() != tool.Edit {
		t.Error("a sub-agent that edits is an Edit tool")
	}
	if (&SubAgent{Tools: reg, Select: []string{"nope"}}).Kind() != tool.Execute {
		t.Error("a sub-agent whose tools cannot be chosen is treated as Execute")
	}
	// Plan mode runs a read-only sub-agent.
	if ask, refuse := NeedsApproval(ModePlan, ro.Kind()); ask || refuse != "" {
		t.Error("plan mode refuses a read-only sub-agent")
	}
}

func TestSubAgentOutsideAnAgent(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat", stream(llmtest.Call("read_file", `{"path":"x"}`)), stream(llmtest.Text("fine")))
	var log []string
	s := &SubAgent{Name: "s", Tools: testTools(t, &log), Select: []string{"read_file"},
		Provider: ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), Model: "m"}
	var progress strings.Builder
	res, err := s.Run(context.Background(), tool.Call{ID: "c", Args: json.RawMessage(`{"task":"t"}`), Progress: func(s string) { progress.WriteString(s) }})
	if err != nil || res.Output != "fine" {
		t.Fatalf("%+v %v", res, err)
	}
	if !strings.Contains(progress.String(), "→ read_file") {
		t.Errorf("progress: %q", progress.String())
	}
	if _, err := (&SubAgent{Name: "s"}).Run(context.Background(), tool.Call{Args: json.RawMessage(`{"task":"t"}`)}); err == nil || !strings.Contains(err.Error(), "no model provider") {
		t.Errorf("%v", err)
	}
	if _, err := s.Run(context.Background(), tool.Call{Args: json.RawMessage(`{"task":"  "}`)}); err == nil {
		t.Error("an empty task ran")
	}
}

func TestSubAgentSpec(t *testing.T) {
	var log []string
	reg := testTools(t, &log)
	for _, bad := range []SubAgentSpec{
		{Name: "a b", Description: "d", Prompt: "p"},
		{Name: "a", Prompt: "p"},
		{Name: "a", Description: "d"},
		{Name: "a", Description: "d", Prompt: "p", OutputSchema: `{"type":"array"}`},
		{Name: "a", Description: "d", Prompt: "p", OutputSchema: `not json`},
	} {
		if _, err := bad.SubAgent(reg, nil, nil); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	s, err := SubAgentSpec{Name: "reviewer", Description: "reviews", Prompt: "review", OutputSchema: string(answerSchema), MaxTurns: 7}.SubAgent(reg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// By default it gets the caller's read-only tools (all of them).
	if sel, err := s.Tools.Select(tool.Profile{Tools: s.Select}); err != nil || strings.Join(sel.Names(), ",") != "read_file,crash" || s.MaxTurns != 7 || s.Kind() != tool.ReadOnly || s.OutputSchema == nil {
		t.Errorf("%+v (%v)", s, err)
	}
	if err := reg.Add(s); err != nil {
		t.Fatal(err)
	}
}

func TestInvestigatorChecksFiles(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pkg"), 0o755)
	os.WriteFile(filepath.Join(root, "pkg", "a.go"), []byte("package pkg\n\nfunc A() {}\n"), 0o644)
	check := func(r string) error { return checkReportFiles(root, json.RawMessage(r)) }
	if err := check(`{"summary":"s","relevant_files":[{"path":"pkg/a.go","reason":"r","lines":[{"start":1,"end":3}]}],"open_questions":[]}`); err != nil {
		t.Error(err)
	}
	if err := check(`{"summary":"s","relevant_files":[{"path":"` + filepath.Join(root, "pkg/a.go") + `","reason":"r"}],"open_questions":[]}`); err != nil {
		t.Errorf("an absolute path inside the root: %v", err)
	}
	for _, c := range []struct{ report, want string }{
		{`{"relevant_files":[{"path":"pkg/b.go","reason":"r"}]}`, "no such file"},
		{`{"relevant_files":[{"path":"../x","reason":"r"}]}`, "not inside the project"},
		{`{"relevant_files":[{"path":"/etc/passwd","reason":"r"}]}`, "not inside the project"},
		{`{"relevant_files":[{"path":"pkg/a.go","reason":"r","lines":[{"start":9,"end":12}]}]}`, "has 3 lines"},
		{`{"relevant_files":[{"path":"pkg/a.go","reason":"r","lines":[{"start":3,"end":1}]}]}`, "end before"},
	} {
		if err := check(c.report); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.report, err)
		}
	}
	if _, err := CodebaseInvestigator(InvestigatorOptions{Tools: testTools(t, new([]string))}); err == nil || !strings.Contains(err.Error(), "needs the list_directory tool") {
		t.Errorf("%v", err)
	}
}

func TestSubAgentApprovalsReachTheUser(t *testing.T) {
	srv, a, log := subSetup(t, &SubAgent{Select: []string{"write_file"}})
	srv.Enqueue("/api/chat",
		stream(llmtest.Call("probe", `{"task":"write b"}`)),
		stream(llmtest.CallID("w1", "write_file", `{"path":"b.txt"}`)),
		stream(llmtest.Text("wrote it")),
		stream(llmtest.Text("done")),
	)
	var asked []Request
	o := RunOptions{Approver: ApproverFunc(func(ctx context.Context, r Request) (Answer, error) {
		asked = append(asked, r)
		return Answer{Decision: Allow}, nil
	})}
	rec := &recorder{}
	a.RunWith(context.Background(), user("go"), o, rec.emit)
	// The sub-agent that edits is approved, then its edit.
	if len(asked) != 2 || asked[0].Tool != "probe" || asked[0].Kind != tool.Edit || asked[1].Tool != "write_file" || asked[1].ID != "w1" {
		t.Fatalf("asked: %+v", asked)
	}
	var top []string
	for _, e := range rec.events {
		if e.Type == EventApprovalRequired {
			top = append(top, e.ID)
		}
	}
	if len(top) != 2 || top[1] != "w1" {
		t.Errorf("approval events: %v", top)
	}
	if strings.Join(*log, "|") != "write b.txt" {
		t.Errorf("%v", *log)
	}
}
