package tui

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// slashCommand is one of the / commands.
type slashCommand struct {
	name, args, help string
	// idle: refused while a turn runs.
	idle bool
	subs []string
}

var slashCommands = []slashCommand{
	{name: "help", help: "keys and commands"},
	{name: "clear", help: "start a new session on a clear screen (the old one stays stored)", idle: true},
	{name: "compress", help: "summarise older turns to free the context window", idle: true},
	{name: "model", args: "[NAME]", help: "list the server's models, or switch to one", idle: true},
	{name: "session", args: "[list|switch ID|new|rename TITLE]", help: "list, switch, start or rename sessions", idle: true, subs: []string{"list", "switch", "new", "rename"}},
	{name: "undo", help: "take back the file changes of the last turn that changed files (a preview first)", idle: true},
	{name: "redo", help: "bring back what the last /undo took back (a preview first)", idle: true},
	{name: "rewind", help: "go back to before a message: its files, the conversation, or both", idle: true},
	{name: "plan", args: "[show|hide]", help: "the model's plan in full; show or hide its checklist above the input", subs: []string{"show", "hide"}},
	{name: "mode", args: "[default|auto_edit|plan|yolo]", help: "show or switch the approval mode (shift+tab cycles)", subs: []string{"default", "auto_edit", "plan", "yolo"}},
	{name: "tools", help: "the tools the model may call, and which ask first"},
	{name: "mcp", help: "MCP servers and their tools"},
	{name: "stats", help: "tokens, time and tool calls of this session"},
	{name: "copy", help: "copy the last answer to the clipboard"},
	{name: "quit", help: "leave (also /exit, ctrl+c twice, ctrl+d)"},
	{name: "exit", help: "leave"},
}

func findCommand(name string) *slashCommand {
	for i := range slashCommands {
		if slashCommands[i].name == name {
			return &slashCommands[i]
		}
	}
	return nil
}

// command runs a / command.
func (m *Model) command(text string) tea.Cmd {
	fields := strings.Fields(strings.TrimPrefix(text, "/"))
	if len(fields) == 0 {
		return m.command("/help")
	}
	name, args := strings.ToLower(fields[0]), fields[1:]
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(text, "/"), fields[0]))
	c := findCommand(name)
	if c == nil {
		m.notice(noticeError, fmt.Sprintf("Unknown command /%s: /help lists them.", name), nil)
		return nil
	}
	if c.idle && m.job != jobNone {
		m.notice(noticeWarn, fmt.Sprintf("/%s waits for an idle prompt: let the turn finish, or press Esc to stop it.", name), nil)
		return nil
	}
	switch name {
	case "help":
		m.help()
	case "clear":
		m.newSession()
		m.tr.clear()
		m.banner()
	case "compress":
		return m.compress()
	case "model":
		if len(args) == 0 {
			return modelsCmd(m.agent.Provider(), true)
		}
		return m.switchModel(args[0])
	case "session":
		return m.sessionCommand(args, rest)
	case "mode":
		if len(args) == 0 {
			m.notice(noticeInfo, "Approval mode: "+modeLabel(m.mode)+". Switch with /mode NAME or shift+tab.", nil)
			return nil
		}
		mode, err := agent.ParseMode(args[0])
		if err != nil {
			m.notice(noticeError, err.Error(), nil)
			return nil
		}
		m.setMode(mode)
	case "undo":
		return m.restoreCommand(hearth.Undo)
	case "redo":
		return m.restoreCommand(hearth.Redo)
	case "rewind":
		return m.restoreCommand(hearth.Rewind)
	case "plan":
		m.planCommand(args)
	case "tools":
		m.listTools()
	case "mcp":
		m.listMCP()
	case "stats":
		m.showStats()
	case "copy":
		return m.copyAnswer()
	case "quit", "exit":
		if m.job != jobNone {
			m.stop()
		}
		return m.quit()
	}
	return nil
}

