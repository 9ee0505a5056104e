package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// jobKind is the work running on a goroutine, at most one at a time.
type jobKind uint8

const (
	jobNone jobKind = iota
	jobTurn
	jobShell
	jobCompress
)

// turnState is what the current turn has drawn so far.
type turnState struct {
	thinking *thinkingItem
	thinkE   *entry
	answer   *answerItem
	answerE  *entry
	// tools of this turn, in call order
	tools []*entry
}

// approvalState is a call waiting for the user.
type approvalState struct {
	req    agent.Request
	choice int
	// denying: the user is typing a message to go with a denial.
	denying bool
	draft   string
}

// approvalChoices are the answers offered, in order.
var approvalChoices = []string{"Allow once", "Allow always (this session)", "Deny", "Deny with a message"}

// stats are what /stats reports.
type stats struct {
	turns                 int
	inputTokens, outputs  int
	modelTime             time.Duration
	toolCalls, toolFailed int
	started               time.Time
}

// Model is the terminal UI's Bubble Tea model. Create it with New; Run
// runs it on the terminal.
type Model struct {
	opts  Options
	agent *hearth.Agent
	now   func() time.Time
	// turn is the running turn, which approvals answer (nil between
	// turns); draftID is the session a new conversation will go to, made
	// when a !command runs before its first message.
	turn    *hearth.Turn
	draftID string

	width, height int
	th            *theme
	dark          bool
	md            *mdRenderer
	rc            renderCtx
	keyGen        int

	tr     transcript
	total  int // transcript height
	scroll int // lines scrolled up from the bottom

	input     textarea.Model
	hist      *history
	history   []string
	histIdx   int
	histDraft string
	pastes    map[string]string
	pasteN    int
	comp      compState
	files     []string
	models    []string
	sessions  []session.Session

	sessionID, sessionTitle string
	model                   string
	ctxLen, ctxUsed         int
	mode                    agent.Mode

	bridge *bridge
	jobs   *jobs

	job        jobKind
	cancel     context.CancelFunc
	cancelling bool
	jobStart   time.Time
	jobLabel   string
	queue      []string
	cur        turnState
	tools      map[string]*entry
	approval   *approvalState
	shellN     int
	shellNotes []string

	unreachable string
	checking    bool
	lastCtrlC   time.Time
	hint        string
	hintUntil   time.Time

	stats                       stats
	lastAnswer                  string
	frame                       int
	ticking                     bool
	expandThinking, expandTools bool
	wsLabel                     string
	quitting                    bool

	// bottom is the rendered area under the transcript, and its height.
	bottom  string
	bottomH int
}

// New builds the model. o.Agent is required.
func New(o Options) (*Model, error) {
	if o.Agent == nil {
		return nil, errors.New("tui: no agent: build one with hearth.New first")
	}
	if o.Theme == "" {
		o.Theme = "auto"
	}
	m := &Model{
		opts:      o,
		agent:     o.Agent,
		now:       time.Now,
		width:     80,
		height:    24,
		dark:      o.Theme != "light",
		pastes:    map[string]string{},
		tools:     map[string]*entry{},
		sessionID: o.SessionID,
		model:     o.Agent.Model(),
		mode:      o.Agent.Mode(),
		bridge:    newBridge(),
		jobs:      &jobs{},
		hist:      &history{path: o.HistoryFile},
	}
	if m.mode == "" {
		m.mode = agent.ModeDefault
	}
	if m.sessionID != "" {
		m.mode = o.Agent.Session(m.sessionID).Mode()
	}
	if o.Width > 0 && o.Height > 0 {
		m.width, m.height = o.Width, o.Height
	}
	if root := o.Agent.Workspace(); root != "" {
		m.wsLabel = homeRel(root)
	}
	m.stats.started = time.Now()
	m.input = newInput()
	m.setTheme()
	m.banner()
	m.resize()
	return m, nil
}

