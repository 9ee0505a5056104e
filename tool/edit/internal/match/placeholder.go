package match

import (
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// FindPlaceholder returns the first line of new that stands for code the
// model left out ("// ... rest of the code unchanged", "# ... existing code
// ...", "/* ... */", "<!-- ... -->"): writing it would replace real code with
// the comment. Lines that old holds too are the file's own and never count;
// path (its extension) tells whether a bare "..." line is code (Python's
// Ellipsis) or a placeholder.
func FindPlaceholder(old, new, path string) (string, bool) {
	if !strings.Contains(new, "...") && !strings.Contains(new, "…") &&
		!placeholderRes().words.MatchString(strings.ToLower(new)) {
		return "", false
	}
	have := map[string]bool{}
	for _, l := range strings.Split(old, "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range strings.Split(new, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || have[t] {
			continue
		}
		if isPlaceholder(t, path) {
			return t, true
		}
	}
	return "", false
}

// Comment markers, start and end.
var commentForms = [][2]string{
	{"<!--", "-->"}, {"{/*", "*/}"}, {"/*", "*/"}, {"//", ""}, {"#", ""}, {"--", ""}, {";;", ""}, {"%", ""}, {"*", ""},
}

func isPlaceholder(line, path string) bool {
	if isEllipsis(line) || isEllipsis(strings.TrimRight(line, ",;")) {
		return !ellipsisIsCode(path)
	}
	if text, ok := commentText(line, path); ok {
		return placeholderComment(text, true)
	}
	// A comment after code: `} // ... rest of the class`. Only the strong
	// forms count here, and the marker must follow a space (not "http://").
	for _, m := range []string{" //", " #", " /*", " <!--"} {
		if i := strings.Index(line, m); i > 0 {
			if text, ok := commentText(line[i+1:], path); ok && placeholderComment(text, false) {
				return true
			}
		}
	}
	return false
}

// commentText returns the text of a line that is entirely a comment.
// In prose (Markdown, text) only HTML comments are comments: "#" starts a
// heading and "*" a list item.
func commentText(line, path string) (string, bool) {
	forms := commentForms
	switch strings.ToLower(filepath.Ext(path)) {
	case ".md", ".markdown", ".txt", ".rst", ".adoc":
		forms = commentForms[:1]
	}
	for _, f := range forms {
		if !strings.HasPrefix(line, f[0]) {
			continue
		}
		t := strings.TrimPrefix(line, f[0])
		if f[1] != "" {
			if !strings.HasSuffix(t, f[1]) {
				// An unclosed block comment ("/* ... rest") still counts.
				if f[0] != "/*" && f[0] != "<!--" {
					continue
				}
			}
			t = strings.TrimSuffix(t, f[1])
		}
		return strings.TrimSpace(t), true
	}
	return "", false
}

func isEllipsis(s string) bool {
	return s == "..." || s == "…" || s == ". . ." || s == "...."
}

// ellipsisIsCode reports whether a line holding only "..." can be real code
// in the file's language, or real text: Python's Ellipsis, prose.
func ellipsisIsCode(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".java", ".kt", ".kts", ".scala",
		".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rs", ".swift", ".php", ".rb",
		".css", ".scss", ".less", ".vue", ".svelte", ".dart", ".lua", ".sh", ".bash", ".zsh",
		".json", ".toml", ".sql":
		return false
	}
	return true
}

// placeholderPatterns are the expressions FindPlaceholder matches with.
type placeholderPatterns struct {
	// words is a quick filter: a placeholder without an ellipsis says one
	// of these.
	words *regexp.Regexp
	// ellipsis finds "...", "…" and ". . .".
	ellipsis *regexp.Regexp
	// omission holds the words that, beside an ellipsis, say "code left
	// out here".
	omission *regexp.Regexp
	// phrases are whole comments that say it without an ellipsis.
	phrases []*regexp.Regexp
}

// placeholderRes compiles the patterns on first use: every hearth process
// links this package, few of them edit a file, and compiling at start-up
// cost each one about 300 KB.
var placeholderRes = sync.OnceValue(func() *placeholderPatterns {
	return &placeholderPatterns{
		words:    regexp.MustCompile(`rest|remain|existing|unchanged|previous|original|same|before|omitted|other|old`),
		ellipsis: regexp.MustCompile(`\.\.\.+|…|\. \. \.`),
		omission: regexp.MustCompile(`\b(rest|existing|unchanged|remaining|remainder|omitted|omit|previous|previously|same|original|unmodified|untouched|skipped|elided|truncated|snip|snipped)\b`),
		phrases: []*regexp.Regexp{
			regexp.MustCompile(`^(the )?(rest|remainder) of (the |this |your )?(code|file|function|method|class|implementation|body|module|component|logic|content|contents|program|script|tests?|struct|methods|functions|imports|config|configuration|file contents|code base|page|document|styles?)( (is |are |remains? |stays? |goes |as |left )?(unchanged|the same|as before|as is|here|omitted|untouched|unmodified|below|above))?$`),
			regexp.MustCompile(`^((keep|keeping|include|insert|add) )?(all )?(the |your )?(existing|previous|original|remaining|other|unchanged|old) (code|implementation|content|contents|logic|methods|functions|imports|tests|fields|cases|lines|properties|props|styles|rules|config|configuration|body|code below|code above|code here|stuff)( (here|unchanged|remains?( the same| unchanged)?|stays?( the same| unchanged)?|as is|as before|omitted|goes here|untouched|below|above))?$`),
			regexp.MustCompile(`^(everything else|the rest|rest|remaining code|unchanged code|same as before|no other changes|other code)( (is |remains? |stays? )?(unchanged|the same|as before|here))?$`),
		},
	}
})

// placeholderComment decides whether a comment's text stands for omitted
// code. With whole set the comment is the whole line, and looser forms
// count: a bare ellipsis, or an ellipsis around a few words.
func placeholderComment(text string, whole bool) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	res := placeholderRes()
	dots := res.ellipsis.FindAllStringIndex(t, -1)
	if len(dots) > 0 {
		words := strings.TrimSpace(res.ellipsis.ReplaceAllString(t, " "))
		if whole && strings.Trim(words, ".,;:()[]{}-_*") == "" {
			return true // "// ...", "/* ... */", "<!-- ... -->"
		}
		atEdge := dots[0][0] == 0 || dots[len(dots)-1][1] == len(t)
		if atEdge && res.omission.MatchString(words) {
			return true
		}
		// "// ... code ...", "# ... snip ...": an ellipsis on both sides.
		if whole && dots[0][0] == 0 && dots[len(dots)-1][1] == len(t) && len(dots) >= 2 && len(strings.Fields(words)) <= 4 {
			return true
		}
		t = words
	}
	t = strings.Trim(t, " .,;:!()[]{}-_*")
	t = strings.Join(strings.Fields(t), " ")
	for _, re := range res.phrases {
		if re.MatchString(t) {
			return true
		}
	}
	return false
}