func (m *Model) help() {
	th := m.th
	var body []string
	for _, c := range slashCommands {
		if c.name == "exit" {
			continue
		}
		name := "/" + c.name
		if c.args != "" {
			name += " " + c.args
		}
		body = append(body, th.key.Render(fmt.Sprintf("%-28s", name))+" "+th.muted.Render(c.help))
	}
	body = append(body, "")
	keys := [][2]string{
		{"enter", "send · shift+enter, alt+enter or ctrl+j: new line (or end a line with \\)"},
		{"↑ ↓", "earlier prompts"},
		{"tab", "complete a /command or an @path"},
		{"@path", "attach a workspace file to the message"},
		{"!command", "run a shell command yourself; its output goes with your next message"},
		{"esc", "stop the running turn (what came is kept)"},
		{"ctrl+c", "stop the turn; on an empty prompt, twice to quit"},
		{"shift+tab", "cycle the approval mode: default → auto_edit → plan"},
		{"ctrl+t", "show or hide thinking"},
		{"ctrl+o", "show tool output in full"},
		{"pgup pgdn", "scroll (the mouse wheel too, with --mouse)"},
	}
	for _, k := range keys {
		body = append(body, th.key.Render(fmt.Sprintf("%-28s", k[0]))+" "+th.muted.Render(k[1]))
	}
	m.notice(noticeInfo, "Commands and keys", body)
}

// newSession forgets the current session: the next message starts one.
func (m *Model) newSession() {
	m.sessionID, m.sessionTitle = "", ""
	m.ctxUsed = 0
	m.lastAnswer = ""
	m.shellNotes = nil
	m.tools = map[string]*entry{}
	m.draftID = "" // a new session: its approvals start empty
	m.setPlan(nil)
}

func (m *Model) compress() tea.Cmd {
	if m.sessionID == "" {
		m.notice(noticeInfo, "Nothing to compress yet: the session starts with your first message.", nil)
		return nil
	}
	sess, st, model, window := m.agent.Session(m.sessionID), m.agent.Store(), m.model, m.ctxLen
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobCompress, cancel, "Summarising older turns…")
	b := m.bridge
	m.jobs.start(func() {
		before, after, err := compressSession(ctx, st, sess, model, window)
		b.send(compressDoneMsg{before: before, after: after, err: err})
	})
	return m.startTick()
}

func (m *Model) switchModel(name string) tea.Cmd {
	if len(m.models) > 0 {
		found := false
		for _, x := range m.models {
			if x == name {
				found = true
			}
		}
		if !found {
			m.notice(noticeError, fmt.Sprintf("The server has no model %q: /model lists them.", name), nil)
			return nil
		}
	}
	m.model, m.ctxLen, m.ctxUsed = name, 0, 0
	m.notice(noticeInfo, "Model: "+name, nil)
	return modelInfoCmd(m.agent.Provider(), name)
}

func (m *Model) sessionCommand(args []string, rest string) tea.Cmd {
	st := m.agent.Store()
	sub := "list"
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	switch sub {
	case "list", "ls":
		return sessionsCmd(st, true)
	case "new":
		m.newSession()
		m.notice(noticeInfo, "New session: it starts with your next message.", nil)
	case "switch", "resume", "open":
		if len(args) < 2 {
			m.notice(noticeError, "Say which: /session switch ID (/session list shows them).", nil)
			return nil
		}
		return loadSessionCmd(st, args[1])
	case "rename":
		title := strings.TrimSpace(strings.TrimPrefix(rest, args[0]))
		if title == "" {
			m.notice(noticeError, "Give the new title: /session rename TITLE.", nil)
			return nil
		}
		if m.sessionID == "" {
			m.notice(noticeError, "Nothing to rename yet: the session starts with your first message.", nil)
			return nil
		}
		return renameCmd(st, m.sessionID, title)
	default:
		// /session ID switches too.
		return loadSessionCmd(st, args[0])
	}
	return nil
}

