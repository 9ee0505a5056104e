package tui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/termtext"
)

// What the model, its tools, MCP and model servers wrote (an answer,
// reasoning, a call's arguments, output, errors, a session title, a file
// name) reaches the screen without its control sequences: a model steered by
// prompt injection could otherwise write to the clipboard, retitle the
// window, clear the screen or overwrite what the user reads (see package
// termtext). Items strip the text they hold when they render it, so that
// every way in (a live turn, a resumed session) is covered; the answer is
// stripped as it streams, before the Markdown renderer sees it. Hearth's own
// styling is applied afterwards and stays.
func clean(s string) string { return termtext.String(s) }

// spinnerFrames animate live items.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// renderCtx is what items render with.
type renderCtx struct {
	width int // content width, in cells
	th    *theme
	md    *mdRenderer
	now   time.Time
	frame int
	// expandThinking and expandTools show thinking blocks and tool output
	// in full.
	expandThinking, expandTools bool
	// key identifies everything above but now and frame: cached renders
	// with another key are stale.
	key int
}

func (c *renderCtx) spinner() string { return spinnerFrames[c.frame%len(spinnerFrames)] }

// item is one thing in the transcript.
type item interface {
	render(c *renderCtx) []string
	// live items change with time (a spinner, elapsed seconds) and are
	// rendered on every frame.
	live() bool
}

// entry is an item with its cached render.
type entry struct {
	it    item
	key   int
	lines []string
	dirty bool
}

// transcript is the scrollable conversation.
type transcript struct {
	entries []*entry
}

func (t *transcript) add(it item) *entry {
	e := &entry{it: it, dirty: true}
	t.entries = append(t.entries, e)
	return e
}

func (t *transcript) clear() { t.entries = nil }

// layout renders what changed and returns the total height.
func (t *transcript) layout(c *renderCtx) int {
	total := 0
	for _, e := range t.entries {
		if e.dirty || e.key != c.key || e.it.live() {
			e.lines = e.it.render(c)
			e.key, e.dirty = c.key, false
		}
		if total > 0 && len(e.lines) > 0 {
			total++ // a blank line between items
		}
		total += len(e.lines)
	}
	return total
}

// window returns the lines from top (0 = first line) for height lines.
func (t *transcript) window(top, height int) []string {
	out := make([]string, 0, height)
	y := 0
	for _, e := range t.entries {
		if len(e.lines) == 0 {
			continue
		}
		if y > 0 {
			if y >= top && len(out) < height {
				out = append(out, "")
			}
			y++
		}
		n := len(e.lines)
		if y+n <= top {
			y += n
			continue
		}
		from := max(top-y, 0)
		for _, l := range e.lines[from:] {
			if len(out) >= height {
				return out
			}
			out = append(out, l)
		}
		y += n
		if len(out) >= height {
			return out
		}
	}
	return out
}

// ---- items ----

// textItem is a plain block: the welcome banner, notices, command output.
type textItem struct {
	kind  noticeKind
	title string
	body  []string // preformatted lines (may hold ANSI)
	plain string   // wrapped to the width
	// problems and notes are paragraphs after the body, each wrapped to
	// the width: problems in the error colour, then notes.
	problems, notes []string
}

type noticeKind uint8

const (
	noticeInfo noticeKind = iota
	noticeWarn
	noticeError
	noticeBanner
)

func (it *textItem) live() bool { return false }

func (it *textItem) render(c *renderCtx) []string {
	th := c.th
	var out []string
	icon, st := "", th.muted
	switch it.kind {
	case noticeWarn:
		icon, st = "! ", th.warnText
	case noticeError:
		icon, st = "✗ ", th.failText
	case noticeInfo:
		icon, st = "· ", th.muted
	}
	if it.title != "" {
		for i, l := range wrapPlain(clean(it.title), c.width-2) {
			p := "  "
			if i == 0 {
				p = icon
				if p == "" {
					p = "  "
				}
			}
			if it.kind == noticeBanner {
				out = append(out, th.accentText.Render(l))
				continue
			}
			out = append(out, st.Render(p)+st.Render(l))
		}
	}
	if it.plain != "" {
		for _, l := range wrapPlain(clean(it.plain), c.width-2) {
			out = append(out, "  "+th.muted.Render(l))
		}
	}
	for _, l := range it.body {
		out = append(out, "  "+xansi.Truncate(l, c.width-2, "…"))
	}
	for _, p := range it.problems {
		for _, l := range wrapPlain(clean(p), c.width-2) {
			out = append(out, "  "+th.failText.Render(l))
		}
	}
	for _, n := range it.notes {
		for _, l := range wrapPlain(clean(n), c.width-2) {
			out = append(out, "  "+th.muted.Render(l))
		}
	}
	return out
}

