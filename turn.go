package hearth

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/conversation"
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
	// Unattended says no one will answer approvals: a call that needs one
	// is refused at once, and the model told how the user could allow it
	// (what Result does when called before Events).
	Unattended bool
	// ApprovalTimeout bounds how long an approval waits for an answer:
	// past it the call is denied, and the model told no one answered (0:
	// as long as the turn lasts).
	ApprovalTimeout time.Duration
	// Retry, with no Message, runs the session again from its last
	// message, the user's, that no reply answered (a turn that failed
	// before the model answered); without one the turn fails with
	// ErrNothingToRetry.
	Retry bool
}

// ErrNothingToRetry is wrapped by the error of a Retry turn whose session
// has no unanswered message (or does not exist: then it wraps
// session.ErrNotFound too).
var ErrNothingToRetry = conversation.ErrNothingToRetry

// Errors of Approve and Deny.
var (
	// ErrNoApproval: no approval of the turn waits for that call (it was
	// never asked, timed out, or was answered by the mode).
	ErrNoApproval = errors.New("no approval is waiting for this call")
	// ErrAnswered: the approval was answered already.
	ErrAnswered = errors.New("the approval is already answered")
)

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
	// Cost sums what the turn's model calls cost, in micro-units
	// (millionths) of the user's currency (Config.Prices): nil when none
	// had a price. Unpriced counts the calls whose model has no price:
	// above 0, Cost is incomplete (or, nil, unknown), and must be shown
	// as such. The turn's calls are all those it caused: its replies
	// (Usage counts their tokens), its automatic summaries, the edit
	// tool's fixer and its sub-agents' calls (stored in their own
	// sessions). A sum too large for an int64 is unknown: Cost nil,
	// every call counted in Unpriced.
	Cost     *int64
	Unpriced int
	// ToolCalls lists the calls the model made, in order.
	ToolCalls []llm.ToolCall
	// Messages are what the turn added to the session: the model's
	// replies and the tool results.
	Messages []llm.Message
	// Err is why the turn failed (Reason DoneError).
	Err error
	// Plan is the model's plan at the end of the turn (nil: it keeps
	// none).
	Plan *Plan
}

// Turn is one turn of a conversation, run by ranging over Events (or, with
// no one to answer approvals, by Result alone).
type Turn struct {
	a   *Agent
	s   *Session
	ctx context.Context
	req Request

	mu       sync.Mutex
	state    turnState
	asked    map[string]bool         // approvals announced and not yet taken
	answers  map[string]agent.Answer // answers not yet taken
	answered map[string]bool         // approvals answered, taken or not
	wake     chan struct{}           // closed and replaced on each answer
	res      *Result
	err      error
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
	if req.SessionID == "" {
		req.SessionID = session.NewID()
	}
	return &Turn{a: a, s: a.Session(req.SessionID), ctx: ctx, req: req, asked: map[string]bool{}, answers: map[string]agent.Answer{}, answered: map[string]bool{}, wake: make(chan struct{})}
}

// SessionID returns the session the turn goes to (made up by NewTurn when
// the request named none).
func (t *Turn) SessionID() string { return t.req.SessionID }

// Session returns the session the turn goes to.
func (t *Turn) Session() *Session { return t.s }

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
		var ap agent.Approver = approver{t}
		if t.req.Unattended {
			ap = nil
		}
		t.run(ctx, ap, func(ev Event) {
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
	if t.answered[id] {
		return fmt.Errorf("hearth: call %q: %w", id, ErrAnswered)
	}
	if !t.asked[id] {
		return fmt.Errorf("hearth: call %q: %w", id, ErrNoApproval)
	}
	t.answered[id] = true
	t.answers[id] = ans
	close(t.wake)
	t.wake = make(chan struct{})
	return nil
}

// Waiting returns the ids of the calls whose approval waits for an answer.
func (t *Turn) Waiting() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id := range t.asked {
		if !t.answered[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// wakeAll wakes the approvals waiting, to look at the session's mode again.
func (t *Turn) wakeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	close(t.wake)
	t.wake = make(chan struct{})
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
	a, s := t.a, t.s
	tools, err := s.begin(t)
	if err != nil {
		return
	}
	defer s.end()
	core := *tools.agent // its window is this turn's own (a title may be asked meanwhile)
	model := core.Model
	if t.req.Model != "" {
		model = t.req.Model
	}
	if model == "" {
		err = errors.New("hearth: no model: set Config.Model, or name one in the Request")
		return
	}
	core.ContextLength = a.contextLength(ctx, model)
	opts := agent.RunOptions{Model: t.req.Model, Approver: ap, Mode: s.Mode, Approvals: &s.approvals}
	ct := &conversation.Turn{Store: a.store, Agent: &core, Options: opts, Prompt: llm.Message{Content: t.req.Message},
		Context: joinContext(s.restoredNote(ctx), t.req.Context), Retry: t.req.Retry, Log: a.log, Checkpoints: a.keeper,
		Prices: a.rates, Session: session.Session{ID: s.id, Provider: a.c.Provider.Kind(), Model: model, Workspace: a.Workspace()}}
	out, runErr := ct.Run(ctx, emit)
	err = runErr
	if out == nil {
		return
	}
	res = &Result{SessionID: out.SessionID, ToolCalls: out.ToolCalls, Cost: out.Cost, Unpriced: out.Unpriced}
	if out.Result != nil {
		res.Text, res.Reason, res.Usage, res.Messages, res.Err, res.Plan = out.Text, out.Reason, out.Usage, out.Messages, out.Err, out.Plan
		if err == nil && out.Reason == DoneError {
			err = out.Err
		}
	}
}

// approver answers a turn's approvals with what Approve and Deny gave, or
// by the session's mode when it was switched to one that does not ask.
type approver struct{ t *Turn }

func (ap approver) Approve(ctx context.Context, req agent.Request) (agent.Answer, error) {
	t := ap.t
	var expired <-chan time.Time
	if d := t.req.ApprovalTimeout; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		expired = timer.C
	}
	for {
		if ask, refuse := agent.NeedsApproval(t.s.Mode(), req.Kind); !ask {
			t.mu.Lock()
			delete(t.asked, req.ID)
			delete(t.answers, req.ID)
			t.mu.Unlock()
			if refuse != "" {
				return agent.Answer{Decision: agent.Deny, Message: refuse}, nil
			}
			return agent.Answer{Decision: agent.Allow}, nil
		}
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
		case <-expired:
			t.mu.Lock()
			delete(t.asked, req.ID)
			t.mu.Unlock()
			return agent.Answer{Decision: agent.Deny, Message: fmt.Sprintf("no one answered within %s", t.req.ApprovalTimeout)}, nil
		case <-ctx.Done():
			t.mu.Lock()
			delete(t.asked, req.ID)
			t.mu.Unlock()
			return agent.Answer{}, ctx.Err()
		}
	}
}

// Answered reports whether the approval of call id was answered.
func (t *Turn) Answered(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answered[id]
}
