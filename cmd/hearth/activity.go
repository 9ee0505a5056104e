package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/tool"
)

// How much of a tool's output the --verbose view shows.
const (
	// shownOutputLines is how many lines of a call's output are shown (as
	// they stream, or from its result).
	shownOutputLines = 6
	// shownErrorLines is how many lines of a failed call's error are shown.
	shownErrorLines = 3
	// maxShownLine bounds one line of the view, in characters.
	maxShownLine = 160
)

// activity is what a headless run says on stderr while it runs.
//
// Whatever the flags, it says each call that was refused because the run
// cannot ask for approval, once, as a sentence naming the tool, its target
// and the flag that would allow it:
//
//	hearth: refused write_file notes.txt: needs approval; rerun with --approval-mode auto_edit to allow edits, or yolo for commands too
//
// With --verbose it is a view for a person to follow the run: the session,
// the reasoning (marked, and dimmed on a terminal), what the model says
// between its tool calls, each call in a short form with its result (ok,
// failed or refused, and its first lines), the compaction of older turns,
// and, after the answer, the token usage. The answer itself goes to stdout,
// not here. Everything the model and the tools wrote is stripped of control
// sequences (package termtext), and every line is whole: nothing runs into
// what comes next.
type activity struct {
	out     *errLines
	verbose bool
	color   bool
	// refuses is set when the run cannot ask for approval: a call that
	// needs it is refused at once.
	refuses bool
	// untrusted is set when the workspace is untrusted: approval modes
	// above default need --trust trusted too.
	untrusted bool
	mode      agent.Mode
	// kindOf says what a tool may do, for the flag that would allow it.
	kindOf func(name string) (tool.Kind, bool)

	// reasoning is the reasoning being streamed, if any.
	reasoning *stream
	// said is the text of the model's current reply: shown before its
	// tool calls, but not when it is the answer (stdout has that).
	said strings.Builder
	// calls are the announced calls, by callKey; a call's line is shown
	// when it runs, just before what it does.
	calls   map[string]*callView
	refused map[string]bool // the callKey of each refused call
	told    map[string]bool // the refusal sentences said
	// tooLarge are the files checkpoints could not keep, said once each.
	tooLarge map[string]bool
	usage    struct{ in, out, calls int }
}

// callView is one tool call in the view.
type callView struct {
	name  string
	args  json.RawMessage
	shown bool
	// output is the call's streamed output, if any.
	output *stream
}

func newActivity(out *errLines, verbose, color bool) *activity {
	return &activity{out: out, verbose: verbose, color: color, calls: map[string]*callView{}, refused: map[string]bool{}, told: map[string]bool{}}
}

