package edit

import "testing"

func TestParseFixerAnswer(t *testing.T) {
	for in, want := range map[string]string{
		"```\nfoo\nbar\n```":                      "foo\nbar",
		"Sure:\n```python\n    x = 1\n```\nDone.": "    x = 1",
		"````\na ``` b\n````":                     "a ``` b",
		"  just text  ":                           "just text",
		"```go\nunterminated\n":                   "unterminated",
	} {
		got, err := parseFixerAnswer(in)
		if err != nil || got != want {
			t.Errorf("parseFixerAnswer(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "NONE", "```\n```", "  \n"} {
		if got, err := parseFixerAnswer(in); err == nil {
			t.Errorf("parseFixerAnswer(%q) = %q, want an error", in, got)
		}
	}
}