func newInput() textarea.Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.SetPromptFunc(2, func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ta.CharLimit = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 8
	ta.MaxContentHeight = 5000
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "alt+enter", "ctrl+j"))
	ta.KeyMap.TransposeCharacterBackward = key.NewBinding(key.WithDisabled())
	ta.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ta.Placeholder = "Ask anything · / commands · @ attach a file · ! run a command"
	ta.Focus()
	return ta
}

// homeRel shortens a path under the home directory to ~/….
func homeRel(p string) string {
	if h, err := os.UserHomeDir(); err == nil && h != "" && h != "/" {
		if r, err := filepath.Rel(h, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.Join("~", r)
		}
	}
	return p
}

// setTheme (re)builds the styles for the current background.
func (m *Model) setTheme() {
	m.th = newTheme(m.dark, m.opts.NoColor)
	st := m.input.Styles()
	plain := st.Focused
	plain.CursorLine = plain.Text
	if !m.opts.NoColor {
		plain.Placeholder = m.th.subtle
		plain.Prompt = m.th.accentText
		plain.Text = m.th.base
		plain.CursorLine = m.th.base
	} else {
		plain.Placeholder = m.th.base
		plain.Prompt = m.th.base
		plain.Text = m.th.base
		plain.CursorLine = m.th.base
	}
	st.Focused, st.Blurred = plain, plain
	st.Cursor.Blink = false
	m.input.SetStyles(st)
	m.md = nil
}

// resize lays out for the window size.
func (m *Model) resize() {
	m.input.SetWidth(max(m.width-4, 10))
	m.md = nil
}

// banner is the first item: who, where, how.
func (m *Model) banner() {
	title := "Hearth"
	if m.opts.Version != "" {
		title += " " + m.opts.Version
	}
	lines := []string{}
	model := m.model
	if model == "" {
		model = "(none: pick one with /model)"
	}
	lines = append(lines, m.th.muted.Render(fmt.Sprintf("%s %s · model %s", m.opts.ProviderKind, m.opts.ProviderURL, model)))
	if m.wsLabel != "" {
		lines = append(lines, m.th.muted.Render("workspace "+m.wsLabel))
	}
	lines = append(lines, m.th.subtle.Render("/help commands · @ attach files · shift+tab approval mode · ctrl+c twice quits"))
	m.tr.add(&textItem{kind: noticeBanner, title: title, body: lines})
}

// Init starts the background work: the bridge, a health check, the model
// and file lists, the prompt history, the terminal's background colour,
// and a resumed session.
func (m *Model) Init() tea.Cmd {
	p := m.agent.Provider()
	cmds := []tea.Cmd{m.bridge.wait(), healthCmd(p), modelsCmd(p, false), m.hist.loadCmd()}
	if root := m.agent.Workspace(); root != "" {
		cmds = append(cmds, filesCmd(root))
	}
	st := m.agent.Store()
	cmds = append(cmds, sessionsCmd(st, false))
	if m.sessionID != "" {
		cmds = append(cmds, loadSessionCmd(st, m.sessionID))
	}
	if m.opts.Theme == "auto" && !m.opts.NoColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.model != "" && m.ctxLen == 0 {
		cmds = append(cmds, modelInfoCmd(p, m.model))
	}
	return tea.Batch(cmds...)
}

// Update handles a message; see handle.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	if b, ok := msg.(batchMsg); ok {
		for _, x := range b {
			cmds = append(cmds, m.handle(x))
		}
		cmds = append(cmds, m.bridge.wait())
	} else {
		cmds = append(cmds, m.handle(msg))
	}
	m.layout()
	return m, tea.Batch(cmds...)
}

