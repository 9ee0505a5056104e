package termtext

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

var cases = []struct {
	name, in, want string
}{
	// Text passes as it is.
	{"empty", "", ""},
	{"ascii", "Hello, world.\n\tindented\n", "Hello, world.\n\tindented\n"},
	{"unicode", "naïve café – 日本語 😀 e\u0301 👩‍👩‍👧 שלום", "naïve café – 日本語 😀 e\u0301 👩‍👩‍👧 שלום"},
	{"direction marks kept", "a\u200eb\u200fc\u061cd", "a\u200eb\u200fc\u061cd"},
	{"replacement character kept", "\ufffd", "\ufffd"},
	{"nbsp and line separator", "a\u00a0b\u2028c", "a\u00a0b\u2028c"},

	// OSC: window titles, clipboard, hyperlinks, colours.
	{"OSC 52 clipboard, BEL", "before\x1b]52;c;cm0gLXJmIH4K\x07after", "beforeafter"},
	{"OSC 52 clipboard, ST", "before\x1b]52;c;cm0gLXJmIH4K\x1b\\after", "beforeafter"},
	{"OSC 52 clipboard, C1 ST", "before\x1b]52;c;cm0gLXJmIH4K\u009cafter", "beforeafter"},
	{"OSC 0 title", "\x1b]0;pwned\x07text", "text"},
	{"OSC 2 title", "\x1b]2;sudo password:\x1b\\text", "text"},
	{"OSC 8 hyperlink", "see \x1b]8;;https://evil.example/\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."},
	{"OSC with UTF-8 payload", "\x1b]0;日本語 ☃\x07ok", "ok"},
	{"OSC 4 palette", "\x1b]4;1;rgb:ff/00/00\x07x", "x"},
	{"unterminated OSC ends at the line", "\x1b]0;title text\nnext line", "\nnext line"},
	{"unterminated OSC ends at CR", "\x1b]0;title\rnext", "\nnext"},
	{"unterminated OSC at the end", "text\x1b]52;c;AAAA", "text"},
	{"OSC cancelled by CAN", "\x1b]0;t\x18after", "after"},
	{"OSC cancelled by SUB", "\x1b]0;t\x1aafter", "after"},
	{"OSC cut by another escape", "\x1b]0;t\x1b[2Jafter", "after"},

	// DCS, APC, PM, SOS strings.
	{"DCS sixel", "a\x1bPq#0;2;0;0;0#0~~@@vv\x1b\\b", "ab"},
	{"DCS DECRQSS", "\x1bP$qm\x1b\\ok", "ok"},
	{"APC kitty graphics", "\x1b_Gf=100;iVBORw0KGgo=\x1b\\ok", "ok"},
	{"PM", "\x1b^private\x1b\\ok", "ok"},
	{"SOS", "\x1bXstart of string\x1b\\ok", "ok"},

	// CSI: screen clears, cursor moves, modes, colours.
	{"clear screen", "\x1b[2J\x1b[Hfake prompt $ ", "fake prompt $ "},
	{"cursor up and erase line", "line one\n\x1b[1A\x1b[2Kline two", "line one\nline two"},
	{"cursor position", "\x1b[10;20Hx", "x"},
	{"SGR colours", "\x1b[31;1mred\x1b[0m", "red"},
	{"SGR 38:2 colon form", "\x1b[38:2::255:0:0mx\x1b[m", "x"},
	{"private mode alt screen", "\x1b[?1049hx\x1b[?1049l", "x"},
	{"CSI with intermediate", "\x1b[0 qx", "x"},
	{"device status report", "\x1b[6nx", "x"},
	{"CSI with a newline inside", "\x1b[2\nJx", "\nx"},
	{"CSI cut by a non-ASCII character", "\x1b[2é", "é"},
	{"CSI at the end", "text\x1b[", "text"},
	{"ESC ESC", "\x1b\x1b[2Jx", "x"},

	// Other escapes.
	{"full reset", "\x1bcx", "x"},
	{"save and restore cursor", "\x1b7x\x1b8", "x"},
	{"charset designation", "\x1b(0lqqk\x1b(B", "lqqk"},
	{"keypad mode", "\x1b=x\x1b>", "x"},
	{"DEL ignored in a sequence", "\x1b[\x7f2Jx", "x"},
	{"ESC then non-ASCII", "\x1bé", "é"},
	{"lone ESC at the end", "x\x1b", "x"},

	// C1 controls, in UTF-8 and as bytes.
	{"C1 CSI in UTF-8", "\u009b2Jx", "2Jx"},
	{"C1 OSC in UTF-8 keeps what follows", "\u009d0;title\u0007x", "0;titlex"},
	{"C1 NEL", "a\u0085b", "ab"},
	{"mojibake", "â\u0080\u009dquoted", "âquoted"},
	{"raw C1 byte", "\x9b2Jx", "\ufffd2Jx"},
	{"raw C1 OSC byte", "\x9d0;t\x07x", "\ufffd0;tx"},

	// C0 controls and DEL.
	{"BEL", "ding\x07dong", "dingdong"},
	{"backspace overwrite", "rm -rf ~\b\b\b\b\b\b\b\bls", "rm -rf ~ls"},
	{"NUL, VT, FF", "a\x00b\x0bc\x0cd", "abcd"},
	{"DEL", "a\x7fb", "ab"},

	// Carriage returns.
	{"CR overwrite", "harmless\rrm -rf ~", "harmless\nrm -rf ~"},
	{"CRLF", "a\r\nb\r\n", "a\nb\n"},
	{"CR CR LF", "a\r\r\nb", "a\n\nb"},
	{"LF CR", "a\n\rb", "a\n\nb"},
	{"CR at the end", "a\r", "a\n"},
	{"CR in a CSI", "\x1b[2\r\nJx", "\nx"},

	// Bidirectional controls become visible.
	{"RLO", "access\u202e level", "access[U+202E] level"},
	{"trojan source", "if (isAdmin) {\u2067\u2066} // check\u2069\u2066", "if (isAdmin) {[U+2067][U+2066]} // check[U+2069][U+2066]"},
	{"every bidi control", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069", "[U+202A][U+202B][U+202C][U+202D][U+202E][U+2066][U+2067][U+2068][U+2069]"},
	{"bidi inside an OSC is dropped with it", "\x1b]0;\u202e\x07x", "x"},

	// Bytes that are not UTF-8.
	{"invalid byte", "a\xffb", "a\ufffdb"},
	{"Latin-1", "caf\xe9", "caf\ufffd"},
	{"truncated character at the end", "a\xe2\x82", "a\ufffd\ufffd"},
	{"truncated character before text", "\xe2\x82a", "\ufffd\ufffda"},
	{"overlong", "\xc0\xaf", "\ufffd\ufffd"},
	{"surrogate", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
	{"lead byte after lead byte", "\xe2\xe2\x82\xac", "\ufffd€"},
	{"invalid bytes in an OSC", "\x1b]0;\xff\xfe\x07x", "x"},
}

func TestString(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := String(tc.in); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// pieces strips in as the given pieces, one Stripper for all of them.
func pieces(s *Stripper, in ...string) string {
	var out []byte
	for _, p := range in {
		out = s.AppendString(out, p)
	}
	return string(s.Flush(out))
}

// TestEverySplit cuts every case at every pair of offsets: the result is
// the same as in one piece.
func TestEverySplit(t *testing.T) {
	for _, tc := range cases {
		in := tc.in
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j++ {
				var s Stripper
				if got := pieces(&s, in[:i], in[i:j], in[j:]); got != tc.want {
					t.Fatalf("%s: cut at %d and %d: %q %q %q\n got %q\nwant %q", tc.name, i, j, in[:i], in[i:j], in[j:], got, tc.want)
				}
			}
		}
		// A byte at a time, through the Writer and through String.
		var b bytes.Buffer
		w := NewWriter(&b)
		var s Stripper
		var viaString strings.Builder
		for k := 0; k < len(in); k++ {
			if n, err := w.Write([]byte{in[k]}); n != 1 || err != nil {
				t.Fatalf("Write: %d %v", n, err)
			}
			viaString.WriteString(s.String(in[k : k+1]))
		}
		w.Flush()
		viaString.Write(s.Flush(nil))
		if b.String() != tc.want || viaString.String() != tc.want {
			t.Errorf("%s: a byte at a time: Writer %q, String %q, want %q", tc.name, b.String(), viaString.String(), tc.want)
		}
	}
}

func TestKeepCR(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"50%\r100%\n", "50%\r100%\n"},
		{"a\r\nb", "a\r\nb"},
		{"\x1b[2K\rdone\x07", "\rdone"},
	} {
		s := Stripper{KeepCR: true}
		if got := string(s.Flush(s.AppendString(nil, tc.in))); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestFlushEndsTheStream: after Flush, a new stream starts outside any
// sequence, and an unfinished one is dropped.
func TestFlushEndsTheStream(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.WriteString("reasoning \x1b]0;unfinished")
	w.Flush()
	w.WriteString("answer")
	w.Flush()
	if b.String() != "reasoning answer" {
		t.Errorf("%q", b.String())
	}
	var s Stripper
	s.String("a\r")
	s.Reset()
	if got := s.String("\nb"); got != "\nb" {
		t.Errorf("after Reset: %q", got)
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	in := strings.Repeat("plain text, 日本語\n", 100)
	got := String(in)
	if got != in {
		t.Fatal("changed")
	}
	if unsafe.StringData(got) != unsafe.StringData(in) {
		t.Error("clean text was copied, not returned as it is")
	}
	if n := testing.AllocsPerRun(100, func() { String(in) }); n != 0 {
		t.Errorf("String allocates %v times on clean text", n)
	}
	var s Stripper
	if n := testing.AllocsPerRun(100, func() { s.String(in) }); n != 0 {
		t.Errorf("Stripper.String allocates %v times on clean text", n)
	}
}

// check asserts what must hold of any output.
func check(t *testing.T, in []byte, out string, keepCR bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("output is not UTF-8: %q (input %q)", out, in)
	}
	for _, r := range out {
		switch {
		case r == '\n' || r == '\t' || r == '\r' && keepCR:
		case r < 0x20 || r == 0x7f:
			t.Fatalf("control %U in the output %q (input %q)", r, out, in)
		case r >= 0x80 && r <= 0x9f:
			t.Fatalf("C1 control %U in the output %q (input %q)", r, out, in)
		case isBidi(r):
			t.Fatalf("bidi control %U in the output %q (input %q)", r, out, in)
		}
	}
}

func FuzzStrip(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(tc.in), uint16(len(tc.in)/3), uint16(len(tc.in)/2))
	}
	f.Fuzz(func(t *testing.T, in []byte, a, b uint16) {
		whole := String(string(in))
		check(t, in, whole, false)
		if utf8.Valid(in) && !bytes.ContainsFunc(in, func(r rune) bool {
			return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || isBidi(r)
		}) && whole != string(in) {
			t.Fatalf("clean text changed: %q -> %q", in, whole)
		}
		if again := String(whole); again != whole {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, whole, again)
		}
		// Any split gives the same output as one piece.
		i, j := int(a)%(len(in)+1), int(b)%(len(in)+1)
		if i > j {
			i, j = j, i
		}
		var s Stripper
		if got := pieces(&s, string(in[:i]), string(in[i:j]), string(in[j:])); got != whole {
			t.Fatalf("cut at %d and %d: %q, in one piece %q (input %q)", i, j, got, whole, in)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Write(in[:i])
		w.Write(in[i:j])
		w.Write(in[j:])
		w.Flush()
		if buf.String() != whole {
			t.Fatalf("Writer cut at %d and %d: %q, in one piece %q (input %q)", i, j, buf.String(), whole, in)
		}
		kc := Stripper{KeepCR: true}
		check(t, in, string(kc.Flush(kc.Append(nil, in))), true)
	})
}

func BenchmarkString(b *testing.B) {
	clean := strings.Repeat("The quick brown fox — 日本語 — jumps over the lazy dog.\n", 200)
	dirty := strings.Repeat("\x1b[31mred\x1b[0m and \x1b]8;;https://x.example\x1b\\a link\x1b]8;;\x1b\\ \u202e\r\n", 200)
	for _, bc := range []struct{ name, in string }{{"clean", clean}, {"dirty", dirty}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				String(bc.in)
			}
		})
	}
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(int64(len(dirty)))
		var s Stripper
		var out []byte
		for b.Loop() {
			for k := 0; k < len(dirty); k += 7 {
				out = s.AppendString(out[:0], dirty[k:min(k+7, len(dirty))])
			}
		}
	})
}
