package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// withPlan offers the plan tool (update_plan) besides the fixture's tools,
// and holds the model to its plan (strict_plan).
func withPlan(s *setup) {
	s.Config.Profile.Tools = append(s.Config.Profile.Tools, agent.PlanToolName)
	s.Config.Profile.StrictPlan = true
}

// planArgs is the arguments of an update_plan call: each step "text:status".
func planArgs(steps ...string) string {
	var p agent.Plan
	for _, s := range steps {
		text, status, _ := strings.Cut(s, ":")
		st := agent.PlanStep{Step: text, Status: agent.PlanStatus(status)}
		if st.Status == agent.PlanSkipped {
			st.Reason = "not needed"
		}
		p.Steps = append(p.Steps, st)
	}
	data, _ := json.Marshal(p)
	return string(data)
}

// planScript is a turn that plans three steps, does the first two, answers
// with the third still open (strict_plan sends it back), then skips the
// third and answers; pause goes between the replies' chunks.
func planScript(pause time.Duration) []llmtest.Scenario {
	call := func(id string, steps ...string) llmtest.Scenario {
		return llmtest.OllamaStream("m", llmtest.Pause(pause), llmtest.CallID(id, agent.PlanToolName, planArgs(steps...)))
	}
	return []llmtest.Scenario{
		call("p1", "Read the note:in_progress", "Write the note:pending", "Check it:pending"),
		llmtest.OllamaStream("m", llmtest.Pause(pause), llmtest.CallID("r1", "read_note", `{}`)),
		call("p2", "Read the note:done", "Write the note:in_progress", "Check it:pending"),
		call("p3", "Read the note:done", "Write the note:done", "Check it:pending"),
		llmtest.OllamaStream("m", llmtest.Pause(pause), llmtest.Text("Done, I think.")),
		call("p4", "Read the note:done", "Write the note:done", "Check it:skipped"),
		llmtest.OllamaStream("m", llmtest.Pause(pause), llmtest.Text("All done.")),
	}
}

// planOf decodes a plan event's steps.
func planOf(t *testing.T, fr frame) agent.Plan {
	t.Helper()
	var p agent.Plan
	if err := json.Unmarshal([]byte(fr.Data), &p); err != nil {
		t.Fatalf("plan event %s: %v", fr.Data, err)
	}
	return p
}

func statuses(p *agent.Plan) string {
	if p == nil {
		return "<nil>"
	}
	var out []string
	for _, s := range p.Steps {
		out = append(out, string(s.Status))
	}
	return strings.Join(out, ",")
}

// checkPlanStream checks a plan turn's events: a plan event after each
// update_plan call and before its result, the reminder once, the turn
// ending with the answer.
func checkPlanStream(t *testing.T, frs []frame) {
	t.Helper()
	var order []string
	var plans []string
	reminders := 0
	for _, fr := range frs {
		switch fr.Type {
		case "tool_call", "tool_result":
			if fr.str("name") == agent.PlanToolName {
				order = append(order, fr.Type+" "+fr.str("id"))
			}
		case "plan":
			if r := fr.str("reminder"); r != "" {
				reminders++
				if fr.str("id") != "" || !strings.Contains(r, "Check it") {
					t.Errorf("reminder event %s", fr.Data)
				}
				order = append(order, "reminder")
				continue
			}
			order = append(order, "plan "+fr.str("id"))
			p := planOf(t, fr)
			plans = append(plans, statuses(&p))
		}
	}
	want := []string{
		"tool_call p1", "plan p1", "tool_result p1",
		"tool_call p2", "plan p2", "tool_result p2",
		"tool_call p3", "plan p3", "tool_result p3",
		"reminder",
		"tool_call p4", "plan p4", "tool_result p4",
	}
	if !slices.Equal(order, want) {
		t.Errorf("plan events in order %v\nwant %v", order, want)
	}
	wantPlans := []string{"in_progress,pending,pending", "done,in_progress,pending", "done,done,pending", "done,done,skipped"}
	if !slices.Equal(plans, wantPlans) {
		t.Errorf("plans %v, want %v", plans, wantPlans)
	}
	if last := frs[len(frs)-1]; last.Type != "done" || last.str("text") != "All done." {
		t.Errorf("the turn ends with %s", last.Data)
	}
}

