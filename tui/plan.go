package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/conversation"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// The model's plan (the update_plan tool, docs/events.md "The plan"): a
// checklist pinned between the conversation and the input while the
// session has one, so that it never scrolls away.
//
// It comes from the plan events of a turn, and from the stored
// conversation when a session is shown (resumed, switched to, rewound).
// A plan with steps open stays pinned across prompts. A finished plan
// (every step done or skipped) stays until the user's next prompt, so that
// the end of the task is seen, then it is no longer pinned; /plan shows it
// in the conversation. /plan hide and /plan show hide and bring back the
// pinned checklist; hidden, the status line says "plan 2/4" while steps
// are open.

// planState is the session's plan and how it shows.
type planState struct {
	// plan is the session's plan (nil: none).
	plan *agent.Plan
	// planCollapsed: the plan was finished and a prompt came after it:
	// it is not pinned any more (a new plan event pins it again).
	planCollapsed bool
	// planHidden: the user hid the pinned plan (/plan hide), for this run.
	planHidden bool
}

// maxPlanLines bounds the pinned plan, its title included, on a tall
// window; on a small one it takes at most a third of the height.
const maxPlanLines = 7

// setPlan makes p the session's plan (nil or empty: none), pinned.
func (s *planState) setPlan(p *agent.Plan) {
	if p == nil || len(p.Steps) == 0 {
		p = nil
	}
	s.plan, s.planCollapsed = p, false
}

// planPinned says whether the checklist shows above the input.
func (s *planState) planPinned() bool {
	return s.plan != nil && !s.planCollapsed && !s.planHidden
}

// planPrompted is told that the user's prompt goes to the model: a
// finished plan is done with.
func (s *planState) planPrompted() {
	if s.plan != nil && len(s.plan.Open()) == 0 {
		s.planCollapsed = true
	}
}

// planOfSession is the plan of a stored session, and whether it is to be
// pinned: a plan with open steps is; a finished one is until a prompt
// comes after the call that wrote it (as it would have been had the
// session stayed open).
func planOfSession(msgs []session.Message) (p *agent.Plan, collapsed bool) {
	p = conversation.Plan(msgs)
	if p == nil || len(p.Open()) > 0 {
		return p, false
	}
	lastCall, lastPrompt := 0, 0
	for _, sm := range msgs {
		switch {
		case sm.Role == llm.RoleUser && !sm.Summary && !sm.Reminder:
			lastPrompt = max(lastPrompt, sm.Seq)
		case sm.Role == llm.RoleAssistant:
			for _, tc := range sm.ToolCalls {
				if tc.Name == agent.PlanToolName {
					lastCall = max(lastCall, sm.Seq)
				}
			}
		}
	}
	return p, lastPrompt > lastCall
}

// planBefore is the plan the session held before its message seq (a
// stored reminder says how many steps were open then).
func planBefore(msgs []session.Message, seq int) *agent.Plan {
	var before []session.Message
	for _, sm := range msgs {
		if sm.Seq < seq {
			before = append(before, sm)
		}
	}
	return conversation.Plan(before)
}

// planProgress counts a plan's finished steps (done or skipped) and all.
func planProgress(p *agent.Plan) (finished, total int) {
	for _, s := range p.Steps {
		if s.Status == agent.PlanDone || s.Status == agent.PlanSkipped {
			finished++
		}
	}
	return finished, len(p.Steps)
}

// planFocus is the step the plan is at: the one in progress, else the
// first pending one, else the last.
func planFocus(p *agent.Plan) int {
	first := -1
	for i, s := range p.Steps {
		switch s.Status {
		case agent.PlanInProgress:
			return i
		case agent.PlanPending:
			if first < 0 {
				first = i
			}
		}
	}
	if first >= 0 {
		return first
	}
	return len(p.Steps) - 1
}

