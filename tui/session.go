package tui

import (
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
func (m *Model) cycleMode() {
	next := map[agent.Mode]agent.Mode{agent.ModeDefault: agent.ModeAutoEdit, agent.ModeAutoEdit: agent.ModePlan, agent.ModePlan: agent.ModeDefault, agent.ModeYolo: agent.ModeDefault}
	m.setMode(next[m.mode])
}

// setMode switches the approval mode: the session's, in the runtime, so
// that a call waiting for approval that the new mode decides on its own is
// answered at once (its result event then takes the prompt down).
func (m *Model) setMode(mode agent.Mode) {
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
