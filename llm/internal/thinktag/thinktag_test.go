package thinktag

import (
	"strings"
	"testing"
)

type result struct{ thinking, text string }

func run(implicit bool, chunks []string) (result, bool) {
	r, re, _ := runWatch(implicit, false, chunks)
	return r, re
}

// runWatch runs the splitter over chunks as a consumer would: with watch,
// a lone </think> moves the text received so far to the thinking (moved
// counts how often). The second result says an implicit block was given
// back as text.
func runWatch(implicit, watch bool, chunks []string) (r result, reclassed bool, moved int) {
	implicitNeverClosed := implicit && !strings.Contains(strings.Join(chunks, ""), closeTag)
	var tb, xb strings.Builder
	emit := func(thinking bool, s string) {
		if s == "" {
			panic("empty piece emitted")
		}
		if thinking {
			tb.WriteString(s)
		} else {
			xb.WriteString(s)
		}
	}
	s := New(implicit)
	if watch {
		s.Watch(func() bool {
			if tb.Len() > 0 {
				panic("a lone close after thinking was emitted")
			}
			moved++
			tb.WriteString(xb.String())
			xb.Reset()
			return true
		})
	}
	for _, c := range chunks {
		s.Feed(c, emit)
	}
	s.Flush(emit)
	r.thinking, r.text = tb.String(), xb.String()
	return r, implicitNeverClosed && r.thinking != "", moved
}

var cases = []struct {
	name      string
	implicit  bool
	in        string
	want      result
	reclassed bool
}{
	{"plain text", false, "Hello, world.", result{"", "Hello, world."}, false},
	{"empty", false, "", result{}, false},
	{"only spaces", false, "  \n", result{"", "  \n"}, false},
	{"explicit block", false, "<think>Let me think.</think>\n\nThe answer is 4.", result{"Let me think.", "The answer is 4."}, false},
	{"leading space before block", false, "\n <think>a</think>b", result{"a", "b"}, false},
	{"empty block (no_think)", false, "<think>\n\n</think>\n\nHi", result{"\n\n", "Hi"}, false},
	{"angle in text is text", false, "a < b and <thin ice>", result{"", "a < b and <thin ice>"}, false},
	{"tag-like prefix then text", false, "<thinking>x", result{"", "<thinking>x"}, false},
	{"mid-text tag stays text", false, "Say <think> literally", result{"", "Say <think> literally"}, false},
	{"partial close inside reasoning", false, "<think>x </thin y </ z</think>ok", result{"x </thin y </ z", "ok"}, false},
	{"unclosed block", false, "<think>still going", result{"still going", ""}, false},
	{"text after close keeps later tags", false, "<think>r</think>a</think>b", result{"r", "a</think>b"}, false},
	{"implicit lone close", true, "The user wants 4.\n</think>\n\n2+2 is 4.", result{"The user wants 4.\n", "2+2 is 4."}, false},
	{"implicit with explicit open", true, "<think>r</think>a", result{"r", "a"}, false},
	{"implicit never closed", true, "Just an answer.", result{"Just an answer.", "Just an answer."}, true},
	{"implicit empty", true, "", result{}, false},
	{"implicit, reply starts by closing", true, "\n</think>\n\nHello.", result{"", "Hello."}, false},
	{"explicit mode, leading lone close stripped", false, "</think>\n\nHello.", result{"", "Hello."}, false},
	{"implicit, partial close then text", true, "</thin>x", result{"</thin>x", "</thin>x"}, true},
	{"unicode", false, "<think>çà ☃</think>日本", result{"çà ☃", "日本"}, false},
}

func TestSplitterEveryOffset(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, re := run(tc.implicit, []string{tc.in})
			if got != tc.want || re != tc.reclassed {
				t.Fatalf("whole: got %+v (reclassified %v), want %+v (%v)", got, re, tc.want, tc.reclassed)
			}
			for i := 0; i <= len(tc.in); i++ {
				for j := i; j <= len(tc.in); j++ {
					got, _ := run(tc.implicit, []string{tc.in[:i], tc.in[i:j], tc.in[j:]})
					if got != tc.want {
						t.Fatalf("split at %d,%d: got %+v, want %+v", i, j, got, tc.want)
					}
				}
			}
			var bytes []string
			for i := range len(tc.in) {
				bytes = append(bytes, tc.in[i:i+1])
			}
			if got, _ := run(tc.implicit, bytes); got != tc.want {
				t.Fatalf("byte by byte: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// watchCases are streams without a configured implicit block, watched for
// a lone </think>: moved says the text before it became reasoning.
var watchCases = []struct {
	name  string
	in    string
	want  result
	moved int
}{
	{"lone close after reasoning", "Okay, the user asks.\n</think>\n\nParis.", result{"Okay, the user asks.\n", "Paris."}, 1},
	{"DeepSeek-R1 shape", "Hmm.\nFine.\n</think>\n\n**4**", result{"Hmm.\nFine.\n", "**4**"}, 1},
	{"lone close with no answer after", "just thinking</think>", result{"just thinking", ""}, 1},
	{"later lone close stays text", "r</think>a</think>b", result{"r", "a</think>b"}, 1},
	{"plain text", "Hello, world.", result{"", "Hello, world."}, 0},
	{"angle brackets", "a < b, </thin and </div>", result{"", "a < b, </thin and </div>"}, 0},
	{"partial close at the end", "abc</thi", result{"", "abc</thi"}, 0},
	{"in backticks", "Close it with `</think>` then answer.", result{"", "Close it with `</think>` then answer."}, 0},
	{"in a fence", "```\nx\n</think>\n```\ny", result{"", "```\nx\n</think>\n```\ny"}, 0},
	{"after a closed fence", "```\nx\n```\nr\n</think>\na", result{"```\nx\n```\nr\n", "a"}, 1},
	{"in double quotes", `The tag "</think>" ends it; </think> too.`, result{"", `The tag "</think>" ends it; </think> too.`}, 0},
	{"in curly quotes", "The tag “</think>” ends it.", result{"", "The tag “</think>” ends it."}, 0},
	{"after the open tag in the answer", "Tags: <think> and </think>.", result{"", "Tags: <think> and </think>."}, 0},
	{"explicit block closed first", "<think>r</think>a</think>b", result{"r", "a</think>b"}, 0},
	{"leading lone close stripped", "\n</think>\n\nHello.", result{"", "Hello."}, 0},
	{"unicode", "çà ☃\n</think>日本", result{"çà ☃\n", "日本"}, 1},
}

func TestSplitterWatchEveryOffset(t *testing.T) {
	for _, tc := range watchCases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, moved := runWatch(false, true, []string{tc.in})
			if got != tc.want || moved != tc.moved {
				t.Fatalf("whole: got %+v (moved %d), want %+v (%d)", got, moved, tc.want, tc.moved)
			}
			for i := 0; i <= len(tc.in); i++ {
				for j := i; j <= len(tc.in); j++ {
					got, _, moved := runWatch(false, true, []string{tc.in[:i], tc.in[i:j], tc.in[j:]})
					if got != tc.want || moved != tc.moved {
						t.Fatalf("split at %d,%d: got %+v (moved %d), want %+v (%d)", i, j, got, moved, tc.want, tc.moved)
					}
				}
			}
		})
	}
}

