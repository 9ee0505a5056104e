package tui

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/agent"
)

// viewState is the screen: the window's size and theme, the transcript
// and how far it is scrolled, and what is drawn under it.
type viewState struct {
	width, height int
	th            *theme
	dark          bool
	md            *mdRenderer // nil: layout builds it again (new width or theme)
	rc            renderCtx
	// keyGen is part of the items' cache key: ctrl+t and ctrl+o bump it,
	// as they change how items draw.
	keyGen int

	tr     transcript
	total  int // transcript height
	scroll int // lines scrolled up from the bottom

	// frame is the spinner's, advanced by each tick while ticking.
	frame                       int
	ticking                     bool
	expandThinking, expandTools bool
	wsLabel                     string // the workspace, for the banner
	// hint is shown on the activity line until hintUntil (flash).
	hint      string
	hintUntil time.Time
	quitting  bool

	// bottom is the rendered area under the transcript, and its height.
	bottom  string
	bottomH int
}

// contentWidth is the transcript's width: one column of margin each side.
func (m *Model) contentWidth() int { return max(m.width-2, 20) }

// viewHeight is the transcript's height.
func (m *Model) viewHeight() int { return max(m.height-m.bottomH, 1) }

// layout renders what changed after an update: the transcript items (each
// cached until it changes), and the area under them.
func (m *Model) layout() {
	if m.md == nil {
		m.md = newMDRenderer(m.contentWidth()-2, m.th)
	}
	m.rc = renderCtx{width: m.contentWidth(), th: m.th, md: m.md, now: m.now(), frame: m.frame,
		expandThinking: m.expandThinking, expandTools: m.expandTools, key: m.md.gen*100000 + m.keyGen}
	total := m.tr.layout(&m.rc)
	if m.scroll > 0 && total > m.total {
		m.scroll += total - m.total // keep the view still while reading back
	}
	m.total = total
	m.bottom = m.renderBottom()
	m.bottomH = strings.Count(m.bottom, "\n") + 1
	m.scrollBy(0)
}

func (m *Model) scrollBy(n int) {
	m.scroll = min(max(m.scroll+n, 0), max(m.total-m.viewHeight(), 0))
}

// View draws the transcript window above the input and status line.
func (m *Model) View() tea.View {
	var v tea.View
	if m.quitting {
		return v
	}
	vh := m.viewHeight()
	top := max(m.total-vh-m.scroll, 0)
	lines := m.tr.window(top, vh)
	var b strings.Builder
	for i := 0; i < vh; i++ {
		if i < len(lines) && lines[i] != "" {
			b.WriteByte(' ')
			b.WriteString(lines[i])
		}
		b.WriteByte('\n')
	}
	b.WriteString(m.bottom)
	v.SetContent(b.String())
	v.AltScreen = true
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	title := "hearth"
	if m.sessionTitle != "" {
		// The title goes out inside an OSC sequence: a BEL or ESC in it
		// would end that sequence and start the model's own.
		title += " · " + strings.Join(strings.Fields(clean(m.sessionTitle)), " ")
	}
	v.WindowTitle = title
	return v
}

// renderBottom draws the activity line, the completion menu, the input (or
// the approval prompt) and the status line.
func (m *Model) renderBottom() string {
	th := m.th
	parts := m.renderPinnedPlan()
	if s := m.activity(); s != "" {
		parts = append(parts, " "+s)
	}
	if menu := m.renderCompletion(); menu != "" {
		parts = append(parts, menu)
	}
	switch {
	case m.restore != nil:
		parts = append(parts, m.renderRestore())
	case m.approval != nil && !m.approval.denying:
		parts = append(parts, m.renderApproval())
	default:
		box := th.border(m.inputBorder())
		content := m.input.View()
		if m.approval != nil && m.approval.denying {
			content = th.warnText.Render("Why deny, or what to do instead? (enter sends, esc goes back)") + "\n" + content
		}
		parts = append(parts, box.Width(m.width).Render(content))
	}
	parts = append(parts, m.statusLine())
	return strings.Join(parts, "\n")
}

func (m *Model) inputBorder() color.Color {
	if m.th.noColor {
		return nil
	}
	if m.job != jobNone {
		return m.th.faint
	}
	return m.th.accent
}

// activity is the line above the input: what is running, or a hint.
func (m *Model) activity() string {
	th := m.th
	now := m.now()
	var s string
	if m.job != jobNone {
		label := m.jobLabel
		if m.cancelling {
			label = "Stopping…"
		}
		label = clean(label) // it can name a tool
		stop := " · esc to stop"
		if m.job == jobRestore && m.cancel == nil {
			stop = "" // a restore being made is not stopped half-way
		}
		s = th.accentText.Render(m.rc.spinner()) + " " + th.base.Render(label) + " " +
			th.muted.Render(fmtDuration(now.Sub(m.jobStart))+stop)
		if n := len(m.queue); n > 0 {
			s += th.muted.Render(fmt.Sprintf(" · %d queued", n))
		}
	}
	if m.hint != "" && now.Before(m.hintUntil) {
		if s != "" {
			s += th.muted.Render(" · ")
		}
		s += th.warnText.Render(clean(m.hint))
	}
	return xansi.Truncate(s, m.width-1, "…")
}

