package tui

import (
	"image/color"
	"strconv"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	xansi "github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	gtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// The Markdown of answers is parsed with goldmark's core parser (CommonMark
// plus ~~strikethrough~~; tables are recognised here) and rendered straight
// into styled lines. goldmark's extension package is not used: its package
// init compiles the linkify regular expressions, a few milliseconds at
// every process start.

var (
	mdParserOnce sync.Once
	mdParser     parser.Parser
)

func markdownParser() parser.Parser {
	mdParserOnce.Do(func() {
		mdParser = parser.NewParser(
			parser.WithBlockParsers(parser.DefaultBlockParsers()...),
			parser.WithInlineParsers(append(parser.DefaultInlineParsers(),
				util.Prioritized(strikethroughParser{}, 500))...),
			parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
		)
	})
	return mdParser
}

// mdStyles are the styles Markdown is drawn with.
type mdStyles struct {
	heading, h1, code, link, linkText, quote, rule, tableSep, bullet lipgloss.Style
	noColor                                                          bool
}

func newMDStyles(th *theme) mdStyles {
	s := lipgloss.NewStyle
	if th.noColor {
		return mdStyles{heading: s().Bold(true), h1: s().Bold(true), code: s(), link: s(), linkText: s(),
			quote: s(), rule: s(), tableSep: s(), bullet: s(), noColor: true}
	}
	return mdStyles{
		heading:  s().Foreground(th.info).Bold(true),
		h1:       s().Foreground(th.accent).Bold(true),
		code:     s().Foreground(th.accent).Background(th.codeBg),
		link:     s().Foreground(th.info).Underline(true),
		linkText: s().Foreground(th.info).Bold(true),
		quote:    s().Foreground(th.dim),
		rule:     s().Foreground(th.faint),
		tableSep: s().Foreground(th.faint),
		bullet:   s().Foreground(th.dim),
	}
}

// markdown renders src (a block of an answer) into lines at width.
func (r *mdRenderer) markdown(src string) []string {
	source := []byte(src)
	doc := markdownParser().Parse(gtext.NewReader(source))
	w := &mdWriter{r: r, st: r.md, src: source}
	return w.blocks(doc, r.width)
}

type mdWriter struct {
	r   *mdRenderer
	st  mdStyles
	src []byte
}

// blocks renders the block children of n at width, a blank line between
// blocks (none between the items of a tight list).
func (w *mdWriter) blocks(n ast.Node, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := w.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tightItem(c) {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

// tightItem: c follows another item of a tight list, or is the text of one.
func tightItem(c ast.Node) bool {
	switch p := c.Parent().(type) {
	case *ast.List:
		return p.IsTight
	case *ast.ListItem:
		if l, ok := p.Parent().(*ast.List); ok {
			return l.IsTight
		}
	}
	return false
}

func (w *mdWriter) block(n ast.Node, width int) []string {
	width = max(width, 4)
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		if t := w.table(n, width); t != nil {
			return t
		}
		return w.wrap(w.inline(n, lipgloss.NewStyle()), width)
	case *ast.Heading:
		st := w.st.heading
		prefix := strings.Repeat("#", n.Level) + " "
		if n.Level == 1 {
			st = w.st.h1
		}
		return w.wrap(render(st, prefix)+w.inline(n, st), width)
	case *ast.ThematicBreak:
		return []string{render(w.st.rule, strings.Repeat("─", min(width, 40)))}
	case *ast.FencedCodeBlock:
		return w.r.code(string(n.Language(w.src)), w.lines(n), true)
	case *ast.CodeBlock:
		return w.r.code("", w.lines(n), true)
	case *ast.HTMLBlock:
		src := w.lines(n)
		if n.HasClosure() {
			src += string(n.ClosureLine.Value(w.src))
		}
		return wrapPlain(strings.TrimRight(src, "\n"), width)
	case *ast.Blockquote:
		bar, empty := render(w.st.quote, "│ "), render(w.st.quote, "│")
		inner := w.blocks(n, width-2)
		for i, l := range inner {
			if l == "" {
				inner[i] = empty
			} else {
				inner[i] = bar + l
			}
		}
		return inner
	case *ast.List:
		return w.list(n, width)
	}
	// Anything else: its text.
	return wrapPlain(w.plain(n), width)
}

func (w *mdWriter) list(l *ast.List, width int) []string {
	var out []string
	num := l.Start
	for it := l.FirstChild(); it != nil; it = it.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		mw := xansi.StringWidth(marker)
		body := w.blocks(it, width-mw)
		if len(body) == 0 {
			body = []string{""}
		}
		if len(out) > 0 && !l.IsTight {
			out = append(out, "")
		}
		pad := strings.Repeat(" ", mw)
		for i, line := range body {
			if i == 0 {
				out = append(out, trimStyledRight(render(w.st.bullet, marker)+line))
			} else if line == "" {
				out = append(out, "")
			} else {
				out = append(out, pad+line)
			}
		}
	}
	return out
}

// lines is the raw text of a code or HTML block.
func (w *mdWriter) lines(n ast.Node) string {
	var b strings.Builder
	segs := n.Lines()
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		b.Write(s.Value(w.src))
	}
	return b.String()
}