// userItem is a message the user sent.
type userItem struct {
	text  string
	shell bool
}

func (it *userItem) live() bool { return false }

func (it *userItem) render(c *renderCtx) []string {
	mark := "› "
	if it.shell {
		mark = "! "
	}
	var out []string
	for i, l := range wrapPlain(strings.TrimRight(clean(it.text), "\n"), c.width-2) {
		p := "  "
		if i == 0 {
			p = c.th.userBar.Render(mark)
		}
		out = append(out, p+c.th.userText.Render(l))
	}
	return out
}

// thinkingItem is the model's reasoning: live while it streams, one line
// once the answer starts, in full when expanded.
type thinkingItem struct {
	text       strings.Builder
	start, end time.Time
	done       bool
}

func (it *thinkingItem) live() bool { return false }

func (it *thinkingItem) render(c *renderCtx) []string {
	th := c.th
	end := it.end
	if !it.done {
		end = c.now
	}
	secs := fmtDuration(end.Sub(it.start))
	text := strings.TrimSpace(clean(it.text.String()))
	var head string
	switch {
	case !it.done:
		head = th.muted.Render("✻ Thinking")
	case c.expandThinking:
		head = th.muted.Render("▾ Thought for " + secs + " · ctrl+t to collapse")
	default:
		head = th.muted.Render("▸ Thought for " + secs)
		if text != "" {
			head += th.subtle.Render(" · ctrl+t to expand")
		}
	}
	out := []string{head}
	if text == "" || (it.done && !c.expandThinking) {
		return out
	}
	lines := wrapPlain(text, c.width-4)
	if !it.done && !c.expandThinking && len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	for _, l := range lines {
		out = append(out, th.subtle.Render("│ ")+th.thinking.Render(l))
	}
	return out
}

// answerItem is streamed answer text, rendered as Markdown.
type answerItem struct {
	md mdStream
	// san strips the answer as it streams: a sequence cut between two
	// deltas is still removed whole.
	san termtext.Stripper
	// done holds the indented lines of the completed blocks, for key.
	key  int
	done []string
	// raw is the answer as the model wrote it, and start when it began:
	// if it turns out to have been reasoning (thinking_reclassified), the
	// thinking item that replaces it has both.
	raw   strings.Builder
	start time.Time
}

func (it *answerItem) live() bool { return false }

// add appends a piece of the answer.
func (it *answerItem) add(text string) {
	it.raw.WriteString(text)
	it.md.Append(it.san.String(text))
}

// finish ends the answer.
func (it *answerItem) finish() {
	if rest := it.san.Flush(nil); len(rest) > 0 {
		it.md.Append(string(rest))
	}
	it.md.Finish()
}

func (it *answerItem) render(c *renderCtx) []string {
	done, tail := it.md.Lines(c.md)
	if it.key != c.key || len(done) < len(it.done) {
		it.key, it.done = c.key, nil
	}
	for _, l := range done[len(it.done):] {
		it.done = append(it.done, it.indent(c, l, len(it.done) == 0))
	}
	if len(tail) == 0 {
		return it.done
	}
	out := make([]string, len(it.done), len(it.done)+len(tail))
	copy(out, it.done)
	for _, l := range tail {
		out = append(out, it.indent(c, l, len(out) == 0))
	}
	return out
}

func (it *answerItem) indent(c *renderCtx, l string, first bool) string {
	if first {
		return c.th.accentText.Render("● ") + l
	}
	if l == "" {
		return ""
	}
	return "  " + l
}

// toolState is where a tool call is.
type toolState uint8

const (
	toolQueued toolState = iota
	toolAwaiting
	toolRunning
	toolDone
	toolFailed
)

// toolItem is a card for one tool call.
type toolItem struct {
	id, name string
	args     json.RawMessage
	reason   string
	state    toolState
	user     bool // a !command the user ran
	start    time.Time
	end      time.Time
	output   tailBuffer
	result   string
	display  string
	errText  string
	// checkpoint is the snapshot of the workspace taken before the call
	// (0: none, a read-only tool); tooLarge lists the files it could not
	// keep (over the size cap: not restorable).
	checkpoint int64
	tooLarge   []string
}

func (it *toolItem) live() bool { return it.state == toolRunning || it.state == toolQueued }

// maxStreamLines is how many lines of a running command's output a card
// shows.
const maxStreamLines = 10

