package match

import (
	"strings"
	"testing"
)

// lineNumber returns the 1-based number of the line holding offset off.
func lineNumber(text string, off int) int {
	return strings.Count(text[:off], "\n") + 1
}

func TestDecodeEncode(t *testing.T) {
	for _, raw := range []string{
		"", "a", "a\n", "a\r\nb\r\n", "a\r\nb\n", "\xef\xbb\xbfx\r\ny", "\xef\xbb\xbf", "a\rb\n", "\r\n",
	} {
		text, enc := Decode([]byte(raw))
		if strings.HasPrefix(text, utf8BOM) {
			t.Errorf("%q: BOM left in the text", raw)
		}
		if enc.crlf && strings.Contains(text, "\r\n") {
			t.Errorf("%q: CRLF left in the text of a CRLF file", raw)
		}
		if got := string(enc.Encode(text)); got != raw {
			t.Errorf("%q: round trip gives %q", raw, got)
		}
	}
}

func TestStripLineNumbers(t *testing.T) {
	cases := []struct {
		old, new         string
		wantOld, wantNew string
		ok               bool
	}{
		{"  3\tfoo\n  4\tbar\n", "  3\tfoo\n  4\tbaz\n", "foo\nbar\n", "foo\nbaz\n", true},
		{"3→foo\n4→\n5→bar", "3→foo\nnew\n5→bar", "foo\n\nbar", "foo\nnew\nbar", true},
		{"10 | a\n11 | b", "10 | a\n11 | c", "a\nb", "a\nc", true},
		{"7\tx", "7\ty", "x", "y", true},
		{"3: a\n5: b", "", "", "", false},       // not consecutive
		{"3: a", "3: b", "", "", false},         // one line like YAML
		{"1\ta\nb", "", "", "", false},          // not every line
		{"1\ta\n2: b", "", "", "", false},       // mixed forms
		{"x := 1\n", "x := 2\n", "", "", false}, // no numbers
	}
	for _, c := range cases {
		o, n, ok := stripLineNumbers(c.old, c.new)
		if ok != c.ok || ok && (o != c.wantOld || n != c.wantNew) {
			t.Errorf("stripLineNumbers(%q, %q) = %q, %q, %v", c.old, c.new, o, n, ok)
		}
	}
}

func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`a\nb`:          "a\nb",
		`say(\"hi\")`:   `say("hi")`,
		`\tx\r\ny`:      "\tx\ny",
		`c:\\dir`:       `c:\dir`,
		`keep \d and \`: `keep \d and \`,
	} {
		if got, _ := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
	if _, ok := unescape("plain"); ok {
		t.Error("plain text reported as escaped")
	}
}
