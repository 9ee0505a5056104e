package hearth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/conversation"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// Request is one user turn.
type Request struct {
	// SessionID continues a session (one is created when the store does
	// not have it); empty starts a new one.
	SessionID string
	// Message is the user's message; the session keeps it.
	Message string
	// Context is shown to the model with this turn only, and not kept in
	// the session: what the user is looking at, a selection, the state of
	// the host application.
	Context string
	// Model, when set, answers this turn instead of the agent's model.
	Model string
}

// Result is what a turn produced.
type Result struct {
	// SessionID is the session the turn went to: pass it in the next
	// Request to continue the conversation.
	SessionID string
	// Text is the final answer.
	Text string
	// Reason says why the turn ended.
	Reason DoneReason
	// Usage sums the tokens of the turn's model calls.
	Usage llm.Usage
	// ToolCalls lists the calls the model made, in order.
	ToolCalls []llm.ToolCall
}

// Turn is one turn of a conversation, run by ranging over Events (or, with
// no one to answer approvals, by Result alone).
type Turn struct {
	a   *Agent
	ctx context.Context
	req Request

	mu      sync.Mutex
	state   turnState
	asked   map[string]bool         // approvals announced and not yet taken
	answers map[string]agent.Answer // answers not yet taken
	wake    chan struct{}           // closed and replaced on each answer
	res     *Result
	err     error
}

type turnState int

const (
	turnNew turnState = iota
	turnRunning
	turnDone
)

// NewTurn prepares a turn; it runs when its events are ranged over, or
// when Result is called. ctx bounds it: cancelling ctx cancels the turn
// (what was said so far is kept).
func (a *Agent) NewTurn(ctx context.Context, req Request) *Turn {
	return &Turn{a: a, ctx: ctx, req: req, asked: map[string]bool{}, answers: map[string]agent.Answer{}, wake: make(chan struct{})}
}

// Events runs the turn, yielding its events as they happen, in the calling
// goroutine; the last is always EventDone. Breaking out of the loop cancels
// the turn. The sequence can be ranged over once.
//
// An EventApprovalRequired must be answered (Approve, Deny) before the turn
// goes on: in the loop body, or from another goroutine while the loop
// waits. Until then the turn waits, as long as its context lasts.
func (t *Turn) Events() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		if !t.begin() {
			return
		}
		ctx, cancel := context.WithCancel(t.ctx)
		defer cancel()
		stopped := false
		t.run(ctx, approver{t}, func(ev Event) {
			if ev.Type == EventApprovalRequired {
				t.mu.Lock()
				t.asked[ev.ID] = true
				t.mu.Unlock()
			}
			if stopped {
				return
			}
			if !yield(ev) {
				stopped = true
				cancel()
			}
		})
	}
}

// Result returns what the turn produced, once its events have been ranged
// over. Called first, it runs the turn to its end without anyone to ask:
// calls that need approval are refused (the model is told so), unless the
// profile's mode allows them.
//
// The error is set when the turn could not run (the session is busy: it
// wraps session.ErrBusy), when it failed (the model server could not be
// reached, …), or when the session could not be saved; Result is set
// whenever the turn ran, a failed one included.
func (t *Turn) Result() (*Result, error) {
	t.mu.Lock()
	switch t.state {
	case turnRunning:
		t.mu.Unlock()
		return nil, errors.New("hearth: Result called while the turn runs: call it after ranging over Events")
	case turnDone:
		defer t.mu.Unlock()
		return t.res, t.err
	}
	t.state = turnRunning
	t.mu.Unlock()
	t.run(t.ctx, nil, func(Event) {})
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.res, t.err
}

// Approve answers the approval_required event with this id.
func (t *Turn) Approve(id string, d Decision) error {
	return t.answer(id, agent.Answer{Decision: d})
}

// Deny refuses the call of the approval_required event with this id;
// reason goes to the model (why, what to do instead).
func (t *Turn) Deny(id, reason string) error {
	return t.answer(id, agent.Answer{Decision: Deny, Message: reason})
}

func (t *Turn) answer(id string, ans agent.Answer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.asked[id] {
		return fmt.Errorf("hearth: no approval is waiting for call %q", id)
	}
	if _, dup := t.answers[id]; dup {
		return fmt.Errorf("hearth: the approval of call %q is already answered", id)
	}
	t.answers[id] = ans
	close(t.wake)
	t.wake = make(chan struct{})
	return nil
}

// begin moves a new turn to running; false if it ran already.
func (t *Turn) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state != turnNew {
		return false
	}
	t.state = turnRunning
	return true
}

// run performs the turn in the calling goroutine.
func (t *Turn) run(ctx context.Context, ap agent.Approver, emit func(Event)) {
	var res *Result
	var err error
	defer func() {
		t.mu.Lock()
		t.state, t.res, t.err = turnDone, res, err
		t.mu.Unlock()
	}()
	a := t.a
	id := t.req.SessionID
	if id == "" {
		id = session.NewID()
	}
	if err = a.acquire(id); err != nil {
		return
	}
	defer a.release(id)
	core := *a.core // this turn's copy
	core.Approver = ap
	core.Approvals = a.approvalsOf(id)
	if t.req.Model != "" {
		core.Model = t.req.Model
	}
	ct := &conversation.Turn{Store: a.store, Agent: &core, Prompt: llm.Message{Content: t.req.Message}, Context: t.req.Context,
		Titles: a.titles, Log: a.log,
		Session: session.Session{ID: id, Provider: core.Provider.Kind(), Model: core.Model, Workspace: a.workspace}}
	out, runErr := ct.Run(ctx, emit)
	err = runErr
	if out == nil {
		return
	}
	res = &Result{SessionID: out.SessionID, ToolCalls: out.ToolCalls}
	if out.Result != nil {
		res.Text, res.Reason, res.Usage = out.Text, out.Reason, out.Usage
		if err == nil && out.Reason == DoneError {
			err = out.Err
		}
	}
}

// approver answers a turn's approvals with what Approve and Deny gave.
type approver struct{ t *Turn }

func (ap approver) Approve(ctx context.Context, req agent.Request) (agent.Answer, error) {
	t := ap.t
	for {
		t.mu.Lock()
		if ans, ok := t.answers[req.ID]; ok {
			delete(t.answers, req.ID)
			delete(t.asked, req.ID)
			t.mu.Unlock()
			return ans, nil
		}
		wake := t.wake
		t.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			t.mu.Lock()
			delete(t.asked, req.ID)
			t.mu.Unlock()
			return agent.Answer{}, ctx.Err()
		}
	}
}
