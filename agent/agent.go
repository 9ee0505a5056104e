package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// Defaults for an Agent's limits.
const (
	DefaultMaxTurns = 40
	// DefaultMaxRepeats is how many identical failing calls in a row end
	// the turn; identical calls of any outcome end it at twice that.
	DefaultMaxRepeats = 3
	// DefaultMaxToolOutput caps what one tool result sends to the model.
	DefaultMaxToolOutput = 32 << 10
)

// Agent runs turns against one model with one set of tools. Configure the
// fields before the first Run; an Agent is safe for one Run at a time per
// conversation (several conversations may share it).
type Agent struct {
	// Provider and Model say which model answers.
	Provider llm.Provider
	Model    string
	// System is the system prompt; empty means none.
	System string
	// Tools are the tools offered to the model; nil offers none.
	Tools *tool.Registry
	// Mode decides which calls need approval (empty: ModeDefault); a run
	// may follow a live mode instead (RunOptions.Mode).
	Mode Mode
	// Think asks the model to reason (nil: the server's default).
	Think *llm.Think
	// ContextLength, when set, is the window to ask the server for.
	ContextLength int
	// MaxTurns bounds model calls per Run (0: DefaultMaxTurns).
	MaxTurns int
	// MaxRepeats bounds identical failing calls in a row (0: default).
	MaxRepeats int
	// MaxToolOutput caps a tool result sent to the model (0: default).
	MaxToolOutput int
	// CompressAt is the share of ContextLength at which older turns are
	// summarised before a model call (0: DefaultCompressAt; negative:
	// never). Nothing is compressed when ContextLength is 0.
	CompressAt float64
	Logger     *slog.Logger
	// Prepare, if set, runs at the start of each Run, before the first
	// model call: the app waits there for MCP servers still starting, so
	// that the first prompt is offered their tools.
	Prepare func(ctx context.Context)
	// StrictPlan sends the model back, once per run, when it gives its
	// final answer while the plan it wrote or changed in this run still
	// has open steps (EventPlan with Reminder says so).
	StrictPlan bool
	// Withheld, if set, says why a tool the model named is not among
	// Tools when the caller keeps it back on purpose (a read-only
	// workspace's edit tools): the call's result says that instead of
	// "unknown tool". "" means the name is simply unknown.
	Withheld func(name string) string
}

// RunOptions is what belongs to one run rather than to the agent's
// configuration: who answers approvals, what the caller is told as the
// turn goes, and the session's state the run shares. The zero value is a
// non-interactive run that remembers its own "allow always" answers only.
type RunOptions struct {
	// Model, when set, answers this run instead of the agent's model.
	Model string
	// Approver answers calls that need approval (nil: non-interactive,
	// refuse what needs approval, with a result saying how to allow it).
	Approver Approver
	// Mode, if set, is asked for the approval mode before each call, so
	// that a mode the user switches during the turn applies to the calls
	// that follow (nil: the agent's Mode).
	Mode func() Mode
	// Approvals remembers "allow always" answers; share one across the
	// turns of a session (nil: the run remembers its own answers only).
	Approvals *Approvals
	// Hooks run around every tool call, after approval.
	Hooks Hooks
	// OnMessage, if set, is given each message as the turn adds it (the
	// assistant's replies, each tool result), so that a caller can commit
	// it at once. partial marks a reply cut short by an error or a cancel.
	OnMessage func(m llm.Message, partial bool)
	// OnCompact, if set, learns of a compression: the first cut messages
	// of the conversation (the history given to Run, then the messages
	// added since) were replaced by summary.
	OnCompact func(cut int, summary llm.Message)
	// OnUsage, if set, is given the token count of each model call the
	// run makes besides its replies (whose counts are EventUsage events):
	// the summaries of automatic compaction, with the model that made
	// them, so that a caller can record what they cost.
	OnUsage func(model string, u llm.Usage)
	// SessionID is the stored session this run belongs to ("" when it is
	// not stored); sub-agents link their child sessions to it
	// (ChildRun.ParentSession).
	SessionID string
	// Plan is the session's plan when the run starts (nil: the one the
	// history holds, PlanOf). A caller whose history lost the plan's call
	// to a summary gives it from the whole stored conversation.
	Plan *Plan
}

