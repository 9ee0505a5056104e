package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/tool"
)

func TestParsePlan(t *testing.T) {
	long := strings.Repeat("é", 400)
	tests := []struct {
		name, args string
		want       string // Text(), or the error's start
		err        bool
	}{
		{"three steps", `{"steps":[{"step":"Read main.go","status":"done"},{"step":"Fix  the\nparser","status":"in_progress"},{"step":"Run tests","status":"pending"}]}`,
			"1. [done] Read main.go\n2. [in progress] Fix the parser\n3. [pending] Run tests", false},
		{"skipped with a reason", `{"steps":[{"step":"Run tests","status":"skipped","reason":"there are none"}]}`,
			"1. [skipped: there are none] Run tests", false},
		{"empty clears", `{"steps":[]}`, "", false},
		{"skipped without a reason", `{"steps":[{"step":"Run tests","status":"skipped"}]}`, "step 1 (\"Run tests\") is skipped without a reason", true},
		{"two in progress", `{"steps":[{"step":"a","status":"in_progress"},{"step":"b","status":"in_progress"}]}`, "more than one step is in_progress", true},
		{"unknown status", `{"steps":[{"step":"a","status":"completed"}]}`, `step 1 has status "completed": use pending, in_progress, done or skipped`, true},
		{"no text", `{"steps":[{"step":"  ","status":"pending"}]}`, "step 1 has no text", true},
		{"not an object", `["a"]`, "the arguments are not a plan", true},
		{"too many", `{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"step":"x","status":"pending"},`, MaxPlanSteps+1), ",") + `]}`, "the plan has 31 steps", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePlan(json.RawMessage(tc.args))
			if tc.err {
				if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
					t.Fatalf("error %v, want one starting %q", err, tc.want)
				}
				return
			}
			if err != nil || p.Text() != tc.want {
				t.Fatalf("%v\n%s\nwant\n%s", err, p.Text(), tc.want)
			}
		})
	}
	p, err := ParsePlan(json.RawMessage(`{"steps":[{"step":"` + long + `","status":"pending"}]}`))
	if err != nil || len(p.Steps[0].Step) > maxPlanStepText+len("…") || !strings.HasSuffix(p.Steps[0].Step, "…") || !json.Valid([]byte(`"`+p.Steps[0].Step+`"`)) {
		t.Errorf("a long step is not cut on a character: %v %q", err, p.Steps[0].Step)
	}
}

