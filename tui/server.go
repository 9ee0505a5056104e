package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/llm"
)

// serverState is the model server and the model: whether the server
// answers, its models, and the chosen model's context window.
type serverState struct {
	model  string   // the chosen model ("" until one is)
	models []string // the server's, for /model and its completion
	// ctxLen is the model's context window (0: unknown); ctxUsed is how
	// much of it the session used last.
	ctxLen, ctxUsed int
	// unreachable is the server's error while it does not answer ("" when
	// it does); checking says a check again is scheduled.
	unreachable string
	checking    bool
}

// health takes the result of a health check: while the server is
// unreachable, the status line says so and it is checked again.
func (m *Model) health(msg healthMsg) tea.Cmd {
	m.checking = false
	if msg.err == nil {
		if m.unreachable != "" {
			m.notice(noticeInfo, "The model server answers again.", nil)
		}
		m.unreachable = ""
		return nil
	}
	if llm.CodeOf(msg.err) == llm.CodeUnreachable || llm.CodeOf(msg.err) == "" {
		if m.unreachable == "" {
			m.notice(noticeError, "The model server does not answer: "+msg.err.Error(), nil)
		}
		m.unreachable = msg.err.Error()
		return m.recheck()
	}
	return nil
}

// recheck asks the server again in a while, until it answers.
func (m *Model) recheck() tea.Cmd {
	if m.checking {
		return nil
	}
	m.checking = true
	p := m.agent.Provider()
	return tea.Tick(5*time.Second, func(time.Time) tea.Msg {
		return healthCmd(p)()
	})
}

// modelsLoaded keeps the server's model names, for /model; with show it
// lists them.
func (m *Model) modelsLoaded(msg modelsMsg) tea.Cmd {
	if msg.err == nil {
		m.models = m.models[:0]
		for _, mi := range msg.models {
			m.models = append(m.models, mi.Name)
		}
	}
	if !msg.show {
		return nil
	}
	if msg.err != nil {
		m.notice(noticeError, "Could not list the server's models: "+msg.err.Error(), nil)
		return nil
	}
	var body []string
	for _, mi := range msg.models {
		mark := "  "
		if mi.Name == m.model {
			mark = m.th.accentText.Render("● ")
		}
		var caps []string
		for _, c := range mi.Capabilities {
			caps = append(caps, string(c))
		}
		line := mark + clean(mi.Name)
		if len(caps) > 0 {
			line += m.th.muted.Render("  " + strings.Join(caps, ", "))
		}
		if mi.ContextLength > 0 {
			line += m.th.muted.Render(fmt.Sprintf("  %dk context", mi.ContextLength/1024))
		}
		body = append(body, line)
	}
	if len(body) == 0 {
		body = []string{m.th.muted.Render("(the server has no models: pull one first, e.g. ollama pull qwen3:4b)")}
	}
	m.notice(noticeInfo, "Models on the server (switch with /model NAME):", body)
	return nil
}