// TestPlanOverHTTP: a turn that plans and completes its steps streams plan
// events; the session then has the plan, and the reminder strict_plan sent
// is stored as Hearth's message (reminder: true), not the user's. A fork
// from before the last update has the plan of that point.
func TestPlanOverHTTP(t *testing.T) {
	f := newFixture(t, withPlan)
	id := f.newSession()

	// A session without a plan says so: "plan": null.
	var raw map[string]json.RawMessage
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &raw)
	if p, ok := raw["plan"]; !ok || string(p) != "null" {
		t.Errorf("a new session's plan is %s (present: %v), want null", p, ok)
	}

	f.fake.Enqueue("/api/chat", planScript(0)...)
	frs := f.turn(id, map[string]any{"message": "write the note, with a plan"}).rest()
	checkPlanStream(t, frs)
	// The plan event is exactly the contract's JSON.
	for _, fr := range frs {
		if fr.Type == "plan" && fr.str("id") == "p4" {
			want := `{"type":"plan","id":"p4","steps":[{"step":"Read the note","status":"done"},{"step":"Write the note","status":"done"},{"step":"Check it","status":"skipped","reason":"not needed"}]}`
			if fr.Data != want {
				t.Errorf("plan event\n got %s\nwant %s", fr.Data, want)
			}
		}
	}

	var d sessionDetail
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if statuses(d.Plan) != "done,done,skipped" || d.Plan.Steps[2].Reason != "not needed" || d.Plan.Steps[0].Step != "Read the note" {
		t.Errorf("the session's plan: %+v", d.Plan)
	}
	// The reminder is a user message marked as Hearth's.
	var reminderSeq, p3Seq int
	users := 0
	for _, m := range d.Messages {
		if m.Role == "user" {
			users++
			if m.Reminder {
				reminderSeq = m.Seq
			}
		}
		for _, c := range m.ToolCalls {
			if c.ID == "p3" {
				p3Seq = m.Seq
			}
		}
	}
	if users != 2 || reminderSeq == 0 || p3Seq == 0 {
		t.Fatalf("messages: %d user messages, reminder at %d, p3 at %d: %+v", users, reminderSeq, p3Seq, d.Messages)
	}
	// On the wire: "reminder": true on that message alone.
	var wire struct {
		Messages []map[string]any `json:"messages"`
	}
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &wire)
	for _, m := range wire.Messages {
		seq, _ := m["seq"].(float64)
		r, has := m["reminder"]
		switch {
		case int(seq) == reminderSeq && r != true:
			t.Errorf("the reminder message comes out as %v", m)
		case int(seq) != reminderSeq && has:
			t.Errorf("message %v has reminder %v", seq, r)
		}
	}

	// A fork through the p3 call's answer has the plan of that point.
	var fork sessionJSON
	f.call("POST", "/v1/sessions/"+id+"/fork", map[string]any{"through": p3Seq + 1}, http.StatusCreated, &fork)
	var fd sessionDetail
	f.call("GET", "/v1/sessions/"+fork.ID, nil, http.StatusOK, &fd)
	if statuses(fd.Plan) != "done,done,pending" {
		t.Errorf("the fork's plan: %+v", fd.Plan)
	}
	// A fork through the first prompt alone has none.
	f.call("POST", "/v1/sessions/"+id+"/fork", map[string]any{"through": d.Messages[0].Seq}, http.StatusCreated, &fork)
	f.call("GET", "/v1/sessions/"+fork.ID, nil, http.StatusOK, &raw)
	if string(raw["plan"]) != "null" {
		t.Errorf("a fork before any plan has plan %s", raw["plan"])
	}
}

// TestSharedStorePlanThroughAnotherInstance: the plan events of a turn A
// runs reach a stream B serves, each in its place, and B's session JSON
// has the plan.
func TestSharedStorePlanThroughAnotherInstance(t *testing.T) {
	fx := sharedFixtures(t, 2, withPlan)
	a, b := fx[0], fx[1]
	id := a.newSession()
	a.fake.Enqueue("/api/chat", planScript(20*time.Millisecond)...)
	own := a.turn(id, map[string]any{"message": "write the note, with a plan"})
	first := own.until("session")
	viaB := b.follow(id, "")
	all := append(first, own.rest()...)
	checkPlanStream(t, all)
	gotB := viaB.rest()
	if !slices.Equal(datas(gotB), datas(all)) {
		t.Errorf("B streamed\n%s\nA streamed\n%s", strings.Join(datas(gotB), "\n"), strings.Join(datas(all), "\n"))
	}
	var d sessionDetail
	b.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if statuses(d.Plan) != "done,done,skipped" {
		t.Errorf("B's session plan: %+v", d.Plan)
	}
}
