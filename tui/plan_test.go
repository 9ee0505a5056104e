package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// plan builds a plan from "status:step" pairs ("skipped:step:reason").
func plan(steps ...string) *agent.Plan {
	p := &agent.Plan{}
	for _, s := range steps {
		f := strings.SplitN(s, ":", 3)
		st := agent.PlanStep{Status: agent.PlanStatus(f[0]), Step: f[1]}
		if len(f) == 3 {
			st.Reason = f[2]
		}
		p.Steps = append(p.Steps, st)
	}
	return p
}

// planArgs are the update_plan arguments for p.
func planArgs(p *agent.Plan) json.RawMessage {
	b, _ := json.Marshal(p)
	return b
}

func plainLines(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(xansi.Strip(l), " ")
	}
	return strings.Join(out, "\n")
}

func TestRenderPlan(t *testing.T) {
	th := newTheme(true, true)
	three := plan("done:Read the parser", "in_progress:Fix the off-by-one", "pending:Run the tests")
	ten := &agent.Plan{}
	for i := 1; i <= 10; i++ {
		st := agent.PlanPending
		switch {
		case i < 6:
			st = agent.PlanDone
		case i == 6:
			st = agent.PlanInProgress
		}
		ten.Steps = append(ten.Steps, agent.PlanStep{Step: fmt.Sprintf("Step %d", i), Status: st})
	}
	cases := []struct {
		name        string
		p           *agent.Plan
		width, room int
		want        string
	}{
		{"every state", plan("done:Read it", "in_progress:Fix it", "pending:Test it", "skipped:Ship it:no release today"), 44, 7,
			" Plan 2/4 ─────────────────────────────────\n" +
				"   ✓ Read it\n" +
				"   ▸ Fix it\n" +
				"   ○ Test it\n" +
				"   ⊘ Ship it (skipped: no release today)"},
		{"finished", plan("done:Read it", "skipped:Test it:none"), 40, 7,
			" Plan 2/2 ✓ done ──────────────────────\n" +
				"   ✓ Read it\n" +
				"   ⊘ Test it (skipped: none)"},
		{"cut to the width", three, 24, 7,
			" Plan 1/3 ─────────────\n" +
				"   ✓ Read the parser\n" +
				"   ▸ Fix the off-by-one\n" +
				"   ○ Run the tests"},
		{"narrower still", three, 16, 7,
			" Plan 1/3 ─────\n" +
				"   ✓ Read the …\n" +
				"   ▸ Fix the o…\n" +
				"   ○ Run the t…"},
		{"many steps: the current one and its neighbours", ten, 40, 7,
			" Plan 5/10 ────────────────────────────\n" +
				"   … 4 done\n" +
				"   ✓ Step 5\n" +
				"   ▸ Step 6\n" +
				"   ○ Step 7\n" +
				"   ○ Step 8\n" +
				"   … 2 more"},
		{"many steps at the start", plan("in_progress:A", "pending:B", "pending:C", "pending:D", "pending:E"), 40, 4,
			" Plan 0/5 ─────────────────────────────\n" +
				"   ▸ A\n" +
				"   ○ B\n" +
				"   … 3 more"},
		{"many steps at the end", plan("done:A", "done:B", "done:C", "done:D", "in_progress:E"), 40, 4,
			" Plan 4/5 ─────────────────────────────\n" +
				"   … 3 done\n" +
				"   ✓ D\n" +
				"   ▸ E"},
		{"a short window: one line", ten, 40, 3, " Plan 5/10 · ▸ Step 6"},
		{"a short window, a short plan", plan("in_progress:A", "pending:B"), 40, 3,
			" Plan 0/2 ─────────────────────────────\n" +
				"   ▸ A\n" +
				"   ○ B"},
		{"one line, finished", plan("done:A"), 40, 1, " Plan 1/1 ✓ done"},
		{"hostile text is stripped", plan("in_progress:\x1b]52;c;aGk=\x07Fix\x1b[2J it"), 40, 7,
			" Plan 0/1 ─────────────────────────────\n" +
				"   ▸ Fix it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := renderPlan(th, tc.p, tc.width, tc.room)
			if got := plainLines(lines); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if len(lines) > tc.room && tc.room >= 1 {
				t.Errorf("%d lines in a room of %d", len(lines), tc.room)
			}
			for _, l := range lines {
				if w := xansi.StringWidth(l); w > tc.width-1 {
					t.Errorf("a line of %d cells in a width of %d: %q", w, tc.width, l)
				}
				if strings.Contains(l, "\x1b]") || strings.Contains(l, "\x1b[2J") {
					t.Errorf("a control sequence reached the screen: %q", l)
				}
			}
		})
	}
}

