package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
)

// approvalState is a call waiting for the user.
type approvalState struct {
	req    agent.Request
	choice int
	// denying: the user is typing a message to go with a denial; draft
	// is what the input held before, put back afterwards.
	denying bool
	draft   string
}

// approvalChoices are the answers offered, in order.
var approvalChoices = []string{"Allow once", "Allow always (this session)", "Deny", "Deny with a message"}

// approvalKey handles a key while the approval prompt shows: move, choose
// (1–4, y/a/n/d, enter), or esc to stop the turn.
func (m *Model) approvalKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.approval
	switch msg.String() {
	case "left", "up", "shift+tab", "k", "h":
		a.choice = (a.choice + len(approvalChoices) - 1) % len(approvalChoices)
	case "right", "down", "tab", "j", "l":
		a.choice = (a.choice + 1) % len(approvalChoices)
	case "1", "y":
		m.choose(0)
	case "2", "a":
		m.choose(1)
	case "3", "n":
		m.choose(2)
	case "4", "d":
		m.choose(3)
	case "enter", "space":
		m.choose(a.choice)
	case "esc":
		m.stop()
	}
	return nil
}

// choose takes approvalChoices[i]. The last asks for a message first: the
// input then edits it, and what was typed before waits in draft.
func (m *Model) choose(i int) {
	a := m.approval
	switch i {
	case 0:
		m.answer(agent.Answer{Decision: agent.Allow})
	case 1:
		m.answer(agent.Answer{Decision: agent.AllowAlways})
		m.flash(a.req.Tool + " is allowed for the rest of this session")
	case 2:
		m.answer(agent.Answer{Decision: agent.Deny})
	case 3:
		a.choice, a.denying = 3, true
		a.draft = m.input.Value()
		m.input.Reset()
	}
}

// answer replies to the waiting call.
func (m *Model) answer(ans agent.Answer) {
	a := m.approval
	if a == nil {
		return
	}
	m.approval = nil
	if m.turn != nil {
		var err error
		if ans.Decision == agent.Deny {
			err = m.turn.Deny(a.req.ID, ans.Message)
		} else {
			err = m.turn.Approve(a.req.ID, ans.Decision)
		}
		if err != nil { // answered meanwhile: by the mode, or the turn ended
			return
		}
	}
	if e := m.tools[a.req.ID]; e != nil && ans.Decision != agent.Deny {
		it := e.it.(*toolItem)
		it.state, it.start = toolRunning, m.now()
		e.dirty = true
	}
	m.jobLabel = "Running " + a.req.Tool
}