func TestSplitterWatchRefused(t *testing.T) {
	var text, thinking strings.Builder
	emit := func(th bool, x string) {
		if th {
			thinking.WriteString(x)
		} else {
			text.WriteString(x)
		}
	}
	s := New(false)
	asked := 0
	s.Watch(func() bool { asked++; return false })
	for _, c := range []string{"reasoning\n</th", "ink>\nanswer</think>", "x"} {
		s.Feed(c, emit)
	}
	s.Flush(emit)
	if asked != 1 || thinking.Len() != 0 || text.String() != "reasoning\n</think>\nanswer</think>x" {
		t.Fatalf("asked %d, thinking %q, text %q", asked, thinking.String(), text.String())
	}
}

func TestSplitterUnwatch(t *testing.T) {
	var text strings.Builder
	emit := func(th bool, x string) {
		if th {
			t.Fatalf("thinking %q", x)
		}
		text.WriteString(x)
	}
	s := New(false)
	s.Watch(func() bool { t.Fatal("asked after Unwatch"); return true })
	s.Feed("a</thi", emit)
	s.Unwatch(emit)
	if text.String() != "a</thi" {
		t.Fatalf("the held partial tag was not given back at once: %q", text.String())
	}
	s.Feed("nk>b", emit)
	s.Flush(emit)
	if text.String() != "a</think>b" {
		t.Fatalf("text %q", text.String())
	}
}

func TestSplitterReset(t *testing.T) {
	s := New(false)
	var text strings.Builder
	emit := func(th bool, x string) {
		if !th {
			text.WriteString(x)
		}
	}
	s.Feed("<think>abc", emit)
	s.Reset(false)
	s.Feed("hello", emit)
	s.Flush(emit)
	if text.String() != "hello" {
		t.Fatalf("after reset got %q", text.String())
	}
}

// loneClose reports whether in has a </think> before any <think>: a close
// that no open came before (an open after it does not make it less lone:
// the stream is read as it comes).
func loneClose(in string) bool {
	c := strings.Index(in, "</think>")
	o := strings.Index(in, "<think>")
	return c >= 0 && (o < 0 || c < o)
}

func FuzzSplitter(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in, uint8(3), tc.implicit, false)
	}
	for _, tc := range watchCases {
		f.Add(tc.in, uint8(5), false, true)
	}
	f.Fuzz(func(t *testing.T, in string, step uint8, implicit, watch bool) {
		n := int(step%16) + 1
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		got, re, moved := runWatch(implicit, watch, chunks)
		whole, wre, wmoved := runWatch(implicit, watch, []string{in})
		if got != whole || re != wre || moved != wmoved {
			t.Fatalf("chunking changed the result: %+v (moved %d) vs %+v (moved %d)", got, moved, whole, wmoved)
		}
		// Nothing is invented: every output byte comes from the input,
		// less the tags and the white space after a closed block.
		if !implicit || !re {
			if len(got.thinking)+len(got.text) > len(in) {
				t.Fatalf("output longer than input: %+v from %q", got, in)
			}
		}
		if !strings.Contains(in, "<think>") && !strings.Contains(in, "</think>") && !implicit && got.text != in {
			t.Fatalf("text without tags was altered: %q -> %+v", in, got)
		}
		switch {
		case moved > 1:
			t.Fatalf("moved %d times: a reply has one block", moved)
		case moved == 1 && (implicit || !watch || !loneClose(in)):
			t.Fatalf("moved without a lone close: %q", in)
		case moved == 1 && got.thinking+"</think>" != in[:len(got.thinking)+len("</think>")]:
			// What became reasoning is exactly the input before the tag.
			t.Fatalf("reasoning %q is not what came before the tag in %q", got.thinking, in)
		}
		if watch && !implicit && moved == 0 {
			// Unmoved, watching changes nothing.
			if plain, _, _ := runWatch(false, false, []string{in}); plain != got {
				t.Fatalf("watching changed a stream it did not move: %+v vs %+v", got, plain)
			}
		}
	})
}
