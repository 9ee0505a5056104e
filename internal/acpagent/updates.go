package acpagent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
)

// maxShown bounds the text a tool call's content shows in the editor (its
// output, or its error): the tail of a command's output while it runs,
// the head of a result. The model sees the whole result either way.
const maxShown = 32 << 10

// outputEvery is how often a running call's output is sent again while it
// streams (each update carries all of it, up to maxShown: ACP replaces a
// call's content, it does not append to it).
const outputEvery = 250 * time.Millisecond

// kinds says what kind of ACP tool call each of Hearth's built-in tools is
// (the editor picks an icon and a layout from it); other tools are "other".
var kinds = map[string]acp.ToolKind{
	"read_file":             acp.ToolKindRead,
	"read_many_files":       acp.ToolKindRead,
	"list_directory":        acp.ToolKindSearch,
	"glob":                  acp.ToolKindSearch,
	"grep_search":           acp.ToolKindSearch,
	"write_file":            acp.ToolKindEdit,
	"edit":                  acp.ToolKindEdit,
	"run_shell_command":     acp.ToolKindExecute,
	"codebase_investigator": acp.ToolKindThink,
}

// toolKind returns the ACP kind of a call of the tool name.
func toolKind(name string) acp.ToolKind {
	if k, ok := kinds[name]; ok {
		return k
	}
	return acp.ToolKindOther
}

// The ids of the options of a permission request.
const (
	optionAllow       = "allow"
	optionAllowAlways = "allow_always"
	optionReject      = "reject"
)

