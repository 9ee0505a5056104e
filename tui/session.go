package tui

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
)

// sessionState is the session the conversation goes to, and its approval
// mode.
type sessionState struct {
	sessionID, sessionTitle string
	// draftID is the session a new conversation will go to, made when a
	// !command runs before its first message.
	draftID string
	// mode is the approval mode; the runtime keeps it with the session.
	mode agent.Mode
	// sessions are the stored sessions, for /session switch completion.
	sessions []session.Session
	// lastAnswer is what /copy copies.
	lastAnswer string
	// titled are the sessions the model was asked to title in this run
	// (asked once each, whatever came of it).
	titled map[string]bool
}

// titleLater asks the model, in the background, for a better title for
// session id if it still has the one its first prompt gave it: after a
// turn that answered, or when a stored session is opened. Nothing waits
// for it; the header shows the title when it comes.
func (m *Model) titleLater(id string) tea.Cmd {
	if id == "" || m.titled[id] || m.model == "" {
		return nil
	}
	if m.titled == nil {
		m.titled = map[string]bool{}
	}
	m.titled[id] = true
	a, model := m.agent, m.model
	if model == a.Model() {
		model = ""
	}
	return func() tea.Msg { return askTitle(a, id, model) }
}

// askTitle is titleLater's work.
func askTitle(a *hearth.Agent, id, model string) tea.Msg {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	title, err := a.Session(id).Title(ctx, model)
	if err != nil || title == "" {
		return nil // the title from the prompt stands
	}
	return sessionTitleMsg{id: id, title: title}
}

// currentID is the session the conversation goes to: the current one, or
// the one made for a !command before the first message ("" when neither).
func (s *sessionState) currentID() string {
	if s.sessionID != "" {
		return s.sessionID
	}
	return s.draftID
}

// cycleMode is shift+tab: default → auto_edit → plan → default (yolo
// goes back to default).
// A mode the workspace's trust does not allow is skipped (in an untrusted
// folder: default → plan → default).
func (m *Model) cycleMode() {
	next := map[agent.Mode]agent.Mode{agent.ModeDefault: agent.ModeAutoEdit, agent.ModeAutoEdit: agent.ModePlan, agent.ModePlan: agent.ModeDefault, agent.ModeYolo: agent.ModeDefault}
	mode := next[m.mode]
	if m.agent.AllowsMode(mode) != nil {
		mode = next[mode]
	}
	m.setMode(mode)
}

// setMode switches the approval mode: the session's, in the runtime, so
// that a call waiting for approval that the new mode decides on its own is
// answered at once (its result event then takes the prompt down).
func (m *Model) setMode(mode agent.Mode) {
	if err := m.agent.AllowsMode(mode); err != nil {
		// The mode stays: an untrusted folder runs in default at most.
		m.notice(noticeError, err.Error(), nil)
		return
	}
	m.mode = mode
	m.flash("Approval mode: " + modeLabel(mode))
	if id := m.currentID(); id != "" {
		if err := m.agent.Session(id).SetMode(mode); err != nil {
			m.notice(noticeError, err.Error(), nil)
		}
	}
	if a := m.approval; a != nil {
		if ask, _ := agent.NeedsApproval(mode, a.req.Kind); !ask {
			if a.denying {
				m.input.SetValue(a.draft)
			}
			m.approval = nil
		}
	}
}

// modeLabel names a mode and says what asks in it.
func modeLabel(m agent.Mode) string {
	switch m {
	case agent.ModeAutoEdit:
		return "auto_edit (edits run, commands ask)"
	case agent.ModeYolo:
		return "yolo (nothing asks)"
	case agent.ModePlan:
		return "plan (read-only)"
	}
	return "default (edits and commands ask)"
}