func (m *Model) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "auto" && msg.IsDark() != m.dark {
			m.dark = msg.IsDark()
			m.setTheme()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.scrollBy(3)
		case tea.MouseWheelDown:
			m.scrollBy(-3)
		}
	case tickMsg:
		m.frame++
		if m.animating() {
			return m.tick()
		}
		m.ticking = false
	case eventMsg:
		return m.event(msg.ev)
	case turnStartedMsg:
		m.turn = msg.turn
		if m.sessionID == "" {
			m.sessionID = msg.turn.SessionID()
		}
	case turnDoneMsg:
		return m.turnDone(msg)
	case shellDoneMsg:
		return m.shellDone(msg)
	case compressDoneMsg:
		m.endJob()
		if msg.err != nil {
			m.notice(noticeError, "Could not compress the session: "+msg.err.Error(), nil)
		} else {
			m.notice(noticeInfo, fmt.Sprintf("Compressed the session: about %d tokens of history became %d.", msg.before, msg.after), nil)
			m.ctxUsed = msg.after
		}
		return m.next()
	case noticeMsg:
		m.notice(msg.kind, msg.title, msg.body)
	case healthMsg:
		return m.health(msg)
	case modelsMsg:
		return m.modelsLoaded(msg)
	case modelInfoMsg:
		if msg.err == nil && msg.info != nil && msg.model == m.model {
			m.ctxLen = msg.info.ContextLength
		}
	case sessionsMsg:
		return m.sessionsLoaded(msg)
	case sessionLoadedMsg:
		return m.sessionLoaded(msg)
	case sessionTitleMsg:
		if msg.id == m.sessionID {
			m.sessionTitle = msg.title
		}
	case filesMsg:
		m.files = msg.files
		m.complete()
	case historyMsg:
		m.history = append(msg.entries, m.history...)
		m.histIdx = len(m.history)
	default:
		// cursor blinks and the like
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	return nil
}

// ---- time ----

func (m *Model) animating() bool {
	if m.job != jobNone {
		return true
	}
	for _, e := range m.tr.entries {
		if e.it.live() {
			return true
		}
	}
	return false
}

func (m *Model) tick() tea.Cmd {
	m.ticking = true
	return tea.Tick(100*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *Model) startTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	return m.tick()
}

