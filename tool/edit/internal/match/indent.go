package match

import (
	"sort"
	"strings"
)

// indentMap relates the indentation of the model's old_string lines to the
// indentation of the file lines they matched, so that new_string, written
// in the model's frame, can be put into the file's: the same relative
// structure, the file's characters (tabs or spaces) and depth.
type indentMap struct {
	widths   []int          // the model's indent widths, ascending
	byWidth  map[int]string // model's width → file's indent
	unit     int            // the model's columns per level
	fileUnit string         // the file's indent for one level
	identity bool           // every mapped indent is unchanged
	// first, when set, is the file indent to give new_string's first line:
	// the model wrote its first line without indentation (it copied from
	// the first word), and the rest of its lines decided the mapping.
	first    string
	useFirst bool
}

// newIndentMap builds the map from aligned line pairs. It fails when the
// structure differs: two of the model's levels landing on one file level,
// or their order reversed (in Python that is a different program).
func newIndentMap(search, file []string, fileUnit string) (*indentMap, bool) {
	if m, ok := buildIndentMap(search, file, 0, fileUnit); ok {
		return m, true
	}
	// The model's first line may lack the indentation its other lines have:
	// it started copying at the first word.
	if len(search) > 1 && !isBlank(search[0]) {
		if ind, _ := splitIndent(search[0]); ind == "" {
			if m, ok := buildIndentMap(search, file, 1, fileUnit); ok {
				m.first, _ = splitIndent(file[0])
				m.useFirst = true
				m.identity = false
				return m, true
			}
		}
	}
	return nil, false
}

func buildIndentMap(search, file []string, from int, fileUnit string) (*indentMap, bool) {
	m := &indentMap{byWidth: map[int]string{}, identity: true, fileUnit: fileUnit}
	fileW := map[int]int{}
	for k := from; k < len(search) && k < len(file); k++ {
		if isBlank(search[k]) || isBlank(file[k]) {
			continue
		}
		si, _ := splitIndent(search[k])
		fi, _ := splitIndent(file[k])
		sw, fw := indentWidth(si), indentWidth(fi)
		if prev, ok := fileW[sw]; ok {
			if prev != fw {
				return nil, false
			}
			continue
		}
		fileW[sw] = fw
		m.byWidth[sw] = fi
		m.widths = append(m.widths, sw)
		if si != fi {
			m.identity = false
		}
	}
	if len(m.widths) == 0 {
		return nil, false
	}
	sort.Ints(m.widths)
	for k := 1; k < len(m.widths); k++ {
		if fileW[m.widths[k]] <= fileW[m.widths[k-1]] {
			return nil, false
		}
	}
	g := 0
	for _, w := range m.widths[1:] {
		g = gcd(g, w-m.widths[0])
	}
	m.unit = g
	return m, true
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// apply re-indents replacement lines from the model's frame into the
// file's.
func (m *indentMap) apply(lines []string) []string {
	if m.identity {
		return lines
	}
	unit := m.unit
	if unit == 0 {
		unit = m.guessUnit(lines)
	}
	out := make([]string, len(lines))
	for k, l := range lines {
		if isBlank(l) {
			out[k] = l
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		rest := l[len(ind):]
		if k == 0 && m.useFirst && ind == "" {
			out[k] = m.first + rest
			continue
		}
		out[k] = m.indentFor(indentWidth(ind), unit) + rest
	}
	return out
}

// guessUnit finds the model's indent step when old_string had only one
// level: from the levels new_string adds.
func (m *indentMap) guessUnit(lines []string) int {
	g := 0
	base := m.widths[0]
	for _, l := range lines {
		if isBlank(l) {
			continue
		}
		ind, _ := splitIndent(l)
		if d := indentWidth(ind) - base; d != 0 {
			if d < 0 {
				d = -d
			}
			g = gcd(g, d)
		}
	}
	if g < 2 {
		return 4
	}
	return g
}

// indentFor returns the file indentation for a line the model indented w
// columns.
func (m *indentMap) indentFor(w, unit int) string {
	if f, ok := m.byWidth[w]; ok {
		return f
	}
	// The nearest mapped level at or below w is the base.
	k := sort.SearchInts(m.widths, w+1) - 1
	fu := m.fileUnit
	if fu == "" {
		fu = strings.Repeat(" ", unit)
	}
	if k >= 0 {
		base := m.widths[k]
		d := w - base
		return m.byWidth[base] + strings.Repeat(fu, d/unit) + strings.Repeat(" ", d%unit)
	}
	// Shallower than every line of old_string.
	base := m.widths[0]
	levels := (base - w + unit - 1) / unit
	fw := indentWidth(m.byWidth[base]) - levels*indentWidth(fu)
	if fw <= 0 {
		return ""
	}
	if fu == "\t" {
		return strings.Repeat("\t", fw/4) + strings.Repeat(" ", fw%4)
	}
	return strings.Repeat(" ", fw)
}

// detectUnit finds the indentation step the file uses near line at: a tab,
// or the most common increase in leading spaces between one line and the
// next. It returns "" when the lines say nothing.
func detectUnit(x *lineIndex, at int) string {
	lo, hi := max(0, at-200), min(x.count(), at+200)
	tabs, spaces := 0, 0
	steps := map[int]int{}
	prev := -1
	for i := lo; i < hi; i++ {
		l := x.line(i)
		if isBlank(l) {
			continue
		}
		ind, _ := splitIndent(l)
		switch {
		case strings.HasPrefix(ind, "\t"):
			tabs++
		case ind != "":
			spaces++
		}
		w := len(ind)
		if !strings.Contains(ind, "\t") && prev >= 0 && w > prev {
			steps[w-prev]++
		}
		if !strings.Contains(ind, "\t") {
			prev = w
		} else {
			prev = -1
		}
	}
	if tabs == 0 && spaces == 0 {
		return ""
	}
	if tabs >= spaces {
		return "\t"
	}
	best, bestN := 4, 0
	for step, n := range steps {
		if step <= 8 && (n > bestN || n == bestN && step < best) {
			best, bestN = step, n
		}
	}
	return strings.Repeat(" ", best)
}
