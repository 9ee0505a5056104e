package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/internal/investigator"
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

// ---- the caller's context ----

// scope is what a tool call that runs a sub-agent knows of the turn that
// called it. The run hands it to the call (safeRun), so that the child nests
// its events under the call and takes the caller's settings.
type scope struct {
	r        *run
	id, name string
}

// delegate is a tool that runs another agent: the run calls runFrom with
// its scope instead of Run. *SubAgent is one. A wrapper that embeds
// tool.Tool does not pass runFrom on: a wrapped delegate would run as a
// plain tool, without its caller (a child's tools, the only ones wrapped,
// never include a sub-agent: see childTools).
type delegate interface {
	runFrom(ctx context.Context, c tool.Call, parent *scope) (tool.Result, error)
}

// inherited is the calling agent's configuration for a child to start
// from: a copy of it, so that every setting (reasoning, window,
// compression, limits, logger, approval mode, and any field added to Agent
// later) passes to the child unless the sub-agent sets its own; it
// answers with the calling run's model. Prepare is left out: it ran at the
// start of the caller's turn, before this call.
func (sc *scope) inherited() Agent {
	a := *sc.r.a
	a.Model = sc.r.model()
	a.Prepare = nil
	return a
}

// options are the options of the child's run: of the caller's run, it
// shares who answers approvals (the approver, the live mode, the
// approvals). Its hooks, message and compaction callbacks and session stay
// the caller's; the child's Runner gives it its own session.
func (sc *scope) options() RunOptions {
	return RunOptions{Approver: sc.r.o.Approver, Mode: sc.r.o.Mode, Approvals: sc.r.approvals}
}

// ---- the tool ----

type subAgentArgs struct {
	Task    string `json:"task" jsonschema:"what to do or find out, with everything the sub-agent needs to know: it sees nothing of this conversation"`
	Context string `json:"context,omitempty" jsonschema:"optional background: what you already know, what to leave out"`
}

// Spec is what the calling model sees.
func (s *SubAgent) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: tool.Schema[subAgentArgs]()}
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