// Result is what a Run produced.
type Result struct {
	// Messages are the messages the turn added to the conversation: the
	// assistant's replies (with their tool calls) and the tool results,
	// partial ones included when the turn was cut short. Every tool call in
	// them has its result.
	Messages []llm.Message
	// Text is the final answer (the last assistant text).
	Text   string
	Reason DoneReason
	// Usage sums the token counts of the turn's model calls.
	Usage llm.Usage
	// LastInputTokens is the prompt size of the last model call, the best
	// measure of how full the context window is.
	LastInputTokens int
	// Err is why the turn failed (Reason == DoneError).
	Err error
	// Plan is the model's plan at the end of the turn (nil: none).
	Plan *Plan
}

// Run performs one turn: history is the conversation so far, ending with the
// user's message (the system prompt is added by the agent). emit receives
// every event, in order, from the calling goroutine; it must not block for
// long. Run returns when the model has answered, the turn limit is hit, ctx
// is cancelled, or an error ends the turn; the last event is always done.
func (a *Agent) Run(ctx context.Context, history []llm.Message, emit func(Event)) *Result {
	return a.RunWith(ctx, history, RunOptions{}, emit)
}

// RunWith is Run with the options of this run.
func (a *Agent) RunWith(ctx context.Context, history []llm.Message, o RunOptions, emit func(Event)) *Result {
	r := &run{a: a, o: o, ctx: ctx, emit: emit, res: &Result{}, approvals: o.Approvals}
	if r.approvals == nil {
		r.approvals = &Approvals{}
	}
	if a.Prepare != nil {
		a.Prepare(ctx)
	}
	r.loop(history)
	r.res.Plan = r.plan
	ev := Event{Type: EventDone, DoneReason: r.res.Reason, Text: r.res.Text}
	emit(ev)
	return r.res
}

// run is the state of one Run.
type run struct {
	a    *Agent
	o    RunOptions
	ctx  context.Context
	emit func(Event)
	res  *Result
	// msgs is the conversation as the model sees it.
	msgs      []llm.Message
	approvals *Approvals
	// countedMsgs is how many of msgs the last model call's usage counted.
	countedMsgs int
	// repeats tracks the last call signature and how often it came in a row.
	lastSig     string
	sameCount   int
	failedCount int
	// unreadable counts the replies in a row with a call whose
	// arguments (or whole call, written as text) could not be read.
	unreadable int
	// plan is the model's checklist; planTouched is set once the run
	// changed it, reminded once it sent the model back to it.
	plan        *Plan
	planTouched bool
	reminded    bool
}

func (a *Agent) maxTurns() int {
	if a.MaxTurns > 0 {
		return a.MaxTurns
	}
	return DefaultMaxTurns
}

func (a *Agent) log() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// mode is the approval mode for the next call.
func (r *run) mode() Mode {
	if r.o.Mode != nil {
		return r.o.Mode()
	}
	return r.a.Mode
}

// model is the model that answers the run.
func (r *run) model() string {
	if r.o.Model != "" {
		return r.o.Model
	}
	return r.a.Model
}

