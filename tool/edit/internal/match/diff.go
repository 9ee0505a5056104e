package match

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// contextLines is how many unchanged lines a diff shows around a change.
const contextLines = 3

// DiffStat counts the lines a diff adds and removes.
type DiffStat struct{ Added, Removed int }

// Diff returns a unified diff (3 lines of context) of replacing the spans
// in before, with name as both file labels. Only the lines around the
// spans are diffed, so a small edit of a large file costs little; each
// changed region is diffed line by line (Myers), so a block that changed
// one line shows one line changed.
func Diff(name, before string, spans []Span) (string, DiffStat) {
	var hunks []*udiff.Hunk
	var st DiffStat
	line, at := 0, 0 // 0-based line number of offset at
	delta := 0       // lines added minus removed before the current cluster
	for i := 0; i < len(spans); {
		// A cluster: spans whose regions (whole lines plus context) touch.
		start := lineStart(before, spans[i].Start)
		end := lineEnd(before, spans[i].End)
		j := i + 1
		for j < len(spans) {
			if ns := lineStart(before, spans[j].Start); ns > end && CountLines(before[end:ns]) > 2*contextLines {
				break
			}
			end = max(end, lineEnd(before, spans[j].End))
			j++
		}
		ws := start
		for k := 0; k < contextLines && ws > 0; k++ {
			ws = lineStart(before, ws-1)
		}
		we := end
		for k := 0; k < contextLines && we < len(before); k++ {
			if nl := strings.IndexByte(before[we:], '\n'); nl >= 0 {
				we += nl + 1
			} else {
				we = len(before)
			}
		}
		line += strings.Count(before[at:ws], "\n")
		at = ws
		window := before[ws:we]
		var edits []udiff.Edit
		added := 0
		for k := i; k < j; {
			s := spans[k]
			rs, re := lineStart(before, s.Start), lineEnd(before, s.End)
			// Spans sharing lines are diffed together.
			m := k + 1
			for m < j && lineStart(before, spans[m].Start) < re {
				re = max(re, lineEnd(before, spans[m].End))
				m++
			}
			oldRegion := before[rs:re]
			var nb strings.Builder
			last := rs
			for _, sp := range spans[k:m] {
				nb.WriteString(before[last:sp.Start])
				nb.WriteString(sp.Replacement)
				last = sp.End
			}
			nb.WriteString(before[last:re])
			newRegion := nb.String()
			added += CountLines(newRegion) - CountLines(oldRegion)
			for _, e := range udiff.Lines(oldRegion, newRegion) {
				e.Start += rs - ws
				e.End += rs - ws
				edits = append(edits, e)
			}
			k = m
		}
		u, err := udiff.ToUnifiedDiff("", "", window, edits, contextLines)
		if err == nil {
			for _, h := range u.Hunks {
				h.FromLine += line
				h.ToLine += line + delta
				for _, l := range h.Lines {
					switch l.Kind {
					case udiff.Insert:
						st.Added++
					case udiff.Delete:
						st.Removed++
					}
				}
				hunks = append(hunks, h)
			}
		}
		delta += added
		i = j
	}
	if len(hunks) == 0 {
		return "", st
	}
	return udiff.UnifiedDiff{From: name, To: name, Hunks: hunks}.String(), st
}

// NewFileDiff is the diff creating a file.
func NewFileDiff(name, content string) (string, DiffStat) {
	if content == "" {
		return "", DiffStat{}
	}
	u, _ := udiff.ToUnifiedDiff("/dev/null", name, "", []udiff.Edit{{Start: 0, End: 0, New: content}}, contextLines)
	return u.String(), DiffStat{Added: CountLines(content)}
}

// lineStart is the offset of the start of the line holding off.
func lineStart(s string, off int) int {
	return strings.LastIndexByte(s[:off], '\n') + 1
}

// lineEnd is the offset just past the end of the line holding off (past
// its "\n"), or off itself when it already starts a line after a span.
func lineEnd(s string, off int) int {
	if off > 0 && s[off-1] == '\n' {
		return off
	}
	if i := strings.IndexByte(s[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(s)
}

// CountLines counts lines, a last line without "\n" included.
func CountLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