// permissionOptions are the answers the editor offers for a call of the
// tool name: Hearth's allow (this call), allow always (this tool, for the
// rest of the session) and deny.
func permissionOptions(name string) []acp.PermissionOption {
	return []acp.PermissionOption{
		{OptionId: optionAllow, Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionId: optionAllowAlways, Name: "Always allow " + name + " in this session", Kind: acp.PermissionOptionKindAllowAlways},
		{OptionId: optionReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
	}
}

// decision maps the editor's answer to a permission request to Hearth's:
// ok is false when the request was cancelled (the turn is being stopped)
// or the option is not one Hearth offered, which both deny the call.
func decision(out acp.RequestPermissionOutcome) (d hearth.Decision, ok bool) {
	if out.Selected == nil {
		return hearth.Deny, false
	}
	switch string(out.Selected.OptionId) {
	case optionAllow:
		return hearth.Allow, true
	case optionAllowAlways:
		return hearth.AllowAlways, true
	case optionReject:
		return hearth.Deny, true
	}
	return hearth.Deny, false
}

// planEntries maps Hearth's plan to ACP's: a skipped step is finished (ACP
// has no such state), its reason said in its text. An empty plan is an
// empty list, which clears the editor's.
func planEntries(p *hearth.Plan) []acp.PlanEntry {
	entries := []acp.PlanEntry{}
	if p == nil {
		return entries
	}
	for _, s := range p.Steps {
		e := acp.PlanEntry{Content: s.Step, Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusPending}
		switch s.Status {
		case hearth.PlanInProgress:
			e.Status = acp.PlanEntryStatusInProgress
		case hearth.PlanDone:
			e.Status = acp.PlanEntryStatusCompleted
		case hearth.PlanSkipped:
			e.Status = acp.PlanEntryStatusCompleted
			e.Content = s.Step + " (skipped"
			if s.Reason != "" {
				e.Content += ": " + s.Reason
			}
			e.Content += ")"
		}
		entries = append(entries, e)
	}
	return entries
}

// call is what a turn remembers of a tool call it announced.
type call struct {
	name    string
	args    json.RawMessage
	output  strings.Builder // what the call streamed (tool_output), its tail
	dropped int             // the bytes streamed before output's
	sent    time.Time       // when its output was last sent
	done    bool            // its result was shown
}

// turnMapper maps one turn's Hearth events (docs/events.md) to ACP session
// updates, in order. It is not safe for concurrent use: a turn's events
// come from one goroutine.
type turnMapper struct {
	// root is the workspace's root: paths in the calls' arguments are
	// relative to it, and ACP's are absolute.
	root string
	// describe says in a line what a call does (the tool's own
	// description, for a title); nil or "": the tool's name.
	describe func(name string, args json.RawMessage) string
	// now is the clock (time.Now), for the pace of output updates.
	now func() time.Time

	calls map[string]*call
	// hidden are the calls not shown as calls: the plan's (update_plan),
	// whose effect is the plan update.
	hidden map[string]bool
	// reason, text and errMsg are the turn's end (done, error).
	reason hearth.DoneReason
	text   string
	errMsg string
}

func newTurnMapper(root string, describe func(string, json.RawMessage) string) *turnMapper {
	return &turnMapper{root: root, describe: describe, now: time.Now, calls: map[string]*call{}, hidden: map[string]bool{}}
}

// event returns the updates that show ev in the editor (none for events
// it has no place for: usage, checkpoints, the reasoning's start and end).
// An approval_required event gives the announcement of its call, if it was
// not announced yet (a sub-agent's call); the permission request itself is
// the caller's (permissionCall).
func (m *turnMapper) event(ev hearth.Event) []acp.SessionUpdate {
	switch ev.Type {
	case hearth.EventThinkingDelta:
		if ev.Text != "" {
			return []acp.SessionUpdate{acp.UpdateAgentThoughtText(ev.Text)}
		}
	case hearth.EventTextDelta:
		if ev.Text != "" {
			return []acp.SessionUpdate{acp.UpdateAgentMessageText(ev.Text)}
		}
	case hearth.EventToolCall:
		if ev.Name == agent.PlanToolName {
			m.hidden[ev.ID] = true
			return nil
		}
		return []acp.SessionUpdate{m.announce(ev.ID, ev.Name, ev.Args)}
	case hearth.EventApprovalRequired:
		if _, known := m.calls[ev.ID]; !known && !m.hidden[ev.ID] {
			return []acp.SessionUpdate{m.announce(ev.ID, ev.Name, ev.Args)}
		}
	case hearth.EventToolOutput:
		return m.output(ev)
	case hearth.EventToolResult:
		if m.hidden[ev.ID] {
			return nil
		}
		if c := m.calls[ev.ID]; c != nil {
			c.done = true
		}
		return []acp.SessionUpdate{m.result(ev.ID, ev.Name, ev.Args, ev.OK, ev.Output, ev.Error)}
	case hearth.EventPlan:
		return []acp.SessionUpdate{acp.UpdatePlan(planEntries(ev.Plan)...)}
	case hearth.EventError:
		m.errMsg = ev.Error
		if m.errMsg == "" {
			m.errMsg = ev.Text
		}
	case hearth.EventDone:
		m.reason, m.text = ev.DoneReason, ev.Text
	}
	return nil
}

// announce returns the tool_call update that shows a new call, pending.
func (m *turnMapper) announce(id, name string, args json.RawMessage) acp.SessionUpdate {
	c := &call{name: name, args: args}
	m.calls[id] = c
	return acp.SessionUpdate{ToolCall: &acp.SessionUpdateToolCall{
		ToolCallId: acp.ToolCallId(id),
		Title:      m.title(name, args),
		Kind:       toolKind(name),
		Status:     acp.ToolCallStatusPending,
		RawInput:   rawInput(args),
		Locations:  m.locations(args),
		Content:    m.diff(name, args),
	}}
}

// permissionCall is the call a permission request is about: as announced,
// with the reason Hearth gives for asking as its title.
func (m *turnMapper) permissionCall(ev hearth.Event) acp.ToolCallUpdate {
	title := ev.Reason
	if title == "" {
		title = m.title(ev.Name, ev.Args)
	}
	kind := toolKind(ev.Name)
	status := acp.ToolCallStatusPending
	return acp.ToolCallUpdate{
		ToolCallId: acp.ToolCallId(ev.ID),
		Title:      &title,
		Kind:       &kind,
		Status:     &status,
		RawInput:   rawInput(ev.Args),
		Locations:  m.locations(ev.Args),
		Content:    m.diff(ev.Name, ev.Args),
	}
}

// output returns the update that shows what a running call streamed so
// far: at most one per outputEvery (the result shows it all). A
// sub-agent's call that was shown on its own (it asked for approval) is
// finished by its result, which comes nested.
func (m *turnMapper) output(ev hearth.Event) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	if n := ev.Nested; n != nil && n.Type == hearth.EventToolResult && n.ID != ev.ID && m.calls[n.ID] != nil && !m.calls[n.ID].done {
		m.calls[n.ID].done = true
		out = append(out, m.result(n.ID, n.Name, n.Args, n.OK, n.Output, n.Error))
	}
	c := m.calls[ev.ID]
	if c == nil || ev.Text == "" {
		return out
	}
	c.output.WriteString(ev.Text)
	if c.output.Len() > 4*maxShown {
		// Only the tail is ever shown: keep a bounded one, and count
		// what went.
		s := c.output.String()
		cut := len(s) - maxShown
		for cut < len(s) && !runeStart(s[cut]) {
			cut++
		}
		c.dropped += cut
		c.output.Reset()
		c.output.WriteString(s[cut:])
	}
	now := m.now()
	if !c.sent.IsZero() && now.Sub(c.sent) < outputEvery {
		return out
	}
	c.sent = now
	status := acp.ToolCallStatusInProgress
	return append(out, acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{
		ToolCallId: acp.ToolCallId(ev.ID),
		Status:     &status,
		Content:    []acp.ToolCallContent{textContent(fence(c.shown()))},
	}})
}

