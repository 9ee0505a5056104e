package match

import (
	"sort"
	"strings"
)

// lineIndex gives line-level access to a text without copying it.
type lineIndex struct {
	text   string
	starts []int // starts[i] is the offset of line i; a final "\n" opens no line
}

func newLineIndex(text string) *lineIndex {
	n := strings.Count(text, "\n") + 1
	starts := make([]int, 1, n)
	for off := 0; ; {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		if off == len(text) {
			break
		}
		starts = append(starts, off)
	}
	if text == "" {
		starts = starts[:0]
	}
	return &lineIndex{text: text, starts: starts}
}

// count is the number of lines.
func (x *lineIndex) count() int { return len(x.starts) }

// start is the offset of line i.
func (x *lineIndex) start(i int) int { return x.starts[i] }

// end is the offset just past line i's text: before its "\n" (and before a
// "\r" ahead of it).
func (x *lineIndex) end(i int) int {
	e := len(x.text)
	if i+1 < len(x.starts) {
		e = x.starts[i+1] - 1
	} else if strings.HasSuffix(x.text, "\n") {
		e--
	}
	if e > x.starts[i] && x.text[e-1] == '\r' {
		e--
	}
	return e
}

// line is line i without its line ending.
func (x *lineIndex) line(i int) string { return x.text[x.start(i):x.end(i)] }

// lineOf returns the 0-based line holding offset off.
func (x *lineIndex) lineOf(off int) int {
	return sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off }) - 1
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// isWord reports whether c can be part of an identifier or number; spaces
// next to anything else (punctuation, operators) are optional in code.
func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// splitIndent splits a line into its leading whitespace and the rest with
// trailing whitespace removed.
func splitIndent(line string) (indent, body string) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	j := len(line)
	for j > i && isSpace(line[j-1]) {
		j--
	}
	return line[:i], line[i:j]
}

// isBlank reports whether line holds only whitespace.
func isBlank(line string) bool {
	for i := 0; i < len(line); i++ {
		if !isSpace(line[i]) {
			return false
		}
	}
	return true
}

// flexEqual compares two line bodies (no leading or trailing whitespace)
// loosely about whitespace: runs of spaces and tabs match each other
// whatever their length, and a run next to punctuation may be missing on
// one side ("f(a, b)" matches "f( a,b )"). Between two word characters a
// space stays significant ("ab" never matches "a b").
func flexEqual(a, b string) bool {
	n, ok := flexPrefix(b, a, false)
	return ok && n == len(b)
}

// flexPrefix reports whether text starts with pat under flexEqual's rules,
// and how many bytes of text the match spans. With inline set, pat and the
// match stay within one line, and trailing whitespace of text is not
// consumed.
func flexPrefix(text, pat string, inline bool) (int, bool) {
	i, j := 0, 0 // i in pat, j in text
	for i < len(pat) {
		pc := pat[i]
		var tc byte
		if j < len(text) {
			tc = text[j]
		}
		ps, ts := isSpace(pc), j < len(text) && isSpace(tc)
		switch {
		case ps && ts:
			for i < len(pat) && isSpace(pat[i]) {
				i++
			}
			for j < len(text) && isSpace(text[j]) {
				j++
			}
		case ps:
			// A space in pat missing from text: only beside punctuation.
			k := i
			for k < len(pat) && isSpace(pat[k]) {
				k++
			}
			if k == len(pat) {
				i = k // trailing space of pat
				continue
			}
			if i > 0 && isWord(pat[i-1]) && isWord(pat[k]) {
				return 0, false
			}
			i = k
		case ts:
			k := j
			for k < len(text) && isSpace(text[k]) {
				k++
			}
			if i > 0 && isWord(pat[i-1]) && isWord(pc) {
				return 0, false
			}
			j = k
		default:
			if j >= len(text) || pc != tc {
				return 0, false
			}
			if inline && pc == '\n' {
				return 0, false
			}
			i++
			j++
		}
	}
	return j, true
}

// normLine is a line's body with runs of whitespace collapsed into one
// space: what fuzzy matching compares.
func normLine(line string) string {
	_, body := splitIndent(line)
	if !strings.ContainsAny(body, " \t\r\f\v") {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	space := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

// indentWidth measures an indentation in columns, a tab counting 4.
func indentWidth(indent string) int {
	w := 0
	for i := 0; i < len(indent); i++ {
		if indent[i] == '\t' {
			w += 4 - w%4
		} else {
			w++
		}
	}
	return w
}
