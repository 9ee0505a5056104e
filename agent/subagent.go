package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// Sub-agents: an agent that another runs as a tool. The child has its own
// system prompt, a restricted toolset, its own turn limit and its own
// history (a child session when a Runner stores it), shows its events to
// the caller nested under the calling tool call, and can be held to an
// output schema: it then ends by calling submit_report with a result the
// schema (and an optional Check) accepts.

// DefaultSubAgentTurns bounds a sub-agent's model calls when MaxTurns is 0.
const DefaultSubAgentTurns = 20

// DefaultRepairs is how many times a sub-agent that ended without a valid
// report is asked to send one.
const DefaultRepairs = 2

// The names of the tools a sub-agent gets besides its own.
const (
	SubmitToolName     = "submit_report"
	ScratchpadToolName = "scratchpad"
)

// SubAgent is an agent that another agent can call as a tool. It
// implements tool.Tool; add it to the caller's registry.
type SubAgent struct {
	// Name is the tool's name; Description tells the calling model what
	// the sub-agent is for and when to use it.
	Name, Description string
	// System is the child's system prompt.
	System string
	// Tools are the child's tools. With Select set, the child gets
	// Tools.Select(Select), taken at each call, so that tools registered
	// late (an MCP server's) are included. A child is never given another
	// sub-agent.
	Tools  *tool.Registry
	Select []string
	// Provider and Model answer for the child (nil, "": the caller's).
	Provider llm.Provider
	Model    string
	// MaxTurns bounds the child's model calls (0: DefaultSubAgentTurns).
	MaxTurns int
	// OutputSchema, when set, is the JSON Schema (an object schema) the
	// child's result must match. The child is given submit_report, whose
	// arguments are the result: the call is checked against the schema and
	// by Check, and the child's turn ends when one is accepted. Without an
	// OutputSchema the result is the child's final answer.
	OutputSchema json.RawMessage
	// Check, if set, checks a report beyond its schema (the files it
	// names exist); its error goes back to the child to correct.
	Check func(report json.RawMessage) error
	// Scratchpad, when above 0, makes the child keep a scratchpad (what it
	// has explored, what it still needs): it must update it at least every
	// Scratchpad other tool calls, and once before its report.
	Scratchpad int
	// Repairs bounds the turns that ask a child which ended without a
	// valid report for one (0: DefaultRepairs; negative: none).
	Repairs int
	// Runner runs the child's turns; nil runs them unstored (RunChild).
	// conversation.SubAgentRunner stores them as a child session linked to
	// the caller's.
	Runner Runner
}

// ChildRun is one turn of a sub-agent, handed to a Runner.
type ChildRun struct {
	// Agent is the child, ready to run, with the options of its run (the
	// caller's approver, approval mode and approvals).
	Agent   *Agent
	Options RunOptions
	// Name is the sub-agent's name.
	Name string
	// SessionID is the child's session: "" on its first turn (the Runner
	// makes one), then the one the first turn returned (a turn asking the
	// child again for its report).
	SessionID string
	// ParentSession and ParentCall link the child to the caller:
	// ParentSession is the caller's session (the RunOptions.SessionID of
	// the calling run), "" when unknown; ParentCall is the id of the tool
	// call that runs the child.
	ParentSession, ParentCall string
	// Prompt is this turn's user message.
	Prompt string
	// History is the child's conversation before this turn, for Runners
	// that keep no history of their own.
	History []llm.Message
}

// Runner runs one turn of a sub-agent, emitting its events, and returns its
// result and the session it went to ("" if it is not stored).
type Runner func(ctx context.Context, run ChildRun, emit func(Event)) (res *Result, sessionID string, err error)

// RunChild is the default Runner: the turn runs on the history the run
// carries, and nothing is stored.
func RunChild(ctx context.Context, run ChildRun, emit func(Event)) (*Result, string, error) {
	history := append(append([]llm.Message(nil), run.History...), llm.Message{Role: llm.RoleUser, Content: run.Prompt})
	return run.Agent.RunWith(ctx, history, run.Options, emit), run.SessionID, nil
}

// ---- the tool ----

type subAgentArgs struct {
	Task    string `json:"task" jsonschema:"what to do or find out, with everything the sub-agent needs to know: it sees nothing of this conversation"`
	Context string `json:"context,omitempty" jsonschema:"optional background: what you already know, what to leave out"`
}

// subAgentSchema is tool.Schema[subAgentArgs](), precomputed (a test keeps
// them equal): Spec is asked for every model request.
const subAgentSchema = `{"type":"object","properties":{"task":{"type":"string","description":"what to do or find out, with everything the sub-agent needs to know: it sees nothing of this conversation"},"context":{"type":"string","description":"optional background: what you already know, what to leave out"}},"required":["task"],"additionalProperties":false}`

