package match

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Strategy says how old_string was found in the file. Strategies are tried
// in this order, most exact first, and the first that finds old_string
// decides.
type Strategy uint8

const (
	// Exact: old_string is in the file byte for byte.
	Exact Strategy = iota + 1
	// Whitespace: the same lines with the same indentation, but runs of
	// spaces, trailing whitespace or spaces beside punctuation differ (or,
	// for one line, the same words anywhere in a line).
	Whitespace
	// Indentation: the same lines indented differently (deeper, shallower,
	// tabs for spaces) with the same structure; new_string is re-indented
	// into the file's indentation.
	Indentation
	// Fuzzy: one passage is clearly the most similar and similar enough
	// (line-level similarity above a threshold, no close second).
	Fuzzy
)

// String names the strategy for messages.
func (s Strategy) String() string {
	switch s {
	case Exact:
		return "exact"
	case Whitespace:
		return "whitespace-flexible"
	case Indentation:
		return "indentation-relative"
	case Fuzzy:
		return "fuzzy"
	}
	return "none"
}

// Repair names a correction of the model's arguments made before they
// matched.
type Repair uint8

const (
	// NoRepair: the arguments matched as written.
	NoRepair Repair = iota
	// LineNumbers: old_string (and new_string) carried line numbers copied
	// from a numbered listing; they were removed.
	LineNumbers
	// Unescaped: old_string (and new_string) were escaped one level too
	// many ("\n" for a line break, \" for a quote); they were unescaped.
	Unescaped
)

// String describes the repair for messages.
func (r Repair) String() string {
	switch r {
	case LineNumbers:
		return "line numbers removed"
	case Unescaped:
		return `over-escaped \n and \" undone`
	}
	return ""
}

// Span is one place old_string matched, and what replaces it.
type Span struct {
	// Start and End are byte offsets into the content: [Start, End).
	Start, End int
	// Line and EndLine are the 1-based first and last lines of the span.
	Line, EndLine int
	// Replacement is the text to put in place of content[Start:End]:
	// new_string, re-indented when the strategy called for it.
	Replacement string
}

// DefaultThreshold is the similarity a fuzzy match needs by default.
const DefaultThreshold = 0.85

// DefaultMaxWork bounds the work of fuzzy matching and of the search for
// the closest passage, counted in character comparisons.
const DefaultMaxWork = 60_000_000

// MatchOptions tune Find. The zero value asks for one match with every
// strategy.
type MatchOptions struct {
	// Count is how many places old_string must match; 0 means 1.
	Count int
	// Threshold is the similarity (0..1) a fuzzy match needs; 0 means
	// DefaultThreshold. Short old_strings need more.
	Threshold float64
	// MaxWork bounds fuzzy matching; 0 means DefaultMaxWork.
	MaxWork int
	// Upto, when set, is the loosest strategy tried.
	Upto Strategy
	// NoRepair turns off the line-number and unescaping repairs.
	NoRepair bool
}

func (o MatchOptions) count() int {
	if o.Count <= 0 {
		return 1
	}
	return o.Count
}

func (o MatchOptions) upto() Strategy {
	if o.Upto == 0 {
		return Fuzzy
	}
	return o.Upto
}

// Match is where old_string was found: the spans to replace, how they were
// found, and the arguments as finally used.
type Match struct {
	Spans    []Span
	Strategy Strategy
	Repair   Repair
	// Score is the similarity of a fuzzy match (1 otherwise).
	Score float64
}

// Apply returns content with every span replaced.
func (m *Match) Apply(content string) string {
	var b strings.Builder
	n := len(content)
	for _, s := range m.Spans {
		n += len(s.Replacement) - (s.End - s.Start)
	}
	b.Grow(max(n, 0))
	last := 0
	for _, s := range m.Spans {
		b.WriteString(content[last:s.Start])
		b.WriteString(s.Replacement)
		last = s.End
	}
	b.WriteString(content[last:])
	return b.String()
}

// ErrorKind says why Find failed.
type ErrorKind uint8

const (
	// NotFound: old_string matched nowhere.
	NotFound ErrorKind = iota + 1
	// TooMany: old_string matched more places than wanted.
	TooMany
	// TooFew: old_string matched fewer places than wanted.
	TooFew
	// Ambiguous: no exact match, and several passages are about equally
	// similar.
	Ambiguous
)

