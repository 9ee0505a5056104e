package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
)

// inputState is the input box and what helps fill it: the prompt
// history, long pastes held as placeholders, and the completion menu.
type inputState struct {
	input textarea.Model
	// hist is the history file. history is its prompts and this run's,
	// histIdx the one shown (len(history): the draft, kept in histDraft).
	hist      *history
	history   []string
	histIdx   int
	histDraft string
	// pastes maps each placeholder ("[Pasted text #N +L lines]") to what
	// was pasted; pasteN numbers them.
	pastes map[string]string
	pasteN int
	comp   compState
	// files are the workspace's, for @path completion.
	files []string
	// lastCtrlC is when Ctrl-C last cleared the input or warned: a second
	// press soon after quits.
	lastCtrlC time.Time
}

// newInput builds the input box: it grows up to 8 lines, and
// shift+enter, alt+enter or ctrl+j break a line.
func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.SetPromptFunc(2, func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.MaxContentHeight = 5000
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.KeyMap.TransposeCharacterBackward = key.NewBinding(key.WithDisabled())
	ta.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ta.Placeholder = "Ask anything · / commands · @ attach a file · ! run a command"
	ta.Focus()
	return ta
}

// key handles a key press: the keys that work everywhere, then the
// approval prompt's, the completion menu's, and the input's.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	switch k {
	case "ctrl+c":
		return m.ctrlC()
	case "ctrl+t":
		m.expandThinking = !m.expandThinking
		m.keyGen++
		return nil
	case "ctrl+o":
		m.expandTools = !m.expandTools
		m.keyGen++
		return nil
	case "pgup":
		m.scrollBy(max(m.viewHeight()-2, 1))
		return nil
	case "pgdown":
		m.scrollBy(-max(m.viewHeight()-2, 1))
		return nil
	case "ctrl+home":
		m.scroll = m.total
		return nil
	case "ctrl+end":
		m.scroll = 0
		return nil
	case "shift+tab":
		m.cycleMode()
		return nil
	}
	if m.restore != nil {
		return m.restoreKey(msg)
	}
	if a := m.approval; a != nil && !a.denying {
		return m.approvalKey(msg)
	}
	if a := m.approval; a != nil && a.denying {
		switch k {
		case "esc":
			a.denying = false
			m.input.SetValue(a.draft)
			return nil
		case "enter":
			text := strings.TrimSpace(m.input.Value())
			m.input.SetValue(a.draft)
			m.answer(agent.Answer{Decision: agent.Deny, Message: text})
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	if len(m.comp.items) > 0 {
		switch k {
		case "up", "ctrl+p":
			m.comp.sel = (m.comp.sel + len(m.comp.items) - 1) % len(m.comp.items)
			return nil
		case "down", "ctrl+n":
			m.comp.sel = (m.comp.sel + 1) % len(m.comp.items)
			return nil
		case "tab":
			m.acceptCompletion()
			return nil
		case "enter":
			if m.comp.acceptOnEnter() {
				m.acceptCompletion()
				return nil
			}
		case "esc":
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	}
	switch k {
	case "esc":
		if m.job != jobNone {
			m.stop()
		}
		return nil
	case "enter":
		v := m.input.Value()
		if strings.HasSuffix(v, "\\") && m.input.Line() == m.input.LineCount()-1 {
			m.input.SetValue(strings.TrimSuffix(v, "\\") + "\n")
			return nil
		}
		return m.submit()
	case "up":
		if m.input.Line() == 0 && len(m.history) > 0 && m.histIdx > 0 {
			if m.histIdx == len(m.history) {
				m.histDraft = m.input.Value()
			}
			m.histIdx--
			m.input.SetValue(m.history[m.histIdx])
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histIdx < len(m.history) {
			m.histIdx++
			if m.histIdx == len(m.history) {
				m.input.SetValue(m.histDraft)
			} else {
				m.input.SetValue(m.history[m.histIdx])
			}
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	case "ctrl+d":
		if m.input.Value() == "" && m.job == jobNone {
			return m.quit()
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	m.complete()
	return cmd
}

// ctrlC stops the running work; on an idle prompt it clears the input, and
// a second press quits.
func (m *Model) ctrlC() tea.Cmd {
	now := m.now()
	if m.restore != nil {
		m.cancelRestore()
		return nil
	}
	if m.job != jobNone {
		m.stop()
		return nil
	}
	if m.approval != nil {
		return nil
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.comp = compState{}
		m.lastCtrlC = now
		m.flash("Press Ctrl-C again to quit")
		return nil
	}
	if now.Sub(m.lastCtrlC) < 2*time.Second {
		return m.quit()
	}
	m.lastCtrlC = now
	m.flash("Press Ctrl-C again to quit")
	return nil
}

// quit leaves the program (Close then stops what still runs).
func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// paste inserts pasted text; a long one goes in as a placeholder, which
// expandPastes replaces when the message is sent.
func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	if m.restore != nil {
		return nil // the input is hidden
	}
	content := strings.ReplaceAll(msg.Content, "\r\n", "\n")
	content = strings.ReplaceAll(content, "\r", "\n")
	lines := strings.Count(content, "\n") + 1
	if (lines > 8 || len(content) > 1500) && (m.approval == nil || m.approval.denying) {
		m.pasteN++
		ph := fmt.Sprintf("[Pasted text #%d +%d lines]", m.pasteN, lines)
		m.pastes[ph] = content
		m.input.InsertString(ph)
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(tea.PasteMsg{Content: content})
	m.complete()
	return cmd
}

// expandPastes replaces paste placeholders with what was pasted.
func (in *inputState) expandPastes(s string) string {
	for ph, content := range in.pastes {
		s = strings.ReplaceAll(s, ph, content)
	}
	return s
}

// submit sends the input: a /command, a !command or a message.
func (m *Model) submit() tea.Cmd {
	raw := m.input.Value()
	text := strings.TrimSpace(raw)
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.comp = compState{}
	m.scroll = 0
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
	}
	m.histIdx, m.histDraft = len(m.history), ""
	save := m.hist.appendCmd(text)
	var cmd tea.Cmd
	switch {
	case strings.HasPrefix(text, "/"):
		cmd = m.command(text)
	case strings.HasPrefix(text, "!"):
		cmd = m.shell(strings.TrimSpace(text[1:]))
	default:
		cmd = m.prompt(text)
	}
	return tea.Batch(save, cmd)
}