// Spec is what the calling model sees.
func (s *SubAgent) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: json.RawMessage(subAgentSchema)}
}

// Kind is the most powerful kind among the child's tools: a read-only
// sub-agent runs in every mode, one that edits needs what edits need (and
// its own calls are approved one by one too).
func (s *SubAgent) Kind() tool.Kind {
	reg, err := s.childTools()
	if err != nil {
		return tool.Execute
	}
	k := tool.ReadOnly
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		k = max(k, t.Kind())
	}
	return k
}

// Describe says what a call will do, for approval prompts.
func (s *SubAgent) Describe(args json.RawMessage) string {
	var a subAgentArgs
	json.Unmarshal(args, &a)
	return fmt.Sprintf("run the %s sub-agent: %s", s.Name, clipText(a.Task, 200))
}

// Run runs the child on the call's task and returns its result: the report
// (JSON) when there is an OutputSchema, else its final answer. Run is the
// sub-agent called without a calling agent (by a program): it needs its own
// Provider, and its events' lines go to the call's Progress. Called by an
// agent as one of its tools, the child nests its events under the call and
// takes the caller's settings.
func (s *SubAgent) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	return s.runFrom(ctx, c, nil)
}

// runFrom is Run for a call of the run in sc (nil: no calling agent).
func (s *SubAgent) runFrom(ctx context.Context, c tool.Call, sc *scope) (tool.Result, error) {
	a, err := tool.Decode[subAgentArgs](c)
	if err != nil {
		return tool.Result{}, err
	}
	if strings.TrimSpace(a.Task) == "" {
		return tool.Result{}, errors.New("task is empty: say what the sub-agent should do or find out")
	}
	st, err := s.newState()
	if err != nil {
		return tool.Result{}, fmt.Errorf("sub-agent %s: %w", s.Name, err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	st.cancel = cancel
	child, opts, err := s.child(sc, st)
	if err != nil {
		return tool.Result{}, fmt.Errorf("sub-agent %s: %w", s.Name, err)
	}
	emit := s.forward(sc, c, st)
	runner := s.Runner
	if runner == nil {
		runner = RunChild
	}
	run := ChildRun{Agent: child, Options: opts, Name: s.Name, ParentCall: c.ID, Prompt: taskPrompt(a)}
	if sc != nil {
		run.ParentSession = sc.r.o.SessionID
	}
	repairs := s.Repairs
	if repairs == 0 {
		repairs = DefaultRepairs
	}
	for attempt := 0; ; attempt++ {
		res, sid, err := runner(cctx, run, emit)
		if err != nil && res == nil {
			return tool.Result{}, fmt.Errorf("sub-agent %s: %w", s.Name, err)
		}
		run.SessionID = sid
		run.History = append(append(run.History, llm.Message{Role: llm.RoleUser, Content: run.Prompt}), res.Messages...)
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if s.OutputSchema == nil {
			if res.Reason == DoneStop {
				return tool.Result{Output: res.Text}, nil
			}
			return tool.Result{}, s.stopped(res, st)
		}
		report, why := st.result(res)
		if report != nil {
			return tool.Result{Output: string(report), Display: renderReport(s.Name, report, sid)}, nil
		}
		if attempt >= repairs || res.Reason == DoneError || res.Reason == DoneCancelled {
			return tool.Result{}, s.stopped(res, st)
		}
		run.Prompt = fmt.Sprintf("You have not sent a valid report (%s). Call %s now with your report, from what you have found so far; put what you could not settle in open_questions.", why, SubmitToolName)
		child.MaxTurns = 3
	}
}

// stopped explains a child that ended without a result, with its
// scratchpad, so that the caller can use what it learned.
func (s *SubAgent) stopped(res *Result, st *childState) error {
	var why string
	switch res.Reason {
	case DoneMaxTurns:
		why = "it reached its turn limit"
	case DoneError:
		why = "it failed: " + errText(res.Err)
	case DoneCancelled:
		why = "it was cancelled"
	default:
		why = "it ended without a valid report"
	}
	msg := fmt.Sprintf("sub-agent %s stopped without a result: %s", s.Name, why)
	if p := st.padText(); p != "" {
		msg += ". Its scratchpad: " + p
	}
	if res.Text != "" {
		msg += ". Its last words: " + clipText(res.Text, 500)
	}
	return errors.New(msg)
}

func errText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

func taskPrompt(a subAgentArgs) string {
	p := strings.TrimSpace(a.Task)
	if c := strings.TrimSpace(a.Context); c != "" {
		p += "\n\nContext from the caller:\n" + c
	}
	return p
}