func (m *Model) renderCompletion() string {
	c := m.comp
	if len(c.items) == 0 {
		return ""
	}
	th := m.th
	from := 0
	if c.sel >= maxCompletions {
		from = c.sel - maxCompletions + 1
	}
	to := min(from+maxCompletions, len(c.items))
	labelW := 0
	items := make([]completion, 0, to-from)
	for _, it := range c.items[from:to] {
		// file names and session titles
		it.label, it.desc = clean(it.label), clean(it.desc)
		items = append(items, it)
		labelW = max(labelW, xansi.StringWidth(it.label))
	}
	labelW = min(labelW, m.width/2)
	var lines []string
	for i := from; i < to; i++ {
		it := items[i-from]
		label := xansi.Truncate(it.label, labelW, "…")
		label += strings.Repeat(" ", labelW-xansi.StringWidth(label))
		line := "  " + label
		if it.desc != "" {
			line += "  " + th.muted.Render(it.desc)
		}
		if i == c.sel {
			line = th.selected.Render("› "+label) + "  " + th.muted.Render(it.desc)
		}
		lines = append(lines, " "+xansi.Truncate(line, m.width-2, "…"))
	}
	if len(c.items) > to {
		lines = append(lines, " "+th.subtle.Render(fmt.Sprintf("  … %d more (keep typing)", len(c.items)-to)))
	}
	return strings.Join(lines, "\n")
}

func (m *Model) renderApproval() string {
	th := m.th
	a := m.approval
	inner := max(m.width-4, 10)
	// What the user approves must read as what will run: the tool's
	// reason quotes the model's arguments.
	lines := []string{th.warnText.Bold(true).Render("Allow " + clean(a.req.Tool) + "?")}
	if a.req.Reason != "" {
		for _, l := range wrapPlain(clean(a.req.Reason), inner) {
			lines = append(lines, th.base.Render(l))
		}
	}
	for i, c := range approvalChoices {
		label := fmt.Sprintf("%d. %s", i+1, c)
		if i == a.choice {
			lines = append(lines, th.selected.Render("› "+label))
		} else {
			lines = append(lines, "  "+th.muted.Render(label))
		}
	}
	lines = append(lines, th.subtle.Render("1–4 or y/a/n/d · ↑↓ enter · esc stops the turn"))
	return th.border(th.warn).Width(m.width).Render(strings.Join(lines, "\n"))
}

// statusLine: provider, model, session, context used, approval mode; or
// the unreachable server and the fix.
func (m *Model) statusLine() string {
	th := m.th
	w := m.width - 1
	var right string
	if m.scroll > 0 {
		right = th.warnText.Render(fmt.Sprintf("↓ %d more lines · ctrl+end", m.scroll))
	} else {
		right = th.subtle.Render("/help")
	}
	if m.unreachable != "" {
		msg := "⚠ model server unreachable"
		if fix := fixOf(clean(m.unreachable)); fix != "" {
			msg += " · " + fix
		}
		left := th.statusWarn.Render(xansi.Truncate(msg, max(w-xansi.StringWidth(right)-1, 10), "…"))
		return " " + joinEnds(left, right, w)
	}
	sep := th.subtle.Render(" · ")
	var items []string
	items = append(items, th.muted.Render(m.opts.ProviderKind))
	model := m.model
	if model == "" {
		model = "no model"
	}
	items = append(items, th.base.Render(clean(model)))
	sess := "new session"
	if m.sessionID != "" {
		sess = m.sessionID
		if m.sessionTitle != "" {
			sess = xansi.Truncate(strings.Join(strings.Fields(clean(m.sessionTitle)), " "), 28, "…")
		}
	}
	items = append(items, th.muted.Render(sess))
	if m.ctxLen > 0 {
		pct := m.ctxUsed * 100 / m.ctxLen
		st := th.muted
		switch {
		case pct >= 85:
			st = th.failText
		case pct >= 60:
			st = th.warnText
		}
		items = append(items, st.Render(fmt.Sprintf("ctx %d%%", pct)))
	}
	if p := m.plan; p != nil && m.planHidden && len(p.Open()) > 0 {
		finished, total := planProgress(p)
		items = append(items, th.muted.Render(fmt.Sprintf("plan %d/%d", finished, total)))
	}
	modeSt := th.muted
	switch m.mode {
	case agent.ModeYolo:
		modeSt = th.failText
	case agent.ModeAutoEdit, agent.ModePlan:
		modeSt = th.warnText
	}
	items = append(items, modeSt.Render(string(m.mode)+" mode"))
	left := strings.Join(items, sep)
	if xansi.StringWidth(left) > w-xansi.StringWidth(right)-1 {
		left = xansi.Truncate(left, max(w-xansi.StringWidth(right)-1, 10), "…")
	}
	return " " + joinEnds(left, right, w)
}

// joinEnds puts left and right at the ends of a line of width w.
func joinEnds(left, right string, w int) string {
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return left
	}
	return left + strings.Repeat(" ", gap) + right
}

// fixOf is the hint at the end of a provider's error ("…; is Ollama
// running? start it with `ollama serve`…"), or the whole message.
func fixOf(msg string) string {
	if i := strings.LastIndex(msg, "; "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// ---- theme, size and the banner ----

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

// ---- time ----

// animating says whether anything on screen moves: running work, or a
// tool call in progress.
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

// tick schedules the next animation frame.
func (m *Model) tick() tea.Cmd {
	m.ticking = true
	return tea.Tick(100*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// startTick starts the animation unless it runs already.
func (m *Model) startTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	return m.tick()
}

// ---- notices ----

// notice adds a notice to the transcript and scrolls down to it.
func (m *Model) notice(kind noticeKind, title string, body []string) {
	m.tr.add(&textItem{kind: kind, title: title, body: body})
	m.scroll = 0
}

// flash shows a hint under the input for a few seconds.
func (m *Model) flash(s string) {
	m.hint, m.hintUntil = s, m.now().Add(2*time.Second)
}