// childTools is the child's own toolset (without submit and scratchpad).
func (s *SubAgent) childTools() (*tool.Registry, error) {
	if s.Tools == nil {
		return tool.NewRegistry()
	}
	reg := s.Tools
	if len(s.Select) > 0 {
		var err error
		if reg, err = s.Tools.Select(tool.Profile{Name: "of sub-agent " + s.Name, Tools: s.Select}); err != nil {
			return nil, err
		}
	}
	out, _ := tool.NewRegistry()
	for _, n := range reg.Names() {
		t, _ := reg.Get(n)
		if _, nested := t.(*SubAgent); nested {
			continue
		}
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// errReported ends a child's turn once its report is accepted.
var errReported = errors.New("the report was accepted")

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

// child builds the child agent and the options of its run. With a caller,
// the child starts from the caller's configuration (scope.inherited) and
// shares its approvals (scope.options). The sub-agent's own settings
// replace the caller's: System, Tools, MaxTurns, and Provider or Model when
// set (a Provider of its own comes with its own Model).
func (s *SubAgent) child(sc *scope, st *childState) (*Agent, RunOptions, error) {
	var opts RunOptions
	reg, err := s.childTools()
	if err != nil {
		return nil, opts, err
	}
	if s.Scratchpad > 0 {
		gated, _ := tool.NewRegistry()
		for _, n := range reg.Names() {
			t, _ := reg.Get(n)
			if err := gated.Add(&padGate{Tool: t, st: st}); err != nil {
				return nil, opts, err
			}
		}
		if err := gated.Add(&padTool{st: st}); err != nil {
			return nil, opts, err
		}
		reg = gated
	}
	if s.OutputSchema != nil {
		if err := reg.Add(&submitTool{s: s, st: st}); err != nil {
			return nil, opts, err
		}
	}
	var a Agent
	if sc != nil {
		a, opts = sc.inherited(), sc.options()
	}
	a.System, a.Tools, a.MaxTurns = s.System, reg, s.MaxTurns
	if a.MaxTurns <= 0 {
		a.MaxTurns = DefaultSubAgentTurns
	}
	switch {
	case s.Provider != nil:
		a.Provider, a.Model = s.Provider, s.Model
	case s.Model != "":
		a.Model = s.Model
	}
	if a.Provider == nil {
		return nil, opts, errors.New("no model provider: set SubAgent.Provider, or call it from an agent")
	}
	return &a, opts, nil
}

// forward nests the child's events under the calling tool call, as
// tool_output events carrying the child's event; without a calling agent,
// their one-line renderings go to the call's Progress. The child's
// approval_required events are addressed to the user, through the same
// approver as the caller's: they go out as they are, not nested, so that
// every surface that answers approvals sees them.
func (s *SubAgent) forward(sc *scope, c tool.Call, st *childState) func(Event) {
	return func(ev Event) {
		if ev.Type == EventDone && ev.DoneReason == DoneCancelled && st.reported() {
			ev.DoneReason = DoneStop // ended by its accepted report
		}
		line := renderEvent(ev)
		switch {
		case sc != nil && ev.Type == EventApprovalRequired:
			sc.r.emit(ev)
		case sc != nil:
			nested := ev
			sc.r.emit(Event{Type: EventToolOutput, ID: sc.id, Name: sc.name, Text: line, Nested: &nested})
		case c.Progress != nil && line != "":
			c.Progress(line)
		}
	}
}

// renderEvent is a child event in a line for plain UIs ("" for events they
// need not show).
func renderEvent(ev Event) string {
	switch ev.Type {
	case EventSession:
		return fmt.Sprintf("[sub-agent session %s]\n", ev.SessionID)
	case EventToolCall:
		return fmt.Sprintf("→ %s %s\n", ev.Name, clipText(compactJSON(ev.Args), 160))
	case EventToolResult:
		if ev.OK {
			return fmt.Sprintf("✓ %s\n", ev.Name)
		}
		return fmt.Sprintf("✗ %s: %s\n", ev.Name, clipText(ev.Error, 200))
	case EventError:
		return fmt.Sprintf("error: %s\n", ev.Error)
	}
	return ""
}

// ---- per-call state: scratchpad and report ----

type childState struct {
	schema *jsonschema.Resolved
	check  func(json.RawMessage) error
	every  int // scratchpad: most other calls between updates (0: none kept)
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	explored string
	needed   string
	updates  int
	since    int
	report   json.RawMessage
}

func (s *SubAgent) newState() (*childState, error) {
	st := &childState{check: s.Check, every: s.Scratchpad}
	if s.OutputSchema != nil {
		rs, err := resolveObjectSchema(s.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		st.schema = rs
	}
	return st, nil
}

func resolveObjectSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	if sch.Type != "object" {
		return nil, errors.New(`want an object schema ("type": "object")`)
	}
	return sch.Resolve(nil)
}

func (st *childState) reported() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.report != nil
}

func (st *childState) padText() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.updates == 0 {
		return ""
	}
	return fmt.Sprintf("explored: %s; still needed: %s", st.explored, orNothing(st.needed))
}

func orNothing(s string) string {
	if strings.TrimSpace(s) == "" {
		return "nothing"
	}
	return s
}

// validate checks a report against the schema and Check.
func (st *childState) validate(report json.RawMessage) error {
	var v any
	if err := json.Unmarshal(report, &v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := st.schema.Validate(v); err != nil {
		return fmt.Errorf("it does not match the report schema: %v", err)
	}
	if st.check != nil {
		if err := st.check(report); err != nil {
			return err
		}
	}
	return nil
}

// result is the child's report: the one submit_report accepted, else a
// valid JSON report in its final answer. why says what was wrong.
func (st *childState) result(res *Result) (json.RawMessage, string) {
	st.mu.Lock()
	r := st.report
	st.mu.Unlock()
	if r != nil {
		return r, ""
	}
	switch res.Reason {
	case DoneStop:
	case DoneMaxTurns:
		return nil, "you reached your turn limit"
	default:
		return nil, "your turn ended: " + string(res.Reason)
	}
	raw := extractJSON(res.Text)
	if raw == nil {
		return nil, "your answer held no JSON report"
	}
	if err := st.validate(raw); err != nil {
		return nil, err.Error()
	}
	return compactRaw(raw), ""
}

// extractJSON finds a JSON object in a model's answer: the whole text, a
// fenced block, or the span from the first { to the last }.
func extractJSON(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 && json.Valid([]byte(strings.TrimSpace(rest[:j]))) {
			return json.RawMessage(strings.TrimSpace(rest[:j]))
		}
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i && json.Valid([]byte(s[i:j+1])) {
		return json.RawMessage(s[i : j+1])
	}
	return nil
}

// submitTool takes the child's report.
type submitTool struct {
	s  *SubAgent
	st *childState
}

func (t *submitTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: SubmitToolName,
		Description: "Send your final report to the agent that asked. Call it once, when you are done; your work ends when it is accepted.",
		Parameters:  t.s.OutputSchema}
}