func (m *Model) sessionsLoaded(msg sessionsMsg) tea.Cmd {
	if msg.err == nil {
		m.sessions = msg.list
		for _, s := range msg.list {
			if s.ID == m.sessionID && m.sessionTitle == "" {
				m.sessionTitle = s.Title
			}
		}
	}
	if !msg.show {
		return nil
	}
	if msg.err != nil {
		m.notice(noticeError, "Could not list the sessions: "+msg.err.Error(), nil)
		return nil
	}
	th := m.th
	var body []string
	for _, s := range msg.list {
		mark := "  "
		if s.ID == m.sessionID {
			mark = th.accentText.Render("● ")
		}
		title := clean(s.Title)
		if title == "" {
			title = "(untitled)"
		}
		body = append(body, mark+th.key.Render(clean(s.ID))+"  "+title+th.muted.Render(fmt.Sprintf("  %d messages · %s", s.MessageCount, ago(m.now(), s.UpdatedAt))))
	}
	if len(body) == 0 {
		body = []string{th.muted.Render("(no sessions yet)")}
	}
	m.notice(noticeInfo, "Sessions (switch with /session switch ID, start one with /session new):", body)
	return nil
}

func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return t.Local().Format("2 Jan 2006")
}

// sessionLoaded shows a stored session and continues it.
func (m *Model) sessionLoaded(msg sessionLoadedMsg) tea.Cmd {
	if msg.err != nil {
		m.notice(noticeError, "Could not open the session: "+msg.err.Error()+" (/session list shows them)", nil)
		return nil
	}
	if m.job != jobNone {
		m.notice(noticeWarn, "Let the turn finish before switching sessions.", nil)
		return nil
	}
	m.showSession(msg)
	s := msg.sess
	m.notice(noticeInfo, fmt.Sprintf("Resumed session %s “%s”: %d messages.", s.ID, s.Title, s.MessageCount), nil)
	if m.lastAnswer != "" {
		return m.titleLater(s.ID) // a session titled from its prompt only
	}
	return nil
}

// showSession shows a stored session's conversation, and makes it the one
// the conversation goes to.
func (m *Model) showSession(msg sessionLoadedMsg) {
	m.newSession()
	m.tr.clear()
	m.banner()
	s := msg.sess
	m.sessionID, m.sessionTitle = s.ID, s.Title
	runs := map[string]session.ToolRun{}
	for _, r := range msg.runs {
		runs[r.CallID] = r
	}
	// A call's checkpoint is the "before" one of its id and tool taken
	// while the reply that made it, or one of its calls' results, was the
	// last message (ids are reused from one reply to the next).
	used := map[int64]bool{}
	checkpointOf := func(seq, calls int, id, name string) int64 {
		for _, c := range msg.checkpoints {
			if c.Kind == session.CheckpointBefore && !used[c.ID] && c.CallID == id && c.Tool == name && c.Seq >= seq && c.Seq <= seq+calls {
				used[c.ID] = true
				return c.ID
			}
		}
		return 0
	}
	tools := map[string]*entry{}
	for _, sm := range session.InOrder(msg.msgs) {
		switch {
		case sm.Summary:
			m.tr.add(&textItem{kind: noticeInfo, title: "Summary of earlier turns", plain: strings.TrimPrefix(sm.Content, agent.SummaryPrefix)})
		case sm.Compacted:
			continue
		case sm.Reminder:
			// Hearth's words to the model (the plan's open steps), sent
			// as the user's: shown as Hearth's, never as a prompt.
			m.tr.add(reminderNote(planBefore(msg.msgs, sm.Seq)))
		case sm.Failure:
			// Why a turn failed ("Provider request failed: …"): Hearth's
			// words, shown as the live turn showed its error, never as the
			// model's answer (nor /copy'd as one).
			m.tr.add(&textItem{kind: noticeError, title: sm.Content})
		case sm.Role == llm.RoleUser:
			m.tr.add(&userItem{text: sm.Content})
		case sm.Role == llm.RoleAssistant:
			if sm.Thinking != "" {
				t := &thinkingItem{done: true}
				t.text.WriteString(sm.Thinking)
				m.tr.add(t)
			}
			if strings.TrimSpace(sm.Content) != "" {
				a := &answerItem{}
				a.add(sm.Content)
				a.finish()
				m.tr.add(a)
				m.lastAnswer = sm.Content
			}
			for _, tc := range sm.ToolCalls {
				it := &toolItem{id: tc.ID, name: tc.Name, args: tc.Args, state: toolDone, checkpoint: checkpointOf(sm.Seq, len(sm.ToolCalls), tc.ID, tc.Name)}
				if r, ok := runs[tc.ID]; ok {
					it.end = it.start.Add(r.Duration)
				}
				tools[tc.ID] = m.tr.add(it)
			}
		case sm.Role == llm.RoleTool:
			if e := tools[sm.ToolCallID]; e != nil {
				it := e.it.(*toolItem)
				if strings.HasPrefix(sm.Content, "Error: ") {
					it.state, it.errText = toolFailed, strings.TrimPrefix(sm.Content, "Error: ")
				} else {
					it.result = sm.Content
				}
				e.dirty = true
			}
		}
	}
	m.ctxUsed = s.InputTokens / max(1, s.MessageCount/2)
	m.plan, m.planCollapsed = planOfSession(msg.msgs)
}

