package match

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n"
	// One line changed in a block replaced whole: the diff shows one line.
	sp := Span{Start: strings.Index(before, "d"), End: strings.Index(before, "g"), Replacement: "d\nE\nf\n"}
	got, st := Diff("f.txt", before, []Span{sp})
	want := "--- f.txt\n+++ f.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
	if got != want || st != (DiffStat{1, 1}) {
		t.Errorf("diff:\n%s\nwant:\n%s\nstat %+v", got, want, st)
	}
	// Two far-apart spans make two hunks with the right new-side numbers.
	s1 := Span{Start: 0, End: 2, Replacement: "a1\na2\n"}
	s2 := Span{Start: strings.Index(before, "l"), End: strings.Index(before, "l") + 2, Replacement: ""}
	got, st = Diff("f.txt", before, []Span{s1, s2})
	want = "--- f.txt\n+++ f.txt\n@@ -1,4 +1,5 @@\n-a\n+a1\n+a2\n b\n c\n d\n@@ -9,5 +10,4 @@\n i\n j\n k\n-l\n m\n"
	if got != want || st != (DiffStat{2, 2}) {
		t.Errorf("diff:\n%s\nwant:\n%s\nstat %+v", got, want, st)
	}
	// No change, no diff.
	if got, _ := Diff("f.txt", before, []Span{{Start: 0, End: 1, Replacement: "a"}}); got != "" {
		t.Errorf("diff of nothing: %q", got)
	}
}

// TestDiffApplies checks on random edits that the diff, applied to the
// old text, gives the new one, and agrees with a whole-file diff.
func TestDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "", "x y", "\t}", "func f() {"}
	for it := 0; it < 500; it++ {
		var lines []string
		for i := rng.Intn(40); i >= 0; i-- {
			lines = append(lines, words[rng.Intn(len(words))])
		}
		before := strings.Join(lines, "\n")
		if rng.Intn(2) == 0 {
			before += "\n"
		}
		// Random non-overlapping spans.
		var spans []Span
		for off := 0; off < len(before); {
			start := off + rng.Intn(len(before)-off+1)
			if start >= len(before) {
				break
			}
			end := start + rng.Intn(min(len(before)-start, 12)+1)
			rep := ""
			for k := rng.Intn(3); k > 0; k-- {
				rep += words[rng.Intn(len(words))] + "\n"
			}
			if rng.Intn(3) == 0 {
				rep = strings.TrimSuffix(rep, "\n")
			}
			spans = append(spans, Span{Start: start, End: end, Replacement: rep})
			off = end + 1 + rng.Intn(20)
		}
		after := (&Match{Spans: spans}).Apply(before)
		d, _ := Diff("f", before, spans)
		if before == after {
			if d != "" {
				t.Fatalf("diff of no change:\n%s", d)
			}
			continue
		}
		got, err := applyUnified(d, before)
		if err != nil || got != after {
			t.Fatalf("case %d: applying\n%s\nto %q gives %q (%v), want %q", it, d, before, got, err, after)
		}
	}
}

// Lines whose text starts like a file header ("++ x" added, "-- x"
// removed) are hunk lines, not headers: the harness once skipped them
// (FuzzMatch found it: "\x00\x00 " with "\x00" replaced twice by "+").
func TestApplyUnifiedHeaderLikeLines(t *testing.T) {
	for _, tc := range []struct{ before, old, new string }{
		{"\x00\x00 ", "\x00", "+"},
		{"a\nb\n", "a", "++ x"},
		{"-- x\nb\n", "-- x\n", "y\n"},
		{"keep\n--- x\n+++ y\nkeep\n", "--- x\n+++ y\n", "+++ z\n--- w\n"},
	} {
		n := strings.Count(tc.before, tc.old)
		m, err := Find(tc.before, tc.old, tc.new, MatchOptions{Count: n})
		if err != nil {
			t.Fatalf("%q: %v", tc.before, err)
		}
		d, _ := Diff("f", tc.before, m.Spans)
		got, err := applyUnified(d, tc.before)
		if want := m.Apply(tc.before); err != nil || got != want {
			t.Errorf("applying\n%s\nto %q gives %q (%v), want %q", d, tc.before, got, err, want)
		}
	}
}

func TestNewFileDiff(t *testing.T) {
	d, st := NewFileDiff("n.txt", "a\nb")
	if d != "--- /dev/null\n+++ n.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n" || st.Added != 2 {
		t.Errorf("diff %q stat %+v", d, st)
	}
	if d, _ := NewFileDiff("n.txt", ""); d != "" {
		t.Errorf("empty file diff %q", d)
	}
}

// applyUnified applies a unified diff to before, checking every context and
// deleted line: a small patch(1) for tests. The file header ("--- a",
// "+++ b") is only read before the first hunk: inside a hunk, a line added
// that starts with "++ " is "+++ …" and a line removed that starts with
// "-- " is "--- …".
func applyUnified(diff, before string) (string, error) {
	old := strings.SplitAfter(before, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	dl := strings.SplitAfter(diff, "\n")
	var out strings.Builder
	at := 0         // next line of old
	inHunk := false // past the first @@: "--- x" and "+++ x" are lines removed and added, not file names
	for i := 0; i < len(dl); i++ {
		l := dl[i]
		if l == "" || !inHunk && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")) {
			continue
		}
		noNL := i+1 < len(dl) && strings.HasPrefix(dl[i+1], "\\")
		body := l[1:]
		if noNL {
			body = strings.TrimSuffix(body, "\n")
		}
		switch l[0] {
		case '@':
			inHunk = true
			var a, b, c, d int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &a, &b, &c, &d); err != nil {
				b = 1
				if _, err := fmt.Sscanf(l, "@@ -%d", &a); err != nil {
					return "", fmt.Errorf("bad hunk header %q", l)
				}
				if strings.HasPrefix(l, fmt.Sprintf("@@ -%d,0", a)) {
					b = 0
				}
			}
			target := a - 1
			if b == 0 {
				target = a
			}
			for ; at < target; at++ {
				out.WriteString(old[at])
			}
		case ' ', '-':
			if at >= len(old) || old[at] != body {
				return "", fmt.Errorf("line %d is %q, the diff says %q", at+1, old[min(at, len(old)-1)], body)
			}
			if l[0] == ' ' {
				out.WriteString(body)
			}
			at++
		case '+':
			out.WriteString(body)
		case '\\':
		default:
			return "", fmt.Errorf("bad diff line %q", l)
		}
	}
	for ; at < len(old); at++ {
		out.WriteString(old[at])
	}
	return out.String(), nil
}