func planCall(id string, steps ...string) llm.ToolCall {
	var b strings.Builder
	for i := 0; i < len(steps); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"step":%q,"status":%q}`, steps[i], steps[i+1])
	}
	return llm.ToolCall{ID: id, Name: PlanToolName, Args: json.RawMessage(`{"steps":[` + b.String() + `]}`)}
}

func TestPlanOf(t *testing.T) {
	asst := func(calls ...llm.ToolCall) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}
	}
	result := func(id, content string) llm.Message {
		return llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: PlanToolName, Content: content}
	}
	first := planCall("c1", "a", "in_progress", "b", "pending")
	second := planCall("c2", "a", "done", "b", "in_progress")
	tests := []struct {
		name string
		msgs []llm.Message
		want string
	}{
		{"none", []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, ""},
		{"the last accepted", []llm.Message{asst(first), result("c1", "Plan saved: 0 of 2"), asst(second), result("c2", "Plan saved: 1 of 2")}, "1. [done] a\n2. [in progress] b"},
		{"a refused one does not count", []llm.Message{asst(first), result("c1", "Plan saved: 0 of 2"), asst(second), result("c2", "Error: more than one step")}, "1. [in progress] a\n2. [pending] b"},
		{"one never run does not count", []llm.Message{asst(first), result("c1", "Plan saved: 0 of 2"), asst(second), result("c2", "not run: the turn was cancelled")}, "1. [in progress] a\n2. [pending] b"},
		{"one without a result does not count", []llm.Message{asst(first), result("c1", "Plan saved: 0 of 2"), asst(second)}, "1. [in progress] a\n2. [pending] b"},
		{"cleared", []llm.Message{asst(first), result("c1", "Plan saved: 0 of 2"), asst(planCall("c3")), result("c3", "Plan cleared.")}, ""},
		// Servers reuse ids across replies: a call is paired with the
		// results right after its own reply only.
		{"a reused id that never ran", []llm.Message{asst(planCall("c1", "a", "in_progress")), result("c1", "Plan saved: 0 of 1"), asst(planCall("c1", "a", "done"))}, "1. [in progress] a"},
		{"an unreadable call with a reused id", []llm.Message{asst(planCall("c1", "a", "in_progress")), result("c1", "Plan saved: 0 of 1"),
			asst(llm.ToolCall{ID: "c1", Name: PlanToolName, Args: json.RawMessage(`{}`), ArgsError: "bad"}), result("c1", "Plan cleared.")}, "1. [in progress] a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanOf(tc.msgs).Text(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// planSteps is a plan tool call's arguments, steps as name/status pairs.
func planSteps(steps ...string) string {
	return string(planCall("", steps...).Args)
}

func planRegistry(t *testing.T) *tool.Registry {
	var log []string
	reg := testTools(t, &log)
	if err := reg.Add(NewPlanTool()); err != nil {
		t.Fatal(err)
	}
	return reg
}

// TestPlanEventsInOrder: a turn that plans three steps and completes them
// streams the whole plan after each call of the plan tool, between the
// call and its result, and ends with the plan in the result.
func TestPlanEventsInOrder(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(w.path,
				w.stream("m", llmtest.Call(PlanToolName, planSteps("Read a", "in_progress", "Read b", "pending", "Answer", "pending"))),
				w.stream("m", llmtest.Call("read_file", `{"path":"a"}`), llmtest.Call(PlanToolName, planSteps("Read a", "done", "Read b", "in_progress", "Answer", "pending"))),
				w.stream("m", llmtest.Call("read_file", `{"path":"b"}`), llmtest.Call(PlanToolName, planSteps("Read a", "done", "Read b", "done", "Answer", "in_progress"))),
				w.stream("m", llmtest.Call(PlanToolName, planSteps("Read a", "done", "Read b", "done", "Answer", "done"))),
				w.stream("m", llmtest.Text("a and b.")),
			)
			rec := &recorder{}
			a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t), StrictPlan: true}
			res := a.Run(context.Background(), user("read a and b"), rec.emit)
			if res.Reason != DoneStop || res.Text != "a and b." {
				t.Fatalf("%+v", res)
			}
			var plans []string
			for i, e := range rec.events {
				if e.Type != EventPlan {
					continue
				}
				called := false
				for _, p := range rec.events[:i] {
					called = called || (p.Type == EventToolCall && p.ID == e.ID)
				}
				if next := rec.events[i+1]; !called || next.Type != EventToolResult || next.ID != e.ID || !next.OK {
					t.Errorf("plan event %d not after its call and just before its result: %v %+v", i, called, next)
				}
				var s []string
				for _, st := range e.Plan.Steps {
					s = append(s, string(st.Status))
				}
				plans = append(plans, strings.Join(s, ","))
			}
			want := []string{"in_progress,pending,pending", "done,in_progress,pending", "done,done,in_progress", "done,done,done"}
			if strings.Join(plans, " ") != strings.Join(want, " ") {
				t.Errorf("plans %v, want %v", plans, want)
			}
			if res.Plan == nil || len(res.Plan.Open()) != 0 || len(res.Plan.Steps) != 3 {
				t.Errorf("result plan %+v", res.Plan)
			}
			// Every step done: strict as it is, the answer was taken.
			if n := len(srv.RequestsTo(w.path)); n != 5 {
				t.Errorf("%d requests", n)
			}
			b, _ := json.Marshal(rec.events[2])
			if !strings.HasPrefix(string(b), `{"type":"plan","id":"`) || !strings.Contains(string(b), `"steps":[{"step":"Read a","status":"in_progress"},{"step":"Read b","status":"pending"}`) {
				t.Errorf("plan event JSON: %s", b)
			}
		})
	}
}