func (m *Model) listTools() {
	th := m.th
	names := m.agent.Tools()
	if len(names) == 0 {
		m.notice(noticeInfo, "No tools are enabled in this profile.", nil)
		return
	}
	sort.Strings(names)
	var body []string
	for _, n := range names {
		spec, k, _ := m.agent.ToolSpec(n)
		asks := "runs freely"
		switch ask, refuse := agent.NeedsApproval(m.mode, k); {
		case refuse != "":
			asks = "refused in plan mode"
		case ask:
			asks = "asks first"
		}
		desc := clean(spec.Description) // an MCP server's words
		if i := strings.IndexAny(desc, ".\n"); i > 0 {
			desc = desc[:i]
		}
		body = append(body, th.key.Render(fmt.Sprintf("%-20s", n))+" "+th.muted.Render(fmt.Sprintf("%-10s %-20s ", k, asks))+desc)
	}
	m.notice(noticeInfo, fmt.Sprintf("Tools (%s mode):", m.mode), body)
}

func (m *Model) listMCP() {
	mgr := m.agent.MCP()
	if mgr == nil {
		m.notice(noticeInfo, "MCP is not configured yet: add servers with `hearth mcp add`, or under [mcp_servers.NAME] in config.toml (command = \"…\" for stdio, or url = \"…\").", nil)
		return
	}
	// The manager's state is in memory: no I/O here.
	var body []string
	for _, st := range mgr.Status() {
		line := m.th.key.Render(clean(st.Name)) + "  " + string(st.State)
		switch {
		case st.Error != "":
			line += "  " + m.th.muted.Render(clean(st.Error))
		case len(st.Tools) > 0:
			line += "  " + m.th.muted.Render(clean(fmt.Sprintf("%d tools: %s", len(st.Tools), strings.Join(st.Tools, ", "))))
		default:
			line += "  " + m.th.muted.Render(clean(st.Target))
		}
		body = append(body, line)
	}
	m.notice(noticeInfo, "MCP servers (their tools are offered as server__tool):", body)
}

func (m *Model) showStats() {
	s := m.stats
	th := m.th
	row := func(k, v string) string { return th.muted.Render(fmt.Sprintf("%-16s", k)) + v }
	id := m.sessionID
	if id == "" {
		id = "(new)"
	}
	ctx := "unknown"
	if m.ctxLen > 0 {
		ctx = fmt.Sprintf("%d of %d tokens (%d%%)", m.ctxUsed, m.ctxLen, m.ctxUsed*100/m.ctxLen)
	}
	body := []string{
		row("session", id+" "+clean(m.sessionTitle)),
		row("model", clean(m.model)),
		row("turns", fmt.Sprint(s.turns)),
		row("tokens", fmt.Sprintf("%d in · %d out", s.inputTokens, s.outputs)),
		row("context", ctx),
		row("model time", fmtDuration(s.modelTime)),
		row("tool calls", fmt.Sprintf("%d (%d failed)", s.toolCalls, s.toolFailed)),
		row("open for", fmtDuration(time.Since(s.started))),
	}
	sess, today := m.costs()
	body = append(body, row("cost", sess), row("cost today", today+th.muted.Render(" (UTC, every session)")))
	m.notice(noticeInfo, "This session so far", body)
}