// TestPlanWindow: every step is in the window or counted by a marker, the
// focus is always shown, and the lines never exceed the rows.
func TestPlanWindow(t *testing.T) {
	for n := 1; n <= 30; n++ {
		for rows := 3; rows <= 8; rows++ {
			for focus := 0; focus < n; focus++ {
				from, to := 0, n
				if n > rows {
					from, to = planWindow(n, focus, rows)
				}
				lines := to - from
				if from > 0 {
					lines++
				}
				if to < n {
					lines++
				}
				if focus < from || focus >= to || lines > rows || (n > rows && lines < rows) {
					t.Fatalf("n=%d rows=%d focus=%d: [%d, %d) in %d lines", n, rows, focus, from, to, lines)
				}
			}
		}
	}
}

// planTurn feeds a plan tool call, its plan event and its result.
func (f *fixture) planTurn(id string, p *agent.Plan) {
	f.events(agent.Event{Type: agent.EventToolCall, ID: id, Name: agent.PlanToolName, Args: planArgs(p)},
		agent.Event{Type: agent.EventPlan, ID: id, Plan: p},
		agent.Event{Type: agent.EventToolResult, ID: id, Name: agent.PlanToolName, OK: true, Output: "Plan saved."})
}

// lineOf is the index of the first screen line holding sub (-1: none).
func lineOf(screen, sub string) int {
	for i, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, sub) {
			return i
		}
	}
	return -1
}

// TestPlanPinned: the plan events pin the checklist between the
// conversation and the input, each change shown; the plan tool's card is
// one quiet line; the plan stays put while the conversation scrolls.
func TestPlanPinned(t *testing.T) {
	f := newFixture(t, 80, 24)
	f.busyTurn()
	f.m.tr.add(&userItem{text: "fix the parser"})
	f.planTurn("c1", plan("pending:Read the parser", "pending:Fix the off-by-one", "pending:Run the tests"))
	s := f.screen()
	wantScreen(t, f, "✓ plan updated: 0/3 · next: Read the parser", "Plan 0/3", "○ Read the parser", "○ Run the tests")
	if strings.Contains(s, `"steps"`) || strings.Contains(s, "update_plan") {
		t.Errorf("the card shows the raw call:\n%s", s)
	}
	if card, title, input := lineOf(s, "plan updated"), lineOf(s, "Plan 0/3"), lineOf(s, "╭"); !(card < title && title < input) {
		t.Errorf("the plan is not between the conversation and the input (card %d, plan %d, input %d):\n%s", card, title, input, s)
	}
	f.planTurn("c2", plan("in_progress:Read the parser", "pending:Fix the off-by-one", "pending:Run the tests"))
	wantScreen(t, f, "▸ Read the parser", "plan updated: 0/3 · now: Read the parser")
	f.planTurn("c3", plan("done:Read the parser", "in_progress:Fix the off-by-one", "pending:Run the tests"))
	wantScreen(t, f, "Plan 1/3", "✓ Read the parser", "▸ Fix the off-by-one", "○ Run the tests")

	// A long answer scrolls the conversation, not the plan.
	f.events(agent.Event{Type: agent.EventTextDelta, Text: strings.Repeat("a line of the answer\n\n", 40) + "THE END"})
	s = f.screen()
	if !strings.Contains(s, "THE END") || !strings.Contains(s, "▸ Fix the off-by-one") || lineOf(s, "Plan 1/3") > lineOf(s, "╭") || lineOf(s, "THE END") > lineOf(s, "Plan 1/3") {
		t.Errorf("the plan scrolled away:\n%s", s)
	}
	f.press("pgup")
	if s = f.screen(); strings.Contains(s, "THE END") || !strings.Contains(s, "▸ Fix the off-by-one") {
		t.Errorf("scrolled back, the plan is gone:\n%s", s)
	}

	// An approval prompt takes the room: the plan is one line meanwhile.
	f.press("pgdown")
	f.events(agent.Event{Type: agent.EventToolCall, ID: "c4", Name: "run_shell_command", Args: json.RawMessage(`{"command":"go test"}`)},
		agent.Event{Type: agent.EventApprovalRequired, ID: "c4", Name: "run_shell_command", Reason: "run `go test`"})
	s = f.screen()
	if !strings.Contains(s, "Plan 1/3 · ▸ Fix the off-by-one") || strings.Contains(s, "○ Run the tests") {
		t.Errorf("the plan under an approval:\n%s", s)
	}
	f.events(agent.Event{Type: agent.EventToolResult, ID: "c4", Name: "run_shell_command", OK: true, Output: "ok"})
	wantScreen(t, f, "○ Run the tests")

	// A plan the tool refuses is a failed card, saying why; the plan
	// shown stays.
	f.events(agent.Event{Type: agent.EventToolCall, ID: "c6", Name: agent.PlanToolName, Args: planArgs(plan("in_progress:A", "in_progress:B"))},
		agent.Event{Type: agent.EventToolResult, ID: "c6", Name: agent.PlanToolName, Error: "more than one step is in_progress"})
	wantScreen(t, f, "✗ update_plan 2 steps", "more than one step is in_progress", "▸ Fix the off-by-one")

	// Cleared, it goes.
	f.planTurn("c5", &agent.Plan{})
	s = f.screen()
	if strings.Contains(s, " Plan ") || !strings.Contains(s, "plan cleared") {
		t.Errorf("a cleared plan:\n%s", s)
	}
}