// result returns the update that finishes a call: completed with what it
// returned (an edit its diff, a command its output), or failed with why.
func (m *turnMapper) result(id, name string, args json.RawMessage, ok bool, output, errText string) acp.SessionUpdate {
	if c := m.calls[id]; c != nil {
		if args == nil {
			args = c.args
		}
		if name == "" {
			name = c.name
		}
	}
	status := acp.ToolCallStatusCompleted
	var content []acp.ToolCallContent
	var raw map[string]any
	switch {
	case !ok:
		status = acp.ToolCallStatusFailed
		content = []acp.ToolCallContent{textContent(head(errText, maxShown))}
		raw = map[string]any{"error": errText}
	case toolKind(name) == acp.ToolKindEdit:
		content = append(m.diff(name, args), textContent(head(output, maxShown)))
		raw = map[string]any{"output": output}
	case toolKind(name) == acp.ToolKindExecute:
		content = []acp.ToolCallContent{textContent(fence(head(output, maxShown)))}
		raw = map[string]any{"output": output}
	default:
		if output != "" {
			content = []acp.ToolCallContent{textContent(fence(head(output, maxShown)))}
		}
		raw = map[string]any{"output": output}
	}
	return acp.SessionUpdate{ToolCallUpdate: &acp.SessionToolCallUpdate{
		ToolCallId: acp.ToolCallId(id),
		Status:     &status,
		Content:    content,
		RawOutput:  raw,
	}}
}

// title is a call's title: what it does, in a line.
func (m *turnMapper) title(name string, args json.RawMessage) string {
	if m.describe != nil {
		if t := strings.TrimSpace(m.describe(name, args)); t != "" {
			return oneLine(t)
		}
	}
	return name
}

// pathArgs are the arguments of the built-in tools that name a file or a
// folder of the workspace.
var pathArgs = []string{"file_path", "path", "directory"}

// locations are the files a call works on, absolute, for the editor to
// follow: those its arguments name inside the workspace (a path that
// leads out of it is not shown).
func (m *turnMapper) locations(args json.RawMessage) []acp.ToolCallLocation {
	var a map[string]any
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	var out []acp.ToolCallLocation
	add := func(p string) {
		if abs, ok := m.abs(p); ok {
			out = append(out, acp.ToolCallLocation{Path: abs})
		}
	}
	for _, k := range pathArgs {
		if p, ok := a[k].(string); ok && p != "" {
			add(p)
		}
	}
	if list, ok := a["paths"].([]any); ok {
		for _, v := range list {
			if p, ok := v.(string); ok && !strings.ContainsAny(p, "*?[{") {
				add(p)
			}
		}
	}
	return out
}

// abs makes a path of a call's arguments absolute, lexically: false when
// it is empty or leads out of the workspace.
func (m *turnMapper) abs(p string) (string, bool) {
	if p == "" || m.root == "" {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.root, p)
	}
	p = filepath.Clean(p)
	if p != m.root && !strings.HasPrefix(p, m.root+string(filepath.Separator)) {
		return "", false
	}
	return p, true
}

// diff is the change an edit or a write makes, as ACP's diff content:
// the edit's old and new text, or the whole new file (nil for other
// calls, or a path outside the workspace).
func (m *turnMapper) diff(name string, args json.RawMessage) []acp.ToolCallContent {
	var a struct {
		FilePath  string  `json:"file_path"`
		Content   *string `json:"content"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil
	}
	p, ok := m.abs(a.FilePath)
	if !ok {
		return nil
	}
	switch {
	case name == "write_file" && a.Content != nil:
		return []acp.ToolCallContent{acp.ToolDiffContent(p, *a.Content)}
	case name == "edit" && a.NewString != nil:
		if a.OldString == nil || *a.OldString == "" {
			return []acp.ToolCallContent{acp.ToolDiffContent(p, *a.NewString)}
		}
		return []acp.ToolCallContent{acp.ToolDiffContent(p, *a.NewString, *a.OldString)}
	}
	return nil
}

// rawInput is a call's arguments as a JSON value for rawInput (nil when
// they are not JSON).
func rawInput(args json.RawMessage) any {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return nil
	}
	return v
}

// textContent is text as a tool call's content.
func textContent(s string) acp.ToolCallContent {
	return acp.ToolContent(acp.TextBlock(s))
}

// fence puts text in a Markdown code block (editors render a call's text
// as Markdown), with a fence longer than any run of backticks in it.
func fence(s string) string {
	if s == "" {
		return ""
	}
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimSuffix(s, "\n") + "\n" + f
}

// head cuts s to its first n bytes (at a rune boundary), saying so.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !runeStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… [%d more bytes]", len(s)-cut)
}

// shown is the tail of what a call streamed, at most maxShown bytes,
// saying how many came before.
func (c *call) shown() string {
	s := c.output.String()
	if c.dropped == 0 {
		return tail(s, maxShown)
	}
	cut := max(0, len(s)-maxShown)
	for cut < len(s) && !runeStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("[%d bytes before] …\n", c.dropped+cut) + s[cut:]
}

// tail keeps the last n bytes of s (from a rune boundary), saying so.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for cut < len(s) && !runeStart(s[cut]) {
		cut++
	}
	return fmt.Sprintf("[%d bytes before] …\n", cut) + s[cut:]
}

// runeStart reports whether b begins a UTF-8 sequence.
func runeStart(b byte) bool { return b&0xC0 != 0x80 }

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