// stepLine draws one step: a glyph for its state, then its text (the
// model's: stripped of control sequences).
func stepLine(th *theme, s agent.PlanStep) string {
	text := clean(s.Step)
	switch s.Status {
	case agent.PlanDone:
		return th.okText.Render("✓") + " " + th.muted.Render(text)
	case agent.PlanInProgress:
		return th.accentText.Render("▸") + " " + th.base.Bold(true).Render(text)
	case agent.PlanSkipped:
		line := th.muted.Render("⊘ " + text)
		if s.Reason != "" {
			line += " " + th.subtle.Render("(skipped: "+clean(s.Reason)+")")
		} else {
			line += " " + th.subtle.Render("(skipped)")
		}
		return line
	}
	return th.muted.Render("○") + " " + th.base.Render(text)
}

// planTitle is "Plan 2/4", and "✓ done" once every step is.
func planTitle(th *theme, p *agent.Plan) string {
	finished, total := planProgress(p)
	s := th.accentText.Render("Plan") + " " + th.muted.Render(fmt.Sprintf("%d/%d", finished, total))
	if finished == total {
		s += " " + th.okText.Render("✓ done")
	}
	return s
}

// renderPlan draws the pinned plan in at most room lines of width cells,
// each line starting with the one-cell margin of the lines under the
// conversation: a title and the steps. When they do not fit, it shows the
// step in progress and its neighbours, and says how many more there are
// above and below; with less than four lines (or room for fewer than three
// steps of a longer plan) it is one line, the title and the current step.
func renderPlan(th *theme, p *agent.Plan, width, room int) []string {
	w := max(width-1, 10)
	fit := func(s string) string { return " " + xansi.Truncate(s, w-1, "…") }
	n := len(p.Steps)
	rows := room - 1
	if rows < 1 || (n > rows && rows < 3) {
		cur := p.Steps[planFocus(p)]
		line := planTitle(th, p)
		if len(p.Open()) > 0 {
			line += th.subtle.Render(" · ") + stepLine(th, cur)
		}
		return []string{fit(line)}
	}
	title := planTitle(th, p)
	if rest := w - 1 - xansi.StringWidth(title) - 1; rest > 0 {
		title += " " + th.subtle.Render(strings.Repeat("─", rest))
	}
	lines := []string{fit(title)}
	from, to := 0, n
	if n > rows {
		from, to = planWindow(n, planFocus(p), rows)
	}
	if from > 0 {
		what := "more"
		if planFinishedUpTo(p, from) {
			what = "done"
		}
		lines = append(lines, fit(th.subtle.Render(fmt.Sprintf("  … %d %s", from, what))))
	}
	for _, s := range p.Steps[from:to] {
		lines = append(lines, fit("  "+stepLine(th, s)))
	}
	if to < n {
		lines = append(lines, fit(th.subtle.Render(fmt.Sprintf("  … %d more", n-to))))
	}
	return lines
}

// planWindow is the steps [from, to) shown of n around focus in rows
// lines, a line of each side taken by "… N more" where steps are left out
// there: the step before the focus (when two fit), the focus, and as many
// after it as fit (rows is at least 3).
func planWindow(n, focus, rows int) (from, to int) {
	for marks := 0; ; marks++ {
		k := max(rows-marks, 1)
		from = max(focus-min(1, k-1), 0)
		to = min(from+k, n)
		from = max(to-k, 0)
		used := to - from
		if from > 0 {
			used++
		}
		if to < n {
			used++
		}
		if used <= rows || k == 1 {
			return from, to
		}
	}
}

// planFinishedUpTo says whether the steps before i are all finished.
func planFinishedUpTo(p *agent.Plan, i int) bool {
	for _, s := range p.Steps[:i] {
		if s.Status != agent.PlanDone && s.Status != agent.PlanSkipped {
			return false
		}
	}
	return true
}

// renderPinnedPlan is the plan above the activity line (nil when none is
// pinned). While a panel takes the input's place (an approval, a
// restore) it shrinks to one line, leaving the room to what is asked.
func (m *Model) renderPinnedPlan() []string {
	if !m.planPinned() {
		return nil
	}
	room := min(maxPlanLines, m.height/3)
	if m.restore != nil || (m.approval != nil && !m.approval.denying) {
		room = 1
	}
	return renderPlan(m.th, m.plan, m.width, room)
}

