package tui

import (
	"context"
	"sync"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/tool"
)

// bridge carries messages from worker goroutines (the agent's turn, a
// shell command, a summary) to the Bubble Tea program. Senders never block:
// messages queue up, and the program drains them all at once, so a burst of
// small deltas costs one update and one frame.
type bridge struct {
	mu      sync.Mutex
	pending []tea.Msg
	notify  chan struct{}
	done    chan struct{}
	closed  bool
}

func newBridge() *bridge {
	return &bridge{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// send queues msg for the program. It never blocks.
func (b *bridge) send(msg tea.Msg) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.pending = append(b.pending, msg)
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// batchMsg is every message queued since the last one.
type batchMsg []tea.Msg

// wait is a command that returns the next batch (nil once the bridge is
// closed). One wait is outstanding at a time: the model issues the next
// after handling a batch.
func (b *bridge) wait() tea.Cmd {
	return func() tea.Msg {
		for {
			b.mu.Lock()
			if len(b.pending) > 0 {
				out := batchMsg(b.pending)
				b.pending = nil
				b.mu.Unlock()
				return out
			}
			b.mu.Unlock()
			select {
			case <-b.notify:
			case <-b.done:
				return nil
			}
		}
	}
}

// close wakes the waiting command and drops later messages.
func (b *bridge) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		close(b.done)
	}
}

// approvalMsg asks the user to decide a call; the answer goes to reply
// (buffered: answering never blocks).
type approvalMsg struct {
	req   agent.Request
	reply chan agent.Answer
}

// approver is the agent.Approver of the terminal UI: it hands the request
// to the program and blocks the agent's goroutine until the user answers
// or the turn is cancelled. A mode switched during the turn applies to
// the requests that follow (and to one already waiting).
type approver struct {
	b    *bridge
	mode *atomic.Value // agent.Mode
}

// Approve implements agent.Approver.
func (a *approver) Approve(ctx context.Context, req agent.Request) (agent.Answer, error) {
	if ans, ok := autoAnswer(a.mode.Load().(agent.Mode), req.Kind); ok {
		return ans, nil
	}
	reply := make(chan agent.Answer, 1)
	a.b.send(approvalMsg{req: req, reply: reply})
	select {
	case ans := <-reply:
		return ans, nil
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
}

// autoAnswer decides a request without asking when the current mode does
// not ask for this kind of tool (the mode was switched during the turn).
func autoAnswer(m agent.Mode, k tool.Kind) (agent.Answer, bool) {
	switch m {
	case agent.ModeYolo:
		return agent.Answer{Decision: agent.Allow}, true
	case agent.ModeAutoEdit:
		if k == tool.Edit {
			return agent.Answer{Decision: agent.Allow}, true
		}
	case agent.ModePlan:
		if k != tool.ReadOnly {
			return agent.Answer{Decision: agent.Deny, Message: "plan mode allows read-only tools only: describe the change you would make instead"}, true
		}
	}
	return agent.Answer{}, false
}
