package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// The plan: a checklist the model keeps of a task of several steps, which
// the user watches change. Small local models lose the thread of a long
// task; writing the steps down, and marking each as it goes, keeps them on
// it. The plan lives in the conversation itself (the calls of the plan
// tool), so that a session resumed, rewound or forked has the plan it had
// at that point.

// PlanToolName is the name of the plan tool.
const PlanToolName = "update_plan"

// PlanStatus is the state of one step of a plan.
type PlanStatus string

// The states of a step.
const (
	PlanPending    PlanStatus = "pending"
	PlanInProgress PlanStatus = "in_progress"
	PlanDone       PlanStatus = "done"
	// PlanSkipped is a step given up, with a reason.
	PlanSkipped PlanStatus = "skipped"
)

// Limits of a plan, so that a confused model cannot flood the screen.
const (
	MaxPlanSteps    = 30
	maxPlanStepText = 300
)

// PlanStep is one step of a plan.
type PlanStep struct {
	Step   string     `json:"step"`
	Status PlanStatus `json:"status"`
	// Reason says why a step was skipped.
	Reason string `json:"reason,omitempty"`
}

// Plan is the model's checklist of the task.
type Plan struct {
	Steps []PlanStep `json:"steps"`
}

// Open returns the steps not yet done or skipped.
func (p *Plan) Open() []PlanStep {
	if p == nil {
		return nil
	}
	var open []PlanStep
	for _, s := range p.Steps {
		if s.Status == PlanPending || s.Status == PlanInProgress {
			open = append(open, s)
		}
	}
	return open
}

// Text renders the plan in a few lines, for the model (a summary, a
// reminder) and for plain-text front ends:
//
//  1. [done] Read main.go
//  2. [in progress] Fix the parser
//  3. [skipped: no tests] Run the tests
func (p *Plan) Text() string {
	if p == nil {
		return ""
	}
	var b strings.Builder
	for i, s := range p.Steps {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d. [%s] %s", i+1, s.label(), s.Step)
	}
	return b.String()
}

func (s PlanStep) label() string {
	switch s.Status {
	case PlanInProgress:
		return "in progress"
	case PlanSkipped:
		if s.Reason != "" {
			return "skipped: " + s.Reason
		}
	}
	return string(s.Status)
}

// planArgs is what the plan tool takes.
type planArgs struct {
	Steps []PlanStep `json:"steps"`
}

// planSchema is the plan tool's parameters: short, because a small model's
// prompt is what its user waits for.
const planSchema = `{"type":"object","properties":{"steps":{"type":"array","items":{"type":"object","properties":{"step":{"type":"string"},"status":{"enum":["pending","in_progress","done","skipped"]},"reason":{"type":"string"}},"required":["step","status"]}}},"required":["steps"]}`

const planDescription = "Checklist for a task of several steps: call it first with all steps pending, then whenever a step starts or ends, with the whole list. One step in_progress at a time; a skipped step needs a reason."

// ParsePlan reads and checks the plan tool's arguments: at most
// MaxPlanSteps steps, each with text, a known status and (when skipped) a
// reason, and at most one in progress. An empty list clears the plan.
func ParsePlan(args json.RawMessage) (*Plan, error) {
	var a planArgs
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("the arguments are not a plan: %w", err)
	}
	if len(a.Steps) > MaxPlanSteps {
		return nil, fmt.Errorf("the plan has %d steps: keep it to %d or fewer", len(a.Steps), MaxPlanSteps)
	}
	p := &Plan{Steps: make([]PlanStep, 0, len(a.Steps))}
	inProgress := 0
	for i, s := range a.Steps {
		s.Step = strings.Join(strings.Fields(s.Step), " ")
		s.Reason = strings.Join(strings.Fields(s.Reason), " ")
		switch s.Status {
		case PlanPending, PlanDone:
		case PlanInProgress:
			inProgress++
		case PlanSkipped:
			if s.Reason == "" {
				return nil, fmt.Errorf("step %d (%q) is skipped without a reason: give one", i+1, clip(s.Step, 60))
			}
		default:
			return nil, fmt.Errorf("step %d has status %q: use pending, in_progress, done or skipped", i+1, s.Status)
		}
		if s.Step == "" {
			return nil, fmt.Errorf("step %d has no text", i+1)
		}
		s.Step, s.Reason = clip(s.Step, maxPlanStepText), clip(s.Reason, maxPlanStepText)
		p.Steps = append(p.Steps, s)
	}
	if inProgress > 1 {
		return nil, errors.New("more than one step is in_progress: keep one in progress, the others pending or done")
	}
	return p, nil
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// PlanOf returns the plan a conversation holds at its end: that of the
// last call of the plan tool whose result was not an error (nil: none, or
// the last one cleared it). Give it every message of the session, the
// compacted ones too: a summary replaced a call the plan still follows.
func PlanOf(msgs []llm.Message) *Plan {
	var plan *Plan
	for i, m := range msgs {
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		// A call's result is among the tool messages right after its
		// reply: ids are unique within one reply only (servers reuse
		// "call_0").
		accepted := map[string]bool{}
		for _, res := range msgs[i+1:] {
			if res.Role != llm.RoleTool {
				break
			}
			if res.ToolName == PlanToolName && planAccepted(res.Content) {
				accepted[res.ToolCallID] = true
			}
		}
		for _, tc := range m.ToolCalls {
			if tc.Name != PlanToolName || tc.ArgsError != "" || !accepted[tc.ID] {
				continue
			}
			if p, err := ParsePlan(tc.Args); err == nil {
				plan = p
			}
		}
	}
	if plan != nil && len(plan.Steps) == 0 {
		return nil
	}
	return plan
}