// TestPlanBoundedHeight: a long plan on a small window leaves the
// conversation most of the screen.
func TestPlanBoundedHeight(t *testing.T) {
	steps := make([]string, 20)
	for i := range steps {
		steps[i] = fmt.Sprintf("pending:Step %d", i+1)
	}
	steps[12] = "in_progress:Step 13"
	cases := []struct {
		w, h     int
		maxLines int
	}{{80, 24, 7}, {80, 40, 7}, {80, 15, 5}, {60, 12, 4}, {60, 9, 1}}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%dx%d", tc.w, tc.h), func(t *testing.T) {
			f := newFixture(t, tc.w, tc.h)
			f.busyTurn()
			f.planTurn("c1", plan(steps...))
			got := f.m.renderPinnedPlan()
			if len(got) > tc.maxLines || len(got) > max(tc.h/3, 1) {
				t.Errorf("%d lines of plan:\n%s", len(got), f.screen())
			}
			if s := f.screen(); !strings.Contains(s, "▸ Step 13") {
				t.Errorf("the current step is not shown:\n%s", s)
			}
			for _, l := range strings.Split(f.screen(), "\n") {
				if xansi.StringWidth(l) > tc.w {
					t.Errorf("a line wider than the window: %q", l)
				}
			}
			if n := strings.Count(f.screen(), "\n") + 1; n != tc.h {
				t.Errorf("%d screen lines in a window of %d", n, tc.h)
			}
		})
	}
}

// TestPlanCommand: /plan shows the whole plan in the conversation; /plan
// hide and /plan show take the checklist down and put it back.
func TestPlanCommand(t *testing.T) {
	f := newFixture(t, 60, 30)
	f.slash("/plan")
	wantScreen(t, f, "No plan in this session")
	f.busyTurn()
	f.planTurn("c1", plan("done:Read the parser and the lexer, which is long", "in_progress:Fix it", "skipped:Ship it:not today", "pending:Tell the user"))
	f.m.endJob()
	f.slash("/plan")
	it := lastItem[*planItem](t, f.m)
	if it.plan != f.m.plan {
		t.Error("/plan shows another plan")
	}
	wantScreen(t, f, " 1. ✓ Read the parser and the lexer", " 2. ▸ Fix it", " 3. ⊘ Ship it (skipped: not today)", " 4. ○ Tell the user")
	f.slash("/plan hide")
	s := f.screen()
	if f.m.planPinned() || strings.Contains(s, "Plan 2/4 ─") || !strings.Contains(s, "plan 2/4") {
		t.Errorf("hidden:\n%s", s)
	}
	f.slash("/plan show")
	if s = f.screen(); !f.m.planPinned() || !strings.Contains(s, "Plan 2/4 ─") {
		t.Errorf("shown again:\n%s", s)
	}
	f.slash("/plan nope")
	wantScreen(t, f, "/plan nope: use /plan, /plan show or /plan hide.")
	// Completion offers the two.
	f.m.input.SetValue("/plan ")
	f.m.input.CursorEnd()
	f.m.complete()
	if len(f.m.comp.items) != 2 || f.m.comp.items[0].label != "show" || f.m.comp.items[1].label != "hide" {
		t.Errorf("completion %+v", f.m.comp.items)
	}
}

// TestPlanReminderLive: a reminder is Hearth's note, not a prompt.
func TestPlanReminderLive(t *testing.T) {
	f := newFixture(t, 80, 30)
	f.busyTurn()
	p := plan("done:Read it", "pending:Fix it", "pending:Test it")
	f.planTurn("c1", p)
	f.events(agent.Event{Type: agent.EventPlan, Plan: p, Reminder: "Your plan still has 2 open step(s): …"})
	wantScreen(t, f, "· Hearth sent the model back: 2 plan steps open")
	for _, e := range f.m.tr.entries {
		if u, ok := e.it.(*userItem); ok {
			t.Errorf("a user item: %q", u.text)
		}
	}
	if s := f.screen(); strings.Contains(s, "Your plan still has") {
		t.Errorf("the reminder's text is shown as a message:\n%s", s)
	}
}