// MatchError is Find's failure. Its message is written for the model: it
// says what was found and what to do next.
type MatchError struct {
	Kind ErrorKind
	// Want and Found count places: wanted and matched.
	Want, Found int
	// Strategy is the strategy that found them (TooMany, TooFew).
	Strategy Strategy
	// Lines are the first lines of the places found (at most 20).
	Lines []int
	// Closest is the most similar passage (NotFound, Ambiguous), if any.
	Closest *Passage
	// Note adds a fact (fuzzy matching gave up on a very large file).
	Note string
}

// Passage is a stretch of the file most like old_string.
type Passage struct {
	// Line is the 1-based number of the first line; Text holds the lines.
	Line int
	Text []string
	// Score is the similarity to old_string, 0..1.
	Score float64
	// DiffLine is the file line where the passage first differs from
	// old_string (0 if the difference is not on one line); FileText and
	// OldText are that line in the file and in old_string.
	DiffLine          int
	FileText, OldText string
	// Extra: old_string has a line (OldText) the file does not have before
	// DiffLine. When OldText is empty the file has a line old_string
	// leaves out.
	Extra bool
}

func (e *MatchError) Error() string {
	var b strings.Builder
	places := func() string {
		s := make([]string, len(e.Lines))
		for i, l := range e.Lines {
			s[i] = fmt.Sprint(l)
		}
		more := ""
		if e.Found > len(e.Lines) {
			more = ", …"
		}
		return strings.Join(s, ", ") + more
	}
	switch e.Kind {
	case TooMany:
		if e.Want == 1 {
			fmt.Fprintf(&b, "old_string matches %d places (lines %s): include more surrounding lines to pick one, or set expected_replacements to %d to change all of them.", e.Found, places(), e.Found)
		} else {
			fmt.Fprintf(&b, "old_string matches %d places (lines %s), more than expected_replacements (%d): set expected_replacements to %d, or include more surrounding lines.", e.Found, places(), e.Want, e.Found)
		}
	case TooFew:
		fmt.Fprintf(&b, "old_string matches %d place%s (line%s %s), not the %d that expected_replacements says: set expected_replacements to %d, or correct old_string.", e.Found, Plural(e.Found), Plural(e.Found), places(), e.Want, e.Found)
	case Ambiguous:
		fmt.Fprintf(&b, "old_string is not in the file exactly, and %d passages are about equally similar to it (lines %s): copy old_string exactly from the file, with enough surrounding lines to pick one.", e.Found, places())
	default:
		if e.Closest == nil {
			b.WriteString("old_string was not found, and nothing in the file is similar to it. Read the file again and copy old_string exactly from it.")
		} else {
			p := e.Closest
			fmt.Fprintf(&b, "old_string was not found. The most similar passage (lines %d-%d, %d%% similar) is:\n", p.Line, p.Line+len(p.Text)-1, int(p.Score*100))
			writeNumbered(&b, p.Line, p.Text)
			switch {
			case p.DiffLine == 0:
			case p.Extra:
				fmt.Fprintf(&b, "old_string has a line the file does not have before line %d:\n%s\n", p.DiffLine, p.OldText)
			case p.OldText == "":
				fmt.Fprintf(&b, "old_string leaves out line %d:\n%s\n", p.DiffLine, p.FileText)
			default:
				fmt.Fprintf(&b, "It first differs on line %d. The file has:\n%s\nold_string has:\n%s\n", p.DiffLine, p.FileText, p.OldText)
			}
			b.WriteString("Copy old_string exactly from the file (without line numbers), then call edit again.")
		}
	}
	if e.Note != "" {
		b.WriteString(" (" + e.Note + ")")
	}
	return b.String()
}