// copyAnswer puts the last answer on the clipboard: through the terminal
// (OSC 52) and, where one is installed, the system's clipboard tool.
func (m *Model) copyAnswer() tea.Cmd {
	// What is copied is what was shown: raw, an answer could carry
	// sequences that act when pasted into a terminal (ESC [ 201 ~ ends a
	// bracketed paste, and what follows runs as typed).
	text := clean(m.lastAnswer)
	if text == "" {
		m.notice(noticeInfo, "Nothing to copy yet: no answer in this session.", nil)
		return nil
	}
	m.flash(fmt.Sprintf("Copied the last answer (%d characters)", len([]rune(text))))
	return tea.Batch(tea.SetClipboard(text), systemCopy(text))
}

func systemCopy(text string) tea.Cmd {
	return func() tea.Msg {
		var tools [][]string
		switch runtime.GOOS {
		case "darwin":
			tools = [][]string{{"pbcopy"}}
		case "windows":
			tools = [][]string{{"clip"}}
		default:
			tools = [][]string{{"wl-copy"}, {"xclip", "-selection", "clipboard"}, {"xsel", "--clipboard", "--input"}}
		}
		for _, t := range tools {
			if _, err := exec.LookPath(t[0]); err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			cmd := exec.CommandContext(ctx, t[0], t[1:]...)
			cmd.Stdin = strings.NewReader(text)
			err := cmd.Run()
			cancel()
			if err == nil {
				return nil
			}
		}
		return nil
	}
}

// ---- completion ----

// completion is one offered completion.
type completion struct {
	value, label, desc string
	// more: accepting it leaves the cursor in the word (a directory, a
	// command with arguments to come).
	more bool
}

// compState is the completion menu.
type compState struct {
	items      []completion
	sel        int
	start, end int // the replaced span of the input, in bytes
	// dismissed is the input for which Esc closed the menu.
	dismissed string
}

// acceptOnEnter says whether Enter takes the selection rather than
// sending: it does while anything is offered (a complete word offers
// nothing).
func (c *compState) acceptOnEnter() bool {
	return len(c.items) > 0
}

// maxCompletions bounds the menu.
const maxCompletions = 8

// complete recomputes the menu for the input.
func (m *Model) complete() {
	v := m.input.Value()
	if v == m.comp.dismissed && v != "" {
		m.comp.items = nil
		return
	}
	m.comp = compState{}
	if m.approval != nil || m.restore != nil {
		return
	}
	off := cursorOffset(v, m.input.Line(), m.input.Column())
	if off < 0 {
		return
	}
	before := v[:off]
	if strings.HasPrefix(v, "/") && !strings.Contains(before, "\n") {
		m.completeCommand(before)
		return
	}
	i := strings.LastIndexAny(before, " \n\t")
	word := before[i+1:]
	if strings.HasPrefix(word, "@") {
		m.completeFile(word[1:], i+1, off)
	}
}