func (w *mdWriter) wrap(s string, width int) []string {
	lines := wrapStyled(s, width)
	for i, l := range lines {
		lines[i] = trimStyledRight(l)
	}
	return lines
}

// codeSpace stands for a space in inline code while a line is wrapped.
const codeSpace = "\u00a0"

// wrapStyled word-wraps s, whose styled spans do not nest, so that every
// line stands alone: a span broken across lines is closed at the end of one
// and opened again at the start of the next.
func wrapStyled(s string, width int) []string {
	lines := strings.Split(xansi.Wrap(s, max(width, 1), ""), "\n")
	open := ""
	for i, l := range lines {
		if open != "" {
			l = open + l
		}
		open = ""
		for j := 0; j < len(l); j++ {
			if l[j] != '\x1b' || j+1 >= len(l) || l[j+1] != '[' {
				continue
			}
			k := strings.IndexByte(l[j:], 'm')
			if k < 0 {
				break
			}
			seq := l[j : j+k+1]
			if seq == "\x1b[m" || seq == "\x1b[0m" {
				open = ""
			} else {
				open = seq
			}
			j += k
		}
		if open != "" {
			l += "\x1b[m"
		}
		lines[i] = strings.ReplaceAll(l, codeSpace, " ")
	}
	return lines
}

// inline renders the inline children of n with st as the base style.
func (w *mdWriter) inline(n ast.Node, st lipgloss.Style) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inlineNode(&b, c, st)
	}
	return strings.TrimRight(b.String(), " \n")
}

func (w *mdWriter) inlineNode(b *strings.Builder, n ast.Node, st lipgloss.Style) {
	switch n := n.(type) {
	case *ast.Text:
		v := n.Segment.Value(w.src)
		if !n.IsRaw() {
			v = util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
		}
		b.WriteString(render(st, string(v)))
		switch {
		case n.HardLineBreak():
			b.WriteByte('\n')
		case n.SoftLineBreak():
			b.WriteByte(' ')
		}
	case *ast.String:
		b.WriteString(render(st, string(n.Value)))
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				code.Write(t.Segment.Value(w.src))
			} else if s, ok := c.(*ast.String); ok {
				code.Write(s.Value)
			}
		}
		text := strings.ReplaceAll(code.String(), "\n", " ")
		if w.st.noColor {
			text = "`" + text + "`"
		} else {
			text = " " + text + " " // padding inside the background
		}
		// Spaces inside code, and its padding, do not break a line
		// (wrapStyled puts them back).
		b.WriteString(render(inherit(w.st.code, st), strings.ReplaceAll(text, " ", codeSpace)))
	case *ast.Emphasis:
		s := st.Italic(true)
		if n.Level >= 2 {
			s = st.Bold(true)
		}
		w.children(b, n, s)
	case *east.Strikethrough:
		w.children(b, n, st.Strikethrough(true))
	case *ast.Link:
		label := w.plain(n)
		w.children(b, n, inherit(w.st.linkText, st))
		if dest := string(n.Destination); dest != "" && dest != label && "mailto:"+label != dest {
			b.WriteString(" " + render(w.st.link, dest))
		}
	case *ast.AutoLink:
		b.WriteString(render(w.st.link, string(n.Label(w.src))))
	case *ast.Image:
		alt := w.plain(n)
		if alt != "" {
			b.WriteString(render(st, "["+alt+"]") + " ")
		}
		b.WriteString(render(w.st.link, string(n.Destination)))
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			s := n.Segments.At(i)
			b.WriteString(render(st, string(s.Value(w.src))))
		}
	default:
		w.children(b, n, st)
	}
}

func (w *mdWriter) children(b *strings.Builder, n ast.Node, st lipgloss.Style) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inlineNode(b, c, st)
	}
}

// plain is the unstyled text of inline n.
func (w *mdWriter) plain(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(w.src))
		case *ast.String:
			b.Write(c.Value)
		default:
			b.WriteString(w.plain(c))
		}
	}
	return b.String()
}

// inherit adds the attributes of base that st lacks.
func inherit(st, base lipgloss.Style) lipgloss.Style { return st.Inherit(base) }

// render styles s with one SGR sequence (lipgloss would style
// underlined and struck-through text rune by rune), nothing for a plain
// style.
func render(st lipgloss.Style, s string) string {
	if s == "" {
		return ""
	}
	var p []string
	if st.GetBold() {
		p = append(p, "1")
	}
	if st.GetItalic() {
		p = append(p, "3")
	}
	if st.GetUnderline() {
		p = append(p, "4")
	}
	if st.GetStrikethrough() {
		p = append(p, "9")
	}
	if c := st.GetForeground(); !isNoColor(c) {
		p = append(p, "38;2;"+rgb(c))
	}
	if c := st.GetBackground(); !isNoColor(c) {
		p = append(p, "48;2;"+rgb(c))
	}
	if len(p) == 0 {
		return s
	}
	return "\x1b[" + strings.Join(p, ";") + "m" + s + "\x1b[m"
}