// planEvent takes a plan event: the whole plan, pinned; or, with a
// reminder, Hearth's note that it sent the model back to the plan.
func (m *Model) planEvent(ev agent.Event) {
	if ev.Reminder != "" {
		m.tr.add(reminderNote(ev.Plan))
		if ev.Plan != nil {
			m.setPlan(ev.Plan)
		}
		return
	}
	m.setPlan(ev.Plan)
}

// reminderNote is the conversation's record of a reminder: Hearth's words
// to the model, not the user's, said as Hearth's.
func reminderNote(p *agent.Plan) *textItem {
	title := "Hearth sent the model back to finish its plan"
	if n := len(p.Open()); n > 0 {
		title = fmt.Sprintf("Hearth sent the model back: %s open", plural(n, "plan step"))
	}
	return &textItem{kind: noticeInfo, title: title}
}

// planCommand is /plan: the plan in full in the conversation, or the
// pinned checklist hidden or shown.
func (m *Model) planCommand(args []string) {
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	switch sub {
	case "":
		if m.plan == nil {
			m.notice(noticeInfo, "No plan in this session: the model keeps one (update_plan) for a task of several steps.", nil)
			return
		}
		m.tr.add(&planItem{plan: m.plan})
		m.scroll = 0
	case "hide":
		m.planHidden = true
		m.flash("Plan hidden: /plan shows it in full, /plan show pins it again")
	case "show":
		m.planHidden, m.planCollapsed = false, false
		if m.plan == nil {
			m.notice(noticeInfo, "No plan in this session yet: it shows above the input when the model writes one.", nil)
		}
	default:
		m.notice(noticeError, fmt.Sprintf("/plan %s: use /plan, /plan show or /plan hide.", args[0]), nil)
	}
}

// planItem is the whole plan in the conversation (/plan): every step,
// wrapped to the width.
type planItem struct{ plan *agent.Plan }

func (it *planItem) live() bool { return false }

func (it *planItem) render(c *renderCtx) []string {
	th := c.th
	out := []string{planTitle(th, it.plan)}
	for i, s := range it.plan.Steps {
		num := fmt.Sprintf("%2d. ", i+1)
		ind := strings.Repeat(" ", 2+len(num)+2) // under the text
		// The step wrapped, its glyph and style on the first row.
		text := clean(s.Step)
		if s.Status == agent.PlanSkipped && s.Reason != "" {
			text += " (skipped: " + clean(s.Reason) + ")"
		}
		for j, l := range wrapPlain(text, c.width-len(ind)) {
			switch {
			case j > 0:
				out = append(out, ind+th.muted.Render(l))
			case s.Status == agent.PlanSkipped:
				out = append(out, "  "+th.muted.Render(num+"⊘ "+l))
			default:
				out = append(out, "  "+th.muted.Render(num)+stepLine(th, agent.PlanStep{Step: l, Status: s.Status}))
			}
		}
	}
	return out
}

// planCard is the one quiet line of an update_plan call in the
// conversation (the pinned checklist shows the plan itself): "✓ plan
// updated: 2/4 · now: Fix the parser".
func planCard(c *renderCtx, it *toolItem) []string {
	th := c.th
	var icon string
	switch it.state {
	case toolQueued:
		icon = th.muted.Render("○")
	case toolRunning:
		icon = th.accentText.Render(c.spinner())
	default:
		icon = th.okText.Render("✓")
	}
	return []string{xansi.Truncate(icon+" "+planSummary(th, it.args), c.width, "…")}
}

// planSummary says what a call of the plan tool made of the plan.
func planSummary(th *theme, args json.RawMessage) string {
	p, err := agent.ParsePlan(args)
	switch {
	case err != nil:
		return th.muted.Render("plan updated")
	case len(p.Steps) == 0:
		return th.muted.Render("plan cleared")
	}
	finished, total := planProgress(p)
	s := th.muted.Render(fmt.Sprintf("plan updated: %d/%d", finished, total))
	switch cur := p.Steps[planFocus(p)]; {
	case finished == total:
		s += th.subtle.Render(" · ") + th.okText.Render("every step finished")
	case cur.Status == agent.PlanInProgress:
		s += th.subtle.Render(" · now: ") + th.base.Render(clean(cur.Step))
	default:
		s += th.subtle.Render(" · next: ") + th.base.Render(clean(cur.Step))
	}
	return s
}