func (r *run) loop(history []llm.Message) {
	r.msgs = append([]llm.Message(nil), history...)
	r.plan = r.o.Plan
	if r.plan == nil {
		r.plan = PlanOf(history)
	}
	for turn := 1; ; turn++ {
		if turn > r.a.maxTurns() {
			r.res.Reason = DoneMaxTurns
			return
		}
		r.maybeCompress()
		msg, err := r.callModel(r.msgs)
		if msg != nil {
			r.add(*msg, err != nil)
			if msg.Content != "" {
				r.res.Text = msg.Content
			}
		}
		if err != nil {
			r.fail(err)
			return
		}
		if len(msg.ToolCalls) == 0 {
			if turn < r.a.maxTurns() && r.remindPlan() {
				continue
			}
			r.res.Reason = DoneStop
			return
		}
		unreadable := ""
		for i, tc := range msg.ToolCalls {
			if r.ctx.Err() != nil {
				r.notRun(msg.ToolCalls[i:], "not run: the turn was cancelled")
				r.res.Reason = DoneCancelled
				return
			}
			if i == MaxCallsPerReply {
				r.notRun(msg.ToolCalls[i:], fmt.Sprintf("not run: at most %d tool calls of one reply run; make fewer at a time", MaxCallsPerReply))
				break
			}
			content, stop := r.runCall(tc)
			r.add(toolMessage(tc, content), false)
			if tc.ArgsError != "" {
				unreadable = strings.TrimPrefix(content, "Error: ")
			}
			if stop != nil {
				r.notRun(msg.ToolCalls[i+1:], "not run: the turn was stopped")
				r.fail(stop)
				return
			}
		}
		if r.ctx.Err() != nil {
			r.res.Reason = DoneCancelled
			return
		}
		// A reply with a call that could not be read got its corrections;
		// replies that go on writing such calls end the turn.
		if unreadable == "" {
			r.unreadable = 0
		} else if r.unreadable++; r.unreadable >= r.a.maxRepeats() {
			r.fail(&turnError{code: CodeUnreadableCalls, msg: fmt.Sprintf("stopped: the model wrote tool calls that could not be read in %d replies in a row (the last: %s); it may not follow the tool protocol: try another model, or another --tool-mode", r.unreadable, unreadable)})
			return
		}
	}
}

// MaxCallsPerReply bounds the tool calls run from one model reply; the
// rest get a result saying they did not run.
const MaxCallsPerReply = 32

// notRun gives each call its result, saying why it did not run, so that
// every call has one (in the history, for the next turn, and as an event,
// for a front end waiting on it).
func (r *run) notRun(calls []llm.ToolCall, why string) {
	for _, tc := range calls {
		r.emit(Event{Type: EventToolResult, ID: tc.ID, Name: tc.Name, Error: why})
		r.add(toolMessage(tc, why), false)
	}
}

func (a *Agent) maxRepeats() int {
	if a.MaxRepeats > 0 {
		return a.MaxRepeats
	}
	return DefaultMaxRepeats
}

// remindPlan sends the model back to its plan when it answered with steps
// still open (Agent.StrictPlan), once per run, and only for a plan the run
// wrote or changed: a question after an unfinished task is not held to it.
func (r *run) remindPlan() bool {
	if !r.a.StrictPlan || r.reminded || !r.planTouched || len(r.plan.Open()) == 0 || r.ctx.Err() != nil {
		return false
	}
	r.reminded = true
	text := planReminder(r.plan)
	r.emit(Event{Type: EventPlan, Plan: r.plan, Reminder: text})
	r.add(llm.Message{Role: llm.RoleUser, Content: text}, false)
	return true
}

// add appends a message to the conversation and hands it to OnMessage.
func (r *run) add(m llm.Message, partial bool) {
	r.msgs = append(r.msgs, m)
	r.res.Messages = append(r.res.Messages, m)
	if r.o.OnMessage != nil {
		r.o.OnMessage(m, partial)
	}
}

// maybeCompress summarises older turns when the conversation nears the
// window. A failed summary is logged, not fatal: the model call that
// follows may still fit, or fail with a clear context-length error.
func (r *run) maybeCompress() {
	a := r.a
	at := a.CompressAt
	if at == 0 {
		at = DefaultCompressAt
	}
	if a.ContextLength <= 0 || at < 0 {
		return
	}
	var specs []llm.ToolSpec
	if a.Tools != nil {
		specs = a.Tools.Specs()
	}
	fixed := EstimateTokens([]llm.Message{{Content: a.System}}, specs)
	used := fixed + EstimateTokens(r.msgs, nil)
	if r.res.LastInputTokens > 0 && r.countedMsgs <= len(r.msgs) {
		// The server counted the prompt of the last call exactly: trust
		// that, plus an estimate of what was added since.
		used = max(used, r.res.LastInputTokens+EstimateTokens(r.msgs[r.countedMsgs:], nil))
	}
	if float64(used) < at*float64(a.ContextLength) {
		return
	}
	keep := int(0.4*float64(a.ContextLength)) - fixed
	var onUsage func(llm.Usage)
	if r.o.OnUsage != nil {
		model := r.model()
		onUsage = func(u llm.Usage) { r.o.OnUsage(model, u) }
	}
	summary, cut, err := a.compress(r.ctx, r.model(), r.msgs, max(keep, 256), onUsage)
	if err != nil {
		a.log().Warn("could not compress the conversation", "error", err)
		return
	}
	summary = WithPlan(summary, r.plan)
	r.msgs = append([]llm.Message{summary}, r.msgs[cut:]...)
	if r.o.OnCompact != nil {
		r.o.OnCompact(cut, summary)
	}
	r.emit(Event{Type: EventCompressed, Text: summary.Content})
}