func (it *toolItem) render(c *renderCtx) []string {
	if it.name == agent.PlanToolName && !it.user && (it.state == toolQueued || it.state == toolRunning || it.state == toolDone) {
		return planCard(c, it) // the pinned checklist shows the plan
	}
	th := c.th
	inner := max(c.width-4, 10)
	var icon, label string
	border := th.faint
	switch it.state {
	case toolQueued:
		icon, label = th.muted.Render("○"), th.muted.Render("waiting")
	case toolAwaiting:
		icon, label, border = th.warnText.Render("?"), th.warnText.Render("needs your approval"), th.warn
	case toolRunning:
		icon, label, border = th.accentText.Render(c.spinner()), th.muted.Render(fmtDuration(c.now.Sub(it.start))), th.accent
	case toolDone:
		icon, label = th.okText.Render("✓"), th.muted.Render(fmtDuration(it.end.Sub(it.start)))
	case toolFailed:
		icon, label, border = th.failText.Render("✗"), th.muted.Render(fmtDuration(it.end.Sub(it.start))), th.fail
	}
	name := clean(it.name)
	if it.user {
		name = "you ran"
	}
	summary := clean(argSummary(it.name, it.args))
	head := icon + " " + th.bold.Render(name)
	right := " " + label
	if it.checkpoint > 0 {
		cp := fmt.Sprintf("◦ checkpoint %d · ", it.checkpoint)
		if inner < 60 {
			cp = fmt.Sprintf("◦ %d · ", it.checkpoint)
		}
		right = " " + th.subtle.Render(cp) + label
	}
	avail := inner - xansi.StringWidth(head) - xansi.StringWidth(right) - 1
	if summary != "" && avail > 4 {
		head += " " + th.base.Render(xansi.Truncate(summary, avail, "…"))
	}
	pad := inner - xansi.StringWidth(head) - xansi.StringWidth(right)
	if pad > 0 {
		head += strings.Repeat(" ", pad)
	}
	head += right
	body := []string{head}
	if len(it.tooLarge) > 0 {
		// Said once, plainly: undo cannot bring these back.
		msg := fmt.Sprintf("! not restorable (over the checkpoint size cap): %s", clean(strings.Join(it.tooLarge, ", ")))
		for _, l := range wrapPlain(msg, inner) {
			body = append(body, th.warnText.Render(l))
		}
	}

	switch it.state {
	case toolAwaiting:
		body = append(body, argPreview(c, it.name, it.args, inner)...)
	case toolRunning:
		lines := it.output.lines()
		if len(lines) > maxStreamLines && !c.expandTools {
			lines = lines[len(lines)-maxStreamLines:]
		}
		for _, l := range lines {
			body = append(body, th.muted.Render(xansi.Truncate(l, inner, "…")))
		}
	case toolDone:
		body = append(body, resultPreview(c, it, inner)...)
	case toolFailed:
		if it.display != "" {
			body = append(body, diffLines(c, it.display, inner)...)
		}
		msg := clean(it.errText)
		lines := wrapPlain(msg, inner)
		if len(lines) > 6 && !c.expandTools {
			lines = append(lines[:6], "… (ctrl+o to show all)")
		}
		for _, l := range lines {
			body = append(body, th.failText.Render(l))
		}
		if out := it.output.lines(); len(out) > 0 {
			if len(out) > 4 && !c.expandTools {
				out = out[len(out)-4:]
			}
			for _, l := range out {
				body = append(body, th.muted.Render(xansi.Truncate(l, inner, "…")))
			}
		}
	}
	box := th.border(border).Width(c.width).Render(strings.Join(body, "\n"))
	return strings.Split(box, "\n")
}

// resultPreview is the body of a finished card.
func resultPreview(c *renderCtx, it *toolItem, width int) []string {
	th := c.th
	if it.display != "" {
		return diffLines(c, it.display, width)
	}
	out := strings.TrimRight(clean(it.result), "\n")
	var lines []string
	if it.name == "run_shell_command" {
		lines = it.output.lines()
	}
	if len(lines) == 0 {
		if strings.TrimSpace(out) == "" {
			return nil
		}
		lines = strings.Split(out, "\n")
	}
	limit := 4
	if it.name == "run_shell_command" {
		limit = 8
	}
	var res []string
	more := 0
	if len(lines) > limit && !c.expandTools {
		more = len(lines) - limit
		if it.name == "run_shell_command" {
			lines = lines[len(lines)-limit:] // the end of a command's output matters most
		} else {
			lines = lines[:limit]
		}
	}
	if more > 0 && it.name == "run_shell_command" {
		res = append(res, th.subtle.Render(fmt.Sprintf("… %s (ctrl+o to show all)", plural(more, "earlier line"))))
	}
	for _, l := range lines {
		res = append(res, th.muted.Render(xansi.Truncate(strings.ReplaceAll(l, "\t", "    "), width, "…")))
	}
	if more > 0 && it.name != "run_shell_command" {
		res = append(res, th.subtle.Render(fmt.Sprintf("… %s (ctrl+o to show all)", plural(more, "more line"))))
	}
	return res
}

