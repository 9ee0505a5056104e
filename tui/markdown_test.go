package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	xansi "github.com/charmbracelet/x/ansi"
)

func renderAll(r *mdRenderer, s *mdStream) []string {
	done, tail := s.Lines(r)
	return append(append([]string(nil), done...), tail...)
}

// Streaming in any chunks gives what rendering the whole answer gives.
func TestStreamMatchesWhole(t *testing.T) {
	text := longAnswer(120) + "1. one\n2. two\n\n> a quote\n\n~~~python\nprint('x')\n~~~\n\ntrailing text without newline"
	for _, noColor := range []bool{false, true} {
		r := newMDRenderer(70, newTheme(true, noColor))
		var whole mdStream
		whole.Append(text)
		whole.Finish()
		want := renderAll(r, &whole)
		rng := rand.New(rand.NewPCG(3, 4))
		for trial := 0; trial < 5; trial++ {
			var s mdStream
			for rest := text; rest != ""; {
				n := min(1+rng.IntN(20), len(rest))
				s.Append(rest[:n])
				rest = rest[n:]
				renderAll(r, &s) // render as it streams, as the UI does
			}
			s.Finish()
			got := renderAll(r, &s)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("noColor=%v trial %d: streamed render differs from the whole one", noColor, trial)
			}
		}
	}
}

func TestBlockSplitting(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		kinds string // one letter per completed block: t text, c code
	}{
		{"paragraphs", "a\nb\n\nc\n", "tt"},
		{"blank line inside code", "```go\nx\n\ny\n```\nafter\n", "ct"},
		{"heading", "# H\ntext\n", "tt"},
		{"tight list items", "- a\n- b\n- c\n", "ttt"},
		{"list continuation", "- a\n  more\n- b\n", "tt"},
		{"paragraph then list", "intro\n- a\n", "t"},
		{"tilde fence with backticks inside", "~~~\n```\n~~~\n", "c"},
		{"long code in chunks", "```\n" + strings.Repeat("x\n", codeChunk*2+3) + "```\n", "ccc"},
		{"unclosed fence", "```sh\nls\n", "c"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s mdStream
			s.Append(tc.in)
			s.Finish()
			var got strings.Builder
			for _, b := range s.blocks {
				if b.kind == blockCode {
					got.WriteByte('c')
				} else {
					got.WriteByte('t')
				}
			}
			if got.String() != tc.kinds {
				t.Errorf("blocks %q, want %q (%+v)", got.String(), tc.kinds, s.blocks)
			}
		})
	}
}

func TestTailIsRenderedAlone(t *testing.T) {
	r := newMDRenderer(60, newTheme(true, true))
	var s mdStream
	s.Append("first paragraph\n\nsecond para")
	done, tail := s.Lines(r)
	if len(done) != 1 || xansi.Strip(done[0]) != "first paragraph" {
		t.Errorf("done %q", done)
	}
	if len(tail) != 2 || tail[0] != "" || xansi.Strip(tail[1]) != "second para" {
		t.Errorf("tail %q", tail)
	}
	// A fence being typed does not flash as text.
	s.Append("\n\n``")
	if _, tail = s.Lines(r); len(tail) != 0 {
		t.Errorf("tail while the fence is typed: %q", tail)
	}
}

func TestTrimStyledRight(t *testing.T) {
	cases := map[string]string{
		"abc   ": "abc",
		"abc\x1b[38;5;252m \x1b[m\x1b[38;5;252m  \x1b[m": "abc",
		"\x1b[1mhi\x1b[m  ": "\x1b[1mhi\x1b[m",
		"\x1b[1mhi \x1b[m":  "\x1b[1mhi \x1b[m",
		"":                  "",
	}
	for in, want := range cases {
		if got := trimStyledRight(in); got != want {
			t.Errorf("trimStyledRight(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHighlightKeepsText(t *testing.T) {
	r := newMDRenderer(80, newTheme(true, false))
	src := "func main() {\n\tfmt.Println(\"hi\")\n}\n"
	lines := r.code("go", src, true)
	if len(lines) != 4 || !strings.Contains(lines[1], "\x1b[") {
		t.Fatalf("not highlighted: %q", lines)
	}
	if got := xansi.Strip(lines[2]); got != "│     fmt.Println(\"hi\")" {
		t.Errorf("line %q", got)
	}
}

func TestMarkdownRendering(t *testing.T) {
	r := newMDRenderer(40, newTheme(true, true))
	plain := func(src string) string {
		var b strings.Builder
		for _, l := range r.text(src) {
			b.WriteString(xansi.Strip(l) + "\n")
		}
		return b.String()
	}
	cases := []struct{ name, in, want string }{
		{"heading", "## Step 1\n", "## Step 1\n"},
		{"emphasis and code", "a **b** *c* ~~d~~ `e f` \\*g\\* &amp;\n", "a b c d `e f` *g* &\n"},
		{"link", "see [docs](https://x.dev) and <https://y.dev>\n", "see docs https://x.dev and https://y.dev\n"},
		{"wrap", "one two three four five six seven eight nine ten eleven\n", "one two three four five six seven eight\nnine ten eleven\n"},
		{"list", "- a\n  - b\n- c long enough to wrap at forty columns wide\n", "• a\n  • b\n• c long enough to wrap at forty columns\n  wide\n"},
		{"ordered", "3. three\n4. four\n", "3. three\n4. four\n"},
		{"quote", "> q\n>\n> r\n", "│ q\n│\n│ r\n"},
		{"rule", "---\n", strings.Repeat("─", 40) + "\n"},
		{"table", "| a | b |\n|---|--:|\n| x | `y` |\n| long cell | 1 |\n", " a         │   b\n───────────┼─────\n x         │ `y`\n long cell │   1\n"},
		{"not a table", "a | b\nc\n", "a | b c\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plain(tc.in); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// A styled span broken across lines is closed and reopened, so that every
// line can be drawn alone.
func TestWrapStyled(t *testing.T) {
	r := newMDRenderer(20, newTheme(true, false))
	lines := r.text("**bold words that wrap around**\n")
	if len(lines) < 2 {
		t.Fatalf("not wrapped: %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "\x1b[1m") || !strings.HasSuffix(l, "\x1b[m") {
			t.Errorf("line %q does not stand alone", l)
		}
	}
}