// TestPlanThroughTheAgent: a real turn that plans three steps and does
// them; the finished plan stays until the next prompt; a resumed session
// shows the plan as it was left, and its stored reminder as Hearth's note,
// which /rewind does not offer.
func TestPlanThroughTheAgent(t *testing.T) {
	f := newFixture(t, 100, 40)
	steps := []string{"Read the parser", "Fix the off-by-one", "Run the tests"}
	call := func(state ...agent.PlanStatus) llmtest.Scenario {
		p := &agent.Plan{}
		for i, s := range state {
			p.Steps = append(p.Steps, agent.PlanStep{Step: steps[i], Status: s})
		}
		return llmtest.OllamaStream("m", llmtest.Call(agent.PlanToolName, string(planArgs(p))))
	}
	P, I, D := agent.PlanPending, agent.PlanInProgress, agent.PlanDone
	f.srv.Enqueue("/api/chat",
		call(P, P, P), call(I, P, P), call(D, I, P), call(D, D, I), call(D, D, D),
		llmtest.OllamaStream("m", llmtest.Text("All three done.")))
	f.turn("fix the parser")
	s := f.screen()
	for _, want := range []string{"All three done.", "Plan 3/3 ✓ done", "✓ Read the parser", "✓ Run the tests", "plan updated: 3/3 · every step finished", "plan updated: 1/3 · now: Fix the off-by-one"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q:\n%s", want, s)
		}
	}
	id := f.m.sessionID

	// Resumed as it was left: the finished plan shows.
	f.slash("/session new")
	if f.m.plan != nil || strings.Contains(f.screen(), "Plan 3/3") {
		t.Errorf("a new session kept the plan:\n%s", f.screen())
	}
	f.slash("/session switch " + id)
	f.pump(func() bool { return f.m.sessionID == id })
	wantScreen(t, f, "Plan 3/3 ✓ done", "✓ Fix the off-by-one", "plan updated: 3/3")

	// The next prompt takes the finished plan down.
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("You are welcome.")))
	f.turn("thanks")
	if s = f.screen(); strings.Contains(s, "Plan 3/3") || !strings.Contains(s, "You are welcome.") {
		t.Errorf("the finished plan stayed after the next prompt:\n%s", s)
	}
	f.slash("/plan")
	wantScreen(t, f, "Plan 3/3", " 3. ✓ Run the tests")
	// Resumed after that prompt, it stays down.
	f.slash("/session switch " + id)
	f.pump(func() bool { return f.m.job == jobNone })
	if f.m.plan == nil || f.m.planPinned() {
		t.Errorf("resumed after the prompt: plan %v pinned %v", f.m.plan, f.m.planPinned())
	}

	// A stored reminder (a strict plan sent the model back) is Hearth's
	// note on resume, not a prompt, and /rewind does not offer it.
	st := f.bot.Store()
	ctx := context.Background()
	open := plan("done:Read the parser", "in_progress:Fix the off-by-one", "pending:Run the tests")
	msgs := []session.Message{
		{Message: llm.Message{Role: llm.RoleUser, Content: "fix the lexer too"}},
		{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "p1", Name: agent.PlanToolName, Args: planArgs(open)}}}},
		{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "p1", ToolName: agent.PlanToolName, Content: "Plan saved: 1 of 3 steps finished. Now: Fix the off-by-one"}},
		{Message: llm.Message{Role: llm.RoleAssistant, Content: "Done, I think."}},
		{Message: llm.Message{Role: llm.RoleUser, Content: "Your plan still has 2 open step(s): \"Fix the off-by-one\" (in progress), \"Run the tests\" (pending). Finish them."}, Reminder: true},
		{Message: llm.Message{Role: llm.RoleAssistant, Content: "Back to it."}},
	}
	if _, err := st.Append(ctx, id, msgs...); err != nil {
		t.Fatal(err)
	}
	f.slash("/session switch " + id)
	f.pump(func() bool { return f.m.job == jobNone })
	s = f.screen()
	for _, want := range []string{"· Hearth sent the model back: 2 plan steps open", "Plan 1/3", "▸ Fix the off-by-one", "Back to it."} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q on the resumed screen:\n%s", want, s)
		}
	}
	if strings.Contains(s, "Your plan still has") {
		t.Errorf("the reminder shows as a message:\n%s", s)
	}
	f.restoreCmd("/rewind")
	if f.m.restore == nil {
		t.Fatalf("no /rewind panel:\n%s", f.screen())
	}
	var offered []string
	for _, p := range f.m.restore.points {
		offered = append(offered, p.text)
	}
	if strings.Join(offered, "|") != "fix the lexer too|thanks|fix the parser" {
		t.Errorf("/rewind offers %q", offered)
	}
}
