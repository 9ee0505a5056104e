package thinktag

import (
	"strings"
	"testing"
)

type result struct{ thinking, text string }

func run(implicit bool, chunks []string) (result, bool) {
	implicitNeverClosed := implicit && !strings.Contains(strings.Join(chunks, ""), closeTag)
	var r result
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
	for _, c := range chunks {
		s.Feed(c, emit)
	}
	s.Flush(emit)
	r.thinking, r.text = tb.String(), xb.String()
	return r, implicitNeverClosed && r.thinking != ""
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

func FuzzSplitter(f *testing.F) {
	for _, tc := range cases {
		f.Add(tc.in, uint8(3), tc.implicit)
	}
	f.Fuzz(func(t *testing.T, in string, step uint8, implicit bool) {
		n := int(step%16) + 1
		var chunks []string
		for i := 0; i < len(in); i += n {
			chunks = append(chunks, in[i:min(i+n, len(in))])
		}
		got, re := run(implicit, chunks)
		whole, wre := run(implicit, []string{in})
		if got != whole || re != wre {
			t.Fatalf("chunking changed the result: %+v vs %+v", got, whole)
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
	})
}
