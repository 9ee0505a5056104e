package match

import (
	"errors"
	"os"
	"strings"
	"testing"
)

type matchCase struct {
	name         string
	content      string
	old, new     string
	count        int
	want         string    // content after the edit
	strategy     Strategy  // expected strategy when want is set
	repair       Repair    // expected repair
	errKind      ErrorKind // expected failure
	errContains  []string  // in the error message
	lines        []int     // MatchError.Lines, when set
	closestLine  int       // MatchError.Closest.Line, when set
	diffLine     int       // MatchError.Closest.DiffLine, when set
	noClosest    bool
	spansAtLines []int // Span.Line of each span, when set
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := Find(c.content, c.old, c.new, MatchOptions{Count: c.count})
			if c.errKind != 0 {
				var me *MatchError
				if !errors.As(err, &me) {
					if m != nil {
						t.Fatalf("matched with %v: %q", m.Strategy, m.Apply(c.content))
					}
					t.Fatalf("err = %v, want a MatchError", err)
				}
				if me.Kind != c.errKind {
					t.Fatalf("kind = %d, want %d: %v", me.Kind, c.errKind, err)
				}
				for _, s := range c.errContains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error lacks %q:\n%v", s, err)
					}
				}
				if c.lines != nil && !equalInts(me.Lines, c.lines) {
					t.Errorf("lines = %v, want %v", me.Lines, c.lines)
				}
				if c.noClosest && me.Closest != nil {
					t.Errorf("closest = %+v, want none", me.Closest)
				}
				if c.closestLine != 0 {
					if me.Closest == nil || me.Closest.Line != c.closestLine {
						t.Errorf("closest = %+v, want line %d\n%v", me.Closest, c.closestLine, err)
					}
				}
				if c.diffLine != 0 && (me.Closest == nil || me.Closest.DiffLine != c.diffLine) {
					t.Errorf("closest = %+v, want diff line %d", me.Closest, c.diffLine)
				}
				return
			}
			if err != nil {
				t.Fatalf("Find: %v", err)
			}
			got := m.Apply(c.content)
			if got != c.want {
				t.Errorf("strategy %v, result:\n%s\nwant:\n%s", m.Strategy, show(got), show(c.want))
			}
			if c.strategy != 0 && m.Strategy != c.strategy {
				t.Errorf("strategy = %v, want %v", m.Strategy, c.strategy)
			}
			if m.Repair != c.repair {
				t.Errorf("repair = %v, want %v", m.Repair, c.repair)
			}
			if c.spansAtLines != nil {
				var ls []int
				for _, s := range m.Spans {
					ls = append(ls, s.Line)
				}
				if !equalInts(ls, c.spansAtLines) {
					t.Errorf("span lines = %v, want %v", ls, c.spansAtLines)
				}
			}
			checkSpans(t, c.content, m.Spans)
		})
	}
}

