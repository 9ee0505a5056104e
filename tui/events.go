package tui

import (
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// turnState is what the current turn has drawn so far.
type turnState struct {
	thinking *thinkingItem
	thinkE   *entry
	answer   *answerItem
	answerE  *entry
	// tools of this turn, in call order
	tools []*entry
}

// event draws one event of the running turn (or of a !command, whose
// output comes as tool events).
func (m *Model) event(ev agent.Event) tea.Cmd {
	now := m.now()
	switch ev.Type {
	case agent.EventSession:
		if ev.SessionID != m.sessionID {
			m.sessionID, m.sessionTitle = ev.SessionID, ""
		}
	case agent.EventThinkingStart:
		m.finishAnswer()
		m.startThinking(now)
	case agent.EventThinkingDelta:
		if m.cur.thinking == nil {
			m.startThinking(now)
		}
		m.cur.thinking.text.WriteString(ev.Text)
		m.cur.thinkE.dirty = true
	case agent.EventThinkingEnd:
		m.endThinking(now)
	case agent.EventTextDelta:
		m.endThinking(now)
		if m.cur.answer == nil {
			m.cur.answer = &answerItem{start: now}
			m.cur.answerE = m.tr.add(m.cur.answer)
		}
		m.cur.answer.add(ev.Text)
		m.cur.answerE.dirty = true
		m.jobLabel = "Answering…"
	case agent.EventThinkingReclassified:
		m.reclassify(now, ev.Text)
	case agent.EventToolCall:
		m.endThinking(now)
		m.finishAnswer()
		it := &toolItem{id: ev.ID, name: ev.Name, args: ev.Args, state: toolQueued, start: now, user: strings.HasPrefix(ev.ID, "user_")}
		e := m.tr.add(it)
		m.tools[ev.ID] = e
		m.cur.tools = append(m.cur.tools, e)
		m.advanceTools(now)
	case agent.EventApprovalRequired:
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			it.state, it.reason = toolAwaiting, ev.Reason
			e.dirty = true
		}
		m.jobLabel = "Waiting for your approval"
		kind, _ := m.agent.ToolKind(ev.Name)
		m.approval = &approvalState{req: agent.Request{ID: ev.ID, Tool: ev.Name, Kind: kind, Args: ev.Args, Reason: ev.Reason}}
		m.scroll = 0
	case agent.EventCheckpoint:
		// The workspace was snapshotted before the call: /undo and
		// /rewind can bring it back to this state.
		if e := m.tools[ev.ID]; e != nil && ev.Checkpoint != nil {
			it := e.it.(*toolItem)
			it.checkpoint, it.tooLarge = ev.Checkpoint.ID, ev.Checkpoint.TooLarge
			e.dirty = true
		}
	case agent.EventToolOutput:
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			if it.state != toolRunning {
				it.state, it.start = toolRunning, now
			}
			it.output.Write(ev.Text)
			e.dirty = true
		}
	case agent.EventToolResult:
		if a := m.approval; a != nil && a.req.ID == ev.ID {
			// Answered elsewhere (the turn was cancelled): drop the prompt.
			if a.denying {
				m.input.SetValue(a.draft)
			}
			m.approval = nil
		}
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			it.end = now
			it.result, it.display, it.errText = ev.Output, ev.Display, ev.Error
			it.state = toolDone
			if !ev.OK {
				it.state = toolFailed
				m.stats.toolFailed++
			}
			e.dirty = true
			m.stats.toolCalls++
		}
		m.advanceTools(now)
		m.jobLabel = "Thinking…"
	case agent.EventUsage:
		m.stats.inputTokens += ev.InputTokens
		m.stats.outputs += ev.OutputTokens
		if ev.InputTokens > 0 {
			m.ctxUsed = ev.InputTokens + ev.OutputTokens
		}
	case agent.EventPlan:
		m.planEvent(ev)
	case agent.EventCompressed:
		m.notice(noticeInfo, "Older turns were summarised to fit the context window.", nil)
	case agent.EventError:
		if ev.Code == agent.ProviderCode(llm.CodeUnreachable) {
			m.unreachable = ev.Error // noted in the transcript when the turn ends
			return m.recheck()
		}
		m.notice(noticeError, ev.Error, nil)
	case agent.EventDone:
		m.endThinking(now)
		m.finishAnswer()
		if ev.Text != "" {
			m.lastAnswer = ev.Text
		}
		switch ev.DoneReason {
		case agent.DoneCancelled:
			m.notice(noticeWarn, "Stopped. What came so far is kept in the session.", nil)
		case agent.DoneMaxTurns:
			m.notice(noticeWarn, "Stopped at the turn limit before an answer: send “continue” to go on.", nil)
		case agent.DoneError:
			if m.unreachable != "" {
				m.notice(noticeError, m.unreachable, nil)
			}
		}
		m.jobLabel = "Saving…"
	}
	return nil
}

