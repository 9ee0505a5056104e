package highlight

import (
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2"
)

func TestLexers(t *testing.T) {
	for _, lang := range []string{"go", "golang", "python", "py", "js", "ts", "typescript", "bash", "sh", "shell", "json", "yaml", "yml", "rust", "rs", "c", "cpp", "c++", "java", "sql", "toml", "html", "css", "diff", "dockerfile", "makefile", "ruby", "tsx", "jsx"} {
		if !Known(lang) {
			t.Errorf("no lexer for %q", lang)
		}
	}
	if Known("nosuchlanguage") {
		t.Error("a lexer for nosuchlanguage")
	}
	// Every lexer, with the ones it delegates to, tokenises.
	start := time.Now()
	for _, lx := range registry.Lexers {
		it, err := chroma.Coalesce(lx).Tokenise(nil, "<a href=\"x\">$(echo {\"k\": 1})</a>\nfn main() { x := `y` }\n")
		if err != nil {
			t.Fatalf("%s: %v", lx.Config().Name, err)
		}
		for tok := it(); tok != chroma.EOF; tok = it() {
		}
	}
	t.Logf("all lexers compiled and run in %v", time.Since(start))
}

func TestStyles(t *testing.T) {
	for _, name := range []string{"github", "github-dark"} {
		st := Style(name)
		if st == nil || !st.Get(chroma.Keyword).Colour.IsSet() {
			t.Errorf("style %s: %v", name, st)
		}
	}
	if Style("monokai") != nil {
		t.Error("an unknown style")
	}
}

func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		load()
	}
}