// noReply stands between two user messages in what is sent, for chat
// templates that require user and assistant turns to alternate (Mistral's,
// with llama.cpp --jinja or vLLM): a turn that failed before any answer, or a
// summary followed by the next request, would otherwise put two together.
const noReply = "(no reply)"

// alternate returns msgs with an assistant placeholder between consecutive
// user messages.
func alternate(msgs []llm.Message) []llm.Message {
	needs := false
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == llm.RoleUser && msgs[i-1].Role == llm.RoleUser {
			needs = true
			break
		}
	}
	if !needs {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs)+2)
	for i, m := range msgs {
		if i > 0 && m.Role == llm.RoleUser && msgs[i-1].Role == llm.RoleUser {
			out = append(out, llm.Message{Role: llm.RoleAssistant, Content: noReply})
		}
		out = append(out, m)
	}
	return out
}

func toolMessage(tc llm.ToolCall, content string) llm.Message {
	return llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name, Content: content}
}

// fail ends the turn on err: cancelled if the context was, else an error
// event and DoneError.
func (r *run) fail(err error) {
	if r.ctx.Err() != nil || llm.CodeOf(err) == llm.CodeCancelled {
		r.res.Reason = DoneCancelled
		return
	}
	r.res.Reason, r.res.Err = DoneError, err
	r.emit(Event{Type: EventError, Error: err.Error(), Code: CodeOf(err), Retryable: llm.IsRetryable(err)})
}

// turnError ends a turn for a reason of the agent's own.
type turnError struct {
	code ErrorCode
	msg  string
}

func (e *turnError) Error() string { return e.msg }

// callModel streams one model reply, emitting its events, and returns the
// assistant message (partial when the stream failed; nil when empty).
func (r *run) callModel(msgs []llm.Message) (*llm.Message, error) {
	a := r.a
	req := a.request(r.model(), msgs)
	var text, thinking strings.Builder
	var calls []llm.ToolCall
	inThinking := false
	endThinking := func() {
		if inThinking {
			inThinking = false
			r.emit(Event{Type: EventThinkingEnd})
		}
	}
	var err error
	for ev, e := range a.Provider.Chat(r.ctx, req) {
		if e != nil {
			err = e
			break
		}
		switch ev.Kind {
		case llm.EventThinking:
			if !inThinking {
				inThinking = true
				r.emit(Event{Type: EventThinkingStart})
			}
			thinking.WriteString(ev.Text)
			r.emit(Event{Type: EventThinkingDelta, Text: ev.Text})
		case llm.EventText:
			endThinking()
			text.WriteString(ev.Text)
			r.emit(Event{Type: EventTextDelta, Text: ev.Text})
		case llm.EventThinkingReclassified:
			// The text streamed so far in this reply was reasoning (the
			// template had opened a <think> block): it moves to the
			// thinking, and the reasoning is open until the answer starts,
			// as after a thinking_start.
			moved := text.String()
			text.Reset()
			thinking.WriteString(moved)
			inThinking = true
			r.emit(Event{Type: EventThinkingReclassified, Text: moved})
		case llm.EventToolCall:
			endThinking()
			tc := *ev.ToolCall
			tc.Args = compactArgs(tc.Args) // once, as it will be stored
			calls = append(calls, tc)
			r.emit(Event{Type: EventToolCall, ID: tc.ID, Name: tc.Name, Args: tc.Args})
		case llm.EventUsage:
			u := *ev.Usage
			r.res.Usage.InputTokens += u.InputTokens
			r.res.Usage.OutputTokens += u.OutputTokens
			r.res.Usage.CachedInputTokens += u.CachedInputTokens
			r.res.LastInputTokens = u.InputTokens
			r.countedMsgs = len(msgs)
			r.emit(Event{Type: EventUsage, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedInputTokens: u.CachedInputTokens})
		case llm.EventDone:
			if ev.Done.PromptTruncated {
				a.log().Warn("the server cut the prompt to fit its context window", "model", r.model())
			}
		}
	}
	endThinking()
	if text.Len() > 0 && thinking.String() == text.String() {
		// A reply read as starting inside a <think> block the template
		// opened, that never closed it: the model did not think, and its
		// text, streamed as reasoning, came again whole as the answer
		// (thinktag). It is the answer only.
		thinking.Reset()
	}
	if text.Len() == 0 && thinking.Len() == 0 && len(calls) == 0 {
		if err != nil {
			return nil, err
		}
		// An empty reply still answers the user: keep it, so that the
		// conversation keeps alternating.
		a.log().Warn("the model sent an empty reply", "model", r.model())
		return &llm.Message{Role: llm.RoleAssistant}, nil
	}
	if err != nil {
		// The reply failed: its calls will not run. Each announced call
		// gets its result event, so that no UI waits for it.
		for _, tc := range calls {
			r.emit(Event{Type: EventToolResult, ID: tc.ID, Name: tc.Name, Error: "not run: the model's reply failed"})
		}
		calls = nil
	}
	return &llm.Message{Role: llm.RoleAssistant, Content: text.String(), Thinking: thinking.String(), ToolCalls: calls}, err
}