// startThinking opens a thinking item.
func (m *Model) startThinking(now time.Time) {
	m.cur.thinking = &thinkingItem{start: now}
	m.cur.thinkE = m.tr.add(m.cur.thinking)
}

// reclassify turns the answer shown for this reply into the reasoning it
// was (a lone </think> ended it): the answer item, in its place in the
// transcript, becomes a thinking item, open for more reasoning until the
// answer starts. text is the reply's text so far, the end of the answer
// item; anything before it (there should be nothing) stays an answer.
func (m *Model) reclassify(now time.Time, text string) {
	m.endThinking(now)
	a, e := m.cur.answer, m.cur.answerE
	m.cur.answer, m.cur.answerE = nil, nil
	th := &thinkingItem{start: now}
	th.text.WriteString(text)
	if a == nil {
		m.cur.thinking, m.cur.thinkE = th, m.tr.add(th)
		m.jobLabel = "Thinking…"
		return
	}
	th.start = a.start
	before := strings.TrimSuffix(a.raw.String(), text)
	if before == a.raw.String() {
		before = "" // not its end: the whole answer was the reply's text
	}
	if strings.TrimSpace(before) == "" {
		e.it, e.dirty = th, true
		m.cur.thinking, m.cur.thinkE = th, e
	} else {
		kept := &answerItem{start: a.start}
		kept.add(before)
		kept.finish()
		e.it, e.dirty = kept, true
		m.cur.thinking, m.cur.thinkE = th, m.tr.add(th)
	}
	m.jobLabel = "Thinking…"
}

// endThinking closes the open thinking item, if any.
func (m *Model) endThinking(now time.Time) {
	if t := m.cur.thinking; t != nil {
		t.done, t.end = true, now
		m.cur.thinkE.dirty = true
		m.cur.thinking, m.cur.thinkE = nil, nil
	}
}

// finishAnswer closes the open answer: text after a thinking block or a
// tool call starts a new one.
func (m *Model) finishAnswer() {
	if a := m.cur.answer; a != nil {
		a.finish()
		m.cur.answerE.dirty = true
		m.cur.answer, m.cur.answerE = nil, nil
	}
}

// advanceTools marks the first waiting call of the turn as running: calls
// run one after the other.
func (m *Model) advanceTools(now time.Time) {
	for _, e := range m.cur.tools {
		it := e.it.(*toolItem)
		switch it.state {
		case toolRunning, toolAwaiting:
			return
		case toolQueued:
			it.state, it.start = toolRunning, now
			e.dirty = true
			return
		}
	}
}

// turnDone ends the turn: its calls still pending are marked not run, and
// the next queued message starts.
func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.endThinking(m.now())
	m.finishAnswer()
	m.endJob()
	for _, e := range m.cur.tools {
		if it := e.it.(*toolItem); it.state == toolQueued || it.state == toolRunning || it.state == toolAwaiting {
			it.state, it.end, it.errText = toolFailed, m.now(), "not run: the turn ended"
			e.dirty = true
		}
	}
	var title tea.Cmd
	if msg.out != nil {
		m.sessionID = msg.out.SessionID
		m.draftID = ""
		if msg.out.Reason == agent.DoneStop {
			title = m.titleLater(m.sessionID)
		}
	}
	if msg.err != nil {
		switch {
		case errors.Is(msg.err, session.ErrBusy):
			m.notice(noticeError, "This session is in use by another hearth process: wait for it, or start a new one with /session new.", nil)
		case msg.out == nil:
			m.notice(noticeError, "The turn failed: "+msg.err.Error(), nil)
		default:
			m.notice(noticeWarn, msg.err.Error(), nil)
		}
	}
	return tea.Batch(m.next(), m.refreshFiles(), title)
}
