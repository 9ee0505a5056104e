package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds every style the UI draws with. It is rebuilt when the
// terminal's background is learnt (light or dark) and is colourless under
// NO_COLOR.
type theme struct {
	dark, noColor bool

	accent, dim, faint, text color.Color
	ok, fail, warn, info     color.Color
	codeBg                   color.Color // behind inline code

	base, muted, subtle, bold lipgloss.Style
	accentText, okText        lipgloss.Style
	failText, warnText        lipgloss.Style
	infoText                  lipgloss.Style
	thinking                  lipgloss.Style
	userBar, userText         lipgloss.Style
	diffAdd, diffDel, diffHunk, diffHead,
	code, codeGutter, key lipgloss.Style
	statusBar, statusWarn lipgloss.Style
	selected              lipgloss.Style

	// chroma style name for code: "github-dark" or "github" (see
	// internal/highlight)
	chroma string
}

// newTheme builds the styles for a dark or light background.
func newTheme(dark, noColor bool) *theme {
	t := &theme{dark: dark, noColor: noColor}
	s := lipgloss.NewStyle
	if noColor {
		t.base = s()
		t.muted = s()
		t.subtle = s()
		t.bold = s().Bold(true)
		t.accentText = s().Bold(true)
		t.okText = s()
		t.failText = s().Bold(true)
		t.warnText = s().Bold(true)
		t.infoText = s()
		t.thinking = s()
		t.userBar = s()
		t.userText = s()
		t.diffAdd, t.diffDel, t.diffHunk, t.diffHead = s(), s(), s(), s()
		t.code, t.codeGutter, t.key = s(), s(), s().Bold(true)
		t.statusBar = s()
		t.statusWarn = s().Bold(true)
		t.selected = s().Reverse(true)
		return t
	}
	ld := lipgloss.LightDark(dark)
	t.accent = ld(lipgloss.Color("#C2410C"), lipgloss.Color("#F59E5B"))
	t.text = ld(lipgloss.Color("#1F2328"), lipgloss.Color("#E6E6E6"))
	t.dim = ld(lipgloss.Color("#6E7781"), lipgloss.Color("#8B949E"))
	t.faint = ld(lipgloss.Color("#AFB8C1"), lipgloss.Color("#484F58"))
	t.ok = ld(lipgloss.Color("#1A7F37"), lipgloss.Color("#56D364"))
	t.fail = ld(lipgloss.Color("#CF222E"), lipgloss.Color("#F85149"))
	t.warn = ld(lipgloss.Color("#9A6700"), lipgloss.Color("#E3B341"))
	t.info = ld(lipgloss.Color("#0969DA"), lipgloss.Color("#58A6FF"))
	t.codeBg = ld(lipgloss.Color("#EFF1F3"), lipgloss.Color("#30363D"))

	t.base = s().Foreground(t.text)
	t.muted = s().Foreground(t.dim)
	t.subtle = s().Foreground(t.faint)
	t.bold = s().Bold(true)
	t.accentText = s().Foreground(t.accent).Bold(true)
	t.okText = s().Foreground(t.ok)
	t.failText = s().Foreground(t.fail)
	t.warnText = s().Foreground(t.warn)
	t.infoText = s().Foreground(t.info)
	t.thinking = s().Foreground(t.dim).Italic(true)
	t.userBar = s().Foreground(t.accent).Bold(true)
	t.userText = s().Foreground(t.text).Bold(true)
	t.diffAdd = s().Foreground(t.ok)
	t.diffDel = s().Foreground(t.fail)
	t.diffHunk = s().Foreground(t.info)
	t.diffHead = s().Foreground(t.dim).Bold(true)
	t.code = s()
	t.codeGutter = s().Foreground(t.faint)
	t.key = s().Foreground(t.accent).Bold(true)
	t.statusBar = s().Foreground(t.dim)
	t.statusWarn = s().Foreground(t.fail).Bold(true)
	t.selected = s().Foreground(t.accent).Bold(true)
	if dark {
		t.chroma = "github-dark"
	} else {
		t.chroma = "github"
	}
	return t
}

// border returns a rounded border style in colour c (plain under NO_COLOR).
func (t *theme) border(c color.Color) lipgloss.Style {
	st := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1)
	if !t.noColor && c != nil {
		st = st.BorderForeground(c)
	}
	return st
}
