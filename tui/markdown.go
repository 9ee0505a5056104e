package tui

import (
	"fmt"
	"strings"

	"github.com/alecthomas/chroma/v2"
	xansi "github.com/charmbracelet/x/ansi"

	syntax "github.com/hearth-agent/hearth/tui/internal/highlight"
)

// codeChunk is how many lines of an open code block are highlighted
// together: a long block streams as chunks rendered once each.
const codeChunk = 24

// mdRenderer renders Markdown blocks at one width with one theme: prose
// with goldmark (mdrender.go), fenced code highlighted with chroma
// directly, so that a long code block can be rendered in chunks as it
// streams.
type mdRenderer struct {
	width int
	th    *theme
	md    mdStyles
	style *chroma.Style
	// gen changes whenever the output of the renderer would (width,
	// theme): caches keyed on it are dropped.
	gen int
}

var rendererGen int

func newMDRenderer(width int, th *theme) *mdRenderer {
	rendererGen++
	r := &mdRenderer{width: max(width, 10), th: th, md: newMDStyles(th), gen: rendererGen}
	if !th.noColor {
		r.style = syntax.Style(th.chroma)
	}
	return r
}

// text renders a Markdown block (no fenced code) into lines without
// trailing padding or surrounding blank lines.
func (r *mdRenderer) text(src string) []string {
	return trimBlankLines(r.markdown(src))
}

// code highlights lines of code in language lang. first adds the label
// line above the block.
func (r *mdRenderer) code(lang string, src string, first bool) []string {
	var out []string
	gutter := r.th.codeGutter.Render("│ ")
	if first {
		label := lang
		if label == "" {
			label = "code"
		}
		out = append(out, r.th.codeGutter.Render("╭ ")+r.th.muted.Render(label))
	}
	src = strings.ReplaceAll(src, "\t", "    ")
	src = strings.TrimSuffix(src, "\n")
	var hl []string
	if r.style != nil {
		hl = highlight(lang, src, r.style)
	} else {
		hl = strings.Split(src, "\n")
	}
	w := max(r.width-2, 8)
	for _, l := range hl {
		if xansi.StringWidth(l) > w {
			for _, part := range strings.Split(xansi.Hardwrap(l, w, true), "\n") {
				out = append(out, gutter+part)
			}
			continue
		}
		out = append(out, gutter+l)
	}
	return out
}

// highlight tokenises src and returns its lines with ANSI colours.
func highlight(lang, src string, style *chroma.Style) []string {
	lx := chroma.Coalesce(syntax.Lexer(lang))
	it, err := lx.Tokenise(nil, src)
	if err != nil {
		return strings.Split(src, "\n")
	}
	var b strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		e := style.Get(tok.Type)
		sgr := ""
		if e.Colour.IsSet() {
			sgr = fmt.Sprintf("38;2;%d;%d;%d", e.Colour.Red(), e.Colour.Green(), e.Colour.Blue())
		}
		if e.Bold == chroma.Yes {
			sgr += ";1"
		}
		if e.Italic == chroma.Yes {
			sgr += ";3"
		}
		sgr = strings.TrimPrefix(sgr, ";")
		parts := strings.Split(tok.Value, "\n")
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('\n')
			}
			if p == "" {
				continue
			}
			if sgr == "" {
				b.WriteString(p)
				continue
			}
			b.WriteString("\x1b[" + sgr + "m" + p + "\x1b[m")
		}
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// trimStyledRight removes trailing spaces, including runs of spaces wrapped
// in SGR sequences.
func trimStyledRight(s string) string {
	for {
		s = strings.TrimRight(s, " ")
		var body string
		switch {
		case strings.HasSuffix(s, "\x1b[m"):
			body = s[:len(s)-3]
		case strings.HasSuffix(s, "\x1b[0m"):
			body = s[:len(s)-4]
		default:
			return s
		}
		i := strings.LastIndex(body, "\x1b[")
		if i < 0 {
			return s
		}
		m := strings.IndexByte(body[i:], 'm')
		if m < 0 || strings.Trim(body[i+m+1:], " \u00a0") != "" {
			return s
		}
		s = body[:i]
	}
}