// runCall runs one tool call and returns the content of its result message.
// A non-nil stop error ends the turn (the model is stuck in a loop).
func (r *run) runCall(tc llm.ToolCall) (content string, stop error) {
	a := r.a
	ok, out, display, errText := r.execute(tc)
	if ok {
		content = out
		r.emit(Event{Type: EventToolResult, ID: tc.ID, Name: tc.Name, OK: true, Output: out, Display: display})
	} else {
		content = "Error: " + errText
		r.emit(Event{Type: EventToolResult, ID: tc.ID, Name: tc.Name, OK: false, Error: errText, Display: display})
	}
	sig := tc.Name + "\x00" + canonical(tc.Args)
	if sig == r.lastSig {
		r.sameCount++
	} else {
		r.lastSig, r.sameCount, r.failedCount = sig, 1, 0
	}
	if !ok {
		r.failedCount++
	}
	limit := a.maxRepeats()
	switch {
	case !ok && r.failedCount >= limit && tc.ArgsError == "":
		// (Calls that cannot be read are counted by reply, in loop.)
		return content, &turnError{code: CodeToolLoop, msg: fmt.Sprintf("stopped: the model made the same failing call %d times in a row (%s: %s)", r.failedCount, tc.Name, errText)}
	case r.sameCount >= 2*limit:
		return content, &turnError{code: CodeToolLoop, msg: fmt.Sprintf("stopped: the model made the same call %d times in a row (%s)", r.sameCount, tc.Name)}
	}
	return content, nil
}