func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeNumbered writes lines prefixed with their numbers, eliding the middle
// of a long passage.
func writeNumbered(b *strings.Builder, first int, lines []string) {
	const head, tail = 12, 6
	for i, l := range lines {
		if len(lines) > head+tail+1 && i == head {
			fmt.Fprintf(b, "… (%d lines)\n", len(lines)-head-tail)
		}
		if len(lines) > head+tail+1 && i >= head && i < len(lines)-tail {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		fmt.Fprintf(b, "%d\t%s\n", first+i, l)
	}
}

// ErrEmptyOld is returned for an empty old_string, which matches
// everywhere.
var ErrEmptyOld = errors.New("old_string is empty: put the exact text to replace in it")

// maxSpans bounds the spans kept from one strategy (all are counted).
const maxSpans = 1000

// Find locates old in content and works out each place's replacement,
// trying the strategies in order (Exact, Whitespace, Indentation, Fuzzy)
// and, where they all miss, the repairs (line numbers, escaping). Content,
// old and new use "\n" line endings. It is pure: it reads nothing but its
// arguments, and its work is bounded by opts.MaxWork.
//
// The first strategy that finds old decides: if it finds more places than
// opts.Count, Find fails with TooMany; with fewer, looser strategies may
// still find exactly Count. Fuzzy matching is used only for one place and
// only when one passage stands out. A miss (NotFound) carries the closest
// passage.
func Find(content, old, new string, opts MatchOptions) (*Match, error) {
	if old == "" {
		return nil, ErrEmptyOld
	}
	want := opts.count()
	type variant struct {
		old, new string
		repair   Repair
	}
	variants := []variant{{old, new, NoRepair}}
	if !opts.NoRepair {
		// A repair must leave something to look for.
		if o, n, ok := stripLineNumbers(old, new); ok && strings.TrimSpace(o) != "" {
			variants = append(variants, variant{o, n, LineNumbers})
		}
		if o, n, ok := unescapeArgs(old, new); ok && strings.TrimSpace(o) != "" {
			variants = append(variants, variant{o, n, Unescaped})
		}
	}
	var x *lineIndex
	index := func() *lineIndex {
		if x == nil {
			x = newLineIndex(content)
		}
		return x
	}
	var few *MatchError
	for st := Exact; st <= min(opts.upto(), Indentation); st++ {
		for _, v := range variants {
			var spans []Span
			var found int
			switch st {
			case Exact:
				spans, found = exactScan(content, v.old, v.new)
			case Whitespace, Indentation:
				q, ok := newLineQuery(v.old, v.new)
				if !ok {
					continue
				}
				spans, found = q.scan(index(), st)
				if found == 0 && st == Whitespace {
					spans, found = inlineScan(content, index(), v.old, v.new)
				}
			}
			switch {
			case found == 0:
				continue
			case found == want:
				return &Match{Spans: spans, Strategy: st, Repair: v.repair, Score: 1}, nil
			case found > want:
				return nil, &MatchError{Kind: TooMany, Want: want, Found: found, Strategy: st, Lines: firstLines(spans)}
			case few == nil:
				few = &MatchError{Kind: TooFew, Want: want, Found: found, Strategy: st, Lines: firstLines(spans)}
			}
		}
	}
	if few != nil {
		return nil, few
	}
	budget := opts.MaxWork
	if budget <= 0 {
		budget = DefaultMaxWork
	}
	var closest *fuzzyHit
	var closestQ *lineQuery
	note := ""
	for _, v := range variants {
		q, ok := newLineQuery(v.old, v.new)
		if !ok {
			continue
		}
		fr := fuzzySearch(index(), q.lines, &budget)
		if fr.exhausted {
			note = "the file is too large to search all of it for similar passages"
		}
		if fr.best == nil {
			continue
		}
		if closest == nil || fr.best.score > closest.score {
			closest, closestQ = fr.best, q
		}
		if want != 1 || opts.upto() < Fuzzy || fr.exhausted {
			continue
		}
		th := threshold(opts.Threshold, q.lines)
		if fr.best.score < th || !fr.best.anchored {
			continue
		}
		if rivals := fr.rivals(th); fr.crowded || len(rivals) > 0 {
			e := &MatchError{Kind: Ambiguous, Want: 1, Found: 1 + len(rivals), Lines: []int{fr.best.first + 1}}
			for _, h := range rivals {
				if len(e.Lines) < 20 {
					e.Lines = append(e.Lines, h.first+1)
				}
			}
			sort.Ints(e.Lines)
			if fr.crowded {
				e.Found = max(e.Found, 3)
				e.Note = "many passages look alike"
			}
			return nil, e
		}
		sp, ok := q.fuzzySpan(index(), fr.best)
		if !ok {
			note = "the most similar passage is indented with a different structure than old_string"
			continue
		}
		return &Match{Spans: []Span{sp}, Strategy: Fuzzy, Repair: v.repair, Score: fr.best.score}, nil
	}
	e := &MatchError{Kind: NotFound, Want: want, Note: note}
	if closest != nil && closest.score >= 0.4 {
		e.Closest = closestQ.passage(index(), closest)
	}
	return nil, e
}

// threshold is the similarity a fuzzy match of lines needs: the option (or
// the default), raised for short old_strings, where one changed word is a
// large part of the whole.
func threshold(opt float64, lines []string) float64 {
	th := opt
	if th <= 0 {
		th = DefaultThreshold
	}
	n := 0
	for _, l := range lines {
		n += len(normLine(l))
	}
	if n < 40 {
		th = max(th, 0.92)
	}
	return min(th, 1)
}

func firstLines(spans []Span) []int {
	var out []int
	for _, s := range spans {
		if len(out) == 20 {
			break
		}
		out = append(out, s.Line)
	}
	return out
}

// exactScan finds old byte for byte, non-overlapping.
func exactScan(content, old, new string) ([]Span, int) {
	if old == "" {
		return nil, 0
	}
	var spans []Span
	found := 0
	line, at := 1, 0
	for off := 0; off <= len(content); {
		k := strings.Index(content[off:], old)
		if k < 0 {
			break
		}
		p := off + k
		found++
		if len(spans) < maxSpans {
			line += strings.Count(content[at:p], "\n")
			at = p
			spans = append(spans, Span{Start: p, End: p + len(old), Line: line,
				EndLine: line + strings.Count(strings.TrimSuffix(old, "\n"), "\n"), Replacement: new})
		}
		off = p + len(old)
	}
	return spans, found
}

// lineQuery is old_string and new_string as lines, for the line-based
// strategies: blank lines at either end of old_string are dropped (and as
// many from new_string), and so is a final newline, so that they match
// whole lines of the file whatever surrounds them.
type lineQuery struct {
	lines   []string
	indents []string
	bodies  []string
	// rep is new_string's lines; nil when new_string is empty (the lines
	// are deleted, line endings included).
	rep []string
}

func newLineQuery(old, new string) (*lineQuery, bool) {
	oldNL := strings.HasSuffix(old, "\n")
	old = strings.TrimSuffix(old, "\n")
	if oldNL {
		new = strings.TrimSuffix(new, "\n")
	}
	ol := strings.Split(old, "\n")
	lead := 0
	for lead < len(ol) && isBlank(ol[lead]) {
		lead++
	}
	if lead == len(ol) {
		return nil, false
	}
	trail := 0
	for isBlank(ol[len(ol)-1-trail]) {
		trail++
	}
	ol = ol[lead : len(ol)-trail]
	q := &lineQuery{lines: ol}
	for _, l := range ol {
		ind, body := splitIndent(l)
		q.indents = append(q.indents, ind)
		q.bodies = append(q.bodies, body)
	}
	if new != "" {
		nl := strings.Split(new, "\n")
		k := 0
		for k < lead && k < len(nl)-1 && isBlank(nl[k]) {
			k++
		}
		nl = nl[k:]
		k = 0
		for k < trail && k < len(nl)-1 && isBlank(nl[len(nl)-1-k]) {
			k++
		}
		q.rep = nl[:len(nl)-k]
	}
	return q, true
}

// scan finds the query's lines in x with the Whitespace or Indentation
// rules.
func (q *lineQuery) scan(x *lineIndex, st Strategy) ([]Span, int) {
	n := len(q.lines)
	var spans []Span
	found := 0
	first := q.bodies[0][0]
	file := make([]string, n)
	for i := 0; i+n <= x.count(); i++ {
		// Quick reject on the first character of the first line.
		l := x.line(i)
		k := 0
		for k < len(l) && (l[k] == ' ' || l[k] == '\t') {
			k++
		}
		if k == len(l) || l[k] != first {
			continue
		}
		ok := true
		for j := 0; j < n && ok; j++ {
			f := x.line(i + j)
			file[j] = f
			if q.bodies[j] == "" || isBlank(f) {
				ok = q.bodies[j] == "" && isBlank(f)
				continue
			}
			ind, body := splitIndent(f)
			if st == Whitespace && ind != q.indents[j] {
				ok = false
				continue
			}
			ok = flexEqual(q.bodies[j], body)
		}
		if !ok {
			continue
		}
		var m *indentMap
		if st == Indentation {
			if m, ok = newIndentMap(q.lines, file, ""); !ok {
				continue
			}
			if !m.identity {
				m.fileUnit = detectUnit(x, i)
			}
		}
		found++
		if len(spans) < maxSpans {
			spans = append(spans, q.span(x, i, i+n-1, m))
		}
		i += n - 1
	}
	return spans, found
}

// span makes the span replacing file lines first..last (0-based,
// inclusive) with the query's new lines, re-indented by m when set.
func (q *lineQuery) span(x *lineIndex, first, last int, m *indentMap) Span {
	sp := Span{Start: x.start(first), End: x.end(last), Line: first + 1, EndLine: last + 1}
	if q.rep == nil {
		// Delete the lines with their line endings.
		t := x.text
		switch {
		case strings.HasPrefix(t[sp.End:], "\r\n"):
			sp.End += 2
		case strings.HasPrefix(t[sp.End:], "\n"):
			sp.End++
		case sp.Start > 0:
			sp.Start--
			if sp.Start > 0 && t[sp.Start-1] == '\r' {
				sp.Start--
			}
		}
		return sp
	}
	rep := q.rep
	if m != nil {
		rep = m.apply(rep)
	}
	sp.Replacement = strings.Join(rep, "\n")
	return sp
}

// inlineScan finds a one-line old_string inside lines, loosely about
// whitespace: the Whitespace strategy for a model that copied part of a
// line. The replacement goes in at the same place; lines new_string adds
// after its first are indented like the file's line.
func inlineScan(content string, x *lineIndex, old, new string) ([]Span, int) {
	pat := strings.TrimSpace(old)
	if pat == "" || strings.Contains(pat, "\n") {
		return nil, 0
	}
	tok := pat[:1]
	if isWord(pat[0]) {
		k := 0
		for k < len(pat) && isWord(pat[k]) {
			k++
		}
		tok = pat[:k]
	}
	lead := old[:len(old)-len(strings.TrimLeft(old, " \t\n"))]
	lead = lead[strings.LastIndexByte(lead, '\n')+1:]
	rep := strings.TrimRight(strings.TrimLeft(new, " \t\n"), " \t\r\n")
	repLines := strings.Split(rep, "\n")
	var spans []Span
	found := 0
	for off := 0; off < len(content); {
		k := strings.Index(content[off:], tok)
		if k < 0 {
			break
		}
		p := off + k
		n, ok := flexPrefix(content[p:], pat, true)
		if !ok {
			off = p + 1
			continue
		}
		found++
		if len(spans) < maxSpans {
			li := x.lineOf(p)
			sp := Span{Start: p, End: p + n, Line: li + 1, EndLine: li + 1, Replacement: rep}
			if len(repLines) > 1 {
				fi, _ := splitIndent(x.line(li))
				if m, ok := newIndentMap([]string{lead + "x"}, []string{fi + "x"}, detectUnit(x, li)); ok && !m.identity {
					sp.Replacement = repLines[0] + "\n" + strings.Join(m.apply(repLines[1:]), "\n")
				}
			}
			spans = append(spans, sp)
		}
		off = p + max(n, 1)
	}
	return spans, found
}

// KeepCRLF gives replacements in a file of mixed line endings the ending
// of the line they land on.
func KeepCRLF(content string, m *Match) {
	for i, s := range m.Spans {
		e := lineEnd(content, s.End)
		if e >= 2 && content[e-2] == '\r' || strings.Contains(content[s.Start:s.End], "\r\n") {
			m.Spans[i].Replacement = strings.ReplaceAll(s.Replacement, "\n", "\r\n")
		}
	}
}

// Resembles reports whether two texts are alike apart from whitespace:
// at most 40% of their characters differ.
func Resembles(a, b string) bool {
	a, b = strings.Join(strings.Fields(a), " "), strings.Join(strings.Fields(b), " ")
	if len(a) > 4000 || len(b) > 4000 {
		return false
	}
	limit := max(len(a), len(b)) * 2 / 5
	return levenshtein(a, b, limit) <= limit
}

// FixWindow is the part of content to show a fixer model for an old_string
// that matched nowhere: ten lines around the closest passage, or the whole
// of a small file (ok false: too large to show without a closest passage).
func FixWindow(content string, closest *Passage) (start, end int, ok bool) {
	x := newLineIndex(content)
	var lo, hi int // 0-based lines, inclusive
	switch {
	case closest != nil:
		lo = max(0, closest.Line-1-10)
		hi = min(x.count()-1, closest.Line-1+len(closest.Text)-1+10)
	case len(content) <= 12<<10 && x.count() > 0:
		lo, hi = 0, x.count()-1
	default:
		return 0, 0, false
	}
	start, end = x.start(lo), len(content)
	if hi+1 < x.count() {
		end = x.start(hi + 1)
	}
	return start, end, true
}
