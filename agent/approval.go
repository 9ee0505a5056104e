package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/hearth-agent/hearth/tool"
)

// Mode is the approval mode: what runs without asking.
type Mode string

// The approval modes.
const (
	// ModeDefault asks before edits and commands; reading is free.
	ModeDefault Mode = "default"
	// ModeAutoEdit lets edits through and asks before commands.
	ModeAutoEdit Mode = "auto_edit"
	// ModeYolo asks for nothing. The hard refusals (the workspace boundary,
	// destructive commands) still hold: they are not approvals.
	ModeYolo Mode = "yolo"
	// ModePlan allows read-only tools only.
	ModePlan Mode = "plan"
)

// ParseMode reads a mode name as users type it.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")); m {
	case ModeDefault, ModeAutoEdit, ModeYolo, ModePlan:
		return m, nil
	case "":
		return ModeDefault, nil
	}
	return "", fmt.Errorf("unknown approval mode %q: use default, auto_edit, yolo or plan", s)
}

// Decision is the answer to an approval request.
type Decision int

// The possible answers.
const (
	// Deny refuses this call; Message goes back to the model.
	Deny Decision = iota
	// Allow runs this call.
	Allow
	// AllowAlways runs this call and every later call of the same tool in
	// this agent's session without asking.
	AllowAlways
)

// Request is what an Approver is asked.
type Request struct {
	ID   string
	Tool string
	Kind tool.Kind
	Args json.RawMessage
	// Reason describes the call in a line ("run `go test ./...`").
	Reason string
}

// Answer is an Approver's decision, with an optional message for the model
// (why it was denied, what to do instead).
type Answer struct {
	Decision Decision
	Message  string
}

// Approver decides calls that need approval. It may block (a person
// deciding) until ctx is done. A nil Approver means a non-interactive run:
// calls that would need approval are refused at once, with a result saying
// how to allow them.
type Approver interface {
	Approve(ctx context.Context, req Request) (Answer, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req Request) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req Request) (Answer, error) { return f(ctx, req) }

// NeedsApproval is the approval policy: whether a call of a tool of kind k
// must be asked about in mode m, or (refuse set) is refused outright, as
// plan mode refuses whatever is not read-only. Every front end decides by
// it, through the runtime.
func NeedsApproval(m Mode, k tool.Kind) (ask bool, refuse string) {
	switch m {
	case ModeYolo:
		return false, ""
	case ModePlan:
		if k != tool.ReadOnly {
			return false, "plan mode allows read-only tools only: describe the change you would make instead"
		}
		return false, ""
	case ModeAutoEdit:
		return k == tool.Execute, ""
	default:
		return k != tool.ReadOnly, ""
	}
}

// ModeAllowing returns the least permissive approval mode in which a tool of
// kind k runs without asking: default for read-only tools, auto_edit for
// edits, yolo for the rest. A run that refused a call names it to say how
// to allow the call.
func ModeAllowing(k tool.Kind) Mode {
	for _, m := range []Mode{ModeDefault, ModeAutoEdit} {
		if ask, refuse := NeedsApproval(m, k); !ask && refuse == "" {
			return m
		}
	}
	return ModeYolo
}

// Hooks run around every tool call, after approval.
type Hooks struct {
	// Before may refuse a call: its error goes back to the model as the
	// call's result and the tool does not run.
	Before func(ctx context.Context, call tool.Call, name string) error
	// After sees every result (output or error).
	After func(ctx context.Context, call tool.Call, name string, res tool.Result, err error)
}

// Approvals remembers the tools a user allowed for the rest of a session.
// It is safe for concurrent use.
type Approvals struct {
	mu     sync.Mutex
	always map[string]bool
}

func (a *Approvals) allowed(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.always[name]
}

func (a *Approvals) allow(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.always == nil {
		a.always = map[string]bool{}
	}
	a.always[name] = true
}

// Forget clears every "allow always" answer.
func (a *Approvals) Forget() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.always = nil
}