func trimBlankLines(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(xansi.Strip(lines[0])) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(xansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// wrapPlain word-wraps plain text.
func wrapPlain(s string, width int) []string {
	return strings.Split(xansi.Wrap(s, max(width, 1), ""), "\n")
}

// blockKind says how a Markdown block is rendered.
type blockKind uint8

const (
	blockText blockKind = iota
	blockCode
)

// mdBlock is a completed piece of a streamed answer.
type mdBlock struct {
	kind blockKind
	src  string
	lang string
	// gap: a blank line separates it from the block before.
	gap bool
	// first marks the first chunk of a code block.
	first bool
}

// mdStream is a Markdown answer that grows as it streams. Text is split into
// blocks at boundaries that cannot change meaning later (blank lines
// outside code, fences, headings, top-level list items, chunks of long code
// blocks); completed blocks are rendered once, and only the open tail is
// rendered again on each update, so a long answer costs the same per update
// as a short one.
type mdStream struct {
	src  strings.Builder
	scan int // offset of the start of the first incomplete line

	blocks []mdBlock

	// the open text block
	openStart  int
	openIsList bool
	pendingGap bool

	// an open fence
	inFence   bool
	fence     string
	lang      string
	codeStart int
	codeFirst bool

	finished bool

	// render cache
	gen       int
	rendered  int
	lines     []string
	tail      []string
	tailDirty bool
}

// Append adds streamed text.
func (s *mdStream) Append(text string) {
	if text == "" {
		return
	}
	s.src.WriteString(text)
	all := s.src.String()
	for {
		nl := strings.IndexByte(all[s.scan:], '\n')
		if nl < 0 {
			break
		}
		start, next := s.scan, s.scan+nl+1
		s.line(strings.TrimSuffix(all[start:next-1], "\r"), start, next)
		s.scan = next
	}
	s.tailDirty = true
}

// Text returns the raw Markdown so far.
func (s *mdStream) Text() string { return s.src.String() }

// Finish closes the stream: the tail becomes completed blocks.
func (s *mdStream) Finish() {
	if s.finished {
		return
	}
	all := s.src.String()
	if s.scan < len(all) {
		// The last line has no newline: handle it as complete.
		s.line(all[s.scan:], s.scan, len(all))
		s.scan = len(all)
	}
	if s.inFence {
		s.emitCode(all[s.codeStart:])
		s.inFence = false
	} else {
		s.flushText(len(all))
	}
	s.finished = true
	s.tailDirty = true
}

func (s *mdStream) line(line string, start, next int) {
	all := s.src.String()
	if s.inFence {
		if isFenceClose(line, s.fence) {
			s.emitCode(all[s.codeStart:start])
			s.inFence = false
			s.openStart, s.pendingGap = next, true
			return
		}
		if strings.Count(all[s.codeStart:next], "\n") >= codeChunk {
			s.emitCode(all[s.codeStart:next])
			s.codeStart = next
		}
		return
	}
	trimmed := strings.TrimSpace(line)
	switch {
	case trimmed == "":
		s.flushText(start)
		s.openStart = next
		s.pendingGap = true
		return
	case fenceOpen(line) != "":
		s.flushText(start)
		s.inFence, s.fence = true, fenceOpen(line)
		s.lang = strings.TrimSpace(strings.TrimLeft(trimmed, s.fence[:1]))
		if f := strings.Fields(s.lang); len(f) > 0 {
			s.lang = f[0]
		}
		s.codeStart, s.codeFirst = next, true
		return
	case isHeading(line):
		s.flushText(start)
		s.blocks = append(s.blocks, mdBlock{kind: blockText, src: line, gap: true})
		s.openStart, s.pendingGap = next, true
		return
	}
	item := isListItem(line)
	if item && s.openIsList && s.openStart < start {
		s.flushText(start)
	}
	if s.openStart == start {
		s.openIsList = item
	}
}

// flushText completes the open text block at end.
func (s *mdStream) flushText(end int) {
	all := s.src.String()
	if s.openStart < end {
		if src := all[s.openStart:end]; strings.TrimSpace(src) != "" {
			s.blocks = append(s.blocks, mdBlock{kind: blockText, src: src, gap: s.pendingGap})
			s.pendingGap = false
		}
	}
	s.openStart = end
	s.openIsList = false
}

func (s *mdStream) emitCode(src string) {
	if src == "" && !s.codeFirst {
		return
	}
	s.blocks = append(s.blocks, mdBlock{kind: blockCode, src: src, lang: s.lang, gap: s.codeFirst, first: s.codeFirst})
	s.codeFirst = false
}

// Lines renders the answer: completed blocks once, the tail each time it
// changed. done only grows while the renderer stays the same.
func (s *mdStream) Lines(r *mdRenderer) (done, tail []string) {
	if s.gen != r.gen {
		s.gen, s.rendered, s.lines, s.tailDirty = r.gen, 0, nil, true
	}
	for ; s.rendered < len(s.blocks); s.rendered++ {
		s.lines = appendBlock(s.lines, r, s.blocks[s.rendered])
	}
	if s.tailDirty {
		s.tail = s.renderTail(r)
		if len(s.lines) == 0 && len(s.tail) > 0 && s.tail[0] == "" {
			s.tail = s.tail[1:]
		}
		s.tailDirty = false
	}
	return s.lines, s.tail
}

func appendBlock(lines []string, r *mdRenderer, b mdBlock) []string {
	var out []string
	if b.kind == blockCode {
		out = r.code(b.lang, b.src, b.first)
	} else {
		out = r.text(b.src)
	}
	if len(out) == 0 {
		return lines
	}
	if b.gap && len(lines) > 0 {
		lines = append(lines, "")
	}
	return append(lines, out...)
}

// renderTail renders the open block; it starts with a blank line when a
// gap separates it from the completed blocks.
func (s *mdStream) renderTail(r *mdRenderer) []string {
	if s.finished {
		return nil
	}
	all := s.src.String()
	var b mdBlock
	if s.inFence {
		b = mdBlock{kind: blockCode, src: all[s.codeStart:], lang: s.lang, gap: s.codeFirst, first: s.codeFirst}
	} else {
		src := all[s.openStart:]
		// A fence being typed would show as text for a moment.
		if last := src[strings.LastIndexByte(src, '\n')+1:]; looksLikeFenceStart(last) {
			src = src[:len(src)-len(last)]
		}
		if strings.TrimSpace(src) == "" {
			return nil
		}
		b = mdBlock{kind: blockText, src: src, gap: s.pendingGap}
	}
	out := appendBlock(nil, r, b)
	if b.gap && len(out) > 0 {
		out = append([]string{""}, out...)
	}
	return out
}

func fenceOpen(line string) string {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(l) && l[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && strings.ContainsRune(l[n:], '`') {
				return ""
			}
			return l[:n]
		}
	}
	return ""
}

func isFenceClose(line, fence string) bool {
	l := strings.TrimSpace(line)
	if len(l) < len(fence) || l[0] != fence[0] {
		return false
	}
	return strings.Trim(l, fence[:1]) == ""
}

func looksLikeFenceStart(s string) bool {
	l := strings.TrimLeft(s, " ")
	return l != "" && (strings.HasPrefix("```", l) || strings.HasPrefix("~~~", l) || fenceOpen(l) != "")
}

func isHeading(line string) bool {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (len(line) == n || line[n] == ' ')
}

// isListItem reports whether a line starts a top-level list item.
func isListItem(line string) bool {
	if len(line) < 2 {
		return false
	}
	switch line[0] {
	case '-', '*', '+':
		return line[1] == ' '
	}
	n := 0
	for n < len(line) && n < 9 && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	return n > 0 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && line[n+1] == ' '
}