func rgb(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return strconv.Itoa(int(r>>8)) + ";" + strconv.Itoa(int(g>>8)) + ";" + strconv.Itoa(int(b>>8))
}

func isNoColor(c color.Color) bool {
	_, ok := c.(lipgloss.NoColor)
	return c == nil || ok
}

// table renders a paragraph that is a GFM table (a header row, a
// delimiter row, body rows); nil when it is not one.
func (w *mdWriter) table(n ast.Node, width int) []string {
	segs := n.Lines()
	if segs.Len() < 2 {
		return nil
	}
	var rows []string
	for i := 0; i < segs.Len(); i++ {
		s := segs.At(i)
		rows = append(rows, strings.TrimRight(string(s.Value(w.src)), "\r\n"))
	}
	if !strings.Contains(rows[0], "|") {
		return nil
	}
	head := splitRow(rows[0])
	delim := splitRow(rows[1])
	if len(delim) != len(head) {
		return nil
	}
	align := make([]byte, len(delim))
	for i, d := range delim {
		d = strings.TrimSpace(d)
		if len(strings.Trim(d, ":-")) != 0 || !strings.Contains(d, "-") {
			return nil
		}
		switch l, r := strings.HasPrefix(d, ":"), strings.HasSuffix(d, ":"); {
		case l && r:
			align[i] = 'c'
		case r:
			align[i] = 'r'
		}
	}
	ncol := len(head)
	cells := [][]string{w.cells(head, ncol, true)}
	for _, row := range rows[2:] {
		cells = append(cells, w.cells(splitRow(row), ncol, false))
	}
	// Column widths: the widest cell, shrunk (widest first) to fit.
	widths := make([]int, ncol)
	for _, row := range cells {
		for i, c := range row {
			widths[i] = max(widths[i], xansi.StringWidth(c))
		}
	}
	avail := width - 3*(ncol-1) - 2
	for total := sum(widths); total > avail && total > ncol*3; total = sum(widths) {
		wi := 0
		for i := range widths {
			if widths[i] > widths[wi] {
				wi = i
			}
		}
		if widths[wi] <= 3 {
			break
		}
		widths[wi]--
	}
	sep := render(w.st.tableSep, "│")
	var out []string
	for ri, row := range cells {
		// A row is as tall as its tallest wrapped cell.
		wrapped := make([][]string, ncol)
		h := 1
		for i, c := range row {
			wrapped[i] = wrapStyled(c, widths[i])
			h = max(h, len(wrapped[i]))
		}
		for li := 0; li < h; li++ {
			var b strings.Builder
			for i := range row {
				if i > 0 {
					b.WriteString(" " + sep + " ")
				} else {
					b.WriteString(" ")
				}
				c := ""
				if li < len(wrapped[i]) {
					c = wrapped[i][li]
				}
				b.WriteString(pad(c, widths[i], align[i]))
			}
			out = append(out, trimStyledRight(b.String()))
		}
		if ri == 0 {
			var b strings.Builder
			for i, cw := range widths {
				if i > 0 {
					b.WriteString("┼")
				}
				b.WriteString(strings.Repeat("─", cw+2))
			}
			out = append(out, render(w.st.tableSep, b.String()))
		}
	}
	return out
}

func (w *mdWriter) cells(raw []string, n int, head bool) []string {
	out := make([]string, n)
	for i := range out {
		if i >= len(raw) {
			continue
		}
		src := []byte(strings.ReplaceAll(strings.TrimSpace(raw[i]), `\|`, "|"))
		doc := markdownParser().Parse(gtext.NewReader(src))
		cw := &mdWriter{r: w.r, st: w.st, src: src}
		st := lipgloss.NewStyle()
		if head {
			st = st.Bold(true)
		}
		var b strings.Builder
		for blk := doc.FirstChild(); blk != nil; blk = blk.NextSibling() {
			b.WriteString(cw.inline(blk, st))
		}
		out[i] = b.String()
	}
	return out
}

// splitRow splits a table row at unescaped pipes outside code spans.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	var cells []string
	start, inCode := 0, false
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '`':
			inCode = !inCode
		case '|':
			if !inCode {
				cells = append(cells, row[start:i])
				start = i + 1
			}
		}
	}
	return append(cells, row[start:])
}

func pad(s string, width int, align byte) string {
	gap := width - xansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	switch align {
	case 'r':
		return strings.Repeat(" ", gap) + s
	case 'c':
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// strikethroughParser parses ~~text~~ (and ~text~), as GFM does; it is
// goldmark's own extension parser, without the extension package.
type strikethroughParser struct{}

type strikethroughDelims struct{}

func (strikethroughDelims) IsDelimiter(b byte) bool { return b == '~' }

func (strikethroughDelims) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (strikethroughDelims) OnMatch(int) ast.Node { return east.NewStrikethrough() }

func (strikethroughParser) Trigger() []byte { return []byte{'~'} }

func (strikethroughParser) Parse(_ ast.Node, block gtext.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, strikethroughDelims{})
	if node == nil || node.OriginalLength > 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (strikethroughParser) CloseBlock(ast.Node, parser.Context) {}