func (t *submitTool) Kind() tool.Kind { return tool.ReadOnly }

func (t *submitTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	st := t.st
	st.mu.Lock()
	noPad := st.every > 0 && st.updates == 0
	st.mu.Unlock()
	if noPad {
		return tool.Result{}, fmt.Errorf("update your %s first (what you explored, what is still open), then send the report", ScratchpadToolName)
	}
	if err := st.validate(c.Args); err != nil {
		return tool.Result{}, fmt.Errorf("report not accepted: %v. Correct it and call %s again", err, SubmitToolName)
	}
	st.mu.Lock()
	st.report = compactRaw(c.Args)
	st.mu.Unlock()
	st.cancel(errReported)
	return tool.Result{Output: "Report accepted."}, nil
}

// padTool is the scratchpad.
type padTool struct{ st *childState }

type padArgs struct {
	Explored    string `json:"explored" jsonschema:"what you have looked at so far, and what you learned"`
	StillNeeded string `json:"still_needed" jsonschema:"what you still need to find out; empty when you are ready to report"`
}

func (t *padTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ScratchpadToolName,
		Description: "Keep your notes: what you have explored and what you still need to find. Update it at the start and after every few steps.",
		Parameters:  tool.Schema[padArgs]()}
}

func (t *padTool) Kind() tool.Kind { return tool.ReadOnly }

func (t *padTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	a, err := tool.Decode[padArgs](c)
	if err != nil {
		return tool.Result{}, err
	}
	st := t.st
	st.mu.Lock()
	st.explored, st.needed = a.Explored, a.StillNeeded
	st.updates++
	st.since = 0
	st.mu.Unlock()
	if strings.TrimSpace(a.StillNeeded) == "" {
		return tool.Result{Output: fmt.Sprintf("Scratchpad saved. Nothing is left to find: call %s.", SubmitToolName)}, nil
	}
	return tool.Result{Output: "Scratchpad saved. Next: " + a.StillNeeded}, nil
}

// padGate refuses a child's tool call when its scratchpad is overdue.
type padGate struct {
	tool.Tool
	st *childState
}

func (g *padGate) Describe(args json.RawMessage) string {
	if d, ok := g.Tool.(tool.Describer); ok {
		return d.Describe(args)
	}
	return g.Spec().Name
}

func (g *padGate) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	st := g.st
	st.mu.Lock()
	overdue := st.since >= st.every
	if !overdue {
		st.since++
	}
	st.mu.Unlock()
	if overdue {
		return tool.Result{}, fmt.Errorf("not run: update your %s first (what you have explored, what you still need to find), then call %s again", ScratchpadToolName, g.Spec().Name)
	}
	return g.Tool.Run(ctx, c)
}

// ---- rendering ----

// renderReport shows a report to people: the summary, then the files.
// Reports of other shapes are shown as indented JSON.
func renderReport(name string, report json.RawMessage, sessionID string) string {
	var r investigator.Report
	var b strings.Builder
	if json.Unmarshal(report, &r) == nil && r.Summary != "" {
		b.WriteString(r.Summary)
		b.WriteString("\n")
		for _, f := range r.RelevantFiles {
			fmt.Fprintf(&b, "\n• %s", f.Path)
			for i, l := range f.Lines {
				if i == 0 {
					b.WriteString(" (lines ")
				} else {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d–%d", l.Start, l.End)
				if i == len(f.Lines)-1 {
					b.WriteString(")")
				}
			}
			if f.Reason != "" {
				b.WriteString(": " + f.Reason)
			}
		}
		if len(r.OpenQuestions) > 0 {
			b.WriteString("\n\nOpen questions:")
			for _, q := range r.OpenQuestions {
				b.WriteString("\n? " + q)
			}
		}
	} else {
		var out bytes.Buffer
		if json.Indent(&out, report, "", "  ") != nil {
			out.Reset()
			out.Write(report)
		}
		b.Write(out.Bytes())
	}
	if sessionID != "" {
		fmt.Fprintf(&b, "\n\n(%s's session: %s)", name, sessionID)
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	return string(compactRaw(raw))
}

func compactRaw(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