func (m *Model) completeCommand(before string) {
	fields := strings.Fields(before)
	trailing := strings.HasSuffix(before, " ")
	var items []completion
	start := 0
	switch {
	case len(fields) <= 1 && !trailing:
		word := strings.TrimPrefix(before, "/")
		for _, c := range slashCommands {
			if c.name == "exit" || !strings.HasPrefix(c.name, strings.ToLower(word)) {
				continue
			}
			items = append(items, completion{value: "/" + c.name + " ", label: "/" + c.name, desc: c.help})
		}
		if len(items) == 1 && items[0].label == before {
			items = nil // already complete
		}
	default:
		name := strings.TrimPrefix(fields[0], "/")
		args := fields[1:]
		word := ""
		if !trailing && len(args) > 0 {
			word, args = args[len(args)-1], args[:len(args)-1]
		}
		start = len(before) - len(word)
		var cands []completion
		switch {
		case name == "model" && len(args) == 0:
			for _, x := range m.models {
				d := ""
				if x == m.model {
					d = "current"
				}
				cands = append(cands, completion{value: x, label: x, desc: d})
			}
		case name == "mode" && len(args) == 0:
			for _, x := range []agent.Mode{agent.ModeDefault, agent.ModeAutoEdit, agent.ModePlan, agent.ModeYolo} {
				cands = append(cands, completion{value: string(x), label: string(x), desc: modeLabel(x)})
			}
		case (name == "session" || name == "plan") && len(args) == 0:
			for _, x := range findCommand(name).subs {
				cands = append(cands, completion{value: x + " ", label: x})
			}
		case name == "session" && len(args) == 1 && args[0] == "switch":
			for _, s := range m.sessions {
				cands = append(cands, completion{value: s.ID, label: s.ID, desc: s.Title})
			}
		}
		for _, c := range cands {
			if strings.HasPrefix(strings.ToLower(c.label), strings.ToLower(word)) && strings.TrimSpace(c.value) != word {
				items = append(items, c)
			}
		}
	}
	if len(items) > maxCompletions*4 {
		items = items[:maxCompletions*4]
	}
	m.comp.items, m.comp.start, m.comp.end = items, start, len(before)
}

func (m *Model) completeFile(q string, start, end int) {
	lq := strings.ToLower(q)
	var prefix, base, sub []completion
	for _, f := range m.files {
		lf := strings.ToLower(f)
		c := completion{value: "@" + f, label: f, more: strings.HasSuffix(f, "/")}
		switch {
		case lf == lq:
			continue
		case strings.HasPrefix(lf, lq):
			// Direct children first: "src/" lists src/a, not src/x/y/z.
			rest := strings.TrimSuffix(lf[len(lq):], "/")
			if strings.Contains(rest, "/") {
				continue
			}
			prefix = append(prefix, c)
		case lq != "" && strings.HasPrefix(strings.ToLower(baseName(f)), lq):
			base = append(base, c)
		case lq != "" && strings.Contains(lf, lq):
			sub = append(sub, c)
		}
		if len(prefix)+len(base)+len(sub) > 200 {
			break
		}
	}
	items := append(append(prefix, base...), sub...)
	if len(items) == 1 && items[0].label == q {
		items = nil
	}
	if len(items) > maxCompletions*4 {
		items = items[:maxCompletions*4]
	}
	m.comp.items, m.comp.start, m.comp.end = items, start, end
}

func baseName(p string) string {
	p = strings.TrimSuffix(p, "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// acceptCompletion puts the selected completion in the input.
func (m *Model) acceptCompletion() {
	c := m.comp.items[m.comp.sel]
	v := m.input.Value()
	val := c.value
	if strings.HasPrefix(val, "@") && !c.more {
		val += " "
	}
	nv := v[:m.comp.start] + val + v[m.comp.end:]
	m.input.SetValue(nv)
	setCursorOffset(&m.input, nv, m.comp.start+len(val))
	m.comp = compState{}
	m.complete()
}

// cursorOffset is the byte offset in v of (row, col), col counted in runes.
func cursorOffset(v string, row, col int) int {
	off := 0
	lines := strings.Split(v, "\n")
	if row >= len(lines) {
		return -1
	}
	for i := 0; i < row; i++ {
		off += len(lines[i]) + 1
	}
	r := []rune(lines[row])
	if col > len(r) {
		col = len(r)
	}
	return off + len(string(r[:col]))
}

// setCursorOffset moves the input's cursor to byte offset off of v.
func setCursorOffset(ta interface {
	MoveToBegin()
	CursorDown()
	SetCursorColumn(int)
}, v string, off int) {
	before := v[:min(off, len(v))]
	row := strings.Count(before, "\n")
	col := len([]rune(before[strings.LastIndexByte(before, '\n')+1:]))
	ta.MoveToBegin()
	for i := 0; i < row; i++ {
		ta.CursorDown()
	}
	ta.SetCursorColumn(col)
}
