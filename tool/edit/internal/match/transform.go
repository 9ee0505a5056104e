package match

import (
	"strings"
)

// Repairs of old_string and new_string, tried when neither matches as the
// model wrote it. Each fixes a mistake small models make often.

// unescapeArgs undoes one level of escaping: a model that writes its code
// as if inside a string literal sends "\n" for a line break and \" for a
// quote. It reports false when old has nothing to undo.
func unescapeArgs(old, new string) (string, string, bool) {
	o, ok := unescape(old)
	if !ok {
		return old, new, false
	}
	n, _ := unescape(new)
	return o, n, true
}

func unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	changed := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch d := s[i+1]; d {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			// "\r\n" becomes "\n", as everywhere else.
		case '"', '\'', '`', '\\':
			b.WriteByte(d)
		default:
			b.WriteByte(c)
			continue
		}
		i++
		changed = true
	}
	return b.String(), changed
}

// stripLineNumbers removes the line numbers a model copied from a numbered
// file listing ("  12\tcode", "12: code", "12 | code", "12→code"). Every
// line of old must carry one, numbered consecutively; lines of new lose
// theirs where they carry the same kind of prefix.
func stripLineNumbers(old, new string) (string, string, bool) {
	lines := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	sep := ""
	prev := -1
	for k, l := range lines {
		n, s, _, ok := numberPrefix(l)
		if !ok {
			return old, new, false
		}
		if s != "" {
			if sep == "" {
				sep = s
			} else if s != sep {
				return old, new, false
			}
		}
		if k > 0 && n != prev+1 {
			return old, new, false
		}
		prev = n
	}
	// A single "12: text" is as likely YAML as a copied number.
	if sep == "" || len(lines) == 1 && sep != "\t" && sep != "→" {
		return old, new, false
	}
	return stripWith(old, sep), stripWith(new, sep), true
}

func stripWith(s, sep string) string {
	lines := strings.Split(s, "\n")
	for k, l := range lines {
		if _, ls, rest, ok := numberPrefix(l); ok && (ls == sep || ls == "" && rest == "") {
			lines[k] = rest
		}
	}
	return strings.Join(lines, "\n")
}

// numberPrefix parses a line-number prefix: optional spaces, digits, then a
// separator (tab, "→", ":" or "|", each with an optional space after), or
// nothing at all on a numbered blank line.
func numberPrefix(l string) (n int, sep, rest string, ok bool) {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	j := i
	for j < len(l) && l[j] >= '0' && l[j] <= '9' && j-i < 8 {
		n = n*10 + int(l[j]-'0')
		j++
	}
	if j == i {
		return 0, "", "", false
	}
	r := l[j:]
	switch {
	case strings.TrimRight(r, " \t\r") == "":
		return n, "", "", true
	case strings.HasPrefix(r, "\t"):
		return n, "\t", r[1:], true
	case strings.HasPrefix(r, "→"):
		return n, "→", r[len("→"):], true
	case strings.HasPrefix(r, ": "), strings.HasPrefix(r, ":\t"):
		return n, ":", r[2:], true
	case strings.HasPrefix(r, " | "), strings.HasPrefix(r, " |\t"):
		return n, "|", r[3:], true
	case strings.HasPrefix(r, "| "), strings.HasPrefix(r, "|\t"):
		return n, "|", r[2:], true
	}
	return 0, "", "", false
}