// execute validates, approves and runs a call. It never panics: a tool's
// panic becomes a failed result.
func (r *run) execute(tc llm.ToolCall) (ok bool, out, display, errText string) {
	a := r.a
	if a.Tools == nil {
		return false, "", "", fmt.Sprintf("unknown tool %q: no tools are available", tc.Name)
	}
	t, found := a.Tools.Get(tc.Name)
	if tc.ArgsError != "" && tc.FromText && (tc.Name == "" || !found || strings.HasSuffix(tc.ArgsError, "</tool_call>")) {
		// A call written as text that could not be read: the error says
		// how to write it (the prompted protocol's correction ends with
		// the form to use).
		return false, "", "", tc.ArgsError
	}
	if !found {
		if a.Withheld != nil {
			if why := a.Withheld(tc.Name); why != "" {
				return false, "", "", why
			}
		}
		return false, "", "", fmt.Sprintf("unknown tool %q; the tools are: %s", tc.Name, strings.Join(sortedNames(a.Tools), ", "))
	}
	if tc.ArgsError != "" {
		return false, "", "", tc.ArgsError + ": send the arguments as one JSON object"
	}
	if err := a.Tools.Validate(tc.Name, tc.Args); err != nil {
		return false, "", "", err.Error()
	}
	if msg := r.approve(tc, t); msg != "" {
		return false, "", "", msg
	}
	call := tool.Call{ID: tc.ID, Args: tc.Args, Progress: func(chunk string) {
		r.emit(Event{Type: EventToolOutput, ID: tc.ID, Name: tc.Name, Text: chunk})
	}}
	if h := r.o.Hooks.Before; h != nil {
		if err := h(r.ctx, call, tc.Name); err != nil {
			return false, "", "", "refused: " + err.Error()
		}
	}
	res, err := safeRun(r.ctx, a.log(), t, call, &scope{r: r, id: tc.ID, name: tc.Name})
	if h := r.o.Hooks.After; h != nil {
		h(r.ctx, call, tc.Name, res, err)
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return false, "", res.Display, "cancelled: " + err.Error()
		}
		return false, "", res.Display, err.Error()
	}
	return true, r.capOutput(res.Output), res.Display, ""
}

// approve returns "" when the call may run, else why not.
func (r *run) approve(tc llm.ToolCall, t tool.Tool) string {
	mode := r.mode()
	if mode == "" {
		mode = ModeDefault
	}
	ask, refuse := NeedsApproval(mode, t.Kind())
	if refuse != "" {
		return refuse
	}
	if !ask {
		return ""
	}
	if r.approvals.allowed(tc.Name) {
		return ""
	}
	reason := tc.Name
	if d, ok := t.(tool.Describer); ok {
		reason = d.Describe(tc.Args)
	}
	r.emit(Event{Type: EventApprovalRequired, ID: tc.ID, Name: tc.Name, Args: tc.Args, Reason: reason})
	if r.o.Approver == nil {
		allow := "--approval-mode yolo"
		if ModeAllowing(t.Kind()) == ModeAutoEdit {
			allow = "--approval-mode auto_edit or yolo"
		}
		return fmt.Sprintf("%s needs the user's approval, and this run cannot ask (non-interactive, approval mode %s). Do without it, or tell the user to allow it (%s).", tc.Name, mode, allow)
	}
	ans, err := r.o.Approver.Approve(r.ctx, Request{ID: tc.ID, Tool: tc.Name, Kind: t.Kind(), Args: tc.Args, Reason: reason})
	if err != nil {
		if r.ctx.Err() != nil {
			return "cancelled before the user answered"
		}
		return "approval failed: " + err.Error()
	}
	switch ans.Decision {
	case AllowAlways:
		r.approvals.allow(tc.Name)
		return ""
	case Allow:
		return ""
	}
	msg := "the user denied this call"
	if ans.Message != "" {
		msg += ": " + ans.Message
	}
	return msg
}

// safeRun runs a tool, turning a panic into an error. A tool that runs
// another agent (a delegate: a SubAgent) is given the calling run's scope,
// so that its child nests its events under the call and takes the caller's
// settings.
func safeRun(ctx context.Context, log *slog.Logger, t tool.Tool, c tool.Call, parent *scope) (res tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the tool crashed (%v); this is a bug in the tool, not in your call", p)
			log.Error("tool panic", "tool", t.Spec().Name, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	if d, ok := t.(delegate); ok {
		return d.runFrom(ctx, c, parent)
	}
	return t.Run(ctx, c)
}

func (r *run) capOutput(s string) string {
	limit := r.a.MaxToolOutput
	if limit <= 0 {
		limit = DefaultMaxToolOutput
	}
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 character
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output cut: %d of %d bytes shown]", cut, len(s))
}

// canonical re-encodes JSON so that key order and spacing do not hide a
// repeated call.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sortedNames(r *tool.Registry) []string {
	n := r.Names()
	sort.Strings(n)
	return n
}