// planAccepted reports whether a result of the plan tool says it took the
// plan (not an error, nor a call cut short before it ran).
func planAccepted(content string) bool {
	return strings.HasPrefix(content, planSaved) || strings.HasPrefix(content, planCleared)
}

const (
	planSaved   = "Plan saved:"
	planCleared = "Plan cleared."
)

// planTool is the plan tool. It keeps the plan of the run that calls it
// (a delegate: the run hands it its scope).
type planTool struct{}

// NewPlanTool returns the plan tool, for a registry the main agent's tools
// come from. A sub-agent is never given it (its child would keep a plan of
// its own that no one shows).
func NewPlanTool() tool.Tool { return planTool{} }

func (planTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: PlanToolName, Description: planDescription, Parameters: json.RawMessage(planSchema)}
}

// Kind: it changes nothing but the plan.
func (planTool) Kind() tool.Kind { return tool.ReadOnly }

// Run, outside a run of the agent, only checks the plan.
func (planTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	p, err := ParsePlan(c.Args)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Output: planReply(p)}, nil
}

func (planTool) runFrom(ctx context.Context, c tool.Call, sc *scope) (tool.Result, error) {
	p, err := ParsePlan(c.Args)
	if err != nil {
		return tool.Result{}, err
	}
	r := sc.r
	if len(p.Steps) == 0 {
		r.plan = nil
	} else {
		r.plan = p
	}
	r.planTouched = true
	r.emit(Event{Type: EventPlan, ID: c.ID, Plan: p})
	return tool.Result{Output: planReply(p)}, nil
}

// planReply is the plan tool's result: short, and pointing at what is next.
func planReply(p *Plan) string {
	if len(p.Steps) == 0 {
		return planCleared
	}
	done := 0
	var now, next string
	for _, s := range p.Steps {
		switch s.Status {
		case PlanDone, PlanSkipped:
			done++
		case PlanInProgress:
			now = s.Step
		case PlanPending:
			if next == "" {
				next = s.Step
			}
		}
	}
	out := fmt.Sprintf("%s %d of %d steps finished.", planSaved, done, len(p.Steps))
	switch {
	case now != "":
		out += " Now: " + now
	case next != "":
		out += " Next: " + next
	default:
		out += " Every step is finished: give your answer."
	}
	return out
}

// planReminder is what the model is told when it answers while its plan
// has open steps (Agent.StrictPlan).
func planReminder(p *Plan) string {
	open := p.Open()
	names := make([]string, len(open))
	for i, s := range open {
		names[i] = fmt.Sprintf("%q (%s)", s.Step, PlanStep{Status: s.Status}.label())
	}
	return fmt.Sprintf("Your plan still has %d open step(s): %s. Finish them, or mark them skipped with a reason (%s), then give your final answer.",
		len(open), strings.Join(names, ", "), PlanToolName)
}

// WithPlan adds the plan to a summary of the conversation, so that a
// compression does not lose it.
func WithPlan(summary llm.Message, p *Plan) llm.Message {
	if p == nil || len(p.Steps) == 0 {
		return summary
	}
	summary.Content += "\n\nYour plan (" + PlanToolName + ") so far:\n" + p.Text()
	return summary
}
