package tui

import (
	"sync"

	tea "charm.land/bubbletea/v2"
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
