package match

import (
	"errors"
	"strings"
	"testing"
)

// FuzzMatch checks the matcher's invariants on any input: no panic; spans
// in order, apart and inside the content; as many as asked; an old_string
// present exactly once always matches exactly, there; one present several
// times is reported with its count; the diff of a match applies.
func FuzzMatch(f *testing.F) {
	f.Add(goFile, `fmt.Println("big")`, `fmt.Println("large")`, uint8(1))
	f.Add(goFile, "    if x > 3 {\n        fmt.Println(\"big\")\n    }\n", "    if x {\n    }\n", uint8(1))
	f.Add(pyFile, "def greet(self):\n    if self.name:\n", "def greet(self):\n    if not self.name:\n", uint8(1))
	f.Add("a a a", "a", "b", uint8(3))
	f.Add("x = 1   \ny\nx = 1\n", "x = 1\n", "x = 2\n", uint8(2))
	f.Add("a\r\nb\r\nc", "b\n", "", uint8(1))
	f.Add("     1\tfoo\n", "     1\tfoo", "bar", uint8(1))
	f.Add(`say(\"hi\")`, `say(\\\"hi\\\")`, "x", uint8(1))
	f.Add("func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n", "func a() {\n\treturn 3\n}", "", uint8(1))
	// A line added that starts with "++ " (the harness's patch once took
	// it for a file header).
	f.Add("\x00\x00 ", "\x00", "+", uint8(1))
	f.Fuzz(func(t *testing.T, content, old, new string, count uint8) {
		want := int(count%4) + 1
		m, err := Find(content, old, new, MatchOptions{Count: want, MaxWork: 2_000_000})
		if old == "" {
			if !errors.Is(err, ErrEmptyOld) {
				t.Fatalf("empty old_string: %v", err)
			}
			return
		}
		n := strings.Count(content, old)
		if err != nil {
			var me *MatchError
			if !errors.As(err, &me) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			_ = me.Error()
			if n == want {
				t.Fatalf("old_string occurs %d times, as wanted, but: %v", n, err)
			}
			if n > want && (me.Kind != TooMany || me.Found != n || me.Strategy != Exact) {
				t.Fatalf("old_string occurs %d times, want %d: %+v", n, want, me)
			}
			return
		}
		if len(m.Spans) != want {
			t.Fatalf("%d spans, want %d", len(m.Spans), want)
		}
		if n == want && (m.Strategy != Exact || m.Repair != NoRepair) {
			t.Fatalf("old_string occurs %d times but matched with %v/%v", n, m.Strategy, m.Repair)
		}
		if n > want {
			t.Fatalf("old_string occurs %d times, more than %d, yet matched", n, want)
		}
		last := 0
		for _, s := range m.Spans {
			if s.Start < last || s.End < s.Start || s.End > len(content) {
				t.Fatalf("bad span %+v after %d in %d bytes", s, last, len(content))
			}
			if l := lineNumber(content, s.Start); s.Line != l && !(s.Line == l+1 && strings.HasPrefix(content[s.Start:], "\n")) {
				t.Fatalf("span %+v: offset is on line %d", s, l)
			}
			if s.EndLine < s.Line {
				t.Fatalf("span %+v ends before it starts", s)
			}
			last = s.End
		}
		if m.Strategy == Exact && m.Repair == NoRepair && content[m.Spans[0].Start:m.Spans[0].End] != old {
			t.Fatalf("exact span holds %q", content[m.Spans[0].Start:m.Spans[0].End])
		}
		after := m.Apply(content)
		d, _ := Diff("f", content, m.Spans)
		got, err := applyUnified(d, content)
		if err != nil || got != after {
			t.Fatalf("diff\n%s\ndoes not apply: %v", d, err)
		}
	})
}