// TestStrictPlanSendsBackOnce: an answer while steps are open sends the
// model back once, with which steps; a second such answer ends the turn.
// Without strictness the first answer ends it.
func TestStrictPlanSendsBackOnce(t *testing.T) {
	for _, strict := range []bool{true, false} {
		t.Run(fmt.Sprint("strict=", strict), func(t *testing.T) {
			w := wires[0]
			srv := llmtest.New(t)
			srv.Enqueue(w.path,
				w.stream("m", llmtest.Call(PlanToolName, planSteps("Read a", "in_progress", "Run tests", "pending"))),
				w.stream("m", llmtest.Text("Done early.")),
				w.stream("m", llmtest.Text("Still done.")),
			)
			rec := &recorder{}
			var added []llm.Message
			a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t), StrictPlan: strict}
			res := a.RunWith(context.Background(), user("do it"), RunOptions{OnMessage: func(m llm.Message, _ bool) { added = append(added, m) }}, rec.emit)
			if res.Reason != DoneStop {
				t.Fatalf("%+v", res)
			}
			reqs := srv.RequestsTo(w.path)
			if !strict {
				if len(reqs) != 2 || res.Text != "Done early." {
					t.Fatalf("%d requests, text %q", len(reqs), res.Text)
				}
				return
			}
			if len(reqs) != 3 || res.Text != "Still done." {
				t.Fatalf("%d requests, text %q", len(reqs), res.Text)
			}
			var reminders []Event
			for _, e := range rec.events {
				if e.Type == EventPlan && e.Reminder != "" {
					reminders = append(reminders, e)
				}
			}
			want := `Your plan still has 2 open step(s): "Read a" (in progress), "Run tests" (pending).`
			if len(reminders) != 1 || !strings.HasPrefix(reminders[0].Reminder, want) || len(reminders[0].Plan.Steps) != 2 {
				t.Fatalf("reminders %+v", reminders)
			}
			// The reminder is a user message of the conversation, after
			// the early answer, and the third request carries it last.
			var roles []string
			for _, m := range added {
				roles = append(roles, string(m.Role))
			}
			if strings.Join(roles, ",") != "assistant,tool,assistant,user,assistant" || added[3].Content != reminders[0].Reminder {
				t.Errorf("messages %v", roles)
			}
			var body struct {
				Messages []llm.Message `json:"messages"`
			}
			reqs[2].JSON(t, &body)
			if last := body.Messages[len(body.Messages)-1]; last.Role != llm.RoleUser || last.Content != reminders[0].Reminder {
				t.Errorf("last message sent: %+v", last)
			}
		})
	}
}

// TestStrictPlanOnlyForThisTurnsPlan: a plan left open by an earlier turn
// does not hold an unrelated question to it.
func TestStrictPlanOnlyForThisTurnsPlan(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path, w.stream("m", llmtest.Text("42.")))
	history := []llm.Message{
		{Role: llm.RoleUser, Content: "do it"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{planCall("c1", "a", "in_progress")}},
		{Role: llm.RoleTool, ToolCallID: "c1", ToolName: PlanToolName, Content: "Plan saved: 0 of 1 steps finished."},
		{Role: llm.RoleAssistant, Content: "stopped"},
		{Role: llm.RoleUser, Content: "what is 6*7?"},
	}
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t), StrictPlan: true}
	res := a.Run(context.Background(), history, func(Event) {})
	if res.Reason != DoneStop || res.Text != "42." || res.Plan == nil || res.Plan.Steps[0].Step != "a" {
		t.Fatalf("%+v", res)
	}
}

// TestPlanKeptThroughCompression: when older turns are summarised, the
// summary carries the plan, so the model still knows its steps.
func TestPlanKeptThroughCompression(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	big := strings.Repeat("word ", 900)
	srv.Enqueue(w.path,
		w.stream("m", llmtest.Call(PlanToolName, planSteps("Read a", "in_progress", "Answer", "pending"))),
		w.stream("m", llmtest.Call("read_file", `{"path":"a"}`), llmtest.Usage(3500, 5)),
		// The summary request, then the next reply.
		w.stream("m", llmtest.Text("- read a")),
		w.stream("m", llmtest.Text("The answer.")),
	)
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t), ContextLength: 4096}
	var summary llm.Message
	history := []llm.Message{{Role: llm.RoleUser, Content: big}, {Role: llm.RoleAssistant, Content: "ok"}, {Role: llm.RoleUser, Content: "read a and answer"}}
	res := a.RunWith(context.Background(), history, RunOptions{OnCompact: func(_ int, s llm.Message) { summary = s }}, func(Event) {})
	if res.Reason != DoneStop || res.Text != "The answer." {
		t.Fatalf("%+v", res)
	}
	if !strings.Contains(summary.Content, "- read a") || !strings.Contains(summary.Content, "Your plan (update_plan) so far:\n1. [in progress] Read a\n2. [pending] Answer") {
		t.Fatalf("summary:\n%s", summary.Content)
	}
}