// diffLines colours a unified diff.
func diffLines(c *renderCtx, diff string, width int) []string {
	th := c.th
	lines := strings.Split(strings.TrimRight(clean(diff), "\n"), "\n")
	const limit = 24
	more := 0
	if len(lines) > limit && !c.expandTools {
		more = len(lines) - limit
		lines = lines[:limit]
	}
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		l = xansi.Truncate(strings.ReplaceAll(l, "\t", "    "), width, "…")
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			out = append(out, th.diffHead.Render(l))
		case strings.HasPrefix(l, "@@"):
			out = append(out, th.diffHunk.Render(l))
		case strings.HasPrefix(l, "+"):
			out = append(out, th.diffAdd.Render(l))
		case strings.HasPrefix(l, "-"):
			out = append(out, th.diffDel.Render(l))
		default:
			out = append(out, th.muted.Render(l))
		}
	}
	if more > 0 {
		out = append(out, th.subtle.Render(fmt.Sprintf("… %s (ctrl+o to show all)", plural(more, "more line"))))
	}
	return out
}

// argSummary is the one-line gist of a call's arguments.
func argSummary(name string, raw json.RawMessage) string {
	if name == agent.PlanToolName {
		// A plan refused: its size, not its JSON.
		var p struct{ Steps []json.RawMessage }
		if json.Unmarshal(raw, &p) == nil {
			return plural(len(p.Steps), "step")
		}
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || len(m) == 0 {
		return ""
	}
	for _, k := range []string{"command", "file_path", "path", "pattern", "query", "url", "dir_path", "directory"} {
		if v, ok := m[k].(string); ok && v != "" {
			v = strings.Join(strings.Fields(v), " ")
			if k == "pattern" {
				if p, ok := m["path"].(string); ok && p != "" {
					v += " in " + p
				}
			}
			return v
		}
	}
	if ps, ok := m["paths"].([]any); ok {
		var s []string
		for _, p := range ps {
			s = append(s, fmt.Sprint(p))
		}
		return strings.Join(s, ", ")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// argPreview shows what an awaiting call will do: an edit's change as a
// diff, a write's first lines.
func argPreview(c *renderCtx, name string, raw json.RawMessage, width int) []string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	old, _ := m["old_string"].(string)
	nw, hasNew := m["new_string"].(string)
	old, nw = clean(old), clean(nw)
	if hasNew {
		var b strings.Builder
		for _, l := range strings.Split(strings.TrimRight(old, "\n"), "\n") {
			if old != "" {
				b.WriteString("-" + l + "\n")
			}
		}
		for _, l := range strings.Split(strings.TrimRight(nw, "\n"), "\n") {
			b.WriteString("+" + l + "\n")
		}
		return diffLines(c, b.String(), width)
	}
	if content, ok := m["content"].(string); ok {
		lines := strings.Split(strings.TrimRight(clean(content), "\n"), "\n")
		var b strings.Builder
		for _, l := range lines {
			b.WriteString("+" + l + "\n")
		}
		return diffLines(c, b.String(), width)
	}
	return nil
}

// tailBuffer keeps the end of a running command's output.
type tailBuffer struct {
	b strings.Builder
}

// maxToolOutput bounds what a card keeps of streamed output.
const maxToolOutput = 64 << 10

func (t *tailBuffer) Write(s string) {
	t.b.WriteString(s)
	if t.b.Len() > 2*maxToolOutput {
		keep := t.b.String()[t.b.Len()-maxToolOutput:]
		if i := strings.IndexByte(keep, '\n'); i >= 0 {
			keep = keep[i+1:]
		}
		t.b.Reset()
		t.b.WriteString(keep)
	}
}

func (t *tailBuffer) String() string { return t.b.String() }

// lines returns the output as a card shows it: stripped of control
// sequences, and each line as its last redraw (a progress bar rewrites its
// line after a carriage return).
func (t *tailBuffer) lines() []string {
	st := termtext.Stripper{KeepCR: true}
	s := strings.TrimRight(string(st.Flush(st.AppendString(nil, t.b.String()))), "\n")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	s = strings.ReplaceAll(s, "\t", "    ")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if j := strings.LastIndexByte(l, '\r'); j >= 0 { // progress bars redraw the line
			lines[i] = l[j+1:]
		}
	}
	return lines
}

// fmtDuration formats elapsed time for people: 0.4s, 12s, 3m05s.
func fmtDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// plural says "1 more line", "3 more lines".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