// ---- keys ----

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := msg.String()
	switch k {
	case "ctrl+c":
		return m.ctrlC()
	case "ctrl+t":
		m.expandThinking = !m.expandThinking
		m.keyGen++
		return nil
	case "ctrl+o":
		m.expandTools = !m.expandTools
		m.keyGen++
		return nil
	case "pgup":
		m.scrollBy(max(m.viewHeight()-2, 1))
		return nil
	case "pgdown":
		m.scrollBy(-max(m.viewHeight()-2, 1))
		return nil
	case "ctrl+home":
		m.scroll = m.total
		return nil
	case "ctrl+end":
		m.scroll = 0
		return nil
	case "shift+tab":
		m.cycleMode()
		return nil
	}
	if a := m.approval; a != nil && !a.denying {
		return m.approvalKey(msg)
	}
	if a := m.approval; a != nil && a.denying {
		switch k {
		case "esc":
			a.denying = false
			m.input.SetValue(a.draft)
			return nil
		case "enter":
			text := strings.TrimSpace(m.input.Value())
			m.input.SetValue(a.draft)
			m.answer(agent.Answer{Decision: agent.Deny, Message: text})
			return nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	if len(m.comp.items) > 0 {
		switch k {
		case "up", "ctrl+p":
			m.comp.sel = (m.comp.sel + len(m.comp.items) - 1) % len(m.comp.items)
			return nil
		case "down", "ctrl+n":
			m.comp.sel = (m.comp.sel + 1) % len(m.comp.items)
			return nil
		case "tab":
			m.acceptCompletion()
			return nil
		case "enter":
			if m.comp.acceptOnEnter() {
				m.acceptCompletion()
				return nil
			}
		case "esc":
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	}
	switch k {
	case "esc":
		if m.job != jobNone {
			m.stop()
		}
		return nil
	case "enter":
		v := m.input.Value()
		if strings.HasSuffix(v, "\\") && m.input.Line() == m.input.LineCount()-1 {
			m.input.SetValue(strings.TrimSuffix(v, "\\") + "\n")
			return nil
		}
		return m.submit()
	case "up":
		if m.input.Line() == 0 && len(m.history) > 0 && m.histIdx > 0 {
			if m.histIdx == len(m.history) {
				m.histDraft = m.input.Value()
			}
			m.histIdx--
			m.input.SetValue(m.history[m.histIdx])
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histIdx < len(m.history) {
			m.histIdx++
			if m.histIdx == len(m.history) {
				m.input.SetValue(m.histDraft)
			} else {
				m.input.SetValue(m.history[m.histIdx])
			}
			m.comp = compState{dismissed: m.input.Value()}
			return nil
		}
	case "ctrl+d":
		if m.input.Value() == "" && m.job == jobNone {
			return m.quit()
		}
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	m.complete()
	return cmd
}

// ctrlC stops the running work; on an idle prompt it clears the input, and
// a second press quits.
func (m *Model) ctrlC() tea.Cmd {
	now := m.now()
	if m.job != jobNone {
		m.stop()
		return nil
	}
	if m.approval != nil {
		return nil
	}
	if m.input.Value() != "" {
		m.input.Reset()
		m.comp = compState{}
		m.lastCtrlC = now
		m.flash("Press Ctrl-C again to quit")
		return nil
	}
	if now.Sub(m.lastCtrlC) < 2*time.Second {
		return m.quit()
	}
	m.lastCtrlC = now
	m.flash("Press Ctrl-C again to quit")
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// flash shows a hint under the input for a few seconds.
func (m *Model) flash(s string) {
	m.hint, m.hintUntil = s, m.now().Add(2*time.Second)
}

// stop cancels the running turn, command or summary, keeping what came.
func (m *Model) stop() {
	if m.cancel != nil && !m.cancelling {
		m.cancel()
		m.cancelling = true
	}
	m.queue = nil
}

func (m *Model) cycleMode() {
	next := map[agent.Mode]agent.Mode{agent.ModeDefault: agent.ModeAutoEdit, agent.ModeAutoEdit: agent.ModePlan, agent.ModePlan: agent.ModeDefault, agent.ModeYolo: agent.ModeDefault}
	m.setMode(next[m.mode])
}

// setMode switches the approval mode: the session's, in the runtime, so
// that a call waiting for approval that the new mode decides on its own is
// answered at once (its result event then takes the prompt down).
func (m *Model) setMode(mode agent.Mode) {
	m.mode = mode
	m.flash("Approval mode: " + modeLabel(mode))
	if id := m.currentID(); id != "" {
		if err := m.agent.Session(id).SetMode(mode); err != nil {
			m.notice(noticeError, err.Error(), nil)
		}
	}
	if a := m.approval; a != nil {
		if ask, _ := agent.NeedsApproval(mode, a.req.Kind); !ask {
			if a.denying {
				m.input.SetValue(a.draft)
			}
			m.approval = nil
		}
	}
}

// currentID is the session the conversation goes to: the current one, or
// the one made for a !command before the first message ("" when neither).
func (m *Model) currentID() string {
	if m.sessionID != "" {
		return m.sessionID
	}
	return m.draftID
}

func modeLabel(m agent.Mode) string {
	switch m {
	case agent.ModeAutoEdit:
		return "auto_edit (edits run, commands ask)"
	case agent.ModeYolo:
		return "yolo (nothing asks)"
	case agent.ModePlan:
		return "plan (read-only)"
	}
	return "default (edits and commands ask)"
}

func (m *Model) paste(msg tea.PasteMsg) tea.Cmd {
	content := strings.ReplaceAll(msg.Content, "\r\n", "\n")
	content = strings.ReplaceAll(content, "\r", "\n")
	lines := strings.Count(content, "\n") + 1
	if (lines > 8 || len(content) > 1500) && (m.approval == nil || m.approval.denying) {
		m.pasteN++
		ph := fmt.Sprintf("[Pasted text #%d +%d lines]", m.pasteN, lines)
		m.pastes[ph] = content
		m.input.InsertString(ph)
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(tea.PasteMsg{Content: content})
	m.complete()
	return cmd
}

// expandPastes replaces paste placeholders with what was pasted.
func (m *Model) expandPastes(s string) string {
	for ph, content := range m.pastes {
		s = strings.ReplaceAll(s, ph, content)
	}
	return s
}

// ---- submitting ----

func (m *Model) submit() tea.Cmd {
	raw := m.input.Value()
	text := strings.TrimSpace(raw)
	if text == "" {
		return nil
	}
	m.input.Reset()
	m.comp = compState{}
	m.scroll = 0
	if len(m.history) == 0 || m.history[len(m.history)-1] != text {
		m.history = append(m.history, text)
	}
	m.histIdx, m.histDraft = len(m.history), ""
	save := m.hist.appendCmd(text)
	var cmd tea.Cmd
	switch {
	case strings.HasPrefix(text, "/"):
		cmd = m.command(text)
	case strings.HasPrefix(text, "!"):
		cmd = m.shell(strings.TrimSpace(text[1:]))
	default:
		cmd = m.prompt(text)
	}
	return tea.Batch(save, cmd)
}

// prompt sends a message to the model, or queues it behind running work.
func (m *Model) prompt(text string) tea.Cmd {
	if m.job != jobNone {
		m.queue = append(m.queue, text)
		return nil
	}
	return m.startTurn(text)
}

func (m *Model) startTurn(text string) tea.Cmd {
	if m.model == "" {
		m.notice(noticeError, "No model chosen: pick one with /model NAME (/model lists them), or start hearth with --model.", nil)
		return nil
	}
	m.tr.add(&userItem{text: text})
	full := m.expandPastes(text)
	if len(m.shellNotes) > 0 {
		full = "Output of commands I ran:\n" + strings.Join(m.shellNotes, "\n") + "\n\n" + full
		m.shellNotes = nil
	}
	id := m.currentID()
	if id == "" {
		id = session.NewID()
		m.draftID = id
	}
	// The session keeps the mode the user chose here, for this turn and
	// the next.
	if err := m.agent.Session(id).SetMode(m.mode); err != nil {
		m.notice(noticeError, err.Error(), nil)
		return nil
	}
	model := ""
	if m.model != m.agent.Model() {
		model = m.model
	}
	spec := turnSpec{agent: m.agent, sessionID: id, model: model, prompt: full}
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobTurn, cancel, "Thinking…")
	m.cur = turnState{}
	m.stats.turns++
	b := m.bridge
	m.jobs.start(func() { runTurn(ctx, b, spec) })
	return m.startTick()
}

func (m *Model) beginJob(k jobKind, cancel context.CancelFunc, label string) {
	m.job, m.cancel, m.cancelling = k, cancel, false
	m.jobStart, m.jobLabel = m.now(), label
}

func (m *Model) endJob() {
	if m.cancel != nil {
		m.cancel()
	}
	if m.job == jobTurn {
		m.stats.modelTime += m.now().Sub(m.jobStart)
	}
	m.job, m.cancel, m.cancelling = jobNone, nil, false
	m.turn = nil
	if m.approval != nil {
		m.approval = nil
	}
}

// next starts the first queued message, if any.
func (m *Model) next() tea.Cmd {
	if m.job != jobNone || len(m.queue) == 0 {
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.startTurn(text)
}

// shell runs a !command through the shell tool.
func (m *Model) shell(command string) tea.Cmd {
	if command == "" {
		m.notice(noticeInfo, "Type a command after !, for example: !git status", nil)
		return nil
	}
	if m.job != jobNone {
		m.notice(noticeWarn, "Wait for the running turn to finish (or press Esc) before running a command.", nil)
		return nil
	}
	sh := m.shellTool()
	if sh == nil {
		m.notice(noticeError, "The shell tool is not available in this build.", nil)
		return nil
	}
	m.tr.add(&userItem{text: command, shell: true})
	m.shellN++
	id := fmt.Sprintf("user_%d", m.shellN)
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobShell, cancel, "Running "+command)
	b := m.bridge
	m.jobs.start(func() { runShell(ctx, b, sh, id, command) })
	return m.startTick()
}

// shellTool is the session's run_shell_command (a new conversation gets
// its session now: the command's temp files are the session's).
func (m *Model) shellTool() tool.Tool {
	if m.agent.Workspace() == "" {
		return nil
	}
	id := m.currentID()
	if id == "" {
		id = session.NewID()
		m.draftID = id
	}
	t, ok := m.agent.Session(id).Tool("run_shell_command")
	if !ok {
		return nil
	}
	return t
}

func (m *Model) shellDone(msg shellDoneMsg) tea.Cmd {
	m.endJob()
	out := msg.output
	if len(out) > 16<<10 {
		out = "[…]\n" + out[len(out)-16<<10:]
	}
	m.shellNotes = append(m.shellNotes, fmt.Sprintf("$ %s\n```\n%s\n```", msg.command, strings.TrimRight(out, "\n")))
	m.flash("The output goes with your next message")
	return tea.Batch(m.next(), m.refreshFiles())
}

func (m *Model) refreshFiles() tea.Cmd {
	root := m.agent.Workspace()
	if root == "" {
		return nil
	}
	return filesCmd(root)
}

// ---- the turn's events ----

func (m *Model) event(ev agent.Event) tea.Cmd {
	now := m.now()
	switch ev.Type {
	case agent.EventSession:
		if ev.SessionID != m.sessionID {
			m.sessionID, m.sessionTitle = ev.SessionID, ""
		}
	case agent.EventThinkingStart:
		m.finishAnswer()
		m.startThinking(now)
	case agent.EventThinkingDelta:
		if m.cur.thinking == nil {
			m.startThinking(now)
		}
		m.cur.thinking.text.WriteString(ev.Text)
		m.cur.thinkE.dirty = true
	case agent.EventThinkingEnd:
		m.endThinking(now)
	case agent.EventTextDelta:
		m.endThinking(now)
		if m.cur.answer == nil {
			m.cur.answer = &answerItem{}
			m.cur.answerE = m.tr.add(m.cur.answer)
		}
		m.cur.answer.add(ev.Text)
		m.cur.answerE.dirty = true
		m.jobLabel = "Answering…"
	case agent.EventToolCall:
		m.endThinking(now)
		m.finishAnswer()
		it := &toolItem{id: ev.ID, name: ev.Name, args: ev.Args, state: toolQueued, start: now, user: strings.HasPrefix(ev.ID, "user_")}
		e := m.tr.add(it)
		m.tools[ev.ID] = e
		m.cur.tools = append(m.cur.tools, e)
		m.advanceTools(now)
	case agent.EventApprovalRequired:
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			it.state, it.reason = toolAwaiting, ev.Reason
			e.dirty = true
		}
		m.jobLabel = "Waiting for your approval"
		kind, _ := m.agent.ToolKind(ev.Name)
		m.approval = &approvalState{req: agent.Request{ID: ev.ID, Tool: ev.Name, Kind: kind, Args: ev.Args, Reason: ev.Reason}}
		m.scroll = 0
	case agent.EventToolOutput:
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			if it.state != toolRunning {
				it.state, it.start = toolRunning, now
			}
			it.output.Write(ev.Text)
			e.dirty = true
		}
	case agent.EventToolResult:
		if a := m.approval; a != nil && a.req.ID == ev.ID {
			// Answered elsewhere (the turn was cancelled): drop the prompt.
			if a.denying {
				m.input.SetValue(a.draft)
			}
			m.approval = nil
		}
		if e := m.tools[ev.ID]; e != nil {
			it := e.it.(*toolItem)
			it.end = now
			it.result, it.display, it.errText = ev.Output, ev.Display, ev.Error
			it.state = toolDone
			if !ev.OK {
				it.state = toolFailed
				m.stats.toolFailed++
			}
			e.dirty = true
			m.stats.toolCalls++
		}
		m.advanceTools(now)
		m.jobLabel = "Thinking…"
	case agent.EventUsage:
		m.stats.inputTokens += ev.InputTokens
		m.stats.outputs += ev.OutputTokens
		if ev.InputTokens > 0 {
			m.ctxUsed = ev.InputTokens + ev.OutputTokens
		}
	case agent.EventCompressed:
		m.notice(noticeInfo, "Older turns were summarised to fit the context window.", nil)
	case agent.EventError:
		if ev.Code == "provider_"+string(llm.CodeUnreachable) {
			m.unreachable = ev.Error // noted in the transcript when the turn ends
			return m.recheck()
		}
		m.notice(noticeError, ev.Error, nil)
	case agent.EventDone:
		m.endThinking(now)
		m.finishAnswer()
		if ev.Text != "" {
			m.lastAnswer = ev.Text
		}
		switch ev.DoneReason {
		case agent.DoneCancelled:
			m.notice(noticeWarn, "Stopped. What came so far is kept in the session.", nil)
		case agent.DoneMaxTurns:
			m.notice(noticeWarn, "Stopped at the turn limit before an answer: send “continue” to go on.", nil)
		case agent.DoneError:
			if m.unreachable != "" {
				m.notice(noticeError, m.unreachable, nil)
			}
		}
		m.jobLabel = "Saving…"
	}
	return nil
}

func (m *Model) startThinking(now time.Time) {
	m.cur.thinking = &thinkingItem{start: now}
	m.cur.thinkE = m.tr.add(m.cur.thinking)
}

func (m *Model) endThinking(now time.Time) {
	if t := m.cur.thinking; t != nil {
		t.done, t.end = true, now
		m.cur.thinkE.dirty = true
		m.cur.thinking, m.cur.thinkE = nil, nil
	}
}

func (m *Model) finishAnswer() {
	if a := m.cur.answer; a != nil {
		a.finish()
		m.cur.answerE.dirty = true
		m.cur.answer, m.cur.answerE = nil, nil
	}
}

// advanceTools marks the first waiting call of the turn as running: calls
// run one after the other.
func (m *Model) advanceTools(now time.Time) {
	for _, e := range m.cur.tools {
		it := e.it.(*toolItem)
		switch it.state {
		case toolRunning, toolAwaiting:
			return
		case toolQueued:
			it.state, it.start = toolRunning, now
			e.dirty = true
			return
		}
	}
}

func (m *Model) turnDone(msg turnDoneMsg) tea.Cmd {
	m.endThinking(m.now())
	m.finishAnswer()
	m.endJob()
	for _, e := range m.cur.tools {
		if it := e.it.(*toolItem); it.state == toolQueued || it.state == toolRunning || it.state == toolAwaiting {
			it.state, it.end, it.errText = toolFailed, m.now(), "not run: the turn ended"
			e.dirty = true
		}
	}
	if msg.out != nil {
		m.sessionID = msg.out.SessionID
		m.draftID = ""
	}
	if msg.err != nil {
		switch {
		case errors.Is(msg.err, session.ErrBusy):
			m.notice(noticeError, "This session is in use by another hearth process: wait for it, or start a new one with /session new.", nil)
		case msg.out == nil:
			m.notice(noticeError, "The turn failed: "+msg.err.Error(), nil)
		default:
			m.notice(noticeWarn, msg.err.Error(), nil)
		}
	}
	return tea.Batch(m.next(), m.refreshFiles())
}

// ---- approvals ----

func (m *Model) approvalKey(msg tea.KeyPressMsg) tea.Cmd {
	a := m.approval
	switch msg.String() {
	case "left", "up", "shift+tab", "k", "h":
		a.choice = (a.choice + len(approvalChoices) - 1) % len(approvalChoices)
	case "right", "down", "tab", "j", "l":
		a.choice = (a.choice + 1) % len(approvalChoices)
	case "1", "y":
		m.choose(0)
	case "2", "a":
		m.choose(1)
	case "3", "n":
		m.choose(2)
	case "4", "d":
		m.choose(3)
	case "enter", "space":
		m.choose(a.choice)
	case "esc":
		m.stop()
	}
	return nil
}

func (m *Model) choose(i int) {
	a := m.approval
	switch i {
	case 0:
		m.answer(agent.Answer{Decision: agent.Allow})
	case 1:
		m.answer(agent.Answer{Decision: agent.AllowAlways})
		m.flash(a.req.Tool + " is allowed for the rest of this session")
	case 2:
		m.answer(agent.Answer{Decision: agent.Deny})
	case 3:
		a.choice, a.denying = 3, true
		a.draft = m.input.Value()
		m.input.Reset()
	}
}

// answer replies to the waiting call.
func (m *Model) answer(ans agent.Answer) {
	a := m.approval
	if a == nil {
		return
	}
	m.approval = nil
	if m.turn != nil {
		var err error
		if ans.Decision == agent.Deny {
			err = m.turn.Deny(a.req.ID, ans.Message)
		} else {
			err = m.turn.Approve(a.req.ID, ans.Decision)
		}
		if err != nil { // answered meanwhile: by the mode, or the turn ended
			return
		}
	}
	if e := m.tools[a.req.ID]; e != nil && ans.Decision != agent.Deny {
		it := e.it.(*toolItem)
		it.state, it.start = toolRunning, m.now()
		e.dirty = true
	}
	m.jobLabel = "Running " + a.req.Tool
}

// ---- notices ----

func (m *Model) notice(kind noticeKind, title string, body []string) {
	m.tr.add(&textItem{kind: kind, title: title, body: body})
	m.scroll = 0
}

// ---- the server ----

func (m *Model) health(msg healthMsg) tea.Cmd {
	m.checking = false
	if msg.err == nil {
		if m.unreachable != "" {
			m.notice(noticeInfo, "The model server answers again.", nil)
		}
		m.unreachable = ""
		return nil
	}
	if llm.CodeOf(msg.err) == llm.CodeUnreachable || llm.CodeOf(msg.err) == "" {
		if m.unreachable == "" {
			m.notice(noticeError, "The model server does not answer: "+msg.err.Error(), nil)
		}
		m.unreachable = msg.err.Error()
		return m.recheck()
	}
	return nil
}

// recheck asks the server again in a while, until it answers.
func (m *Model) recheck() tea.Cmd {
	if m.checking {
		return nil
	}
	m.checking = true
	p := m.agent.Provider()
	return tea.Tick(5*time.Second, func(time.Time) tea.Msg {
		return healthCmd(p)()
	})
}

func (m *Model) modelsLoaded(msg modelsMsg) tea.Cmd {
	if msg.err == nil {
		m.models = m.models[:0]
		for _, mi := range msg.models {
			m.models = append(m.models, mi.Name)
		}
	}
	if !msg.show {
		return nil
	}
	if msg.err != nil {
		m.notice(noticeError, "Could not list the server's models: "+msg.err.Error(), nil)
		return nil
	}
	var body []string
	for _, mi := range msg.models {
		mark := "  "
		if mi.Name == m.model {
			mark = m.th.accentText.Render("● ")
		}
		var caps []string
		for _, c := range mi.Capabilities {
			caps = append(caps, string(c))
		}
		line := mark + clean(mi.Name)
		if len(caps) > 0 {
			line += m.th.muted.Render("  " + strings.Join(caps, ", "))
		}
		if mi.ContextLength > 0 {
			line += m.th.muted.Render(fmt.Sprintf("  %dk context", mi.ContextLength/1024))
		}
		body = append(body, line)
	}
	if len(body) == 0 {
		body = []string{m.th.muted.Render("(the server has no models: pull one first, e.g. ollama pull qwen3:4b)")}
	}
	m.notice(noticeInfo, "Models on the server (switch with /model NAME):", body)
	return nil
}
