package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/session"
)

// ErrTrustCancelled is returned by AskTrust when the user leaves the
// dialog without choosing (esc, ctrl+c, or an interrupt): nothing was
// decided, and the caller should not start.
var ErrTrustCancelled = errors.New("no trust level chosen for the folder")

// TrustOptions configure AskTrust.
type TrustOptions struct {
	// Theme is "auto" (ask the terminal for its background; the default),
	// "dark" or "light".
	Theme string
	// NoColor draws without colours (NO_COLOR is set, or TERM is dumb).
	NoColor bool
	// Width and Height are the window's size when the output is not a
	// terminal (tests); a terminal's own size is used otherwise. Without
	// them the dialog is 80 columns wide.
	Width, Height int
}

// AskTrust asks the user, once, how far to trust the folder at path: what
// each trust level allows is explained, and the choice is returned for the
// caller to remember. The highlighted choice at first, taken by a bare
// Enter, is session.TrustUntrusted, the safest.
//
// It runs a small Bubble Tea program inline (not on the alternate screen),
// to be called before the main UI starts. in and out are the terminal: nil
// means standard input (or the controlling terminal when standard input is
// redirected) and standard output. It returns ErrTrustCancelled when the
// user quits without choosing, and ctx's error when ctx ends first. An in
// that ends (EOF) does not end the dialog: it waits for ctx.
func AskTrust(ctx context.Context, in io.Reader, out io.Writer, path string, o TrustOptions) (session.Trust, error) {
	if path == "" {
		return "", errors.New("tui: AskTrust needs the folder to ask about")
	}
	m := newTrustModel(path, o)
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if in != nil {
		opts = append(opts, tea.WithInput(in))
	}
	if out != nil {
		opts = append(opts, tea.WithOutput(out))
	}
	if o.Width > 0 {
		opts = append(opts, tea.WithWindowSize(o.Width, o.Height))
	}
	if o.NoColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	switch {
	case err == nil && m.chosen != "":
		return m.chosen, nil
	case ctx.Err() != nil && (err == nil || errors.Is(err, tea.ErrProgramKilled)):
		return "", ctx.Err()
	case err == nil || errors.Is(err, tea.ErrInterrupted):
		return "", ErrTrustCancelled
	}
	return "", fmt.Errorf("tui: asking for the folder's trust level: %w", err)
}

// trustChoice is one trust level the dialog offers.
type trustChoice struct {
	level session.Trust
	label string
	about string
}

// trustChoices are the levels offered, from the most trust to the least;
// the last, Untrusted, is highlighted at first (trustDefault).
var trustChoices = []trustChoice{
	{session.TrustTrusted, "Trusted",
		"The project's own config (.hearth/config.toml) applies as yours would: its profiles, providers, and MCP servers, " +
			"which run as you, outside the sandbox. The agent's own commands stay confined. If the file changes, it is read as untrusted until you trust the folder again."},
	{session.TrustReadOnly, "Read-only",
		"The agent may read and search but never change anything here, whatever the approval mode; " +
			"commands run in a read-only sandbox."},
	{session.TrustUntrusted, "Untrusted (default)",
		"The project's config may only tighten your settings: it cannot start MCP servers or choose providers. " +
			"Approval modes above default (auto_edit, yolo) are not available."},
}

// trustDefault is the index in trustChoices highlighted at first.
const trustDefault = 2

// trustMaxWidth caps the dialog's width: prose wider than this is hard to
// read.
const trustMaxWidth = 80

// trustModel is AskTrust's Bubble Tea model.
type trustModel struct {
	o             TrustOptions
	path          string // the folder as shown (showPath)
	th            *theme
	dark          bool
	width, height int
	sel           int
	// chosen is the level taken ("" until Enter); cancelled is set when
	// the user quit without choosing.
	chosen    session.Trust
	cancelled bool
}

func newTrustModel(path string, o TrustOptions) *trustModel {
	if o.Theme == "" {
		o.Theme = "auto"
	}
	m := &trustModel{o: o, path: showPath(path), dark: o.Theme != "light", width: 80, sel: trustDefault}
	if o.Width > 0 {
		m.width, m.height = o.Width, o.Height
	}
	m.th = newTheme(m.dark, o.NoColor)
	return m
}

// showPath is a folder as the dialog shows it: under the home directory as
// ~/…, stripped of control sequences (termtext), with line breaks and tabs
// shown escaped as the CLI's tables show them, so that the name cannot
// forge lines of the dialog.
func showPath(p string) string {
	s := clean(homeRel(p))
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	}
	return s
}

// Init asks the terminal for its background when the theme is "auto".
func (m *trustModel) Init() tea.Cmd {
	if m.o.Theme == "auto" && !m.o.NoColor {
		return tea.RequestBackgroundColor
	}
	return nil
}