// paint wraps s in an SGR colour code when colours are on.
func (v *activity) paint(code, s string) string {
	if !v.color || code == "" || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// event takes each event of the turn as it happens.
func (v *activity) event(ev agent.Event) {
	if ev.Type == agent.EventApprovalRequired && v.refuses {
		v.refusal(ev)
	}
	if ev.Type == agent.EventCheckpoint && ev.Checkpoint != nil {
		v.notKept(ev.Checkpoint.TooLarge)
	}
	if !v.verbose {
		return
	}
	if ev.Type != agent.EventThinkingDelta && v.reasoning != nil {
		v.reasoning.end()
		v.reasoning = nil
	}
	switch ev.Type {
	case agent.EventSession:
		v.line("[session] %s, %s on %s", ev.SessionID, ev.Model, ev.Provider)
	case agent.EventThinkingStart:
		v.sayText()
		v.reasoning = &stream{out: v.out, label: "[thinking] ", indent: "           ", style: "2", color: v.color}
	case agent.EventThinkingDelta:
		if v.reasoning == nil {
			v.reasoning = &stream{out: v.out, label: "[thinking] ", indent: "           ", style: "2", color: v.color}
		}
		v.reasoning.write(ev.Text)
	case agent.EventTextDelta:
		v.said.WriteString(ev.Text)
	case agent.EventThinkingReclassified:
		// What the reply said so far was reasoning (a lone </think>
		// ended it). Not shown yet (said waits for a tool call, or is the
		// answer), it is shown as the reasoning it was.
		said := v.said.String()
		v.said.Reset()
		v.said.WriteString(strings.TrimSuffix(said, ev.Text))
		v.sayText()
		v.reasoning = &stream{out: v.out, label: "[thinking] ", indent: "           ", style: "2", color: v.color}
		v.reasoning.write(ev.Text)
	case agent.EventToolCall:
		v.sayText()
		v.calls[callKey(ev)] = &callView{name: ev.Name, args: ev.Args}
	case agent.EventToolOutput:
		// A command's output as it comes, or a sub-agent's events, each
		// rendered in a line (or in nothing).
		c := v.show(ev)
		if c.output == nil {
			c.output = &stream{out: v.out, label: "    ", indent: "    ", maxLines: shownOutputLines}
		}
		c.output.write(ev.Text)
	case agent.EventToolResult:
		v.sayText()
		v.result(v.show(ev), ev)
		delete(v.calls, callKey(ev))
	case agent.EventUsage:
		v.usage.in += ev.InputTokens
		v.usage.out += ev.OutputTokens
		v.usage.calls++
	case agent.EventCompressed:
		v.line("[compacted] older turns were summarised to fit the context window")
	case agent.EventPlan:
		v.plan(ev)
	case agent.EventDone:
		// What the model said last is the answer, on stdout.
		v.said.Reset()
	}
}

// plan shows the model's plan as it changes, or that it was sent back to
// it.
func (v *activity) plan(ev agent.Event) {
	if ev.Reminder != "" {
		v.line("[plan] the model answered with %d step(s) open: sent back once to finish them", len(ev.Plan.Open()))
		return
	}
	if ev.Plan == nil || len(ev.Plan.Steps) == 0 {
		v.line("[plan] cleared")
		return
	}
	done := 0
	for _, s := range ev.Plan.Steps {
		if s.Status == agent.PlanDone || s.Status == agent.PlanSkipped {
			done++
		}
	}
	v.line("[plan] %d of %d done", done, len(ev.Plan.Steps))
	for _, s := range ev.Plan.Steps {
		mark, style := "[ ]", ""
		switch s.Status {
		case agent.PlanDone:
			mark, style = "[x]", "2"
		case agent.PlanInProgress:
			mark, style = "[>]", "1"
		case agent.PlanSkipped:
			mark, style = "[-]", "2"
		}
		text := termtext.String(s.Step)
		if s.Status == agent.PlanSkipped && s.Reason != "" {
			text += " (skipped: " + termtext.String(s.Reason) + ")"
		}
		v.out.Line("  " + v.paint(style, mark+" "+clipLine(text)))
	}
}

// notKept says, once per file, that checkpoints could not keep it: an
// undo will not bring it back.
func (v *activity) notKept(paths []string) {
	var fresh []string
	for _, p := range paths {
		if !v.tooLarge[p] {
			if v.tooLarge == nil {
				v.tooLarge = map[string]bool{}
			}
			v.tooLarge[p] = true
			fresh = append(fresh, p)
		}
	}
	if len(fresh) == 0 {
		return
	}
	shown, more := fresh, ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(fresh)-5)
	}
	it, them := "it", "them"
	if len(fresh) == 1 {
		them = it
	}
	v.line("hearth: checkpoints do not keep %s%s: larger than their size cap ([checkpoints] max_file_size), so an undo cannot bring %s back", strings.Join(shown, ", "), more, them)
}

// line writes a line of Hearth's own words; the arguments, which may quote
// the model or a tool, are stripped.
func (v *activity) line(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = termtext.String(s)
		}
	}
	v.out.Line(fmt.Sprintf(format, args...))
}

// sayText shows what the model wrote before its tool calls.
func (v *activity) sayText() {
	text := strings.TrimSpace(termtext.String(v.said.String()))
	v.said.Reset()
	if text == "" {
		return
	}
	s := &stream{out: v.out, label: "[model] ", indent: "        "}
	s.write(text)
	s.end()
}

// callKey names a call: ids are unique within one reply only, and a
// sub-agent's calls (whose approvals come through) have ids of their own.
func callKey(ev agent.Event) string { return ev.Name + "\x00" + ev.ID }