func show(s string) string {
	return strings.NewReplacer("\t", "→", " ", "·").Replace(s)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkSpans asserts the spans are in order, inside content and apart.
func checkSpans(t *testing.T, content string, spans []Span) {
	t.Helper()
	last := 0
	for _, s := range spans {
		if s.Start < last || s.End < s.Start || s.End > len(content) {
			t.Fatalf("bad span %+v after %d in %d bytes", s, last, len(content))
		}
		if l := lineNumber(content, s.Start); s.Line != l && !(s.Line == l+1 && strings.HasPrefix(content[s.Start:], "\n")) {
			t.Errorf("span line %d, offset is on line %d", s.Line, lineNumber(content, s.Start))
		}
		last = s.End
	}
}

// goFile is a small Go program (testdata/small.go.txt; the edit tool's
// tests use it too).
var goFile = func() string {
	b, err := os.ReadFile("testdata/small.go.txt")
	if err != nil {
		panic(err)
	}
	return string(b)
}()

const pyFile = `class Greeter:
    def __init__(self, name):
        self.name = name

    def greet(self):
        if self.name:
            print("hello", self.name)
        return None
`

func TestFindExact(t *testing.T) {
	runMatchCases(t, []matchCase{
		{
			name:    "one line",
			content: goFile, old: `fmt.Println("big")`, new: `fmt.Println("large")`,
			want:     strings.Replace(goFile, `"big"`, `"large"`, 1),
			strategy: Exact, spansAtLines: []int{8},
		},
		{
			name:    "block with context",
			content: goFile, old: "\tif x > 3 {\n\t\tfmt.Println(\"big\")\n\t}\n", new: "\tif x > 4 {\n\t\tfmt.Println(\"big\")\n\t}\n",
			want:     strings.Replace(goFile, "x > 3", "x > 4", 1),
			strategy: Exact, spansAtLines: []int{7},
		},
		{
			name:    "first line copied from its first word",
			content: goFile, old: "if x > 3 {\n\t\tfmt.Println(\"big\")", new: "if x >= 3 {\n\t\tfmt.Println(\"big\")",
			want:     strings.Replace(goFile, "x > 3", "x >= 3", 1),
			strategy: Exact,
		},
		{
			name:    "ambiguous",
			content: goFile, old: "fmt.Println", new: "log.Println",
			errKind: TooMany, lines: []int{8, 10},
			errContains: []string{"matches 2 places (lines 8, 10)", "set expected_replacements to 2"},
		},
		{
			name:    "several wanted",
			content: goFile, old: "fmt.Println", new: "log.Println", count: 2,
			want:     strings.ReplaceAll(goFile, "fmt.Println", "log.Println"),
			strategy: Exact, spansAtLines: []int{8, 10},
		},
		{
			name:    "fewer than wanted",
			content: goFile, old: "fmt.Println", new: "log.Println", count: 3,
			errKind: TooFew, lines: []int{8, 10},
			errContains: []string{"matches 2 places", "set expected_replacements to 2"},
		},
		{
			name:    "more than wanted",
			content: "a a a a", old: "a", new: "b", count: 2,
			errKind: TooMany, errContains: []string{"matches 4 places", "more than expected_replacements (2)"},
		},
		{
			name:    "delete a line",
			content: goFile, old: "\tfmt.Println(x)\n", new: "",
			want:     strings.Replace(goFile, "\tfmt.Println(x)\n", "", 1),
			strategy: Exact,
		},
	})
}

func TestFindWhitespace(t *testing.T) {
	runMatchCases(t, []matchCase{
		{
			name:    "trailing whitespace in the file",
			content: "a := 1   \nb := 2\t\nc := 3\n", old: "a := 1\nb := 2\n", new: "a := 10\nb := 20\n",
			want: "a := 10\nb := 20\nc := 3\n", strategy: Whitespace,
		},
		{
			name:    "aligned fields",
			content: "type T struct {\n\tName    string\n\tAge     int\n}\n",
			old:     "\tName string\n\tAge int\n", new: "\tName string\n\tAge int64\n",
			want: "type T struct {\n\tName string\n\tAge int64\n}\n", strategy: Whitespace,
		},
		{
			name:    "spaces beside punctuation",
			content: "x = foo(a, b)\ny = 2\n", old: "x = foo(a,b)\ny = 2", new: "x = foo(a, c)\ny = 2",
			want: "x = foo(a, c)\ny = 2\n", strategy: Whitespace,
		},
		{
			name:    "space between words is significant",
			content: "return ab\n", old: "return a b", new: "return c",
			errKind: NotFound,
		},
		{
			name:    "final newline the file lacks",
			content: "one\ntwo\nthree", old: "two\nthree\n", new: "two\n3\n",
			want: "one\ntwo\n3", strategy: Whitespace,
		},
		{
			name:    "blank lines around old_string",
			content: "a\nb\nc\n", old: "\n\nb\n\n", new: "\n\nB\n\n",
			want: "a\nB\nc\n", strategy: Whitespace,
		},
		{
			name:    "part of a line, spaced differently",
			content: "\tvar total  =  a + b // sum\n", old: "total = a + b", new: "total = a - b",
			want: "\tvar total = a - b // sum\n", strategy: Whitespace,
		},
		{
			name:    "delete lines, whitespace differing",
			content: "a\nb  \nc\n", old: "b\n", new: "",
			want: "a\nc\n", strategy: Whitespace,
		},
		{
			name:    "delete the last line",
			content: "a\nb\nc  ", old: "c\n", new: "",
			want: "a\nb", strategy: Whitespace,
		},
		{
			name:    "exact finds one, whitespace finds both wanted",
			content: "x = 1\ny\nx = 1  \n", old: "x = 1\n", new: "x = 2\n", count: 2,
			want: "x = 2\ny\nx = 2\n", strategy: Whitespace,
		},
		{
			name:    "ambiguous whitespace",
			content: "f(a)\nf( a )\n", old: "f(a )\n", new: "g(a)\n",
			errKind: TooMany, lines: []int{1, 2},
		},
	})
}

func TestFindIndentation(t *testing.T) {
	runMatchCases(t, []matchCase{
		{
			name:    "spaces for tabs, new deeper line",
			content: goFile,
			old:     "    if x > 3 {\n        fmt.Println(\"big\")\n    }\n",
			new:     "    if x > 3 {\n        if x > 9 {\n            fmt.Println(\"huge\")\n        }\n        fmt.Println(\"big\")\n    }\n",
			want: strings.Replace(goFile, "\tif x > 3 {\n\t\tfmt.Println(\"big\")\n\t}\n",
				"\tif x > 3 {\n\t\tif x > 9 {\n\t\t\tfmt.Println(\"huge\")\n\t\t}\n\t\tfmt.Println(\"big\")\n\t}\n", 1),
			strategy: Indentation,
		},
		{
			name:    "indentation dropped",
			content: pyFile,
			old:     "def greet(self):\n    if self.name:\n        print(\"hello\", self.name)\n",
			new:     "def greet(self):\n    if self.name:\n        print(\"hi\", self.name)\n    else:\n        print(\"hi\")\n",
			want: strings.Replace(pyFile, "        if self.name:\n            print(\"hello\", self.name)\n",
				"        if self.name:\n            print(\"hi\", self.name)\n        else:\n            print(\"hi\")\n", 1),
			strategy: Indentation,
		},
		{
			name:     "first line without indentation, rest shifted",
			content:  pyFile,
			old:      "if self.name:\n          print(\"hello\", self.name)\n      return None",
			new:      "if self.name:\n          print(\"hello\", self.name)\n      return self.name",
			want:     strings.Replace(pyFile, "return None", "return self.name", 1),
			strategy: Indentation,
		},
		{
			name:     "dedent below old_string",
			content:  "def f():\n    if a:\n        b()\n",
			old:      "  if a:\n    b()\n",
			new:      "  if a:\n    b()\nc()\n",
			want:     "def f():\n    if a:\n        b()\nc()\n",
			strategy: Indentation,
		},
		{
			name:    "structure differs (Python)",
			content: "if x:\n    y()\n    z()\n",
			old:     "if x:\n    y()\nz()\n", new: "if x:\n    y()\nw()\n",
			errKind: NotFound,
		},
		{
			name:    "two spaces to four",
			content: "a:\n    b:\n        c: 1\n    d: 2\n",
			old:     "b:\n  c: 1\nd: 2", new: "b:\n  c: 1\n  e: 3\nd: 2",
			want:     "a:\n    b:\n        c: 1\n        e: 3\n    d: 2\n",
			strategy: Indentation,
		},
	})
}

func TestFindRepairs(t *testing.T) {
	runMatchCases(t, []matchCase{
		{
			name:    "line numbers with tabs",
			content: goFile,
			old:     "     7\t\tif x > 3 {\n     8\t\t\tfmt.Println(\"big\")\n",
			new:     "     7\t\tif x > 3 {\n     8\t\t\tfmt.Println(\"large\")\n",
			want:    strings.Replace(goFile, `"big"`, `"large"`, 1), strategy: Exact, repair: LineNumbers,
		},
		{
			name:    "line numbers with colons, new line unnumbered",
			content: "a\nb\nc\n",
			old:     "2: b\n3: c\n", new: "2: b\nbb\n3: c\n",
			want: "a\nb\nbb\nc\n", strategy: Exact, repair: LineNumbers,
		},
		{
			name:    "over-escaped",
			content: "say(\"hi\")\nnext()\n",
			old:     `say(\"hi\")\nnext()`, new: `say(\"hello\")\nnext()`,
			want: "say(\"hello\")\nnext()\n", strategy: Exact, repair: Unescaped,
		},
		{
			name:    "yaml is not a line number",
			content: "12: x\n", old: "12: y", new: "12: z",
			errKind: NotFound,
		},
	})
}

func TestFindFuzzy(t *testing.T) {
	block := "func handle(w http.ResponseWriter, r *http.Request) {\n" +
		"\tname := r.URL.Query().Get(\"name\")\n" +
		"\tif name == \"\" {\n" +
		"\t\thttp.Error(w, \"missing name\", http.StatusBadRequest)\n" +
		"\t\treturn\n" +
		"\t}\n" +
		"\tfmt.Fprintf(w, \"hello %s\", name)\n" +
		"}\n"
	content := "package web\n\n" + block + "\nfunc other() {}\n"
	runMatchCases(t, []matchCase{
		{
			name:    "one word wrong",
			content: content,
			old:     strings.Replace(block, "missing name", "name missing", 1),
			new:     strings.Replace(block, "hello %s", "hi %s", 1),
			want:    strings.Replace(content, "hello %s", "hi %s", 1), strategy: Fuzzy,
		},
		{
			name:    "a line left out",
			content: content,
			old:     strings.Replace(block, "\t\treturn\n", "", 1),
			new:     strings.Replace(strings.Replace(block, "\t\treturn\n", "", 1), "hello", "hey", 1),
			want:    strings.Replace(strings.Replace(content, "\t\treturn\n", "", 1), "hello", "hey", 1), strategy: Fuzzy,
		},
		{
			name:     "a line made up, with spaces for tabs",
			content:  content,
			old:      strings.ReplaceAll(strings.Replace(block, "\t\treturn\n", "\t\tlog.Print(\"no name\")\n\t\treturn\n", 1), "\t", "    "),
			new:      strings.ReplaceAll(strings.Replace(block, "hello", "hey", 1), "\t", "    "),
			want:     strings.Replace(content, "hello", "hey", 1),
			strategy: Fuzzy,
		},
		{
			name:    "ambiguous near-copies",
			content: "package x\n\n" + block + "\n" + strings.Replace(block, "handle", "handle2", 1),
			old:     strings.Replace(strings.Replace(block, "handle", "handleX", 1), "missing name", "no name", 1),
			new:     "",
			errKind: Ambiguous, errContains: []string{"about equally similar"},
		},
		{
			name:    "too different: closest passage and first difference",
			content: content,
			old: strings.NewReplacer("r.URL.Query().Get(\"name\")", "r.FormValue(\"name\")",
				"\"missing name\", http.StatusBadRequest", "\"no name given\", 400",
				"fmt.Fprintf(w, \"hello %s\", name)", "w.Write([]byte(\"hello \" + name))").Replace(block),
			new:         "x",
			errKind:     NotFound,
			closestLine: 3, diffLine: 4,
			errContains: []string{"lines 3-10", "4\t\tname := r.URL.Query()", "first differs on line 4"},
		},
		{
			name:    "nothing similar",
			content: content, old: "SELECT * FROM users WHERE id = 1", new: "x",
			errKind: NotFound, noClosest: true, errContains: []string{"nothing in the file is similar"},
		},
		{
			name:    "short line with a typo is not accepted",
			content: "x := 1\nreturn nil, err\n", old: "retrun nil, err", new: "return err",
			errKind: NotFound, closestLine: 2,
		},
		{
			name:    "long line with a typo is",
			content: "x := 1\n\tlog.Printf(\"request %s from %s took %v\", r.URL, r.RemoteAddr, time.Since(start))\n",
			old:     "log.Printf(\"request %s from %s took %v\", r.URL, r.RemoteAdr, time.Since(start))",
			new:     "log.Printf(\"request %s took %v\", r.URL, time.Since(start))",
			want:    "x := 1\n\tlog.Printf(\"request %s took %v\", r.URL, time.Since(start))\n", strategy: Fuzzy,
		},
		{
			name:    "several places are never fuzzy",
			content: content, count: 2,
			old: strings.Replace(block, "missing name", "name missing", 1), new: "x",
			errKind: NotFound,
		},
	})
}

func TestFindEmptyOld(t *testing.T) {
	if _, err := Find("abc", "", "x", MatchOptions{}); !errors.Is(err, ErrEmptyOld) {
		t.Fatalf("err = %v", err)
	}
}

func TestFindFuzzyStructure(t *testing.T) {
	// The bodies agree but the structure differs: fuzzy matching must not
	// paper over it.
	content := "def f(x):\n    if x:\n        a = compute_the_first_value(x)\n        b = compute_the_second_value(x)\n    return a + b\n"
	old := "def f(x):\n    if x:\n        a = compute_the_first_value(x)\n    b = compute_the_second_value(x)\n    return a + b\n"
	_, err := Find(content, old, "pass\n", MatchOptions{})
	var me *MatchError
	if !errors.As(err, &me) || me.Kind != NotFound {
		t.Fatalf("err = %v", err)
	}
}

func TestFindFuzzyRivals(t *testing.T) {
	row := func(name, v string) string {
		return "\t{\n\t\tname:  \"" + name + "\",\n\t\tinput: \"" + v + "\",\n\t\twant:  true,\n\t},\n"
	}
	content := "var cases = []struct{}{\n" + row("first case", "alpha beta") + row("second case", "gamma delta") + "}\n"
	runMatchCases(t, []matchCase{
		{
			// Copied from the second row with one line misremembered: the
			// second row wins on every line, so it is the match.
			name:    "copied from one, one line changed",
			content: content,
			old:     strings.Replace(row("second case", "gamma delta"), "want:  true", "want:  ok", 1),
			new:     row("second case", "gamma epsilon"),
			want:    strings.Replace(content, "gamma delta", "gamma epsilon", 1), strategy: Fuzzy,
		},
		{
			// Like the first row on one line and the second on another:
			// no way to tell.
			name:    "half of each",
			content: content,
			old:     row("first case", "gamma delta"),
			new:     "",
			errKind: Ambiguous, lines: []int{2, 7},
		},
	})
}

func TestFindFuzzyNeedsBothEnds(t *testing.T) {
	// The last line of old_string matches nothing: where the passage ends
	// is a guess, so fuzzy matching declines and shows it instead.
	content := "func a() {\n\tstep(1)\n\tstep(2)\n\tstep(3)\n\tstep(4)\n\tstep(5)\n}\n\nfunc b() {}\n"
	old := "func a() {\n\tstep(1)\n\tstep(2)\n\tstep(3)\n\tstep(4)\n\tstep(5)\n\tcleanupEverythingNow()\n"
	_, err := Find(content, old, "x", MatchOptions{})
	var me *MatchError
	if !errors.As(err, &me) || me.Kind != NotFound || me.Closest == nil || me.Closest.Line != 1 || me.Closest.DiffLine != 7 {
		t.Fatalf("err = %v (%+v)", err, me)
	}
	if !strings.Contains(err.Error(), "old_string has a line the file does not have before line 7:\n\tcleanupEverythingNow()") {
		t.Errorf("message:\n%v", err)
	}
}

func TestFindInlineMultilineReplacement(t *testing.T) {
	content := "func f() {\n\t\tx  :=  1\n}\n"
	m, err := Find(content, "x := 1", "x := 1\n  y := 2", MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Two spaces deeper in the model's frame is one level: a tab here.
	if got := m.Apply(content); got != "func f() {\n\t\tx := 1\n\t\t\ty := 2\n}\n" {
		t.Errorf("got %q", got)
	}
}

func TestFindMixedLineEndings(t *testing.T) {
	// decode leaves a mixed file alone; the line strategies see "\r" as
	// trailing whitespace, and keepCRLF gives the replacement the ending
	// of the lines it replaces.
	content := "a\r\nb\r\nc\nd\n"
	m, err := Find(content, "a\nb\n", "a\nB\n", MatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	KeepCRLF(content, m)
	if m.Strategy != Whitespace || m.Apply(content) != "a\r\nB\r\nc\nd\n" {
		t.Errorf("%v %q", m.Strategy, m.Apply(content))
	}
}