// Update moves the highlight (↑ ↓, k j, tab, 1–3), takes it (enter), or
// quits without a choice (esc, ctrl+c).
func (m *trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if msg.Width > 0 {
			m.width, m.height = msg.Width, msg.Height
		}
	case tea.BackgroundColorMsg:
		if m.o.Theme == "auto" && msg.IsDark() != m.dark {
			m.dark = msg.IsDark()
			m.th = newTheme(m.dark, m.o.NoColor)
		}
	case tea.KeyPressMsg:
		if m.chosen != "" || m.cancelled {
			return m, nil
		}
		n := len(trustChoices)
		switch k := msg.String(); k {
		case "up", "k", "shift+tab":
			m.sel = (m.sel + n - 1) % n
		case "down", "j", "tab":
			m.sel = (m.sel + 1) % n
		case "1", "2", "3":
			m.sel = int(k[0] - '1')
		case "enter":
			m.chosen = trustChoices[m.sel].level
			return m, tea.Quit
		case "esc", "ctrl+c":
			m.cancelled = true
			return m, tea.Quit
		}
	}
	return m, nil
}

// View draws the dialog; once answered, a line that says what was chosen
// (it stays above the shell's prompt), or nothing when cancelled.
func (m *trustModel) View() tea.View {
	var v tea.View
	switch {
	case m.cancelled:
	case m.chosen != "":
		w := min(m.width, trustMaxWidth) - 1
		lines := wrapWords("Trust level of "+m.path+": "+string(m.chosen)+".", w)
		for i, l := range lines {
			lines[i] = m.th.muted.Render(l)
		}
		v.SetContent(strings.Join(lines, "\n"))
	default:
		v.SetContent(m.render())
	}
	return v
}

// render draws the dialog in a box as wide as the window (at most
// trustMaxWidth), every line wrapped to fit it. A blank line separates the
// choices unless the window is too short for it.
func (m *trustModel) render() string {
	width := min(m.width, trustMaxWidth)
	if lines := m.lines(width, true); m.height <= 0 || len(lines)+2 <= m.height {
		return m.box(width, lines)
	}
	return m.box(width, m.lines(width, false))
}

func (m *trustModel) box(width int, lines []string) string {
	return m.th.border(m.th.warn).Width(width).Render(strings.Join(lines, "\n"))
}

// lines are the dialog's lines inside its box (border and padding take 4
// columns).
func (m *trustModel) lines(width int, spaced bool) []string {
	th := m.th
	inner := max(width-4, 10)
	var lines []string
	add := func(st func(...string) string, ls []string) {
		for _, l := range ls {
			lines = append(lines, st(l))
		}
	}
	add(th.warnText.Bold(true).Render, wrapWords("Do you trust the files in this folder?", inner))
	add(th.bold.Render, wrapPath(m.path, inner))
	lines = append(lines, "")
	const indent = "     " // as wide as "› 1. "
	for i, c := range trustChoices {
		if i > 0 && spaced {
			lines = append(lines, "")
		}
		label := wrapWords(fmt.Sprintf("%d. %s", i+1, c.label), inner-2)
		about := th.muted
		if i == m.sel {
			lines = append(lines, th.selected.Render("› "+label[0]))
			label = label[1:]
			about = th.base
		}
		for _, l := range label {
			lines = append(lines, "  "+th.base.Render(l))
		}
		for _, l := range wrapWords(c.about, inner-len(indent)) {
			lines = append(lines, indent+about.Render(l))
		}
	}
	lines = append(lines, "")
	add(th.subtle.Render, wrapWords("↑↓ or 1–3 move · enter chooses · esc quits", inner))
	add(th.muted.Render, wrapWords("You can change it later with hearth workspaces trust PATH LEVEL", inner))
	return lines
}

// wrapWords wraps plain text to lines of at most width cells, breaking at
// spaces only (not at hyphens): a word is broken only when it is wider
// than a whole line.
func wrapWords(s string, width int) []string {
	width = max(width, 1)
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case xansi.StringWidth(cur)+1+xansi.StringWidth(w) <= width:
			cur += " " + w
			continue
		default:
			lines = append(lines, cur)
			cur = w
		}
		if xansi.StringWidth(cur) > width {
			parts := strings.Split(xansi.Hardwrap(cur, width, true), "\n")
			lines = append(lines, parts[:len(parts)-1]...)
			cur = parts[len(parts)-1]
		}
	}
	return append(lines, cur)
}

// wrapPath wraps a path to lines of at most width cells, after its
// separators where it can and inside a name only where it must. Nothing is
// dropped: the lines joined are the path, spaces included.
func wrapPath(p string, width int) []string {
	width = max(width, 1)
	var lines []string
	cur := ""
	for _, seg := range strings.SplitAfter(p, string(filepath.Separator)) {
		if xansi.StringWidth(cur)+xansi.StringWidth(seg) <= width {
			cur += seg
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
		}
		cur = seg
		if xansi.StringWidth(cur) > width {
			parts := strings.Split(xansi.Hardwrap(cur, width, true), "\n")
			lines = append(lines, parts[:len(parts)-1]...)
			cur = parts[len(parts)-1]
		}
	}
	return append(lines, cur)
}