// show returns the call of the event, its line shown.
func (v *activity) show(ev agent.Event) *callView {
	c := v.calls[callKey(ev)]
	if c == nil {
		// A call not announced at this level (a sub-agent's).
		c = &callView{name: ev.Name, args: ev.Args}
		v.calls[callKey(ev)] = c
	}
	if !c.shown {
		c.shown = true
		line := "[tool] " + v.paint("1", termtext.String(c.name))
		if s := shortArgs(c.args); s != "" {
			line += " " + termtext.String(s)
		}
		v.out.Line(clipLine(line))
	}
	return c
}

// result shows how a call ended: ok with its first lines, failed with its
// error, or nothing more when it was refused (the refusal said it).
func (v *activity) result(c *callView, ev agent.Event) {
	streamed := c.output != nil
	if streamed {
		c.output.end()
		if n := c.output.hidden; n > 0 {
			v.out.Line(fmt.Sprintf("    … %d more line%s", n, pluralS(n)))
		}
	}
	if v.refused[callKey(ev)] {
		return
	}
	if !ev.OK {
		lines := splitLines(termtext.String(ev.Error))
		if len(lines) == 0 {
			lines = []string{"no reason given"}
		}
		v.out.Line(clipLine("  " + v.paint("31", "failed") + ": " + lines[0]))
		for i, l := range lines[1:] {
			if i == shownErrorLines-1 {
				v.out.Line(fmt.Sprintf("    … %d more line%s", len(lines)-shownErrorLines, pluralS(len(lines)-shownErrorLines)))
				break
			}
			v.out.Line(clipLine("    " + l))
		}
		return
	}
	lines := splitLines(termtext.String(ev.Output))
	switch {
	case streamed || len(lines) == 0:
		v.out.Line("  " + v.paint("32", "ok"))
	case len(lines) == 1:
		v.out.Line(clipLine("  " + v.paint("32", "ok") + ": " + lines[0]))
	default:
		v.out.Line(fmt.Sprintf("  %s, %d lines:", v.paint("32", "ok"), len(lines)))
		for i, l := range lines {
			if i == shownOutputLines {
				v.out.Line(fmt.Sprintf("    … %d more line%s", len(lines)-i, pluralS(len(lines)-i)))
				break
			}
			v.out.Line(clipLine("    " + l))
		}
	}
}

// refusal says that a call was refused, and what would allow it: once per
// tool and target.
func (v *activity) refusal(ev agent.Event) {
	v.refused[callKey(ev)] = true
	why := "needs approval; " + v.allow(ev.Name)
	if v.verbose {
		v.show(ev)
		v.out.Line("  " + v.paint("33", "refused") + ": " + why)
		return
	}
	what := ev.Name
	if t := target(ev.Args); t != "" {
		what += " " + t
	}
	s := clipLine(termtext.String("hearth: refused " + what + ": " + why))
	if !v.told[s] {
		v.told[s] = true
		v.out.Line(s)
	}
}

// allow says which flags would let a tool run, by what it may do: in an
// untrusted workspace, --trust trusted too (modes above default need it).
func (v *activity) allow(name string) string {
	a := v.allowMode(name)
	if v.untrusted {
		a = strings.Replace(a, "rerun with --approval-mode", "rerun with --trust trusted --approval-mode", 1)
	}
	return a
}

// allowMode says which approval mode would let a tool run.
func (v *activity) allowMode(name string) string {
	k, ok := tool.Kind(0), false
	if v.kindOf != nil {
		k, ok = v.kindOf(name)
	}
	switch {
	case !ok:
		return "rerun with --approval-mode auto_edit to allow edits, or yolo to allow every tool"
	case agent.ModeAllowing(k) == agent.ModeAutoEdit && v.mode != agent.ModeAutoEdit:
		return "rerun with --approval-mode auto_edit to allow edits, or yolo for commands too"
	case name == "run_shell_command":
		return "rerun with --approval-mode yolo to allow commands"
	default:
		return "rerun with --approval-mode yolo to allow it"
	}
}

// usageLine is the token usage of the turn, for the end of the view.
func (v *activity) usageLine() string {
	if v.usage.calls == 0 {
		return "[usage] the server reported no token counts"
	}
	return fmt.Sprintf("[usage] %s prompt tokens, %s completion tokens (%d model call%s)",
		thousands(v.usage.in), thousands(v.usage.out), v.usage.calls, pluralS(v.usage.calls))
}