// TestUnreadableCallsStop: calls that cannot be read go back to the model
// with what was wrong, and a few in a row end the turn with a clear error.
func TestUnreadableCallsStop(t *testing.T) {
	w := wires[1] // arguments as a string: they can be broken
	srv := llmtest.New(t)
	bad := w.stream("m", llmtest.Call("read_file", `{"path": [`))
	srv.Enqueue(w.path, bad, bad, bad)
	rec := &recorder{}
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t)}
	res := a.Run(context.Background(), user("read"), rec.emit)
	if res.Reason != DoneError || CodeOf(res.Err) != CodeUnreadableCalls || !strings.Contains(res.Err.Error(), "could not be read in 3 replies in a row") {
		t.Fatalf("%+v", res)
	}
	if n := len(rec.results()); n != 3 {
		t.Errorf("%d results", n)
	}
}

// TestPlanNotForSubAgents: a sub-agent's child never gets the plan tool.
func TestPlanNotForSubAgents(t *testing.T) {
	s := &SubAgent{Name: "probe", Tools: planRegistry(t), Select: []string{"@read-only"}}
	reg, err := s.childTools()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get(PlanToolName); ok || len(reg.Names()) == 0 {
		t.Errorf("child tools: %v", reg.Names())
	}
}

// TestCallsNotRunGetResults: the calls of a reply that did not run (the
// turn stopped, or the reply had more than MaxCallsPerReply) each get a
// tool_result event and a result in the history.
func TestCallsNotRunGetResults(t *testing.T) {
	w := wires[1]
	srv := llmtest.New(t)
	var many []llmtest.Part
	for i := range MaxCallsPerReply + 3 {
		many = append(many, llmtest.Call("read_file", fmt.Sprintf(`{"path":"f%d"}`, i)))
	}
	bad := func(n int) llmtest.Scenario {
		return w.stream("m", llmtest.Call("read_file", `{"path": [`+strings.Repeat(" ", n)), llmtest.Call("read_file", `{"path":"ok"}`), llmtest.Call("read_file", `{"path": {`+strings.Repeat(" ", n)))
	}
	srv.Enqueue(w.path, w.stream("m", many...), bad(1), bad(2), bad(3))
	rec := &recorder{}
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t)}
	res := a.Run(context.Background(), user("read"), rec.emit)
	if res.Reason != DoneError || CodeOf(res.Err) != CodeUnreadableCalls {
		t.Fatalf("%+v", res)
	}
	// (The fake numbers calls per reply: ids repeat across replies.)
	calls, results := 0, len(rec.results())
	for _, e := range rec.events {
		if e.Type == EventToolCall {
			calls++
		}
	}
	if calls != MaxCallsPerReply+3+9 || results != calls {
		t.Errorf("%d calls, %d results", calls, results)
	}
	notRun := 0
	for _, m := range res.Messages {
		if m.Role == llm.RoleTool && strings.HasPrefix(m.Content, "not run: at most 32 tool calls") {
			notRun++
		}
	}
	if notRun != 3 {
		t.Errorf("%d calls over the cap said so", notRun)
	}
}

// TestNoReminderOnTheLastCall: an answer on the last model call the turn
// allows is the answer, open steps or not: a reminder would leave no call
// to answer it.
func TestNoReminderOnTheLastCall(t *testing.T) {
	w := wires[0]
	srv := llmtest.New(t)
	srv.Enqueue(w.path,
		w.stream("m", llmtest.Call(PlanToolName, planSteps("Read a", "in_progress"))),
		w.stream("m", llmtest.Text("Here is the answer.")))
	a := &Agent{Provider: w.new(srv), Model: "m", Tools: planRegistry(t), StrictPlan: true, MaxTurns: 2}
	res := a.Run(context.Background(), user("go"), func(Event) {})
	if res.Reason != DoneStop || res.Text != "Here is the answer." {
		t.Fatalf("%+v", res)
	}
}