// end ends what is being streamed.
func (v *activity) end() {
	if v.reasoning != nil {
		v.reasoning.end()
		v.reasoning = nil
	}
	for _, c := range v.calls {
		if c.output != nil {
			c.output.end()
		}
	}
	v.out.EndLine()
}

// stream writes streamed model or tool text on stderr after a label, its
// next lines indented to match. Control sequences are stripped as the text
// comes (one split across two pieces included); blank lines at its ends
// are dropped, and runs of them inside kept as one.
type stream struct {
	out           *errLines
	label, indent string
	// style is an SGR code for the text (with color set).
	style string
	color bool
	// maxLines, when set, is how many lines are shown; the rest are
	// counted in hidden.
	maxLines, lines, hidden int

	strip   termtext.Stripper
	started bool
	// breaks are line breaks held back until text follows them.
	breaks int
}

// write adds a piece of the text.
func (s *stream) write(raw string) {
	text := s.strip.String(raw)
	for {
		seg, rest, nl := strings.Cut(text, "\n")
		if seg != "" {
			s.segment(seg)
		}
		if !nl {
			return
		}
		if s.started {
			s.breaks++
		}
		text = rest
	}
}

func (s *stream) segment(seg string) {
	switch {
	case !s.started:
		s.started, s.lines = true, 1
		s.out.EndLine()
		s.out.Partial(s.label)
	case s.breaks > 0:
		// A new line begins. Of a limited stream (a call's output), blank
		// lines are not shown, nor lines past the limit.
		n := s.breaks
		s.breaks = 0
		if s.maxLines > 0 && s.lines >= s.maxLines {
			s.hidden++
			return
		}
		if s.out.AtLineStart() {
			n = 1 // another line ended this one: no blank line after it
		}
		s.out.EndLine()
		if n > 1 && s.maxLines == 0 {
			s.out.Line("")
		}
		s.lines++
		s.out.Partial(s.indent)
	case s.hidden > 0:
		return // the rest of a line not shown
	case s.out.AtLineStart():
		// Another line came between two pieces of this one.
		s.out.Partial(s.indent)
	}
	if s.color && s.style != "" {
		seg = "\x1b[" + s.style + "m" + seg + "\x1b[0m"
	}
	s.out.Partial(seg)
}

// end ends the stream: the held bytes of a cut character, and the line.
func (s *stream) end() {
	if rest := string(s.strip.Flush(nil)); rest != "" {
		s.segment(rest)
	}
	if s.started {
		s.out.EndLine()
	}
	s.breaks = 0
}

// mainArgs are the arguments that name what a call acts on, in the order
// they are looked for.
var mainArgs = []string{"file_path", "path", "dir_path", "directory", "absolute_path", "command", "pattern", "query", "url", "task", "name"}

// target is what a call acts on: its path, command or pattern ("" if none).
func target(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range mainArgs {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			s = shortValue(s, 100)
			if strings.ContainsAny(s, " \t") {
				s = "`" + s + "`" // a command: where it ends shows
			}
			return s
		}
	}
	return ""
}

// shortArgs renders a call's arguments in a line: what it acts on bare,
// the rest as key=value, long or many-line values summarised.
func shortArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return shortValue(string(raw), 100)
	}
	var parts []string
	main := ""
	for _, k := range mainArgs {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			main = k
			parts = append(parts, shortValue(s, 100))
			break
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != main {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		var val string
		switch x := m[k].(type) {
		case string:
			val = shortValue(x, 40)
			if strings.ContainsAny(val, " \t\"") {
				val = strconv.Quote(val)
			}
		default:
			b, _ := json.Marshal(x)
			val = shortValue(string(b), 40)
		}
		parts = append(parts, k+"="+val)
	}
	return strings.Join(parts, " ")
}

// shortValue is a value in a line: "(N lines)" for text of several lines,
// else the text cut to n characters.
func shortValue(s string, n int) string {
	if lines := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1; lines > 1 {
		return fmt.Sprintf("(%d lines)", lines)
	}
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// clipLine cuts a line to maxShownLine characters.
func clipLine(s string) string {
	if utf8.RuneCountInString(s) <= maxShownLine {
		return s
	}
	return string([]rune(s)[:maxShownLine]) + "…"
}

// splitLines splits text into lines, without the blank ones at its ends.
func splitLines(s string) []string {
	s = strings.Trim(s, "\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
